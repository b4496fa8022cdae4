# Generated from formats/rocketmq_tiered_index.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_tiered_index, derived from its .ksy spec."""

ENDIAN = ">"

FILE_MAGIC = {
    "begin_marker": -1127939447,
    "end_marker": -1127939451,
}

ROCKETMQ_TIERED_INDEX_SEQ = (
    "header",
    "slots",
)
ROCKETMQ_TIERED_INDEX_RUNS = (
)

INDEX_HEADER_SEQ = (
    "magic",
    "begin_timestamp",
    "end_timestamp",
    "num_used_slots",
    "num_items",
)
INDEX_HEADER_RUNS = (
    (("magic", "begin_timestamp", "end_timestamp", "num_used_slots", "num_items"), ">iqqii"),
)

SLOT_SEQ = (
    "value",
    "len_run",
)
SLOT_RUNS = (
    (("value", "len_run"), ">ii"),
)

ITEM_SEQ = (
    "key_hash",
    "topic_id",
    "queue_id",
    "ofs_commitlog",
    "len_message",
    "time_diff",
    "prev_item",
)
ITEM_RUNS = (
    (("key_hash", "topic_id", "queue_id", "ofs_commitlog", "len_message", "time_diff", "prev_item"), ">iiiqiii"),
)

COMPACT_ITEM_SEQ = (
    "key_hash",
    "topic_id",
    "queue_id",
    "ofs_commitlog",
    "len_message",
    "time_diff",
)
COMPACT_ITEM_RUNS = (
    (("key_hash", "topic_id", "queue_id", "ofs_commitlog", "len_message", "time_diff"), ">iiiqii"),
)
