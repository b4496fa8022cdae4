"""Readers for Apache RocketMQ broker store files, generated from Kaitai Struct specs.

Start with :func:`open_store`::

    import rmqformats
    store = rmqformats.open_store("/data/rocketmq/store")
    scan = store.commitlog.scan()
    for msg in scan:
        print(msg.commitlog_offset, msg.topic, msg.tags, msg.body)
    print(scan.end)   # where and why the data ends
"""

from .commitlog import Blank, CommitLog, DataEnd, EndReason, Scan, Segment, decode_message, parse_msg_id
from .errors import (
    BadMagicError,
    CrcMismatchError,
    DecompressionError,
    InvalidMessageIdError,
    MessageNotFoundError,
    RecordError,
    RecordSizeError,
    RmqFormatError,
    StoreNotFoundError,
    TruncatedRecordError,
)
from .message import Message
from .sample import sample_store_path
from .store import Store, open_store

__version__ = "0.1.0"

__all__ = [
    "BadMagicError", "Blank", "CommitLog", "CrcMismatchError", "DataEnd", "DecompressionError",
    "EndReason", "InvalidMessageIdError", "Message", "MessageNotFoundError", "RecordError",
    "RecordSizeError", "RmqFormatError", "Scan", "Segment", "Store", "StoreNotFoundError",
    "TruncatedRecordError", "decode_message", "open_store", "parse_msg_id", "sample_store_path",
]
