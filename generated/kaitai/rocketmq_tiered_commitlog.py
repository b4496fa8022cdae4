# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqTieredCommitlog(KaitaiStruct):
    """A commit-log segment of one topic queue in the tiered store (POSIX
    backend: `<tieredStoreFilePath>/<md5(cluster)[:8]>_<cluster>/<broker>/
    <topic>/<queueId>/COMMIT_LOG/<md5(offset)[:8]><offset, 20 digits>`).
    It holds that queue's message records, byte for byte as in the broker's
    commit log (see rocketmq_commitlog) except PHYSICALOFFSET, which the
    upload stream (`CommitLogInputStream`) rewrites to the record's offset in
    the tiered commit log; a `__CRC32#` property is not recomputed. Files are
    written by appending, not pre-allocated, and a sealed file may end with
    a 16-byte coda. The queue's tiered consume queue (`CONSUME_QUEUE/`) is a
    stream of rocketmq_consumequeue units whose offsets are tiered
    commit-log offsets, its files named by `queue offset * 20`.
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/util/MessageFormatUtil.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/stream/CommitLogInputStream.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/provider/PosixFileSegment.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqTieredCommitlog, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.records = self._io.read_bytes_full()


    def _fetch_instances(self):
        pass

    class Coda(KaitaiStruct):
        """The end of a sealed segment (`COMMIT_LOG_CODA_SIZE` = 16 bytes): a
        BLANK record header followed by the newest store time.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/util/MessageFormatUtil.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqTieredCommitlog.Coda, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_coda = self._io.read_s4be()
            self.magic = self._io.read_u4be()
            if not self.magic == 3419681172:
                raise kaitaistruct.ValidationNotEqualError(3419681172, self.magic, self._io, u"/types/coda/seq/1")
            self.max_store_timestamp = self._io.read_s8be()


        def _fetch_instances(self):
            pass



