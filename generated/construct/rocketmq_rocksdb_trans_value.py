# Generated from formats/rocketmq_rocksdb_trans_value.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB transaction record value: construct schema generated from formats/rocketmq_rocksdb_trans_value.ksy.

``rocketmq_rocksdb_trans_value`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "trans_value",
    "rocketmq_rocksdb_trans_value",
]


# One value as `TransRocksDBRecord.getValueBytes` writes it.
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
trans_value = ka.Struct(
    # How often the broker has asked the producer about the transaction
    # so far.
    "check_times" / c.Int32sb,
    # Size of the half message's record in the commit log (its
    # TOTALSIZE).
    "len_message" / c.Int32sb,
)


# The value of one open transactional message in the `trans` column family
# of the RocksDB message store (`TransRocksDBRecord.VALUE_LENGTH` = 8
# bytes), under a rocketmq_rocksdb_trans_key.
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
rocketmq_rocksdb_trans_value = ka.Struct(
    # The 8 bytes of the value.
    "trans" / trans_value,
)
