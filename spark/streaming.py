"""``spark.readStream.format("rocketmq_commitlog")``: the messages a broker writes, micro-batch by micro-batch.

The offset of the stream is, for each store of the read, the commit-log
offset where the next micro-batch starts (the data end, or after a BLANK
that ends the last segment the next segment's start), the bytes lost so far,
fingerprints of records read (:mod:`.continuity`) and, after a loss, where
the micro-batch read from::

    {"stores": {"/data/rocketmq/store": {"offset": 1073741824, "lost": 0,
                                         "marks": [[1073741599, 225, 887445322], ...], "from": 1073700000}}}

Each micro-batch reads the records that start in ``[previous offset, new
offset)``, so each message is read once, and a query restarted from its
checkpoint goes on from the last offset Spark committed. The data end is
found by the columnar decoder's walk from the previous offset (only the new
bytes are read) with the live-store rules of
:meth:`rmqformats.commitlog.CommitLog.scan` (``live=True``): a record the
broker is still writing ends the data and is read by a later micro-batch,
once complete. ``verifyCrc`` ends the data at a CRC mismatch, as in a batch
read; damage ends the data for good (a warning says where), as the broker's
recovery would end it.

Every micro-batch first checks what the query read against the store
(:mod:`.continuity`): an unread segment deleted, a data end moved back below
the offset, or bytes rewritten under it are *lost*. As in Spark's Kafka
source, ``failOnDataLoss`` (default ``true``) fails the query with a
:class:`DataLossError` naming the store and the commit-log offsets; with
``false`` each loss is logged as a warning with the range, the offset's
``lost`` (shown in the query's progress, in ``endOffset``) counts the bytes
lost since the query started, and the query goes on: after a gap at the next
segment, after a rewrite from the last record still as it was read, where
the records written since start. Segments deleted after they were read
(retention) and growth lose nothing. ``startingOffsets`` is ``earliest``
(the oldest segment, default) or ``latest`` (the data end when the query
starts, for a query with no checkpoint).

Spark 4.2+ hands :meth:`CommitLogStreamReader.latestOffset` the start of
the micro-batch; Spark 4.0 and 4.1 do not, so after a restart the first
micro-batch's start is checked in :meth:`CommitLogStreamReader.partitions`
(a loss found there fails or is logged the same way, but ``lost`` counts
from the restart on: the offset of that micro-batch was made without the
committed one).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from rmqformats.commitlog import EndReason, Segment
from rmqformats.columnar import ColumnarScan

from .commitlogreader import CommitLogReader
from .continuity import DELETED, Loss, MarkPicker, changed_since, gaps
from .dataend import describe, view
from .options import ReadOptions
from .partitions import segments_of
from .paths import COMMITLOG, resolve
from .splits import SegmentSplit

_log = logging.getLogger(__name__)


class DataLossError(Exception):
    """Messages lost to a streaming query (see :mod:`.continuity`), with ``failOnDataLoss=true``."""


def resume_point(segments: Sequence[Segment], pos: int | None) -> tuple[int, int]:
    """``(where to read from, bytes skipped)`` for a read that ended at ``pos`` (``None``: never read).

    A position before the oldest segment, or in a gap between segments, is
    moved to the next segment's start: the bytes between were deleted.
    """
    if not segments:
        return (pos or 0), 0
    if pos is None:
        return segments[0].start_offset, 0
    for seg in segments:
        if pos < seg.start_offset:
            return seg.start_offset, seg.start_offset - pos
        if pos < seg.start_offset + seg.size:
            return pos, 0
    return pos, 0


def walk(segments: Sequence[Segment], pos: int, *, verify_crc: bool, store: str,
         picker: MarkPicker | None = None) -> tuple[int, int | None]:
    """``(data end, where the query goes on)`` walking from ``pos`` (a record's start or a segment's).

    The data end is where the walk stopped; it is never below ``pos`` (the
    walk starts there), so a data end that moved back is found by the marks
    (:func:`.continuity.changed_since`), not here. The second value is the
    offset the next micro-batch starts from: the data end, or after a BLANK
    that ends the last segment the start of the next segment, so that the
    BLANK's segment can be deleted by retention without its rest counting as
    lost. ``picker`` gets the offsets and sizes of the records passed.
    """
    if not segments or pos >= segments[-1].start_offset + segments[-1].size:
        return pos, pos
    scan = ColumnarScan(view(segments), columns=("commitLogOffset", "storeSize"), start=pos, verify_crc=verify_crc,
                        decompress=False, live=True, batch_size=1 << 16)
    for batch in scan:
        if picker is not None and batch.num_rows:
            picker.add(batch.column(0).to_numpy(), batch.column(1).cast("int64").to_numpy())
    end = scan.end
    assert end is not None  # the walk has no stop, so it ends at the data end
    if not end.reason.is_clean:
        _log.warning("%s: the data of the commit log ends at %s @ %d: %s; the stream does not read past it",
                     store, end.segment, end.file_offset, describe(end))
    if end.reason is EndReason.BLANK_LAST:
        seg = segments[-1]
        return end.offset, seg.start_offset + seg.size
    return end.offset, end.offset


class CommitLogStreamReader(DataSourceStreamReader):
    """The stream reader of ``rocketmq_commitlog`` (see the module docstring)."""

    def __init__(self, source: str, options: ReadOptions, schema: StructType, full: StructType):
        self.options = options
        self.batch = CommitLogReader(source, options, schema, full)
        #: The last offset returned by :meth:`latestOffset` (Spark 4.0 and 4.1 pass no start).
        self._latest: dict | None = None

    def _stores(self) -> dict[str, list[Segment]]:
        return {s.store: segments_of(s) for s in resolve(self.options, COMMITLOG)}

    def initialOffset(self) -> dict:
        stores = self._stores()
        out = {}
        for name, segs in stores.items():
            first = resume_point(segs, None)[0]
            if self.options.starting_offsets == "latest":
                picker = MarkPicker()
                _, offset = walk(segs, first, verify_crc=self.options.verify_crc, store=name, picker=picker)
                out[name] = {"offset": offset, "lost": 0, "marks": picker.marks(segs)}
            else:
                out[name] = {"offset": first, "lost": 0, "marks": []}
        return {"stores": out}

    def latestOffset(self, start: dict | None = None, limit=None) -> dict:
        """The data end of every store; ``limit`` is not used (every available message is admitted).

        With the start of the micro-batch known (passed by Spark 4.2+, or
        the previous result), what the query read is checked against the
        store first (:mod:`.continuity`) and the offset says where the
        micro-batch reads from (``from``); ``start`` itself is returned when
        nothing changed, so that no empty micro-batch runs.
        """
        known = start or self._latest
        base = known or self.initialOffset()
        out = {}
        changed = False
        for name, segs in self._stores().items():
            before = base["stores"].get(name, {"offset": None, "lost": 0, "marks": []})
            begin, losses = self._resume(name, segs, before) if known else (resume_point(segs, before["offset"])[0], [])
            oldest = segs[0].start_offset if segs else 0  # marks in segments retention deleted are dropped
            kept = [m for m in before.get("marks", []) if oldest <= m[0] < begin]
            picker = MarkPicker(kept)
            end, offset = walk(segs, begin, verify_crc=self.options.verify_crc, store=name, picker=picker)
            if known:  # else the gaps are checked from the start Spark hands partitions()
                losses += gaps(segs, begin, end)
            self._report(name, losses)
            lost = before.get("lost", 0) + sum(x.end - x.begin for x in losses)
            state = {"offset": offset, "lost": lost, "marks": picker.marks(segs)}
            if known:
                state["from"] = begin
            if offset != before["offset"] or lost != before.get("lost", 0) or begin != before["offset"]:
                changed = True
            out[name] = state
        if known and not changed and set(out) == set(base["stores"]):
            self._latest = base
            return base
        self._latest = {"stores": out}
        return self._latest

    def _resume(self, name: str, segs: list[Segment], before: dict) -> tuple[int, list[Loss]]:
        """Where a micro-batch after ``before`` reads from, and what was lost since (see :mod:`.continuity`)."""
        if before["offset"] is None:
            return resume_point(segs, None)[0], []
        rewritten = changed_since(segs, before.get("marks", []), before["offset"])
        if rewritten is not None:
            return rewritten.resume, [rewritten]
        pos, skipped = resume_point(segs, before["offset"])
        if skipped:
            return pos, [Loss(pos - skipped, pos, DELETED, pos)]
        return pos, []

    def _report(self, store: str, losses: list[Loss]) -> None:
        if not losses:
            return
        text = "; ".join(x.text(store) for x in losses)
        if self.options.fail_on_data_loss:
            raise DataLossError(f"{text} (failOnDataLoss=true; with failOnDataLoss=false the query logs the "
                                "loss, counts it in its offset's lost and goes on after it)")
        for x in losses:
            _log.warning("%s", x.skipped(store))

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """One split per segment for the records that start in ``[from, end)`` of each store.

        ``from`` is the start's offset unless the end says otherwise (after a
        loss); an end offset without ``from`` (Spark 4.0 and 4.1 after a
        restart, where :meth:`latestOffset` did not know the start) has the
        start checked against the store here.
        """
        stores = self._stores()
        out: list[SegmentSplit] = []
        for name, until in sorted(end["stores"].items()):
            segs = stores.get(name, [])
            before = start["stores"].get(name, {"offset": None, "lost": 0, "marks": []})
            if "from" in until:
                pos = until["from"]
            else:
                pos, losses = self._resume(name, segs, before)
                self._report(name, losses + gaps(segs, pos, until["offset"]))
            stop_at = until["offset"]
            for i, seg in enumerate(segs):
                begin = max(pos, seg.start_offset) - seg.start_offset
                stop = min(stop_at, seg.start_offset + seg.size) - seg.start_offset
                if begin >= stop:
                    continue
                out.append(SegmentSplit(name, seg, i == len(segs) - 1, begin, stop, start=begin, stop=stop,
                                        planned=True))
        return out

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        return self.batch.read(partition)

    def commit(self, end: dict) -> None:
        """Nothing to release: the store is only read."""
