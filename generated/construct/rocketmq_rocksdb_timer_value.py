# Generated from formats/rocketmq_rocksdb_timer_value.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB timer record value: construct schema generated from formats/rocketmq_rocksdb_timer_value.ksy.

``rocketmq_rocksdb_timer_value`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "timer_value",
    "rocketmq_rocksdb_timer_value",
]


# One value as `TimerRocksDBRecord.getValueBytes` writes it.
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
timer_value = ka.Struct(
    # Size of the `rmq_sys_wheel_timer` record in the commit log (its
    # TOTALSIZE).
    "len_message" / c.Int32sb,
    # Commit-log offset of that record (its PHYSICALOFFSET).
    "ofs_commitlog" / c.Int64sb,
)


# The value of one scheduled message in the `timer` column family of the
# RocksDB message store (`TimerRocksDBRecord.VALUE_LENGTH` = 12 bytes),
# under a rocketmq_rocksdb_timer_key: where the message waits in the commit
# log. Note the order: the size comes before the offset, unlike a
# consume-queue unit.
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
rocketmq_rocksdb_timer_value = ka.Struct(
    # The 12 bytes of the value.
    "timer" / timer_value,
)
