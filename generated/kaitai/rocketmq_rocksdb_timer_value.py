# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbTimerValue(KaitaiStruct):
    """The value of one scheduled message in the `timer` column family of the
    RocksDB message store (`TimerRocksDBRecord.VALUE_LENGTH` = 12 bytes),
    under a rocketmq_rocksdb_timer_key: where the message waits in the commit
    log. Note the order: the size comes before the offset, unlike a
    consume-queue unit.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbTimerValue, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.timer = RocketmqRocksdbTimerValue.TimerValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.timer._fetch_instances()

    class TimerValue(KaitaiStruct):
        """One value as `TimerRocksDBRecord.getValueBytes` writes it.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbTimerValue.TimerValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_message = self._io.read_s4be()
            self.ofs_commitlog = self._io.read_s8be()


        def _fetch_instances(self):
            pass



