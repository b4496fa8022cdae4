# Generated from formats/rocketmq_rocksdb_config_key.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB config key (v2 layout): construct schema generated from formats/rocketmq_rocksdb_config_key.ksy.

``rocketmq_rocksdb_config_key`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "TablePrefixCode",
    "TableIdCode",
    "RecordPrefixCode",
    "named_record",
    "offset_record",
    "rocketmq_rocksdb_config_key",
]


class TablePrefixCode(enum.IntEnum):
    """Kaitai enum table_prefix_code (enums/table_prefix_code)."""

    # Not used in keys.
    no_table_prefix = 0

    # A table record.
    table = 1


class TableIdCode(enum.IntEnum):
    """Kaitai enum table_id_code (enums/table_id_code)."""

    # Not used in keys.
    no_table = 0

    # Committed consumer offsets (`consumerOffset.json`).
    consumer_offset = 1

    # Pull offsets of the broker's own pulls.
    pull_offset = 2

    # Topic configs (`topics.json`).
    topic = 3

    # Subscription groups (`subscriptionGroup.json`).
    subscription_group = 4


class RecordPrefixCode(enum.IntEnum):
    """Kaitai enum record_prefix_code (enums/record_prefix_code)."""

    # Not used in keys.
    no_record_prefix = 0

    # The table's `DataVersion`.
    data_version = 1

    # One record of the table.
    data = 2


# The name of a topic or of a subscription group
# (`ConfigHelper.keyBufOf`).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
named_record = ka.Struct(
    # Length of the name in UTF-8 bytes.
    "len_name" / c.Int16ub,
    # The topic or group name.
    "name" / c.StringEncoded(c.Bytes(lambda this: this["len_name"]), "UTF-8"),
)


# A group, a topic and a queue id (`keyOfConsumerOffset`,
# `keyOfPullOffset`).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
offset_record = ka.Struct(
    # Length of the group name in UTF-8 bytes.
    "len_group" / c.Int16ub,
    # The consumer group.
    "group" / c.StringEncoded(c.Bytes(lambda this: this["len_group"]), "UTF-8"),
    # Separator before the topic.
    "sep_topic" / c.Const(b'\x01'),
    # Length of the topic name in UTF-8 bytes.
    "len_topic" / c.Int16ub,
    # The topic.
    "topic" / c.StringEncoded(c.Bytes(lambda this: this["len_topic"]), "UTF-8"),
    # Separator before the queue id.
    "sep_queue_id" / c.Const(b'\x01'),
    # The queue id.
    "queue_id" / c.Int32sb,
)


# A key of the single RocksDB config database `<store>/config/rdb/` that a
# broker with `configManagerVersion=v2` keeps (`ConfigStorage`, column
# family `default`). Every key starts with a table prefix, a table id and a
# record prefix. A table's `data_version` record holds a
# rocketmq_rocksdb_config_data_version; a topic or subscription-group
# record a rocketmq_rocksdb_config_record (the JSON of the config bean);
# a consumer or pull offset record a rocketmq_rocksdb_config_offset.
#
# The v1 layout (5.1.4+, `storeType=defaultRocksDB`) keeps one database per
# table instead, `config/topics/`, `config/subscriptionGroups/` and
# `config/consumerOffsets/`: the key is the UTF-8 name (the topic, the
# group, or `topic@group`) and the value the fastjson text of the bean (an
# `{"offsetTable":{...}}` wrapper for offsets); from 5.3.1 the column
# family `kvDataVersion` holds the JSON `DataVersion` under the key
# `kvDataVersionKey`, and `forbidden` the JSON forbidden map of a group
# under its name. Those keys and values have no binary layout.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v1/RocksDBTopicConfigManager.java
rocketmq_rocksdb_config_key = ka.Struct(
    # Always `TABLE` (1).
    "table_prefix" / ka.Valid(
        c.Enum(c.Int8ub, TablePrefixCode),
        (
            "eq table_prefix_code::table",
            lambda value, this: ka.enum_value(value, TablePrefixCode) == TablePrefixCode.table,
        ),
    ),
    # Which table the record belongs to.
    "table_id" / c.Enum(c.Int16ub, TableIdCode),
    # The table's data version, or one of its records.
    "record_prefix" / c.Enum(c.Int8ub, RecordPrefixCode),
    # `data_version`.
    "data_version_name" / ka.If(
        lambda this: ka.enum_value(this["record_prefix"], RecordPrefixCode) == RecordPrefixCode.data_version,
        c.StringEncoded(c.GreedyBytes, "UTF-8"),
    ),
    # A topic or a subscription group, by name.
    "named" / ka.If(
        lambda this: (
            ka.enum_value(this["record_prefix"], RecordPrefixCode) == RecordPrefixCode.data
            and (ka.enum_value(this["table_id"], TableIdCode) == TableIdCode.topic or ka.enum_value(this["table_id"], TableIdCode) == TableIdCode.subscription_group)
        ),
        named_record,
    ),
    # The offset of a group on a topic queue.
    "offset" / ka.If(
        lambda this: (
            ka.enum_value(this["record_prefix"], RecordPrefixCode) == RecordPrefixCode.data
            and (ka.enum_value(this["table_id"], TableIdCode) == TableIdCode.consumer_offset or ka.enum_value(this["table_id"], TableIdCode) == TableIdCode.pull_offset)
        ),
        offset_record,
    ),
)
