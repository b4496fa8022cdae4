# Generated from formats/rocketmq_rocksdb_trans_key.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_trans_key, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_TRANS_KEY_SEQ = (
    "ofs_commitlog",
    "sep_topic",
    "topic_and_uniq_key",
)
ROCKETMQ_ROCKSDB_TRANS_KEY_RUNS = (
    (("ofs_commitlog",), ">q"),
)
