meta:
  id: rocketmq_rocksdb_timer_value
  title: Apache RocketMQ RocksDB timer record value
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
  store/timer/rocksdb/TimerRocksDBRecord.java"
doc: |
  The value of one scheduled message in the `timer` column family of the
  RocksDB message store (`TimerRocksDBRecord.VALUE_LENGTH` = 12 bytes),
  under a rocketmq_rocksdb_timer_key: where the message waits in the commit
  log. Note the order: the size comes before the offset, unlike a
  consume-queue unit.
doc-ref: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
seq:
  - id: timer
    -orig-id: valueBytes
    type: timer_value
    doc: The 12 bytes of the value.
types:
  timer_value:
    doc: One value as `TimerRocksDBRecord.getValueBytes` writes it.
    doc-ref: https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
    -webide-representation: '@{ofs_commitlog:dec} +{len_message:dec}'
    seq:
      - id: len_message
        -orig-id: sizePy
        type: s4
        doc: |
          Size of the `rmq_sys_wheel_timer` record in the commit log (its
          TOTALSIZE).
      - id: ofs_commitlog
        -orig-id: offsetPy
        type: s8
        doc: Commit-log offset of that record (its PHYSICALOFFSET).
