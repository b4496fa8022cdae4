meta:
  id: rocketmq_rocksdb_cq_offset
  title: Apache RocketMQ RocksDB consume queue offset value
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
  store/queue/RocksDBConsumeQueueOffsetTable.java"
doc: |
  The value under a rocketmq_rocksdb_cq_offset_key of a topic queue
  (`OFFSET_VALUE_LENGTH` = 16 bytes): the commit-log offset and the logical
  offset of the queue's largest (`max`) or smallest (`min`) unit. The
  broker's `getMaxOffsetInQueue` is the `max` unit's logical offset plus 1
  (0 when the queue has no `max` key).
doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
seq:
  - id: offset
    -orig-id: offsetValue
    type: offset_value
    doc: The 16 bytes of the value.
types:
  offset_value:
    doc: The bound of one topic queue.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
    -webide-representation: 'cq {cq_offset:dec} @{ofs_commitlog:dec}'
    seq:
      - id: ofs_commitlog
        -orig-id: phyOffset
        type: s8
        doc: Commit-log offset of the unit's message.
      - id: cq_offset
        -orig-id: cqOffset
        type: s8
        doc: Logical offset of the unit.
