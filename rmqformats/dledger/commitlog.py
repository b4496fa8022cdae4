"""The commit log of a broker in DLedger mode: entries of the DLedger file store, each wrapping one message.

The walk follows the DLedger library's recovery
(``DLedgerMmapFileStore.recover``, DLedger 0.3.1.2 as used by RocketMQ 4.9
and 5.x): entries are read one after the other; the BLANK filler (magic -1)
sends the walk to the next file; a zero size (the pre-allocated tail), a
``pos`` field other than the entry's position, a body length other than
the size minus 48, an entry running past the end of its file, a magic other
than 1, an index that does not follow the previous one or a smaller term
ends the data at the start of that entry. The message inside each entry is
decoded by the commit-log walk's kernels
(:func:`rmqformats.columnar.record.decode_message`); one that RocketMQ's
dispatch would reject (``DLedgerCommitLog.checkMessageAndReturnSize``) ends
the data there too, since no reader can hand it out as a message.

Messages carry the offsets RocketMQ gives them: ``commitlog_offset`` is the
entry's position plus 48 (``DLedgerEntry.BODY_OFFSET``), the value the broker
writes into PHYSICALOFFSET and the consume queues; ``file_offset`` is the
record's position in its file. :attr:`DataEnd.offset` is an entry position
(DLedger's ``processOffset``).
"""

from __future__ import annotations

import enum
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..commitlog import CommitLog
from ..segments import (
    MAGIC_V1,
    MAGIC_V2,
    Blank,
    DataEnd,
    EndReason,
    Segment,
    _HEAD,
)
from ..columnar.record import bad_magic_error, decode_message
from ..errors import (
    BadMagicError,
    CrcMismatchError,
    DLedgerEntryError,
    FileChangedError,
    MessageNotFoundError,
    RecordError,
    RecordSizeError,
    TruncatedRecordError,
)
from ..generated.layouts import rocketmq_dledger_data as layout
from ..mapped import pread as _pread
from ..message import Message
from .columnar import DLedgerColumnarScan, refuse_options

assert layout.RECORD_RUNS[0][0] == ("magic", "len_entry")
assert layout.ENTRY_BODY_RUNS[0][0] == ("index", "term", "ofs_entry", "channel", "chain_crc", "body_crc", "len_body")

_MAGIC_SIZE = struct.Struct(layout.RECORD_RUNS[0][1])
_BODY_HEAD = struct.Struct(layout.ENDIAN + layout.ENTRY_BODY_RUNS[0][1][1:])
#: ``DLedgerEntry.BODY_OFFSET``: bytes of the entry before the message record.
BODY_OFFSET = _MAGIC_SIZE.size + _BODY_HEAD.size
#: ``DLedgerEntry.HEADER_SIZE`` (the header without the body length).
HEADER_SIZE = BODY_OFFSET - 4
ENTRY_MAGIC = layout.ENTRY_MAGIC["normal"]
#: Bytes read from a data file at a time (more for a longer entry).
WINDOW = 4 << 20
BLANK_MAGIC = layout.ENTRY_MAGIC["blank"]
assert BODY_OFFSET == 48


class DLedgerEndReason(enum.Enum):
    """Ends of the data that only the DLedger framing has (the others are :class:`EndReason`)."""

    BAD_POSITION = "entry's pos field is not its position"
    BAD_BODY_SIZE = "entry's body length disagrees with its size"
    INDEX_GAP = "entry index does not follow the previous one"
    TERM_DECREASE = "entry term smaller than the previous one"

    @property
    def is_clean(self) -> bool:
        """Never: a broker does not leave these after a clean write."""
        return False


@dataclass(frozen=True)
class DLedgerEntry:
    """One DLedger entry and the message inside it."""

    #: The entry's number in the DLedger log.
    index: int
    term: int
    #: Position of the entry in the data files' byte stream (its ``pos`` field).
    position: int
    #: Size of the whole entry (header and message record).
    size: int
    channel: int
    chain_crc: int
    body_crc: int
    #: The data file and the entry's position in it.
    segment: str
    file_offset: int
    message: Message


class DLedgerScan:
    """An iterator of the messages of a DLedger commit log, in log order.

    After it is exhausted, :attr:`end` tells where and why the data ended (an
    entry position) and :attr:`blanks` lists the BLANK fillers passed;
    :attr:`entries` (with ``keep_entries``) the :class:`DLedgerEntry`
    headers. With ``strict=True`` a corrupt end raises its typed error.
    """

    def __init__(self, log: "DLedgerCommitLog", start: int | None, verify_crc: bool, strict: bool,
                 with_entries: bool = False):
        self.end: DataEnd | None = None
        self.blanks: list[Blank] = []
        self.bytes_done = 0
        #: Index and term of the last entry read.
        self.last_index = -1
        self.last_term = -1
        self._gen = self._run(log, start, verify_crc, strict, with_entries)

    def __iter__(self):
        return self._gen

    def __next__(self):
        return next(self._gen)

    def _stop(self, seg: Segment, pos: int, reason, detail: str = "", strict: bool = False,
              error: type[RecordError] = DLedgerEntryError) -> None:
        self.end = DataEnd(seg.start_offset + pos, reason, seg.path, pos, detail)
        if strict and not reason.is_clean:
            raise error(seg.path, pos, detail or reason.value)

    def _run(self, log: "DLedgerCommitLog", start: int | None, verify_crc: bool, strict: bool,
             with_entries: bool) -> Iterator:
        segments = log.segments
        if not segments:
            self.end = DataEnd(0, EndReason.NO_SEGMENTS, None, 0)
            return
        first = 0
        if start is not None:
            first = log.segment_index(start)
        last_index = last_term = -1
        for i in range(first, len(segments)):
            seg = segments[i]
            last = i == len(segments) - 1
            # Read in windows with pread, never mapped: a file that shrinks gives a short read (a typed
            # error) where a mapping would end the process with SIGBUS.
            fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            win, wstart = b"", 0
            pos = 0
            try:
                limit = os.fstat(fd).st_size

                def need(at: int, n: int) -> None:
                    nonlocal win, wstart
                    if at >= wstart and at + n <= wstart + len(win):
                        return
                    want = min(max(WINDOW, n), limit - at)
                    data = _pread(fd, want, at)
                    if len(data) < want:
                        raise FileChangedError(seg.path, at + len(data), f"the file shrank while it was read "
                                                                         f"(it had {limit} bytes)")
                    win, wstart = data, at

                while True:
                    left = limit - pos
                    if left == 0:
                        if last:
                            self._stop(seg, pos, EndReason.END_OF_FILE)
                        else:
                            self._stop(seg, pos, EndReason.TRUNCATED, "data file ends without a BLANK filler",
                                       strict, TruncatedRecordError)
                        return
                    if left < 8:
                        self._stop(seg, pos, EndReason.TRUNCATED, f"{left} bytes left, less than an entry header",
                                   strict, TruncatedRecordError)
                        return
                    if pos < wstart or pos + BODY_OFFSET > wstart + len(win):
                        need(pos, min(BODY_OFFSET, left))
                    w = pos - wstart
                    magic, size = _MAGIC_SIZE.unpack_from(win, w)
                    if magic == BLANK_MAGIC:
                        self.blanks.append(Blank(seg.start_offset + pos, size, seg.path, pos))
                        if last:
                            # The recovery's processOffset moves to the end of the file.
                            self._stop(seg, limit, EndReason.BLANK_LAST)
                            return
                        break
                    if size == 0:
                        if magic == 0:
                            self._stop(seg, pos, EndReason.ZERO_TAIL)
                        else:
                            self._stop(seg, pos, EndReason.BAD_MAGIC if magic != ENTRY_MAGIC else
                                       DLedgerEndReason.BAD_BODY_SIZE, f"entry size 0 (magic {magic})", strict)
                        return
                    if left < BODY_OFFSET:
                        self._stop(seg, pos, EndReason.TRUNCATED,
                                   f"{left} bytes left, less than the {BODY_OFFSET}-byte entry header",
                                   strict, TruncatedRecordError)
                        return
                    index, term, position, channel, chain_crc, body_crc, len_body = \
                        _BODY_HEAD.unpack_from(win, w + 8)
                    where = seg.start_offset + pos
                    if position != where:
                        self._stop(seg, pos, DLedgerEndReason.BAD_POSITION,
                                   f"entry pos {position} is not its position {where}", strict)
                        return
                    if len_body + BODY_OFFSET != size:
                        self._stop(seg, pos, DLedgerEndReason.BAD_BODY_SIZE,
                                   f"entry size {size} is not body length {len_body} + {BODY_OFFSET}", strict)
                        return
                    if size > left:
                        self._stop(seg, pos, EndReason.TRUNCATED,
                                   f"entry size {size} runs past the end of the file ({left} bytes left)",
                                   strict, TruncatedRecordError)
                        return
                    if magic != ENTRY_MAGIC:
                        self._stop(seg, pos, EndReason.BAD_MAGIC,
                                   f"bad entry magic 0x{magic & 0xFFFFFFFF:08x} (expected 0x{ENTRY_MAGIC:08x})", strict, BadMagicError)
                        return
                    if last_index != -1 and index != last_index + 1:
                        self._stop(seg, pos, DLedgerEndReason.INDEX_GAP,
                                   f"entry index {index} after {last_index}", strict)
                        return
                    if term < last_term:
                        self._stop(seg, pos, DLedgerEndReason.TERM_DECREASE,
                                   f"entry term {term} after {last_term}", strict)
                        return
                    if pos + size > wstart + len(win):
                        need(pos, size)
                        w = pos - wstart
                    p = w + BODY_OFFSET
                    try:
                        if len_body < _HEAD.size:
                            raise TruncatedRecordError(seg.path, p, f"entry body of {len_body} bytes, "
                                                                    "less than a record header")
                        rsize, rmagic = _HEAD.unpack_from(win, p)
                        if rmagic != MAGIC_V1 and rmagic != MAGIC_V2:
                            raise bad_magic_error(seg.path, p, rmagic)
                        if rsize != len_body:
                            raise RecordSizeError(seg.path, p, f"TOTALSIZE {rsize} is not the entry's "
                                                               f"body length {len_body}")
                        msg = decode_message(win, p, seg.path, seg.start_offset + wstart, limit=w + size)
                        msg = msg._replace(file_offset=pos + BODY_OFFSET)
                        if verify_crc:
                            msg.verify_crc()
                    except RecordError as exc:
                        exc = type(exc)(exc.path, pos + BODY_OFFSET + ((exc.offset or p) - p), exc.reason)
                        reason = {BadMagicError: EndReason.BAD_MAGIC, TruncatedRecordError: EndReason.TRUNCATED,
                                  CrcMismatchError: EndReason.CRC_MISMATCH}.get(type(exc), EndReason.BAD_SIZE)
                        self.end = DataEnd(where, reason, seg.path, pos,
                                           f"message of entry {index} @ 0x{pos + BODY_OFFSET:x}: {exc.reason}")
                        if strict:
                            raise exc from None
                        return
                    last_index, last_term = index, term
                    self.last_index, self.last_term = index, term
                    pos += size
                    self.bytes_done += size
                    if with_entries:
                        yield DLedgerEntry(index, term, position, size, channel, chain_crc, body_crc,
                                           seg.path, pos - size, msg)
                    else:
                        yield msg
            finally:
                os.close(fd)
            self.bytes_done += seg.size - pos


class DLedgerCommitLog(CommitLog):
    """A DLedger commit log: the data files of ``dledger-<selfId>/data`` (or several folders).

    The same API as :class:`~rmqformats.commitlog.CommitLog`: :meth:`scan`,
    :meth:`read` (by message offset, the entry position plus 48),
    :meth:`read_msg_id` and the columnar :meth:`batches`; plus
    :meth:`entries` and the entry :meth:`index`.
    """

    layout = "dledger"

    def __repr__(self) -> str:
        return f"DLedgerCommitLog({self.path!r}, {len(self.segments)} files)"

    @property
    def index_folder(self) -> str | None:
        """The library's ``index/`` folder beside ``data/``, when there is one."""
        from ..segments import split_folders
        folder = os.path.normpath(split_folders(self.path)[0])
        if os.path.isfile(folder):
            folder = os.path.dirname(folder)
        index = os.path.join(os.path.dirname(folder), "index")
        return index if os.path.isdir(index) else None

    def scan(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False,
             **options) -> DLedgerScan:
        """Iterate the messages (from the file holding ``start``); see the module docstring."""
        refuse_options(self.path, options, "a DLedger commit log")
        return DLedgerScan(self, start, verify_crc, strict)

    def entries(self, *, verify_crc: bool = False, strict: bool = False) -> DLedgerScan:
        """Iterate the :class:`DLedgerEntry` objects (headers and messages); ``end`` as :meth:`scan`."""
        return DLedgerScan(self, None, verify_crc, strict, with_entries=True)

    def batches(self, columns=None, **options):
        """Messages as :class:`pyarrow.RecordBatch` objects, with the filters of :meth:`CommitLog.batches`."""
        return DLedgerColumnarScan(self, columns=columns, **options)

    def read_entry(self, position: int) -> DLedgerEntry:
        """The entry that starts at ``position`` of the data files, with its message."""
        seg = self.segments[self.segment_index(position)]
        pos = position - seg.start_offset
        fd = self._fd(seg.path)
        head = _pread(fd, BODY_OFFSET, pos)
        if len(head) < BODY_OFFSET:
            raise TruncatedRecordError(seg.path, pos, f"{len(head)} bytes left, less than an entry header")
        magic, size = _MAGIC_SIZE.unpack_from(head, 0)
        index, term, ofs, channel, chain_crc, body_crc, len_body = _BODY_HEAD.unpack_from(head, 8)
        if magic == BLANK_MAGIC:
            raise MessageNotFoundError(seg.path, pos, "no entry starts here (the BLANK filler)")
        if magic != ENTRY_MAGIC or ofs != position:
            raise MessageNotFoundError(seg.path, pos, f"no entry starts here (magic {magic}, pos {ofs})")
        if len_body + BODY_OFFSET != size:
            raise DLedgerEntryError(seg.path, pos, f"entry size {size} is not body length {len_body} + {BODY_OFFSET}")
        left = seg.size - pos
        if size > left:
            raise TruncatedRecordError(seg.path, pos, f"entry size {size} runs past the end of the file "
                                                      f"({left} bytes left)")
        data = _pread(fd, len_body, pos + BODY_OFFSET)
        p = pos + BODY_OFFSET
        if len(data) < _HEAD.size:
            raise TruncatedRecordError(seg.path, p, "entry body shorter than a record header")
        rsize, rmagic = _HEAD.unpack_from(data, 0)
        if rmagic != MAGIC_V1 and rmagic != MAGIC_V2:
            raise bad_magic_error(seg.path, p, rmagic)
        try:
            msg = decode_message(data, 0, seg.path, seg.start_offset + p)
        except RecordError as exc:
            raise type(exc)(exc.path, p + (exc.offset or 0), exc.reason) from None
        return DLedgerEntry(index, term, ofs, size, channel, chain_crc, body_crc, seg.path, pos,
                            msg._replace(file_offset=p))

    def read(self, offset: int) -> Message:
        """The message whose record starts at ``offset`` (its entry's position plus 48)."""
        seg = self.segments[self.segment_index(offset)]
        if offset - seg.start_offset < BODY_OFFSET:
            raise MessageNotFoundError(seg.path, offset - seg.start_offset,
                                       f"no message starts here (offset {offset} is inside an entry header)")
        return self.read_entry(offset - BODY_OFFSET).message

    def index(self):
        """The entry index files (``index/``), or ``None`` without them."""
        from .index import DLedgerIndex
        folder = self.index_folder
        return None if folder is None else DLedgerIndex(folder)


class MixedScan:
    """The messages of the old commit log, then those of the DLedger log; ``end`` is where the data ends."""

    def __init__(self, log: "MixedCommitLog", start: int | None, verify_crc: bool, strict: bool):
        self.end: DataEnd | None = None
        self.blanks: list[Blank] = []
        self.last_index = self.last_term = -1
        self._scans: list = []
        self._gen = self._run(log, start, verify_crc, strict)

    @property
    def bytes_done(self) -> int:
        return sum(s.bytes_done for s in self._scans)

    def __iter__(self):
        return self._gen

    def __next__(self):
        return next(self._gen)

    def _run(self, log, start, verify_crc, strict):
        divided = log.divided_offset
        if start is None or start < divided:
            old = log.old.scan(start=start, verify_crc=verify_crc, strict=strict)
            self._scans.append(old)
            yield from old
            self.blanks.extend(old.blanks)
            self.end = old.end
            if not old.end.reason.is_clean:
                return
            start = None
        new = log.new.scan(start=start, verify_crc=verify_crc, strict=strict)
        self._scans.append(new)
        yield from new
        self.blanks.extend(new.blanks)
        self.end = new.end
        self.last_index, self.last_term = new.last_index, new.last_term


class MixedCommitLog(DLedgerCommitLog):
    """A store switched to DLedger: the old ``commitlog/`` up to ``dividedCommitlogOffset``, then the DLedger data.

    RocketMQ's ``DLedgerCommitLog`` reads offsets below the first DLedger
    file's start from the old commit log (which it closed with a BLANK
    record) and the others from DLedger.
    """

    layout = "dledger"

    def __init__(self, old: str, new: str):
        self.old = CommitLog(old)
        self.new = DLedgerCommitLog(new)
        self.path = new
        self._fds = {}
        self.segments = (*self.old.segments, *self.new.segments)

    def __repr__(self) -> str:
        return f"MixedCommitLog({self.old.path!r}, {self.new.path!r})"

    @property
    def divided_offset(self) -> int:
        """``dividedCommitlogOffset``: where the DLedger data starts."""
        return self.new.segments[0].start_offset if self.new.segments else \
            max((s.start_offset + s.size for s in self.old.segments), default=0)

    def scan(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False,
             **options) -> MixedScan:
        refuse_options(self.path, options, "a DLedger commit log")
        return MixedScan(self, start, verify_crc, strict)

    def entries(self, *, verify_crc: bool = False, strict: bool = False) -> DLedgerScan:
        return self.new.entries(verify_crc=verify_crc, strict=strict)

    def read(self, offset: int) -> Message:
        return self.new.read(offset) if offset >= self.divided_offset else self.old.read(offset)

    def read_entry(self, position: int) -> DLedgerEntry:
        return self.new.read_entry(position)

    @property
    def index_folder(self) -> str | None:
        return self.new.index_folder

    def close(self) -> None:
        self.old.close()
        self.new.close()
