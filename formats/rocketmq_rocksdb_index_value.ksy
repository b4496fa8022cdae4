meta:
  id: rocketmq_rocksdb_index_value
  title: Apache RocketMQ RocksDB message index value
  application: Apache RocketMQ broker (5.4.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  endian: be
-rmq-since: '5.4.0'
-rmq-ref: "rocketmq-all-5.4.0:store/src/main/java/org/apache/rocketmq/\
  store/index/rocksdb/IndexRocksDBRecord.java"
doc: |
  The value of one message index entry in the `default` column family of
  the RocksDB message store (8 bytes), under a rocketmq_rocksdb_index_key:
  the exact store time, which queries compare with their time range.
doc-ref: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
seq:
  - id: entry
    -orig-id: valueBytes
    type: index_value
    doc: The 8 bytes of the value.
types:
  index_value:
    doc: One value as `IndexRocksDBRecord.getValueBytes` writes it.
    doc-ref: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
    -webide-representation: 'stored at {store_timestamp:dec}'
    seq:
      - id: store_timestamp
        -orig-id: storeTime
        type: s8
        doc: The message's STORETIMESTAMP, in milliseconds since the Unix epoch.
