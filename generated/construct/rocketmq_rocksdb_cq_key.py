# Generated from formats/rocketmq_rocksdb_cq_key.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB consume queue key: construct schema generated from formats/rocketmq_rocksdb_cq_key.ksy.

``rocketmq_rocksdb_cq_key`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "rocketmq_rocksdb_cq_key",
]


# The key of one consume-queue unit in the `default` column family of the
# RocksDB database that a broker with `storeType=defaultRocksDB` keeps in
# `<store>/consumequeue/` (`RocksDBConsumeQueueTable`). One key per message
# of a topic queue; its value is a rocketmq_rocksdb_cq_unit.
#
# RocksDB sorts keys bytewise, so the units of one topic queue are
# contiguous and in the order of their logical offsets (the big-endian
# `cq_offset` at the end of the key). Deleting a queue removes the key range
# from the same prefix ending in 0x00 up to the one ending in 0x02
# (`CTRL_0`, `CTRL_2`).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/common/src/main/java/org/apache/rocketmq/common/config/AbstractRocksDBStorage.java
rocketmq_rocksdb_cq_key = ka.Struct(
    # Length of the topic name in UTF-8 bytes.
    "len_topic" / ka.Valid(
        c.Int32sb,
        ("min 1", lambda value, this: value >= 1),
        ("max 255", lambda value, this: value <= 255),
    ),
    # Separator before the topic.
    "sep_topic" / c.Const(b'\x01'),
    # The topic name.
    "topic" / c.StringEncoded(c.Bytes(lambda this: this["len_topic"]), "UTF-8"),
    # Separator before the queue id.
    "sep_queue_id" / c.Const(b'\x01'),
    # The queue id.
    "queue_id" / c.Int32sb,
    # Separator before the logical offset.
    "sep_cq_offset" / c.Const(b'\x01'),
    # Logical offset of the unit in its queue (the message's QUEUEOFFSET).
    "cq_offset" / c.Int64sb,
)
