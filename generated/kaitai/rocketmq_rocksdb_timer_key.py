# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbTimerKey(KaitaiStruct):
    """The key of one scheduled message in the `timer` column family of the
    broker's RocksDB message store, `<store>/rocksdbstore/`
    (`MessageRocksDBStorage`, RIP-82), written when the broker runs the
    RocksDB timer engine (`timerRocksDBEnable=true`, `mqadmin
    switchTimerEngine -e R`, engine `ROCKSDB_TIMELINE`). Its value is a
    rocketmq_rocksdb_timer_value pointing at the `rmq_sys_wheel_timer` record
    in the commit log.
    
    The delivery time comes first, big-endian, so RocksDB's bytewise order is
    the order of delivery: the broker scans the keys from one time bound to
    the next and deletes the ranges it delivered. A cancelled message's key is
    deleted (`TIMER_ROCKSDB_DELETE`); a rolled message's key is written again
    (`TIMER_ROCKSDB_UPDATE`).
    
    Two other keys of the column family are no timer records: the ASCII
    strings `sys_topic_scan_offset_checkpoint` (the consume-queue offset of
    `rmq_sys_wheel_timer` dispatched so far) and `timeline_checkpoint` (the
    delivery time scanned so far), each with an 8-byte big-endian value
    (rocketmq_rocksdb_message_mark). They sort after every record key (their
    first byte, 0x73 or 0x74, is above that of any delivery time before the
    year 4 million).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/pull/9787
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/f1e2594d05c48406b32bdf7f09ab423c424a028b/store/src/main/java/org/apache/rocketmq/store/timer/rocksdb/TimerRocksDBRecord.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/2872ab46cc6a3fcbe02cbe04d894b8c07d313680/store/src/main/java/org/apache/rocketmq/store/rocksdb/MessageRocksDBStorage.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbTimerKey, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.delivery_time = self._io.read_s8be()
        if not self.delivery_time >= 1:
            raise kaitaistruct.ValidationLessThanError(1, self.delivery_time, self._io, u"/seq/0")
        self.uniq_key = (self._io.read_bytes_full()).decode(u"UTF-8")


    def _fetch_instances(self):
        pass


