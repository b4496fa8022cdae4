# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbConfigRecord(KaitaiStruct):
    """The value of a topic or subscription-group key of `config/rdb/` (see
    rocketmq_rocksdb_config_key): a serialization type and the serialized
    bean. Only JSON (fastjson2 `JSON.toJSONBytes` of `TopicConfig` or
    `SubscriptionGroupConfig`) is written.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
    """

    class SerializationTypeCode(IntEnum):
        unspecified = 0
        json = 1
        protobuf = 2
        flat_buffers = 3
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbConfigRecord, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.serialization_type = KaitaiStream.resolve_enum(RocketmqRocksdbConfigRecord.SerializationTypeCode, self._io.read_u1())
        self.payload = self._io.read_bytes_full()


    def _fetch_instances(self):
        pass


