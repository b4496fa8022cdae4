# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqDledgerData(KaitaiStruct):
    """One data file of the commit log of a broker in DLedger mode
    (`enableDLegerCommitLog=true`): `<store>/dledger-<selfId>/data/<20-digit
    start position>` unless `storePathDLedgerCommitLog` (4.9.4+) names other
    folders. The file store of the DLedger library (`DLedgerMmapFileStore`)
    keeps the log as one byte stream cut into files of
    `mappedFileSizeCommitLog` bytes (`mapedFileSizeCommitLog` before 4.5.2),
    named like commit-log segments by the position of their first byte.
    
    Every entry wraps one commit-log message record (the same bytes as in a
    plain commit log, see rocketmq_commitlog) in a 48-byte header. The
    broker rewrites the message's PHYSICALOFFSET to the entry's position plus
    48, so consume queues and message ids point at the record inside the
    entry. When the next entry does not fit, the rest of the file is a BLANK
    filler whose first 8 bytes are the magic -1 and the filler's length; a
    pre-allocated file ends in a zero-filled tail.
    
    The library's recovery (`DLedgerMmapFileStore.recover`) reads entries
    until one is not valid: a zero size (the tail), a `pos` other than the
    entry's position, a body length other than the size minus 48, an entry
    running past the end of the file, a magic other than 1, an index that
    does not follow the previous one, a term smaller than the previous one.
    The data ends at the start of that entry (DLedger 0.1 and 0.2 have no
    zero-size test, but the `pos` test ends the data at the same place).
    RocketMQ uses DLedger 0.1 (4.5.0 to 4.7.1), 0.2.2 (4.8.0 to 4.9.2),
    0.2.3 (4.9.3), 0.2.6 (4.9.4), 0.3.1 (5.0.0, 5.1.0) and 0.3.1.2 (4.9.5 to
    4.9.8, 5.1.1 to 5.3.3), 0.3.2 from a release after 5.3.3 to 5.5.0
    (which one is not established: issue #10651 of 2026-07-23 reports the
    develop branch on 0.3.2) and 0.3.3.4 from 5.5.1 (PR #10958); all write
    this same layout. `channel`,
    `chain_crc` and `body_crc` are reserved and written as 0.
    
    Broker DLedger mode is deprecated from 5.5.1 on (apache/rocketmq issue
    #10641, pull request #10642: the broker warns at startup with
    `enableDLegerCommitLog=true`; controller mode is the recommended
    failover). Brokers still write this layout; the DLedger-based controller
    is not deprecated.
    
    .. seealso::
       Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
    
    
    .. seealso::
       Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/DLedgerMmapFileStore.java
    
    
    .. seealso::
       Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/MmapFileList.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/dledger/DLedgerCommitLog.java
    """

    class EntryMagic(IntEnum):
        blank = -1
        zero_fill = 0
        normal = 1
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqDledgerData, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.records = []
        i = 0
        while True:
            _ = RocketmqDledgerData.Record(self._io, self, self._root)
            self.records.append(_)
            if  (((not (_.is_entry))) or (self._io.is_eof())) :
                break
            i += 1


    def _fetch_instances(self):
        pass
        for i in range(len(self.records)):
            pass
            self.records[i]._fetch_instances()


    class EntryBody(KaitaiStruct):
        """The fields of an entry after its magic and size, in the order
        `DLedgerEntryCoder.encode` writes them; the 44-byte `HEADER_SIZE`
        ends with `body_crc`, and the message record starts at byte 48
        (`BODY_OFFSET`).
        
        .. seealso::
           Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqDledgerData.EntryBody, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.index = self._io.read_s8be()
            self.term = self._io.read_s8be()
            self.ofs_entry = self._io.read_s8be()
            self.channel = self._io.read_s4be()
            self.chain_crc = self._io.read_s4be()
            self.body_crc = self._io.read_s4be()
            self.len_body = self._io.read_s4be()
            self.body = self._io.read_bytes(self.len_body)


        def _fetch_instances(self):
            pass


    class Record(KaitaiStruct):
        """One DLedger entry (`DLedgerEntry`), the BLANK filler at the end of a
        file, or the start of the zero-filled tail.
        
        .. seealso::
           Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntry.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqDledgerData.Record, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = KaitaiStream.resolve_enum(RocketmqDledgerData.EntryMagic, self._io.read_s4be())
            if not isinstance(self.magic, RocketmqDledgerData.EntryMagic):
                raise kaitaistruct.ValidationNotInEnumError(self.magic, self._io, u"/types/record/seq/0")
            self.len_entry = self._io.read_s4be()
            if self.is_entry:
                pass
                self._raw_body = self._io.read_bytes(self.len_entry - 8)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = RocketmqDledgerData.EntryBody(_io__raw_body, self, self._root)



        def _fetch_instances(self):
            pass
            if self.is_entry:
                pass
                self.body._fetch_instances()


        @property
        def is_entry(self):
            """True for an entry, false for the BLANK filler and the
            zero-filled tail.
            """
            if hasattr(self, '_m_is_entry'):
                return self._m_is_entry

            self._m_is_entry = self.magic == RocketmqDledgerData.EntryMagic.normal
            return getattr(self, '_m_is_entry', None)



