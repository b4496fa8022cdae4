"""A segment's store times, found by walking its record chain without decoding it.

Store times are not in order in a commit log (a broker's clock can step
back; the vector stores' times go back and forth), so nothing but the
records themselves bounds the times a segment holds. :func:`walk_times`
walks a segment's records with :func:`~rmqformats.walk.kernels.time_bounds`
(the decoding walk's own :func:`~rmqformats.walk.kernels.walk_records`,
so it takes exactly the records the decoding walk takes and stops where it
stops) and keeps only the least and greatest store time, whether a record's
time lies in a window (it stops at the first that does), and how many
``SCHEDULE_TOPIC_XXXX`` records it passed. The segment is read with
``pread`` in windows small enough to stay in a core's cache between the read
and the walk; every byte is read (records of a few KiB put a needed byte on
every page), but no column is built. :class:`~rmqformats.walk.scan.ColumnarScan`
uses it to pass the segments a store-time window cannot hold. What the walk
of all of a segment's records finds is kept outside the store by
:mod:`rmqformats.walk.timecache`, so that a later window passes the segments
whose times it cannot meet without reading them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..mapped import pread_into
from ..segments import SCHEDULE_TOPIC, Segment
from . import kernels as K

#: Bytes read at a time.
WINDOW = 256 << 10
#: A record longer than this ends the walk (``None``): the decoding walk reads it.
MAX_RECORD = 64 << 20
I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1
_SCHEDULE_TOPIC = np.frombuffer(SCHEDULE_TOPIC.encode("ascii"), np.uint8).copy()
_HEADER_BYTES = 8


@dataclass(frozen=True)
class SegmentTimes:
    """What the walk of one segment's records found."""

    #: Least and greatest store time (epoch ms) of the records walked; ``low > high`` when there were none.
    low: int
    high: int
    #: Why the walk stopped (``kernels.STOP_*``; ``STOP_LIMIT``: after a record in the window).
    stop: int
    #: The file position where it stopped (the BLANK record's, with ``STOP_BLANK``).
    pos: int
    #: TOTALSIZE of the BLANK record at ``pos`` (0 unless ``stop`` is ``STOP_BLANK``).
    blank_size: int
    #: ``SCHEDULE_TOPIC_XXXX`` records walked (their DELAY is checked by the decoding walk only).
    schedule: int
    #: Whether a record's store time lies in the window asked for.
    hit: bool
    #: Whether these times came from the store-time cache (:mod:`rmqformats.walk.timecache`): no byte of
    #: the segment was read for them.
    cached: bool = False


def walk_times(fd: int, size: int, *, low: int = I64_MIN, high: int = I64_MIN,
               scratch: np.ndarray | None = None) -> SegmentTimes | None:
    """Walk the records of the open segment ``fd`` (``size`` bytes) from its start; stop after the first
    batch of records holding a store time in ``[low, high)`` (the default window is empty: every record is
    walked). ``None`` when the file is shorter than ``size`` or a record is longer than :data:`MAX_RECORD`
    (the decoding walk then meets it). ``scratch``: a reused ``uint8`` buffer of :data:`WINDOW` bytes.
    With no record in the window the result is that of the empty window's walk (every record walked),
    which :mod:`rmqformats.walk.timecache` keeps."""
    low = min(max(low, I64_MIN), I64_MAX)
    high = min(max(high, I64_MIN), I64_MAX)
    buf = scratch if scratch is not None else np.empty(WINDOW, np.uint8)
    i32 = np.empty((K.N_I32, 1024), np.int32)
    i64 = np.empty((K.N_I64, 1024), np.int64)
    out = np.array([I64_MAX, I64_MIN, 0, 0], np.int64)
    at = 0
    need = 0
    while True:
        want = min(size - at, max(len(buf), need))
        if want > MAX_RECORD:
            return None
        if want > len(buf):
            buf = np.empty(want, np.uint8)
        if pread_into(fd, buf[:want], at) < want:
            return None
        _, stop, spos = K.time_bounds(buf, 0, want, at + want == size, low, high, _SCHEDULE_TOPIC, i32, i64, out)
        if stop != K.STOP_WINDOW:
            break
        need = 0
        if spos == 0:  # a record longer than what was read: read it whole next time
            need = max(int.from_bytes(bytes(buf[:4]), "big", signed=True), 2 * want, _HEADER_BYTES)
        at += spos
    blank = int.from_bytes(bytes(buf[spos:spos + 4]), "big", signed=True) if stop == K.STOP_BLANK else 0
    return SegmentTimes(int(out[0]), int(out[1]), int(stop), at + spos, blank, int(out[2]), bool(out[3]))


def segment_times(segment: Segment) -> SegmentTimes | None:
    """:func:`walk_times` of a whole segment file: the least and greatest store time of its records."""
    fd = os.open(segment.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        return walk_times(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
