meta:
  id: rocketmq_rocksdb_config_record
  title: Apache RocketMQ RocksDB config record value (v2 layout)
  application: Apache RocketMQ broker (5.3.2 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  encoding: UTF-8
-rmq-since: '5.3.2'
-rmq-ref: "rocketmq-all-5.3.2:broker/src/main/java/org/apache/rocketmq/\
  broker/config/v2/TopicConfigManagerV2.java"
doc: |
  The value of a topic or subscription-group key of `config/rdb/` (see
  rocketmq_rocksdb_config_key): a serialization type and the serialized
  bean. Only JSON (fastjson2 `JSON.toJSONBytes` of `TopicConfig` or
  `SubscriptionGroupConfig`) is written.
doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
seq:
  - id: serialization_type
    -orig-id: SerializationType
    type: u1
    enum: serialization_type_code
    doc: How the rest of the value is serialized.
  - id: payload
    -orig-id: payload
    size-eos: true
    doc: The serialized bean (UTF-8 JSON text for `json`).
enums:
  serialization_type_code:
    0:
      id: unspecified
      doc: Unknown; the broker skips the record.
    1:
      id: json
      doc: JSON text.
    2:
      id: protobuf
      doc: Declared, never written.
    3:
      id: flat_buffers
      doc: Declared, never written.
