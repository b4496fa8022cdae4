# Generated from formats/rocketmq_rocksdb_cq_checkpoint.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB consume queue dispatch checkpoint: construct schema generated from formats/rocketmq_rocksdb_cq_checkpoint.ksy.

``rocketmq_rocksdb_cq_checkpoint`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "checkpoint_value",
    "rocketmq_rocksdb_cq_checkpoint",
]


# The dispatch position.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
checkpoint_value = ka.Struct(
    # Commit-log offset after the last dispatched message
    # (`getMaxPhyOffsetInConsumeQueue`).
    "ofs_max_phy" / c.Int64sb,
)


# The value under the `offset` column family key of the pseudo-topic
# `CHECKPOINT_TOPIC` (see rocketmq_rocksdb_cq_offset_key): the commit-log
# offset up to which messages have been dispatched into the RocksDB
# consume queue, written with every dispatched batch. After an unclean
# shutdown the broker's recovery compares commit-log positions with it.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
rocketmq_rocksdb_cq_checkpoint = ka.Struct(
    # The 8 bytes of the value.
    "checkpoint" / checkpoint_value,
)
