"""Message objects made from the rows of the columnar walk: the object API is a view over the one record walk.

:class:`MessageWalk` is :class:`~rmqformats.columnar.scan.ColumnarScan` with each block of rows the
kernel found handed on as :class:`~rmqformats.message.Message` objects instead of an Arrow batch: the
same records, the same end, BLANK records, checks (CRCs, the frontier record, ``DELAY``), errors and
live-store handling, because it is the same walk. :func:`record_message` reads one record's bytes with
the same kernel (:meth:`rmqformats.commitlog.CommitLog.read`).

A message's fields are taken from the kernel's per-record matrices in one ``tolist`` per block; its
text fields are decoded as the broker's readers do (UTF-8, invalid bytes replaced) and its byte fields
copied out of the window, so no message holds a view of a window that is reused.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .. import properties as props
from ..message import Message, crc32
from . import arrow as A
from . import kernels as K
from . import layout as L
from .scan import ColumnarScan

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
#: Rows the kernel decodes per call for the object view: few, so that the first message comes at once
#: and a block of messages (each holding its body) stays small.
ROWS = 1024


def messages(w: A.Window, rows: np.ndarray) -> list[Message]:
    """The :class:`Message` of each of ``rows`` of a window, in order."""
    i32 = w.i32[:, rows].tolist()
    i64 = w.i64[:, rows].tolist()
    if not rows.size:
        return []
    # One copy of the rows' bytes, sliced as bytes: cheaper per field than slicing the window's memory.
    lo = i64[K.I64_POS][0]
    data = w.buf[lo:i64[K.I64_POS][-1] + i32[K.I32_SIZE][-1]].tobytes()
    base, file_pos, path = w.base, w.file_pos, w.path
    v6, v4, born_v6, store_v6 = L.ADDRESS_V6, L.ADDRESS_V4, L.BORN_V6, L.STORE_V6
    out = []
    append = out.append
    # Every field is given: the tuple is made directly, without the named tuple's Python-level __new__.
    make = tuple.__new__
    for (size, body_crc, queue_id, flag, sys_flag, born_port, store_port, reconsume, version,
         pos, queue_offset, physical, born_ts, store_ts, prepared, body_pos, body_len, topic_pos, topic_len,
         props_pos, props_len, born_addr, store_addr) in zip(*i32, *i64):
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
            base + pos, size, version, body_crc, queue_id, flag, queue_offset, physical, sys_flag, born_ts,
            data[born_addr:born_addr + (v6 if sys_flag & born_v6 else v4)], born_port, store_ts,
            data[store_addr:store_addr + (v6 if sys_flag & store_v6 else v4)], store_port, reconsume, prepared,
            data[body_pos:body_pos + body_len], data[topic_pos:topic_pos + topic_len].decode("utf-8", "replace"),
            properties, path, file_pos + pos, record_crc,
        )))
    return out


class MessageWalk(ColumnarScan):
    """The columnar walk yielding lists of :class:`Message` objects (one list per block of rows)."""

    def _build(self, w: A.Window, rows: np.ndarray) -> Iterator[list[Message]]:  # type: ignore[override]
        yield messages(w, rows)


def record_message(data: bytes, segment: str, commitlog_offset: int, file_offset: int) -> Message | None:
    """The message of ``data``, the bytes of one whole record, or ``None`` when the walk rejects the record."""
    buf = np.frombuffer(data, np.uint8)
    i32 = np.empty((K.N_I32, 1), np.int32)
    i64 = np.empty((K.N_I64, 1), np.int64)
    # At the end of the data and trusted: the record is taken as it is, not checked as a frontier record.
    n, _stop, _pos = K.walk_records(buf, 0, len(buf), True, len(buf) + 1, 1, i32, i64, 0)
    if n != 1:
        return None
    window = A.Window(buf, i32, i64, commitlog_offset - file_offset, file_offset, segment, "")
    return messages(window, np.arange(1))[0]
