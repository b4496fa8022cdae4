# Generated from formats/rocketmq_checkpoint.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ store checkpoint: construct schema generated from formats/rocketmq_checkpoint.ksy.

``rocketmq_checkpoint`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "rocketmq_checkpoint",
]


# The file `<store>/checkpoint` (`StoreCheckpoint`): how far the broker had
# flushed the commit log, the consume queues and the index when it last
# wrote this file. The broker maps one 4096-byte page of the file
# (`OS_PAGE_SIZE`), so the file is 4096 bytes long. It rewrites the fields
# in place after each complete consume-queue flush and each index-file
# flush, once a second in 5.x, and on shutdown; it never writes the bytes
# after them, which stay zero.
#
# What each release writes:
#
# * 4.0.0 to 4.9.x: the three timestamps (bytes 0 to 23). A file created by
#   these releases has zeros at bytes 24 to 39; a 4.x broker running on a
#   file written by 5.x leaves whatever is there.
# * 5.0.0 to 5.1.0: also `masterFlushedOffset` (bytes 24 to 31).
# * 5.1.1 and later: also `confirmPhyOffset` (bytes 32 to 39).
#
# The timestamps are milliseconds since the Unix epoch. They are flush
# marks, not "last message" times: `physicMsgTimestamp` is the store time
# of the message at the flush position when a flush started, so it is
# normally older than the newest messages even after a clean shutdown.
# When a broker restarts after an unclean shutdown (an `abort` file is in
# the store root), its recovery uses them to choose where to start: it
# walks the commit-log segments back from the newest and starts at the
# first whose first message was stored no later than `min_timestamp`
# (`min_timestamp_index` when `messageIndexSafe` is set).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.1/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.0.0/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
rocketmq_checkpoint = ka.Struct(
    # Store time (ms since the epoch) of the commit-log message at the
    # position where the last commit-log flush began; 0 before the first.
    # On a slave or with `duplicationEnable`, the store time of the last
    # message dispatched to a consume queue. All releases.
    "physic_msg_timestamp" / c.Int64sb,
    # Store time (ms since the epoch) of the last message dispatched to a
    # consume queue, as of the last write of this file (to 5.4.0: written
    # to the queue in memory, flushed or not). From 5.5.0 the store time
    # of the last message whose consume-queue unit was flushed to disk;
    # the in-memory value is kept apart (`tmpLogicsMsgTimestamp`) and
    # copied here when FlushConsumeQueueService flushes the queues, after
    # which it always writes the checkpoint.
    "logics_msg_timestamp" / c.Int64sb,
    # The older of the commit-log and consume-queue timestamps.
    "min_flush_timestamp" / c.Computed(
        lambda this: this["physic_msg_timestamp"] if this["physic_msg_timestamp"] < this["logics_msg_timestamp"] else this["logics_msg_timestamp"],
    ),
    # `StoreCheckpoint.getMinTimestamp`: the older of the commit-log and
    # consume-queue timestamps, minus 3 seconds, not below 0. Abnormal
    # recovery starts at the newest commit-log segment whose first message
    # was stored at or before this time.
    "min_timestamp" / c.Computed(
        lambda this: this["min_flush_timestamp"] - 3000 if this["min_flush_timestamp"] >= 3000 else 0,
    ),
    # End timestamp (ms since the epoch) of the last index file flushed,
    # as recorded in its header. All releases.
    "index_msg_timestamp" / c.Int64sb,
    # `StoreCheckpoint.getMinTimestampIndex`: `min_timestamp`, or the index
    # timestamp when older; the recovery start time with `messageIndexSafe`.
    "min_timestamp_index" / c.Computed(
        lambda this: this["min_timestamp"] if this["min_timestamp"] < this["index_msg_timestamp"] else this["index_msg_timestamp"],
    ),
    # Commit-log offset up to which the master had flushed, as told to a
    # slave (controller mode); 0 on a master or standalone broker. Written
    # by 5.0.0 and later; zero in a file created by 4.x.
    "ofs_master_flushed" / c.Int64sb,
    # The commit log's confirm offset. In controller mode, the offset up
    # to which data is confirmed replicated; otherwise the recovery at
    # startup sets it to the offset of the last valid message it found (0
    # for a store that was empty). Written by 5.1.1 and later; zero in a
    # file created by an older release.
    "ofs_confirm_phy" / c.Int64sb,
    # Rest of the 4096-byte page; never written, so zero.
    "reserved" / c.GreedyBytes,
)
