# Generated from formats/rocketmq_timer_wheel.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_timer_wheel, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_TIMER_WHEEL_SEQ = (
    "slots",
)
ROCKETMQ_TIMER_WHEEL_RUNS = (
)

SLOT_SEQ = (
    "time_units",
    "ofs_first",
    "ofs_last",
    "num_messages",
    "reserved",
)
SLOT_RUNS = (
    (("time_units", "ofs_first", "ofs_last", "num_messages", "reserved"), ">qqqii"),
)
SLOT_VALUES = {
    "is_used": lambda u: (u["time_units"] != 0),
}
