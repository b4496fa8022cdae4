# Generated from formats/rocketmq_batch_consumequeue.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ batch consume queue file: construct schema generated from formats/rocketmq_batch_consumequeue.ksy.

``rocketmq_batch_consumequeue`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "unit",
    "rocketmq_batch_consumequeue",
]


# One 46-byte unit, in the order `putBatchMessagePositionInfo` writes
# it (`CQ_STORE_UNIT_SIZE`).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
unit = ka.Struct(
    # Commit-log offset of the record (its PHYSICALOFFSET).
    "ofs_commitlog" / c.Int64sb,
    # TOTALSIZE of the record.
    "len_message" / c.Int32sb,
    # The record's tags hash (Java `String.hashCode` of TAGS,
    # sign-extended; 0 without tags). An inner-batch record has no TAGS
    # of its own, so 0.
    "tags_code" / c.Int64sb,
    # STORETIMESTAMP of the record, in milliseconds since the Unix epoch.
    "store_timestamp" / c.Int64sb,
    # Queue offset of the first message of the record (its QUEUEOFFSET,
    # and `INNER_BASE` for an inner batch).
    "msg_base_offset" / c.Int64sb,
    # Number of queue offsets the record covers: `INNER_NUM` for an
    # inner batch, 1 otherwise.
    "num_messages" / c.Int16sb,
    # Whether recovery keeps this unit; the first unit it rejects ends the
    # queue.
    "is_accepted" / c.Computed(lambda this: (
        this["ofs_commitlog"] >= 0
        and this["len_message"] > 0
        and this["msg_base_offset"] >= 0
        and this["num_messages"] > 0
    )),
    # Queue offset after the last message of the record.
    "msg_end_offset" / c.Computed(lambda this: this["msg_base_offset"] + this["num_messages"]),
    # Written as -1 (`INVALID_POS`). Readers copy it into `CqUnit`, but
    # no release up to 5.3.3 uses it.
    "compacted_offset" / c.Int32sb,
    # The end-of-file unit of a compaction consume queue (5.1.0+
    # `SparseConsumeQueue`).
    "is_end_of_file" / c.Computed(lambda this: (
        this["ofs_commitlog"] == -1
        and this["len_message"] == 0
        and this["num_messages"] == 0
        and this["compacted_offset"] == -1
    )),
    # Written as 0.
    "reserved" / c.Int32sb,
)


# One file of the batch consume queue of a topic queue:
# `<store>/batchconsumequeue/<topic>/<queueId>/<20-digit start offset>`,
# used for topics whose attribute `queue.type` is `BatchCQ` (5.0.0+). The
# queue is one logical stream of 46-byte units cut into equally sized
# files (300 000 units, 13 800 000 bytes by default,
# `mapperFileSizeBatchConsumeQueue`); a file's name is the byte offset of
# its first unit in that stream, not a message offset.
#
# Each unit points at one commit-log record and covers `num_messages`
# consecutive queue offsets starting at `msg_base_offset`: 1 for a plain
# message, `INNER_NUM` for an inner-batch record whose body holds several
# messages. Units are in queue-offset order, so a queue offset is found by
# a binary search on `msg_base_offset`. The queue's minimum offset is the
# first unit's base offset and its maximum (exclusive) the last unit's
# base offset plus its message count.
#
# Files are pre-allocated, so the newest one ends in zero-filled units.
# Recovery (`BatchConsumeQueue.recover`) accepts a unit only when its
# commit-log offset and base offset are not negative and its size and
# message count are positive; the first other unit ends the queue, and the
# sequence below stops there. The same 46-byte unit is used by the
# compaction consume queue (`SparseConsumeQueue`, 5.1.0+), which closes a
# file early with an end-of-file unit: commit-log offset -1, size 0,
# tags 0, time 0, base 0, count 0, compacted offset -1, reserved 0
# (`putEndPositionInfo`); recovery rejects it like the zero tail. All
# integers are big-endian and signed, as Java writes them.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/SparseConsumeQueue.java
rocketmq_batch_consumequeue = ka.Struct(
    # Units up to the end of the queue's data in this file. The last
    # element is the first unit recovery rejects (the zero-filled tail or
    # an end-of-file unit), unless the file ends right after an accepted
    # unit.
    "units" / ka.RepeatUntil(lambda item, this: not item["is_accepted"] or ka.io_eof(this), unit),
)
