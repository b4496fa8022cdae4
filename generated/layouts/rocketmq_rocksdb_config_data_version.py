# Generated from formats/rocketmq_rocksdb_config_data_version.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_config_data_version, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_CONFIG_DATA_VERSION_SEQ = (
    "data_version",
)
ROCKETMQ_ROCKSDB_CONFIG_DATA_VERSION_RUNS = (
)

DATA_VERSION_VALUE_SEQ = (
    "state_version",
    "timestamp",
    "counter",
)
DATA_VERSION_VALUE_RUNS = (
    (("state_version", "timestamp", "counter"), ">qqq"),
)
