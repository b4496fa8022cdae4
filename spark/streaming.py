"""``spark.readStream.format("rocketmq_commitlog")``: the messages a broker writes, micro-batch by micro-batch.

The offset of the stream is, for each store of the read, the commit-log
offset where its data ends::

    {"stores": {"/data/rocketmq/store": {"offset": 1073741824, "lost": 0}}}

Each micro-batch reads the records that start in ``[previous end, new end)``,
so each message is read once, and a query restarted from its checkpoint
goes on from the last offset Spark committed. The data end is found by the
columnar decoder's walk from the previous end (only the new bytes are read)
with the live-store rules of :meth:`rmqformats.commitlog.CommitLog.scan`
(``live=True``): a record the broker is still writing ends the data and is
read by a later micro-batch, once complete. ``verifyCrc`` ends the data at a
CRC mismatch, as in a batch read; damage ends the data for good (a warning
says where), as the broker's recovery would end it.

Segments the broker's retention deleted before they were read are *lost*:
each micro-batch that skips such bytes logs a warning naming the store and
the range, and the offset's ``lost`` (shown in the query's progress, as the
``endOffset``) counts the bytes skipped since the query started; with
``failOnDataLoss=true`` the query fails instead. ``startingOffsets`` is
``earliest`` (the oldest segment, default) or ``latest`` (the data end when
the query starts, for a query with no checkpoint).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from rmqformats.commitlog import Segment
from rmqformats.columnar import ColumnarScan

from .commitlogreader import CommitLogReader
from .dataend import describe, view
from .options import ReadOptions
from .partitions import segments_of
from .paths import COMMITLOG, resolve
from .splits import SegmentSplit

_log = logging.getLogger(__name__)


class DataLossError(Exception):
    """Segments deleted before a streaming query read them, with ``failOnDataLoss=true``."""


def _lost_text(store: str, begin: int, end: int) -> str:
    return (f"{store}: commit-log offsets {begin} to {end} ({end - begin} bytes) were deleted (the broker's "
            "retention) before this streaming query read them; their messages are skipped")


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


def data_end(segments: Sequence[Segment], pos: int, *, verify_crc: bool, store: str) -> int:
    """The commit-log offset where the data ends, walking from ``pos`` (a record's start or a segment's)."""
    if not segments or pos >= segments[-1].start_offset + segments[-1].size:
        return pos
    scan = ColumnarScan(view(segments), columns=("commitLogOffset",), start=pos, verify_crc=verify_crc,
                        decompress=False, live=True, batch_size=1 << 16)
    for _ in scan:
        pass
    end = scan.end
    assert end is not None  # the walk has no stop, so it ends at the data end
    if not end.reason.is_clean:
        _log.warning("%s: the data of the commit log ends at %s @ %d: %s; the stream does not read past it",
                     store, end.segment, end.file_offset, describe(end))
    return max(end.offset, pos)


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
        if self.options.starting_offsets == "latest":
            return {"stores": {name: {"offset": data_end(segs, resume_point(segs, None)[0],
                                                          verify_crc=self.options.verify_crc, store=name),
                                      "lost": 0} for name, segs in stores.items()}}
        return {"stores": {name: {"offset": resume_point(segs, None)[0], "lost": 0} for name, segs in stores.items()}}

    def latestOffset(self, start: dict | None = None, limit=None) -> dict:
        """The data end of every store; ``limit`` is not used (every available message is admitted)."""
        start = start or self._latest or self.initialOffset()
        out = {}
        for name, segs in self._stores().items():
            before = start["stores"].get(name, {"offset": None, "lost": 0})
            pos, skipped = resume_point(segs, before["offset"])
            if skipped:
                self._lost(name, pos - skipped, pos)
            out[name] = {"offset": data_end(segs, pos, verify_crc=self.options.verify_crc, store=name),
                         "lost": before["lost"] + skipped}
        self._latest = {"stores": out}
        return self._latest

    def _lost(self, store: str, begin: int, end: int) -> None:
        text = _lost_text(store, begin, end)
        if self.options.fail_on_data_loss:
            raise DataLossError(text + " (failOnDataLoss=true)")
        _log.warning("%s", text)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """One split per segment for the records that start in ``[start, end)`` of each store."""
        stores = self._stores()
        out: list[SegmentSplit] = []
        for name, until in sorted(end["stores"].items()):
            segs = stores.get(name, [])
            before = start["stores"].get(name, {"offset": None})
            pos, skipped = resume_point(segs, before["offset"])
            if skipped:
                self._lost(name, pos - skipped, pos)
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
