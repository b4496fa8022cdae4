meta:
  id: rocketmq_rocksdb_cq_checkpoint
  title: Apache RocketMQ RocksDB consume queue dispatch checkpoint
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
  The value under the `offset` column family key of the pseudo-topic
  `CHECKPOINT_TOPIC` (see rocketmq_rocksdb_cq_offset_key): the commit-log
  offset up to which messages have been dispatched into the RocksDB
  consume queue, written with every dispatched batch. After an unclean
  shutdown the broker's recovery compares commit-log positions with it.
doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
seq:
  - id: checkpoint
    -orig-id: maxPhyOffsetBB
    type: checkpoint_value
    doc: The 8 bytes of the value.
types:
  checkpoint_value:
    doc: The dispatch position.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
    -webide-representation: 'dispatched to {ofs_max_phy:dec}'
    seq:
      - id: ofs_max_phy
        -orig-id: maxPhyOffset
        type: s8
        doc: |
          Commit-log offset after the last dispatched message
          (`getMaxPhyOffsetInConsumeQueue`).
