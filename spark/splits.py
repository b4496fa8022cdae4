"""One split of a commit-log segment, and its decoding into Spark batches on an executor.

A split owns the message records whose first byte lies in its byte range
``[begin, end)``; its walk reads past ``end`` only to finish its last
record. Where it starts:

* planned on the chain (the default read): at the position the driver's
  walk found (:mod:`.dataend`), and it stops at the data end if that lies
  in its range, reporting it when it is damage;
* otherwise (``salvage``, the per-partition functions): at ``begin`` when it
  is 0, else at the first position whose magic code, stored physical
  offset (the record's own commit-log offset), size and field lengths make
  a valid record (:func:`rmqformats.columnar.find_record_start`). With
  ``salvage`` a damaged record does not end the split: the walk resyncs on
  the next valid record after it.

The decoding is the columnar decoder's (:class:`rmqformats.columnar.ColumnarScan`),
over a commit log of this one segment; what its end means for the whole log
(a BLANK, the end of the file) is decided here from whether the segment is
the last one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import InputPartition

from rmqformats.commitlog import DataEnd, EndReason, Segment
from rmqformats.columnar import ColumnarScan, find_record_start
from rmqformats.errors import DecompressionError

from .dataend import EndInfo, data_limit, describe, view
from .malformed import Malformed
from .schema import Converter

#: Columns every walk decodes: where each record is and how long, to resume after a body that fails.
_POSITION = ("commitLogOffset", "storeSize")


class SegmentSplit(InputPartition):
    """A byte range of one segment, and what the driver knows about it."""

    def __init__(self, store: str, segment: Segment, last: bool, begin: int, end: int, *,
                 start: int | None = None, stop: int | None = None, planned: bool = False,
                 end_info: EndInfo | None = None, limit: int | None = None):
        super().__init__(f"{segment.path}[{begin}:{end})")
        self.store = store
        self.path = segment.path
        self.seg_start = segment.start_offset
        self.seg_size = segment.size
        #: The segment is the last of its commit log (its end of file is not damage).
        self.last = last
        self.begin = begin
        self.end = end
        #: Planned: ``start`` is the first record on the chain, ``stop`` the data end or ``end``,
        #: CRCs were checked by the driver, and ``end_info`` is the damage to report here.
        self.planned = planned
        self.start = start
        self.stop = end if stop is None else stop
        self.end_info = end_info
        #: Position after the segment's last non-zero byte, when the driver knows it.
        self.limit = limit

    @property
    def segment(self) -> Segment:
        return Segment(self.path, self.seg_start, self.seg_size)


def _total_size(path: str, pos: int) -> int:
    with open(path, "rb") as f:
        f.seek(pos)
        return int.from_bytes(f.read(4), "big", signed=True)


class SplitReader:
    """Decodes splits with the options of one read into batches of the read's schema."""

    def __init__(self, converter: Converter, malformed: Malformed, *, decompress: bool, verify_crc: bool,
                 batch_size: int, topics: tuple[str, ...] | None, predicate=None, system=None, body=None):
        self.converter = converter
        #: How the decoded system columns are decoded (:class:`rmqformats.systopics.SystemDecoding`), when
        #: the read has one of them; they are decoded from the walk's batches before conversion.
        self.system = None
        #: The decoder's row filter (:data:`rmqformats.walk.scan.Predicate`): the pushed-down filters.
        self.predicate = predicate
        self.malformed = malformed
        self.decompress = decompress
        self.verify_crc = verify_crc
        self.batch_size = batch_size
        # One topic is filtered by the decoder itself, several on each batch before it is converted.
        self.topic = topics[0] if topics and len(topics) == 1 else None
        self.topic_set = pa.array(sorted(set(topics)), pa.string()) if topics and len(topics) > 1 else None
        wanted = converter.columns + _POSITION + (("topic",) if self.topic_set is not None else ())
        if system is not None:
            from rmqformats.systopics import SYSTEM_COLUMNS
            from rmqformats.systopics.batches import NEEDED
            if any(c in SYSTEM_COLUMNS for c in wanted):
                self.system = system
                wanted = tuple(c for c in wanted if c not in SYSTEM_COLUMNS) + NEEDED
        #: How bodies are decoded (:class:`rmqformats.body_decoders.BodyDecoding`), when the read has one of
        #: its columns; they are decoded from the ``body`` column, after the system columns.
        self.body = None
        if body is not None and any(c in body.names for c in wanted):
            self.body = body
            wanted = tuple(c for c in wanted if c not in body.names) + ("body",)
        self.columns = tuple(dict.fromkeys(wanted))

    def read(self, split: SegmentSplit, salvage: bool = False) -> Iterator[pa.RecordBatch]:
        """The batches of the messages of ``split``, and the rows (or failure) its mode gives for damage."""
        seg = split.segment
        log = view([seg])
        verify = self.verify_crc and not split.planned
        if split.planned:
            pos = split.start
        else:
            pos = split.begin if split.begin == 0 else find_record_start(seg, split.begin, split.end)
        while pos is not None and pos < split.stop:
            end = yield from self._scan(log, seg, split.store, pos, split.stop, verify)
            reason = None if end is None else self._damage(end, split)
            if reason is None:
                break
            here = end.file_offset
            pos = None
            if salvage:
                pos = find_record_start(seg, here + 1, split.end) if here + 1 < split.end else None
                reason += (f"; {pos - here} bytes skipped to the next record" if pos is not None
                           else f"; no record starts after it before position {split.end}")
            yield from self.malformed(split.store, seg.path, here, reason)
        if split.end_info is not None:
            info = split.end_info
            yield from self.malformed(split.store, info.path, info.pos, info.reason)

    def _damage(self, end: DataEnd, split: SegmentSplit) -> str | None:
        """Why the walk's end is damage, or ``None`` for where data ends cleanly."""
        if end.reason is EndReason.BLANK_LAST:  # the segment's BLANK: the walk sees the segment alone
            return None
        if end.reason is EndReason.END_OF_FILE:
            return None if split.last else describe(DataEnd(end.offset, EndReason.TRUNCATED, end.segment,
                                                            end.file_offset, "segment file ends without a "
                                                                             "BLANK record"))
        if end.reason is EndReason.ZERO_TAIL:
            limit = split.limit if split.limit is not None else data_limit(split.path, end.file_offset)
            if limit <= end.file_offset:
                return None
            return f"zero-filled bytes where a record should start, but the segment holds data up to position {limit}"
        return describe(end)

    def _scan(self, log, seg: Segment, store: str, pos: int, stop: int, verify: bool):
        """Yield the batches of the records from ``pos`` to ``stop``; returns the walk's end (``None`` at ``stop``).

        A compressed body that cannot be decompressed makes its record
        malformed, not the split: the records before it are decoded again
        and the walk goes on after it.
        """
        while True:
            scan = ColumnarScan(log, columns=self.columns, start=seg.start_offset + pos,
                                stop=seg.start_offset + stop, verify_crc=verify, decompress=self.decompress,
                                batch_size=self.batch_size, topic=self.topic, predicate=self.predicate,
                                stop_at_corrupt_body=True)  # a malformed record here (see below)
            done = pos  # file position after the last record yielded
            try:
                for batch in scan:
                    if not batch.num_rows:
                        continue
                    offsets, sizes = batch.column("commitLogOffset"), batch.column("storeSize")
                    done = offsets[-1].as_py() + sizes[-1].as_py() - seg.start_offset
                    if self.topic_set is not None:
                        batch = batch.filter(pc.is_in(batch.column("topic"), value_set=self.topic_set))
                        if not batch.num_rows:
                            continue
                    if self.system is not None:
                        from rmqformats.systopics import with_system_columns
                        batch = with_system_columns(batch, batch.schema.names, decoding=self.system)
                    if self.body is not None:
                        batch = self.body.batch(batch)
                    yield self.converter.convert(batch, store)
            except DecompressionError as exc:
                bad = exc.offset
                if bad is None or not done <= bad < stop or os.path.abspath(exc.path or "") != os.path.abspath(seg.path):
                    raise
                if bad > done:
                    yield from self._scan(log, seg, store, done, bad, verify)
                yield from self.malformed(store, seg.path, bad, f"{exc.reason} (the body cannot be decompressed)")
                size = _total_size(seg.path, bad)
                if size <= 0:
                    return None
                pos = bad + size
                if pos >= stop:
                    return None
                continue
            return scan.end
