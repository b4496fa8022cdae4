"""The salvage scan, and what a data end at damage leaves out.

The scan itself is part of the columnar walk (:mod:`rmqformats.walk.salvage`; its names are
importable from here); :func:`intact_past` counts, with it, the intact messages past a data end
that the broker's recovery (and a rebuild) leave out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..frames import to_numpy
from ..walk.salvage import DamagedRange, SalvageScan, gaps, salvage_batches

if TYPE_CHECKING:
    from ..commitlog import CommitLog

__all__ = ["DamagedRange", "PastEnd", "SalvageScan", "gaps", "intact_past", "salvage_batches"]


@dataclass
class PastEnd:
    """The intact messages the salvage walk reads past a data end at damage (which the broker's recovery,
    and a rebuild, leave out), per topic."""

    #: The data end they lie past.
    data_end: int
    #: Intact messages past it.
    messages: int
    #: Topic -> (messages, first commit-log offset, last commit-log offset).
    topics: dict
    #: The damaged ranges the walk skipped past the data end.
    damaged: list

    def describe(self, limit: int = 8) -> str:
        """``N intact message(s) past …: T (n, offsets a..b), …`` (the ``limit`` topics with most first)."""
        top = sorted(self.topics.items(), key=lambda kv: (-kv[1][0], kv[0]))
        parts = [f"{t} ({n}, commit-log offsets {a}..{b})" for t, (n, a, b) in top[:limit]]
        more = f", and {len(top) - limit} more topic(s)" if len(top) > limit else ""
        return (f"{self.messages} intact message(s) in {len(self.topics)} topic(s) lie past the data end "
                f"{self.data_end}: {', '.join(parts)}{more}")

    def to_json_dict(self) -> dict:
        return {"dataEnd": self.data_end, "messages": self.messages,
                "topics": {t: {"messages": n, "firstOffset": a, "lastOffset": b}
                           for t, (n, a, b) in sorted(self.topics.items())},
                "damagedRanges": [r.to_json_dict() for r in self.damaged]}


def intact_past(commitlog: CommitLog, data_end: int, *, batch_size: int = 65536) -> PastEnd:
    """The intact messages past ``data_end`` (a data end at damage): the salvage walk from there on, as
    ``messages --salvage`` reads them, counted per topic in bounded batches."""
    import numpy as np
    import pyarrow.compute as pc
    start = _walk_start(commitlog, data_end)
    if start is None:
        return PastEnd(data_end, 0, {}, [])
    walk = commitlog.batches(columns=["commitLogOffset", "topic"], start=start, salvage=True,
                             decompress=False, batch_size=batch_size)
    topics: dict[str, list[int]] = {}
    total = 0
    for batch in walk:
        if not batch.num_rows:
            continue
        off = to_numpy(batch.column("commitLogOffset"))
        keep = off >= data_end
        if not keep.all():
            batch, off = batch.filter(keep), off[keep]
        if not len(off):
            continue
        total += len(off)
        codes = pc.dictionary_encode(batch.column("topic"))
        idx = to_numpy(codes.indices)
        for i, name in enumerate(codes.dictionary.to_pylist()):
            rows = np.flatnonzero(idx == i)
            if not len(rows):
                continue
            got = topics.setdefault(name, [0, int(off[rows[0]]), 0])
            got[0] += len(rows)
            got[2] = int(off[rows[-1]])
    damaged = [r for r in getattr(walk, "damaged", ()) or () if r.commitlog_offset >= data_end]
    return PastEnd(data_end, total, {t: tuple(v) for t, v in topics.items()}, damaged)


def _walk_start(commitlog: CommitLog, data_end: int) -> int | None:
    """Where the walk past ``data_end`` starts: the data end itself when a segment file holds it, else the
    first segment holding bytes after it (the data end at an empty, 0-byte segment, or at the end of the
    last file); ``None`` when no file holds bytes past it."""
    for seg in commitlog.segments:
        if seg.start_offset <= data_end < seg.start_offset + seg.size:
            return data_end
        if seg.start_offset > data_end and seg.size > 0:
            return seg.start_offset
    return None
