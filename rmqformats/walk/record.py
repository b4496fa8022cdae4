"""One commit-log record decoded by the walk's kernels: the :class:`~rmqformats.message.Message` of a row,
of a record at a position of a buffer, and the typed error of a record the kernels reject.

There is one decoder of message records, :func:`rmqformats.walk.kernels.walk_records`; a record it
rejects is described by :func:`rmqformats.walk.kernels.check_record`, whose reason code and value are
worded here as the :class:`~rmqformats.errors.RecordError` subclass the scan, :meth:`read` and
:func:`decode_message` raise. This module imports no reader, so the segment helpers below the commit-log
reader can use it.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from .. import properties as props
from ..errors import BadMagicError, RecordError, RecordSizeError, TruncatedRecordError
from ..message import Message, crc32
from . import arrow as A
from . import kernels as K
from . import layout as L

# The row unpacking below takes the kernel's fields in this order: fail at import, not with wrong values.
assert (K.I32_SIZE, K.I32_BODY_CRC, K.I32_QUEUE_ID, K.I32_FLAG, K.I32_SYS_FLAG, K.I32_BORN_PORT, K.I32_STORE_PORT,
        K.I32_RECONSUME, K.I32_VERSION) == tuple(range(K.N_I32))
assert (K.I64_POS, K.I64_QUEUE_OFFSET, K.I64_PHYSICAL, K.I64_BORN_TS, K.I64_STORE_TS, K.I64_PREPARED,
        K.I64_BODY_POS, K.I64_BODY_LEN, K.I64_TOPIC_POS, K.I64_TOPIC_LEN, K.I64_PROPS_POS, K.I64_PROPS_LEN,
        K.I64_BORN_ADDR, K.I64_STORE_ADDR) == tuple(range(K.N_I64))

# A message is made from its 23 fields in the order MessageFields declares them.
assert len(Message._fields) == 23 and Message._fields[-3:] == ("segment", "file_offset", "record_crc")

_CRC_MARK = props.CRC32
_CRC_RESERVED = props.CRC32_RESERVED


def messages(w: A.Window, rows: np.ndarray) -> list[Message]:
    """The :class:`Message` of each of ``rows`` of a window, in order."""
    positions = w.i64[K.I64_POS][rows]
    return _messages(w.i32[:, rows].tolist(), w.i64[:, rows].tolist(), w.buf, (positions + w.base).tolist(),
                     (positions + w.file_pos).tolist(), itertools.repeat(w.path))


def placed_messages(w: A.Window, rows: np.ndarray, offsets: list[int], file_offsets: list[int],
                    paths: list[str]) -> list[Message]:
    """The :class:`Message` of each of ``rows`` of a window whose records come from many places (records
    gathered from several segments into one buffer, in the order of their bytes there): each row's
    commit-log offset, position in its file and segment path given."""
    return _messages(w.i32[:, rows].tolist(), w.i64[:, rows].tolist(), w.buf, offsets, file_offsets, paths)


def _messages(i32: list, i64: list, buf: np.ndarray, offsets: list, file_offsets: list, paths) -> list[Message]:
    """The messages of the kernel's rows as lists (one list per field) of a window ``buf``, rows in the order
    of their bytes there; each row's commit-log offset, file position and segment path from ``offsets``,
    ``file_offsets`` and ``paths``."""
    if not i32[0]:
        return []
    # One copy of the rows' bytes, sliced as bytes: cheaper per field than slicing the window's memory.
    lo = i64[K.I64_POS][0]
    data = buf[lo:i64[K.I64_POS][-1] + i32[K.I32_SIZE][-1]].tobytes()
    v6, v4, born_v6, store_v6 = L.ADDRESS_V6, L.ADDRESS_V4, L.BORN_V6, L.STORE_V6
    out = []
    append = out.append
    # Every field is given: the tuple is made directly, without the named tuple's Python-level __new__.
    make = tuple.__new__
    for (size, body_crc, queue_id, flag, sys_flag, born_port, store_port, reconsume, version,
         pos, queue_offset, physical, born_ts, store_ts, prepared, body_pos, body_len, topic_pos, topic_len,
         props_pos, props_len, born_addr, store_addr, offset, file_offset, path) in zip(*i32, *i64, offsets,
                                                                                        file_offsets, paths):
        at = props_pos - lo
        properties = data[at:at + props_len].decode("utf-8", "replace") if props_len else ""
        record_crc = None
        if _CRC_MARK in properties and size >= _CRC_RESERVED:
            record_crc = crc32(data[pos - lo:pos - lo + size - _CRC_RESERVED])
        born_addr -= lo
        store_addr -= lo
        body_pos -= lo
        topic_pos -= lo
        append(make(Message, (
            offset, size, version, body_crc, queue_id, flag, queue_offset, physical, sys_flag, born_ts,
            data[born_addr:born_addr + (v6 if sys_flag & born_v6 else v4)], born_port, store_ts,
            data[store_addr:store_addr + (v6 if sys_flag & store_v6 else v4)], store_port, reconsume, prepared,
            data[body_pos:body_pos + body_len], data[topic_pos:topic_pos + topic_len].decode("utf-8", "replace"),
            properties, path, file_offset, record_crc,
        )))
    return out


def bad_magic_error(segment: str | None, pos: int, magic: int) -> BadMagicError:
    """The error for a record whose magic code is not a message version."""
    return BadMagicError(segment, pos, f"bad magic 0x{magic & 0xFFFFFFFF:08x} (expected "
                                       f"0x{L.MAGIC_V1 & 0xFFFFFFFF:08x} or 0x{L.MAGIC_V2 & 0xFFFFFFFF:08x})")


def record_error(reason: int, value: int, segment: str | None, pos: int, size: int) -> RecordError:
    """The typed error of :func:`~rmqformats.walk.kernels.check_record`'s answer ``(reason, value)``
    for the record at ``pos`` whose TOTALSIZE is ``size``."""
    if reason == K.REC_HEADER_CUT:
        return TruncatedRecordError(segment, pos, f"{value} bytes left, less than a record header")
    if reason == K.REC_BAD_MAGIC:
        return bad_magic_error(segment, pos, value)
    if reason == K.REC_SMALL:
        return RecordSizeError(segment, pos, f"TOTALSIZE {size} is smaller than a record header")
    if reason == K.REC_PAST_END:
        return TruncatedRecordError(segment, pos, f"TOTALSIZE {size} runs past the end of the file "
                                                  f"({value} bytes left)")
    if reason == K.REC_NEGATIVE_TOPIC:
        return RecordSizeError(segment, pos, f"negative topic length {value}")
    return RecordSizeError(segment, pos, f"TOTALSIZE {size} disagrees with the field lengths"
                                         + ("" if value < 0 else f" ({value} bytes)"))


_scratch = threading.local()


def _as_array(buf) -> np.ndarray:
    return buf if isinstance(buf, np.ndarray) else np.frombuffer(buf, np.uint8)


def record_end(buf, pos: int, limit: int) -> int:
    """End of the message record at ``pos`` if its TOTALSIZE agrees with its field lengths within ``limit``, else -1."""
    if pos < 0:
        return -1
    reason, size = K.check_record(_as_array(buf), pos, min(limit, len(buf)))
    return pos + size if reason == K.REC_OK else -1


def decode_message(buf, pos: int, segment: str | None = None, base_offset: int = 0, *,
                   limit: int | None = None) -> Message:
    """Decode the message record at ``pos`` of ``buf`` (bytes, a memory map or a ``uint8`` array).

    Raises a :class:`RecordError` subclass, naming ``segment`` and ``pos``,
    where the broker's ``checkMessageAndReturnSize`` would fail: unknown
    magic, a record running past the end of ``buf`` (or ``limit``), or a
    TOTALSIZE that disagrees with the field lengths. BLANK and the zero tail
    are not messages and raise too. The record's commit-log offset is
    ``base_offset + pos``.
    """
    arr = _as_array(buf)
    end = len(arr) if limit is None else min(limit, len(arr))
    scratch = _scratch.__dict__
    i32 = scratch.get("i32")
    if i32 is None:  # one pair of row matrices per thread, reused: a record at a time needs one row
        i32 = scratch["i32"] = np.empty((K.N_I32, 1), np.int32)
        scratch["i64"] = np.empty((K.N_I64, 1), np.int64)
    i64 = scratch["i64"]
    # Trusted at ``pos``: the record is taken as it is, not checked as a frontier record.
    n = K.walk_records(arr, pos, end, True, pos + 1, 1, i32, i64, pos)[0] if 0 <= pos <= end else 0
    if n == 1:
        return _messages(i32.tolist(), i64.tolist(), arr, [base_offset + pos], [pos], [segment])[0]
    reason, value = K.check_record(arr, pos, end) if pos >= 0 else (K.REC_HEADER_CUT, end - pos)
    size = int.from_bytes(arr[pos:pos + 4].tobytes(), "big", signed=True) if 0 <= pos <= end - 4 else 0
    if reason == K.REC_OK:  # not reached: the walk stores every record the check passes
        reason, value = K.REC_LENGTHS, -1
    raise record_error(int(reason), int(value), segment, pos, size)
