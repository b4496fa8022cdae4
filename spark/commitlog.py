"""Commit logs as Spark DataFrames, through Spark 4's Python Data Source API.

Each commit-log segment is one input partition, decoded on an executor by
:mod:`rmqformats.commitlog` and handed to Spark as Arrow record batches. A
segment is read from its start to its own end of data (its BLANK record, the
zero-filled tail or the first record recovery would reject); the end of each
segment is logged by the executor that read it.

Usage::

    from rmqformats.spark import register
    register(spark)
    df = spark.read.format("rocketmq_commitlog").load("/data/rocketmq/store")

Options: ``batchSize`` (rows per Arrow batch, default 4096), ``verifyCrc``
(``true`` to end a segment's data at a CRC mismatch, as broker recovery does).
Executors run the interpreter named by ``PYSPARK_PYTHON``; it needs
rmqformats and pyarrow.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

#: Columns, with RocketMQ's own field names (as in ``rmqformats messages --format jsonl``).
SCHEMA = ", ".join([
    "commitLogOffset long", "storeSize int", "bodyCRC int", "queueId int", "flag int",
    "queueOffset long", "sysFlag int", "bornTimestamp long", "bornHost string",
    "storeTimestamp long", "storeHost string", "reconsumeTimes int",
    "preparedTransactionOffset long", "topic string", "properties map<string,string>",
    "tags string", "keys string", "uniqKey string", "msgId string", "body binary", "segment string",
])

_log = logging.getLogger(__name__)


class SegmentPartition(InputPartition):
    """One commit-log segment file."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


class CommitLogReader(DataSourceReader):
    """Reads the segments of one commit log, a partition per segment."""

    def __init__(self, path: str, batch_size: int, verify_crc: bool):
        self.path = path
        self.batch_size = batch_size
        self.verify_crc = verify_crc

    def partitions(self) -> list[SegmentPartition]:
        from rmqformats import open_store

        return [SegmentPartition(s.path) for s in open_store(self.path).commitlog.segments]

    def read(self, partition: SegmentPartition) -> Iterator:
        import pyarrow as pa

        from rmqformats import open_store

        scan = open_store(partition.path).commitlog.scan(verify_crc=self.verify_crc)
        rows: list = []
        for msg in scan:
            rows.append(msg)
            if len(rows) == self.batch_size:
                yield _batch(pa, rows)
                rows = []
        if rows:
            yield _batch(pa, rows)
        _log.info("%s: %s", os.path.basename(partition.path), scan.end)


def _batch(pa, msgs: list):
    """An Arrow record batch of ``msgs`` whose types are exactly those of :data:`SCHEMA`."""
    i32, i64, s = pa.int32(), pa.int64(), pa.string()
    props = [m.properties for m in msgs]
    columns = {
        "commitLogOffset": (i64, [m.commitlog_offset for m in msgs]),
        "storeSize": (i32, [m.store_size for m in msgs]),
        "bodyCRC": (i32, [m.body_crc for m in msgs]),
        "queueId": (i32, [m.queue_id for m in msgs]),
        "flag": (i32, [m.flag for m in msgs]),
        "queueOffset": (i64, [m.queue_offset for m in msgs]),
        "sysFlag": (i32, [m.sys_flag for m in msgs]),
        "bornTimestamp": (i64, [m.born_timestamp for m in msgs]),
        "bornHost": (s, [m.born_host for m in msgs]),
        "storeTimestamp": (i64, [m.store_timestamp for m in msgs]),
        "storeHost": (s, [m.store_host for m in msgs]),
        "reconsumeTimes": (i32, [m.reconsume_times for m in msgs]),
        "preparedTransactionOffset": (i64, [m.prepared_transaction_offset for m in msgs]),
        "topic": (s, [m.topic for m in msgs]),
        "properties": (pa.map_(s, s), [list(p.items()) for p in props]),
        "tags": (s, [p.get("TAGS") for p in props]),
        "keys": (s, [p.get("KEYS") for p in props]),
        "uniqKey": (s, [p.get("UNIQ_KEY") for p in props]),
        "msgId": (s, [m.msg_id for m in msgs]),
        "body": (pa.binary(), [m.body for m in msgs]),
        "segment": (s, [os.path.basename(m.segment) for m in msgs]),
    }
    return pa.RecordBatch.from_arrays([pa.array(v, type=t) for t, v in columns.values()], names=list(columns))


class CommitLogDataSource(DataSource):
    """``spark.read.format("rocketmq_commitlog").load(STORE)``: a store root, commitlog/ or one segment."""

    @classmethod
    def name(cls) -> str:
        return "rocketmq_commitlog"

    def schema(self) -> str:
        return SCHEMA

    def reader(self, schema: StructType) -> CommitLogReader:
        path = self.options.get("path")
        if not path:
            raise ValueError("rocketmq_commitlog: give the store path to load()")
        return CommitLogReader(
            path,
            batch_size=int(self.options.get("batchSize", 4096)),
            verify_crc=str(self.options.get("verifyCrc", "false")).lower() == "true",
        )


def register(spark) -> None:
    """Register the ``rocketmq_commitlog`` data source with a SparkSession."""
    spark.dataSource.register(CommitLogDataSource)
