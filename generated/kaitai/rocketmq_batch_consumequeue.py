# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqBatchConsumequeue(KaitaiStruct):
    """One file of the batch consume queue of a topic queue:
    `<store>/batchconsumequeue/<topic>/<queueId>/<20-digit start offset>`,
    used for topics whose attribute `queue.type` is `BatchCQ` (5.0.0+). The
    queue is one logical stream of 46-byte units cut into equally sized
    files (300 000 units, 13 800 000 bytes by default,
    `mapperFileSizeBatchConsumeQueue`); a file's name is the byte offset of
    its first unit in that stream, not a message offset.
    
    Each unit points at one commit-log record and covers `num_messages`
    consecutive queue offsets starting at `msg_base_offset`: 1 for a plain
    message, `INNER_NUM` for an inner-batch record whose body holds several
    messages. Units are in queue-offset order, so a queue offset is found by
    a binary search on `msg_base_offset`. The queue's minimum offset is the
    first unit's base offset and its maximum (exclusive) the last unit's
    base offset plus its message count.
    
    Files are pre-allocated, so the newest one ends in zero-filled units.
    Recovery (`BatchConsumeQueue.recover`) accepts a unit only when its
    commit-log offset and base offset are not negative and its size and
    message count are positive; the first other unit ends the queue, and the
    sequence below stops there. The same 46-byte unit is used by the
    compaction consume queue (`SparseConsumeQueue`, 5.1.0+), which closes a
    file early with an end-of-file unit: commit-log offset -1, size 0,
    tags 0, time 0, base 0, count 0, compacted offset -1, reserved 0
    (`putEndPositionInfo`); recovery rejects it like the zero tail. All
    integers are big-endian and signed, as Java writes them.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/SparseConsumeQueue.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqBatchConsumequeue, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.units = []
        i = 0
        while True:
            _ = RocketmqBatchConsumequeue.Unit(self._io, self, self._root)
            self.units.append(_)
            if  (((not (_.is_accepted))) or (self._io.is_eof())) :
                break
            i += 1


    def _fetch_instances(self):
        pass
        for i in range(len(self.units)):
            pass
            self.units[i]._fetch_instances()


    class Unit(KaitaiStruct):
        """One 46-byte unit, in the order `putBatchMessagePositionInfo` writes
        it (`CQ_STORE_UNIT_SIZE`).
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqBatchConsumequeue.Unit, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_commitlog = self._io.read_s8be()
            self.len_message = self._io.read_s4be()
            self.tags_code = self._io.read_s8be()
            self.store_timestamp = self._io.read_s8be()
            self.msg_base_offset = self._io.read_s8be()
            self.num_messages = self._io.read_s2be()
            self.compacted_offset = self._io.read_s4be()
            self.reserved = self._io.read_s4be()


        def _fetch_instances(self):
            pass

        @property
        def is_accepted(self):
            """Whether recovery keeps this unit; the first unit it rejects ends the
            queue.
            """
            if hasattr(self, '_m_is_accepted'):
                return self._m_is_accepted

            self._m_is_accepted =  ((self.ofs_commitlog >= 0) and (self.len_message > 0) and (self.msg_base_offset >= 0) and (self.num_messages > 0)) 
            return getattr(self, '_m_is_accepted', None)

        @property
        def is_end_of_file(self):
            """The end-of-file unit of a compaction consume queue (5.1.0+
            `SparseConsumeQueue`).
            """
            if hasattr(self, '_m_is_end_of_file'):
                return self._m_is_end_of_file

            self._m_is_end_of_file =  ((self.ofs_commitlog == -1) and (self.len_message == 0) and (self.num_messages == 0) and (self.compacted_offset == -1)) 
            return getattr(self, '_m_is_end_of_file', None)

        @property
        def msg_end_offset(self):
            """Queue offset after the last message of the record."""
            if hasattr(self, '_m_msg_end_offset'):
                return self._m_msg_end_offset

            self._m_msg_end_offset = (self.msg_base_offset + self.num_messages)
            return getattr(self, '_m_msg_end_offset', None)



