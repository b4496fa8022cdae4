# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbIndexValue(KaitaiStruct):
    """The value of one message index entry in the `default` column family of
    the RocksDB message store (8 bytes), under a rocketmq_rocksdb_index_key:
    the exact store time, which queries compare with their time range.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbIndexValue, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.entry = RocketmqRocksdbIndexValue.IndexValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.entry._fetch_instances()

    class IndexValue(KaitaiStruct):
        """One value as `IndexRocksDBRecord.getValueBytes` writes it.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbIndexValue.IndexValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.store_timestamp = self._io.read_s8be()


        def _fetch_instances(self):
            pass



