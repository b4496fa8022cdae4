meta:
  id: rocketmq_rocksdb_config_key
  title: Apache RocketMQ RocksDB config key (v2 layout)
  application: Apache RocketMQ broker (5.3.2 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  encoding: UTF-8
  endian: be
-rmq-since: '5.3.2'
-rmq-ref: "rocketmq-all-5.3.2:broker/src/main/java/org/apache/rocketmq/\
  broker/config/v2/ConfigHelper.java"
doc: |
  A key of the single RocksDB config database `<store>/config/rdb/` that a
  broker with `configManagerVersion=v2` keeps (`ConfigStorage`, column
  family `default`). Every key starts with a table prefix, a table id and a
  record prefix. A table's `data_version` record holds a
  rocketmq_rocksdb_config_data_version; a topic or subscription-group
  record a rocketmq_rocksdb_config_record (the JSON of the config bean);
  a consumer or pull offset record a rocketmq_rocksdb_config_offset.

  The v1 layout (5.1.4+, `storeType=defaultRocksDB`) keeps one database per
  table instead, `config/topics/`, `config/subscriptionGroups/` and
  `config/consumerOffsets/`: the key is the UTF-8 name (the topic, the
  group, or `topic@group`) and the value the fastjson text of the bean (an
  `{"offsetTable":{...}}` wrapper for offsets); from 5.3.1 the column
  family `kvDataVersion` holds the JSON `DataVersion` under the key
  `kvDataVersionKey`, and `forbidden` the JSON forbidden map of a group
  under its name. Those keys and values have no binary layout.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v1/RocksDBTopicConfigManager.java
seq:
  - id: table_prefix
    -orig-id: TablePrefix
    type: u1
    enum: table_prefix_code
    valid:
      eq: table_prefix_code::table
    doc: Always `TABLE` (1).
  - id: table_id
    -orig-id: TableId
    type: u2
    enum: table_id_code
    doc: Which table the record belongs to.
  - id: record_prefix
    -orig-id: RecordPrefix
    type: u1
    enum: record_prefix_code
    doc: The table's data version, or one of its records.
  - id: data_version_name
    -orig-id: DATA_VERSION_KEY
    size-eos: true
    type: str
    if: record_prefix == record_prefix_code::data_version
    doc: '`data_version`.'
  - id: named
    -orig-id: keyBufOf
    type: named_record
    if: |
      record_prefix == record_prefix_code::data and
      (table_id == table_id_code::topic
      or table_id == table_id_code::subscription_group)
    doc: A topic or a subscription group, by name.
  - id: offset
    -orig-id: keyOfConsumerOffset
    type: offset_record
    if: |
      record_prefix == record_prefix_code::data and
      (table_id == table_id_code::consumer_offset or
      table_id == table_id_code::pull_offset)
    doc: The offset of a group on a topic queue.
types:
  named_record:
    doc: |
      The name of a topic or of a subscription group
      (`ConfigHelper.keyBufOf`).
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
    -webide-representation: '{name}'
    seq:
      - id: len_name
        -orig-id: bytes.length
        type: u2
        doc: Length of the name in UTF-8 bytes.
      - id: name
        -orig-id: name
        size: len_name
        type: str
        doc: The topic or group name.
  offset_record:
    doc: |
      A group, a topic and a queue id (`keyOfConsumerOffset`,
      `keyOfPullOffset`).
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
    -webide-representation: '{topic}@{group}/{queue_id:dec}'
    seq:
      - id: len_group
        -orig-id: groupBytes.length
        type: u2
        doc: Length of the group name in UTF-8 bytes.
      - id: group
        -orig-id: group
        size: len_group
        type: str
        doc: The consumer group.
      - id: sep_topic
        -orig-id: CTRL_1
        contents: [0x01]
        doc: Separator before the topic.
      - id: len_topic
        -orig-id: topicBytes.length
        type: u2
        doc: Length of the topic name in UTF-8 bytes.
      - id: topic
        -orig-id: topic
        size: len_topic
        type: str
        doc: The topic.
      - id: sep_queue_id
        -orig-id: CTRL_1
        contents: [0x01]
        doc: Separator before the queue id.
      - id: queue_id
        -orig-id: queueId
        type: s4
        doc: The queue id.
enums:
  table_prefix_code:
    0:
      id: no_table_prefix
      doc: Not used in keys.
    1:
      id: table
      doc: A table record.
  table_id_code:
    0:
      id: no_table
      doc: Not used in keys.
    1:
      id: consumer_offset
      doc: Committed consumer offsets (`consumerOffset.json`).
    2:
      id: pull_offset
      doc: Pull offsets of the broker's own pulls.
    3:
      id: topic
      doc: Topic configs (`topics.json`).
    4:
      id: subscription_group
      doc: Subscription groups (`subscriptionGroup.json`).
  record_prefix_code:
    0:
      id: no_record_prefix
      doc: Not used in keys.
    1:
      id: data_version
      doc: The table's `DataVersion`.
    2:
      id: data
      doc: One record of the table.
