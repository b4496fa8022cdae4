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

``salvage=true`` skips that walk: every split resyncs on its first valid
record and, after a damaged record, on the next one, so a damaged store
yields every intact message; each damaged stretch is one malformed record.
On an undamaged store both reads return the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.types import StructType

from .partitions import commitlog_splits
from .paths import COMMITLOG, resolve
from .schema import message_schema
from .source import RocketMQSource, SourceReader
from .splits import SegmentSplit, SplitReader


class CommitLogReader(SourceReader):
    """Plans the splits of the commit logs of a read and decodes each on an executor."""

    def partitions(self) -> list[SegmentSplit]:
        return commitlog_splits(resolve(self.options, COMMITLOG), self.options)

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SegmentSplit):  # Spark's one empty partition when none was planned
            return
        converter = self.converter()
        o = self.options
        reader = SplitReader(converter, self.malformed(converter), decompress=o.decompress, verify_crc=o.verify_crc,
                             batch_size=o.batch_size, topics=o.topics)
        yield from reader.read(partition, salvage=o.salvage)


class CommitLogDataSource(RocketMQSource):
    """``spark.read.format("rocketmq_commitlog")``: messages, with the columnar decoder's columns and ``store``."""

    reader_class = CommitLogReader

    @classmethod
    def name(cls) -> str:
        return "rocketmq_commitlog"

    @classmethod
    def full_schema(cls) -> StructType:
        return message_schema()
