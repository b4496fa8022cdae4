# Generated from formats/rocketmq_consumequeue_ext.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_consumequeue_ext, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_CONSUMEQUEUE_EXT_SEQ = (
    "units",
)
ROCKETMQ_CONSUMEQUEUE_EXT_RUNS = (
)

UNIT_SEQ = (
    "len_unit",
    "body",
)
UNIT_RUNS = (
    (("len_unit",), ">h"),
)
UNIT_VALUES = {
    "is_unit": lambda u: (u["len_unit"] > 0),
    "is_end_marker": lambda u: (u["len_unit"] == (-1)),
}

UNIT_BODY_SEQ = (
    "tags_code",
    "msg_store_time",
    "len_filter_bit_map",
    "filter_bit_map",
)
UNIT_BODY_RUNS = (
    (("tags_code", "msg_store_time", "len_filter_bit_map"), ">qqh"),
)
UNIT_BODY_VALUES = {
    "len_unit_computed": lambda u: (20 + u["len_filter_bit_map"]),
}
