# Generated from formats/rocketmq_rocksdb_cq_offset.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB consume queue offset value: construct schema generated from formats/rocketmq_rocksdb_cq_offset.ksy.

``rocketmq_rocksdb_cq_offset`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "offset_value",
    "rocketmq_rocksdb_cq_offset",
]


# The bound of one topic queue.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
offset_value = ka.Struct(
    # Commit-log offset of the unit's message.
    "ofs_commitlog" / c.Int64sb,
    # Logical offset of the unit.
    "cq_offset" / c.Int64sb,
)


# The value under a rocketmq_rocksdb_cq_offset_key of a topic queue
# (`OFFSET_VALUE_LENGTH` = 16 bytes): the commit-log offset and the logical
# offset of the queue's largest (`max`) or smallest (`min`) unit. The
# broker's `getMaxOffsetInQueue` is the `max` unit's logical offset plus 1
# (0 when the queue has no `max` key).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
rocketmq_rocksdb_cq_offset = ka.Struct(
    # The 16 bytes of the value.
    "offset" / offset_value,
)
