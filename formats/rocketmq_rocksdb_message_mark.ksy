meta:
  id: rocketmq_rocksdb_message_mark
  title: Apache RocketMQ RocksDB message store progress mark
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
  store/rocksdb/MessageRocksDBStorage.java"
doc: |
  The value of a progress key of the RocksDB message store
  (`MessageRocksDBStorage`): 8 bytes, one big-endian long. The keys are
  ASCII names: in the `timer` column family `sys_topic_scan_offset_checkpoint`
  (`SYS_TOPIC_SCAN_OFFSET_CHECK_POINT`: the consume-queue offset of
  `rmq_sys_wheel_timer` the timer engine has read up to) and
  `timeline_checkpoint` (`TIMELINE_CHECK_POINT`: the delivery time, in
  milliseconds, it has delivered up to); in the `trans` and `default`
  column families `lastOffsetPy` (`LAST_OFFSET_PY`: the largest commit-log
  offset written), and in `default` also `lastStoreTimeStamp`
  (`LAST_STORE_TIMESTAMP`: the newest store time indexed).
doc-ref: https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
seq:
  - id: mark
    -orig-id: valueBytes
    type: mark_value
    doc: The 8 bytes of the value.
types:
  mark_value:
    doc: One progress value as the broker writes it.
    doc-ref: https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
    -webide-representation: '{position:dec}'
    seq:
      - id: position
        -orig-id: value
        type: s8
        doc: The offset or time the key names.
