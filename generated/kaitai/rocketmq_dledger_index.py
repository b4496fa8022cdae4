# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqDledgerIndex(KaitaiStruct):
    """One file of the entry index of a DLedger commit log,
    `<store>/dledger-<selfId>/index/<20-digit start position>`: a 32-byte
    unit per entry, unit `n` at byte `n * 32` of the index stream, so the
    index of an entry gives its position in the data files. Files hold
    `mappedFileSizeForEntryIndex` bytes (5,242,880 units by default). The
    DLedger recovery compares each entry with its unit and rewrites the
    index from the data where they differ, so the data files, not this
    index, are authoritative. Broker DLedger mode is deprecated from 5.5.1
    on (see rocketmq_dledger_data).
    
    .. seealso::
       Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
    
    
    .. seealso::
       Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/DLedgerMmapFileStore.java
    """

    class UnitMagic(IntEnum):
        zero_fill = 0
        normal = 1
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqDledgerIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.units = []
        i = 0
        while not self._io.is_eof():
            self.units.append(RocketmqDledgerIndex.Unit(self._io, self, self._root))
            i += 1



    def _fetch_instances(self):
        pass
        for i in range(len(self.units)):
            pass
            self.units[i]._fetch_instances()


    class Unit(KaitaiStruct):
        """One index unit (`INDEX_UNIT_SIZE` = 32 bytes), written by
        `DLedgerEntryCoder.encodeIndex`.
        
        .. seealso::
           Source - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqDledgerIndex.Unit, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = KaitaiStream.resolve_enum(RocketmqDledgerIndex.UnitMagic, self._io.read_u4be())
            if not isinstance(self.magic, RocketmqDledgerIndex.UnitMagic):
                raise kaitaistruct.ValidationNotInEnumError(self.magic, self._io, u"/types/unit/seq/0")
            self.ofs_entry = self._io.read_s8be()
            self.len_entry = self._io.read_s4be()
            self.index = self._io.read_s8be()
            self.term = self._io.read_s8be()


        def _fetch_instances(self):
            pass



