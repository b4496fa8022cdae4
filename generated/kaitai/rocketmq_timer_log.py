# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqTimerLog(KaitaiStruct):
    """One segment of the timer log, `<store>/timerlog/<20-digit start offset>`
    (`TimerLog`, 5.0.0+). A message sent with a delivery time is first stored
    in the commit log under the topic `rmq_sys_wheel_timer`; the timer store
    then appends a 52-byte unit here that points at that record, and links
    the unit into the slot of the timer wheel (rocketmq_timer_wheel) for its
    due time. When the slot comes due the broker walks the slot's list back
    from the wheel's `ofs_last` through each unit's `ofs_prev` and delivers
    (or re-enqueues, or cancels) the messages.
    
    Like the commit log, the timer log is one logical byte stream cut into
    equally sized segments (`mappedFileSizeTimerLog`, 100 MiB by default),
    each named by the offset of its first byte as 20 decimal digits; unit
    offsets (`ofs_prev`, the wheel's `ofs_first` and `ofs_last`) are offsets
    in that stream. Units are at multiples of 52 bytes in a segment. When a
    unit and a 16-byte blank would not both fit in the rest of a segment, the
    broker writes a blank marker instead (size = bytes left in the segment,
    then 8 zero bytes, then the commit log's BLANK magic code) and continues
    in the next segment; with the default segment size the blank takes
    exactly the last 16 bytes. Segments are pre-allocated, so the newest one
    ends in a zero-filled tail. Expired segments are deleted from the head.
    
    The sequence below stops at the first entry that is not a unit: the blank
    marker or the zero-filled tail. This is where the broker's recovery
    (`TimerMessageStore.recoverAndRevise`) stops: it accepts an entry as a
    unit when its size is 52 and its magic has no bit above the four low ones
    (`(magic | 0xf) == 0xf`), goes on in the next segment after a blank, and
    truncates the timer log at the first other entry. Brokers only write the
    magic values listed in `unit_magic`.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
    """

    class MagicFlag(IntEnum):
        enqueue_bit = 1
        roll_bit = 2
        delete_bit = 4

    class UnitMagic(IntEnum):
        blank = -875286124
        zero_fill = 0
        enqueue = 1
        roll = 3
        delete = 5
        roll_delete = 7
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqTimerLog, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.units = []
        i = 0
        while True:
            _ = RocketmqTimerLog.Unit(self._io, self, self._root)
            self.units.append(_)
            if  (((not (_.is_unit))) or (self._io.is_eof())) :
                break
            i += 1


    def _fetch_instances(self):
        pass
        for i in range(len(self.units)):
            pass
            self.units[i]._fetch_instances()


    class Unit(KaitaiStruct):
        """One timer-log entry: a 52-byte unit (`UNIT_SIZE`), as
        `TimerMessageStore.doEnqueue` writes it, or the blank marker that ends
        a segment, or the start of the zero-filled tail. All three start with
        the same 16-byte header.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTimerLog.Unit, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_unit = self._io.read_s4be()
            self.ofs_prev = self._io.read_s8be()
            self.magic = KaitaiStream.resolve_enum(RocketmqTimerLog.UnitMagic, self._io.read_s4be())
            if not isinstance(self.magic, RocketmqTimerLog.UnitMagic):
                raise kaitaistruct.ValidationNotInEnumError(self.magic, self._io, u"/types/unit/seq/2")
            if self.is_unit:
                pass
                self.body = RocketmqTimerLog.UnitBody(self._io, self, self._root)



        def _fetch_instances(self):
            pass
            if self.is_unit:
                pass
                self.body._fetch_instances()


        @property
        def is_delete(self):
            """The unit cancels a timer message (`delete` and `roll_delete`)."""
            if hasattr(self, '_m_is_delete'):
                return self._m_is_delete

            self._m_is_delete =  ((self.is_unit) and (int(self.magic) & int(RocketmqTimerLog.MagicFlag.delete_bit) != 0)) 
            return getattr(self, '_m_is_delete', None)

        @property
        def is_roll(self):
            """The unit only moves its message closer to the delivery time
            (`roll` and `roll_delete`).
            """
            if hasattr(self, '_m_is_roll'):
                return self._m_is_roll

            self._m_is_roll =  ((self.is_unit) and (int(self.magic) & int(RocketmqTimerLog.MagicFlag.roll_bit) != 0)) 
            return getattr(self, '_m_is_roll', None)

        @property
        def is_unit(self):
            """True for a unit, false for the blank marker and the zero-filled tail.
            """
            if hasattr(self, '_m_is_unit'):
                return self._m_is_unit

            self._m_is_unit =  ((self.magic != RocketmqTimerLog.UnitMagic.blank) and (self.magic != RocketmqTimerLog.UnitMagic.zero_fill)) 
            return getattr(self, '_m_is_unit', None)

        @property
        def len_padding(self):
            """Bytes after the 16-byte blank marker up to the end of the segment
            (0 with the default segment size); never written, so zero.
            """
            if hasattr(self, '_m_len_padding'):
                return self._m_len_padding

            self._m_len_padding = ((self.len_unit - 16) if self.magic == RocketmqTimerLog.UnitMagic.blank else 0)
            return getattr(self, '_m_len_padding', None)


    class UnitBody(KaitaiStruct):
        """The fields of a unit after its 16-byte header.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTimerLog.UnitBody, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.curr_write_time_ms = self._io.read_s8be()
            self.delay_ms = self._io.read_s4be()
            self.ofs_commitlog = self._io.read_s8be()
            self.len_message = self._io.read_s4be()
            self.topic_hash = self._io.read_s4be()
            self.reserved = self._io.read_s8be()


        def _fetch_instances(self):
            pass

        @property
        def delayed_time_ms(self):
            """The due time in ms since the epoch: the wheel slot this unit is
            linked into is the one for this time.
            """
            if hasattr(self, '_m_delayed_time_ms'):
                return self._m_delayed_time_ms

            self._m_delayed_time_ms = (self.curr_write_time_ms + self.delay_ms)
            return getattr(self, '_m_delayed_time_ms', None)



