# Generated from formats/rocketmq_rocksdb_config_key.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_config_key, derived from its .ksy spec."""

ENDIAN = ">"

TABLE_PREFIX_CODE = {
    "no_table_prefix": 0,
    "table": 1,
}
TABLE_ID_CODE = {
    "no_table": 0,
    "consumer_offset": 1,
    "pull_offset": 2,
    "topic": 3,
    "subscription_group": 4,
}
RECORD_PREFIX_CODE = {
    "no_record_prefix": 0,
    "data_version": 1,
    "data": 2,
}

ROCKETMQ_ROCKSDB_CONFIG_KEY_SEQ = (
    "table_prefix",
    "table_id",
    "record_prefix",
    "data_version_name",
    "named",
    "offset",
)
ROCKETMQ_ROCKSDB_CONFIG_KEY_RUNS = (
    (("table_prefix", "table_id", "record_prefix"), ">BHB"),
)

NAMED_RECORD_SEQ = (
    "len_name",
    "name",
)
NAMED_RECORD_RUNS = (
    (("len_name",), ">H"),
)

OFFSET_RECORD_SEQ = (
    "len_group",
    "group",
    "sep_topic",
    "len_topic",
    "topic",
    "sep_queue_id",
    "queue_id",
)
OFFSET_RECORD_RUNS = (
    (("len_group",), ">H"),
    (("len_topic",), ">H"),
    (("queue_id",), ">i"),
)
