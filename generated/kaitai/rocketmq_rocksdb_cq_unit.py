# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbCqUnit(KaitaiStruct):
    """The value of one consume-queue unit in the `default` column family of the
    RocksDB consume queue (`RocksDBConsumeQueueTable.CQ_UNIT_SIZE` = 28
    bytes), under a rocketmq_rocksdb_cq_key. The first three fields are those
    of a file consume-queue unit (rocketmq_consumequeue); the store time is
    new. There are no placeholder units: a key exists only for a message.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbCqUnit, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.unit = RocketmqRocksdbCqUnit.UnitValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.unit._fetch_instances()

    class UnitValue(KaitaiStruct):
        """One unit as `RocksDBConsumeQueueTable.buildCQValueByteBuffer` writes
        it for a dispatched message.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbCqUnit.UnitValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_commitlog = self._io.read_s8be()
            self.len_message = self._io.read_s4be()
            self.tags_code = self._io.read_s8be()
            self.store_timestamp = self._io.read_s8be()


        def _fetch_instances(self):
            pass



