# Generated from formats/rocketmq_rocksdb_timer_key.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB timer record key: construct schema generated from formats/rocketmq_rocksdb_timer_key.ksy.

``rocketmq_rocksdb_timer_key`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "rocketmq_rocksdb_timer_key",
]


# The key of one scheduled message in the `timer` column family of the
# broker's RocksDB message store, `<store>/rocksdbstore/`
# (`MessageRocksDBStorage`, RIP-82), written when the broker runs the
# RocksDB timer engine (`timerRocksDBEnable=true`, `mqadmin
# switchTimerEngine -e R`, engine `ROCKSDB_TIMELINE`). Its value is a
# rocketmq_rocksdb_timer_value pointing at the `rmq_sys_wheel_timer` record
# in the commit log.
#
# The delivery time comes first, big-endian, so RocksDB's bytewise order is
# the order of delivery: the broker scans the keys from one time bound to
# the next and deletes the ranges it delivered. A cancelled message's key is
# deleted (`TIMER_ROCKSDB_DELETE`); a rolled message's key is written again
# (`TIMER_ROCKSDB_UPDATE`).
#
# Two other keys of the column family are no timer records: the ASCII
# strings `sys_topic_scan_offset_checkpoint` (the consume-queue offset of
# `rmq_sys_wheel_timer` dispatched so far) and `timeline_checkpoint` (the
# delivery time scanned so far), each with an 8-byte big-endian value
# (rocketmq_rocksdb_message_mark). They sort after every record key (their
# first byte, 0x73 or 0x74, is above that of any delivery time before the
# year 4 million).
# See: https://github.com/apache/rocketmq/pull/9787
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
# See: https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
rocketmq_rocksdb_timer_key = ka.Struct(
    # When the message is due, in milliseconds since the Unix epoch (its
    # `TIMER_OUT_MS`). The broker writes no key with a time of 0 or less.
    "delivery_time" / ka.Valid(c.Int64sb, ("min 1", lambda value, this: value >= 1)),
    # The message's UNIQ_KEY (message id set by the producer), in UTF-8.
    "uniq_key" / c.StringEncoded(c.GreedyBytes, "UTF-8"),
)
