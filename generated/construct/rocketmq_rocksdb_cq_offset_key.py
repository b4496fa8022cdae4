# Generated from formats/rocketmq_rocksdb_cq_offset_key.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB consume queue offset key: construct schema generated from formats/rocketmq_rocksdb_cq_offset_key.ksy.

``rocketmq_rocksdb_cq_offset_key`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "rocketmq_rocksdb_cq_offset_key",
]


# A key of the `offset` column family of the RocksDB consume queue
# (`RocksDBConsumeQueueOffsetTable`): the smallest or the largest unit of a
# topic queue, with a rocketmq_rocksdb_cq_offset value. The `max` key is
# written with every dispatched batch; the `min` key only when the broker
# first corrects a queue's minimum offset (`getMinOffsetInQueue`), so it is
# often absent.
#
# The same layout with the pseudo-topic `CHECKPOINT_TOPIC`, `max` and queue
# 0 is the dispatch checkpoint, whose value is a
# rocketmq_rocksdb_cq_checkpoint (8 bytes) instead.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
rocketmq_rocksdb_cq_offset_key = ka.Struct(
    # Length of the topic name in UTF-8 bytes.
    "len_topic" / ka.Valid(
        c.Int32sb,
        ("min 1", lambda value, this: value >= 1),
        ("max 255", lambda value, this: value <= 255),
    ),
    # Separator before the topic.
    "sep_topic" / c.Const(b'\x01'),
    # The topic name (`CHECKPOINT_TOPIC` for the dispatch checkpoint).
    "topic" / c.StringEncoded(c.Bytes(lambda this: this["len_topic"]), "UTF-8"),
    # The dispatch checkpoint (`TopicValidator.RMQ_SYS_ROCKSDB_OFFSET_TOPIC`)
    # rather than a topic queue.
    "is_checkpoint" / c.Computed(lambda this: this["topic"] == "CHECKPOINT_TOPIC"),
    # Separator before the bound.
    "sep_bound" / c.Const(b'\x01'),
    # `max` or `min`: which end of the queue the value gives.
    "bound" / ka.Valid(
        c.StringEncoded(c.Bytes(3), "UTF-8"),
        ('any-of ["max", "min"]', lambda value, this: value == "max" or value == "min"),
    ),
    # The key of the queue's largest unit.
    "is_max" / c.Computed(lambda this: this["bound"] == "max"),
    # Separator before the queue id.
    "sep_queue_id" / c.Const(b'\x01'),
    # The queue id (0 for the dispatch checkpoint).
    "queue_id" / c.Int32sb,
)
