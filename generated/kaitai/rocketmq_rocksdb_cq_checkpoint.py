# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbCqCheckpoint(KaitaiStruct):
    """The value under the `offset` column family key of the pseudo-topic
    `CHECKPOINT_TOPIC` (see rocketmq_rocksdb_cq_offset_key): the commit-log
    offset up to which messages have been dispatched into the RocksDB
    consume queue, written with every dispatched batch. After an unclean
    shutdown the broker's recovery compares commit-log positions with it.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbCqCheckpoint, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.checkpoint = RocketmqRocksdbCqCheckpoint.CheckpointValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.checkpoint._fetch_instances()

    class CheckpointValue(KaitaiStruct):
        """The dispatch position.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbCqCheckpoint.CheckpointValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_max_phy = self._io.read_s8be()


        def _fetch_instances(self):
            pass



