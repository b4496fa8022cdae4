# Generated from formats/rocketmq_rocksdb_cq_key.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_cq_key, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_CQ_KEY_SEQ = (
    "len_topic",
    "sep_topic",
    "topic",
    "sep_queue_id",
    "queue_id",
    "sep_cq_offset",
    "cq_offset",
)
ROCKETMQ_ROCKSDB_CQ_KEY_RUNS = (
    (("len_topic",), ">i"),
    (("queue_id",), ">i"),
    (("cq_offset",), ">q"),
)
