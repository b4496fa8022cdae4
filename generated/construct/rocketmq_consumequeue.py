# Generated from formats/rocketmq_consumequeue.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ consume queue file: construct schema generated from formats/rocketmq_consumequeue.ksy.

``rocketmq_consumequeue`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "unit",
    "rocketmq_consumequeue",
]


# One consume-queue entry (`CQ_STORE_UNIT_SIZE` = 20 bytes), written by
# `ConsumeQueue.putMessagePositionInfo`.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
unit = ka.Struct(
    # Commit-log offset of the message record (its PHYSICALOFFSET).
    "ofs_commitlog" / c.Int64sb,
    # Size of the message record (its TOTALSIZE); `0x7fffffff` in a
    # placeholder unit.
    "len_message" / c.Int32sb,
    # The broker's recovery test: true for a written unit (placeholders
    # included), false for the zero-filled tail. The first invalid unit
    # ends the queue.
    "is_valid" / c.Computed(lambda this: this["ofs_commitlog"] >= 0 and this["len_message"] > 0),
    # For most topics the Java `String.hashCode` of the message's TAGS
    # (sign-extended; 0 without tags). For `SCHEDULE_TOPIC_XXXX` the time
    # at which the delayed message is due, in milliseconds since the Unix
    # epoch. A value at or below -2147483649 (`ConsumeQueueExt.MAX_ADDR`)
    # is the address of a unit in `consumequeue_ext` (4.1.0+, with
    # `enableConsumeQueueExt`), encoded as that unit's offset plus
    # `Long.MIN_VALUE`; see rocketmq_consumequeue_ext.
    "tags_code" / c.Int64sb,
    # A placeholder before a queue's first real unit (`fillPreBlank`); it
    # stands for no message.
    "is_placeholder" / c.Computed(lambda this: (
        this["ofs_commitlog"] == 0
        and this["len_message"] == 0x7fffffff
        and this["tags_code"] == 0
    )),
    # True when `tags_code` is the address of a `consumequeue_ext` unit, not
    # a tags hash.
    "is_ext_address" / c.Computed(lambda this: this["tags_code"] <= -2147483649),
)


# One file of a consume queue, `consumequeue/<topic>/<queueId>/<name>`: the
# per-queue index that consumers read. Each 20-byte unit points at one
# message in the commit log. Unit `n` of the queue (its logical offset, the
# message's QUEUEOFFSET) is at byte `n * 20` of the queue's unit stream;
# files split that stream into pieces of `mappedFileSizeConsumeQueue` bytes
# (`mapedFileSizeConsumeQueue` before 4.5.2; default 6,000,000, i.e.
# 300,000 units) and each file is named by the
# stream position of its first byte, as 20 decimal digits.
#
# Units are written in order and never change. The broker's recovery
# accepts a unit when its commit-log offset is not negative and its size is
# positive; the first unit that fails (normally the zero-filled tail of the
# newest file) ends the queue. Placeholder units `{0, 0x7fffffff, 0}` fill
# a new queue's first file up to its first real unit (`fillPreBlank`) and
# stand for no message. Head files are deleted as the commit log expires,
# so the oldest file is not always named 0 and a unit can point at a
# commit-log range that no longer exists.
#
# The layout is the same in every release from 4.0.0 to 5.3.x. Transaction
# PREPARED and ROLLBACK records are never put into a consume queue. From
# 5.2.0 a broker can keep its consume queues in RocksDB instead
# (`storeType=defaultRocksDB`); those are not files of this format.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
rocketmq_consumequeue = ka.Struct(
    # The units of this file, zero-filled after the last one written.
    "units" / ka.RepeatEos(unit),
)
