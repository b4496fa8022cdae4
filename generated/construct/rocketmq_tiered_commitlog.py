# Generated from formats/rocketmq_tiered_commitlog.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ tiered-store commit-log segment: construct schema generated from formats/rocketmq_tiered_commitlog.ksy.

``rocketmq_tiered_commitlog`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "coda",
    "rocketmq_tiered_commitlog",
]


# The end of a sealed segment (`COMMIT_LOG_CODA_SIZE` = 16 bytes): a
# BLANK record header followed by the newest store time.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/util/MessageFormatUtil.java
coda = ka.Struct(
    # 16, the coda's size.
    "len_coda" / c.Int32sb,
    # The commit log's BLANK magic.
    "magic" / ka.Valid(c.Int32ub, ("eq 0xcbd43194.as<u4>", lambda value, this: value == 0xcbd43194)),
    # Newest store time (ms) of the segment's messages.
    "max_store_timestamp" / c.Int64sb,
)


# A commit-log segment of one topic queue in the tiered store (POSIX
# backend: `<tieredStoreFilePath>/<md5(cluster)[:8]>_<cluster>/<broker>/
# <topic>/<queueId>/COMMIT_LOG/<md5(offset)[:8]><offset, 20 digits>`).
# It holds that queue's message records, byte for byte as in the broker's
# commit log (see rocketmq_commitlog) except PHYSICALOFFSET, which the
# upload stream (`CommitLogInputStream`) rewrites to the record's offset in
# the tiered commit log; a `__CRC32#` property is not recomputed. Files are
# written by appending, not pre-allocated, and a sealed file may end with
# a 16-byte coda. The queue's tiered consume queue (`CONSUME_QUEUE/`) is a
# stream of rocketmq_consumequeue units whose offsets are tiered
# commit-log offsets, its files named by `queue offset * 20`.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/util/MessageFormatUtil.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/stream/CommitLogInputStream.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/provider/PosixFileSegment.java
rocketmq_tiered_commitlog = ka.Struct(
    # Message records (rocketmq_commitlog `record`), one after the other,
    # then the coda if the file was sealed with one.
    "records" / c.GreedyBytes,
)
