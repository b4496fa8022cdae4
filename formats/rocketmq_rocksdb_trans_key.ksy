meta:
  id: rocketmq_rocksdb_trans_key
  title: Apache RocketMQ RocksDB transaction record key
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
  store/transaction/TransRocksDBRecord.java"
doc: |
  The key of one open (half) transactional message in the `trans` column
  family of the broker's RocksDB message store, `<store>/rocksdbstore/`
  (`MessageRocksDBStorage`, RIP-82), written when the broker keeps its
  transaction state in RocksDB (`transRocksDBEnable=true`). The half message
  itself is in the commit log; the key is deleted when the transaction is
  committed or rolled back (an operation record, `isOp`), so the column
  family holds the transactions still waiting for a check. Its value is a
  rocketmq_rocksdb_trans_value.

  The commit-log offset comes first, big-endian, so keys sort in commit-log
  order. `TransMessageRocksDBStore.buildTransIndex` writes a key for each
  message dispatched under `RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC` (the half
  message, at its own offset) and for each operation message under
  `RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC` (at the offset its `TRANS_OFFSET`
  property names, marking the half message done); both topics are 5.4.0's
  RocksDB counterparts of `RMQ_SYS_TRANS_HALF_TOPIC` /
  `RMQ_SYS_TRANS_OP_HALF_TOPIC`. The topic part is the message's
  `REAL_TOPIC` property; the last part is its `__transactionId__` property
  (`PROPERTY_TRANSACTION_ID`), which the op message copies from the half
  message's UNIQ_KEY, so for the half message it is the id the producer
  client set as transaction id. A message lacking either property gets no
  key. One other key is no record: the ASCII string `lastOffsetPy`, with
  an 8-byte big-endian value (rocketmq_rocksdb_message_mark), the largest
  commit-log offset written so far, from which dispatch resumes.
doc-ref:
  - https://github.com/apache/rocketmq/pull/9787
  - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
  - https://github.com/apache/rocketmq/blob/14d35e958d823bc8e01331d55a67ff8be4fa2fcd/store/src/main/java/org/apache/rocketmq/store/transaction/TransMessageRocksDBStore.java
seq:
  - id: ofs_commitlog
    -orig-id: offsetPy
    type: s8
    doc: Commit-log offset of the half message.
  - id: sep_topic
    -orig-id: KEY_SPLIT
    contents: '@'
    doc: Separator before the topic.
  - id: topic_and_uniq_key
    -orig-id: topic + KEY_SPLIT + uniqKey
    size-eos: true
    type: str
    doc: |
      The message's real topic (`REAL_TOPIC`) and its transaction id (the
      `__transactionId__` property, which the Java code names `uniqKey`),
      separated by `@` (a topic name has no `@`; the broker's decoder
      splits the text after the offset at `@` and wants exactly three
      parts).
