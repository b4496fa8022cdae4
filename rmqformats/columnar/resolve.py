"""A consume queue's units resolved to their commit-log messages, as columns.

:meth:`rmqformats.consumequeue.ConsumeQueue.resolve` gives one unit's
:class:`~rmqformats.consumequeue.ResolvedUnit`; :func:`resolved_batches` gives
the same answers for a run of units as Arrow batches, the messages read
through the walk's kernels a chunk of units at a time
(:class:`rmqformats.walk.gather.RecordGather`). A unit whose message cannot be
read gets the reader's own typed error text, from one
:meth:`~rmqformats.commitlog.CommitLog.read` of its offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..commitlog import CommitLog
from ..consumequeue import SCHEDULE_TOPIC, ConsumeQueue, UnitStatus
from ..errors import RmqFormatError
from ..frames import from_numpy, from_strings
from ..walk.gather import RecordGather

#: The unit columns of a :class:`ResolvedBatch`, as a unit's JSON names them.
UNIT_SCHEMA = pa.schema([("cqOffset", pa.int64()), ("commitLogOffset", pa.int64()), ("size", pa.int32()),
                         ("tagsCode", pa.int64()), ("status", pa.string()), ("detail", pa.string())])

_OK, _DELETED, _BEYOND, _NO_MESSAGE = (UnitStatus.OK, UnitStatus.DELETED, UnitStatus.BEYOND_END,
                                       UnitStatus.NO_MESSAGE)
_DELETED_DETAIL = "no commit-log segment holds this offset any more"


@dataclass
class ResolvedBatch:
    """Resolved units: ``units`` (:data:`UNIT_SCHEMA`; ``detail`` null where there is nothing to say), and
    ``messages``, one row for each unit whose ``status`` is OK, in order (``ok`` marks those units)."""

    units: pa.RecordBatch
    messages: pa.RecordBatch
    ok: np.ndarray


def can_resolve(cq: ConsumeQueue) -> bool:
    """Whether :func:`resolved_batches` reads this queue's messages: a queue opened through its store, whose
    commit log is a file one (a DLedger log's records sit in entries, which its reader checks)."""
    return cq.store is not None and cq.store.commitlog.plain_records


def resolved_batches(cq: ConsumeQueue, start: int | None = None, stop: int | None = None, *,
                     tag: str | None = None, columns: tuple[str, ...]) -> Iterator[ResolvedBatch]:
    """The units of ``cq`` from ``start`` to ``stop - 1`` (placeholders skipped), resolved as
    :meth:`ConsumeQueue.messages` resolves them: with ``tag``, only the units whose message carries it.
    ``columns``: the message columns (the walk's names). Needs :func:`can_resolve`."""
    if not can_resolve(cq):
        raise ValueError(f"{cq!r}: its units are resolved one at a time (ConsumeQueue.messages)")
    commitlog = cq.store.commitlog
    # The tags-code filter first, as the broker's; a schedule topic's codes are delivery times.
    hash_filter = None if cq.topic == SCHEDULE_TOPIC else tag
    wanted = columns if tag is None or "tags" in columns else (*columns, "tags")
    with RecordGather(commitlog.segments) as gather:
        first = gather.starts[0] if len(gather.starts) else 0
        for chunk in cq.unit_chunks(start, stop, tag=hash_filter):
            values = [np.asarray(v, np.int64) for v in chunk]
            for part in gather.chunks(values[2]):
                for batch in _resolve(commitlog, gather, first, [v[part] for v in values], wanted):
                    if tag is not None:
                        batch = _with_tag(batch, tag)
                    if wanted != columns:
                        batch.messages = batch.messages.select(list(columns))
                    if batch.units.num_rows:
                        yield batch


def _resolve(commitlog: CommitLog, gather: RecordGather, first: int, values: list[np.ndarray],
             columns: tuple[str, ...]) -> Iterator[ResolvedBatch]:
    """The units ``values`` (logical offsets, commit-log offsets, sizes, tags codes) resolved, in parts
    as :meth:`RecordGather.read` reads their records."""
    cq_offsets, offsets, sizes, codes = values
    n = len(offsets)
    status = np.full(n, _NO_MESSAGE.name, object)
    detail = np.full(n, None, object)
    if len(gather.starts):
        deleted = offsets < first
        beyond = offsets >= gather.starts[-1] + gather.sizes[-1]
    else:
        deleted, beyond = np.ones(n, bool), np.zeros(n, bool)
    status[deleted] = _DELETED.name
    detail[deleted] = _DELETED_DETAIL
    status[beyond & ~deleted] = _BEYOND.name
    asked = ~deleted & ~beyond
    which = np.flatnonzero(asked & gather.covered(offsets))
    lo = 0
    for part, messages, found in gather.read(offsets[which], sizes[which], columns):
        # This part's units: up to its last unit read, or to the next part's first (the units between, not
        # read, with this one), or to the end.
        hi = n if part.stop >= len(which) else int(which[part.stop])
        ok = np.zeros(hi - lo, bool)
        ok[which[part][found] - lo] = True
        here = slice(lo, hi)
        status[here][ok] = _OK.name
        for k in np.flatnonzero(asked[here] & ~ok).tolist():  # in no segment's bytes (a gap), or no message
            detail[lo + k] = _why(commitlog, int(offsets[lo + k]))
        units = pa.RecordBatch.from_arrays(
            [from_numpy(np.ascontiguousarray(cq_offsets[here])), from_numpy(np.ascontiguousarray(offsets[here])),
             from_numpy(sizes[here].astype(np.int32)), from_numpy(np.ascontiguousarray(codes[here])),
             from_strings(status[here].tolist()), from_strings(detail[here].tolist())], schema=UNIT_SCHEMA)
        yield ResolvedBatch(units, messages, ok)
        lo = hi


def _why(commitlog: CommitLog, offset: int) -> str:
    """Why no message is read at ``offset``: the reader's error text."""
    try:
        commitlog.read(offset)
    except RmqFormatError as exc:
        return exc.whole()
    # Readable now and not a moment ago: a broker was writing it.
    return f"{offset}: the record was being written while it was read"


def _with_tag(batch: ResolvedBatch, tag: str) -> ResolvedBatch:
    """``batch`` with only the units whose message carries ``tag``."""
    import pyarrow.compute as pc

    from ..frames import scalar, to_numpy
    same = to_numpy(pc.fill_null(pc.equal(batch.messages.column("tags"), scalar(tag)), scalar(False)))
    keep = np.zeros(len(batch.ok), bool)
    keep[np.flatnonzero(batch.ok)[same]] = True
    return ResolvedBatch(batch.units.filter(from_numpy(keep)), batch.messages.filter(from_numpy(same)),
                         np.ones(int(keep.sum()), bool))
