# Generated from formats/rocketmq_rocksdb_config_record.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB config record value (v2 layout): construct schema generated from formats/rocketmq_rocksdb_config_record.ksy.

``rocketmq_rocksdb_config_record`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "SerializationTypeCode",
    "rocketmq_rocksdb_config_record",
]


class SerializationTypeCode(enum.IntEnum):
    """Kaitai enum serialization_type_code (enums/serialization_type_code)."""

    # Unknown; the broker skips the record.
    unspecified = 0

    # JSON text.
    json = 1

    # Declared, never written.
    protobuf = 2

    # Declared, never written.
    flat_buffers = 3


# The value of a topic or subscription-group key of `config/rdb/` (see
# rocketmq_rocksdb_config_key): a serialization type and the serialized
# bean. Only JSON (fastjson2 `JSON.toJSONBytes` of `TopicConfig` or
# `SubscriptionGroupConfig`) is written.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
rocketmq_rocksdb_config_record = ka.Struct(
    # How the rest of the value is serialized.
    "serialization_type" / c.Enum(c.Int8ub, SerializationTypeCode),
    # The serialized bean (UTF-8 JSON text for `json`).
    "payload" / c.GreedyBytes,
)
