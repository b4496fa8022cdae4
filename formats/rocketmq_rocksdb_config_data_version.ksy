meta:
  id: rocketmq_rocksdb_config_data_version
  title: Apache RocketMQ RocksDB config data version (v2 layout)
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
  broker/config/v2/ConfigHelper.java"
doc: |
  The value of a table's `data_version` key in `config/rdb/` (see
  rocketmq_rocksdb_config_key): the table's `DataVersion` as three longs
  (`ConfigHelper.stampDataVersion`). A value of any other length is
  ignored by the broker (`onDataVersionLoad`).
doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
seq:
  - id: data_version
    -orig-id: dataVersion
    type: data_version_value
    doc: The 24 bytes of the value.
types:
  data_version_value:
    doc: A `DataVersion`.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
    -webide-representation: 'counter {counter:dec}'
    seq:
      - id: state_version
        -orig-id: stateVersion
        type: s8
        doc: The state machine version.
      - id: timestamp
        -orig-id: timestamp
        type: s8
        doc: Time of the last change, in milliseconds since the Unix epoch.
      - id: counter
        -orig-id: counter
        type: s8
        doc: Number of changes.
