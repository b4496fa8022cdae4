# Generated from formats/rocketmq_rocksdb_index_key.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_index_key, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_INDEX_KEY_SEQ = (
    "store_hour",
    "sep_topic",
    "middle",
    "ofs_commitlog",
)
ROCKETMQ_ROCKSDB_INDEX_KEY_RUNS = (
    (("store_hour",), ">q"),
    (("ofs_commitlog",), ">q"),
)
