# Generated from formats/rocketmq_timer_log.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_timer_log, derived from its .ksy spec."""

ENDIAN = ">"

UNIT_MAGIC = {
    "zero_fill": 0,
    "enqueue": 1,
    "roll": 3,
    "delete": 5,
    "roll_delete": 7,
    "blank": -875286124,
}
MAGIC_FLAG = {
    "enqueue_bit": 1,
    "roll_bit": 2,
    "delete_bit": 4,
}

ROCKETMQ_TIMER_LOG_SEQ = (
    "units",
)
ROCKETMQ_TIMER_LOG_RUNS = (
)

UNIT_SEQ = (
    "len_unit",
    "ofs_prev",
    "magic",
    "body",
)
UNIT_RUNS = (
    (("len_unit", "ofs_prev", "magic"), ">iqi"),
)

UNIT_BODY_SEQ = (
    "curr_write_time_ms",
    "delay_ms",
    "ofs_commitlog",
    "len_message",
    "topic_hash",
    "reserved",
)
UNIT_BODY_RUNS = (
    (("curr_write_time_ms", "delay_ms", "ofs_commitlog", "len_message", "topic_hash", "reserved"), ">qiqiiq"),
)
UNIT_BODY_VALUES = {
    "delayed_time_ms": lambda u: (u["curr_write_time_ms"] + u["delay_ms"]),
}
