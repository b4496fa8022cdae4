# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqTimerCheck(KaitaiStruct):
    """The file `<store>/config/timercheck` (`TimerCheckpoint`, 5.0.0+): the
    progress of the timer message store (the timer wheel and timer log kept
    for messages sent with a delivery time, see rocketmq_timer_log and
    rocketmq_timer_wheel). Despite its folder it is binary, not JSON: the
    broker maps one 4096-byte page of the file and rewrites the fields in
    place on every timer flush and on shutdown; the bytes after them stay
    zero. The layout is the same from 5.0.0 to 5.3.x.
    
    On start the timer store recovers the timer log from one segment before
    `ofs_last_timer_log_flush`, resumes reading the timer topic's queue near
    `last_timer_queue_offset` and resumes delivery at `last_read_time_ms`
    (but not earlier than the wheel can hold).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerCheckpoint.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/broker/src/main/java/org/apache/rocketmq/broker/BrokerPathConfigHelper.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqTimerCheck, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.last_read_time_ms = self._io.read_s8be()
        self.ofs_last_timer_log_flush = self._io.read_s8be()
        self.last_timer_queue_offset = self._io.read_s8be()
        self.master_timer_queue_offset = self._io.read_s8be()
        self.data_version = RocketmqTimerCheck.TimerDataVersion(self._io, self, self._root)
        self.reserved = self._io.read_bytes_full()


    def _fetch_instances(self):
        pass
        self.data_version._fetch_instances()

    class TimerDataVersion(KaitaiStruct):
        """A `DataVersion` (the version stamp the broker's JSON config files also
        carry), stored as three longs.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/remoting/src/main/java/org/apache/rocketmq/remoting/protocol/DataVersion.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTimerCheck.TimerDataVersion, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.state_version = self._io.read_s8be()
            self.timestamp = self._io.read_s8be()
            self.counter = self._io.read_s8be()


        def _fetch_instances(self):
            pass



