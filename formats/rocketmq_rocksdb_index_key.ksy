meta:
  id: rocketmq_rocksdb_index_key
  title: Apache RocketMQ RocksDB message index key
  application: Apache RocketMQ broker (5.4.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  encoding: UTF-8
  endian: be
-rmq-since: '5.4.0'
-rmq-ref: "rocketmq-all-5.4.0:store/src/main/java/org/apache/rocketmq/\
  store/index/rocksdb/IndexRocksDBRecord.java"
doc: |
  The key of one message index entry in the `default` column family of the
  broker's RocksDB message store, `<store>/rocksdbstore/`
  (`MessageRocksDBStorage`, RIP-82): the RocksDB counterpart of an index
  file's entry, written when the broker indexes in RocksDB
  (`indexRocksDBEnable=true`). Its value is a rocketmq_rocksdb_index_value.

  A message gets every kind of key that applies, not only the first:
  one `K` key per distinct, non-empty key of its KEYS (split at spaces),
  one `T` key when its TAGS property is set and not empty, and always one
  `U` key for its UNIQ_KEY alone (`IndexRocksDBStore.buildIndex`). A
  rollback message (transaction type rollback in SYSFLAG) gets no key, nor
  does a message without a topic, UNIQ_KEY or store time. The hour comes
  first, big-endian, so the broker deletes expired hours as one key range.
  Two other keys of the column family are no entries: the ASCII strings
  `lastOffsetPy` and `lastStoreTimeStamp`, each with an 8-byte big-endian
  value (rocketmq_rocksdb_message_mark), the newest commit-log offset and
  store time indexed, from which dispatch resumes.
doc-ref:
  - https://github.com/apache/rocketmq/pull/9787
  - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
  - https://github.com/apache/rocketmq/blob/14d35e958d823bc8e01331d55a67ff8be4fa2fcd/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBStore.java
seq:
  - id: store_hour
    -orig-id: storeTimeHour
    type: s8
    doc: |
      The message's store time truncated to the hour
      (`MixAll.dealTimeToHourStamps`), in milliseconds since the Unix epoch.
  - id: sep_topic
    -orig-id: KEY_SPLIT
    contents: '@'
    doc: Separator before the topic.
  - id: middle
    -orig-id: keyMiddleStr
    size: _io.size - _io.pos - 8
    type: str
    doc: |
      `topic@type@key@uniqKey@` for types `K` and `T` (the key is one of
      KEYS, or the TAGS), `topic@U@uniqKey@` for type `U`
      (`MessageConst.INDEX_KEY_TYPE`, `INDEX_TAG_TYPE`, `INDEX_UNIQUE_TYPE`).
  - id: ofs_commitlog
    -orig-id: offsetPy
    type: s8
    doc: Commit-log offset of the message.
