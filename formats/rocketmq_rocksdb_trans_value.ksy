meta:
  id: rocketmq_rocksdb_trans_value
  title: Apache RocketMQ RocksDB transaction record value
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
  store/transaction/TransRocksDBRecord.java"
doc: |
  The value of one open transactional message in the `trans` column family
  of the RocksDB message store (`TransRocksDBRecord.VALUE_LENGTH` = 8
  bytes), under a rocketmq_rocksdb_trans_key.
doc-ref: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
seq:
  - id: trans
    -orig-id: valueBytes
    type: trans_value
    doc: The 8 bytes of the value.
types:
  trans_value:
    doc: One value as `TransRocksDBRecord.getValueBytes` writes it.
    doc-ref: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
    -webide-representation: '{check_times:dec} checks +{len_message:dec}'
    seq:
      - id: check_times
        -orig-id: checkTimes
        type: s4
        doc: |
          How often the broker has asked the producer about the transaction
          so far.
      - id: len_message
        -orig-id: sizePy
        type: s4
        doc: |
          Size of the half message's record in the commit log (its
          TOTALSIZE).
