# Generated from formats/rocketmq_rocksdb_index_key.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB message index key: construct schema generated from formats/rocketmq_rocksdb_index_key.ksy.

``rocketmq_rocksdb_index_key`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "rocketmq_rocksdb_index_key",
]


# The key of one message index entry in the `default` column family of the
# broker's RocksDB message store, `<store>/rocksdbstore/`
# (`MessageRocksDBStorage`, RIP-82): the RocksDB counterpart of an index
# file's entry, written when the broker indexes in RocksDB
# (`indexRocksDBEnable=true`). Its value is a rocketmq_rocksdb_index_value.
#
# A message gets every kind of key that applies, not only the first:
# one `K` key per distinct, non-empty key of its KEYS (split at spaces),
# one `T` key when its TAGS property is set and not empty, and always one
# `U` key for its UNIQ_KEY alone (`IndexRocksDBStore.buildIndex`). A
# rollback message (transaction type rollback in SYSFLAG) gets no key, nor
# does a message without a topic, UNIQ_KEY or store time. The hour comes
# first, big-endian, so the broker deletes expired hours as one key range.
# Two other keys of the column family are no entries: the ASCII strings
# `lastOffsetPy` and `lastStoreTimeStamp`, each with an 8-byte big-endian
# value (rocketmq_rocksdb_message_mark), the newest commit-log offset and
# store time indexed, from which dispatch resumes.
# See: https://github.com/apache/rocketmq/pull/9787
# See: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
# See: https://github.com/apache/rocketmq/blob/14d35e958d823bc8e01331d55a67ff8be4fa2fcd/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBStore.java
rocketmq_rocksdb_index_key = ka.Struct(
    # The message's store time truncated to the hour
    # (`MixAll.dealTimeToHourStamps`), in milliseconds since the Unix epoch.
    "store_hour" / c.Int64sb,
    # Separator before the topic.
    "sep_topic" / c.Const(b'@'),
    # `topic@type@key@uniqKey@` for types `K` and `T` (the key is one of
    # KEYS, or the TAGS), `topic@U@uniqKey@` for type `U`
    # (`MessageConst.INDEX_KEY_TYPE`, `INDEX_TAG_TYPE`, `INDEX_UNIQUE_TYPE`).
    "middle" / c.StringEncoded(
        c.Bytes(lambda this: ka.io_size(this) - ka.io_pos(this) - 8),
        "UTF-8",
    ),
    # Commit-log offset of the message.
    "ofs_commitlog" / c.Int64sb,
)
