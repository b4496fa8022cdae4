"""The batch reader of ``rocketmq_commitlog``: plans a read's splits and decodes each on an executor.

:mod:`.commitlog` (the data source) and :mod:`.streaming` (its stream reader) both build on it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from .filters import RowFilter
from .options import body_columns, body_decoding
from .partitions import Pruning, commitlog_splits
from .paths import COMMITLOG, resolve
from .schema import STORE, property_columns
from .source import FilterPushdown, SourceReader
from .splits import SegmentSplit, SplitReader


#: Message columns from the cheapest to filter on: fixed-width fields, then the topic and the
#: segment, then the rest (properties, hosts, message id).
FILTER_ORDER = (("commitLogOffset", "storeSize", "bodyCRC", "queueId", "flag", "queueOffset", "sysFlag",
                 "bornTimestamp", "storeTimestamp", "reconsumeTimes", "preparedTransactionOffset"),
                ("topic", "segment"))


class CommitLogReader(SourceReader):
    """Plans the splits of the commit logs of a read and decodes each on an executor."""

    filter_order = FILTER_ORDER

    def partitions(self) -> list[SegmentSplit]:
        pruning = Pruning(self.row_filter)
        splits = commitlog_splits(resolve(self.options, COMMITLOG), self.options, pruning)
        pruning.log(self.source)
        return splits

    def split_reader(self) -> SplitReader:
        """The decoder of this read's splits, with the pushed-down filters as its predicate."""
        converter = self.converter()
        o = self.options
        # Filters on ``store`` alone were applied by choosing the splits; the rest while decoding.
        decoded = RowFilter([c for c in self.row_filter.conds if c.columns != {STORE}], order=FILTER_ORDER)
        topics = o.topics
        if topics is None:
            # ``topic = 'T'`` is also given to the decoder's own topic filter, which compares the stored
            # bytes in compiled code before any column is built: the same rows, as a topic decodes to
            # 'T' exactly when its bytes are T's (a U+FFFD in 'T' could stand for invalid bytes: not used).
            equal = [c.value for c in decoded.on("topic") if c.op == "=" and isinstance(c.value, str)
                     and "\ufffd" not in c.value]
            topics = (equal[0],) if equal else None
        system = None
        if o.decode_system:
            from rmqformats.systopics import SystemDecoding
            system = SystemDecoding(trace_topics=o.trace_topics) if o.delay_levels_ms is None else \
                SystemDecoding(delay_levels_ms=o.delay_levels_ms, trace_topics=o.trace_topics)
        return SplitReader(converter, self.malformed(converter), decompress=o.decompress, verify_crc=o.verify_crc,
                           batch_size=o.batch_size, topics=topics, predicate=decoded if decoded else None,
                           system=system, body=body_decoding(o))

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SegmentSplit):  # Spark's one empty partition when none was planned
            return
        yield from self.split_reader().read(partition, salvage=self.options.salvage)


class PushdownCommitLogReader(FilterPushdown, CommitLogReader):
    """A :class:`CommitLogReader` that takes the filters Spark pushes down (option ``filterPushdown``);
    filters on the decoded system and body columns go back to Spark (they are decoded after the walk's
    filters), and so do those on ``property.NAME`` columns (a name with a dot in it, as Spark quotes it)."""

    def unfiltered(self) -> frozenset[str]:
        from rmqformats.systopics import SYSTEM_COLUMNS
        system = frozenset(SYSTEM_COLUMNS) if self.options.decode_system else frozenset()
        return system | frozenset(body_columns(self.options)) | frozenset(property_columns(self.schema.fieldNames()))
