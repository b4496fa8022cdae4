# Generated from formats/rocketmq_consumequeue.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_consumequeue, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_CONSUMEQUEUE_SEQ = (
    "units",
)
ROCKETMQ_CONSUMEQUEUE_RUNS = (
)

UNIT_SEQ = (
    "ofs_commitlog",
    "len_message",
    "tags_code",
)
UNIT_RUNS = (
    (("ofs_commitlog", "len_message", "tags_code"), ">qiq"),
)
UNIT_VALUES = {
    "is_valid": lambda u: ((u["ofs_commitlog"] >= 0) & (u["len_message"] > 0)),
    "is_placeholder": lambda u: (((u["ofs_commitlog"] == 0) & (u["len_message"] == 2147483647)) & (u["tags_code"] == 0)),
    "is_ext_address": lambda u: (u["tags_code"] <= (-2147483649)),
}
