# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqTimerWheel(KaitaiStruct):
    """The file `<store>/timerwheel` (`TimerWheel`, 5.0.0+): the slot table of
    the timer message store. Messages sent with a delivery time are indexed
    in the timer log (rocketmq_timer_log); the wheel has one slot per tick of
    `timerPrecisionMs` (1000 ms by default; 100, 200, 500 or 1000) that holds
    the ends of the linked list of timer-log units due at that tick.
    
    The wheel has `2 * slotsTotal` slots of 32 bytes, where `slotsTotal` is
    the constant `TIMER_WHEEL_TTL_DAY * DAY_SECS` = 7 * 86400 = 604800
    (`TIMER_WHELL_TTL_DAY` in 5.0.0 and 5.1.0, the same value), so
    the file is always 1,209,600 slots = 38,707,200 bytes, whatever the
    precision; a broker refuses to start when an existing non-empty file has
    another length. The slot of a delivery time `t` (ms since the epoch) is
    `(t / timerPrecisionMs) % (2 * slotsTotal)` with integer division, so the
    wheel wraps around every 14 days (at the default precision) and a slot is
    reused: it belongs to `t` only when its `time_units` equals
    `t / timerPrecisionMs`. Otherwise the broker treats it as empty. Slots
    never written are all zeros. The layout is the same from 5.0.0 to 5.3.x.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerWheel.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/Slot.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqTimerWheel, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.slots = []
        i = 0
        while not self._io.is_eof():
            self.slots.append(RocketmqTimerWheel.Slot(self._io, self, self._root))
            i += 1



    def _fetch_instances(self):
        pass
        for i in range(len(self.slots)):
            pass
            self.slots[i]._fetch_instances()


    class Slot(KaitaiStruct):
        """One wheel slot (`Slot.SIZE` = 32 bytes), written by
        `TimerWheel.putSlot`. Enqueuing a message writes all five fields;
        the recovery of the timer log rewrites only the first three, so
        `num_messages` may be left over from an earlier use of the slot.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerWheel.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTimerWheel.Slot, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.time_units = self._io.read_s8be()
            self.ofs_first = self._io.read_s8be()
            self.ofs_last = self._io.read_s8be()
            self.num_messages = self._io.read_s4be()
            self.reserved = self._io.read_s4be()


        def _fetch_instances(self):
            pass

        @property
        def is_used(self):
            """False for a slot that was never written (all zeros)."""
            if hasattr(self, '_m_is_used'):
                return self._m_is_used

            self._m_is_used = self.time_units != 0
            return getattr(self, '_m_is_used', None)



