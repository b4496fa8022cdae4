# Generated from formats/rocketmq_rocksdb_timer_key.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_timer_key, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_TIMER_KEY_SEQ = (
    "delivery_time",
    "uniq_key",
)
ROCKETMQ_ROCKSDB_TIMER_KEY_RUNS = (
    (("delivery_time",), ">q"),
)
