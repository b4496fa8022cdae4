meta:
  id: rocketmq_rocksdb_timer_key
  title: Apache RocketMQ RocksDB timer record key
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
  store/timer/rocksdb/TimerRocksDBRecord.java"
doc: |
  The key of one scheduled message in the `timer` column family of the
  broker's RocksDB message store, `<store>/rocksdbstore/`
  (`MessageRocksDBStorage`, RIP-82), written when the broker runs the
  RocksDB timer engine (`timerRocksDBEnable=true`, `mqadmin
  switchTimerEngine -e R`, engine `ROCKSDB_TIMELINE`). Its value is a
  rocketmq_rocksdb_timer_value pointing at the `rmq_sys_wheel_timer` record
  in the commit log.

  The delivery time comes first, big-endian, so RocksDB's bytewise order is
  the order of delivery: the broker scans the keys from one time bound to
  the next and deletes the ranges it delivered. A cancelled message's key is
  deleted (`TIMER_ROCKSDB_DELETE`); a rolled message's key is written again
  (`TIMER_ROCKSDB_UPDATE`).

  Two other keys of the column family are no timer records: the ASCII
  strings `sys_topic_scan_offset_checkpoint` (the consume-queue offset of
  `rmq_sys_wheel_timer` dispatched so far) and `timeline_checkpoint` (the
  delivery time scanned so far), each with an 8-byte big-endian value
  (rocketmq_rocksdb_message_mark). They sort after every record key (their
  first byte, 0x73 or 0x74, is above that of any delivery time before the
  year 4 million).
doc-ref:
  - https://github.com/apache/rocketmq/pull/9787
  - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
  - https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
seq:
  - id: delivery_time
    -orig-id: delayTime
    type: s8
    valid:
      min: 1
    doc: |
      When the message is due, in milliseconds since the Unix epoch (its
      `TIMER_OUT_MS`). The broker writes no key with a time of 0 or less.
  - id: uniq_key
    -orig-id: uniqKey
    size-eos: true
    type: str
    doc: The message's UNIQ_KEY (message id set by the producer), in UTF-8.
