"""``rocketmq_consumequeue``: the units of every consume queue and batch consume queue as a DataFrame.

One row per unit, as the Python API reads them
(``store.queues_to_arrow(batch_queues=True)``): ``topic``, ``queueId``,
``cqOffset``, ``commitLogOffset``, ``size``, ``tagsCode``, ``batchSize`` (the
queue offsets a unit covers: 1 in a consume queue, the batch's message count
in a batch consume queue, whose ``cqOffset`` is the unit's base offset),
``queueType`` (``SimpleCQ`` or ``BatchCQ``) and ``store``. Each queue ends
where the broker's recovery ends it and placeholder units are left out, as
the API does. A queue whose files cannot be read (a file that does not hold
whole units, a gap recovery stops at) is one malformed record, reported by
the task that reads its first piece; its units are not read, as the API's
store-wide reader skips such a queue whole. ``topics`` picks queues by topic.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql.types import StructType

from rmqformats.batch_consumequeue import UNIT_SIZE as BCQ_UNIT_SIZE
from rmqformats.batch_consumequeue import BatchConsumeQueue
from rmqformats.columnar.queues import QUEUE_UNITS_SCHEMA, batch_consume_queue_batches, consume_queue_batches
from rmqformats.consumequeue import UNIT_DTYPE as CQ_UNIT_DTYPE
from rmqformats.consumequeue import ConsumeQueue
from rmqformats.errors import RmqFormatError
from rmqformats.queuefiles import QueueFile

from .partitions import Pruning, UnitPartition, UnitPiece, queue_partitions
from .paths import QUEUES, resolve
from .schema import QUEUE_TYPE, Converter, queue_schema
from .source import FilterPushdown, RocketMQSource, SourceReader

#: Unit size of each queue type.
UNIT_SIZES = {"SimpleCQ": CQ_UNIT_DTYPE.itemsize, "BatchCQ": BCQ_UNIT_SIZE}
_BATCH_SIZE_TYPE = QUEUE_UNITS_SCHEMA.field("batchSize").type


def _queue(piece: UnitPiece):
    """The queue of a piece, over the files the read selected."""
    files = tuple(QueueFile(path, start, size) for path, start, size in piece.queue_files)
    cls = ConsumeQueue if piece.queue_type == "SimpleCQ" else BatchConsumeQueue
    queue = cls(piece.folder, piece.topic, piece.queue_id)
    queue.files.files = files
    return queue


def _units(batch: pa.RecordBatch, batch_queue: bool) -> pa.RecordBatch:
    """A consume-queue or batch consume-queue batch with the columns of :data:`QUEUE_UNITS_SCHEMA`."""
    if batch_queue:
        columns = {"topic": batch.column("topic"), "queueId": batch.column("queueId"),
                   "cqOffset": batch.column("msgBaseOffset"), "commitLogOffset": batch.column("commitLogOffset"),
                   "size": batch.column("size"), "tagsCode": batch.column("tagsCode"),
                   "batchSize": batch.column("batchSize")}
    else:
        columns = {name: batch.column(name) for name in batch.schema.names}
        columns["batchSize"] = pa.array(np.ones(batch.num_rows, _BATCH_SIZE_TYPE.to_pandas_dtype()), _BATCH_SIZE_TYPE)
    return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


class QueueReader(SourceReader):
    """Plans pieces of the queue files of a read and reads each partition's pieces on an executor."""

    def partitions(self) -> list[UnitPartition]:
        pruning = Pruning(self.row_filter)
        parts = queue_partitions(resolve(self.options, QUEUES), self.options, UNIT_SIZES, pruning)
        pruning.log(self.source)
        return parts

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, UnitPartition):
            return
        converter = self.converter()
        malformed = self.malformed(converter)
        queues: dict[str, object] = {}
        broken: set[str] = set()
        for piece in partition.pieces:
            if piece.folder in broken:
                continue
            queue = queues.get(piece.folder)
            try:
                if queue is None:
                    queue = queues[piece.folder] = _queue(piece)
                    # Every error of the queue's files is raised here, before any of its units: a
                    # damaged queue is skipped whole, as the API's store-wide reader skips it.
                    files = queue.files
                    files.plan(files.first_unit(), files.end_unit(), 1 << 30)
                yield from self._piece(queue, piece, converter)
            except RmqFormatError as exc:
                broken.add(piece.folder)
                if piece.report:
                    yield from malformed(piece.store, exc.path, exc.offset, exc.reason)

    def _piece(self, queue, piece: UnitPiece, converter: Converter) -> Iterator[pa.RecordBatch]:
        batch_queue = piece.queue_type == "BatchCQ"
        read = batch_consume_queue_batches if batch_queue else consume_queue_batches
        extra = {QUEUE_TYPE: piece.queue_type}
        for batch in read(queue, piece.first, piece.stop, batch_size=self.options.batch_size):
            if batch.num_rows:
                out = self.row_filter.filter_batch(converter.convert(_units(batch, batch_queue), piece.store, extra))
                if out.num_rows:
                    yield out


class PushdownQueueReader(FilterPushdown, QueueReader):
    """A :class:`QueueReader` that takes the filters Spark pushes down (option ``filterPushdown``)."""


class ConsumeQueueDataSource(RocketMQSource):
    """``spark.read.format("rocketmq_consumequeue")``: units of every consume queue, batch consume queues included."""

    reader_class = QueueReader
    pushdown_reader_class = PushdownQueueReader

    @classmethod
    def name(cls) -> str:
        return "rocketmq_consumequeue"

    @classmethod
    def full_schema(cls, schema: StructType | None = None) -> StructType:
        return queue_schema()
