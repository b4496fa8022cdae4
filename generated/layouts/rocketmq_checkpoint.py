# Generated from formats/rocketmq_checkpoint.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_checkpoint, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_CHECKPOINT_SEQ = (
    "physic_msg_timestamp",
    "logics_msg_timestamp",
    "index_msg_timestamp",
    "ofs_master_flushed",
    "ofs_confirm_phy",
    "reserved",
)
ROCKETMQ_CHECKPOINT_RUNS = (
    (("physic_msg_timestamp", "logics_msg_timestamp", "index_msg_timestamp", "ofs_master_flushed", "ofs_confirm_phy"), ">qqqqq"),
)
