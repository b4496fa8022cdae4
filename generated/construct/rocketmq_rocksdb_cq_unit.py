# Generated from formats/rocketmq_rocksdb_cq_unit.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB consume queue unit: construct schema generated from formats/rocketmq_rocksdb_cq_unit.ksy.

``rocketmq_rocksdb_cq_unit`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "unit_value",
    "rocketmq_rocksdb_cq_unit",
]


# One unit as `RocksDBConsumeQueueTable.buildCQValueByteBuffer` writes
# it for a dispatched message.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
unit_value = ka.Struct(
    # Commit-log offset of the message record (its PHYSICALOFFSET).
    "ofs_commitlog" / c.Int64sb,
    # Size of the message record (its TOTALSIZE).
    "len_message" / c.Int32sb,
    # As in a file consume queue: the Java `String.hashCode` of the TAGS,
    # or the delivery time in `SCHEDULE_TOPIC_XXXX`.
    "tags_code" / c.Int64sb,
    # The message's STORETIMESTAMP, in milliseconds since the Unix epoch.
    "store_timestamp" / c.Int64sb,
)


# The value of one consume-queue unit in the `default` column family of the
# RocksDB consume queue (`RocksDBConsumeQueueTable.CQ_UNIT_SIZE` = 28
# bytes), under a rocketmq_rocksdb_cq_key. The first three fields are those
# of a file consume-queue unit (rocketmq_consumequeue); the store time is
# new. There are no placeholder units: a key exists only for a message.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
rocketmq_rocksdb_cq_unit = ka.Struct(
    # The 28 bytes of the value.
    "unit" / unit_value,
)
