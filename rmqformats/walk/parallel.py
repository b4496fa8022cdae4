"""The columnar walk on several cores: byte ranges of the segments decoded by worker processes, used in order.

:class:`ParallelScan` is a :class:`~rmqformats.walk.scan.ColumnarScan`
whose segments are cut into byte ranges (``range_size`` bytes, across and
within segments) that a pool of ``jobs`` worker processes decodes ahead of
the reader. The reader takes the ranges' results strictly in commit-log
order and keeps a range only where its first record (found by a resync,
:func:`~rmqformats.walk.scan.find_record_start`'s kernel) is where the
walk of the ranges before it ended; anywhere else (damage, record-like bytes
in a body, a range a worker could not finish, a file that changed size) it
walks that range itself, serially. Output order, batches' rows, the data
end, BLANKs, errors and exit statuses are therefore exactly the serial
walk's: the earliest stop wins and nothing after it is handed on.

Why processes, not threads. Measured on a 16-core x86-64 machine (3 GiB
stores from ``benchmarks/storegen.py``, the numbers of the issue that asked
for this): the columnar walk with threads in one process runs 3.4 s on the
``mixed`` store with one thread and 2.9 / 3.0 / 5.2 / 4.3 s with 2 / 4 / 8 /
16 (``small``: 9.5 s, then 6.6 / 8.0 / 8.6 / 9.2 s): the Python work between
the compiled kernels holds the GIL, so threads stop helping past two and
then cost. Four processes on four segments ran it in 1.25 s (``mixed``) and
3.7 s (``small``), 2.5–2.75×.

What the processes hand back, measured here (a 2-core x86-64 VM, 256 MiB
``mixed`` and ``small`` stores in 64 MiB segments, CPU seconds because the
machine was shared: load average 10–14). The serial walk of every column
costs 0.34 s (``mixed``) and 1.1 s (``small``); its batches hold 517 MB for
``small``, so passing them is not free. Pickled Arrow IPC through the
pool's pipe made ``jobs=2`` five times slower than one job (2.95 s against
0.57 s of wall time on ``mixed``); a fresh shared-memory file per range
still cost more than it saved (page faults on both sides). Reused
shared-memory slots, each batch written into one as soon as it is built and
read in place by the reader, cost the workers 0.45 s and 1.17 s of CPU for
the whole store (30 % and 5 % over the serial walk) and the reader 0.03 s.
``export --to parquet`` spends most of its time encoding Parquet (about
80 % of its 2.0 s of CPU on ``mixed``, 65 % of 4.0 s on ``small``), which
the reader would do alone; so there the workers write whole segments' files
themselves (the files a serial export writes, byte for byte) and the reader
only moves them into place: 1.9–2.0 s and 4.1–4.5 s of CPU in all, the
reader's 0.03 s. Where the caller only sums the batches (``inspect``), summing them in the reader
kept two jobs at 0.92× of one; with a :class:`Fold` the workers sum their ranges and hand back only
the sums. ``benchmarks/RESULTS.md`` has ``bench_scaling.py``'s table.

How. Workers are started with ``forkserver`` (``spawn`` where there is no
such method): both are safe in a process that already runs threads, where a
plain ``fork`` can copy a lock held by another thread. The fork server
imports this module first, so each worker starts with the compiled kernels
loaded. A worker writes the batches of one range as an Arrow IPC stream
into a slot, a file in ``/dev/shm`` (the temporary folder where there is
none) that the reader has mapped; the reader's batches are views of it, and
the slot is reused once they are all dropped (more slots are made while the
caller holds batches). At most ``2 × jobs`` ranges are in flight, and a
range's batches are bounded by ``max_batch_bytes`` (a worker hands back the
rest of an over-full range to the reader), so memory is bounded in bytes
whatever the store's size. :meth:`ParallelScan.write_parquet` (``export
--to parquet``) hands whole segments to the workers instead. A store smaller
than :data:`~rmqformats.walk.jobs.MIN_PARALLEL_BYTES` (1 GiB, a segment) is walked serially:
starting the workers cost 0.72 s of CPU for the fork server's imports and
0.36 s for each worker's compiled kernels (measured here), as much as two
jobs save on a serial walk of about 0.5 GiB of small records or 1.6 GiB of
``mixed`` ones.

A walk that carries something from one record to the next has its workers
walk each range without it and hand back what the reader must check: a
DLedger commit log's walk (:mod:`rmqformats.dledger.parallel`) carries the
entries' index and term, and the reader keeps a range only where its first
entry follows the last one before it (``_range_begin``, ``_range_state``,
``_continues`` and ``_carry`` of :class:`~rmqformats.walk.scan.ColumnarScan`).

The environment variables ``RMQFORMATS_JOB_RANGE`` (bytes per range) and
``RMQFORMATS_JOBS_MIN_BYTES`` (the serial threshold) override the defaults,
so that tests cut small stores into many ranges.

A program that calls this with ``jobs`` above 1 from a script must guard its
top level with ``if __name__ == "__main__":``, as for any use of
:mod:`multiprocessing`: the workers import the main module.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Protocol

import numpy as np
import pyarrow as pa

from ..segments import Segment, SegmentLog, segment_index
from .jobs import RANGE_ENV, env_bytes, min_parallel_bytes, start_fork_server
from .kernels import warm_up
from .timecache import file_cached_times, file_times
from .scan import ColumnarScan, _Stop, new_track

#: Bytes of commit log in one range decoded by a worker.
DEFAULT_JOB_RANGE = 16 << 20


class Fold(Protocol):
    """Sums over record batches that a parallel walk can take range by range in its workers.

    Given to :class:`ParallelScan` as ``fold``, the walk's workers add
    the batches of the ranges they decode to copies made by :meth:`empty`
    (pickled to them and back), and the walk merges each copy into the
    fold in commit-log order, in place of yielding those batches; the
    caller adds every batch it is given to the fold before asking for the
    next. The fold then holds the same as if every batch had been added to
    it in order; a serial walk yields them all.
    """

    def empty(self) -> "Fold":
        """A fold like this one with nothing added."""

    def add(self, batch: pa.RecordBatch) -> None:
        """Add one batch's rows."""

    def merge(self, later: "Fold") -> None:
        """Add what ``later`` (from :meth:`empty`) holds: the rows after those added so far."""


class ParallelScan(ColumnarScan):
    """A :class:`ColumnarScan` whose byte ranges are decoded by ``jobs`` worker processes (see the module).

    Takes :class:`ColumnarScan`'s options, less ``predicate`` and ``live``
    (those walk serially), and gives the same batches' rows, ``end`` and
    ``blanks``; ``range_size`` is the bytes of one worker's range.
    """

    #: The serial walk a worker makes of a range (a subclass over another layout names its own).
    _worker_type: type[ColumnarScan] = ColumnarScan

    def __init__(self, commitlog: SegmentLog, *, jobs: int, range_size: int | None = None, fold: Fold | None = None,
                 **options):
        options.pop("threads", None)
        super().__init__(commitlog, **options)
        self._fold = fold
        self._fold_blank = None if fold is None else fold.empty()
        self._jobs = max(1, int(jobs))
        self._job_range = max(1 << 9, env_bytes(RANGE_ENV, DEFAULT_JOB_RANGE) if range_size is None
                              else int(range_size))
        self._min_bytes = min_parallel_bytes()
        #: Ranges whose workers' batches were used, and ranges (or their rests) this process walked itself.
        self.ranges_used = 0
        self.ranges_walked_here = 0
        # What a worker needs to make the same scan: the commit log's files as this scan saw them.
        worker_options = {k: v for k, v in options.items() if k not in ("start", "strict")}
        #: Segments the planner passed by their store times (:meth:`ColumnarScan._skip`): index -> (size, outcome).
        self._skips: dict[int, tuple[int, tuple]] = {}
        self._spec = (uuid.uuid4().hex, commitlog.path, tuple(commitlog.segments),
                      getattr(commitlog, "record_crc", True), worker_options, self._worker_type)

    def _run(self) -> Iterator[pa.RecordBatch]:
        segments = self._log.segments
        at = self._parallel_from()
        if at is None:
            return (yield from super()._run())
        first, pos = at
        plans: dict[int, tuple] = {}
        inflight: deque = deque()
        pool = _pool(self._jobs, () if self._fold is None else (type(self._fold).__module__,))
        tasks = self._plan(first, pos, plans, pool)
        # Room for a range's batches: those of a range's records, up to ``max_batch_bytes`` more than a
        # range of bodies when they decompress; pages are only taken where written.
        slots = _Slots(2 * self._batch_bytes + 4 * self._job_range + (1 << 20))

        current = [first]  # the segment being walked: ranges of earlier ones are no longer submitted

        def fill(upto: int | None = None) -> None:
            """Submit ranges until ``2 × jobs`` are in flight (and, with ``upto``, until that segment is planned)."""
            while len(inflight) < 2 * self._jobs or (upto is not None and upto not in plans):
                task = next(tasks, None)
                if task is None:
                    return
                if task[0] >= current[0]:
                    slot = slots.take()
                    inflight.append((task, _submit(pool, self._spec, slot, task[1:], self._fold_blank)))

        def drop(i: int) -> None:
            """Cancel the ranges of segment ``i`` still in flight."""
            while inflight and inflight[0][0][0] == i:
                _discard(inflight.popleft()[1])
        try:
            for i in range(first, len(segments)):
                seg = segments[i]
                last = i == len(segments) - 1
                current[0] = i
                fill(i)
                fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                try:
                    size = os.fstat(fd).st_size
                    limit = size + 1 if self._stop_at is None else self._stop_at - seg.start_offset
                    plan = plans.pop(i, None)
                    skipped = self._skips.pop(i, None)
                    if skipped is not None and skipped[0] == size:  # passed by its store times when planned
                        drop(i)
                        self._pass_segment(seg, size, skipped[1])
                        continue
                    if plan is None or plan[0] != size or not plan[1]:
                        # Not planned (its size could not be read then), changed since, or nothing to split.
                        drop(i)
                        key = self._times_key(seg, size, pos, limit, last)
                        track = new_track(key)
                        outcome = yield from self._walk_tracked(track, seg, fd, size, pos, limit, last)
                    else:
                        key = plan[2]
                        track = new_track(key)
                        try:
                            outcome = yield from self._use_ranges(seg, fd, size, pos, limit, last, i, inflight,
                                                                  fill, track)
                        finally:
                            drop(i)  # the segment ended before its last range: those results are not used
                    self._remember(seg, key, track, outcome)
                    self._segment_done(seg, size, outcome, last)
                except _Stop as stop:
                    self._stopped(stop)
                    return
                finally:
                    os.close(fd)
                pos = 0
        finally:
            for _, job in inflight:
                _discard(job)
            inflight.clear()
            slots.close()
            self._windows.clear()
            self._chunks.clear()

    @property
    def parallel(self) -> bool:
        """Whether this walk uses the worker processes (else it is the serial walk: see the module)."""
        return self._parallel_from() is not None

    def _parallel_from(self) -> tuple[int, int] | None:
        """The segment and position the walk starts at, or ``None`` when it is to be serial."""
        segments = self._log.segments
        if not segments or self._jobs < 2 or self._live or self._predicate is not None:
            return None
        first, pos = 0, 0
        if self._start is not None:
            first = self._log.segment_index(self._start)
            pos = self._start - segments[first].start_offset
        if sum(s.size for s in segments[first:]) - pos < self._min_bytes:
            return None
        return first, pos

    def write_parquet(self, sink) -> None:
        """Write the scan's batches into ``sink`` (a :class:`rmqformats.export.ParquetSink`), each segment's
        files written by a worker (the sink's own files, one per segment, byte for byte) and moved into
        the sink's folder in commit-log order; ``end``, ``blanks`` and errors are the walk's."""
        at = self._parallel_from()
        if at is None:
            for batch in self:
                sink.write(batch)
            return
        self._gen = iter(())  # this walk replaces the iterator's
        first, pos = at
        segments = self._log.segments
        options = {"partition_by": sink.partition_by, "keep_segment": "segment" in sink.schema.names,
                   "compression": sink.compression, "max_open": sink.max_open}
        spec = (type(sink), options)
        pool = _pool(self._jobs)
        parts = tempfile.mkdtemp(prefix=".rmqformats-parts-", dir=os.path.dirname(os.path.abspath(sink.folder)))
        inflight: deque = deque()

        def submit(i: int, start: int) -> None:
            seg = segments[i]
            try:
                size = os.stat(seg.path).st_size
            except OSError:
                size = None
            limit = None if size is None else (size + 1 if self._stop_at is None
                                               else self._stop_at - seg.start_offset)
            job = key = None
            skip = None if size is None else self._skip_file(seg, size, start, i == len(segments) - 1)
            if skip is not None:  # passed by its store times: no worker writes it
                inflight.append((i, size, skip, None))
                return
            if size is not None:
                key = self._times_key(seg, size, start, limit, i == len(segments) - 1)
                try:
                    job = pool.submit(_segment_task, self._spec, spec, os.path.join(parts, str(i)), seg, size,
                                      start, limit, i == len(segments) - 1, key is not None)
                except Exception:  # noqa: BLE001 - a broken pool: the segment is walked here
                    _drop_broken_pools()
            inflight.append((i, size, job, key))
        nxt = first
        try:
            for i in range(first, len(segments)):
                while nxt < len(segments) and len(inflight) < 2 * self._jobs:
                    submit(nxt, pos if nxt == first else 0)
                    nxt += 1
                _, planned, job, key = inflight.popleft()
                seg = segments[i]
                last = i == len(segments) - 1
                start = pos if i == first else 0
                fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                try:
                    size = os.fstat(fd).st_size
                    limit = size + 1 if self._stop_at is None else self._stop_at - seg.start_offset
                    if isinstance(job, tuple) and planned == size:
                        self._pass_segment(seg, size, job)
                        continue
                    if isinstance(job, tuple):
                        job = None
                    result = None if job is None or planned != size else _result(job)
                    if result is not None and not self._continues(result[5]):
                        shutil.rmtree(os.path.join(parts, str(i)), ignore_errors=True)
                        result = None
                    if result is None:  # walked here, into the sink, as the serial walk does
                        key = self._times_key(seg, size, start, limit, last)
                        track = new_track(key)
                        outcome = _drain_walk(self._walk_tracked(track, seg, fd, size, start, limit, last), sink)
                        self.ranges_walked_here += 1
                    else:
                        outcome, files, rows, done, times, state = result
                        self._carry(state)
                        track = new_track(key)
                        if track is not None:
                            _add_range_times(track, times)
                        self.ranges_used += 1
                        sink.close_all()
                        for rel in files:
                            target = os.path.join(sink.folder, rel)
                            os.makedirs(os.path.dirname(target), exist_ok=True)
                            os.replace(os.path.join(parts, str(i), rel), target)
                            sink.files.append(target)
                        sink.rows += rows
                        self.bytes_done += done
                        if outcome[0] == "stop":
                            raise _Stop.from_outcome(outcome)
                    self._remember(seg, key, track, outcome)
                    self._segment_done(seg, size, outcome, last)
                except _Stop as stop:
                    self._stopped(stop)
                    return
                finally:
                    os.close(fd)
        finally:
            for _, _, job, _ in inflight:
                if job is not None and not isinstance(job, tuple):
                    job.cancel()
            shutil.rmtree(parts, ignore_errors=True)

    def _plan(self, first: int, pos: int, plans: dict[int, tuple], pool) -> Iterator[tuple]:
        """The ranges to hand to workers, segment after segment; ``plans[i]`` gets segment ``i``'s
        ``(size, bounds)`` when its ranges are made. Stops at a segment whose size cannot be read (its
        walk, serial, then meets the error where the serial walk does). A segment a store-time window
        passes (:meth:`_skip_ahead`) gets no ranges."""
        hops: dict[int, tuple] = {}
        try:
            yield from self._plan_ranges(first, pos, plans, pool, hops)
        finally:
            for _, job in hops.values():
                job.cancel()

    def _plan_ranges(self, first: int, pos: int, plans: dict[int, tuple], pool, hops: dict) -> Iterator[tuple]:
        segments = self._log.segments
        for i in range(first, len(segments)):
            seg = segments[i]
            try:
                size = os.stat(seg.path).st_size
            except OSError:
                return
            skip = self._skip_ahead(i, size, pos, hops, pool)
            if skip is not None:  # no range of it is handed to the workers
                self._skips[i] = (size, skip)
                plans[i] = (size, [], None)
                pos = 0
                continue
            limit = size + 1 if self._stop_at is None else self._stop_at - seg.start_offset
            stop_at = min(size, limit)
            bounds = []
            b = pos
            while b < stop_at:
                bounds.append((b, min(b + self._job_range, stop_at)))
                b += self._job_range
            if bounds:
                # The last range runs to ``limit`` so that its walk sees the segment's end, BLANK or stop.
                bounds[-1] = (bounds[-1][0], limit)
            # The store-time cache's key of a segment walked whole, read before any range of it is walked.
            key = self._times_key(seg, size, pos, limit, i == len(segments) - 1)
            plans[i] = (size, bounds, key)
            for k, (b, e) in enumerate(bounds):
                yield (i, seg, size, b, e, k == 0, i == len(segments) - 1, key is not None)
            pos = 0

    def _skip_file(self, seg: Segment, size: int, pos: int, last: bool) -> tuple | None:
        """:meth:`_skip` of a segment not open yet (``None`` where it cannot be opened: its walk meets that)."""
        if not self._may_skip(seg, size, pos, last):
            return None
        return self._skip_outcome(file_times(seg.path, size, low=self._low, high=self._high,
                                             cache=self._time_cache))

    def _skip_ahead(self, i: int, size: int, pos: int, hops: dict, pool) -> tuple | None:
        """:meth:`_skip_file` of segment ``i``, its records walked by a worker; the walks of the next
        segments are handed to the workers meanwhile (``hops``: index -> future), so that a store-time
        window's segments are walked ``jobs`` at a time. Those the store-time cache answers
        (:mod:`rmqformats.walk.timecache`) are not handed to a worker."""
        segments = self._log.segments
        last = len(segments) - 1
        if not self._may_skip(segments[i], size, pos, i == last):
            return None
        for j in range(i, min(len(segments), i + 2 * self._jobs)):
            if j in hops:
                continue
            try:
                size_j = size if j == i else os.stat(segments[j].path).st_size
            except OSError:
                break
            if j != i and not self._may_skip(segments[j], size_j, 0, j == last):
                break
            known = file_cached_times(segments[j].path, size_j, low=self._low, high=self._high,
                                      cache=self._time_cache)
            if known is not None:
                done: Future = Future()
                done.set_result(known)
                hops[j] = (size_j, done)
                continue
            try:
                hops[j] = (size_j, pool.submit(file_times, segments[j].path, size_j, low=self._low,
                                               high=self._high, cache=self._time_cache))
            except Exception:  # noqa: BLE001 - a broken pool: walked here
                _drop_broken_pools()
                break
        planned = hops.pop(i, None)
        found = None
        if planned is not None and planned[0] == size:
            try:
                found = planned[1].result()
            except Exception:  # noqa: BLE001 - a worker that failed: walked here
                _drop_broken_pools()
                return self._skip_file(segments[i], size, pos, i == last)
        else:
            return self._skip_file(segments[i], size, pos, i == last)
        return self._skip_outcome(found)

    def _use_ranges(self, seg: Segment, fd: int, size: int, pos: int, limit: int, last: bool, index: int,
                    inflight: deque, fill, track=None):
        """The walk of segment ``index`` from the workers' ranges (at the head of ``inflight``).

        Returns how the segment's walk ended, as :meth:`_walk` does, and
        raises :class:`_Stop` where the data ends; a range whose result
        does not continue the walk exactly is walked here instead.
        """
        expected = pos
        while True:
            fill()
            if not inflight or inflight[0][0][0] != index:  # not expected: the rest is walked here
                return (yield from self._walk_tracked(track, seg, fd, size, expected, limit, last))
            (_, _, _, b, e, _, _, _), job = inflight.popleft()
            if e != limit and expected >= e:
                _discard(job)
                continue  # a record of the previous range covers this whole range
            result = _result(job)
            if result is None or result[0] != expected or not self._continues(result[5]):
                batches, outcome, done = None, ("more", expected), 0
            else:
                _, batches, outcome, done, times, state = result
                self.ranges_used += 1
                self._carry(state)
                if track is not None:
                    _add_range_times(track, times)
            if batches is None:
                _release(job)
            elif self._fold is not None:  # the range's batches, summed by the worker
                _release(job)
                self._fold.merge(batches)
                batches = None
            else:
                # The batches are read where the worker wrote them; the slot is free again once the
                # last of them is dropped.
                for batch in pa.ipc.open_stream(job.slot.lease(batches)):
                    yield batch
                batches = None
            self.bytes_done += done
            if outcome[0] == "stop":
                raise _Stop.from_outcome(outcome)
            if outcome[0] == "more":  # the rest of the range, walked here a batch at a time
                self.ranges_walked_here += 1
                outcome = yield from self._walk_tracked(track, seg, fd, size, outcome[1], e, last)
            if outcome[0] == "blank" or e == limit:
                return outcome
            expected = outcome[1]


def start_workers(jobs: int) -> None:
    """Start the ``jobs`` worker processes and load their compiled kernels now, not at the first walk
    (a long-running program, or a benchmark, pays that once before its timed work)."""
    pool = _pool(max(1, int(jobs)))
    # Each task holds its worker a moment, so that every task starts a worker of its own.
    for job in [pool.submit(_warm, 0.2) for _ in range(max(1, int(jobs)))]:
        job.result()


# -- the workers ------------------------------------------------------------------------------

def _warm(pause: float) -> None:
    warm_up()
    time.sleep(pause)


#: The worker's scans, by the parent scan's id (a worker serves the ranges of one scan after another).
_WORKER_SCANS: dict[str, ColumnarScan] = {}
#: The worker's mappings of the reader's slots, by path (kept: a new mapping costs a fault per page).
_WORKER_MAPS: dict[str, pa.Buffer] = {}


def _worker_start() -> None:
    # Ctrl-C is the reader's to handle: it stops the scan, and the pool stays usable.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _range_task(spec: tuple, slot: str, seg: Segment, size: int, begin: int, end: int, exact: bool, last: bool,
                times: bool, fold: Fold | None = None):
    """Decode one range in a worker: ``(first record position or None, the bytes of the Arrow IPC stream
    written at the start of the shared file ``slot`` (None without batches), outcome, bytes covered)``;
    ``None`` when it failed (the reader then walks the range itself), also when the batches do not fit.
    With ``fold`` (a :class:`Fold` with nothing added), the range's batches are added to it in place of
    the stream, and it comes back in the stream's place. A fifth value, with ``times``: the least and
    greatest store time and the ``SCHEDULE_TOPIC_XXXX`` records of the records walked (for the store-time
    cache; else ``None``); a sixth, what the walk carries (:meth:`ColumnarScan._range_state`)."""
    try:
        scan = _worker_scan(spec)
        scan._track = track = new_track(times)
        scan._range_begin()
        try:
            result = _range_result(scan, slot, seg, size, begin, end, exact, last, fold)
            return (*result, None if track is None else tuple(track.tolist()), scan._range_state())
        finally:
            scan._track = None
    except Exception:  # noqa: BLE001 - the reader walks this range itself and meets the error there, in order
        return None


def _range_result(scan: ColumnarScan, slot: str, seg: Segment, size: int, begin: int, end: int, exact: bool,
                  last: bool, fold: Fold | None) -> tuple:
    """:func:`_range_task`'s result but the store times."""
    fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        if fold is not None:
            start, outcome, done = _fold_range(scan, fold, seg, fd, size, begin, end, exact, last)
            return start, fold if start is not None else None, outcome, done
        area = _WORKER_MAPS.get(slot)
        if area is None:
            with open(slot, "r+b") as f:
                area = _WORKER_MAPS[slot] = pa.py_buffer(mmap.mmap(f.fileno(), 0))
        start, stream, outcome, done = _write_range(scan, area, seg, fd, size, begin, end, exact, last)
    finally:
        os.close(fd)
    if isinstance(outcome, _Stop):
        outcome = outcome.outcome()
    return start, stream, outcome, done


def _add_range_times(track: np.ndarray, times: tuple[int, int, int]) -> None:
    """Add a worker's ``(least, greatest store time, scheduled records)`` to ``track``."""
    low, high, schedule = times
    track[0] = min(int(track[0]), low)
    track[1] = max(int(track[1]), high)
    track[2] += schedule


def _fold_range(scan: ColumnarScan, fold: Fold, seg: Segment, fd: int, size: int, begin: int, end: int,
                exact: bool, last: bool):
    """:meth:`ColumnarScan._range_job` with each batch added to ``fold`` as soon as it is built:
    ``(start, outcome, bytes covered)``; a stop is handed back as its outcome, after the batches before it."""
    start = begin if exact else scan._range_start(fd, seg, size, begin, end)
    if start is None:
        return None, ("limit", end), 0
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
    try:
        outcome = _drain_walk(scan._walk(seg, fd, size, start, end, last, progress), fold, "add")
    except _Stop as stop:
        outcome = stop.outcome()
    return start, outcome, done[0]


def _drain_walk(walk, sink, method: str = "write") -> tuple:
    """Write the batches of a :meth:`ColumnarScan._walk` into ``sink`` (its ``method``); returns how the walk
    ended (raises :class:`_Stop` where the data ends, as the walk does)."""
    put = getattr(sink, method)
    try:
        while True:
            put(next(walk))
    except StopIteration as fin:
        return fin.value


def _segment_task(spec: tuple, sink_spec: tuple, folder: str, seg: Segment, size: int, start: int, limit: int,
                  last: bool, times: bool):
    """Write one segment's batches, from ``start``, with a sink like the reader's into ``folder``:
    ``(outcome, its files relative to folder, rows written, bytes covered, with ``times`` (least, greatest store
    time, scheduled records) of the records walked, else ``None``, what the walk carries)``; ``None`` when it
    failed (the reader then walks the segment itself and meets the error there)."""
    try:
        scan = _worker_scan(spec)
        scan._track = track = new_track(times)
        scan._range_begin()
        sink_type, options = sink_spec
        sink = sink_type(folder, scan.schema, **options)
        done = [0]

        def progress(n: int) -> None:
            done[0] += n
        fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            try:
                outcome = _drain_walk(scan._walk(seg, fd, size, start, limit, last, progress), sink)
            except _Stop as stop:
                outcome = stop.outcome()
            sink.close()
        except BaseException:
            sink.abort()
            raise
        finally:
            os.close(fd)
            scan._track = None
        return outcome, [os.path.relpath(path, folder) for path in sink.files], sink.rows, done[0], \
            None if track is None else tuple(track.tolist()), scan._range_state()
    except Exception:  # noqa: BLE001 - the reader walks this segment itself and meets the error there, in order
        return None


class _WorkerLog:
    """The reader's commit log as a worker's walk sees it: its path, segments and CRC rule."""

    def __init__(self, path: str, segments: tuple[Segment, ...], record_crc: bool):
        self.path, self.segments, self.record_crc = path, segments, record_crc

    def segment_index(self, offset: int) -> int:
        """Index of the segment holding commit-log ``offset``, as the reader's commit log finds it."""
        return segment_index(self.path, self.segments, offset)


def _worker_scan(spec: tuple) -> ColumnarScan:
    """The worker's scan for the reader's ``spec`` (made once per scan)."""
    key, path, segments, record_crc, options, scan_type = spec
    scan = _WORKER_SCANS.get(key)
    if scan is None:
        _WORKER_SCANS.clear()
        _WORKER_MAPS.clear()  # the slots of the scan before
        scan = _WORKER_SCANS[key] = scan_type(_WorkerLog(path, segments, record_crc), **options)
    return scan


def _write_range(scan: ColumnarScan, area: pa.Buffer, seg: Segment, fd: int, size: int, begin: int, end: int,
                 exact: bool, last: bool):
    """:meth:`ColumnarScan._range_job`, each batch written to ``area`` as an Arrow IPC stream as soon as it
    is built (never all held at once): ``(start, bytes written or None, outcome, bytes covered)``."""
    start = begin if exact else scan._range_start(fd, seg, size, begin, end)
    if start is None:
        return None, None, ("limit", end), 0
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
    walk = scan._walk(seg, fd, size, start, end, last, progress)
    sink = writer = None
    held = 0
    try:
        while True:
            scan._resume.at = None
            batch = next(walk)
            if writer is None:
                sink = pa.FixedSizeBufferWriter(area)
                writer = pa.ipc.new_stream(sink, scan.schema)
            writer.write_batch(batch)
            held += batch.nbytes
            batch = None
            if held >= scan._batch_bytes and scan._resume.at is not None:
                at = scan._resume.at
                walk.close()
                outcome, covered = ("more", at), at - start
                break
    except StopIteration as fin:
        outcome, covered = fin.value, done[0]
    except _Stop as stop:
        outcome, covered = stop, done[0]
    if writer is None:
        return start, None, outcome, covered
    writer.close()
    return start, sink.tell(), outcome, covered


def _shared_memory() -> str | None:
    """``/dev/shm`` where it is a folder this process can write, else ``None`` (the temporary folder)."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None


class _Slot:
    """A shared file a worker writes one range's batches into, mapped here for reading them in place."""

    def __init__(self, slots: "_Slots", path: str, size: int):
        self.slots = slots
        self.path = path
        with open(path, "w+b") as f:
            f.truncate(size)
            self.area = pa.py_buffer(mmap.mmap(f.fileno(), size))

    def lease(self, nbytes: int) -> pa.Buffer:
        """The first ``nbytes`` of the slot, as a buffer that gives the slot back when it and every
        slice of it (the batches read from it) are dropped."""
        return pa.foreign_buffer(self.area.address, nbytes, base=_Lease(self))


class _Lease:
    def __init__(self, slot: _Slot):
        self.slot = slot

    def __del__(self):
        self.slot.slots.give(self.slot)


class _Slots:
    """The slots of one scan: reused, so that their pages are faulted in once; more are made while all
    are taken (by ranges in flight, or by batches the caller still holds)."""

    def __init__(self, size: int):
        self.size = size
        self.folder = tempfile.mkdtemp(prefix=f"rmqformats-walk-{os.getpid()}-", dir=_shared_memory())
        self.free: list[_Slot] = []
        self.made = 0

    def take(self) -> _Slot:
        try:
            return self.free.pop()  # list.pop and append are atomic: leases end in any thread
        except IndexError:
            self.made += 1
            return _Slot(self, os.path.join(self.folder, f"slot-{self.made}"), self.size)

    def give(self, slot: _Slot) -> None:
        if self.folder is not None:
            self.free.append(slot)

    def close(self) -> None:
        """Remove the files; mappings still leased stay readable until their batches are dropped."""
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None
        self.free.clear()


def _release(job: Future) -> None:
    """Give a range's slot back once its worker is done with it (its result not used)."""
    job.add_done_callback(lambda j: j.slot.slots.give(j.slot))


def _discard(job: Future) -> None:
    """Drop a range's result unused."""
    job.cancel()
    _release(job)


def _result(job: Future):
    """A range's result, or ``None`` when its worker could not give one (the pool broke, say)."""
    try:
        return job.result()
    except Exception:  # noqa: BLE001 - the range is walked by the reader instead
        _drop_broken_pools()
        return None


def _submit(pool: ProcessPoolExecutor, spec: tuple, slot: _Slot, task: tuple, fold: Fold | None) -> Future:
    try:
        job = pool.submit(_range_task, spec, slot.path, *task, fold)
    except Exception as exc:  # noqa: BLE001 - a broken pool: the range is walked by the reader
        _drop_broken_pools()
        job = Future()
        job.set_exception(exc)
    job.slot = slot
    return job


_POOLS: dict[int, ProcessPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _context(preload: tuple[str, ...] = ()):
    """``forkserver`` (its server importing this module first, and the modules ``preload`` names, where it is
    not running yet), or ``spawn`` where there is none."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        start_fork_server(preload)
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def _pool(jobs: int, preload: tuple[str, ...] = ()) -> ProcessPoolExecutor:
    """A pool of ``jobs`` worker processes, kept for the process (workers are not started per scan);
    ``preload``: modules the workers will need (a fold's), imported once by the fork server if it starts now."""
    with _POOLS_LOCK:
        pool = _POOLS.get(jobs)
        if pool is None:
            pool = _POOLS[jobs] = ProcessPoolExecutor(jobs, mp_context=_context(preload), initializer=_worker_start)
        return pool


def _drop_broken_pools() -> None:
    with _POOLS_LOCK:
        for jobs, pool in list(_POOLS.items()):
            if getattr(pool, "_broken", False):
                del _POOLS[jobs]
                pool.shutdown(wait=False, cancel_futures=True)


def close_pools() -> None:
    """Shut the worker pools down: the ranges queued are cancelled, and this waits for the workers (each
    ends after the range it is walking) and the pools' threads to end. A later walk starts a new pool."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


# Run before concurrent.futures' own exit hook (threading runs these in reverse order of registration, and
# that module registered its hook when this one imported it). Its hook wakes each pool's thread without the
# pool's lock; a thread closing its wake-up pipe at that moment, a range's result just in after a walk that
# ended early, made it fail with EBADF, a traceback on stderr after the command's output (CPython 3.10 to
# 3.13). A pool already shut down has its pipe closed, and the hook passes it by.
if hasattr(threading, "_register_atexit"):
    threading._register_atexit(close_pools)


def _forget_pools() -> None:
    """Drop the parent's pools in a forked child: their processes are the parent's, not its own."""
    global _POOLS_LOCK
    _POOLS_LOCK = threading.Lock()
    _POOLS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)
