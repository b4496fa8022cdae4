# Generated from formats/rocketmq_rocksdb_timer_value.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_timer_value, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_TIMER_VALUE_SEQ = (
    "timer",
)
ROCKETMQ_ROCKSDB_TIMER_VALUE_RUNS = (
)

TIMER_VALUE_SEQ = (
    "len_message",
    "ofs_commitlog",
)
TIMER_VALUE_RUNS = (
    (("len_message", "ofs_commitlog"), ">iq"),
)
