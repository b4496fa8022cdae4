# Generated from formats/rocketmq_rocksdb_config_record.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_rocksdb_config_record, derived from its .ksy spec."""

ENDIAN = ">"

SERIALIZATION_TYPE_CODE = {
    "unspecified": 0,
    "json": 1,
    "protobuf": 2,
    "flat_buffers": 3,
}

ROCKETMQ_ROCKSDB_CONFIG_RECORD_SEQ = (
    "serialization_type",
    "payload",
)
ROCKETMQ_ROCKSDB_CONFIG_RECORD_RUNS = (
    (("serialization_type",), ">B"),
)
