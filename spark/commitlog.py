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

``decodeSystem=true`` adds the decoded system columns of
:mod:`rmqformats.systopics` (``kind``, ``realTopic``, ``dueTime``, …) after
the message columns, with the names and types of ``rmqformats export
--decode-system`` and ``rmqformats sql``; ``messageDelayLevel`` (the broker's
setting, as text) and ``traceTopics`` (comma-separated) say how they are
decoded. Filters on them are applied by Spark, not pushed down.

A read may name ``property.NAME`` columns (option ``columns``, or its
schema): each message's value of that property, a string, null where it
has none, as the API's ``property.NAME`` columns (:func:`rmqformats.walk.arrow.property_column`).

``bodyDecoder`` (a spec of :mod:`rmqformats.body_decoders`: ``json``,
``text:ENCODING``, ``protobuf:DESCRIPTOR_SET:MESSAGE``, ``avro:SCHEMA_FILE``,
``python:MODULE:FUNCTION``) adds ``bodyDecoded`` and ``bodyDecodeError``
after those, as ``rmqformats export --body-decoder`` does; with
``bodyFields`` (``order,customer.id``) the fields' string columns
``body.order`` and ``body.customer.id`` take the place of ``bodyDecoded``
(quoted with backticks in Spark SQL and in ``col()``: ``col("`body.order`")``). The schema file
must be readable at the same path on the executors. Bodies are decoded only
when the read names one of these columns; filters on them are applied by Spark.
"""

from __future__ import annotations

from pyspark.sql.types import StructType

from .commitlogreader import FILTER_ORDER, CommitLogReader, PushdownCommitLogReader  # noqa: F401
from .options import body_columns
from .schema import check_schema, message_schema, property_columns
from .source import RocketMQSource
from .streaming import CommitLogStreamReader


class CommitLogDataSource(RocketMQSource):
    """``spark.read.format("rocketmq_commitlog")``: messages, with the columnar decoder's columns and ``store``."""

    reader_class = CommitLogReader
    pushdown_reader_class = PushdownCommitLogReader

    @classmethod
    def name(cls) -> str:
        return "rocketmq_commitlog"

    def full_schema(self, schema: StructType | None = None) -> StructType:  # type: ignore[override]
        """Every column (the options say whether decoded columns are there), with the ``property.NAME``
        columns named by the ``columns`` option or by the read's ``schema``."""
        named = [*(self.read_options.columns or ()), *(schema.fieldNames() if schema is not None else ())]
        return message_schema(decode_system=self.read_options.decode_system,
                              body_columns=body_columns(self.read_options),
                              property_columns=tuple(dict.fromkeys(property_columns(named))))

    def streamReader(self, schema: StructType):
        """``spark.readStream.format("rocketmq_commitlog")``: see :mod:`.streaming`."""
        full = self.full_schema(schema)
        check_schema(schema, full, self.read_options.corrupt_column, self.name())
        return CommitLogStreamReader(self.name(), self.read_options, schema, full)
