# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbConfigKey(KaitaiStruct):
    """A key of the single RocksDB config database `<store>/config/rdb/` that a
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
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v1/RocksDBTopicConfigManager.java
    """

    class RecordPrefixCode(IntEnum):
        no_record_prefix = 0
        data_version = 1
        data = 2

    class TableIdCode(IntEnum):
        no_table = 0
        consumer_offset = 1
        pull_offset = 2
        topic = 3
        subscription_group = 4

    class TablePrefixCode(IntEnum):
        no_table_prefix = 0
        table = 1
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbConfigKey, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.table_prefix = KaitaiStream.resolve_enum(RocketmqRocksdbConfigKey.TablePrefixCode, self._io.read_u1())
        if not self.table_prefix == RocketmqRocksdbConfigKey.TablePrefixCode.table:
            raise kaitaistruct.ValidationNotEqualError(RocketmqRocksdbConfigKey.TablePrefixCode.table, self.table_prefix, self._io, u"/seq/0")
        self.table_id = KaitaiStream.resolve_enum(RocketmqRocksdbConfigKey.TableIdCode, self._io.read_u2be())
        self.record_prefix = KaitaiStream.resolve_enum(RocketmqRocksdbConfigKey.RecordPrefixCode, self._io.read_u1())
        if self.record_prefix == RocketmqRocksdbConfigKey.RecordPrefixCode.data_version:
            pass
            self.data_version_name = (self._io.read_bytes_full()).decode(u"UTF-8")

        if  ((self.record_prefix == RocketmqRocksdbConfigKey.RecordPrefixCode.data) and ( ((self.table_id == RocketmqRocksdbConfigKey.TableIdCode.topic) or (self.table_id == RocketmqRocksdbConfigKey.TableIdCode.subscription_group)) )) :
            pass
            self.named = RocketmqRocksdbConfigKey.NamedRecord(self._io, self, self._root)

        if  ((self.record_prefix == RocketmqRocksdbConfigKey.RecordPrefixCode.data) and ( ((self.table_id == RocketmqRocksdbConfigKey.TableIdCode.consumer_offset) or (self.table_id == RocketmqRocksdbConfigKey.TableIdCode.pull_offset)) )) :
            pass
            self.offset = RocketmqRocksdbConfigKey.OffsetRecord(self._io, self, self._root)



    def _fetch_instances(self):
        pass
        if self.record_prefix == RocketmqRocksdbConfigKey.RecordPrefixCode.data_version:
            pass

        if  ((self.record_prefix == RocketmqRocksdbConfigKey.RecordPrefixCode.data) and ( ((self.table_id == RocketmqRocksdbConfigKey.TableIdCode.topic) or (self.table_id == RocketmqRocksdbConfigKey.TableIdCode.subscription_group)) )) :
            pass
            self.named._fetch_instances()

        if  ((self.record_prefix == RocketmqRocksdbConfigKey.RecordPrefixCode.data) and ( ((self.table_id == RocketmqRocksdbConfigKey.TableIdCode.consumer_offset) or (self.table_id == RocketmqRocksdbConfigKey.TableIdCode.pull_offset)) )) :
            pass
            self.offset._fetch_instances()


    class NamedRecord(KaitaiStruct):
        """The name of a topic or of a subscription group
        (`ConfigHelper.keyBufOf`).
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbConfigKey.NamedRecord, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_name = self._io.read_u2be()
            self.name = (self._io.read_bytes(self.len_name)).decode(u"UTF-8")


        def _fetch_instances(self):
            pass


    class OffsetRecord(KaitaiStruct):
        """A group, a topic and a queue id (`keyOfConsumerOffset`,
        `keyOfPullOffset`).
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbConfigKey.OffsetRecord, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_group = self._io.read_u2be()
            self.group = (self._io.read_bytes(self.len_group)).decode(u"UTF-8")
            self.sep_topic = self._io.read_bytes(1)
            if not self.sep_topic == b"\x01":
                raise kaitaistruct.ValidationNotEqualError(b"\x01", self.sep_topic, self._io, u"/types/offset_record/seq/2")
            self.len_topic = self._io.read_u2be()
            self.topic = (self._io.read_bytes(self.len_topic)).decode(u"UTF-8")
            self.sep_queue_id = self._io.read_bytes(1)
            if not self.sep_queue_id == b"\x01":
                raise kaitaistruct.ValidationNotEqualError(b"\x01", self.sep_queue_id, self._io, u"/types/offset_record/seq/5")
            self.queue_id = self._io.read_s4be()


        def _fetch_instances(self):
            pass



