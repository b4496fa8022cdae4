"""What a streaming query read, kept in its offset and checked against the store on every micro-batch.

A broker only appends to its commit log, and its retention deletes the
oldest segments first. Anything else loses messages: an unread segment
deleted (a gap), a data end that moved back below what the query read (a
recovery that dropped unflushed pages), or bytes rewritten under it. Then
the lake either misses messages or keeps messages the store no longer has,
and the records the broker writes again from a lower offset would never be
read if the query only looked at the bytes after its own offset.

So the offset of each store carries *marks*: fingerprints
``[commit-log offset, size, CRC32 of the record's bytes]`` of records the
query read, the last :data:`DENSE` records one by one and, further back,
one record about every power of two bytes (:func:`select_marks`). Every
micro-batch reads the marks again, newest first (:func:`changed_since`):

* the newest mark is unchanged, or lies in a segment that was deleted while
  a later one is still there (retention of read segments): what the query
  read is still there, and it goes on from its offset;
* else the store changed under the query: the newest unchanged mark ``G``
  is found, the bytes from its end to the committed offset are *lost* (read
  once, no longer in the store), and the query reads again from ``G``'s end,
  where the records written since start. Among the dense marks that is
  exactly where the broker's recovery cut; further back, intact records
  between ``G`` and the first changed mark are read again, and the warning
  says so.

Gaps between segment files (:func:`gaps`) in the range a micro-batch reads
are lost too. A loss is a :class:`Loss`; the stream reader fails with it or
logs it, by ``failOnDataLoss``.
"""

from __future__ import annotations

import bisect
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmqformats.segments import Segment

#: The last records of a read whose fingerprints are kept one by one.
DENSE = 32
#: Fingerprints further back: the newest record at least ``2**k`` bytes before the last, for these k.
SPARSE_LEVELS = range(10, 63)


@dataclass(frozen=True)
class Loss:
    """Commit-log bytes ``[begin, end)`` of one store lost to a streaming query, and why."""

    begin: int
    end: int
    why: str
    #: Where the query goes on reading after the loss.
    resume: int

    def text(self, store: str) -> str:
        return (f"{store}: commit-log offsets {self.begin} to {self.end} ({self.end - self.begin} bytes) "
                f"{self.why}")

    def skipped(self, store: str) -> str:
        """The warning when the query goes on after the loss."""
        return f"{self.text(store)}; the query goes on at offset {self.resume}"


def segment_of(segments: Sequence[Segment], offset: int) -> Segment | None:
    """The segment file holding commit-log ``offset`` (``None``: no file holds it)."""
    i = bisect.bisect_right([s.start_offset for s in segments], offset) - 1
    if i < 0 or offset >= segments[i].start_offset + segments[i].size:
        return None
    return segments[i]


def record_crc(segments: Sequence[Segment], at: int, size: int) -> int | None:
    """CRC32 of the ``size`` bytes at commit-log offset ``at`` now (``None``: no file holds them all)."""
    seg = segment_of(segments, at)
    if seg is None or at + size > seg.start_offset + seg.size:
        return None
    try:
        fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:  # deleted since the listing
        return None
    try:
        data = os.pread(fd, size, at - seg.start_offset)
    finally:
        os.close(fd)
    return zlib.crc32(data) if len(data) == size else None


def _pick(offsets: np.ndarray, dense: int) -> np.ndarray:
    """Indexes into ascending ``offsets`` of the records to keep: the last ``dense``, then sparser back."""
    if not len(offsets):
        return np.zeros(0, np.int64)
    newest = int(offsets[-1])
    limits = np.array([newest - (1 << k) for k in SPARSE_LEVELS if newest - (1 << k) >= offsets[0]], np.int64)
    sparse = np.searchsorted(offsets, limits, side="right") - 1
    keep = np.concatenate([np.arange(max(0, len(offsets) - dense), len(offsets)), sparse[sparse >= 0]])
    return np.unique(keep)


class MarkPicker:
    """Chooses the records to fingerprint while a walk hands over its records, batch by batch.

    Memory stays bounded: after each batch only the records :func:`_pick`
    would keep for the newest record so far are kept as candidates.
    """

    def __init__(self, marks: Sequence[Sequence[int]] = (), *, dense: int = DENSE):
        self.dense = dense
        #: The fingerprints known already, by commit-log offset (marks kept from the offset).
        self.known = {int(m[0]): (int(m[1]), int(m[2])) for m in marks}
        self.offsets = np.array(sorted(self.known), np.int64)
        self.sizes = np.array([self.known[o][0] for o in self.offsets.tolist()], np.int64)

    def add(self, offsets: np.ndarray, sizes: np.ndarray) -> None:
        """The records of one batch of the walk (ascending, after every record added before)."""
        if not len(offsets):
            return
        all_offsets = np.concatenate([self.offsets, offsets.astype(np.int64)])
        all_sizes = np.concatenate([self.sizes, sizes.astype(np.int64)])
        keep = _pick(all_offsets, self.dense)
        self.offsets, self.sizes = all_offsets[keep], all_sizes[keep]

    def marks(self, segments: Sequence[Segment]) -> list[list[int]]:
        """The fingerprints ``[offset, size, crc]`` of the records kept (new ones read from the files now)."""
        out = []
        for at, size in zip(self.offsets.tolist(), self.sizes.tolist()):
            known = self.known.get(at)
            crc = known[1] if known is not None and known[0] == size else record_crc(segments, at, size)
            if crc is not None:
                out.append([at, size, crc])
        return out


def changed_since(segments: Sequence[Segment], marks: Sequence[Sequence[int]], offset: int) -> Loss | None:
    """The loss when what a query read up to ``offset`` (fingerprinted by ``marks``) is no longer in the store.

    ``None`` when the newest mark still holds its bytes, or lies in a
    segment deleted while a later segment remains (retention of read data).
    """
    if not segments:
        return None
    changed: Sequence[int] | None = None  # the oldest changed mark so far
    for mark in reversed(marks):
        at, size, crc = (int(v) for v in mark[:3])
        seg = segment_of(segments, at)
        if seg is None and any(s.start_offset > at for s in segments):
            if changed is None:
                return None  # a read segment deleted by retention: nothing to compare, nothing lost
            resume = min(s.start_offset for s in segments if s.start_offset > at)
            return Loss(resume, offset, _REWRITTEN, resume)
        if seg is not None and record_crc(segments, at, size) == crc:
            if changed is None:
                return None
            resume = at + size
            # Exact when the first changed mark is the record right after this one (in the same
            # segment, or the first of the next one after a BLANK): the broker's cut is there.
            exact = changed[0] == resume or changed[0] == seg.start_offset + seg.size
            return Loss(resume, offset, _REWRITTEN if exact else _REWRITTEN_SPARSE, resume)
        changed = mark
    last = segments[-1]
    if changed is None:
        if offset > last.start_offset + last.size:  # nothing to compare, but the files end before the offset
            end = last.start_offset + last.size
            return Loss(end, offset, _REWRITTEN, end)
        return None
    first = segments[0].start_offset
    return Loss(first, offset, _REWRITTEN_ALL, first)


def gaps(segments: Sequence[Segment], begin: int, end: int) -> list[Loss]:
    """The stretches of ``[begin, end)`` between segment files (a segment deleted before it was read)."""
    out = []
    for a, b in zip(segments, segments[1:]):
        hole_begin, hole_end = a.start_offset + a.size, b.start_offset
        if hole_end > hole_begin and hole_end > begin and hole_end <= end:
            out.append(Loss(max(hole_begin, begin), hole_end, DELETED, hole_end))
    return out


DELETED = "were deleted before this streaming query read them (no segment file holds them)"
_REWRITTEN = ("were read by this streaming query but the store no longer holds them: its data end moved back "
              "below the query's offset, or the bytes were written again")
_REWRITTEN_SPARSE = (_REWRITTEN + " (unchanged records before the first changed one the query remembers are "
                     "read again)")
_REWRITTEN_ALL = (_REWRITTEN + ", and none of the records it remembers is as it was read (every record from "
                  "the oldest segment on is read again)")
