# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqRocksdbConfigDataVersion(KaitaiStruct):
    """The value of a table's `data_version` key in `config/rdb/` (see
    rocketmq_rocksdb_config_key): the table's `DataVersion` as three longs
    (`ConfigHelper.stampDataVersion`). A value of any other length is
    ignored by the broker (`onDataVersionLoad`).
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqRocksdbConfigDataVersion, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.data_version = RocketmqRocksdbConfigDataVersion.DataVersionValue(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.data_version._fetch_instances()

    class DataVersionValue(KaitaiStruct):
        """A `DataVersion`.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/config/v2/ConfigHelper.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqRocksdbConfigDataVersion.DataVersionValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.state_version = self._io.read_s8be()
            self.timestamp = self._io.read_s8be()
            self.counter = self._io.read_s8be()


        def _fetch_instances(self):
            pass



