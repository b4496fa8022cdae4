"""Readers for Apache RocketMQ broker store files, generated from Kaitai Struct specs.

Start with :func:`open_store`::

    import rmqformats
    store = rmqformats.open_store("/data/rocketmq/store")
    scan = store.commitlog.scan()
    for msg in scan:
        print(msg.commitlog_offset, msg.topic, msg.tags, msg.body)
    print(scan.end)   # where and why the data ends
"""

import os as _os

from . import checkout as _checkout

_checkout.install(_os.path.dirname(_os.path.abspath(__file__)))

from .batch_consumequeue import BatchConsumeQueue, BcqUnit, QueueMessage
from .checkpoint import Checkpoint, StoreState
from .commitlog import Blank, CommitLog, DataEnd, EndReason, Scan, Segment, decode_message, parse_msg_id
from .consumequeue import ConsistencyReport, ConsumeQueue, CqUnit, ResolvedUnit, UnitStatus
from .errors import (
    BadMagicError,
    CheckpointError,
    ConfigError,
    ConfigSchemaError,
    ConfigSyntaxError,
    CrcMismatchError,
    DecompressionError,
    DLedgerEntryError,
    ExtUnitError,
    ExtUnitNotFoundError,
    FileChangedError,
    IndexChainLoopError,
    IndexFileError,
    IndexRangeError,
    IndexSizeError,
    InvalidMessageIdError,
    MessageNotFoundError,
    QueueFileError,
    RecordError,
    RecordSizeError,
    RmqFormatError,
    StoreNotFoundError,
    TieredFileError,
    TieredIndexError,
    TimerLogError,
    TimerWheelError,
    TruncatedRecordError,
    TruncatedTimerUnitError,
    UnitMismatchError,
    UnitNotFoundError,
)
from .errors import PropertyValueError, UnfinishedRecordError
from .index import IndexFile, IndexFiles, IndexHit
from .message import Message
from .queuefiles import QueueInfo
from .sample import sample_store_path
from .store import Store, open_store

__version__ = "0.1.0"

__all__ = [
    "BadMagicError", "BatchConsumeQueue", "BcqUnit", "Blank", "Checkpoint", "CheckpointError", "CommitLog",
    "ConfigError", "ConfigSchemaError", "ConfigSyntaxError", "ConsistencyReport", "ConsumeQueue", "CqUnit",
    "CrcMismatchError", "DataEnd", "DecompressionError", "DLedgerEntryError", "EndReason", "ExtUnitError", "ExtUnitNotFoundError",
    "FileChangedError", "IndexChainLoopError", "IndexFile", "IndexFileError", "IndexFiles", "IndexHit", "IndexRangeError",
    "IndexSizeError", "InvalidMessageIdError", "Message", "MessageNotFoundError", "QueueFileError", "QueueInfo",
    "QueueMessage", "RecordError", "RecordSizeError", "ResolvedUnit", "RmqFormatError", "Scan", "Segment",
    "Store", "StoreNotFoundError", "StoreState", "TieredFileError", "TieredIndexError", "TimerLogError", "TimerWheelError", "TruncatedRecordError",
    "TruncatedTimerUnitError", "UnitMismatchError", "UnitNotFoundError", "UnitStatus", "decode_message",
    "open_store", "parse_msg_id", "sample_store_path",
]
__all__ += ["PropertyValueError", "UnfinishedRecordError"]
