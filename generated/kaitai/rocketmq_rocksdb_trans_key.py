# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbTransKey(KaitaiStruct):
    """The key of one open (half) transactional message in the `trans` column
    family of the broker's RocksDB message store, `<store>/rocksdbstore/`
    (`MessageRocksDBStorage`, RIP-82), written when the broker keeps its
    transaction state in RocksDB (`transRocksDBEnable=true`). The half message
    itself is in the commit log; the key is deleted when the transaction is
    committed or rolled back (an operation record, `isOp`), so the column
    family holds the transactions still waiting for a check. Its value is a
    rocketmq_rocksdb_trans_value.
    
    The commit-log offset comes first, big-endian, so keys sort in commit-log
    order. `TransMessageRocksDBStore.buildTransIndex` writes a key for each
    message dispatched under `RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC` (the half
    message, at its own offset) and for each operation message under
    `RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC` (at the offset its `TRANS_OFFSET`
    property names, marking the half message done); both topics are 5.4.0's
    RocksDB counterparts of `RMQ_SYS_TRANS_HALF_TOPIC` /
    `RMQ_SYS_TRANS_OP_HALF_TOPIC`. The topic part is the message's
    `REAL_TOPIC` property; the last part is its `__transactionId__` property
    (`PROPERTY_TRANSACTION_ID`), which the op message copies from the half
    message's UNIQ_KEY, so for the half message it is the id the producer
    client set as transaction id. A message lacking either property gets no
    key. One other key is no record: the ASCII string `lastOffsetPy`, with
    an 8-byte big-endian value (rocketmq_rocksdb_message_mark), the largest
    commit-log offset written so far, from which dispatch resumes.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/pull/9787
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/transaction/TransRocksDBRecord.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/14d35e958d823bc8e01331d55a67ff8be4fa2fcd/store/src/main/java/org/apache/rocketmq/store/transaction/TransMessageRocksDBStore.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbTransKey, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.ofs_commitlog = self._io.read_s8be()
        self.sep_topic = self._io.read_bytes(1)
        if not self.sep_topic == b"\x40":
            raise kaitaistruct.ValidationNotEqualError(b"\x40", self.sep_topic, self._io, u"/seq/1")
        self.topic_and_uniq_key = (self._io.read_bytes_full()).decode(u"UTF-8")


    def _fetch_instances(self):
        pass


