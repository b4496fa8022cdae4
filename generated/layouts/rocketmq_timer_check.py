# Generated from formats/rocketmq_timer_check.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_timer_check, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_TIMER_CHECK_SEQ = (
    "last_read_time_ms",
    "ofs_last_timer_log_flush",
    "last_timer_queue_offset",
    "master_timer_queue_offset",
    "data_version",
    "reserved",
)
ROCKETMQ_TIMER_CHECK_RUNS = (
    (("last_read_time_ms", "ofs_last_timer_log_flush", "last_timer_queue_offset", "master_timer_queue_offset"), ">qqqq"),
)

TIMER_DATA_VERSION_SEQ = (
    "state_version",
    "timestamp",
    "counter",
)
TIMER_DATA_VERSION_RUNS = (
    (("state_version", "timestamp", "counter"), ">qqq"),
)
