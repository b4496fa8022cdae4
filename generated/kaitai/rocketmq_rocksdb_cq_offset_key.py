# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbCqOffsetKey(KaitaiStruct):
    """A key of the `offset` column family of the RocksDB consume queue
    (`RocksDBConsumeQueueOffsetTable`): the smallest or the largest unit of a
    topic queue, with a rocketmq_rocksdb_cq_offset value. The `max` key is
    written with every dispatched batch; the `min` key only when the broker
    first corrects a queue's minimum offset (`getMinOffsetInQueue`), so it is
    often absent.
    
    The same layout with the pseudo-topic `CHECKPOINT_TOPIC`, `max` and queue
    0 is the dispatch checkpoint, whose value is a
    rocketmq_rocksdb_cq_checkpoint (8 bytes) instead.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/RocksDBConsumeQueueOffsetTable.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbCqOffsetKey, self).__init__(_io)
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
        self.sep_bound = self._io.read_bytes(1)
        if not self.sep_bound == b"\x01":
            raise kaitaistruct.ValidationNotEqualError(b"\x01", self.sep_bound, self._io, u"/seq/3")
        self.bound = (self._io.read_bytes(3)).decode(u"UTF-8")
        if not  ((self.bound == u"max") or (self.bound == u"min")) :
            raise kaitaistruct.ValidationNotAnyOfError(self.bound, self._io, u"/seq/4")
        self.sep_queue_id = self._io.read_bytes(1)
        if not self.sep_queue_id == b"\x01":
            raise kaitaistruct.ValidationNotEqualError(b"\x01", self.sep_queue_id, self._io, u"/seq/5")
        self.queue_id = self._io.read_s4be()


    def _fetch_instances(self):
        pass

    @property
    def is_checkpoint(self):
        """The dispatch checkpoint (`TopicValidator.RMQ_SYS_ROCKSDB_OFFSET_TOPIC`)
        rather than a topic queue.
        """
        if hasattr(self, '_m_is_checkpoint'):
            return self._m_is_checkpoint

        self._m_is_checkpoint = self.topic == u"CHECKPOINT_TOPIC"
        return getattr(self, '_m_is_checkpoint', None)

    @property
    def is_max(self):
        """The key of the queue's largest unit."""
        if hasattr(self, '_m_is_max'):
            return self._m_is_max

        self._m_is_max = self.bound == u"max"
        return getattr(self, '_m_is_max', None)


