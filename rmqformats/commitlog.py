"""Reading the commit log: segments, the record scan, and where the data ends.

The scan mirrors the broker's recovery (``CommitLog.checkMessageAndReturnSize``
in a loop): records are read one after the other; a BLANK record sends the
scan to the next segment; anything else that is not a valid message (the
zero-filled tail, an unknown magic code, a record cut by the end of the file,
a size that disagrees with the fields, a CRC mismatch when CRCs are checked)
ends the data of the whole commit log. Files are memory-mapped read-only and
decoded in place, so a 1 GiB segment costs address space, not memory.
"""

from __future__ import annotations

import enum
import mmap
import os
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from . import properties as props
from .errors import (
    BadMagicError,
    CrcMismatchError,
    MessageNotFoundError,
    RecordError,
    RecordSizeError,
    TruncatedRecordError,
    InvalidMessageIdError,
    display_path,
)
from .generated.layouts import rocketmq_commitlog as layout
from .message import Message, crc32

SEGMENT_NAME = re.compile(r"^\d{20}$")

# The hot path below reads fields in the spec's order; fail at import, not
# with wrong values, if the spec's field order changes.
assert layout.RECORD_SEQ == ("len_record", "magic", "body")
assert layout.MESSAGE_SEQ == (
    "body_crc", "queue_id", "flag", "queue_offset", "ofs_physical", "sys_flag", "born_timestamp",
    "born_host", "store_timestamp", "store_host", "reconsume_times", "ofs_prepared_transaction",
    "len_body", "body", "len_topic", "topic", "len_properties", "properties",
)
assert layout.HOST_SEQ == ("address", "port")

_HEAD = struct.Struct(layout.RECORD_RUNS[0][1])
_RUN_FIXED, _RUN_STORE_TS, _RUN_TAIL, _RUN_PROPS = (struct.Struct(fmt) for _, fmt in layout.MESSAGE_RUNS)
_PORT = struct.Struct(layout.HOST_RUNS[0][1])
_LEN_TOPIC = {v2: struct.Struct(fmt) for v2, fmt in layout.MESSAGE_LEN_TOPIC_FORMATS.items()}
_ADDRESS = layout.HOST_ADDRESS_SIZES
_BORN_V6 = layout.SYS_FLAG_BITS["is_born_host_v6"][0]
_STORE_V6 = layout.SYS_FLAG_BITS["is_store_host_v6"][0]
MAGIC_V1 = layout.MAGIC_CODE["message_v1"]
MAGIC_V2 = layout.MAGIC_CODE["message_v2"]
MAGIC_BLANK = layout.MAGIC_CODE["blank"]
_HEADER = _HEAD.size
_CRC32_RESERVED = len(props.CRC32) + 12  # name, U+0001, 10 digits, U+0002
_PROPERTY_CRC_MARK = props.CRC32


class EndReason(enum.Enum):
    """Why the valid data of the commit log ends where it does."""

    ZERO_TAIL = "zero-filled tail"
    BLANK_LAST = "BLANK record in the last segment"
    END_OF_FILE = "end of the last segment file"
    NO_SEGMENTS = "no segment files"
    TRUNCATED = "record cut off by the end of the file"
    BAD_MAGIC = "bad magic code"
    BAD_SIZE = "record size disagrees with its fields"
    CRC_MISMATCH = "CRC mismatch"

    @property
    def is_clean(self) -> bool:
        """True where a broker leaves the data after a clean write (no corruption)."""
        return self in (EndReason.ZERO_TAIL, EndReason.BLANK_LAST, EndReason.END_OF_FILE, EndReason.NO_SEGMENTS)


@dataclass(frozen=True)
class DataEnd:
    """Where and why the scan stopped: the broker's recovery would truncate here."""

    #: Commit-log offset of the first byte after the valid data.
    offset: int
    reason: EndReason
    #: The segment file in which the data ends (``None`` without segments).
    segment: str | None
    #: Position in that file.
    file_offset: int
    #: Details of a corrupt record (empty for a clean end).
    detail: str = ""

    def __str__(self) -> str:
        where = f"{display_path(self.segment)} @ 0x{self.file_offset:x}" if self.segment else "commitlog"
        text = f"{where}: {self.reason.value}"
        return f"{text}: {self.detail}" if self.detail else text


@dataclass(frozen=True)
class Blank:
    """A BLANK end-of-segment record."""

    commitlog_offset: int
    #: TOTALSIZE: bytes from the record to the end of its segment.
    length: int
    segment: str
    file_offset: int


@dataclass(frozen=True)
class Segment:
    """One commit-log segment file."""

    path: str
    #: Commit-log offset of the file's first byte (its 20-digit name).
    start_offset: int
    #: File size in bytes.
    size: int

    @property
    def name(self) -> str:
        """The file name."""
        return os.path.basename(self.path)


def _open_ro(path: str) -> mmap.mmap | None:
    """Map ``path`` read-only; ``None`` for an empty file, which mmap cannot map."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return None
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def decode_message(buf, pos: int, segment: str | None = None, base_offset: int = 0) -> Message:
    """Decode the message record at ``pos`` of ``buf`` (bytes, mmap or memoryview).

    Raises a :class:`RecordError` subclass, naming ``segment`` and ``pos``,
    where the broker's ``checkMessageAndReturnSize`` would fail: unknown
    magic, a record running past the end of ``buf``, or a TOTALSIZE that
    disagrees with the field lengths. BLANK and the zero tail are not
    messages and raise too; :meth:`CommitLog.scan` handles them.
    """
    limit = len(buf)
    if pos + _HEADER > limit:
        raise TruncatedRecordError(segment, pos, f"{limit - pos} bytes left, less than a record header")
    size, magic = _HEAD.unpack_from(buf, pos)
    if magic == MAGIC_V1:
        v2 = False
    elif magic == MAGIC_V2:
        v2 = True
    else:
        raise BadMagicError(segment, pos, f"bad magic 0x{magic:08x} (expected 0x{MAGIC_V1:08x} or 0x{MAGIC_V2:08x})")
    end = pos + size
    if size < _HEADER:
        raise RecordSizeError(segment, pos, f"TOTALSIZE {size} is smaller than a record header")
    if end > limit:
        raise TruncatedRecordError(segment, pos, f"TOTALSIZE {size} runs past the end of the file "
                                                 f"({limit - pos} bytes left)")
    rec = memoryview(buf)[pos:end]
    try:
        return _decode_fields(rec, v2, size, pos, segment, base_offset)
    finally:
        # An exported buffer would keep the mmap from closing.
        rec.release()


def _decode_fields(rec: memoryview, v2: bool, size: int, pos: int, segment: str | None, base_offset: int) -> Message:
    try:
        (body_crc, queue_id, flag, queue_offset, physical, sys_flag,
         born_ts) = _RUN_FIXED.unpack_from(rec, _HEADER)
        p = _HEADER + _RUN_FIXED.size
        n = _ADDRESS[bool(sys_flag & _BORN_V6)]
        born_address = bytes(rec[p:p + n])
        (born_port,) = _PORT.unpack_from(rec, p + n)
        p += n + _PORT.size
        (store_ts,) = _RUN_STORE_TS.unpack_from(rec, p)
        p += _RUN_STORE_TS.size
        n = _ADDRESS[bool(sys_flag & _STORE_V6)]
        store_address = bytes(rec[p:p + n])
        (store_port,) = _PORT.unpack_from(rec, p + n)
        p += n + _PORT.size
        reconsume, prepared, len_body = _RUN_TAIL.unpack_from(rec, p)
        p += _RUN_TAIL.size
        if len_body > 0:
            body = bytes(rec[p:p + len_body])
            p += len_body
        else:
            body = b""
        fmt = _LEN_TOPIC[v2]
        (len_topic,) = fmt.unpack_from(rec, p)
        p += fmt.size
        if len_topic < 0:
            raise RecordSizeError(segment, pos, f"negative topic length {len_topic}")
        topic = str(rec[p:p + len_topic], "utf-8", "replace")
        p += len_topic
        (len_props,) = _RUN_PROPS.unpack_from(rec, p)
        p += _RUN_PROPS.size
        if len_props > 0:
            properties = str(rec[p:p + len_props], "utf-8", "replace")
            p += len_props
        else:
            properties = ""
    except struct.error:
        p = size + 1  # a field ran past TOTALSIZE; reported below
    if p != size:
        raise RecordSizeError(segment, pos, f"TOTALSIZE {size} disagrees with the field lengths "
                                            f"({'at least ' if p > size else ''}{p} bytes)")
    record_crc = None
    if _PROPERTY_CRC_MARK in properties and size >= _CRC32_RESERVED:
        record_crc = crc32(rec[:size - _CRC32_RESERVED])
    return Message(
        base_offset + pos, size, 2 if v2 else 1, body_crc, queue_id, flag, queue_offset, physical,
        sys_flag, born_ts, born_address, born_port, store_ts, store_address, store_port, reconsume,
        prepared, body, topic, properties, segment, pos, record_crc,
    )


def _discover(path: str) -> list[Segment]:
    if os.path.isfile(path):
        name = os.path.basename(path)
        start = int(name) if SEGMENT_NAME.match(name) else 0
        return [Segment(path, start, os.path.getsize(path))]
    out = []
    for name in os.listdir(path):
        full = os.path.join(path, name)
        if SEGMENT_NAME.match(name) and os.path.isfile(full):
            out.append(Segment(full, int(name), os.path.getsize(full)))
    out.sort(key=lambda s: s.start_offset)
    return out


class Scan:
    """An iterator of the messages of a commit log, in commit-log order.

    After it is exhausted, :attr:`end` tells where and why the data ended and
    :attr:`blanks` lists the BLANK records passed. With ``strict=True`` a
    corrupt end raises its :class:`RecordError` instead of ending quietly.
    """

    def __init__(self, commitlog: "CommitLog", start: int | None, verify_crc: bool, strict: bool):
        self.end: DataEnd | None = None
        self.blanks: list[Blank] = []
        #: Bytes of commit log covered so far (for progress reports).
        self.bytes_done = 0
        self._gen = self._run(commitlog, start, verify_crc, strict)

    def __iter__(self) -> "Scan":
        return self

    def __next__(self) -> Message:
        return next(self._gen)

    def _stop(self, seg: Segment, pos: int, reason: EndReason, detail: str = "") -> None:
        self.end = DataEnd(seg.start_offset + pos, reason, seg.path, pos, detail)

    def _run(self, commitlog: "CommitLog", start: int | None, verify_crc: bool, strict: bool) -> Iterator[Message]:
        segments = commitlog.segments
        if not segments:
            self.end = DataEnd(0, EndReason.NO_SEGMENTS, None, 0)
            return
        first = 0
        pos = 0
        if start is not None:
            first = commitlog.segment_index(start)
            pos = start - segments[first].start_offset
        for i in range(first, len(segments)):
            seg = segments[i]
            last = i == len(segments) - 1
            mm = _open_ro(seg.path)
            buf = mm if mm is not None else b""
            limit = len(buf)
            try:
                while True:
                    if pos == limit:
                        self._stop(seg, pos, EndReason.END_OF_FILE if last else EndReason.TRUNCATED,
                                   "" if last else "segment file ends without a BLANK record")
                        return
                    if pos + _HEADER > limit:
                        self._stop(seg, pos, EndReason.TRUNCATED, f"{limit - pos} bytes left, less than a record header")
                        if strict:
                            raise TruncatedRecordError(seg.path, pos, self.end.detail)
                        return
                    size, magic = _HEAD.unpack_from(buf, pos)
                    if magic == MAGIC_BLANK:
                        self.blanks.append(Blank(seg.start_offset + pos, size, seg.path, pos))
                        if last:
                            self._stop(seg, pos, EndReason.BLANK_LAST)
                            return
                        break
                    if magic == 0 and size == 0:
                        self._stop(seg, pos, EndReason.ZERO_TAIL)
                        return
                    try:
                        msg = decode_message(buf, pos, seg.path, seg.start_offset)
                        if verify_crc:
                            msg.verify_crc()
                    except RecordError as exc:
                        reason = {BadMagicError: EndReason.BAD_MAGIC, TruncatedRecordError: EndReason.TRUNCATED,
                                  CrcMismatchError: EndReason.CRC_MISMATCH}.get(type(exc), EndReason.BAD_SIZE)
                        self._stop(seg, pos, reason, exc.reason)
                        if strict:
                            raise
                        return
                    pos += size
                    self.bytes_done += size
                    yield msg
            finally:
                del buf
                if mm is not None:
                    mm.close()
            self.bytes_done += seg.size - pos
            pos = 0


class CommitLog:
    """The commit log of a store: its segment files, in offset order."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.segments: tuple[Segment, ...] = tuple(_discover(self.path))

    def __repr__(self) -> str:
        return f"CommitLog({self.path!r}, {len(self.segments)} segments)"

    @property
    def total_size(self) -> int:
        """Sum of the segment file sizes."""
        return sum(s.size for s in self.segments)

    def segment_index(self, offset: int) -> int:
        """Index of the segment holding commit-log ``offset``; raises :class:`MessageNotFoundError`."""
        for i in range(len(self.segments) - 1, -1, -1):
            seg = self.segments[i]
            if seg.start_offset <= offset:
                if offset < seg.start_offset + seg.size:
                    return i
                break
        raise MessageNotFoundError(self.path, None, f"offset {offset} is in no segment file")

    def scan(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False) -> Scan:
        """Iterate the messages from ``start`` (default: the first segment's start).

        ``verify_crc`` checks each body CRC (and ``__CRC32#`` where present)
        and ends the data at the first mismatch, as recovery with
        ``checkCRCOnRecover`` does.
        """
        return Scan(self, start, verify_crc, strict)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.scan())

    def read(self, offset: int) -> Message:
        """The message whose record starts at commit-log ``offset``."""
        seg = self.segments[self.segment_index(offset)]
        pos = offset - seg.start_offset
        mm = _open_ro(seg.path)
        if mm is None:
            raise MessageNotFoundError(seg.path, pos, "empty segment file")
        try:
            return decode_message(mm, pos, seg.path, seg.start_offset)
        except BadMagicError as exc:
            raise MessageNotFoundError(seg.path, pos, f"no message starts here ({exc.reason})") from None
        finally:
            mm.close()

    def read_msg_id(self, msg_id: str) -> Message:
        """The message of an offset message id (32 or 56 hex characters)."""
        address, port, offset = parse_msg_id(msg_id)
        msg = self.read(offset)
        if (msg.store_address, msg.store_port) != (address, port) or msg.physical_offset != offset:
            raise MessageNotFoundError(msg.segment, msg.file_offset,
                                       f"message id {msg_id} names another store host or offset than "
                                       f"the record here ({msg.msg_id})")
        return msg


def parse_msg_id(msg_id: str) -> tuple[bytes, int, int]:
    """Split an offset message id into (store address, store port, commit-log offset)."""
    try:
        raw = bytes.fromhex(msg_id)
    except ValueError:
        raise InvalidMessageIdError(f"message id {msg_id!r} is not hexadecimal") from None
    if len(raw) not in (16, 28):
        raise InvalidMessageIdError(f"message id {msg_id!r} has {len(msg_id)} characters, expected 32 or 56")
    n = len(raw) - 12
    return raw[:n], int.from_bytes(raw[n:n + 4], "big", signed=True), int.from_bytes(raw[n + 4:], "big", signed=True)
