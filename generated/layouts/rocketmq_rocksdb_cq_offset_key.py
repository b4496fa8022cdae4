# Generated from formats/rocketmq_rocksdb_cq_offset_key.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_cq_offset_key, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_CQ_OFFSET_KEY_SEQ = (
    "len_topic",
    "sep_topic",
    "topic",
    "sep_bound",
    "bound",
    "sep_queue_id",
    "queue_id",
)
ROCKETMQ_ROCKSDB_CQ_OFFSET_KEY_RUNS = (
    (("len_topic",), ">i"),
    (("queue_id",), ">i"),
)
