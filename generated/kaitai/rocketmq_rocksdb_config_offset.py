# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbConfigOffset(KaitaiStruct):
    """The value of a consumer-offset or pull-offset key in `config/rdb/` (see
    rocketmq_rocksdb_config_key): the next logical offset the group will
    consume from the queue (`ConsumerOffsetManagerV2.commitOffset`).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbConfigOffset, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.offset = RocketmqRocksdbConfigOffset.OffsetValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.offset._fetch_instances()

    class OffsetValue(KaitaiStruct):
        """A committed offset.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConsumerOffsetManagerV2.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbConfigOffset.OffsetValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.offset = self._io.read_s8be()


        def _fetch_instances(self):
            pass



