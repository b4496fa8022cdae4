# Generated from formats/rocketmq_rocksdb_index_value.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_index_value, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_INDEX_VALUE_SEQ = (
    "entry",
)
ROCKETMQ_ROCKSDB_INDEX_VALUE_RUNS = (
)

INDEX_VALUE_SEQ = (
    "store_timestamp",
)
INDEX_VALUE_RUNS = (
    (("store_timestamp",), ">q"),
)
