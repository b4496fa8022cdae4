# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqIndexFile(KaitaiStruct):
    """One file of the broker's message-key index, `<store>/index/<name>`, where
    the name is the file's creation time as `yyyyMMddHHmmssSSS` (broker local
    time). The broker answers "find messages by key" (`queryMessage`) from
    these files: for every dispatched message it indexes `topic#UNIQ_KEY` and
    `topic#key` for each non-empty key of the `KEYS` property (split on
    spaces), except for transaction ROLLBACK records.
    
    The file is a fixed-size hash table with chaining:
    
    * a 40-byte header;
    * `num_hash_slots` hash slots of 4 bytes; the slot of a key is
      `indexKeyHashMethod(key) % num_hash_slots` and holds the number of the
      newest entry whose key falls in it (0 = empty);
    * `num_index` entries of 20 bytes, numbered from 0; entry 0 is never
      written, so entry numbers start at 1 and 0 can mean "none". Each entry
      holds the key hash, the commit-log offset of the message, its store
      time in seconds after the header's begin time, and the number of the
      previous entry of the same slot, so a lookup walks newest to oldest.
      The key itself is not stored: different keys with equal hashes, and
      keys of other topics, come back from a lookup too, and a reader must
      compare each message's keys.
    
    Entries are appended in order; `header.next_index` is the next entry
    number to write. Unwritten slots and entries are zero (the file is
    created at full size, sparse). A file is full when `next_index` reaches
    `num_index`; the broker then starts a new file.
    
    Counts. `num_hash_slots` and `num_index` are not stored in the file: they
    are the broker settings `maxHashSlotNum` (default 5,000,000) and
    `maxIndexNum` (default 20,000,000) at the time the file was made, and
    the file size is `40 + 4 * num_hash_slots + 20 * num_index` (420,000,040
    bytes with the defaults). The size alone does not give both counts. The
    top-level type assumes the default ratio of four entries per slot, which
    the defaults themselves have: `num_hash_slots = (size - 40) / 84`. For a
    broker configured with another ratio, read `tables` at position 40 with
    the counts from the broker configuration: `tables(num_hash_slots,
    num_index)`. `is_size_consistent` tells whether the default ratio fits
    the file at all.
    
    Slot and entry tables are instances, read only when used, so a
    full-size file opens without parsing 25 million items. All integers are
    big-endian and signed, as Java writes them.
    
    The layout is the same in every release from 4.0.0 to 5.3.x; only the
    meaning of `header.num_hash_slots_used` changed (in 4.7.1, see there).
    The 5.x tiered-store plugin keeps a different index format
    (`tiered_index_file/`), not described here.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexHeader.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexService.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqIndexFile, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.header = RocketmqIndexFile.IndexHeader(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.header._fetch_instances()
        _ = self.last_entry
        if hasattr(self, '_m_last_entry'):
            pass
            self._m_last_entry._fetch_instances()

        _ = self.tables
        if hasattr(self, '_m_tables'):
            pass
            self._m_tables._fetch_instances()


    class Entry(KaitaiStruct):
        """One index entry (`indexSize` = 20 bytes), written by
        `IndexFile.putKey` for one key of one message.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqIndexFile.Entry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.key_hash = self._io.read_s4be()
            self.ofs_physical = self._io.read_s8be()
            self.time_diff = self._io.read_s4be()
            self.prev_index = self._io.read_s4be()


        def _fetch_instances(self):
            pass


    class HashSlot(KaitaiStruct):
        """One hash slot: the head of the chain of entries whose keys fall in
        it.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqIndexFile.HashSlot, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.latest_index = self._io.read_s4be()


        def _fetch_instances(self):
            pass


    class IndexHeader(KaitaiStruct):
        """The 40-byte file header (`IndexHeader.INDEX_HEADER_SIZE`). The broker
        keeps it in memory and writes it through on every change.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexHeader.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqIndexFile.IndexHeader, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.begin_timestamp = self._io.read_s8be()
            self.end_timestamp = self._io.read_s8be()
            self.ofs_begin_physical = self._io.read_s8be()
            self.ofs_end_physical = self._io.read_s8be()
            self.num_hash_slots_used = self._io.read_s4be()
            self.next_index = self._io.read_s4be()


        def _fetch_instances(self):
            pass

        @property
        def num_entries(self):
            """Number of entries written."""
            if hasattr(self, '_m_num_entries'):
                return self._m_num_entries

            self._m_num_entries = ((self.next_index - 1) if self.next_index > 1 else 0)
            return getattr(self, '_m_num_entries', None)


    class IndexTables(KaitaiStruct):
        """The hash slots and the entries, for given counts: for a file whose
        broker used another ratio of entries to slots than the default (see
        `is_size_consistent`). Starts at byte 40 of the file, right after the
        header. Not read by the Perl target, which ignores parameters.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
        """
        def __init__(self, num_hash_slots, num_index, _io, _parent=None, _root=None):
            super(RocketmqIndexFile.IndexTables, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.num_hash_slots = num_hash_slots
            self.num_index = num_index
            self._read()

        def _read(self):
            self.hash_slots = []
            for i in range(self.num_hash_slots):
                self.hash_slots.append(RocketmqIndexFile.HashSlot(self._io, self, self._root))

            self.entries = []
            for i in range(self.num_index):
                self.entries.append(RocketmqIndexFile.Entry(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            for i in range(len(self.hash_slots)):
                pass
                self.hash_slots[i]._fetch_instances()

            for i in range(len(self.entries)):
                pass
                self.entries[i]._fetch_instances()



    class InferredTables(KaitaiStruct):
        """The hash slots and the entries, with the counts inferred from the
        file size (`num_hash_slots`, `num_index`). Starts at byte 40 of the
        file, right after the header. It takes no parameters, so that every
        Kaitai target reads it (the Perl target ignores parameters); for other
        counts, read `index_tables` at the same position.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqIndexFile.InferredTables, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.hash_slots = []
            for i in range(self.num_hash_slots):
                self.hash_slots.append(RocketmqIndexFile.HashSlot(self._io, self, self._root))

            self.entries = []
            for i in range(self.num_index):
                self.entries.append(RocketmqIndexFile.Entry(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            for i in range(len(self.hash_slots)):
                pass
                self.hash_slots[i]._fetch_instances()

            for i in range(len(self.entries)):
                pass
                self.entries[i]._fetch_instances()


        @property
        def num_hash_slots(self):
            """Number of hash slots, inferred from the file size."""
            if hasattr(self, '_m_num_hash_slots'):
                return self._m_num_hash_slots

            self._m_num_hash_slots = self._root.num_hash_slots
            return getattr(self, '_m_num_hash_slots', None)

        @property
        def num_index(self):
            """Number of entries, entry 0 included, inferred from the file size."""
            if hasattr(self, '_m_num_index'):
                return self._m_num_index

            self._m_num_index = self._root.num_index
            return getattr(self, '_m_num_index', None)


    @property
    def is_size_consistent(self):
        """True when the file size fits four entries per slot. When false, the
        inferred counts are wrong: read the type `index_tables` at position 40
        with the counts from the broker configuration.
        """
        if hasattr(self, '_m_is_size_consistent'):
            return self._m_is_size_consistent

        self._m_is_size_consistent =  ((self._io.size() > 40) and ((self._io.size() - 40) % 84 == 0)) 
        return getattr(self, '_m_is_size_consistent', None)

    @property
    def last_entry(self):
        """The most recently written entry, number `header.next_index - 1`."""
        if hasattr(self, '_m_last_entry'):
            return self._m_last_entry

        if  ((self.header.next_index > 1) and (self.header.next_index <= self.num_index)) :
            pass
            _pos = self._io.pos()
            self._io.seek((40 + self.num_hash_slots * 4) + (self.header.next_index - 1) * 20)
            self._m_last_entry = RocketmqIndexFile.Entry(self._io, self, self._root)
            self._io.seek(_pos)

        return getattr(self, '_m_last_entry', None)

    @property
    def num_hash_slots(self):
        """Number of hash slots (`maxHashSlotNum`), inferred from the file size
        assuming four entries per slot, as with the default settings
        (5,000,000 slots for a 420,000,040-byte file). Wrong when the broker
        used another ratio; see `is_size_consistent`.
        """
        if hasattr(self, '_m_num_hash_slots'):
            return self._m_num_hash_slots

        self._m_num_hash_slots = (self._io.size() - 40) // 84
        return getattr(self, '_m_num_hash_slots', None)

    @property
    def num_index(self):
        """Number of entries the file has room for (`maxIndexNum`), entry 0
        included, under the same four-entries-per-slot assumption.
        """
        if hasattr(self, '_m_num_index'):
            return self._m_num_index

        self._m_num_index = self.num_hash_slots * 4
        return getattr(self, '_m_num_index', None)

    @property
    def tables(self):
        """The hash slots and the entries, with the inferred counts. Reading it
        parses every slot and entry of the file.
        """
        if hasattr(self, '_m_tables'):
            return self._m_tables

        _pos = self._io.pos()
        self._io.seek(40)
        self._m_tables = RocketmqIndexFile.InferredTables(self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_tables', None)


