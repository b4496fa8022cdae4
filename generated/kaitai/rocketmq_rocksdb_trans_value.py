# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbTransValue(KaitaiStruct):
    """The value of one open transactional message in the `trans` column family
    of the RocksDB message store (`TransRocksDBRecord.VALUE_LENGTH` = 8
    bytes), under a rocketmq_rocksdb_trans_key.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbTransValue, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.trans = RocketmqRocksdbTransValue.TransValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.trans._fetch_instances()

    class TransValue(KaitaiStruct):
        """One value as `TransRocksDBRecord.getValueBytes` writes it.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbTransValue.TransValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.check_times = self._io.read_s4be()
            self.len_message = self._io.read_s4be()


        def _fetch_instances(self):
            pass



