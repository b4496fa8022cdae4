"""The salvage scan: every intact message of a damaged commit log, and the damaged ranges skipped.

Where the broker's recovery (and a plain scan) ends the data at the first bad
record, the salvage scan resyncs at the next position where a record starts
and goes on, to the end of the commit log. A record start must pass
:func:`rmqformats.segments.is_record_start`: its magic code, its
PHYSICALOFFSET equal to its own commit-log offset, its TOTALSIZE equal to
the length its fields add up to, and a valid record (or the end of the
data) right after it; so the bytes of a body that look like a record are
not taken for one. The search is linear in the bytes it passes.

The scan is the same for the object API and the columnar decoder: it runs
their ordinary scan from one resync point to the next damage, so both return
the same messages, the same damaged ranges and the same end.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..segments import (
    Blank,
    DataEnd,
    EndReason,
    SegmentWindow,
    SegmentLog,
    nonzero_span,
)
from ..errors import display_path, place

#: End reasons after which the damaged record's own TOTALSIZE is trusted: its fields add up to it.
_WHOLE_RECORD = (EndReason.CRC_MISMATCH, EndReason.BAD_PROPERTY, EndReason.UNFINISHED)
_MISSING = "no segment file holds these bytes (a missing or shortened segment file)"


@dataclass(frozen=True)
class DamagedRange:
    """Bytes of the commit log that a salvage scan skipped, and why."""

    #: The segment file (for bytes no file holds: the path the file would have).
    segment: str
    #: Position of the first damaged byte in that file.
    file_offset: int
    #: Commit-log offset of the first damaged byte.
    commitlog_offset: int
    #: Commit-log bytes skipped, up to the next record start (or the end of the data).
    length: int
    #: Why the data is not readable there (the end reason and the record error).
    reason: str

    def __str__(self) -> str:
        return (f"{place(display_path(self.segment), self.file_offset)}: {self.length:,} bytes skipped "
                f"(commit-log offset {self.commitlog_offset}): {self.reason}")

    def to_json_dict(self) -> dict:
        """The range with the JSON names of the ``inspect`` output."""
        return {"segment": self.segment, "fileOffset": self.file_offset, "commitLogOffset": self.commitlog_offset,
                "length": self.length, "reason": self.reason}


class SalvageScan:
    """Runs a scan, resyncs after each damage and runs it again from there, to the end of the commit log.

    ``make(start)`` returns a scan (the object API's :class:`~rmqformats.commitlog.Scan`
    or a :class:`~rmqformats.columnar.ColumnarScan`) from commit-log offset
    ``start``; iterating this object yields what that scan yields. After it
    is exhausted, :attr:`damaged` lists the :class:`DamagedRange` skipped in
    commit-log order, :attr:`end` is where the readable data finally ends
    (``None`` when a ``to_offset``/``stop`` option ended the scan), and
    :attr:`blanks` the BLANK records passed.
    """

    def __init__(self, commitlog: SegmentLog, make: Callable[[int | None], Any], start: int | None = None,
                 schema=None):
        #: The schema of the record batches (columnar scans only).
        self.schema = schema
        self.end: DataEnd | None = None
        self.blanks: list[Blank] = []
        self.damaged: list[DamagedRange] = []
        self._log = commitlog
        self._make = make
        self._done = 0
        self._scan = None
        self._gen = self._run(start)

    @property
    def bytes_done(self) -> int:
        """Bytes of commit log covered so far (for progress reports)."""
        return self._done + (self._scan.bytes_done if self._scan is not None else 0)


    def __iter__(self) -> Iterator:
        return self._gen

    def __next__(self):
        return next(self._gen)

    def read_all(self):
        """Every remaining record batch as one :class:`pyarrow.Table` (columnar scans only)."""
        import pyarrow as pa
        return pa.Table.from_batches(list(self._gen), schema=self.schema)

    def _run(self, start: int | None) -> Iterator:
        segments = self._log.segments
        begin = start if start is not None else (segments[0].start_offset if segments else 0)
        found: list[DamagedRange] = []
        at = start
        while True:
            scan = self._scan = self._make(at)
            yield from scan
            self.blanks.extend(scan.blanks)
            end = scan.end
            self._done += scan.bytes_done
            self._scan = None
            if end is None or end.reason.is_clean or end.segment is None:
                self.end = end
                break
            damaged, at, final = self._resync(end)
            if damaged.length > 0:
                found.append(damaged)
            if at is None:
                self.end = final
                break
        stop = self.end.offset if self.end is not None else None
        found.extend(g for g in gaps(segments) if g.commitlog_offset >= begin
                     and (stop is None or g.commitlog_offset + g.length <= stop))
        self.damaged = sorted(found, key=lambda r: r.commitlog_offset)

    def _resync(self, end: DataEnd) -> tuple[DamagedRange, int | None, DataEnd | None]:
        """The damaged range that starts where ``end`` is, and the offset to go on from (``None``: the data ends)."""
        segments = self._log.segments
        index = next(i for i, s in enumerate(segments) if s.path == end.segment)
        seg = segments[index]
        last = index == len(segments) - 1
        pos = end.file_offset
        reason = end.reason.value + (f": {end.detail}" if end.detail else "")
        # Read in bounded windows with pread: a file cut meanwhile is a FileChangedError, not a SIGBUS.
        with SegmentWindow(seg.path, seg.start_offset) as window:
            limit = window.limit
            size = int.from_bytes(window.read(pos, 4), "big", signed=True) if pos + 4 <= limit else 0
            resume = None
            if end.reason in _WHOLE_RECORD and pos + size <= limit:
                resume = pos + size
            elif 8 <= size and pos + size < limit and window.is_record_start(pos + size):
                resume = pos + size  # a damaged header whose size still leads to the next record
            elif pos < limit:
                resume = window.next_record_start(pos + 1)
        if resume is not None and resume < limit:
            return self._range(seg, pos, resume - pos, reason), seg.start_offset + resume, None
        if not last:  # the segment's BLANK is missing: the rest of the file is skipped
            return self._range(seg, pos, seg.size - pos, reason), segments[index + 1].start_offset, None
        if resume is not None:  # the damaged record ends the last file
            return self._range(seg, pos, resume - pos, reason), None, DataEnd(
                seg.start_offset + resume, EndReason.END_OF_FILE, seg.path, resume)
        span = nonzero_span(seg.path, pos)
        stop = max(span[1], pos) if span is not None else pos
        final = DataEnd(seg.start_offset + stop, EndReason.ZERO_TAIL if stop < seg.size else EndReason.END_OF_FILE,
                        seg.path, stop)
        return self._range(seg, pos, stop - pos, reason), None, final

    @staticmethod
    def _range(seg, pos: int, length: int, reason: str) -> DamagedRange:
        return DamagedRange(seg.path, pos, seg.start_offset + pos, length, reason)


def gaps(segments) -> list[DamagedRange]:
    """The commit-log bytes between consecutive segment files that no file holds (a plain scan crosses them)."""
    out = []
    for a, b in zip(segments, segments[1:]):
        end = a.start_offset + a.size
        if b.start_offset > end:
            path = os.path.join(os.path.dirname(a.path), f"{end:020d}")
            out.append(DamagedRange(path, 0, end, b.start_offset - end, _MISSING))
    return out


def overlaps(segments) -> list[tuple]:
    """``(segment, next segment)`` where the next one's name (its commit-log offset) lies inside the bytes of
    the one before it: a file misnamed, whose records are read at offsets from its name."""
    return [(a, b) for a, b in zip(segments, segments[1:]) if b.start_offset < a.start_offset + a.size]


def salvage_batches(commitlog: SegmentLog, columns=None, **options) -> SalvageScan:
    """The columnar decoder's record batches with a salvage scan (the options of :meth:`CommitLog.batches`)."""
    from .scan import ColumnarScan
    start = options.pop("start", None)
    options.pop("strict", None)
    # The first scan starts where asked (or at from_offset's segment); the later ones at a resync point.
    pending = [ColumnarScan(commitlog, columns=columns, start=start, **options)]

    def make(at):
        return pending.pop() if pending else ColumnarScan(commitlog, columns=columns, start=at, **options)
    return SalvageScan(commitlog, make, start, pending[0].schema)
