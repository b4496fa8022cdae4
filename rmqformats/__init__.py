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
from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import checkout as _checkout

_checkout.install(_os.path.dirname(_os.path.abspath(__file__)))

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

# The readers load on first use (numpy, numba and the generated parsers behind them take seconds to import):
# ``import rmqformats`` stays quick, and the command installs its signal handlers before any of it loads.
_LAZY = {
    "BatchConsumeQueue": "batch_consumequeue",
    "BcqUnit": "batch_consumequeue",
    "QueueMessage": "batch_consumequeue",
    "Checkpoint": "checkpoint",
    "StoreState": "checkpoint",
    "Blank": "commitlog",
    "CommitLog": "commitlog",
    "DataEnd": "commitlog",
    "EndReason": "commitlog",
    "Scan": "commitlog",
    "Segment": "commitlog",
    "decode_message": "commitlog",
    "parse_msg_id": "commitlog",
    "ConsistencyReport": "consumequeue",
    "ConsumeQueue": "consumequeue",
    "CqUnit": "consumequeue",
    "ResolvedUnit": "consumequeue",
    "UnitStatus": "consumequeue",
    "IndexFile": "index",
    "IndexFiles": "index",
    "IndexHit": "index",
    "Message": "message",
    "QueueInfo": "queuefiles",
    "sample_store_path": "sample",
    "Store": "store",
    "open_store": "store",
}

if _TYPE_CHECKING:
    from .batch_consumequeue import BatchConsumeQueue, BcqUnit, QueueMessage
    from .checkpoint import Checkpoint, StoreState
    from .commitlog import Blank, CommitLog, DataEnd, EndReason, Scan, Segment, decode_message, parse_msg_id
    from .consumequeue import ConsistencyReport, ConsumeQueue, CqUnit, ResolvedUnit, UnitStatus
    from .index import IndexFile, IndexFiles, IndexHit
    from .message import Message
    from .queuefiles import QueueInfo
    from .sample import sample_store_path
    from .store import Store, open_store


def __getattr__(name: str):
    import importlib
    module = _LAZY.get(name)
    if module is None:  # a submodule not imported yet (``rmqformats.store`` after ``import rmqformats``)
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
