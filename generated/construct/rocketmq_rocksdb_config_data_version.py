# Generated from formats/rocketmq_rocksdb_config_data_version.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB config data version (v2 layout): construct schema generated from formats/rocketmq_rocksdb_config_data_version.ksy.

``rocketmq_rocksdb_config_data_version`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "data_version_value",
    "rocketmq_rocksdb_config_data_version",
]


# A `DataVersion`.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
data_version_value = ka.Struct(
    # The state machine version.
    "state_version" / c.Int64sb,
    # Time of the last change, in milliseconds since the Unix epoch.
    "timestamp" / c.Int64sb,
    # Number of changes.
    "counter" / c.Int64sb,
)


# The value of a table's `data_version` key in `config/rdb/` (see
# rocketmq_rocksdb_config_key): the table's `DataVersion` as three longs
# (`ConfigHelper.stampDataVersion`). A value of any other length is
# ignored by the broker (`onDataVersionLoad`).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
rocketmq_rocksdb_config_data_version = ka.Struct(
    # The 24 bytes of the value.
    "data_version" / data_version_value,
)
