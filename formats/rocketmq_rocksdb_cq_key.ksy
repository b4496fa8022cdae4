meta:
  id: rocketmq_rocksdb_cq_key
  title: Apache RocketMQ RocksDB consume queue key
  application: Apache RocketMQ broker (5.2.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  encoding: UTF-8
  endian: be
-rmq-since: '5.2.0'
-rmq-ref: "rocketmq-all-5.2.0:store/src/main/java/org/apache/rocketmq/\
  store/queue/RocksDBConsumeQueueTable.java"
-rmq-changes:
  - in: '5.3.1'
    id: double_write_in_consumequeue
    rule: MEANING_CHANGED
    doc: |
      A broker with the default file store and `rocksdbCQDoubleWriteEnable`
      also writes its consume queues into this RocksDB database, in the same
      `consumequeue/` folder as the file queues (`consumequeue/CURRENT`
      beside `<topic>/<queue id>/`), to migrate to `defaultRocksDB`.
    ref: "rocketmq-all-5.3.1:store/src/main/java/org/apache/rocketmq/store/\
      DefaultMessageStore.java"
    old-reader-ok: true
  - in: '5.3.4'
    id: accelerated_recovery
    rule: MEANING_CHANGED
    doc: |
      With enableAcceleratedRecovery (default false; meant for the RocksDB
      store with SYNC_FLUSH), recovery starts at the largest commit-log
      offset this database records (its max physical offset) instead of
      scanning commit-log segments, so the database must not be behind
      the commit log.
    ref: "rocketmq-all-5.3.4:store/src/main/java/org/apache/rocketmq/store/\
      config/MessageStoreConfig.java"
    old-reader-ok: true
  - in: '5.5.1'
    id: selective_double_write
    rule: MEANING_CHANGED
    doc: |
      With rocksdbCQSelectiveDoubleWriteEnable (beside
      rocksdbCQDoubleWriteEnable; default false), a combined store writes
      only selected topics (lite topics among them) into this database: the
      file queues of the other topics have no RocksDB units by design.
    ref: "rocketmq-all-5.5.1:store/src/main/java/org/apache/rocketmq/store/\
      queue/CombineConsumeQueueStore.java"
    old-reader-ok: true
doc: |
  The key of one consume-queue unit in the `default` column family of the
  RocksDB database that a broker with `storeType=defaultRocksDB` keeps in
  `<store>/consumequeue/` (`RocksDBConsumeQueueTable`). One key per message
  of a topic queue; its value is a rocketmq_rocksdb_cq_unit.

  RocksDB sorts keys bytewise, so the units of one topic queue are
  contiguous and in the order of their logical offsets (the big-endian
  `cq_offset` at the end of the key). Deleting a queue removes the key range
  from the same prefix ending in 0x00 up to the one ending in 0x02
  (`CTRL_0`, `CTRL_2`).
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/common/src/main/java/org/apache/rocketmq/common/config/AbstractRocksDBStorage.java
seq:
  - id: len_topic
    -orig-id: topicBytes.length
    type: s4
    valid:
      min: 1
      max: 255
    doc: Length of the topic name in UTF-8 bytes.
  - id: sep_topic
    -orig-id: CTRL_1
    contents: [0x01]
    doc: Separator before the topic.
  - id: topic
    -orig-id: topic
    size: len_topic
    type: str
    doc: The topic name.
  - id: sep_queue_id
    -orig-id: CTRL_1
    contents: [0x01]
    doc: Separator before the queue id.
  - id: queue_id
    -orig-id: queueId
    type: s4
    doc: The queue id.
  - id: sep_cq_offset
    -orig-id: CTRL_1
    contents: [0x01]
    doc: Separator before the logical offset.
  - id: cq_offset
    -orig-id: cqOffset
    type: s8
    doc: Logical offset of the unit in its queue (the message's QUEUEOFFSET).
