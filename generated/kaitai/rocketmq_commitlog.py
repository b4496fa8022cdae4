# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqCommitlog(KaitaiStruct):
    """One segment of an Apache RocketMQ broker commit log: the file
    `<store>/commitlog/<20-digit start offset>` that holds every message of
    every topic in arrival order. The commit log is one logical byte stream cut
    into equally sized segments (1 GiB by default, `mappedFileSizeCommitLog`,
    spelled `mapedFileSizeCommitLog` before 4.5.2);
    a segment's file name is the decimal commit-log offset of its first byte,
    and the commit-log offset of a record is that number plus the record's
    position in the file.
    
    A segment is a sequence of length-prefixed records. A message record
    starts with its total size and the magic code of its version: V1
    (`0xdaa320a7`, all releases) has a 1-byte topic length, V2 (`0xdaa320ab`,
    5.1.0+, written when a topic is longer than 127 characters) a 2-byte one.
    A record never crosses the end of a segment: when the next message does
    not fit, the broker writes a BLANK record (magic `0xcbd43194`) whose size
    covers the rest of the segment, and only its first 8 bytes are
    meaningful. Segments are pre-allocated, so the newest one ends in a
    zero-filled tail that reads as a record of size 0 and magic 0.
    
    The sequence below stops at the first record that is not a message: a
    BLANK record (the rest of the segment is padding) or the zero-filled
    tail. This is where the broker's recovery (`CommitLog.recoverNormally`)
    stops reading a segment. All integers are big-endian and signed, as
    Java writes them.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/MessageExtEncoder.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
    """

    class CompressionType(IntEnum):
        unspecified = 0
        lz4 = 1
        zstd = 2
        zlib = 3

    class MagicCode(IntEnum):
        blank = -875286124
        message_v1 = -626843481
        message_v2 = -626843477
        zero_fill = 0

    class TransactionType(IntEnum):
        not_type = 0
        prepared = 1
        commit = 2
        rollback = 3
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqCommitlog, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.records = []
        i = 0
        while True:
            _ = RocketmqCommitlog.Record(self._io, self, self._root)
            self.records.append(_)
            if  (((not (_.is_message))) or (self._io.is_eof())) :
                break
            i += 1


    def _fetch_instances(self):
        pass
        for i in range(len(self.records)):
            pass
            self.records[i]._fetch_instances()


    class HostV4(KaitaiStruct):
        """An IPv4 socket address as `MessageExt.socketAddress2ByteBuffer` writes
        it: the 4 address bytes in network order, then the port as a 4-byte
        int (8 bytes).
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageExt.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqCommitlog.HostV4, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.address = self._io.read_bytes(4)
            self.port = self._io.read_s4be()


        def _fetch_instances(self):
            pass

        @property
        def address_text(self):
            """The address in dotted decimal."""
            if hasattr(self, '_m_address_text'):
                return self._m_address_text

            self._m_address_text = (((((str(KaitaiStream.byte_array_index(self.address, 0) & 255) + u".") + str(KaitaiStream.byte_array_index(self.address, 1) & 255)) + u".") + str(KaitaiStream.byte_array_index(self.address, 2) & 255)) + u".") + str(KaitaiStream.byte_array_index(self.address, 3) & 255)
            return getattr(self, '_m_address_text', None)

        @property
        def len_address(self):
            """Width of the address bytes."""
            if hasattr(self, '_m_len_address'):
                return self._m_len_address

            self._m_len_address = 4
            return getattr(self, '_m_len_address', None)


    class HostV6(KaitaiStruct):
        """An IPv6 socket address as `MessageExt.socketAddress2ByteBuffer` writes
        it: the 16 address bytes in network order, then the port as a 4-byte
        int (20 bytes).
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageExt.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqCommitlog.HostV6, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.address = self._io.read_bytes(16)
            self.port = self._io.read_s4be()


        def _fetch_instances(self):
            pass

        @property
        def address_text(self):
            """The address as eight groups of four hex digits
            (`2001:0db8:0000:...`).
            """
            if hasattr(self, '_m_address_text'):
                return self._m_address_text

            self._m_address_text = self.ipv6_text
            return getattr(self, '_m_address_text', None)

        @property
        def ipv6_group_0(self):
            """Bytes 0 and 1 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_0'):
                return self._m_ipv6_group_0

            self._m_ipv6_group_0 = (((str(self.nibble_0) if self.nibble_0 < 10 else (u"a" if self.nibble_0 == 10 else (u"b" if self.nibble_0 == 11 else (u"c" if self.nibble_0 == 12 else (u"d" if self.nibble_0 == 13 else (u"e" if self.nibble_0 == 14 else u"f")))))) + (str(self.nibble_1) if self.nibble_1 < 10 else (u"a" if self.nibble_1 == 10 else (u"b" if self.nibble_1 == 11 else (u"c" if self.nibble_1 == 12 else (u"d" if self.nibble_1 == 13 else (u"e" if self.nibble_1 == 14 else u"f"))))))) + (str(self.nibble_2) if self.nibble_2 < 10 else (u"a" if self.nibble_2 == 10 else (u"b" if self.nibble_2 == 11 else (u"c" if self.nibble_2 == 12 else (u"d" if self.nibble_2 == 13 else (u"e" if self.nibble_2 == 14 else u"f"))))))) + (str(self.nibble_3) if self.nibble_3 < 10 else (u"a" if self.nibble_3 == 10 else (u"b" if self.nibble_3 == 11 else (u"c" if self.nibble_3 == 12 else (u"d" if self.nibble_3 == 13 else (u"e" if self.nibble_3 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_0', None)

        @property
        def ipv6_group_1(self):
            """Bytes 2 and 3 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_1'):
                return self._m_ipv6_group_1

            self._m_ipv6_group_1 = (((str(self.nibble_4) if self.nibble_4 < 10 else (u"a" if self.nibble_4 == 10 else (u"b" if self.nibble_4 == 11 else (u"c" if self.nibble_4 == 12 else (u"d" if self.nibble_4 == 13 else (u"e" if self.nibble_4 == 14 else u"f")))))) + (str(self.nibble_5) if self.nibble_5 < 10 else (u"a" if self.nibble_5 == 10 else (u"b" if self.nibble_5 == 11 else (u"c" if self.nibble_5 == 12 else (u"d" if self.nibble_5 == 13 else (u"e" if self.nibble_5 == 14 else u"f"))))))) + (str(self.nibble_6) if self.nibble_6 < 10 else (u"a" if self.nibble_6 == 10 else (u"b" if self.nibble_6 == 11 else (u"c" if self.nibble_6 == 12 else (u"d" if self.nibble_6 == 13 else (u"e" if self.nibble_6 == 14 else u"f"))))))) + (str(self.nibble_7) if self.nibble_7 < 10 else (u"a" if self.nibble_7 == 10 else (u"b" if self.nibble_7 == 11 else (u"c" if self.nibble_7 == 12 else (u"d" if self.nibble_7 == 13 else (u"e" if self.nibble_7 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_1', None)

        @property
        def ipv6_group_2(self):
            """Bytes 4 and 5 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_2'):
                return self._m_ipv6_group_2

            self._m_ipv6_group_2 = (((str(self.nibble_8) if self.nibble_8 < 10 else (u"a" if self.nibble_8 == 10 else (u"b" if self.nibble_8 == 11 else (u"c" if self.nibble_8 == 12 else (u"d" if self.nibble_8 == 13 else (u"e" if self.nibble_8 == 14 else u"f")))))) + (str(self.nibble_9) if self.nibble_9 < 10 else (u"a" if self.nibble_9 == 10 else (u"b" if self.nibble_9 == 11 else (u"c" if self.nibble_9 == 12 else (u"d" if self.nibble_9 == 13 else (u"e" if self.nibble_9 == 14 else u"f"))))))) + (str(self.nibble_10) if self.nibble_10 < 10 else (u"a" if self.nibble_10 == 10 else (u"b" if self.nibble_10 == 11 else (u"c" if self.nibble_10 == 12 else (u"d" if self.nibble_10 == 13 else (u"e" if self.nibble_10 == 14 else u"f"))))))) + (str(self.nibble_11) if self.nibble_11 < 10 else (u"a" if self.nibble_11 == 10 else (u"b" if self.nibble_11 == 11 else (u"c" if self.nibble_11 == 12 else (u"d" if self.nibble_11 == 13 else (u"e" if self.nibble_11 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_2', None)

        @property
        def ipv6_group_3(self):
            """Bytes 6 and 7 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_3'):
                return self._m_ipv6_group_3

            self._m_ipv6_group_3 = (((str(self.nibble_12) if self.nibble_12 < 10 else (u"a" if self.nibble_12 == 10 else (u"b" if self.nibble_12 == 11 else (u"c" if self.nibble_12 == 12 else (u"d" if self.nibble_12 == 13 else (u"e" if self.nibble_12 == 14 else u"f")))))) + (str(self.nibble_13) if self.nibble_13 < 10 else (u"a" if self.nibble_13 == 10 else (u"b" if self.nibble_13 == 11 else (u"c" if self.nibble_13 == 12 else (u"d" if self.nibble_13 == 13 else (u"e" if self.nibble_13 == 14 else u"f"))))))) + (str(self.nibble_14) if self.nibble_14 < 10 else (u"a" if self.nibble_14 == 10 else (u"b" if self.nibble_14 == 11 else (u"c" if self.nibble_14 == 12 else (u"d" if self.nibble_14 == 13 else (u"e" if self.nibble_14 == 14 else u"f"))))))) + (str(self.nibble_15) if self.nibble_15 < 10 else (u"a" if self.nibble_15 == 10 else (u"b" if self.nibble_15 == 11 else (u"c" if self.nibble_15 == 12 else (u"d" if self.nibble_15 == 13 else (u"e" if self.nibble_15 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_3', None)

        @property
        def ipv6_group_4(self):
            """Bytes 8 and 9 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_4'):
                return self._m_ipv6_group_4

            self._m_ipv6_group_4 = (((str(self.nibble_16) if self.nibble_16 < 10 else (u"a" if self.nibble_16 == 10 else (u"b" if self.nibble_16 == 11 else (u"c" if self.nibble_16 == 12 else (u"d" if self.nibble_16 == 13 else (u"e" if self.nibble_16 == 14 else u"f")))))) + (str(self.nibble_17) if self.nibble_17 < 10 else (u"a" if self.nibble_17 == 10 else (u"b" if self.nibble_17 == 11 else (u"c" if self.nibble_17 == 12 else (u"d" if self.nibble_17 == 13 else (u"e" if self.nibble_17 == 14 else u"f"))))))) + (str(self.nibble_18) if self.nibble_18 < 10 else (u"a" if self.nibble_18 == 10 else (u"b" if self.nibble_18 == 11 else (u"c" if self.nibble_18 == 12 else (u"d" if self.nibble_18 == 13 else (u"e" if self.nibble_18 == 14 else u"f"))))))) + (str(self.nibble_19) if self.nibble_19 < 10 else (u"a" if self.nibble_19 == 10 else (u"b" if self.nibble_19 == 11 else (u"c" if self.nibble_19 == 12 else (u"d" if self.nibble_19 == 13 else (u"e" if self.nibble_19 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_4', None)

        @property
        def ipv6_group_5(self):
            """Bytes 10 and 11 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_5'):
                return self._m_ipv6_group_5

            self._m_ipv6_group_5 = (((str(self.nibble_20) if self.nibble_20 < 10 else (u"a" if self.nibble_20 == 10 else (u"b" if self.nibble_20 == 11 else (u"c" if self.nibble_20 == 12 else (u"d" if self.nibble_20 == 13 else (u"e" if self.nibble_20 == 14 else u"f")))))) + (str(self.nibble_21) if self.nibble_21 < 10 else (u"a" if self.nibble_21 == 10 else (u"b" if self.nibble_21 == 11 else (u"c" if self.nibble_21 == 12 else (u"d" if self.nibble_21 == 13 else (u"e" if self.nibble_21 == 14 else u"f"))))))) + (str(self.nibble_22) if self.nibble_22 < 10 else (u"a" if self.nibble_22 == 10 else (u"b" if self.nibble_22 == 11 else (u"c" if self.nibble_22 == 12 else (u"d" if self.nibble_22 == 13 else (u"e" if self.nibble_22 == 14 else u"f"))))))) + (str(self.nibble_23) if self.nibble_23 < 10 else (u"a" if self.nibble_23 == 10 else (u"b" if self.nibble_23 == 11 else (u"c" if self.nibble_23 == 12 else (u"d" if self.nibble_23 == 13 else (u"e" if self.nibble_23 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_5', None)

        @property
        def ipv6_group_6(self):
            """Bytes 12 and 13 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_6'):
                return self._m_ipv6_group_6

            self._m_ipv6_group_6 = (((str(self.nibble_24) if self.nibble_24 < 10 else (u"a" if self.nibble_24 == 10 else (u"b" if self.nibble_24 == 11 else (u"c" if self.nibble_24 == 12 else (u"d" if self.nibble_24 == 13 else (u"e" if self.nibble_24 == 14 else u"f")))))) + (str(self.nibble_25) if self.nibble_25 < 10 else (u"a" if self.nibble_25 == 10 else (u"b" if self.nibble_25 == 11 else (u"c" if self.nibble_25 == 12 else (u"d" if self.nibble_25 == 13 else (u"e" if self.nibble_25 == 14 else u"f"))))))) + (str(self.nibble_26) if self.nibble_26 < 10 else (u"a" if self.nibble_26 == 10 else (u"b" if self.nibble_26 == 11 else (u"c" if self.nibble_26 == 12 else (u"d" if self.nibble_26 == 13 else (u"e" if self.nibble_26 == 14 else u"f"))))))) + (str(self.nibble_27) if self.nibble_27 < 10 else (u"a" if self.nibble_27 == 10 else (u"b" if self.nibble_27 == 11 else (u"c" if self.nibble_27 == 12 else (u"d" if self.nibble_27 == 13 else (u"e" if self.nibble_27 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_6', None)

        @property
        def ipv6_group_7(self):
            """Bytes 14 and 15 of an IPv6 address as four hex digits."""
            if hasattr(self, '_m_ipv6_group_7'):
                return self._m_ipv6_group_7

            self._m_ipv6_group_7 = (((str(self.nibble_28) if self.nibble_28 < 10 else (u"a" if self.nibble_28 == 10 else (u"b" if self.nibble_28 == 11 else (u"c" if self.nibble_28 == 12 else (u"d" if self.nibble_28 == 13 else (u"e" if self.nibble_28 == 14 else u"f")))))) + (str(self.nibble_29) if self.nibble_29 < 10 else (u"a" if self.nibble_29 == 10 else (u"b" if self.nibble_29 == 11 else (u"c" if self.nibble_29 == 12 else (u"d" if self.nibble_29 == 13 else (u"e" if self.nibble_29 == 14 else u"f"))))))) + (str(self.nibble_30) if self.nibble_30 < 10 else (u"a" if self.nibble_30 == 10 else (u"b" if self.nibble_30 == 11 else (u"c" if self.nibble_30 == 12 else (u"d" if self.nibble_30 == 13 else (u"e" if self.nibble_30 == 14 else u"f"))))))) + (str(self.nibble_31) if self.nibble_31 < 10 else (u"a" if self.nibble_31 == 10 else (u"b" if self.nibble_31 == 11 else (u"c" if self.nibble_31 == 12 else (u"d" if self.nibble_31 == 13 else (u"e" if self.nibble_31 == 14 else u"f"))))))
            return getattr(self, '_m_ipv6_group_7', None)

        @property
        def ipv6_text(self):
            """An IPv6 address, uncompressed, in lower-case hex."""
            if hasattr(self, '_m_ipv6_text'):
                return self._m_ipv6_text

            self._m_ipv6_text = (((((((((((((self.ipv6_group_0 + u":") + self.ipv6_group_1) + u":") + self.ipv6_group_2) + u":") + self.ipv6_group_3) + u":") + self.ipv6_group_4) + u":") + self.ipv6_group_5) + u":") + self.ipv6_group_6) + u":") + self.ipv6_group_7
            return getattr(self, '_m_ipv6_text', None)

        @property
        def len_address(self):
            """Width of the address bytes."""
            if hasattr(self, '_m_len_address'):
                return self._m_len_address

            self._m_len_address = 16
            return getattr(self, '_m_len_address', None)

        @property
        def nibble_0(self):
            """High four bits of byte 0 of an IPv6 address."""
            if hasattr(self, '_m_nibble_0'):
                return self._m_nibble_0

            self._m_nibble_0 = KaitaiStream.byte_array_index(self.address, 0) >> 4 & 15
            return getattr(self, '_m_nibble_0', None)

        @property
        def nibble_1(self):
            """Low four bits of byte 0 of an IPv6 address."""
            if hasattr(self, '_m_nibble_1'):
                return self._m_nibble_1

            self._m_nibble_1 = KaitaiStream.byte_array_index(self.address, 0) & 15
            return getattr(self, '_m_nibble_1', None)

        @property
        def nibble_10(self):
            """High four bits of byte 5 of an IPv6 address."""
            if hasattr(self, '_m_nibble_10'):
                return self._m_nibble_10

            self._m_nibble_10 = KaitaiStream.byte_array_index(self.address, 5) >> 4 & 15
            return getattr(self, '_m_nibble_10', None)

        @property
        def nibble_11(self):
            """Low four bits of byte 5 of an IPv6 address."""
            if hasattr(self, '_m_nibble_11'):
                return self._m_nibble_11

            self._m_nibble_11 = KaitaiStream.byte_array_index(self.address, 5) & 15
            return getattr(self, '_m_nibble_11', None)

        @property
        def nibble_12(self):
            """High four bits of byte 6 of an IPv6 address."""
            if hasattr(self, '_m_nibble_12'):
                return self._m_nibble_12

            self._m_nibble_12 = KaitaiStream.byte_array_index(self.address, 6) >> 4 & 15
            return getattr(self, '_m_nibble_12', None)

        @property
        def nibble_13(self):
            """Low four bits of byte 6 of an IPv6 address."""
            if hasattr(self, '_m_nibble_13'):
                return self._m_nibble_13

            self._m_nibble_13 = KaitaiStream.byte_array_index(self.address, 6) & 15
            return getattr(self, '_m_nibble_13', None)

        @property
        def nibble_14(self):
            """High four bits of byte 7 of an IPv6 address."""
            if hasattr(self, '_m_nibble_14'):
                return self._m_nibble_14

            self._m_nibble_14 = KaitaiStream.byte_array_index(self.address, 7) >> 4 & 15
            return getattr(self, '_m_nibble_14', None)

        @property
        def nibble_15(self):
            """Low four bits of byte 7 of an IPv6 address."""
            if hasattr(self, '_m_nibble_15'):
                return self._m_nibble_15

            self._m_nibble_15 = KaitaiStream.byte_array_index(self.address, 7) & 15
            return getattr(self, '_m_nibble_15', None)

        @property
        def nibble_16(self):
            """High four bits of byte 8 of an IPv6 address."""
            if hasattr(self, '_m_nibble_16'):
                return self._m_nibble_16

            self._m_nibble_16 = KaitaiStream.byte_array_index(self.address, 8) >> 4 & 15
            return getattr(self, '_m_nibble_16', None)

        @property
        def nibble_17(self):
            """Low four bits of byte 8 of an IPv6 address."""
            if hasattr(self, '_m_nibble_17'):
                return self._m_nibble_17

            self._m_nibble_17 = KaitaiStream.byte_array_index(self.address, 8) & 15
            return getattr(self, '_m_nibble_17', None)

        @property
        def nibble_18(self):
            """High four bits of byte 9 of an IPv6 address."""
            if hasattr(self, '_m_nibble_18'):
                return self._m_nibble_18

            self._m_nibble_18 = KaitaiStream.byte_array_index(self.address, 9) >> 4 & 15
            return getattr(self, '_m_nibble_18', None)

        @property
        def nibble_19(self):
            """Low four bits of byte 9 of an IPv6 address."""
            if hasattr(self, '_m_nibble_19'):
                return self._m_nibble_19

            self._m_nibble_19 = KaitaiStream.byte_array_index(self.address, 9) & 15
            return getattr(self, '_m_nibble_19', None)

        @property
        def nibble_2(self):
            """High four bits of byte 1 of an IPv6 address."""
            if hasattr(self, '_m_nibble_2'):
                return self._m_nibble_2

            self._m_nibble_2 = KaitaiStream.byte_array_index(self.address, 1) >> 4 & 15
            return getattr(self, '_m_nibble_2', None)

        @property
        def nibble_20(self):
            """High four bits of byte 10 of an IPv6 address."""
            if hasattr(self, '_m_nibble_20'):
                return self._m_nibble_20

            self._m_nibble_20 = KaitaiStream.byte_array_index(self.address, 10) >> 4 & 15
            return getattr(self, '_m_nibble_20', None)

        @property
        def nibble_21(self):
            """Low four bits of byte 10 of an IPv6 address."""
            if hasattr(self, '_m_nibble_21'):
                return self._m_nibble_21

            self._m_nibble_21 = KaitaiStream.byte_array_index(self.address, 10) & 15
            return getattr(self, '_m_nibble_21', None)

        @property
        def nibble_22(self):
            """High four bits of byte 11 of an IPv6 address."""
            if hasattr(self, '_m_nibble_22'):
                return self._m_nibble_22

            self._m_nibble_22 = KaitaiStream.byte_array_index(self.address, 11) >> 4 & 15
            return getattr(self, '_m_nibble_22', None)

        @property
        def nibble_23(self):
            """Low four bits of byte 11 of an IPv6 address."""
            if hasattr(self, '_m_nibble_23'):
                return self._m_nibble_23

            self._m_nibble_23 = KaitaiStream.byte_array_index(self.address, 11) & 15
            return getattr(self, '_m_nibble_23', None)

        @property
        def nibble_24(self):
            """High four bits of byte 12 of an IPv6 address."""
            if hasattr(self, '_m_nibble_24'):
                return self._m_nibble_24

            self._m_nibble_24 = KaitaiStream.byte_array_index(self.address, 12) >> 4 & 15
            return getattr(self, '_m_nibble_24', None)

        @property
        def nibble_25(self):
            """Low four bits of byte 12 of an IPv6 address."""
            if hasattr(self, '_m_nibble_25'):
                return self._m_nibble_25

            self._m_nibble_25 = KaitaiStream.byte_array_index(self.address, 12) & 15
            return getattr(self, '_m_nibble_25', None)

        @property
        def nibble_26(self):
            """High four bits of byte 13 of an IPv6 address."""
            if hasattr(self, '_m_nibble_26'):
                return self._m_nibble_26

            self._m_nibble_26 = KaitaiStream.byte_array_index(self.address, 13) >> 4 & 15
            return getattr(self, '_m_nibble_26', None)

        @property
        def nibble_27(self):
            """Low four bits of byte 13 of an IPv6 address."""
            if hasattr(self, '_m_nibble_27'):
                return self._m_nibble_27

            self._m_nibble_27 = KaitaiStream.byte_array_index(self.address, 13) & 15
            return getattr(self, '_m_nibble_27', None)

        @property
        def nibble_28(self):
            """High four bits of byte 14 of an IPv6 address."""
            if hasattr(self, '_m_nibble_28'):
                return self._m_nibble_28

            self._m_nibble_28 = KaitaiStream.byte_array_index(self.address, 14) >> 4 & 15
            return getattr(self, '_m_nibble_28', None)

        @property
        def nibble_29(self):
            """Low four bits of byte 14 of an IPv6 address."""
            if hasattr(self, '_m_nibble_29'):
                return self._m_nibble_29

            self._m_nibble_29 = KaitaiStream.byte_array_index(self.address, 14) & 15
            return getattr(self, '_m_nibble_29', None)

        @property
        def nibble_3(self):
            """Low four bits of byte 1 of an IPv6 address."""
            if hasattr(self, '_m_nibble_3'):
                return self._m_nibble_3

            self._m_nibble_3 = KaitaiStream.byte_array_index(self.address, 1) & 15
            return getattr(self, '_m_nibble_3', None)

        @property
        def nibble_30(self):
            """High four bits of byte 15 of an IPv6 address."""
            if hasattr(self, '_m_nibble_30'):
                return self._m_nibble_30

            self._m_nibble_30 = KaitaiStream.byte_array_index(self.address, 15) >> 4 & 15
            return getattr(self, '_m_nibble_30', None)

        @property
        def nibble_31(self):
            """Low four bits of byte 15 of an IPv6 address."""
            if hasattr(self, '_m_nibble_31'):
                return self._m_nibble_31

            self._m_nibble_31 = KaitaiStream.byte_array_index(self.address, 15) & 15
            return getattr(self, '_m_nibble_31', None)

        @property
        def nibble_4(self):
            """High four bits of byte 2 of an IPv6 address."""
            if hasattr(self, '_m_nibble_4'):
                return self._m_nibble_4

            self._m_nibble_4 = KaitaiStream.byte_array_index(self.address, 2) >> 4 & 15
            return getattr(self, '_m_nibble_4', None)

        @property
        def nibble_5(self):
            """Low four bits of byte 2 of an IPv6 address."""
            if hasattr(self, '_m_nibble_5'):
                return self._m_nibble_5

            self._m_nibble_5 = KaitaiStream.byte_array_index(self.address, 2) & 15
            return getattr(self, '_m_nibble_5', None)

        @property
        def nibble_6(self):
            """High four bits of byte 3 of an IPv6 address."""
            if hasattr(self, '_m_nibble_6'):
                return self._m_nibble_6

            self._m_nibble_6 = KaitaiStream.byte_array_index(self.address, 3) >> 4 & 15
            return getattr(self, '_m_nibble_6', None)

        @property
        def nibble_7(self):
            """Low four bits of byte 3 of an IPv6 address."""
            if hasattr(self, '_m_nibble_7'):
                return self._m_nibble_7

            self._m_nibble_7 = KaitaiStream.byte_array_index(self.address, 3) & 15
            return getattr(self, '_m_nibble_7', None)

        @property
        def nibble_8(self):
            """High four bits of byte 4 of an IPv6 address."""
            if hasattr(self, '_m_nibble_8'):
                return self._m_nibble_8

            self._m_nibble_8 = KaitaiStream.byte_array_index(self.address, 4) >> 4 & 15
            return getattr(self, '_m_nibble_8', None)

        @property
        def nibble_9(self):
            """Low four bits of byte 4 of an IPv6 address."""
            if hasattr(self, '_m_nibble_9'):
                return self._m_nibble_9

            self._m_nibble_9 = KaitaiStream.byte_array_index(self.address, 4) & 15
            return getattr(self, '_m_nibble_9', None)


    class Message(KaitaiStruct):
        """The fields of a message record after TOTALSIZE and MAGICCODE, in the
        order `MessageExtEncoder.encode` writes them.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/MessageExtEncoder.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqCommitlog.Message, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.body_crc = self._io.read_s4be()
            self.queue_id = self._io.read_s4be()
            self.flag = self._io.read_s4be()
            self.queue_offset = self._io.read_s8be()
            self.ofs_physical = self._io.read_s8be()
            self.sys_flag = RocketmqCommitlog.SysFlag(self._io, self, self._root)
            self.born_timestamp = self._io.read_s8be()
            _on = self.born_host_v6
            if _on == False:
                pass
                self.born_host = RocketmqCommitlog.HostV4(self._io, self, self._root)
            elif _on == True:
                pass
                self.born_host = RocketmqCommitlog.HostV6(self._io, self, self._root)
            self.store_timestamp = self._io.read_s8be()
            _on = self.store_host_v6
            if _on == False:
                pass
                self.store_host = RocketmqCommitlog.HostV4(self._io, self, self._root)
            elif _on == True:
                pass
                self.store_host = RocketmqCommitlog.HostV6(self._io, self, self._root)
            self.reconsume_times = self._io.read_s4be()
            self.ofs_prepared_transaction = self._io.read_s8be()
            self.len_body = self._io.read_s4be()
            self.body = self._io.read_bytes((self.len_body if self.len_body > 0 else 0))
            _on = self._parent.magic
            if _on == RocketmqCommitlog.MagicCode.message_v2:
                pass
                self.len_topic = self._io.read_s2be()
            else:
                pass
                self.len_topic = self._io.read_s1()
            if not self.len_topic >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.len_topic, self._io, u"/types/message/seq/14")
            self.topic = (self._io.read_bytes(self.len_topic)).decode(u"UTF-8")
            self.len_properties = self._io.read_s2be()
            self.properties = (self._io.read_bytes((self.len_properties if self.len_properties > 0 else 0))).decode(u"UTF-8")


        def _fetch_instances(self):
            pass
            self.sys_flag._fetch_instances()
            _on = self.born_host_v6
            if _on == False:
                pass
                self.born_host._fetch_instances()
            elif _on == True:
                pass
                self.born_host._fetch_instances()
            _on = self.store_host_v6
            if _on == False:
                pass
                self.store_host._fetch_instances()
            elif _on == True:
                pass
                self.store_host._fetch_instances()
            _on = self._parent.magic
            if _on == RocketmqCommitlog.MagicCode.message_v2:
                pass
            else:
                pass

        @property
        def born_host_v6(self):
            """True when the born host is IPv6 (20 bytes), the SYSFLAG bit 4."""
            if hasattr(self, '_m_born_host_v6'):
                return self._m_born_host_v6

            self._m_born_host_v6 = self.sys_flag.is_born_host_v6
            return getattr(self, '_m_born_host_v6', None)

        @property
        def is_v2(self):
            """True for a V2 record (2-byte topic length), false for V1 (1-byte topic
            length), from the record's magic code.
            """
            if hasattr(self, '_m_is_v2'):
                return self._m_is_v2

            self._m_is_v2 = self._parent.magic == RocketmqCommitlog.MagicCode.message_v2
            return getattr(self, '_m_is_v2', None)

        @property
        def len_host_fields(self):
            """Bytes taken by the two host fields (8 or 20 each)."""
            if hasattr(self, '_m_len_host_fields'):
                return self._m_len_host_fields

            self._m_len_host_fields = (((16 if self.sys_flag.is_born_host_v6 else 4) + (16 if self.sys_flag.is_store_host_v6 else 4)) + 8)
            return getattr(self, '_m_len_host_fields', None)

        @property
        def len_record_computed(self):
            """The record size the broker's `calMsgLength` gives for these
            fields; recovery rejects a record whose TOTALSIZE differs.
            """
            if hasattr(self, '_m_len_record_computed'):
                return self._m_len_record_computed

            self._m_len_record_computed = ((((74 + self.len_host_fields) + (2 if self.is_v2 else 1)) + (self.len_body if self.len_body > 0 else 0)) + self.len_topic) + (self.len_properties if self.len_properties > 0 else 0)
            return getattr(self, '_m_len_record_computed', None)

        @property
        def store_host_v6(self):
            """True when the store host is IPv6 (20 bytes), the SYSFLAG bit 5."""
            if hasattr(self, '_m_store_host_v6'):
                return self._m_store_host_v6

            self._m_store_host_v6 = self.sys_flag.is_store_host_v6
            return getattr(self, '_m_store_host_v6', None)


    class Record(KaitaiStruct):
        """One commit-log record: a message (V1 or V2), the BLANK end-of-segment
        record, or the start of the zero-filled tail.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqCommitlog.Record, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_record = self._io.read_s4be()
            self.magic = KaitaiStream.resolve_enum(RocketmqCommitlog.MagicCode, self._io.read_s4be())
            if not isinstance(self.magic, RocketmqCommitlog.MagicCode):
                raise kaitaistruct.ValidationNotInEnumError(self.magic, self._io, u"/types/record/seq/1")
            if self.is_message:
                pass
                self._raw_body = self._io.read_bytes(self.len_record - 8)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = RocketmqCommitlog.Message(_io__raw_body, self, self._root)



        def _fetch_instances(self):
            pass
            if self.is_message:
                pass
                self.body._fetch_instances()


        @property
        def is_message(self):
            """True for a message record, false for BLANK and the zero-filled tail.
            """
            if hasattr(self, '_m_is_message'):
                return self._m_is_message

            self._m_is_message =  ((self.magic == RocketmqCommitlog.MagicCode.message_v1) or (self.magic == RocketmqCommitlog.MagicCode.message_v2)) 
            return getattr(self, '_m_is_message', None)

        @property
        def len_padding(self):
            """Bytes of a BLANK record after its 8-byte header, up to the end of
            the segment. Their content is unspecified (brokers before 4.9.1
            left stale bytes of an earlier message there), so they are never
            parsed.
            """
            if hasattr(self, '_m_len_padding'):
                return self._m_len_padding

            self._m_len_padding = ((self.len_record - 8) if self.magic == RocketmqCommitlog.MagicCode.blank else 0)
            return getattr(self, '_m_len_padding', None)


    class SysFlag(KaitaiStruct):
        """The 32-bit SYSFLAG field, most significant bit first. Bit 0 marks a
        compressed body, bits 2-3 the transaction type, bits 4 and 5 IPv6
        hosts (4.6.0+), bits 6 and 7 an inner batch (5.0.0+), and bits 8-10
        the compression type (set by 4.9.4+ producer clients).
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqCommitlog.SysFlag, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.reserved = self._io.read_bits_int_be(21)
            self.compression_type = KaitaiStream.resolve_enum(RocketmqCommitlog.CompressionType, self._io.read_bits_int_be(3))
            self.is_inner_batch = self._io.read_bits_int_be(1) != 0
            self.needs_unwrap = self._io.read_bits_int_be(1) != 0
            self.is_store_host_v6 = self._io.read_bits_int_be(1) != 0
            self.is_born_host_v6 = self._io.read_bits_int_be(1) != 0
            self.transaction_type = KaitaiStream.resolve_enum(RocketmqCommitlog.TransactionType, self._io.read_bits_int_be(2))
            self.is_multi_tags = self._io.read_bits_int_be(1) != 0
            self.is_compressed = self._io.read_bits_int_be(1) != 0


        def _fetch_instances(self):
            pass

        @property
        def flag_list(self):
            """The name of every set bit or bit group, lowest bit first, each
            after a space; empty when no bit is set.
            """
            if hasattr(self, '_m_flag_list'):
                return self._m_flag_list

            self._m_flag_list = ((((((((((((u" COMPRESSED" if self.is_compressed else u"") + (u" MULTI_TAGS" if self.is_multi_tags else u"")) + (u" PREPARED" if self.transaction_type == RocketmqCommitlog.TransactionType.prepared else u"")) + (u" COMMIT" if self.transaction_type == RocketmqCommitlog.TransactionType.commit else u"")) + (u" ROLLBACK" if self.transaction_type == RocketmqCommitlog.TransactionType.rollback else u"")) + (u" BORNHOST_V6" if self.is_born_host_v6 else u"")) + (u" STOREHOST_V6" if self.is_store_host_v6 else u"")) + (u" NEED_UNWRAP" if self.needs_unwrap else u"")) + (u" INNER_BATCH" if self.is_inner_batch else u"")) + (u" LZ4" if self.compression_type == RocketmqCommitlog.CompressionType.lz4 else u"")) + (u" ZSTD" if self.compression_type == RocketmqCommitlog.CompressionType.zstd else u"")) + (u" ZLIB" if self.compression_type == RocketmqCommitlog.CompressionType.zlib else u"")) + (u" RESERVED_BITS" if self.reserved != 0 else u"")
            return getattr(self, '_m_flag_list', None)

        @property
        def flag_names(self):
            """`flag_list` without its leading space, or `none`: what the Web IDE
            shows for the field.
            """
            if hasattr(self, '_m_flag_names'):
                return self._m_flag_names

            self._m_flag_names = (u"none" if self.flag_list == u"" else self.flag_list[1:len(self.flag_list)])
            return getattr(self, '_m_flag_names', None)



