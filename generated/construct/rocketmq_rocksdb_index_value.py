# Generated from formats/rocketmq_rocksdb_index_value.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB message index value: construct schema generated from formats/rocketmq_rocksdb_index_value.ksy.

``rocketmq_rocksdb_index_value`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "index_value",
    "rocketmq_rocksdb_index_value",
]


# One value as `IndexRocksDBRecord.getValueBytes` writes it.
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
index_value = ka.Struct(
    # The message's STORETIMESTAMP, in milliseconds since the Unix epoch.
    "store_timestamp" / c.Int64sb,
)


# The value of one message index entry in the `default` column family of
# the RocksDB message store (8 bytes), under a rocketmq_rocksdb_index_key:
# the exact store time, which queries compare with their time range.
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
rocketmq_rocksdb_index_value = ka.Struct(
    # The 8 bytes of the value.
    "entry" / index_value,
)
