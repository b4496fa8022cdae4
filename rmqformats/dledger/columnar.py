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
from ..message import Message
from ..segments import Blank, DataEnd, EndReason, Segment
from .entry import DLedgerEndReason, DLedgerEntry

#: ``DLedgerEntry.BODY_OFFSET``: bytes of an entry before its message record.
BODY_OFFSET = L.ENTRY_HEADER
ENTRY_MAGIC = L.ENTRY_MAGIC
#: Bytes read from a data file at a time (more for a longer entry).
WINDOW = 4 << 20
#: Options of the plain walk that only tune its speed (the entry walk runs in this process, serially).
_PERFORMANCE = ("threads", "range_size", "jobs")
#: Options of the plain walk that the entry walk takes.
_TAKEN = ("batch_size", "decompress", "verify_crc", "strict", "start", "topic", "queue_id", "tag", "key",
          "since", "until", "from_offset", "to_offset", "stop", "max_body_size", "max_batch_bytes")
_RECORD_REASONS = {BadMagicError: EndReason.BAD_MAGIC, TruncatedRecordError: EndReason.TRUNCATED,
                   CrcMismatchError: EndReason.CRC_MISMATCH}


class DLedgerColumnarScan(ColumnarScan):
    """The batches of :class:`~rmqformats.columnar.ColumnarScan` (its options and attributes), over a DLedger
    commit log; plus :attr:`last_index` and :attr:`last_term`, those of the last entry read (-1 before
    the first).

    ``threads``, ``range_size`` and ``jobs`` are accepted and have no effect; ``window_size`` is the bytes
    read from a data file at a time. ``live``, ``predicate`` and the other options of the plain walk's
    recovery modes are typed errors.
    """

    def __init__(self, log, *, columns=None, window_size: int | None = None, **options):
        refuse_options(log.path, {k: v for k, v in options.items() if k not in _TAKEN + _PERFORMANCE},
                       "this layout")
        start = options.get("start")
        super().__init__(log, columns=columns, **{k: v for k, v in options.items() if k in _TAKEN})
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
                fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                try:
                    yield from self._walk_entries(seg, fd, i == len(segments) - 1)
                except _Stop as stop:
                    self._stopped(stop)
                    return
                finally:
                    os.close(fd)
        finally:
            self._windows.clear()
            self._chunks.clear()

    def _walk_entries(self, seg: Segment, fd: int, last: bool) -> Iterator:
        """Yield the batches of a data file's entries; returns at its BLANK filler (not the last file's),
        raises :class:`_Stop` where the data ends."""
        size = os.fstat(fd).st_size
        cap = self._batch_size
        buf = np.empty(self._window, np.uint8)
        i32 = np.empty((K.N_I32, cap), np.int32)
        i64 = np.empty((K.N_I64, cap), np.int64)
        e64 = np.empty((K.N_E, cap + 1), np.int64)
        wstart, got = 0, 0  # the window holds the file's bytes [wstart, wstart + got)
        pos = 0
        while True:
            before = self.last_index, self.last_term
            n, stop, spos, last_index, last_term = K.walk_entries(
                buf, pos - wstart, got, size - wstart, seg.start_offset + wstart, cap, i32, i64, e64,
                self.last_index, self.last_term)
            if n:
                w = A.Window(buf, i32, i64, seg.start_offset, wstart, seg.path, os.path.basename(seg.path))
                self._entries = e64
                self._before = before
                yield from self._emit(w, n, fd, size)
            self.last_index, self.last_term = last_index, last_term
            self.bytes_done += wstart + spos - pos
            pos = wstart + spos
            if stop == K.ESTOP_FULL:
                continue
            if stop == K.ESTOP_WINDOW:
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
                self.blanks.append(Blank(seg.start_offset + pos, int(e64[K.E_SIZE, n]), seg.path, pos))
                if last:
                    # The recovery's processOffset moves to the end of the file.
                    raise _Stop(DataEnd(seg.start_offset + size, EndReason.BLANK_LAST, seg.path, size, ""))
                self.bytes_done += seg.size - pos
                return
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

    def _walk(self, *args, **kwargs):
        raise NotImplementedError("a DLedger commit log is walked entry by entry")


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


__all__ = ["BODY_OFFSET", "DLedgerColumnarScan", "EntryWalk", "MessageWalk", "WINDOW"]
