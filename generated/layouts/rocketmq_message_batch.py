# Generated from formats/rocketmq_message_batch.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_message_batch, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_MESSAGE_BATCH_SEQ = (
    "messages",
)
ROCKETMQ_MESSAGE_BATCH_RUNS = (
)

ITEM_SEQ = (
    "len_item",
    "magic",
    "body_crc",
    "flag",
    "len_body",
    "body",
    "len_properties",
    "properties",
)
ITEM_RUNS = (
    (("len_item", "magic", "body_crc", "flag", "len_body"), ">iiiii"),
    (("len_properties",), ">h"),
)
ITEM_VALUES = {
    "len_item_computed": lambda u: ((22 + u["len_body"]) + u["len_properties"]),
}
