# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqTieredIndex(KaitaiStruct):
    """An index file of the tiered-store plugin (`IndexStoreFile`): message keys
    and UNIQ_KEYs hashed into slots, each slot leading to the items of its
    keys. The file comes in two forms.
    
    The writing form, `<store>/tiered_index_file/<begin timestamp>`, is
    pre-allocated at `28 + maxHashSlots * 8 + maxItems * 32` bytes
    (`tieredStoreIndexFileMaxHashSlotNum`, 5,000,000, and
    `tieredStoreIndexFileMaxIndexNum`, 20,000,000, by default; neither is in
    the file). A slot's first 4 bytes hold the number of the newest item of
    its keys (0 for none); items are numbered from 1 and each names the
    previous item of its slot, so a slot leads to a chain. A lookup follows
    at most 512 items.
    
    The compacted form, written when the file is full to
    `tiered_index_file/compacting/<begin timestamp>` and uploaded as the
    tiered INDEX segment, has the same header and slot table, then every
    slot's items in one run of 28-byte items (no chain link); a slot holds
    the run's byte position and length. Its size is `28 + maxHashSlots * 8
    + itemCount * 28`. All integers are big-endian.
    
    The 5.1.x plugin (`TieredIndexFile`) used the same header, slot and item
    layouts with other conventions; 5.2.0 converts its files on start. Its
    writing form, `tiered_index_file/0000` (and `1111` while the previous one
    is compacted), is `40 + maxHashSlots * 8 + maxItems * 32` bytes: slots
    start at -1 (none), items are numbered from 0, a chain ends at -1,
    `time_diff` is in milliseconds, and the last 4 bytes are -1 until the
    file is full, then the END magic. Its compacted form (`2222`, uploaded as
    the INDEX segment) has the END magic, the slot count in
    `num_used_slots`, runs of 28-byte items and the BEGIN magic in the 4
    bytes after them. Its key hash is `Math.abs(hashCode)`, 0 for
    `Integer.MIN_VALUE`.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/file/TieredIndexFile.java
    """

    class FileMagic(IntEnum):
        end_marker = -1127939451
        begin_marker = -1127939447
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqTieredIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.header = RocketmqTieredIndex.IndexHeader(self._io, self, self._root)
        self.slots = self._io.read_bytes_full()


    def _fetch_instances(self):
        pass
        self.header._fetch_instances()

    class CompactItem(KaitaiStruct):
        """An item of the compacted form (`COMPACT_INDEX_ITEM_SIZE` = 28
        bytes), without the chain link.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTieredIndex.CompactItem, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.key_hash = self._io.read_s4be()
            self.topic_id = self._io.read_s4be()
            self.queue_id = self._io.read_s4be()
            self.ofs_commitlog = self._io.read_s8be()
            self.len_message = self._io.read_s4be()
            self.time_diff = self._io.read_s4be()


        def _fetch_instances(self):
            pass


    class IndexHeader(KaitaiStruct):
        """The header, rewritten by `flushNewMetadata` after each put.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTieredIndex.IndexHeader, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = KaitaiStream.resolve_enum(RocketmqTieredIndex.FileMagic, self._io.read_s4be())
            if not isinstance(self.magic, RocketmqTieredIndex.FileMagic):
                raise kaitaistruct.ValidationNotInEnumError(self.magic, self._io, u"/types/index_header/seq/0")
            self.begin_timestamp = self._io.read_s8be()
            self.end_timestamp = self._io.read_s8be()
            self.num_used_slots = self._io.read_s4be()
            self.num_items = self._io.read_s4be()


        def _fetch_instances(self):
            pass


    class Item(KaitaiStruct):
        """An item of the writing form (`INDEX_ITEM_SIZE` = 32 bytes), item
        `n` at `28 + slots * 8 + n * 32`.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTieredIndex.Item, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.key_hash = self._io.read_s4be()
            self.topic_id = self._io.read_s4be()
            self.queue_id = self._io.read_s4be()
            self.ofs_commitlog = self._io.read_s8be()
            self.len_message = self._io.read_s4be()
            self.time_diff = self._io.read_s4be()
            self.prev_item = self._io.read_s4be()


        def _fetch_instances(self):
            pass


    class Slot(KaitaiStruct):
        """One slot (`HASH_SLOT_SIZE` = 8 bytes) of the table after the header;
        key hash modulo the slot count picks it.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTieredIndex.Slot, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.value = self._io.read_s4be()
            self.len_run = self._io.read_s4be()


        def _fetch_instances(self):
            pass



