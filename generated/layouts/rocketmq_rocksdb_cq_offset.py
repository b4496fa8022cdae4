# Generated from formats/rocketmq_rocksdb_cq_offset.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_cq_offset, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_CQ_OFFSET_SEQ = (
    "offset",
)
ROCKETMQ_ROCKSDB_CQ_OFFSET_RUNS = (
)

OFFSET_VALUE_SEQ = (
    "ofs_commitlog",
    "cq_offset",
)
OFFSET_VALUE_RUNS = (
    (("ofs_commitlog", "cq_offset"), ">qq"),
)
