"""Where the data of a commit log ends, found on the driver before any split is read.

The broker's recovery ends the data of the *whole* commit log at its first
record it rejects; messages after it, in the same segment or in later ones,
are not messages any more. A split on an executor sees only its own bytes,
so it cannot know whether the data ended in an earlier split. The driver
therefore walks the record chain once before planning (:func:`check_chain`):
the columnar decoder's walk with only the offset column built, its byte
ranges decoded by several threads and joined where the walk really ended,
so it is exactly the API's scan. Its result is

* the data end (:class:`~rmqformats.commitlog.DataEnd`, the same as
  ``open_store(p).commitlog.scan().end``), and whether it is damage: a
  corrupt record, or a zero-filled tail with data after it;
* for every split boundary, the first record of the chain at or after it,
  so each split starts exactly on the chain, never on record-like bytes in
  a body, and splits after the data end are not planned at all.

The walk reads the data once (about 0.3 s per GiB from the page cache per
thread); it is skipped with ``salvage=true``, where every split resyncs on
its own and reads past damage. :func:`data_limit` finds the end of the
non-zero bytes of a segment (holes of sparse files are skipped with
``SEEK_DATA``), so that no split is planned over a preallocated zero tail.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmqformats.commitlog import CommitLog, DataEnd, EndReason, Segment
from rmqformats.columnar import ColumnarScan

#: Bytes read at a time when looking for the last non-zero byte of a file.
_ZERO_WINDOW = 4 << 20
#: Threads of the driver's walk (the decoder's byte ranges are decoded by this many at once).
CHAIN_THREADS = max(1, min(os.cpu_count() or 1, 8))
#: Walks kept for later plans of the same files (each action of a DataFrame plans the read again).
_CACHE_SIZE = 8


def view(segments: Sequence[Segment]) -> CommitLog:
    """A commit log of exactly ``segments`` (the files a read selected), in offset order."""
    log = CommitLog(segments[0].path)
    log.segments = tuple(segments)
    log.path = os.path.dirname(segments[0].path)
    return log


def data_limit(path: str, floor: int = 0) -> int:
    """The position after the last non-zero byte of the file at or after ``floor`` (``floor`` if none)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        size = os.fstat(fd).st_size
        extents = _data_extents(fd, floor, size)
        for begin, end in reversed(extents):
            while end > begin:
                start = max(begin, end - _ZERO_WINDOW)
                data = np.frombuffer(os.pread(fd, end - start, start), np.uint8)
                if data.any():
                    return start + len(data) - int(np.argmax(data[::-1] != 0))
                end = start
        return floor
    finally:
        os.close(fd)


def _data_extents(fd: int, floor: int, size: int) -> list[tuple[int, int]]:
    """The ``[begin, end)`` ranges of ``fd`` that hold data (not holes), from ``floor`` on."""
    if not hasattr(os, "SEEK_DATA"):
        return [(floor, size)]
    extents = []
    pos = floor
    try:
        while pos < size:
            begin = os.lseek(fd, pos, os.SEEK_DATA)
            end = min(os.lseek(fd, begin, os.SEEK_HOLE), size)
            extents.append((begin, end))
            pos = end
    except OSError as exc:
        import errno
        if exc.errno != errno.ENXIO:  # ENXIO: no data after pos; anything else: no hole support
            return [(floor, size)]
    return extents


@dataclass(frozen=True)
class EndInfo:
    """The data end as a split reports it: where, why, and whether it is damage."""

    path: str
    pos: int
    reason: str
    damage: bool


def bounds(size: int, split_size: int | None) -> np.ndarray:
    """The split boundaries of a segment of ``size`` bytes: 0, then every ``split_size`` bytes."""
    if split_size is None:
        return np.zeros(1, np.int64)
    return np.arange(0, max(size, 1), split_size, dtype=np.int64)


@dataclass(frozen=True)
class Chain:
    """What the walk of a commit log found (see the module docstring)."""

    #: For each segment, for each of its split boundaries (:func:`bounds`), the position of the
    #: first chain record at or after the boundary and before the next one (-1: none starts there).
    starts: tuple[np.ndarray, ...]
    end: DataEnd
    #: Index of the segment where the data ends (``len(segments)`` when there are none).
    end_segment: int
    info: EndInfo | None
    #: For each segment, for each split boundary, the least and greatest store time of the records that
    #: start in that split, in Spark's microseconds (wrapping as the conversion to Spark does); a split
    #: without records has least > greatest. Filters on store time leave out the splits outside a window.
    time_low: tuple[np.ndarray, ...] = ()
    time_high: tuple[np.ndarray, ...] = ()


def describe(end: DataEnd) -> str:
    """The reason text of a data end, as ``rmqformats inspect`` prints it."""
    return f"{end.reason.value}: {end.detail}" if end.detail else end.reason.value


def _zero_tail_damage(segments: Sequence[Segment], i: int, pos: int) -> str | None:
    """Why a zero-filled tail at ``pos`` of segment ``i`` is damage (data after it), else ``None``."""
    here = data_limit(segments[i].path, pos)
    if here > pos:
        return f"zero-filled bytes where a record should start, but the segment holds data up to position {here}"
    for later in segments[i + 1:]:
        if data_limit(later.path) > 0:
            return (f"zero-filled bytes where a record should start, but a later segment holds data "
                    f"({os.path.basename(later.path)})")
    return None


def end_info(segments: Sequence[Segment], end: DataEnd) -> EndInfo | None:
    """How the split holding ``end`` reports it (``None`` without segments)."""
    if end.segment is None:
        return None
    if end.reason.is_clean:
        why = _zero_tail_damage(segments, [s.path for s in segments].index(end.segment),
                                end.file_offset) if end.reason is EndReason.ZERO_TAIL else None
        return EndInfo(end.segment, end.file_offset, why or describe(end), why is not None)
    return EndInfo(end.segment, end.file_offset, describe(end), True)


_cache: OrderedDict = OrderedDict()
_cache_lock = threading.Lock()


def _key(segments: Sequence[Segment], split_size: int | None, verify_crc: bool) -> tuple:
    stats = []
    for s in segments:
        st = os.stat(s.path)
        stats.append((s.path, s.start_offset, st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(stats), split_size, verify_crc


def check_chain(segments: Sequence[Segment], split_size: int | None, *, verify_crc: bool,
                threads: int = CHAIN_THREADS) -> Chain:
    """Walk the record chain of ``segments`` and place the split boundaries (:func:`bounds`) on it.

    ``verify_crc`` ends the data at the first CRC mismatch, as
    ``scan(verify_crc=True)`` does. Results are kept for files unchanged
    since (same size, modification time and inode).
    """
    key = _key(segments, split_size, verify_crc)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    chain = _walk(segments, split_size, verify_crc, threads)
    with _cache_lock:
        _cache[key] = chain
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return chain


def _walk(segments: Sequence[Segment], split_size: int | None, verify_crc: bool, threads: int) -> Chain:
    if not segments:
        return Chain((), DataEnd(0, EndReason.NO_SEGMENTS, None, 0), 0, None)
    # Every boundary as a commit-log offset, with the end of its split (the next boundary or the
    # segment's end); record offsets come in increasing order, so one pass places them all.
    per_segment = [bounds(s.size, split_size) for s in segments]
    lo = np.concatenate([s.start_offset + b for s, b in zip(segments, per_segment)])
    hi = np.concatenate([s.start_offset + np.append(b[1:], s.size) for s, b in zip(segments, per_segment)])
    if len(lo) > 1 and np.any(np.diff(lo) < 0):
        raise ValueError("commit-log segments overlap: their 20-digit names and sizes disagree")
    found = np.full(len(lo), -1, np.int64)
    t_low = np.full(len(lo), np.iinfo(np.int64).max, np.int64)
    t_high = np.full(len(lo), np.iinfo(np.int64).min, np.int64)
    j = 0
    scan = ColumnarScan(view(segments), columns=("commitLogOffset", "storeTimestamp"), verify_crc=verify_crc,
                        decompress=False, threads=threads, batch_size=1 << 16)
    for batch in scan:
        offsets = batch.column(0).to_numpy()
        if not len(offsets):
            continue
        with np.errstate(over="ignore"):
            times = batch.column(1).cast("int64").to_numpy() * np.int64(1000)
        split = np.searchsorted(lo, offsets, side="right") - 1
        which, first = np.unique(split, return_index=True)
        which_ok = which >= 0
        if which_ok.any():
            which, first = which[which_ok], first[which_ok]
            split_ok = split >= 0
            t_low[which] = np.minimum(t_low[which], np.minimum.reduceat(times[split_ok], first - first[0]))
            t_high[which] = np.maximum(t_high[which], np.maximum.reduceat(times[split_ok], first - first[0]))
        if j >= len(lo):
            continue
        stop = int(np.searchsorted(lo, offsets[-1], side="right"))
        if stop > j:
            first = offsets[np.searchsorted(offsets, lo[j:stop], side="left")]
            found[j:stop] = np.where(first < hi[j:stop], first, -1)
            j = stop
    end = scan.end
    assert end is not None  # the walk has no stop, so it ends at the data end
    starts, lows, highs = [], [], []
    k = 0
    for s, b in zip(segments, per_segment):
        part = found[k:k + len(b)]
        starts.append(np.where(part >= 0, part - s.start_offset, -1))
        lows.append(t_low[k:k + len(b)])
        highs.append(t_high[k:k + len(b)])
        k += len(b)
    index = [s.path for s in segments].index(end.segment) if end.segment is not None else len(segments)
    return Chain(tuple(starts), end, index, end_info(segments, end), tuple(lows), tuple(highs))
