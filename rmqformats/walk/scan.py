"""The columnar commit-log scan: segments read in bounded windows, records walked by a compiled kernel.

Each segment is read with ``pread`` into a reused window buffer (4 MiB by
default, grown only for a record larger than that), never memory-mapped: a
file that shrinks while it is read gives a short read, which becomes a
:class:`~rmqformats.errors.FileChangedError`, where a mapping would kill the
process with SIGBUS. The walk follows the broker's recovery; it is the one
walk of the commit log, under the object API too (:class:`rmqformats.commitlog.Scan`
makes its messages from this walk's rows, :mod:`rmqformats.walk.messages`).
The error texts are produced by describing the one record where the data ends
(:func:`rmqformats.walk.record.decode_message`). A store-time window passes
the segments that cannot hold it (:meth:`ColumnarScan._skip`,
:mod:`rmqformats.walk.timebounds`), their store times kept outside the store for the next window
(:mod:`rmqformats.walk.timecache`).

One piece past 800 lines: the serial walk, its byte ranges decoded by
threads, the filters and the building of batches share one scan's state (its
windows, its end, its counters), which the parallel walk
(:mod:`rmqformats.walk.parallel`) extends.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..segments import (Blank, DataEnd, EndReason, Segment, SegmentLog, SCHEDULE_TOPIC, check_record, classify_end,
                         unfinished_reason)
from ..compression import DEFAULT_MAX_BODY_SIZE
from ..errors import (
    BadMagicError,
    CrcMismatchError,
    FileChangedError,
    RecordError,
    RmqFormatError,
    TruncatedRecordError,
)
from ..errors import PropertyValueError, UnfinishedRecordError
from ..frames import scalar, to_numpy
from ..message import to_millis
from . import arrow as A
from . import kernels as K
from .record import decode_message
from .memory import keep_freed_memory
from .timebounds import I64_MAX, I64_MIN, WINDOW as HOP_WINDOW, SegmentTimes
from .timecache import TimeCache, cache_for, fd_key, file_key, remember, segment_times

#: Bytes read from a segment at a time.
DEFAULT_WINDOW = 4 << 20
#: Bytes of a segment one thread decodes at a time when several do.
DEFAULT_RANGE = 8 << 20
#: Rows of one record batch at most.
DEFAULT_BATCH_SIZE = 65536
#: Bytes of (decompressed) bodies of one record batch at most: a batch closes at this size or at its rows.
#: A body larger than it makes a batch of its own.
DEFAULT_BATCH_BYTES = 64 << 20
_HEADER_BYTES = 8
#: Reads of the window where the data of the last segment ends, at most, until two agree (see ``_read_stable``).
_STABLE_READS = 100
#: Bytes read past the end of a byte range, for the range's last record (more is read when it is longer).
_TAIL_READ = 64 << 10
#: Bytes past a record's TOTALSIZE that the broker's field reads can touch (see ``_record_error``).
_ERROR_MARGIN = 256

_REASONS = {BadMagicError: EndReason.BAD_MAGIC, TruncatedRecordError: EndReason.TRUNCATED,
            CrcMismatchError: EndReason.CRC_MISMATCH, UnfinishedRecordError: EndReason.UNFINISHED,
            PropertyValueError: EndReason.BAD_PROPERTY}
_SCHEDULE_TOPIC = np.frombuffer(SCHEDULE_TOPIC.encode("ascii"), np.uint8).copy()


#: A caller's row filter: ``predicate(columns, rows)`` returns the subset of ``rows`` (window row numbers,
#: ascending) to keep; ``columns(names, some_rows)`` builds a batch of just those columns for ``some_rows``
#: (bodies as stored), so a filter can look at cheap fixed-width fields first and build a record's
#: variable-length columns only for the rows still kept. It runs before the batch's columns are built.
Predicate = Callable[[Callable[[Sequence[str], np.ndarray], pa.RecordBatch], np.ndarray], np.ndarray]


class _Stop(Exception):
    """The data ended inside a segment (carries the :class:`DataEnd`, and the error a strict walk raises)."""

    def __init__(self, end: DataEnd | None, error: RecordError | None = None):
        super().__init__()
        self.end = end
        self.error = error

    def outcome(self) -> tuple:
        """The stop as a walk's outcome that a worker process hands back (its error as plain values)."""
        err = self.error
        return ("stop", self.end, None if err is None else (type(err), err.path, err.offset, err.reason))

    @classmethod
    def from_outcome(cls, outcome: tuple) -> "_Stop":
        """The stop of an :meth:`outcome` handed back by a worker."""
        _, end, state = outcome
        if state is None:
            return cls(end)
        kind, path, offset, reason = state
        return cls(end, kind(path, offset, reason))


class ColumnarScan:
    """An iterator of :class:`pyarrow.RecordBatch` over the messages of a commit log, in commit-log order.

    After it is exhausted, :attr:`end` tells where and why the data ended
    (the same :class:`~rmqformats.commitlog.DataEnd` as the object API's
    scan; ``None`` when ``to_offset`` or ``stop`` ended the scan first) and
    :attr:`blanks` lists the BLANK records passed. With ``strict=True`` a
    corrupt end raises its :class:`~rmqformats.errors.RecordError` instead.
    ``predicate`` (:data:`Predicate`) filters the records after the built-in
    filters and before their columns are built.
    """

    def __init__(self, commitlog: SegmentLog, *, columns=None, batch_size: int = DEFAULT_BATCH_SIZE,
                 decompress: bool = True, verify_crc: bool = False, strict: bool = False,
                 start: int | None = None, topic: str | Iterable[str] | None = None, queue_id: int | None = None,
                 tag: str | None = None, key: str | None = None, since: int | str | datetime | None = None,
                 until: int | str | datetime | None = None, from_offset: int | None = None,
                 to_offset: int | None = None, stop: int | None = None,
                 max_body_size: int = DEFAULT_MAX_BODY_SIZE, window_size: int = DEFAULT_WINDOW,
                 threads: int = 1, range_size: int = DEFAULT_RANGE, live: bool = False,
                 predicate: Predicate | None = None,
                 force_verify_prop_crc: bool = False, max_batch_bytes: int = DEFAULT_BATCH_BYTES,
                 stop_at_corrupt_body: bool = False):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        for name, value in (("queue_id", queue_id), ("from_offset", from_offset), ("to_offset", to_offset),
                            ("start", start), ("stop", stop)):
            _check_type(name, value, (int, np.integer), "an int")
        _check_type("tag", tag, (str,), "a str")
        _check_type("key", key, (str,), "a str")
        if max_batch_bytes < 1:
            raise ValueError(f"max_batch_bytes must be at least 1, not {max_batch_bytes}")
        self.columns = A.resolve_columns(columns)
        self.schema = pa.schema([A.field(c) for c in self.columns])
        #: The message columns :meth:`_build_rows` builds (a subclass may add columns of its own after them).
        self._message_columns = self.columns
        self.end: DataEnd | None = None
        self.blanks: list[Blank] = []
        #: Bytes of commit log covered so far (for progress reports).
        self.bytes_done = 0
        self._log = commitlog
        self._live = live
        self._seg_index = {seg.path: i for i, seg in enumerate(commitlog.segments)}
        self._batch_size = batch_size
        self._batch_bytes = max_batch_bytes
        self._stop_at_bad_body = stop_at_corrupt_body
        self._decompress = decompress
        self._verify_crc = verify_crc
        self._force_prop_crc = force_verify_prop_crc
        self._strict = strict
        self._max_body = max_body_size
        self._window = max(window_size, 1 << 16)
        self._topics = None if topic is None else [np.frombuffer(t.encode("utf-8"), np.uint8).copy()
                                                   for t in _names("topic", topic)]
        self._queue_id = queue_id
        self._tag = tag
        self._key = key
        self._since = None if since is None else to_millis(since)
        self._until = None if until is None else to_millis(until)
        self._from = from_offset
        self._to = to_offset
        self._stop_at = stop
        self._predicate = predicate
        #: Threads that decode byte ranges of a segment at once (see :meth:`_walk_parallel`).
        self._threads = max(1, int(threads))
        self._range = max(range_size, 1 << 12)
        self._resume = threading.local()
        self._windows: list[np.ndarray] = []
        self._chunks: list[tuple[np.ndarray, np.ndarray]] = []
        if start is None and from_offset is not None and commitlog.segments:
            # Records are found from a segment start; earlier records are left out by the filter.
            try:
                start = commitlog.segments[commitlog.segment_index(from_offset)].start_offset
            except RmqFormatError:  # before the first segment or in a gap: scan from the start
                start = None
        self._start = start
        # Segments wholly outside the store-time window are passed by a walk that builds no row
        # (:meth:`_skip`); with CRC checks or a live store every segment is decoded as before.
        self._prune = ((self._since is not None or self._until is not None) and not verify_crc
                       and not force_verify_prop_crc and not live)
        #: Segments passed by their store times (no record of them can be in ``since``/``until``), and
        #: their bytes: only their record headers were walked, no column of them was built.
        self.segments_skipped = 0
        self.bytes_skipped = 0
        #: Bytes walked only for store times: the skipped segments' records, and a decoded segment's
        #: records before its first one in the window (walked again when it is decoded).
        self.bytes_hopped = 0
        #: Segments whose store times came from the store-time cache (:mod:`rmqformats.walk.timecache`),
        #: none of their bytes read for them.
        self.times_cached = 0
        self._hop_buf: np.ndarray | None = None
        self._cache: TimeCache | None = None
        self._cache_found = False
        #: While a whole segment is walked: ``[least, greatest store time, SCHEDULE_TOPIC_XXXX records]`` of
        #: the records walked, for its store-time entry (:meth:`_times_key`).
        self._track: np.ndarray | None = None
        keep_freed_memory()
        self._gen = self._run()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self._gen

    @property
    def bytes_decoded(self) -> int:
        """Bytes of commit log covered by the decoding walk so far (:attr:`bytes_done` less the skipped
        segments')."""
        return self.bytes_done - self.bytes_skipped

    def __next__(self) -> pa.RecordBatch:
        return next(self._gen)

    def read_all(self) -> pa.Table:
        """Every remaining batch as one table."""
        return pa.Table.from_batches(list(self._gen), schema=self.schema)

    # -- the walk -------------------------------------------------------------------------

    def _run(self) -> Iterator[pa.RecordBatch]:
        segments = self._log.segments
        if not segments:
            self.end = DataEnd(0, EndReason.NO_SEGMENTS, None, 0)
            return
        first, pos = 0, 0
        if self._start is not None:
            first = self._log.segment_index(self._start)
            pos = self._start - segments[first].start_offset
        pool = _executor(self._threads) if self._threads > 1 else None
        try:
            for i in range(first, len(segments)):
                seg = segments[i]
                fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                try:
                    size = os.fstat(fd).st_size
                    # ``stop`` (a commit-log offset) ends the walk before the first record at or after it.
                    limit = size + 1 if self._stop_at is None else self._stop_at - seg.start_offset
                    skip = self._skip(seg, fd, size, pos, i == len(segments) - 1)
                    if skip is not None:
                        self._pass_segment(seg, size, skip)
                        continue
                    if pool is None:
                        key = self._times_key(seg, size, pos, limit, i == len(segments) - 1, fd)
                        track = new_track(key)
                        outcome = yield from self._walk_tracked(track, seg, fd, size, pos, limit,
                                                                i == len(segments) - 1)
                        self._remember(seg, key, track, outcome)
                    else:
                        outcome = yield from self._walk_parallel(seg, fd, size, pos, limit,
                                                                 i == len(segments) - 1, pool)
                    self._segment_done(seg, size, outcome, i == len(segments) - 1)
                except _Stop as stop:
                    self._stopped(stop)
                    return
                finally:
                    os.close(fd)
                pos = 0
        finally:
            self._windows.clear()
            self._chunks.clear()

    def _progress(self, n: int) -> None:
        self.bytes_done += n

    def _pass_segment(self, seg: Segment, size: int, outcome: tuple) -> None:
        """Count a segment :meth:`_skip` passed as walked to its BLANK record (``outcome``)."""
        self.bytes_done += outcome[1]
        self.segments_skipped += 1
        self.bytes_skipped += size
        self._segment_done(seg, size, outcome, False)

    def _skip(self, seg: Segment, fd: int, size: int, pos: int, last: bool) -> tuple | None:
        """``("blank", p, size)`` when the decoding walk of this segment would yield no row and end at its
        BLANK record ``p``, found without building any row; ``None`` when it must be decoded.

        The records are walked by :func:`~rmqformats.walk.timebounds.walk_times`, which takes exactly
        the records the decoding walk takes (its :func:`~rmqformats.walk.kernels.walk_records`). The
        segment is passed only when every record was taken up to a BLANK record, none has a store time in
        ``[since, until)`` (store times are not assumed to be in order: every record's own is compared),
        none is a ``SCHEDULE_TOPIC_XXXX`` record (whose DELAY the decoding walk checks), the file kept its
        size, and the segment is neither the last (whose end the walk reads as a live file's) nor one where
        ``start``, ``stop`` or ``to_offset`` end or begin the walk. Anything else (damage, zero fill, a record in the window) is left to the decoding walk, which
        meets it exactly as it would have. The store-time cache (:mod:`rmqformats.walk.timecache`) gives
        the walk's result unread where the segment's cached times do not meet the window.
        """
        if not self._may_skip(seg, size, pos, last):
            return None
        if self._hop_buf is None:
            self._hop_buf = np.empty(HOP_WINDOW, np.uint8)
        found = segment_times(fd, seg.path, size, low=self._low, high=self._high, cache=self._time_cache,
                              scratch=self._hop_buf)
        if found is None or os.fstat(fd).st_size != size:
            return None
        return self._skip_outcome(found)

    def _times_key(self, seg: Segment, size: int, pos: int, limit: int, last: bool,
                   fd: int | None = None) -> list | None:
        """The store-time cache's key of a segment this walk takes whole (from its start to its end, not the
        last), read now, before its records are walked (from ``fd`` where it is open); ``None`` for the others
        or with the cache off. A walk of it that ends at its BLANK record leaves the entry a time walk would
        write: the same records, taken by the same kernel (:meth:`_walk_tracked`, :meth:`_remember`)."""
        if pos != 0 or limit <= size or last or self._live or self._time_cache is None:
            return None
        return file_key(seg.path) if fd is None else fd_key(fd, seg.path)

    def _walk_tracked(self, track: np.ndarray | None, seg: Segment, fd: int, size: int, pos: int, limit: int,
                      last: bool):
        """:meth:`_walk` of the segment, its records' store times added to ``track`` (``None``: not summed)."""
        self._track = track
        try:
            return (yield from self._walk(seg, fd, size, pos, limit, last, self._progress))
        finally:
            self._track = None

    def _remember(self, seg: Segment, key: list | None, track: np.ndarray | None, outcome: tuple) -> None:
        """Give the store-time cache a segment walked whole to its BLANK record (``track``: its records' least
        and greatest store time and scheduled records)."""
        if key is not None and track is not None and outcome[0] == "blank":
            low, high, schedule = track.tolist()
            remember(seg.path, key, SegmentTimes(low, high, K.STOP_BLANK, outcome[1], outcome[2], schedule, False),
                     cache=self._time_cache)

    def _may_skip(self, seg: Segment, size: int, pos: int, last: bool) -> bool:
        """Whether :meth:`_skip` may pass this segment if its records allow (see there)."""
        if not self._prune or last or pos != 0:
            return False
        end = seg.start_offset + size
        return not ((self._stop_at is not None and self._stop_at <= end) or (self._to is not None and self._to < end))

    @property
    def _time_cache(self) -> TimeCache | None:
        """The store-time cache of this commit log's segments (``None``: off, or it would lie in the store)."""
        if not self._cache_found:
            self._cache, self._cache_found = cache_for(self._log.path), True
        return self._cache

    @property
    def _low(self) -> int:
        return I64_MIN if self._since is None else self._since

    @property
    def _high(self) -> int:
        return I64_MAX if self._until is None else self._until

    def _skip_outcome(self, found: SegmentTimes | None) -> tuple | None:
        """The BLANK outcome of a segment whose walk (:func:`walk_times` in the window) allows passing it."""
        if found is None:
            return None
        if found.cached:
            self.times_cached += 1
        else:
            self.bytes_hopped += found.pos
        if found.stop != K.STOP_BLANK or found.hit or found.schedule:
            return None
        if found.high == I64_MAX and (self._until is None or self._until > I64_MAX):
            return None  # a time the exclusive bound ``high`` leaves out, which this window holds
        return ("blank", found.pos, found.blank_size)

    def _stopped(self, stop: _Stop) -> None:
        """Record where the data ended; a strict walk raises the error of an end that is not clean."""
        self.end = stop.end
        if stop.error is not None and self._strict and not stop.end.reason.is_clean:
            raise stop.error

    def _segment_done(self, seg: Segment, size: int, outcome: tuple, last: bool) -> None:
        """Act on how the walk of a segment ended: the ``stop`` offset, or its BLANK record."""
        if outcome[0] == "limit":
            raise _Stop(None)
        here, blank_size = outcome[1], outcome[2]
        self.blanks.append(Blank(seg.start_offset + here, blank_size, seg.path, here))
        if last:
            raise _Stop(self._end(seg, here, EndReason.BLANK_LAST))
        self.bytes_done += size - here

    def _walk(self, seg: Segment, fd: int, size: int, pos: int, limit: int, last: bool, progress):
        """Yield the batches of the records that start in ``[pos, limit)`` of a segment.

        Returns ``("limit", p)`` at the first record at or after ``limit``, or
        ``("blank", p, size)`` at the segment's BLANK record; raises
        :class:`_Stop` where the data of the commit log ends.
        """
        # Buffers are recycled: fresh memory costs a page fault per 4 KiB, more than decoding it.
        windows, chunks = self._windows, self._chunks
        try:
            buf = windows.pop()  # list.pop and append are atomic: the pools need no lock
        except IndexError:
            buf = np.empty(self._window, np.uint8)
        try:
            need = 0  # bytes the next read must hold: a whole record that did not fit
            while True:
                # Read no further than the range's end and a little more for its last record.
                want = min(size - pos, max(min(len(buf), max(limit - pos, 0) + _TAIL_READ), need))
                if want > len(buf):
                    buf = np.empty(want, np.uint8)
                got = _read_into(fd, buf, want, pos)
                if got < want:
                    raise FileChangedError(seg.path, pos + got, f"the file shrank while it was read (it had {size} "
                                                                f"bytes; {pos + got} are left)")
                at_eof = pos + want == size
                if last and want >= _HEADER_BYTES and (at_eof or not buf[want - _HEADER_BYTES:want].any()):
                    _read_stable(fd, buf, want, pos, seg)
                wlimit = min(want + 1, limit - pos)
                wpos = 0
                trusted = -1  # the window position of a record checked at the frontier
                while True:
                    try:
                        i32, i64 = chunks.pop()
                    except IndexError:
                        i32 = np.empty((K.N_I32, self._batch_size), np.int32)
                        i64 = np.empty((K.N_I64, self._batch_size), np.int64)
                    try:
                        n, stop, spos = K.walk_records(buf, wpos, want, at_eof, wlimit, self._batch_size, i32, i64,
                                                       trusted)
                        if n and self._track is not None:
                            self._add_times(buf, i64, n)
                        if n:
                            w = A.Window(buf, i32, i64, seg.start_offset, pos, seg.path, os.path.basename(seg.path))
                            yield from self._emit(w, n, fd, size)
                    finally:
                        chunks.append((i32, i64))  # the batches hold copies, never views
                    if stop == K.STOP_FULL:
                        wpos = spos
                        continue
                    if stop == K.STOP_FRONTIER:
                        # The last record before zero fill: the object API's checks, then taken as any record.
                        self._check_frontier(buf, spos, seg, pos + spos)
                        wpos = trusted = spos
                        continue
                    break
                here = pos + spos
                progress(spos)
                if stop != K.STOP_WINDOW:
                    _check_not_shrunk(fd, seg, size)
                if stop == K.STOP_WINDOW:
                    need = 0
                    if spos == 0:  # a record longer than what was read: read it whole next time
                        head = os.pread(fd, 4, pos)
                        total = int.from_bytes(head, "big", signed=True) if len(head) == 4 else 0
                        need = max(total, 2 * want, _HEADER_BYTES)
                    pos = here
                    continue
                if stop == K.STOP_LIMIT:
                    return ("limit", here)
                if stop == K.STOP_BLANK:
                    return ("blank", here, int.from_bytes(bytes(buf[spos:spos + 4]), "big", signed=True))
                if stop == K.STOP_ZERO:
                    raise _Stop(self._end(seg, here, EndReason.ZERO_TAIL))
                if stop == K.STOP_EOF:
                    if last:
                        raise _Stop(self._end(seg, here, EndReason.END_OF_FILE))
                    err = TruncatedRecordError(seg.path, here, "segment file ends without a BLANK record")
                    raise _Stop(self._end(seg, here, EndReason.TRUNCATED, err.reason), err)
                if stop == K.STOP_HEADER_CUT:
                    err = TruncatedRecordError(seg.path, here, f"{size - here} bytes left, less than a record header")
                    raise _Stop(self._end(seg, here, EndReason.TRUNCATED, err.reason), err)
                err = _record_error(fd, seg, here, size)
                raise _Stop(self._end(seg, here, _REASONS.get(type(err), EndReason.BAD_SIZE), err.reason), err)
        finally:
            if len(buf) <= self._window:
                windows.append(buf)

    def _range_start(self, fd: int, seg: Segment, size: int, begin: int, end: int) -> int | None:
        """The first record that starts in ``[begin, end)`` of a segment (:func:`find_record_start`), or ``None``."""
        return _find_record(fd, seg, size, begin, end, self._window)

    # -- what a walk carries from record to record: nothing here (a DLedger walk carries entry numbers) --

    def _range_begin(self) -> None:
        """Forget what the walk carries from one record to the next: a worker's range starts without it."""

    def _range_state(self):
        """What a worker's range hands back for :meth:`_continues` and :meth:`_carry`."""
        return None

    def _continues(self, state) -> bool:
        """Whether a worker's range, walked from :meth:`_range_begin` (``state``: its :meth:`_range_state`),
        gives what this walk would from where it is."""
        return True

    def _carry(self, state) -> None:
        """Take on what the walk carries after a worker's range that :meth:`_continues` accepted."""

    def _add_times(self, buf: np.ndarray, i64: np.ndarray, n: int) -> None:
        """Add the store times and ``SCHEDULE_TOPIC_XXXX`` records of ``n`` records walked to ``_track``."""
        K.store_times(buf, i64, n, _SCHEDULE_TOPIC, self._track)

    def _range_job(self, seg: Segment, fd: int, size: int, begin: int, end: int, exact: bool, last: bool):
        """Decode the records that start in ``[begin, end)``, found by a resync unless ``exact``; runs in a thread.

        Returns ``(first record position or None, batches, outcome or _Stop, bytes covered)``.
        """
        start = begin if exact else self._range_start(fd, seg, size, begin, end)
        if start is None:
            return None, [], ("limit", end), 0
        return (start, *self._collect(seg, fd, size, start, end, last))

    def _collect(self, seg: Segment, fd: int, size: int, start: int, end: int, last: bool):
        """The batches of the records that start in ``[start, end)``, how the walk ended and the bytes it
        covered. The batches held stay near ``max_batch_bytes``: once the decompressed bodies of a job pass
        it, the job ends with ``("more", p)``, the offset of the record to go on from."""
        batches: list[pa.RecordBatch] = []
        done = [0]
        held = 0

        def progress(n: int) -> None:
            done[0] += n
        walk = self._walk(seg, fd, size, start, end, last, progress)
        try:
            while True:
                self._resume.at = None
                batch = next(walk)
                batches.append(batch)
                held += batch.nbytes
                if held >= self._batch_bytes and self._resume.at is not None:
                    at = self._resume.at
                    walk.close()
                    return batches, ("more", at), at - start
        except StopIteration as fin:
            return batches, fin.value, done[0]
        except _Stop as stop:
            return batches, stop, done[0]

    def _walk_parallel(self, seg: Segment, fd: int, size: int, pos: int, limit: int, last: bool, pool):
        """:meth:`_walk` over byte ranges decoded by several threads, the batches yielded in order.

        Each range after the first starts at the first record a resync finds
        in it; a range is used only when that record is where the previous
        range's walk ended, and is decoded again from there otherwise (a
        damaged record, or record-like bytes in a body), so the result is
        exactly the serial walk's.
        """
        stop_at = min(size, limit)
        step = self._range
        bounds = []
        b = pos
        while b < stop_at:
            bounds.append((b, min(b + step, stop_at)))
            b += step
        if not bounds:
            return (yield from self._walk(seg, fd, size, pos, limit, last, self._progress))
        # The last range runs to ``limit`` so that its walk sees the segment's end, BLANK or stop.
        bounds[-1] = (bounds[-1][0], limit)
        jobs: deque = deque()
        nxt = 0
        expected = pos
        try:
            while True:
                while nxt < len(bounds) and len(jobs) <= self._threads:
                    b, e = bounds[nxt]
                    jobs.append((b, e, pool.submit(self._range_job, seg, fd, size, b, e, nxt == 0, last)))
                    nxt += 1
                if not jobs:
                    return ("limit", expected)  # not reached: the last range always ends the walk
                b, e, job = jobs.popleft()
                start, batches, outcome, done = job.result()
                if e != limit and expected >= e:
                    continue  # a record of the previous range covers this whole range
                if start != expected:
                    batches, outcome, done = [], ("more", expected), 0
                while batches:
                    yield batches.pop(0)
                self.bytes_done += done
                if isinstance(outcome, _Stop):
                    raise outcome
                if outcome[0] == "more":  # the rest of the range, walked here and handed on a batch at a time
                    outcome = yield from self._walk(seg, fd, size, outcome[1], e, last, self._progress)
                if outcome[0] == "blank" or e == limit:
                    return outcome
                expected = outcome[1]
        finally:
            for _, _, job in jobs:
                job.cancel()
            for _, _, job in jobs:
                try:
                    job.result()
                except BaseException:  # noqa: BLE001 - dropped with the scan that stopped early
                    pass

    def _end(self, seg: Segment, pos: int, reason: EndReason, detail: str = "") -> DataEnd:
        return classify_end(self._log.segments, self._seg_index[seg.path], pos, reason, detail, live=self._live)

    def _check_frontier(self, buf: np.ndarray, wpos: int, seg: Segment, here: int) -> None:
        """Raise :class:`_Stop` unless the record at ``wpos``, followed by zero fill, is completely written."""
        total = int.from_bytes(bytes(buf[wpos:wpos + 4]), "big", signed=True)
        msg = decode_message(bytes(buf[wpos:wpos + total]), 0, seg.path, seg.start_offset + here)
        try:
            check_record(msg, self._verify_crc, self._force_prop_crc)
            why = unfinished_reason(msg, self._log.record_crc)
            if why is not None:
                raise UnfinishedRecordError(seg.path, here, why)
        except RecordError as exc:
            err = type(exc)(seg.path, here, exc.reason)
            raise _Stop(self._end(seg, here, _REASONS.get(type(exc), EndReason.BAD_SIZE), err.reason), err) from None

    def _emit(self, w: A.Window, n: int, fd: int, size: int) -> Iterator[pa.RecordBatch]:
        """Check, filter and build the batch of the first ``n`` records the kernel found."""
        cut = self._passing(w, n)
        offsets = w.i64[K.I64_POS][:cut] + w.base
        finished = False
        if self._to is not None and cut and offsets[-1] >= self._to:
            cut = int(np.searchsorted(offsets >= self._to, True))
            finished = True
        rows = np.arange(cut)
        mask = None

        def narrow(cond):
            nonlocal mask
            mask = cond if mask is None else mask & cond
        if self._queue_id is not None:
            narrow(w.i32[K.I32_QUEUE_ID][:cut] == self._queue_id)
        if self._since is not None:
            narrow(w.i64[K.I64_STORE_TS][:cut] >= self._since)
        if self._until is not None:
            narrow(w.i64[K.I64_STORE_TS][:cut] < self._until)
        if self._from is not None:
            narrow(offsets[:cut] >= self._from)
        if mask is not None:
            rows = np.flatnonzero(mask)
        if self._topics is not None and len(rows):
            pos, length = w.i64[K.I64_TOPIC_POS][rows], w.i64[K.I64_TOPIC_LEN][rows]
            hit = K.equals_each(w.buf, pos, length, self._topics[0]) if self._topics else np.zeros(len(rows), np.bool_)
            for t in self._topics[1:]:
                hit |= K.equals_each(w.buf, pos, length, t)
            rows = rows[hit]
        if (self._tag is not None or self._key is not None) and len(rows):
            rows = rows[self._tag_key_mask(w, rows)]
        if self._predicate is not None and len(rows):
            rows = self._predicate(lambda names, sub: A.build(w, sub, tuple(names), False), rows)
        if len(rows):
            yield from self._build(w, rows)
        if cut < n:
            if finished:
                raise _Stop(None)
            raise self._row_stop(w, cut, fd, size)

    def _passing(self, w: A.Window, n: int) -> int:
        """How many of the first ``n`` rows pass the checks made on whole records (CRCs, ``DELAY``) before
        the first that fails."""
        cut = n
        if self._verify_crc:
            cut = _first_crc_mismatch(w, np.arange(n), self._force_prop_crc)
        if cut:
            cut = _first_bad_delay(w, cut)
        return cut

    def _row_stop(self, w: A.Window, row: int, fd: int, size: int) -> _Stop:
        """The end of the data at ``row``, a record the kernel took that :meth:`_passing` rejects."""
        # A CRC mismatch or a rejected DELAY: the object API's own error for that record.
        here = w.file_pos + int(w.i64[K.I64_POS][row])
        seg = Segment(w.path, w.seg_start, size)
        err = _record_error(fd, seg, here, size, verify_crc=self._verify_crc,
                            force_verify_prop_crc=self._force_prop_crc)
        return _Stop(self._end(seg, here, _REASONS.get(type(err), EndReason.BAD_SIZE), err.reason), err)

    def _tag_key_mask(self, w: A.Window, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` carry the ``tag`` (TAGS) and the ``key`` (one of the KEYS, or the UNIQ_KEY)."""
        cols = A.build(w, rows, ("tags", "keys", "uniqKey"))
        keep = np.ones(len(rows), np.bool_)
        # (Arrow values, not Python ones, given to the compute functions: those would load pandas.)
        if self._tag is not None:
            keep &= to_numpy(pc.fill_null(pc.equal(cols.column("tags"), scalar(self._tag)), scalar(False)))
        if self._key is not None:
            keys = cols.column("keys")
            key = scalar(self._key)
            hit = to_numpy(pc.fill_null(pc.equal(cols.column("uniqKey"), key), scalar(False))).copy()
            parents = to_numpy(pc.list_parent_indices(keys))
            hit[parents[to_numpy(pc.fill_null(pc.equal(pc.list_flatten(keys), key), scalar(False)))]] = True
            keep &= hit
        return keep

    def _build(self, w: A.Window, rows: np.ndarray) -> Iterator[pa.RecordBatch]:
        if self._decompress and ("body" in self.columns or "bodyError" in self.columns):
            compressed = A.compressed_rows(w, rows)
            if len(compressed):
                yield from self._build_decompressing(w, rows, compressed)
                return
        yield from self._build_rows(w, rows)

    def _build_rows(self, w: A.Window, rows: np.ndarray, decoded: list | None = None) -> Iterator[pa.RecordBatch]:
        try:
            yield A.build(w, rows, self._message_columns, self._decompress, self._max_body, decoded)
        except OverflowError:  # bodies of one batch over 2 GiB after decompression: halve it
            if len(rows) == 1:
                raise
            half = len(rows) // 2
            yield from self._build_rows(w, rows[:half], None if decoded is None else decoded[:half])
            yield from self._build_rows(w, rows[half:], None if decoded is None else decoded[half:])

    def _build_decompressing(self, w: A.Window, rows: np.ndarray, compressed: np.ndarray) -> Iterator[pa.RecordBatch]:
        """The batches of ``rows``, closed whenever their decompressed bodies reach ``max_batch_bytes``
        (:func:`rmqformats.walk.arrow.decompressed_runs`): memory holds one batch of bodies whatever the
        compression ratio. A body that does not decompress is kept as stored, with its reason in
        ``bodyError``, unless ``stop_at_corrupt_body`` (then it raises :class:`DecompressionError`).
        """
        for start, stop, part in A.decompressed_runs(w, rows, compressed, max_body=self._max_body,
                                                     want_body="body" in self.columns, bound=self._batch_bytes,
                                                     stop_at_bad_body=self._stop_at_bad_body):
            yield from self._built(w, rows[start:stop], part)

    def _built(self, w: A.Window, rows: np.ndarray, part: list) -> Iterator[pa.RecordBatch]:
        """The batches of ``rows`` built with the bodies in ``part`` (one per row, ``None`` for one not
        decompressed), which is emptied before the first is handed on: the decompressed bodies are then
        held once, in the batches, not also here."""
        batches = list(self._build_rows(w, rows, part))
        part.clear()
        last = int(rows[-1])
        # Where (in the segment file) the record after the last one built starts: a range job over its
        # byte budget resumes there.
        self._resume.at = w.file_pos + int(w.i64[K.I64_POS][last]) + int(w.i32[K.I32_SIZE][last])
        while batches:
            yield batches.pop(0)


def new_track(wanted) -> np.ndarray | None:
    """A sum of store times for :meth:`ColumnarScan._walk_tracked` (``None`` unless ``wanted``)."""
    return np.array([I64_MAX, I64_MIN, 0], np.int64) if wanted else None


def _names(what: str, value) -> list[str]:
    """A name, or an iterable of names, as a list; ``TypeError`` for anything else."""
    if isinstance(value, str):
        return [value]
    try:
        names = list(value)
    except TypeError:
        raise TypeError(f"{what} must be a name (str) or an iterable of names, not {type(value).__name__}") from None
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"{what} must be names (str), not {', '.join(sorted({type(n).__name__ for n in names if not isinstance(n, str)}))}")
    return names


def _check_type(what: str, value, types: tuple, text: str) -> None:
    if value is not None and (not isinstance(value, types) or isinstance(value, bool) and bool not in types):
        raise TypeError(f"{what} must be {text}, not {type(value).__name__}")


_EXECUTORS: dict[int, ThreadPoolExecutor] = {}
_EXECUTORS_LOCK = threading.Lock()


def _forget_executors() -> None:
    """Drop the parent's pools in a forked child: their worker threads do not exist there.

    A child of ``fork()`` inherits the pool objects but only the thread that
    forked, so work submitted to them would wait forever; the lock may also
    have been held by another parent thread at the fork. The child makes new
    pools on first use.
    """
    global _EXECUTORS_LOCK
    _EXECUTORS_LOCK = threading.Lock()
    _EXECUTORS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_executors)


def _executor(threads: int) -> ThreadPoolExecutor:
    """A thread pool of ``threads`` workers, kept for the process (threads are not made per scan)."""
    with _EXECUTORS_LOCK:
        pool = _EXECUTORS.get(threads)
        if pool is None:
            pool = _EXECUTORS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="rmqformats-columnar")
        return pool


def _first_crc_mismatch(w: A.Window, rows: np.ndarray, force_verify_prop_crc: bool = False) -> int:
    """How many of ``rows`` pass the broker's CRC check before the first that fails (all: ``len(rows)``).

    The body CRC, or with ``force_verify_prop_crc`` the ``__CRC32#`` property
    (see :meth:`rmqformats.message.Message.verify_crc`).
    """
    if force_verify_prop_crc:
        first = A.record_crc_mismatch(w, rows, A.parse_properties(w, rows))
    else:
        first = A.body_crc_mismatch(w, rows)
    return len(rows) if first < 0 else first


def _first_bad_delay(w: A.Window, n: int) -> int:
    """How many of the first ``n`` rows pass before a ``SCHEDULE_TOPIC_XXXX`` record whose DELAY the broker rejects."""
    sched = np.flatnonzero(K.equals_each(w.buf, w.i64[K.I64_TOPIC_POS][:n], w.i64[K.I64_TOPIC_LEN][:n],
                                         _SCHEDULE_TOPIC))
    for j in sched.tolist():
        p = int(w.i64[K.I64_POS][j])
        msg = decode_message(bytes(w.buf[p:p + int(w.i32[K.I32_SIZE][j])]), 0, w.path, w.seg_start + w.file_pos + p)
        try:
            check_record(msg)
        except PropertyValueError:
            return j
    return n


def _read_stable(fd: int, buf: np.ndarray, n: int, pos: int, seg: Segment) -> None:
    """Read ``buf[:n]`` again until two reads agree: the window may hold the place a broker is writing at.

    One ``pread`` copies the file front to back while the broker copies a
    record in, front to back too: a record can be read half-written while a
    later header is read already written, so that the record does not look
    like the last one. Bytes of a store only change from zero to their
    value, so two equal reads mean no record in the window was being written
    under the first.
    """
    # Only the bytes up to the last non-zero one can be changing: a later part that is older (still zero)
    # looks like an earlier moment of the file, which is safe.
    end = n
    step = 1 << 16
    while end > 0 and not buf[max(end - step, 0):end].any():
        end = max(end - step, 0)
    if end == 0:
        return
    end = min(n, max(end - step, 0) + int(np.flatnonzero(buf[max(end - step, 0):end])[-1]) + 1 + _HEADER_BYTES)
    again = np.empty(end, np.uint8)
    for _ in range(_STABLE_READS):
        got = _read_into(fd, again, end, pos)
        if got < end:
            raise FileChangedError(seg.path, pos + got, f"the file shrank while it was read ({pos + got} bytes left)")
        if np.array_equal(again, buf[:end]):
            return
        buf[:end] = again


def _check_not_shrunk(fd: int, seg: Segment, size: int) -> None:
    """Raise :class:`FileChangedError` when the file was cut after its last window was read: the walk's
    records past the cut, read before it, are not the file's any more."""
    now = os.fstat(fd).st_size
    if now < size:
        raise FileChangedError(seg.path, now, f"the file shrank while it was read (it had {size} bytes; "
                                              f"{now} are left)")


def _read_into(fd: int, buf: np.ndarray, n: int, pos: int) -> int:
    """Read ``n`` bytes at ``pos`` into ``buf``; returns how many the file had."""
    view = memoryview(buf)[:n]
    done = 0
    while done < n:
        got = os.preadv(fd, [view[done:]], pos + done)
        if got <= 0:
            break
        done += got
    return done


def _record_error(fd: int, seg: Segment, pos: int, size: int, verify_crc: bool = False,
                  force_verify_prop_crc: bool = False) -> RecordError:
    """The object API's error for the record at ``pos``: the same type and text as its scan gives."""
    head = os.pread(fd, 4, pos)
    total = int.from_bytes(head, "big", signed=True) if len(head) == 4 else 0
    # The broker's checks read at most a record header's fields past TOTALSIZE.
    data = os.pread(fd, min(size - pos, max(total, 0) + _ERROR_MARGIN), pos)
    try:
        msg = decode_message(data, 0, seg.path, seg.start_offset + pos)
        check_record(msg, verify_crc, force_verify_prop_crc)
    except RecordError as exc:
        return type(exc)(seg.path, pos + (exc.offset or 0), exc.reason)
    # Valid now, not when the walk read it: a broker was writing it (bytes only change from zero to their value).
    return UnfinishedRecordError(seg.path, pos, "the record was being written while it was read")


def find_record_start(seg: Segment, begin: int, end: int, *, window_size: int = DEFAULT_WINDOW) -> int | None:
    """The file position of the first message record that starts in ``[begin, end)`` of a segment, or ``None``.

    For reading a segment in byte ranges: a range's reader starts at the
    first position whose magic code, stored PHYSICALOFFSET (equal to the
    position's own commit-log offset) and field lengths make a valid record,
    so bytes of a body that look like a record header are not taken for
    one. Reads ``pread`` windows; raises :class:`FileChangedError` when the
    file shrinks below the size it had.
    """
    fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        return _find_record(fd, seg, os.fstat(fd).st_size, begin, end, window_size)
    finally:
        os.close(fd)


def _find_record(fd: int, seg: Segment, size: int, begin: int, end: int, window_size: int) -> int | None:
    end = min(end, size)
    pos = begin
    i32 = np.empty((K.N_I32, 1), np.int32)
    i64 = np.empty((K.N_I64, 1), np.int64)
    # A record starts within a few KiB of any position: read small windows, grown only for long records.
    length = 1 << 16
    while pos < end:
        want = min(length, size - pos)
        buf = np.empty(want, np.uint8)
        got = _read_into(fd, buf, want, pos)
        if got < want:
            raise FileChangedError(seg.path, pos + got, f"the file shrank while it was read (it had {size} bytes)")
        at_eof = pos + want == size
        found_at, found = K.find_record(buf, 0, want, at_eof, end - pos, seg.start_offset + pos, i32, i64)
        if found == 1:
            return pos + int(found_at)
        if found == 0:
            return None
        if found_at == 0:  # a candidate record longer than the window: read it whole
            length = 2 * length
        pos += int(found_at)
    return None
