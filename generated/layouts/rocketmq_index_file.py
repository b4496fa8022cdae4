# Generated from formats/rocketmq_index_file.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_index_file, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_INDEX_FILE_SEQ = (
    "header",
)
ROCKETMQ_INDEX_FILE_RUNS = (
)

INDEX_HEADER_SEQ = (
    "begin_timestamp",
    "end_timestamp",
    "ofs_begin_physical",
    "ofs_end_physical",
    "num_hash_slots_used",
    "next_index",
)
INDEX_HEADER_RUNS = (
    (("begin_timestamp", "end_timestamp", "ofs_begin_physical", "ofs_end_physical", "num_hash_slots_used", "next_index"), ">qqqqii"),
)

INFERRED_TABLES_SEQ = (
    "hash_slots",
    "entries",
)
INFERRED_TABLES_RUNS = (
)

INDEX_TABLES_SEQ = (
    "hash_slots",
    "entries",
)
INDEX_TABLES_RUNS = (
)

HASH_SLOT_SEQ = (
    "latest_index",
)
HASH_SLOT_RUNS = (
    (("latest_index",), ">i"),
)

ENTRY_SEQ = (
    "key_hash",
    "ofs_physical",
    "time_diff",
    "prev_index",
)
ENTRY_RUNS = (
    (("key_hash", "ofs_physical", "time_diff", "prev_index"), ">iqii"),
)
