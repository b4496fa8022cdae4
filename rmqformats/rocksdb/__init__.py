"""RocksDB databases of a 5.2+ broker store: the consume queue, the configs and the 5.4+ message store.

Opened read-only through ``rocksdict`` without writing in the database folders
(:mod:`.db`); key and value layouts from ``formats/rocketmq_rocksdb_*.ksy``.
"""

from .consumequeue import RocksDBConsumeQueue, RocksDBCqEntry, RocksDBQueues
from .db import ReadOnlyDB, held_lock, is_rocksdb
from .messagestore import IndexEntry, RocksDBMessageStore, TimerEntry, TransEntry

__all__ = ["IndexEntry", "ReadOnlyDB", "RocksDBConsumeQueue", "RocksDBCqEntry", "RocksDBMessageStore",
           "RocksDBQueues", "TimerEntry", "TransEntry", "held_lock", "is_rocksdb"]
