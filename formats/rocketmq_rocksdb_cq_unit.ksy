meta:
  id: rocketmq_rocksdb_cq_unit
  title: Apache RocketMQ RocksDB consume queue unit
  application: Apache RocketMQ broker (5.2.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  endian: be
-rmq-since: '5.2.0'
-rmq-ref: "rocketmq-all-5.2.0:store/src/main/java/org/apache/rocketmq/\
  store/queue/RocksDBConsumeQueueTable.java"
doc: |
  The value of one consume-queue unit in the `default` column family of the
  RocksDB consume queue (`RocksDBConsumeQueueTable.CQ_UNIT_SIZE` = 28
  bytes), under a rocketmq_rocksdb_cq_key. The first three fields are those
  of a file consume-queue unit (rocketmq_consumequeue); the store time is
  new. There are no placeholder units: a key exists only for a message.
doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
seq:
  - id: unit
    -orig-id: cqValue
    type: unit_value
    doc: The 28 bytes of the value.
types:
  unit_value:
    doc: |
      One unit as `RocksDBConsumeQueueTable.buildCQValueByteBuffer` writes
      it for a dispatched message.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
    -webide-representation: '@{ofs_commitlog:dec} +{len_message:dec}'
    seq:
      - id: ofs_commitlog
        -orig-id: phyOffset
        type: s8
        doc: Commit-log offset of the message record (its PHYSICALOFFSET).
      - id: len_message
        -orig-id: msgSize
        type: s4
        doc: Size of the message record (its TOTALSIZE).
      - id: tags_code
        -orig-id: tagsCode
        type: s8
        doc: |
          As in a file consume queue: the Java `String.hashCode` of the TAGS,
          or the delivery time in `SCHEDULE_TOPIC_XXXX`.
      - id: store_timestamp
        -orig-id: storeTimestamp
        type: s8
        doc: The message's STORETIMESTAMP, in milliseconds since the Unix epoch.
