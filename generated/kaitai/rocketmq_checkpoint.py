# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqCheckpoint(KaitaiStruct):
    """The file `<store>/checkpoint` (`StoreCheckpoint`): how far the broker had
    flushed the commit log, the consume queues and the index when it last
    wrote this file. The broker maps one 4096-byte page of the file
    (`OS_PAGE_SIZE`), so the file is 4096 bytes long. It rewrites the fields
    in place after each complete consume-queue flush and each index-file
    flush, once a second in 5.x, and on shutdown; it never writes the bytes
    after them, which stay zero.
    
    What each release writes:
    
    * 4.0.0 to 4.9.x: the three timestamps (bytes 0 to 23). A file created by
      these releases has zeros at bytes 24 to 39; a 4.x broker running on a
      file written by 5.x leaves whatever is there.
    * 5.0.0 to 5.1.0: also `masterFlushedOffset` (bytes 24 to 31).
    * 5.1.1 and later: also `confirmPhyOffset` (bytes 32 to 39).
    
    The timestamps are milliseconds since the Unix epoch. They are flush
    marks, not "last message" times: `physicMsgTimestamp` is the store time
    of the message at the flush position when a flush started, so it is
    normally older than the newest messages even after a clean shutdown.
    When a broker restarts after an unclean shutdown (an `abort` file is in
    the store root), its recovery uses them to choose where to start: it
    walks the commit-log segments back from the newest and starts at the
    first whose first message was stored no later than `min_timestamp`
    (`min_timestamp_index` when `messageIndexSafe` is set).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.1/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.0.0/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqCheckpoint, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.physic_msg_timestamp = self._io.read_s8be()
        self.logics_msg_timestamp = self._io.read_s8be()
        self.index_msg_timestamp = self._io.read_s8be()
        self.ofs_master_flushed = self._io.read_s8be()
        self.ofs_confirm_phy = self._io.read_s8be()
        self.reserved = self._io.read_bytes_full()


    def _fetch_instances(self):
        pass

    @property
    def min_flush_timestamp(self):
        """The older of the commit-log and consume-queue timestamps."""
        if hasattr(self, '_m_min_flush_timestamp'):
            return self._m_min_flush_timestamp

        self._m_min_flush_timestamp = (self.physic_msg_timestamp if self.physic_msg_timestamp < self.logics_msg_timestamp else self.logics_msg_timestamp)
        return getattr(self, '_m_min_flush_timestamp', None)

    @property
    def min_timestamp(self):
        """`StoreCheckpoint.getMinTimestamp`: the older of the commit-log and
        consume-queue timestamps, minus 3 seconds, not below 0. Abnormal
        recovery starts at the newest commit-log segment whose first message
        was stored at or before this time.
        """
        if hasattr(self, '_m_min_timestamp'):
            return self._m_min_timestamp

        self._m_min_timestamp = ((self.min_flush_timestamp - 3000) if self.min_flush_timestamp >= 3000 else 0)
        return getattr(self, '_m_min_timestamp', None)

    @property
    def min_timestamp_index(self):
        """`StoreCheckpoint.getMinTimestampIndex`: `min_timestamp`, or the index
        timestamp when older; the recovery start time with `messageIndexSafe`.
        """
        if hasattr(self, '_m_min_timestamp_index'):
            return self._m_min_timestamp_index

        self._m_min_timestamp_index = (self.min_timestamp if self.min_timestamp < self.index_msg_timestamp else self.index_msg_timestamp)
        return getattr(self, '_m_min_timestamp_index', None)


