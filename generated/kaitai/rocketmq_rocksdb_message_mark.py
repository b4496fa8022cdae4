# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbMessageMark(KaitaiStruct):
    """The value of a progress key of the RocksDB message store
    (`MessageRocksDBStorage`): 8 bytes, one big-endian long. The keys are
    ASCII names: in the `timer` column family `sys_topic_scan_offset_checkpoint`
    (`SYS_TOPIC_SCAN_OFFSET_CHECK_POINT`: the consume-queue offset of
    `rmq_sys_wheel_timer` the timer engine has read up to) and
    `timeline_checkpoint` (`TIMELINE_CHECK_POINT`: the delivery time, in
    milliseconds, it has delivered up to); in the `trans` and `default`
    column families `lastOffsetPy` (`LAST_OFFSET_PY`: the largest commit-log
    offset written), and in `default` also `lastStoreTimeStamp`
    (`LAST_STORE_TIMESTAMP`: the newest store time indexed).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbMessageMark, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.mark = RocketmqRocksdbMessageMark.MarkValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.mark._fetch_instances()

    class MarkValue(KaitaiStruct):
        """One progress value as the broker writes it.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbMessageMark.MarkValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.position = self._io.read_s8be()


        def _fetch_instances(self):
            pass



