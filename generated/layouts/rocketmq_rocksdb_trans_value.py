# Generated from formats/rocketmq_rocksdb_trans_value.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_trans_value, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_TRANS_VALUE_SEQ = (
    "trans",
)
ROCKETMQ_ROCKSDB_TRANS_VALUE_RUNS = (
)

TRANS_VALUE_SEQ = (
    "check_times",
    "len_message",
)
TRANS_VALUE_RUNS = (
    (("check_times", "len_message"), ">ii"),
)
