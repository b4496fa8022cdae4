"""The walk of a DLedger commit log: entries stepped over by a compiled kernel, their messages decoded by the
commit-log walk's record decoder, as Arrow batches or as the object API's messages and entries.

The walk follows the DLedger library's recovery (``DLedgerMmapFileStore.recover``,
DLedger 0.3.1.2 as used by RocketMQ 4.9 and 5.x): entries are read one after
the other; the BLANK filler (magic -1) sends the walk to the next file; a
zero size (the pre-allocated tail), a ``pos`` field other than the entry's
position, a body length other than the size minus the header, an entry
running past the end of its file, a magic other than 1, an index that does
not follow the previous one or a smaller term ends the data at the start of
that entry. The message record inside each entry is decoded by
:func:`rmqformats.walk.kernels.decode_record`, the decoder of the plain
commit-log walk, inlined into :func:`~rmqformats.walk.kernels.walk_entries`;
one that RocketMQ's dispatch would reject
(``DLedgerCommitLog.checkMessageAndReturnSize``) ends the data there too. The
entry header's widths come from ``formats/rocketmq_dledger_data.ksy``
(:mod:`rmqformats.walk.layout`).

:class:`DLedgerColumnarScan` is a :class:`~rmqformats.walk.scan.ColumnarScan`
whose segments are walked entry by entry: the filters, the columns, the
bounded batches and the decompression are that scan's. The object API
(:class:`rmqformats.dledger.commitlog.DLedgerScan`) is a view over it
(:class:`MessageWalk`, :class:`EntryWalk`). Data files are read with
``pread`` into a reused window, never mapped: a file that shrinks gives a
short read (a :class:`~rmqformats.errors.FileChangedError`) where a mapping
would end the process with SIGBUS.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from ..walk import arrow as A
from ..walk import kernels as K
from ..walk import layout as L
from ..walk.chain import refuse_options
from ..walk.record import bad_magic_error, decode_message, messages
from ..walk.scan import ColumnarScan, _first_crc_mismatch, _read_into, _Stop
from ..errors import (
    BadMagicError,
    CrcMismatchError,
    DLedgerEntryError,
    FileChangedError,
    RecordError,
    RecordSizeError,
    TruncatedRecordError,
)
from ..frames import from_numpy
from ..message import Message
from ..segments import Blank, DataEnd, EndReason, Segment
from .entry import DLedgerEndReason, DLedgerEntry

#: ``DLedgerEntry.BODY_OFFSET``: bytes of an entry before its message record.
BODY_OFFSET = L.ENTRY_HEADER
ENTRY_MAGIC = L.ENTRY_MAGIC
_I64_MAX = np.iinfo(np.int64).max
#: Bytes read from a data file at a time (more for a longer entry).
WINDOW = 4 << 20
#: Bytes read at a time when looking for the first entry of a range.
_FIND_WINDOW = 64 << 10
#: Options of the plain walk that only tune its speed (this walk runs in one process; on several, see
#: :mod:`rmqformats.dledger.parallel`).
_PERFORMANCE = ("threads", "range_size", "jobs")
#: Options of the plain walk that the entry walk takes.
_TAKEN = ("batch_size", "decompress", "verify_crc", "strict", "start", "topic", "queue_id", "tag", "key",
          "since", "until", "from_offset", "to_offset", "stop", "max_body_size", "max_batch_bytes")
#: The entry header's fields as columns the DLedger walk adds to the message columns (asked for by name;
#: not in its batches by default), in this order, each with its kernel row and Arrow type.
ENTRY_SCHEMA = pa.schema([
    ("entryIndex", pa.int64()),
    ("entryTerm", pa.int64()),
    # The entry's ``pos`` field: its position in the data files' byte stream (commitLogOffset - 48).
    ("entryPosition", pa.int64()),
    ("entrySize", pa.int32()),
    ("entryChannel", pa.int32()),
    ("entryChainCrc", pa.int32()),
    ("entryBodyCrc", pa.int32()),
])
ENTRY_COLUMNS: tuple[str, ...] = tuple(ENTRY_SCHEMA.names)
_ENTRY_ROWS = {"entryIndex": K.E_INDEX, "entryTerm": K.E_TERM, "entryPosition": K.E_POS, "entrySize": K.E_SIZE,
               "entryChannel": K.E_CHANNEL, "entryChainCrc": K.E_CHAIN_CRC, "entryBodyCrc": K.E_BODY_CRC}
_ENTRY_DTYPES = {f.name: f.type.to_pandas_dtype() for f in ENTRY_SCHEMA}
_RECORD_REASONS = {BadMagicError: EndReason.BAD_MAGIC, TruncatedRecordError: EndReason.TRUNCATED,
                   CrcMismatchError: EndReason.CRC_MISMATCH}


def resolve_entry_columns(columns) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The message columns and the entry columns named by ``columns`` (a name or an iterable of names;
    ``None``: every message column and no entry column), each in schema order; ``ValueError`` for an
    unknown name, ``TypeError`` for anything but names."""
    if columns is None:
        return A.COLUMNS, ()
    names = [columns] if isinstance(columns, str) else columns
    try:
        names = list(names)
    except TypeError:
        names = None
    if names is None or not all(isinstance(c, str) for c in names):
        return A.resolve_columns(columns), ()  # its TypeError
    unknown = [c for c in names if c not in A.COLUMNS and c not in ENTRY_COLUMNS and A.property_of(c) is None]
    if unknown:
        raise ValueError(f"unknown column(s) {', '.join(map(repr, unknown))}; the columns of a DLedger commit log "
                         f"are {', '.join(A.COLUMNS + ENTRY_COLUMNS)}, and {A.PROPERTY_PREFIX}NAME for the value "
                         "of property NAME")
    return (A.resolve_columns([c for c in names if c not in ENTRY_COLUMNS]),
            tuple(c for c in ENTRY_COLUMNS if c in names))


class DLedgerColumnarScan(ColumnarScan):
    """The batches of :class:`~rmqformats.columnar.ColumnarScan` (its options and attributes), over a DLedger
    commit log; plus :attr:`last_index` and :attr:`last_term`, those of the last entry read (-1 before
    the first).

    ``columns`` may also name the entry header's fields (:data:`ENTRY_COLUMNS`), which follow the message
    columns in the batches; with no ``columns``, the batches hold the message columns alone, as a plain
    commit log's do. ``threads``, ``range_size`` and ``jobs`` are accepted and have no effect here (the walk
    on several cores is :class:`rmqformats.dledger.parallel.ParallelDLedgerScan`); ``window_size`` is the
    bytes read from a data file at a time. ``live``, ``predicate`` and the other options of the plain walk's
    recovery modes are typed errors.
    """

    def __init__(self, log, *, columns=None, window_size: int | None = None, **options):
        refuse_options(log.path, {k: v for k, v in options.items() if k not in _TAKEN + _PERFORMANCE},
                       "this layout")
        start = options.get("start")
        message_columns, entry_columns = resolve_entry_columns(columns)
        super().__init__(log, columns=message_columns, **{k: v for k, v in options.items() if k in _TAKEN})
        #: The entry columns asked for, after the message columns :meth:`_build_rows` builds.
        self._entry_columns = entry_columns
        if entry_columns:
            self.columns = self.columns + entry_columns
            self.schema = pa.schema([*self.schema, *(ENTRY_SCHEMA.field(c) for c in entry_columns)])
        # Entries are found from the start of the data file holding ``start`` (from the first with a
        # ``from_offset``, whose filter leaves the earlier messages out), as DLedger's recovery reads them.
        self._start = start
        # ``stop`` ends the walk before the first message at or after it, as ``to_offset`` does.
        if self._stop_at is not None:
            self._to = self._stop_at if self._to is None else min(self._to, self._stop_at)
            self._stop_at = None
        self._window = max(WINDOW if window_size is None else int(window_size), BODY_OFFSET)
        self.last_index = -1
        self.last_term = -1
        self._entries = np.empty((K.N_E, 1), np.int64)
        #: Index and term of the entry before the current block of rows.
        self._before = (-1, -1)
        #: Index and term of the first entry walked (see :meth:`_range_begin`).
        self._first: tuple[int, int] | None = None

    # -- the walk -------------------------------------------------------------------------

    def _run(self) -> Iterator:
        segments = self._log.segments
        if not segments:
            self.end = DataEnd(0, EndReason.NO_SEGMENTS, None, 0)
            return
        first = 0 if self._start is None else self._log.segment_index(self._start)
        try:
            for i in range(first, len(segments)):
                seg = segments[i]
                last = i == len(segments) - 1
                fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                try:
                    size = os.fstat(fd).st_size
                    outcome = yield from self._walk(seg, fd, size, 0, size + 1, last, self._progress)
                    self._segment_done(seg, size, outcome, last)
                except _Stop as stop:
                    self._stopped(stop)
                    return
                finally:
                    os.close(fd)
        finally:
            self._windows.clear()
            self._chunks.clear()

    def _segment_done(self, seg: Segment, size: int, outcome: tuple, last: bool) -> None:
        """Act on how the walk of a data file ended: its BLANK filler (the last file's ends the data at the
        end of the file, where the recovery's processOffset moves), or a range's end."""
        if outcome[0] == "limit":
            raise _Stop(None)
        here, blank_size = outcome[1], outcome[2]
        self.blanks.append(Blank(seg.start_offset + here, blank_size, seg.path, here))
        if last:
            raise _Stop(DataEnd(seg.start_offset + size, EndReason.BLANK_LAST, seg.path, size, ""))
        self.bytes_done += size - here

    def _walk(self, seg: Segment, fd: int, size: int, pos: int, limit: int, last: bool, progress) -> Iterator:
        """Yield the batches of the messages of the entries that start in ``[pos, limit)`` of a data file
        (``pos``: an entry's start), the entries checked against :attr:`last_index` and :attr:`last_term`.

        Returns ``("limit", p)`` at the first entry at or after ``limit``,
        or ``("blank", p, size)`` at the file's BLANK filler; raises
        :class:`_Stop` where the data ends.
        """
        cap = self._batch_size
        buf = np.empty(self._window, np.uint8)
        i32 = np.empty((K.N_I32, cap), np.int32)
        i64 = np.empty((K.N_I64, cap), np.int64)
        e64 = np.empty((K.N_E, cap + 1), np.int64)
        wstart, got = pos, 0  # the window holds the file's bytes [wstart, wstart + got)
        # An entry that starts before ``limit`` and runs past it is walked alone, its whole window given to
        # the kernel; else the kernel sees the window up to ``limit`` only, so never an entry at or after it.
        alone = False
        while True:
            if pos >= limit:
                return ("limit", pos)
            cut = limit - wstart < got and not alone
            before = self.last_index, self.last_term
            n, stop, spos, last_index, last_term = K.walk_entries(
                buf, pos - wstart, limit - wstart if cut else got, size - wstart, seg.start_offset + wstart,
                1 if alone else cap, i32, i64, e64, self.last_index, self.last_term)
            if n:
                w = A.Window(buf, i32, i64, seg.start_offset, wstart, seg.path, os.path.basename(seg.path))
                self._entries = e64
                self._before = before
                if self._first is None:
                    self._first = (int(e64[K.E_INDEX, 0]), int(e64[K.E_TERM, 0]))
                yield from self._emit(w, n, fd, size)
            self.last_index, self.last_term = last_index, last_term
            progress(wstart + spos - pos)
            pos = wstart + spos
            if stop == K.ESTOP_FULL:
                alone = False
                continue
            if stop == K.ESTOP_WINDOW:
                if cut and pos < limit:
                    alone = True
                    continue
                left = size - pos
                # The header, or the whole entry once its header is read.
                want = min(BODY_OFFSET, left) if pos + min(BODY_OFFSET, left) > wstart + got else int(e64[K.E_SIZE, n])
                want = min(max(self._window, want), left)
                if want > len(buf):
                    buf = np.empty(want, np.uint8)
                data = _read_into(fd, buf, want, pos)
                if data < want:
                    raise FileChangedError(seg.path, pos + data, f"the file shrank while it was read "
                                                                 f"(it had {size} bytes)")
                wstart, got = pos, want
                continue
            if stop == K.ESTOP_BLANK:
                return ("blank", pos, int(e64[K.E_SIZE, n]))
            raise self._entry_stop(seg, buf, wstart, pos, size, stop, e64[:, n], last)

    def _entry_stop(self, seg: Segment, buf: np.ndarray, wstart: int, pos: int, size: int, stop: int,
                    head: np.ndarray, last: bool) -> _Stop:
        """The end of the data at the entry at ``pos`` where the kernel stopped (``head``: the header
        fields it read), with the error a strict walk raises."""
        left = size - pos
        magic, entry_size, index, term, position, _, _, _, len_body, _ = head.tolist()

        def stop_here(reason, detail: str = "", error: type[RecordError] = DLedgerEntryError) -> _Stop:
            end = DataEnd(seg.start_offset + pos, reason, seg.path, pos, detail)
            return _Stop(end, None if reason.is_clean else error(seg.path, pos, detail or reason.value))
        if stop == K.ESTOP_EOF:
            if last:
                return stop_here(EndReason.END_OF_FILE)
            return stop_here(EndReason.TRUNCATED, "data file ends without a BLANK filler", TruncatedRecordError)
        if stop == K.ESTOP_SHORT:
            return stop_here(EndReason.TRUNCATED, f"{left} bytes left, less than an entry header", TruncatedRecordError)
        if stop == K.ESTOP_SIZE_ZERO:
            if magic == 0:
                return stop_here(EndReason.ZERO_TAIL)
            return stop_here(EndReason.BAD_MAGIC if magic != ENTRY_MAGIC else DLedgerEndReason.BAD_BODY_SIZE,
                             f"entry size 0 (magic {magic})")
        if stop == K.ESTOP_HEADER_CUT:
            return stop_here(EndReason.TRUNCATED, f"{left} bytes left, less than the {BODY_OFFSET}-byte entry header",
                             TruncatedRecordError)
        if stop == K.ESTOP_BAD_POSITION:
            return stop_here(DLedgerEndReason.BAD_POSITION,
                             f"entry pos {position} is not its position {seg.start_offset + pos}")
        if stop == K.ESTOP_BAD_BODY_SIZE:
            return stop_here(DLedgerEndReason.BAD_BODY_SIZE,
                             f"entry size {entry_size} is not body length {len_body} + {BODY_OFFSET}")
        if stop == K.ESTOP_PAST_END:
            return stop_here(EndReason.TRUNCATED,
                             f"entry size {entry_size} runs past the end of the file ({left} bytes left)",
                             TruncatedRecordError)
        if stop == K.ESTOP_BAD_MAGIC:
            return stop_here(EndReason.BAD_MAGIC,
                             f"bad entry magic 0x{magic & 0xFFFFFFFF:08x} (expected 0x{ENTRY_MAGIC:08x})", BadMagicError)
        if stop == K.ESTOP_INDEX_GAP:
            return stop_here(DLedgerEndReason.INDEX_GAP, f"entry index {index} after {self.last_index}")
        if stop == K.ESTOP_TERM_DECREASE:
            return stop_here(DLedgerEndReason.TERM_DECREASE, f"entry term {term} after {self.last_term}")
        # ESTOP_BAD_RECORD: the message record, which lies whole in the window, worded by the record's own check.
        w = pos - wstart
        p = w + BODY_OFFSET
        try:
            if len_body < L.HEADER:
                raise TruncatedRecordError(seg.path, p, f"entry body of {len_body} bytes, less than a record header")
            reason, value = K.check_record(buf, p, w + entry_size)
            if reason == K.REC_BAD_MAGIC:
                raise bad_magic_error(seg.path, p, int(value))
            total = int.from_bytes(bytes(buf[p:p + 4]), "big", signed=True)
            if total != len_body:
                raise RecordSizeError(seg.path, p, f"TOTALSIZE {total} is not the entry's body length {len_body}")
            decode_message(buf, p, seg.path, seg.start_offset + wstart, limit=w + entry_size)
            raise RecordSizeError(seg.path, p, "not a message record")  # not reached: the kernel rejected it
        except RecordError as exc:
            return self._record_stop(seg, pos, index, exc, (exc.offset or p) - p)

    def _record_stop(self, seg: Segment, pos: int, index: int, exc: RecordError, within: int) -> _Stop:
        """The end of the data at the entry at ``pos`` whose message ``exc`` rejects (``within`` bytes
        into the record)."""
        err = type(exc)(exc.path, pos + BODY_OFFSET + within, exc.reason)
        reason = _RECORD_REASONS.get(type(exc), EndReason.BAD_SIZE)
        end = DataEnd(seg.start_offset + pos, reason, seg.path, pos,
                      f"message of entry {index} @ 0x{pos + BODY_OFFSET:x}: {exc.reason}")
        return _Stop(end, err)

    def _passing(self, w: A.Window, n: int) -> int:
        """The rows before the first whose body CRC fails (with ``verify_crc``), as the object API checked."""
        return _first_crc_mismatch(w, np.arange(n)) if self._verify_crc else n

    def _row_stop(self, w: A.Window, row: int, fd: int, size: int) -> _Stop:
        e64 = self._entries
        if row:
            self.last_index, self.last_term = int(e64[K.E_INDEX, row - 1]), int(e64[K.E_TERM, row - 1])
        else:
            self.last_index, self.last_term = self._before
        msg = messages(w, np.array([row]))[0]
        pos = w.file_pos + int(e64[K.E_AT, row])
        seg = Segment(w.path, w.seg_start, size)
        try:
            msg.verify_crc()
        except CrcMismatchError as exc:
            return self._record_stop(seg, pos, int(e64[K.E_INDEX, row]), exc, 0)
        raise AssertionError("a row the CRC check rejected passes it")  # not reached

    # -- what a range of entries carries: the index and term of the entry before it --------------

    def _range_begin(self) -> None:
        self.last_index = self.last_term = -1
        self._before = (-1, -1)
        self._first = None

    def _range_state(self) -> tuple:
        """``(index and term of the range's first entry or None, last index, last term)``."""
        return self._first, self.last_index, self.last_term

    def _continues(self, state: tuple) -> bool:
        """Whether a range walked from no entry before (:meth:`_range_begin`) is what this walk gives from here:
        its first entry follows :attr:`last_index` and :attr:`last_term` as the recovery requires. A range
        that read no entry does not say, and is walked again here."""
        first = state[0]
        if first is None:
            return False
        index, term = first
        if self.last_index != -1 and (self.last_index == _I64_MAX or index != self.last_index + 1):
            return False
        return term >= self.last_term

    def _carry(self, state: tuple) -> None:
        # A range that stopped before its first entry was taken (a filter's end, a CRC) read none.
        if state[1] != -1:
            self.last_index, self.last_term = state[1], state[2]

    def _range_start(self, fd: int, seg: Segment, size: int, begin: int, end: int) -> int | None:
        """The first entry that starts in ``[begin, end)`` of a data file, or ``None``: the first position
        with the entry magic code whose ``pos`` field is its own position and whose size is its body length
        and header, so that bytes of a message that look like an entry are not taken for one."""
        magic = ENTRY_MAGIC.to_bytes(4, "big", signed=True)
        head = np.empty((K.N_E, 1), np.int64)
        end = min(end, size)
        pos = begin
        while pos < end:
            data = os.pread(fd, min(_FIND_WINDOW, size - pos), pos)
            if len(data) < BODY_OFFSET:
                return None
            buf = np.frombuffer(data, np.uint8)
            i = data.find(magic, L.ENTRY_POS_MAGIC)
            while i != -1:
                p = i - L.ENTRY_POS_MAGIC
                if pos + p >= end:
                    return None
                if p + BODY_OFFSET > len(data):
                    break  # its header is cut by the window: the next one starts with it
                K.entry_header(buf, p, head, 0, True)
                if head[K.E_POS, 0] == seg.start_offset + pos + p and \
                        head[K.E_LEN_BODY, 0] + BODY_OFFSET == head[K.E_SIZE, 0]:
                    return pos + p
                i = data.find(magic, i + 1)
            pos += len(data) - BODY_OFFSET + 1
        return None

    def _build_rows(self, w: A.Window, rows: np.ndarray, decoded: list | None = None) -> Iterator[pa.RecordBatch]:
        if not self._entry_columns:
            yield from super()._build_rows(w, rows, decoded)
            return
        # The message columns as the plain walk builds them (in more than one batch where their bodies outgrow
        # one; with entry columns alone, one batch of every row), then the entry fields of the same rows from
        # the kernel's entry matrix of this block.
        e64 = self._entries
        at = 0
        parts = super()._build_rows(w, rows, decoded) if self._message_columns else [None]
        for batch in parts:
            n = len(rows) if batch is None else batch.num_rows
            picked = rows[at:at + n]
            at += n
            entries = [from_numpy(e64[_ENTRY_ROWS[c]][picked].astype(_ENTRY_DTYPES[c])) for c in self._entry_columns]
            yield pa.RecordBatch.from_arrays(([] if batch is None else batch.columns) + entries, schema=self.schema)

    # -- what the plain walk has and the entry walk has not ---------------------------------

    def _may_skip(self, seg: Segment, size: int, pos: int, last: bool) -> bool:
        return False  # a file's store times are not cached: every entry is walked for its index and term

    def _times_key(self, seg: Segment, size: int, pos: int, limit: int, last: bool, fd: int | None = None):
        return None

    def _built(self, *args) -> Iterator:
        # A worker's range is not cut where its batches outgrow their room (the plain walk's resume point):
        # the rest would need the index and term there. A range that outgrows it is walked by the reader.
        for batch in super()._built(*args):
            self._resume.at = None
            yield batch


class MessageWalk(DLedgerColumnarScan):
    """The DLedger walk yielding lists of :class:`Message` objects (one list per block of rows)."""

    def _build(self, w: A.Window, rows: np.ndarray) -> Iterator[list[Message]]:  # type: ignore[override]
        yield messages(w, rows)


class EntryWalk(DLedgerColumnarScan):
    """The DLedger walk yielding lists of :class:`DLedgerEntry` objects (one list per block of rows)."""

    def _build(self, w: A.Window, rows: np.ndarray) -> Iterator[list[DLedgerEntry]]:  # type: ignore[override]
        e = self._entries[:, rows].tolist()
        yield [DLedgerEntry(index, term, position, size, channel, chain_crc, body_crc, w.path, w.file_pos + at, m)
               for m, index, term, position, size, channel, chain_crc, body_crc, at in
               zip(messages(w, rows), e[K.E_INDEX], e[K.E_TERM], e[K.E_POS], e[K.E_SIZE], e[K.E_CHANNEL],
                   e[K.E_CHAIN_CRC], e[K.E_BODY_CRC], e[K.E_AT])]


__all__ = ["BODY_OFFSET", "DLedgerColumnarScan", "ENTRY_COLUMNS", "ENTRY_SCHEMA", "EntryWalk", "MessageWalk", "WINDOW",
           "resolve_entry_columns"]
