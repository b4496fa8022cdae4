# Generated from formats/rocketmq_rocksdb_message_mark.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_message_mark, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_MESSAGE_MARK_SEQ = (
    "mark",
)
ROCKETMQ_ROCKSDB_MESSAGE_MARK_RUNS = (
)

MARK_VALUE_SEQ = (
    "position",
)
MARK_VALUE_RUNS = (
    (("position",), ">q"),
)
