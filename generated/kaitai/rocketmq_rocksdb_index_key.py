# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbIndexKey(KaitaiStruct):
    """The key of one message index entry in the `default` column family of the
    broker's RocksDB message store, `<store>/rocksdbstore/`
    (`MessageRocksDBStorage`, RIP-82): the RocksDB counterpart of an index
    file's entry, written when the broker indexes in RocksDB
    (`indexRocksDBEnable=true`). Its value is a rocketmq_rocksdb_index_value.
    
    A message gets every kind of key that applies, not only the first:
    one `K` key per distinct, non-empty key of its KEYS (split at spaces),
    one `T` key when its TAGS property is set and not empty, and always one
    `U` key for its UNIQ_KEY alone (`IndexRocksDBStore.buildIndex`). A
    rollback message (transaction type rollback in SYSFLAG) gets no key, nor
    does a message without a topic, UNIQ_KEY or store time. The hour comes
    first, big-endian, so the broker deletes expired hours as one key range.
    Two other keys of the column family are no entries: the ASCII strings
    `lastOffsetPy` and `lastStoreTimeStamp`, each with an 8-byte big-endian
    value (rocketmq_rocksdb_message_mark), the newest commit-log offset and
    store time indexed, from which dispatch resumes.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/pull/9787
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBRecord.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/14d35e958d823bc8e01331d55a67ff8be4fa2fcd/store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBStore.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbIndexKey, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.store_hour = self._io.read_s8be()
        self.sep_topic = self._io.read_bytes(1)
        if not self.sep_topic == b"\x40":
            raise kaitaistruct.ValidationNotEqualError(b"\x40", self.sep_topic, self._io, u"/seq/1")
        self.middle = (self._io.read_bytes((self._io.size() - self._io.pos()) - 8)).decode(u"UTF-8")
        self.ofs_commitlog = self._io.read_s8be()


    def _fetch_instances(self):
        pass


