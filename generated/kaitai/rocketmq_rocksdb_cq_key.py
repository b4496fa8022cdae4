# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbCqKey(KaitaiStruct):
    """The key of one consume-queue unit in the `default` column family of the
    RocksDB database that a broker with `storeType=defaultRocksDB` keeps in
    `<store>/consumequeue/` (`RocksDBConsumeQueueTable`). One key per message
    of a topic queue; its value is a rocketmq_rocksdb_cq_unit.
    
    RocksDB sorts keys bytewise, so the units of one topic queue are
    contiguous and in the order of their logical offsets (the big-endian
    `cq_offset` at the end of the key). Deleting a queue removes the key range
    from the same prefix ending in 0x00 up to the one ending in 0x02
    (`CTRL_0`, `CTRL_2`).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueTable.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/common/src/main/java/org/apache/rocketmq/common/config/AbstractRocksDBStorage.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbCqKey, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.len_topic = self._io.read_s4be()
        if not self.len_topic >= 1:
            raise kaitaistruct.ValidationLessThanError(1, self.len_topic, self._io, u"/seq/0")
        if not self.len_topic <= 255:
            raise kaitaistruct.ValidationGreaterThanError(255, self.len_topic, self._io, u"/seq/0")
        self.sep_topic = self._io.read_bytes(1)
        if not self.sep_topic == b"\x01":
            raise kaitaistruct.ValidationNotEqualError(b"\x01", self.sep_topic, self._io, u"/seq/1")
        self.topic = (self._io.read_bytes(self.len_topic)).decode(u"UTF-8")
        self.sep_queue_id = self._io.read_bytes(1)
        if not self.sep_queue_id == b"\x01":
            raise kaitaistruct.ValidationNotEqualError(b"\x01", self.sep_queue_id, self._io, u"/seq/3")
        self.queue_id = self._io.read_s4be()
        self.sep_cq_offset = self._io.read_bytes(1)
        if not self.sep_cq_offset == b"\x01":
            raise kaitaistruct.ValidationNotEqualError(b"\x01", self.sep_cq_offset, self._io, u"/seq/5")
        self.cq_offset = self._io.read_s8be()


    def _fetch_instances(self):
        pass


