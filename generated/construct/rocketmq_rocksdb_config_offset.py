# Generated from formats/rocketmq_rocksdb_config_offset.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB consumer offset value (v2 layout): construct schema generated from formats/rocketmq_rocksdb_config_offset.ksy.

``rocketmq_rocksdb_config_offset`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "offset_value",
    "rocketmq_rocksdb_config_offset",
]


# A committed offset.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
offset_value = ka.Struct(
    # The committed offset.
    "offset" / c.Int64sb,
)


# The value of a consumer-offset or pull-offset key in `config/rdb/` (see
# rocketmq_rocksdb_config_key): the next logical offset the group will
# consume from the queue (`ConsumerOffsetManagerV2.commitOffset`).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
rocketmq_rocksdb_config_offset = ka.Struct(
    # The 8 bytes of the value.
    "offset" / offset_value,
)
