meta:
  id: rocketmq_rocksdb_cq_offset_key
  title: Apache RocketMQ RocksDB consume queue offset key
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
  store/queue/RocksDBConsumeQueueOffsetTable.java"
doc: |
  A key of the `offset` column family of the RocksDB consume queue
  (`RocksDBConsumeQueueOffsetTable`): the smallest or the largest unit of a
  topic queue, with a rocketmq_rocksdb_cq_offset value. The `max` key is
  written with every dispatched batch; the `min` key only when the broker
  first corrects a queue's minimum offset (`getMinOffsetInQueue`), so it is
  often absent.

  The same layout with the pseudo-topic `CHECKPOINT_TOPIC`, `max` and queue
  0 is the dispatch checkpoint, whose value is a
  rocketmq_rocksdb_cq_checkpoint (8 bytes) instead.
doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
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
    doc: The topic name (`CHECKPOINT_TOPIC` for the dispatch checkpoint).
  - id: sep_bound
    -orig-id: CTRL_1
    contents: [0x01]
    doc: Separator before the bound.
  - id: bound
    -orig-id: MAX_BYTES / MIN_BYTES
    size: 3
    type: str
    valid:
      any-of: ['"max"', '"min"']
    doc: '`max` or `min`: which end of the queue the value gives.'
  - id: sep_queue_id
    -orig-id: CTRL_1
    contents: [0x01]
    doc: Separator before the queue id.
  - id: queue_id
    -orig-id: queueId
    type: s4
    doc: The queue id (0 for the dispatch checkpoint).
instances:
  is_max:
    value: bound == "max"
    doc: The key of the queue's largest unit.
  is_checkpoint:
    value: topic == "CHECKPOINT_TOPIC"
    doc: |
      The dispatch checkpoint (`TopicValidator.RMQ_SYS_ROCKSDB_OFFSET_TOPIC`)
      rather than a topic queue.
