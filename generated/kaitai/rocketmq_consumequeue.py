# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqConsumequeue(KaitaiStruct):
    """One file of a consume queue, `consumequeue/<topic>/<queueId>/<name>`: the
    per-queue index that consumers read. Each 20-byte unit points at one
    message in the commit log. Unit `n` of the queue (its logical offset, the
    message's QUEUEOFFSET) is at byte `n * 20` of the queue's unit stream;
    files split that stream into pieces of `mappedFileSizeConsumeQueue` bytes
    (`mapedFileSizeConsumeQueue` before 4.5.2; default 6,000,000, i.e.
    300,000 units) and each file is named by the
    stream position of its first byte, as 20 decimal digits.
    
    Units are written in order and never change. The broker's recovery
    accepts a unit when its commit-log offset is not negative and its size is
    positive; the first unit that fails (normally the zero-filled tail of the
    newest file) ends the queue. Placeholder units `{0, 0x7fffffff, 0}` fill
    a new queue's first file up to its first real unit (`fillPreBlank`) and
    stand for no message. Head files are deleted as the commit log expires,
    so the oldest file is not always named 0 and a unit can point at a
    commit-log range that no longer exists.
    
    The layout is the same in every release from 4.0.0 to 5.3.x. Transaction
    PREPARED and ROLLBACK records are never put into a consume queue. From
    5.2.0 a broker can keep its consume queues in RocksDB instead
    (`storeType=defaultRocksDB`); those are not files of this format.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqConsumequeue, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.units = []
        i = 0
        while not self._io.is_eof():
            self.units.append(RocketmqConsumequeue.Unit(self._io, self, self._root))
            i += 1



    def _fetch_instances(self):
        pass
        for i in range(len(self.units)):
            pass
            self.units[i]._fetch_instances()


    class Unit(KaitaiStruct):
        """One consume-queue entry (`CQ_STORE_UNIT_SIZE` = 20 bytes), written by
        `ConsumeQueue.putMessagePositionInfo`.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqConsumequeue.Unit, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_commitlog = self._io.read_s8be()
            self.len_message = self._io.read_s4be()
            self.tags_code = self._io.read_s8be()


        def _fetch_instances(self):
            pass

        @property
        def is_ext_address(self):
            """True when `tags_code` is the address of a `consumequeue_ext` unit, not
            a tags hash.
            """
            if hasattr(self, '_m_is_ext_address'):
                return self._m_is_ext_address

            self._m_is_ext_address = self.tags_code <= -2147483649
            return getattr(self, '_m_is_ext_address', None)

        @property
        def is_placeholder(self):
            """A placeholder before a queue's first real unit (`fillPreBlank`); it
            stands for no message.
            """
            if hasattr(self, '_m_is_placeholder'):
                return self._m_is_placeholder

            self._m_is_placeholder =  ((self.ofs_commitlog == 0) and (self.len_message == 2147483647) and (self.tags_code == 0)) 
            return getattr(self, '_m_is_placeholder', None)

        @property
        def is_valid(self):
            """The broker's recovery test: true for a written unit (placeholders
            included), false for the zero-filled tail. The first invalid unit
            ends the queue.
            """
            if hasattr(self, '_m_is_valid'):
                return self._m_is_valid

            self._m_is_valid =  ((self.ofs_commitlog >= 0) and (self.len_message > 0)) 
            return getattr(self, '_m_is_valid', None)



