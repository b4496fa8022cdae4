# Generated from formats/rocketmq_rocksdb_cq_unit.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_cq_unit, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_CQ_UNIT_SEQ = (
    "unit",
)
ROCKETMQ_ROCKSDB_CQ_UNIT_RUNS = (
)

UNIT_VALUE_SEQ = (
    "ofs_commitlog",
    "len_message",
    "tags_code",
    "store_timestamp",
)
UNIT_VALUE_RUNS = (
    (("ofs_commitlog", "len_message", "tags_code", "store_timestamp"), ">qiqq"),
)
