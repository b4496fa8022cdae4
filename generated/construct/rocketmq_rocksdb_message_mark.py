# Generated from formats/rocketmq_rocksdb_message_mark.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ RocksDB message store progress mark: construct schema generated from formats/rocketmq_rocksdb_message_mark.ksy.

``rocketmq_rocksdb_message_mark`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "mark_value",
    "rocketmq_rocksdb_message_mark",
]


# One progress value as the broker writes it.
# See: https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
mark_value = ka.Struct(
    # The offset or time the key names.
    "position" / c.Int64sb,
)


# The value of a progress key of the RocksDB message store
# (`MessageRocksDBStorage`): 8 bytes, one big-endian long. The keys are
# ASCII names: in the `timer` column family `sys_topic_scan_offset_checkpoint`
# (`SYS_TOPIC_SCAN_OFFSET_CHECK_POINT`: the consume-queue offset of
# `rmq_sys_wheel_timer` the timer engine has read up to) and
# `timeline_checkpoint` (`TIMELINE_CHECK_POINT`: the delivery time, in
# milliseconds, it has delivered up to); in the `trans` and `default`
# column families `lastOffsetPy` (`LAST_OFFSET_PY`: the largest commit-log
# offset written), and in `default` also `lastStoreTimeStamp`
# (`LAST_STORE_TIMESTAMP`: the newest store time indexed).
# See: https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
rocketmq_rocksdb_message_mark = ka.Struct(
    # The 8 bytes of the value.
    "mark" / mark_value,
)
