# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqConsumequeueExt(KaitaiStruct):
    """One file of the consume queue extension of a topic queue:
    `<store>/consumequeue_ext/<topic>/<queueId>/<20-digit start offset>`,
    written only when the broker runs with `enableConsumeQueueExt=true`.
    It keeps what does not fit in a 20-byte consume-queue unit: the real
    tags hash, the store time and the bloom-filter bitmap that SQL92
    filtering checks. Like the other mapped file queues it is one logical
    byte stream cut into equally sized files (48 MiB by default,
    `mappedFileSizeConsumeQueueExt`); a file's name is the stream offset of
    its first byte.
    
    A file is a sequence of length-prefixed units of 20 bytes plus the
    bitmap. A unit never crosses the end of a file: when the next one does
    not fit in the space left minus 4 bytes (`END_BLANK_DATA_LENGTH`), the
    broker writes the 2-byte size -1 as an end-of-file marker and continues
    in the next file. Files are pre-allocated, so the newest one ends in a
    zero-filled tail that reads as a unit of size 0. Readers
    (`ConsumeQueueExt.recover`, `CqExtUnit.read`) treat any size below 1 as
    the end of the file's data; the sequence below stops there.
    
    Address encoding. When a unit is written, the consume-queue unit of the
    same message gets, instead of the tags hash, the unit's stream offset
    plus `Long.MIN_VALUE` (`ConsumeQueueExt.decorate`): a negative 64-bit
    value. A consume-queue tagsCode is such an address when it is at most
    `MAX_ADDR` = `Integer.MIN_VALUE - 1` = -2147483649, and the stream
    offset is then `tagsCode - Long.MIN_VALUE` (`unDecorate`). Tags hashes
    are sign-extended 32-bit ints and delay delivery times are positive,
    so the ranges never overlap. The stream offset selects the file
    (the one whose start offset is at most the stream offset) and the
    position in it (the offset modulo the file size). All integers are
    big-endian and signed, as Java writes them.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqConsumequeueExt, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.units = []
        i = 0
        while True:
            _ = RocketmqConsumequeueExt.Unit(self._io, self, self._root)
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
        """One `CqExtUnit`, or the 2-byte end-of-file marker, or the start of
        the zero-filled tail.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqConsumequeueExt.Unit, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_unit = self._io.read_s2be()
            if self.is_unit:
                pass
                self._raw_body = self._io.read_bytes(self.len_unit - 2)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = RocketmqConsumequeueExt.UnitBody(_io__raw_body, self, self._root)



        def _fetch_instances(self):
            pass
            if self.is_unit:
                pass
                self.body._fetch_instances()


        @property
        def is_end_marker(self):
            """The marker written when the next unit did not fit (`fullFillToEnd`).
            """
            if hasattr(self, '_m_is_end_marker'):
                return self._m_is_end_marker

            self._m_is_end_marker = self.len_unit == -1
            return getattr(self, '_m_is_end_marker', None)

        @property
        def is_unit(self):
            """True for a unit, false for the end-of-file marker and the zero-filled
            tail.
            """
            if hasattr(self, '_m_is_unit'):
                return self._m_is_unit

            self._m_is_unit = self.len_unit > 0
            return getattr(self, '_m_is_unit', None)


    class UnitBody(KaitaiStruct):
        """The fields of a unit after its size, in the order `CqExtUnit.write` puts
        them.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqConsumequeueExt.UnitBody, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.tags_code = self._io.read_s8be()
            self.msg_store_time = self._io.read_s8be()
            self.len_filter_bit_map = self._io.read_s2be()
            if not self.len_filter_bit_map >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.len_filter_bit_map, self._io, u"/types/unit_body/seq/2")
            self.filter_bit_map = self._io.read_bytes(self.len_filter_bit_map)


        def _fetch_instances(self):
            pass

        @property
        def len_unit_computed(self):
            """The unit size the writer derives from the bitmap; `len_unit` must
            equal it.
            """
            if hasattr(self, '_m_len_unit_computed'):
                return self._m_len_unit_computed

            self._m_len_unit_computed = 20 + self.len_filter_bit_map
            return getattr(self, '_m_len_unit_computed', None)



