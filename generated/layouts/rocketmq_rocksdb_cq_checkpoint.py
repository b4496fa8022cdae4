# Generated from formats/rocketmq_rocksdb_cq_checkpoint.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_cq_checkpoint, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_CQ_CHECKPOINT_SEQ = (
    "checkpoint",
)
ROCKETMQ_ROCKSDB_CQ_CHECKPOINT_RUNS = (
)

CHECKPOINT_VALUE_SEQ = (
    "ofs_max_phy",
)
CHECKPOINT_VALUE_RUNS = (
    (("ofs_max_phy",), ">q"),
)
