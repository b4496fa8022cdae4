# Generated from formats/rocketmq_rocksdb_trans_key.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB transaction record key: construct schema generated from formats/rocketmq_rocksdb_trans_key.ksy.

``rocketmq_rocksdb_trans_key`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "rocketmq_rocksdb_trans_key",
]


# The key of one open (half) transactional message in the `trans` column
# family of the broker's RocksDB message store, `<store>/rocksdbstore/`
# (`MessageRocksDBStorage`, RIP-82), written when the broker keeps its
# transaction state in RocksDB (`transRocksDBEnable=true`). The half message
# itself is in the commit log; the key is deleted when the transaction is
# committed or rolled back (an operation record, `isOp`), so the column
# family holds the transactions still waiting for a check. Its value is a
# rocketmq_rocksdb_trans_value.
#
# The commit-log offset comes first, big-endian, so keys sort in commit-log
# order. `TransMessageRocksDBStore.buildTransIndex` writes a key for each
# message dispatched under `RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC` (the half
# message, at its own offset) and for each operation message under
# `RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC` (at the offset its `TRANS_OFFSET`
# property names, marking the half message done); both topics are 5.4.0's
# RocksDB counterparts of `RMQ_SYS_TRANS_HALF_TOPIC` /
# `RMQ_SYS_TRANS_OP_HALF_TOPIC`. The topic part is the message's
# `REAL_TOPIC` property; the last part is its `__transactionId__` property
# (`PROPERTY_TRANSACTION_ID`), which the op message copies from the half
# message's UNIQ_KEY, so for the half message it is the id the producer
# client set as transaction id. A message lacking either property gets no
# key. One other key is no record: the ASCII string `lastOffsetPy`, with
# an 8-byte big-endian value (rocketmq_rocksdb_message_mark), the largest
# commit-log offset written so far, from which dispatch resumes.
# See: https://github.com/apache/rocketmq/pull/9787
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
# See: https://github.com/apache/rocketmq/blob/14d35e958d823bc8e01331d55a67ff8be4fa2fcd/store/src/main/java/org/apache/rocketmq/store/transaction/TransMessageRocksDBStore.java
rocketmq_rocksdb_trans_key = ka.Struct(
    # Commit-log offset of the half message.
    "ofs_commitlog" / c.Int64sb,
    # Separator before the topic.
    "sep_topic" / c.Const(b'@'),
    # The message's real topic (`REAL_TOPIC`) and its transaction id (the
    # `__transactionId__` property, which the Java code names `uniqKey`),
    # separated by `@` (a topic name has no `@`; the broker's decoder
    # splits the text after the offset at `@` and wants exactly three
    # parts).
    "topic_and_uniq_key" / c.StringEncoded(c.GreedyBytes, "UTF-8"),
)
