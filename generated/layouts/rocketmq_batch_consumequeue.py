# Generated from formats/rocketmq_batch_consumequeue.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_batch_consumequeue, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_BATCH_CONSUMEQUEUE_SEQ = (
    "units",
)
ROCKETMQ_BATCH_CONSUMEQUEUE_RUNS = (
)

UNIT_SEQ = (
    "ofs_commitlog",
    "len_message",
    "tags_code",
    "store_timestamp",
    "msg_base_offset",
    "num_messages",
    "compacted_offset",
    "reserved",
)
UNIT_RUNS = (
    (("ofs_commitlog", "len_message", "tags_code", "store_timestamp", "msg_base_offset", "num_messages", "compacted_offset", "reserved"), ">qiqqqhii"),
)
UNIT_VALUES = {
    "is_accepted": lambda u: ((((u["ofs_commitlog"] >= 0) & (u["len_message"] > 0)) & (u["msg_base_offset"] >= 0)) & (u["num_messages"] > 0)),
    "is_end_of_file": lambda u: ((((u["ofs_commitlog"] == (-1)) & (u["len_message"] == 0)) & (u["num_messages"] == 0)) & (u["compacted_offset"] == (-1))),
    "msg_end_offset": lambda u: (u["msg_base_offset"] + u["num_messages"]),
}
