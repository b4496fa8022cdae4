# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbCqOffset(KaitaiStruct):
    """The value under a rocketmq_rocksdb_cq_offset_key of a topic queue
    (`OFFSET_VALUE_LENGTH` = 16 bytes): the commit-log offset and the logical
    offset of the queue's largest (`max`) or smallest (`min`) unit. The
    broker's `getMaxOffsetInQueue` is the `max` unit's logical offset plus 1
    (0 when the queue has no `max` key).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbCqOffset, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.offset = RocketmqRocksdbCqOffset.OffsetValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.offset._fetch_instances()

    class OffsetValue(KaitaiStruct):
        """The bound of one topic queue.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbCqOffset.OffsetValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_commitlog = self._io.read_s8be()
            self.cq_offset = self._io.read_s8be()


        def _fetch_instances(self):
            pass



