"""``rocketmq_commitlog``: the messages of commit logs as a DataFrame.

::

    from rmqformats.spark import register
    register(spark)
    df = (spark.read.format("rocketmq_commitlog")
          .option("splitSize", "256m")                  # byte ranges inside 1 GiB segments
          .load("/data/rocketmq/store"))                # root, commitlog/, a segment, globs, lists, file: URIs

Partitions are one per segment, or with ``splitSize`` byte ranges of a
segment (:mod:`.partitions`). Where the data ends is where the Python API's
scan ends it: before planning, the driver walks the record chain of each
commit log with the columnar decoder (:mod:`.dataend`), so a split after a
damaged record (in its own segment or an earlier one) is not read, and the
split holding the damage reports it by the read's ``mode``. The default read
returns exactly ``open_store(p).commitlog.scan()``'s messages (with
``verifyCrc``, ``scan(verify_crc=True)``'s).

Filters Spark pushes down (option ``filterPushdown``) run inside the
decoder, on the fixed-width fields first, and leave out whole splits by
offsets, store times (the walk's least and greatest per split), segment and
store (:mod:`.filters`, :class:`.partitions.Pruning`). ``readStream`` gives
:mod:`.streaming`'s source.

``salvage=true`` skips that walk: every split resyncs on its first valid
record and, after a damaged record, on the next one, so a damaged store
yields every intact message; each damaged stretch is one malformed record.
On an undamaged store both reads return the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.types import StructType

from .filters import RowFilter

from .partitions import Pruning, commitlog_splits
from .paths import COMMITLOG, resolve
from .schema import STORE, check_schema, message_schema
from .source import FilterPushdown, RocketMQSource, SourceReader
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
        return SplitReader(converter, self.malformed(converter), decompress=o.decompress, verify_crc=o.verify_crc,
                           batch_size=o.batch_size, topics=topics, predicate=decoded if decoded else None)

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SegmentSplit):  # Spark's one empty partition when none was planned
            return
        yield from self.split_reader().read(partition, salvage=self.options.salvage)


class PushdownCommitLogReader(FilterPushdown, CommitLogReader):
    """A :class:`CommitLogReader` that takes the filters Spark pushes down (option ``filterPushdown``)."""


class CommitLogDataSource(RocketMQSource):
    """``spark.read.format("rocketmq_commitlog")``: messages, with the columnar decoder's columns and ``store``."""

    reader_class = CommitLogReader
    pushdown_reader_class = PushdownCommitLogReader

    @classmethod
    def name(cls) -> str:
        return "rocketmq_commitlog"

    @classmethod
    def full_schema(cls) -> StructType:
        return message_schema()

    def streamReader(self, schema: StructType):
        """``spark.readStream.format("rocketmq_commitlog")``: see :mod:`.streaming`."""
        from .streaming import CommitLogStreamReader  # the stream reader builds on this module's reader

        check_schema(schema, self.full_schema(), self.read_options.corrupt_column, self.name())
        return CommitLogStreamReader(self.name(), self.read_options, schema, self.full_schema())
