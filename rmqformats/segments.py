"""Commit-log segments and their records: finding the segment files, the broker's checks beyond a
record's structure, finding record boundaries, and where and why the data of a commit log ends.

The commit-log reader (:mod:`rmqformats.commitlog`), the record walk (:mod:`rmqformats.walk`) and salvage
all stand on this module; it imports none of them at import time. Records are decoded by the walk's kernels
only, through :mod:`rmqformats.walk.record` (which imports no reader and no walk), loaded on first use.
Segments are read with ``pread`` (never memory-mapped, so a file cut while it is read gives
:class:`~rmqformats.errors.FileChangedError`, not SIGBUS).
"""

from __future__ import annotations

import enum
import os
import struct
import unicodedata
from dataclasses import dataclass
from typing import Protocol

from . import properties as props
from .errors import MessageNotFoundError, PropertyValueError, RecordError, StoreNotFoundError, display_path, place
from .generated.layouts import rocketmq_commitlog as layout
from .mapped import pread as _pread, pread_exact
from .message import Message
from .queuefiles import QUEUE_FILE_NAME, queue_files

SEGMENT_NAME = QUEUE_FILE_NAME

_HEAD = struct.Struct(layout.RECORD_RUNS[0][1])
_HEADER = _HEAD.size
MAGIC_V1 = layout.MAGIC_CODE["message_v1"]
MAGIC_V2 = layout.MAGIC_CODE["message_v2"]
MAGIC_BLANK = layout.MAGIC_CODE["blank"]
#: PHYSICALOFFSET: its position in a record and its format (the fifth field after the header).
assert layout.MESSAGE_SEQ[4] == "ofs_physical"
_run_fixed = layout.MESSAGE_RUNS[0][1][1:]
_POS_PHYSICAL = _HEADER + struct.calcsize(layout.ENDIAN + _run_fixed[:4])
_PHYSICAL = struct.Struct(layout.ENDIAN + _run_fixed[4])
#: The 4 bytes of each magic code, for finding record starts with ``find``.
_MAGIC_BYTES = tuple(_HEAD.pack(0, m)[4:] for m in (MAGIC_V1, MAGIC_V2, MAGIC_BLANK))
#: ``TopicValidator.RMQ_SYS_SCHEDULE_TOPIC``: its records' ``DELAY`` property is parsed by the broker's check.
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
#: Bytes read at a time when looking for data after zero-filled bytes.
_ZERO_CHUNK = 4 << 20
#: Zero bytes that make a zero-filled run after a record look like a tail or a hole, not part of a body.
_ZERO_RUN = 64


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
    #: An all-zero record header (the broker stops there too) with non-zero data after it.
    DATA_AFTER_ZEROS = "zero-filled record header with data after it"
    #: The last record before zero-filled bytes is not completely written (never returned as a message).
    UNFINISHED = "last record not completely written"
    #: A property the broker's check parses does not parse (``DELAY`` of a ``SCHEDULE_TOPIC_XXXX`` record).
    BAD_PROPERTY = "property the broker's check cannot parse"
    #: Live-store reading: the data ends at a record that is still being written (only zeros after it).
    WRITING = "record being written (live store)"

    @property
    def is_clean(self) -> bool:
        """True where a broker leaves the data after a clean write (no corruption)."""
        return self in (EndReason.ZERO_TAIL, EndReason.BLANK_LAST, EndReason.END_OF_FILE, EndReason.NO_SEGMENTS,
                        EndReason.WRITING)


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
    #: Bytes of data after the end (``DATA_AFTER_ZEROS``): in its segment up to the last non-zero
    #: byte, plus the later segment files that hold data.
    bytes_after: int = 0
    #: Message records a resync finds after the end in the same segment (``DATA_AFTER_ZEROS``).
    records_after: int = 0

    def __str__(self) -> str:
        where = place(display_path(self.segment), self.file_offset) if self.segment else "commitlog"
        text = f"{where}: {self.reason.value}"
        if self.detail:
            text = f"{text}: {self.detail}"
        if self.bytes_after:
            text += (f" ({self.bytes_after:,} bytes of data follow, {self.records_after:,} message record"
                     f"{'' if self.records_after == 1 else 's'} in this segment)")
        return text


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


# -- the broker's verdicts beyond the record structure -------------------------------------------

def java_parse_int(text: str) -> int | None:
    """``Integer.parseInt(text)``, or ``None`` where Java throws ``NumberFormatException``.

    An optional sign, then one or more decimal digits (any Unicode digit of
    the Basic Multilingual Plane, as ``Character.digit`` takes), within the
    32-bit range; leading zeros are allowed, spaces are not.
    """
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits:
        return None
    value = 0
    for c in digits:
        if ord(c) > 0xFFFF or not c.isdecimal():  # a supplementary character is two Java chars
            return None
        value = value * 10 + unicodedata.decimal(c)
        if value > 1 << 31:
            return None
    value = -value if text[0] == "-" else value
    return value if -(1 << 31) <= value < 1 << 31 else None


def check_record(msg: Message, verify_crc: bool = False, force_verify_prop_crc: bool = False) -> None:
    """Raise where the broker's ``checkMessageAndReturnSize`` fails a record whose structure is valid.

    With ``verify_crc`` the CRC the broker's recovery checks
    (:meth:`Message.verify_crc`: BODYCRC, for a body longer than 0 bytes;
    with ``force_verify_prop_crc`` the ``__CRC32#`` property instead).
    Always: a ``SCHEDULE_TOPIC_XXXX`` record whose ``DELAY`` property is not
    an integer, where the broker's ``Integer.parseInt`` throws and its
    recovery ends the data.
    """
    if verify_crc:
        msg.verify_crc(force_verify_prop_crc=force_verify_prop_crc)
    if msg.topic == SCHEDULE_TOPIC:
        value = msg.properties.get(props.DELAY)
        if value is not None and java_parse_int(value) is None:
            raise PropertyValueError(msg.segment, msg.file_offset,
                                     f"{props.DELAY} property {value!r} of a {SCHEDULE_TOPIC} record is not an "
                                     f"integer (the broker's check throws here)")


def unfinished_reason(msg: Message, record_crc: bool = True) -> str | None:
    """Why the last record before zero-filled bytes may not be completely written yet, or ``None``.

    The broker encodes a record whole and copies it, first byte to last,
    into a zero-filled file; a reader can see the header and the length
    fields (which pass the structure check) while the end of the record,
    the properties, is still zeros. Such a record has properties ending in
    NUL, a body that does not match BODYCRC, or a ``__CRC32#`` that does not
    match its bytes.
    """
    if msg.properties_raw.endswith("\0"):
        return "its properties end in zero bytes (not written yet)"
    if msg.body_raw and not msg.body_crc_ok:
        return "its body does not match BODYCRC"
    if record_crc and msg.record_crc_ok is False:
        return f"its bytes do not match its {props.CRC32} property"
    return None


# -- finding record starts (resync) and data after zero-filled bytes -----------------------------

def record_end(buf, pos: int, limit: int) -> int:
    """End of the message record at ``pos`` if its TOTALSIZE agrees with its field lengths within ``limit``, else -1.

    The walk's structure checks (:func:`rmqformats.walk.kernels.check_record`), reading length fields
    only, so that trying a candidate costs the same for any record size.
    """
    # Imported here: the record walk (rmqformats.walk) imports this module.
    from .walk.record import record_end as end
    return end(buf, pos, limit)

def _follows(buf, pos: int, limit: int, base: int, seg_size: int) -> bool:
    """Whether what starts at ``pos`` can follow a record: the file's end, zero fill, a BLANK or a record start."""
    if pos + _HEADER > limit:
        return pos <= limit
    size, magic = _HEAD.unpack_from(buf, pos)
    if magic == 0 and size == 0:
        run = bytes(buf[pos:min(pos + _ZERO_RUN, limit)])
        return run.count(0) == len(run)
    return is_record_start(buf, pos, limit, base, seg_size, confirm=False)


def is_record_start(buf, pos: int, limit: int, base: int, seg_size: int, confirm: bool = True) -> bool:
    """Whether a record starts at ``pos`` of a segment (``buf`` holds the file from position 0 to ``limit``).

    A BLANK whose TOTALSIZE reaches exactly the end of the segment
    (``seg_size`` bytes), or a message record whose PHYSICALOFFSET is its
    own commit-log offset (``base + pos``), whose field lengths agree with
    its TOTALSIZE and, with ``confirm``, after which comes the end of the
    file, zero fill, a BLANK or another such record. Bytes of a body that
    look like a record (a copied record keeps the offset it was written at)
    fail these checks.
    """
    if pos < 0 or pos + _HEADER > limit:
        return False
    size, magic = _HEAD.unpack_from(buf, pos)
    if magic == MAGIC_BLANK:
        return size == seg_size - pos
    if magic != MAGIC_V1 and magic != MAGIC_V2 or pos + _POS_PHYSICAL + _PHYSICAL.size > limit:
        return False
    if _PHYSICAL.unpack_from(buf, pos + _POS_PHYSICAL)[0] != base + pos:
        return False
    end = record_end(buf, pos, limit)
    if end < 0:
        return False
    return not confirm or _follows(buf, end, limit, base, seg_size)


def next_record_start(buf, begin: int, limit: int, base: int, seg_size: int) -> int | None:
    """The first position at or after ``begin`` where :func:`is_record_start` holds, or ``None``.

    Candidates are the places of the three magic codes, found with the
    buffer's own ``find`` (bytes or a memory map); each is checked in
    constant time, so the search is linear in the bytes searched.
    """
    hits = [[m, buf.find(m, begin + 4, limit)] for m in _MAGIC_BYTES]
    while True:
        live = [h for h in hits if h[1] >= 0]
        if not live:
            return None
        hit = min(live, key=lambda h: h[1])
        pos = hit[1] - 4
        if is_record_start(buf, pos, limit, base, seg_size):
            return pos
        hit[1] = buf.find(hit[0], hit[1] + 1, limit)


def count_records(buf, begin: int, limit: int, base: int, seg_size: int) -> int:
    """Message records found from ``begin`` to ``limit``: chains of valid records, resynced after each break."""
    n = 0
    pos = next_record_start(buf, begin, limit, base, seg_size)
    while pos is not None:
        end = record_end(buf, pos, limit)
        if end < 0:  # a BLANK (the segment's end) or a break in the chain
            if _HEAD.unpack_from(buf, pos)[1] == MAGIC_BLANK:
                break
            pos = next_record_start(buf, pos + 1, limit, base, seg_size)
            continue
        n += 1
        pos = end
    return n


# -- the same searches over a file, read with pread in bounded windows ---------------------------

#: Bytes a windowed search reads at a time (a record being checked may need more: its own size).
_SEARCH_WINDOW = 8 << 20
#: Least bytes a windowed check reads, so that a chain of small records takes few reads.
_CHECK_WINDOW = 1 << 20


class SegmentWindow:
    """Bytes of a segment file read with ``pread`` in bounded windows, for the record-start searches.

    The searches of :func:`next_record_start` and :func:`count_records` run
    on a memory map of the whole file in their plain form; a file that
    shrinks under a map ends the process with SIGBUS. These windows read at
    most :data:`_SEARCH_WINDOW` bytes at a time (or the size of one record
    being checked) and raise :class:`FileChangedError` when the file has
    become shorter than ``limit``. The checks see the same bytes as on the
    whole file, so the answers are the same.
    """

    def __init__(self, path: str, base: int, *, limit: int | None = None):
        self.path = path
        #: The commit-log offset of the file's first byte.
        self.base = base
        self._file = open(path, "rb", buffering=0)
        self._fd = self._file.fileno()
        #: The file's size when it was opened.
        self.size = os.fstat(self._fd).st_size
        #: Searches and checks read the file up to here (its size unless told).
        self.limit = self.size if limit is None else min(limit, self.size)
        self._data = b""
        self._lo = 0

    def close(self) -> None:
        self._data = b""
        self._file.close()

    def __enter__(self) -> "SegmentWindow":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def read(self, a: int, n: int) -> bytes:
        """``n`` bytes at ``a`` (fewer at the limit)."""
        return self._read(a, min(a + n, self.limit))

    def _read(self, a: int, b: int) -> bytes:
        return pread_exact(self._fd, b - a, a, self.path, self.size) if b > a else b""

    def _cover(self, a: int, b: int) -> None:
        """Make the window hold ``[a, b)`` (clipped to the limit); it starts at ``a`` when read again."""
        b = min(b, self.limit)
        if self._lo <= a and b <= self._lo + len(self._data):
            return
        self._data = b""  # drop the old window before reading the new one
        self._data = self._read(a, min(self.limit, max(b, a + _CHECK_WINDOW)))
        self._lo = a

    def _local(self, pos: int) -> tuple:
        """``(buf, pos, limit, base, seg_size)`` for the plain checks on the window."""
        lo = self._lo
        return self._data, pos - lo, len(self._data), self.base + lo, self.size - lo

    def _cover_record(self, pos: int) -> int:
        """Read the bytes of the record at ``pos`` that :func:`record_end` looks at; returns its end (or -1)."""
        limit = self.limit
        if pos + _HEADER > limit:
            return -1
        self._cover(pos, pos + _POS_PHYSICAL + _PHYSICAL.size)
        buf, p = self._data, pos - self._lo
        size, magic = _HEAD.unpack_from(buf, p)
        if magic != MAGIC_V1 and magic != MAGIC_V2 or size < _HEADER or pos + size > limit:
            return -1
        if pos + _POS_PHYSICAL + _PHYSICAL.size > limit or \
                _PHYSICAL.unpack_from(buf, p + _POS_PHYSICAL)[0] != self.base + pos:
            return -1
        self._cover(pos, pos + size)
        return pos + size

    def is_record_start(self, pos: int) -> bool:
        """:func:`is_record_start` at ``pos`` of the file, reading only the bytes it looks at."""
        limit = self.limit
        if pos < 0 or pos + _HEADER > limit:
            return False
        self._cover(pos, pos + _HEADER)
        size, magic = _HEAD.unpack_from(self._data, pos - self._lo)
        if magic == MAGIC_BLANK:
            return size == self.size - pos
        end = self._cover_record(pos)
        if end < 0:
            return False
        # What follows: zero fill (a run of it), a BLANK or a record (its own bytes).
        self._cover(pos, end + _HEADER)
        if end + _HEADER <= limit:
            nsize, nmagic = _HEAD.unpack_from(self._data, end - self._lo)
            if nsize == 0 and nmagic == 0:
                self._cover(pos, end + _ZERO_RUN)
            elif nmagic != MAGIC_BLANK:
                self._cover(pos, end + _POS_PHYSICAL + _PHYSICAL.size)
                if end + _POS_PHYSICAL + _PHYSICAL.size <= limit and \
                        _PHYSICAL.unpack_from(self._data, end - self._lo + _POS_PHYSICAL)[0] == self.base + end \
                        and nsize >= _HEADER:
                    self._cover(pos, end + nsize)
        return is_record_start(*self._local(pos))

    def next_record_start(self, begin: int) -> int | None:
        """:func:`next_record_start` from ``begin``: the magic codes are searched a window at a time."""
        limit = self.limit
        start = max(begin, 0)
        while start + _HEADER <= limit:
            stop = min(limit, start + _SEARCH_WINDOW)  # candidates in [start, stop)
            # The window reaches past ``stop`` by a header, so a candidate's PHYSICALOFFSET is in it.
            chunk = self._read(start, min(limit, stop + _POS_PHYSICAL + _PHYSICAL.size))
            hits = [[m, chunk.find(m, 4, stop - start + 4)] for m in _MAGIC_BYTES]
            while True:
                live = [h for h in hits if h[1] >= 0]
                if not live:
                    break
                hit = min(live, key=lambda h: h[1])
                pos = start + hit[1] - 4
                p = hit[1] - 4
                cheap = True  # a message record's PHYSICALOFFSET must be its own offset
                if hit[0] != _MAGIC_BYTES[2] and p + _POS_PHYSICAL + _PHYSICAL.size <= len(chunk):
                    cheap = _PHYSICAL.unpack_from(chunk, p + _POS_PHYSICAL)[0] == self.base + pos
                if pos >= begin and cheap and self.is_record_start(pos):
                    return pos
                hit[1] = chunk.find(hit[0], hit[1] + 1, stop - start + 4)
            start = stop
        return None

    def count_records(self, begin: int) -> int:
        """:func:`count_records` from ``begin`` to the limit."""
        n = 0
        pos = self.next_record_start(begin)
        while pos is not None:
            end = self._cover_record(pos)
            if end >= 0:
                end = record_end(*self._local(pos)[:3])
                end = end + self._lo if end >= 0 else -1
            if end < 0:  # a BLANK (the segment's end) or a break in the chain
                self._cover(pos, pos + _HEADER)
                if _HEAD.unpack_from(self._data, pos - self._lo)[1] == MAGIC_BLANK:
                    break
                pos = self.next_record_start(pos + 1)
                continue
            n += 1
            pos = end
        return n


def nonzero_span(path: str, begin: int, first_only: bool = False) -> tuple[int, int] | None:
    """``(first, last + 1)``: the positions of the first and last non-zero bytes of a file at or after ``begin``.

    ``None`` when every byte from ``begin`` is zero. Holes of a sparse file
    are skipped (``SEEK_DATA``/``SEEK_HOLE``); data is read in bounded chunks.
    """
    first = last = -1
    with open(path, "rb", buffering=0) as f:
        fd = f.fileno()
        size = os.fstat(fd).st_size
        pos = begin
        while pos < size:
            if hasattr(os, "SEEK_DATA"):
                try:
                    pos = os.lseek(fd, pos, os.SEEK_DATA)
                    hole = os.lseek(fd, pos, os.SEEK_HOLE)
                except OSError:  # no data after pos (ENXIO), or no support: read on
                    if not _seek_unsupported(fd):
                        break
                    hole = size
            else:
                hole = size
            while pos < hole:
                chunk = _pread(fd, min(_ZERO_CHUNK, hole - pos), pos)
                if not chunk:
                    pos = size
                    break
                if chunk != bytes(len(chunk)):  # a compare with zeros the size of what was read
                    if first < 0:
                        first = pos + len(chunk) - len(chunk.lstrip(b"\0"))
                    last = pos + len(chunk.rstrip(b"\0"))
                    if first_only:
                        return first, last
                pos += len(chunk)
    return None if first < 0 else (first, last)


def _seek_unsupported(fd: int) -> bool:
    try:
        os.lseek(fd, 0, os.SEEK_DATA)
    except OSError as exc:
        import errno
        return exc.errno != errno.ENXIO  # ENXIO: an all-hole file; anything else: no support
    return False


def classify_end(segments, index: int, pos: int, reason: EndReason, detail: str = "", *,
                 live: bool = False) -> DataEnd:
    """The :class:`DataEnd` at ``pos`` of ``segments[index]`` for the stop ``reason`` the walk found there.

    A zero header is ``ZERO_TAIL`` only when no data follows: not in its
    segment, nor in a later segment file; else ``DATA_AFTER_ZEROS`` with the
    bytes and records after. With ``live``, damage at the end of the last
    segment that a writer could be in the middle of (every non-zero byte
    after ``pos`` lies within the record the header there announces) is
    ``WRITING``, a clean end.
    """
    seg = segments[index]
    offset = seg.start_offset + pos
    last = index == len(segments) - 1
    if reason is EndReason.ZERO_TAIL:
        span = nonzero_span(seg.path, pos)
        later = sum(s.size for s in segments[index + 1:] if nonzero_span(s.path, 0, first_only=True) is not None)
        if span is None and not later:
            return DataEnd(offset, reason, seg.path, pos, detail)
        if live and last and span is not None and (span[1] <= pos + _frontier_size(seg, pos)
                                                   or _written_since(seg, pos)):
            # The header was zero when read; the writer has written the start of the record since.
            return DataEnd(offset, EndReason.WRITING, seg.path, pos, "only zeros follow the record being written")
        records = 0
        inside = 0
        if span is not None:
            inside = span[1] - pos
            with SegmentWindow(seg.path, seg.start_offset) as window:
                records = window.count_records(pos + 1)
        what = "in this segment" if span is not None else "in later segment files"
        return DataEnd(offset, EndReason.DATA_AFTER_ZEROS, seg.path, pos,
                       detail or f"the broker's recovery stops here too; data follows {what}",
                       inside + later, records)
    if live and not reason.is_clean and last:
        span = nonzero_span(seg.path, pos)
        if span is None or span[1] <= pos + _frontier_size(seg, pos):
            return DataEnd(offset, EndReason.WRITING, seg.path, pos,
                           f"{reason.value}{': ' + detail if detail else ''}; only zeros follow")
        if _written_since(seg, pos):
            return DataEnd(offset, EndReason.WRITING, seg.path, pos,
                           f"{reason.value}{': ' + detail if detail else ''}; completed while it was read")
    return DataEnd(offset, reason, seg.path, pos, detail)


def _written_since(seg: Segment, pos: int) -> bool:
    """Whether a complete message record is at ``pos`` now (a writer finished it after the walk read it)."""
    size = _frontier_size(seg, pos)
    with open(seg.path, "rb") as f:
        data = _pread(f.fileno(), size, pos)
    from .walk.record import decode_message  # the record walk (rmqformats.walk) imports this module
    try:
        return unfinished_reason(decode_message(data, 0, seg.path)) is None
    except RecordError:
        return False


def _frontier_size(seg: Segment, pos: int) -> int:
    """Bytes a record being written at ``pos`` can cover: its TOTALSIZE when plausible, else a header."""
    with open(seg.path, "rb") as f:
        head = _pread(f.fileno(), 4, pos)
    size = int.from_bytes(head, "big", signed=True) if len(head) == 4 else 0
    return size if _HEADER <= size <= seg.size - pos else _HEADER

#: Separates the folders of ``storePathCommitLog`` when segments are spread over several.
FOLDER_SEPARATOR = ";"


def split_folders(path: str) -> list[str]:
    """The folders of a ``storePathCommitLog`` value: one, or several separated by ``;``.

    A broker splits the value on ``rocketmq.broker.multiPathSplitter``
    (``,`` unless set); ``,`` is taken as the separator too when no ``;``
    is given and the whole text names no file or folder.
    """
    if FOLDER_SEPARATOR in path:
        parts = path.split(FOLDER_SEPARATOR)
    elif "," in path and not os.path.exists(path):
        parts = path.split(",")
    else:
        return [path]
    return [p for p in (p.strip() for p in parts) if p]


def discover_segments(path: str) -> list[Segment]:
    """The segment files of a commit-log folder, several folders (``;``) or one segment file, in offset order."""
    folders = split_folders(path)
    if len(folders) > 1:
        # MultiPathMappedFileQueue: the files of every folder, in the order of their names.
        found: dict[int, Segment] = {}
        for folder in folders:
            if not os.path.isdir(folder):
                raise StoreNotFoundError(folder, None, "commit-log folder not found (one of several)")
            for f in queue_files(folder):
                other = found.get(f.start)
                if other is not None:
                    raise StoreNotFoundError(f.path, None, f"segment {f.name} is in two folders "
                                                           f"(also {other.path})")
                found[f.start] = Segment(f.path, f.start, f.size)
        return [found[k] for k in sorted(found)]
    if os.path.isfile(path):
        name = os.path.basename(path)
        start = int(name) if SEGMENT_NAME.match(name) else 0
        return [Segment(path, start, os.path.getsize(path))]
    return [Segment(f.path, f.start, f.size) for f in queue_files(path)]




def segment_index(path: str, segments: tuple[Segment, ...], offset: int) -> int:
    """Index of the segment (of those of the commit log at ``path``, in offset order) holding commit-log
    ``offset``; raises :class:`MessageNotFoundError`."""
    for i in range(len(segments) - 1, -1, -1):
        seg = segments[i]
        if seg.start_offset <= offset:
            if offset < seg.start_offset + seg.size:
                return i
            break
    raise MessageNotFoundError(path, None, f"offset {offset} is in no segment file")


class SegmentLog(Protocol):
    """What the walks over a commit log use of it (:class:`rmqformats.commitlog.CommitLog` is one)."""

    path: str
    record_crc: bool

    @property
    def segments(self) -> tuple[Segment, ...]: ...

    def segment_index(self, offset: int) -> int: ...
