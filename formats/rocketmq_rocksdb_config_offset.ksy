meta:
  id: rocketmq_rocksdb_config_offset
  title: Apache RocketMQ RocksDB consumer offset value (v2 layout)
  application: Apache RocketMQ broker (5.3.2 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  endian: be
-rmq-since: '5.3.2'
-rmq-ref: "rocketmq-all-5.3.2:broker/src/main/java/org/apache/rocketmq/\
  broker/config/v2/ConsumerOffsetManagerV2.java"
doc: |
  The value of a consumer-offset or pull-offset key in `config/rdb/` (see
  rocketmq_rocksdb_config_key): the next logical offset the group will
  consume from the queue (`ConsumerOffsetManagerV2.commitOffset`).
doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
seq:
  - id: offset
    -orig-id: valueBuf
    type: offset_value
    doc: The 8 bytes of the value.
types:
  offset_value:
    doc: A committed offset.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
    -webide-representation: '{offset:dec}'
    seq:
      - id: offset
        -orig-id: offset
        type: s8
        doc: The committed offset.
