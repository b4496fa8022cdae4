"""RocksDB databases of a 5.2+ broker store: the RocksDB consume queue and the RocksDB configs.

Opened read-only through ``rocksdict`` without writing in the database folders
(:mod:`.db`); key and value layouts from ``formats/rocketmq_rocksdb_*.ksy``.
"""

from .consumequeue import RocksDBConsumeQueue, RocksDBCqEntry, RocksDBQueues
from .db import ReadOnlyDB, is_rocksdb

__all__ = ["ReadOnlyDB", "RocksDBConsumeQueue", "RocksDBCqEntry", "RocksDBQueues", "is_rocksdb"]
