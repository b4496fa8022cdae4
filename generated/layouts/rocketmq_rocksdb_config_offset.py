# Generated from formats/rocketmq_rocksdb_config_offset.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_config_offset, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_ROCKSDB_CONFIG_OFFSET_SEQ = (
    "offset",
)
ROCKETMQ_ROCKSDB_CONFIG_OFFSET_RUNS = (
)

OFFSET_VALUE_SEQ = (
    "offset",
)
OFFSET_VALUE_RUNS = (
    (("offset",), ">q"),
)
