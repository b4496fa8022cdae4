"""``rocketmq_index``: the entries of index files as a DataFrame.

One row per written entry (numbers 1 to the header's ``indexCount - 1``),
as ``store.index().to_arrow()`` gives them: ``file``, ``entry``, ``slot``
(``keyHash % numHashSlots``, the slot the entry was chained from),
``keyHash``, ``commitLogOffset``, ``timeDiff``, ``prevIndex``, ``storeTime``
(the header's begin time plus ``timeDiff`` seconds, what lookups compare)
and ``store``. Slot and entry counts are inferred from the file size as the
API infers them, or given with ``hashSlots`` and ``indexNum`` (the broker's
``maxHashSlotNum`` and ``maxIndexNum``). A file whose size or header is
wrong is one malformed record.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql.types import StructType

from rmqformats.columnar.queues import INDEX_SCHEMA
from rmqformats.errors import RmqFormatError
from rmqformats.index import IndexFile

from .partitions import Pruning, UnitPartition, index_partitions
from .paths import INDEX, resolve
from .schema import index_schema, repeat_string
from .source import FilterPushdown, RocketMQSource, SourceReader


def entries(f: IndexFile, first: int, stop: int) -> pa.RecordBatch:
    """Entries ``first`` to ``stop - 1`` of ``f`` with the columns of :data:`INDEX_SCHEMA`."""
    array = f.entry_array(first, stop)
    key_hash = array["key_hash"].astype(np.int32)
    # Java long arithmetic: wraps on overflow, as IndexEntry.time_ms does.
    with np.errstate(over="ignore"):
        store_time = np.int64(f.header.begin_timestamp) + array["time_diff"].astype(np.int64) * np.int64(1000)
    columns = {
        "file": repeat_string(f.name, len(array)),
        "entry": pa.array(np.arange(first, stop, dtype=np.int32)),
        # Java's %: the sign of the dividend (only a damaged entry has a negative hash).
        "slot": pa.array(np.fmod(key_hash, np.int32(f.num_hash_slots)).astype(np.int32)),
        "keyHash": pa.array(key_hash),
        "commitLogOffset": pa.array(array["ofs_physical"].astype(np.int64)),
        "timeDiff": pa.array(array["time_diff"].astype(np.int32)),
        "prevIndex": pa.array(array["prev_index"].astype(np.int32)),
        "storeTime": pa.array(store_time, INDEX_SCHEMA.field("storeTime").type),
    }
    return pa.RecordBatch.from_arrays([columns[field.name] for field in INDEX_SCHEMA], names=INDEX_SCHEMA.names)


class IndexReader(SourceReader):
    """Plans pieces of the index files of a read and reads each partition's pieces on an executor."""

    def partitions(self) -> list[UnitPartition]:
        pruning = Pruning(self.row_filter)
        parts = index_partitions(resolve(self.options, INDEX), self.options, pruning)
        pruning.log(self.source)
        return parts

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, UnitPartition):
            return
        converter = self.converter()
        malformed = self.malformed(converter)
        step = self.options.batch_size
        for piece in partition.pieces:
            try:
                with IndexFile(piece.path, num_hash_slots=self.options.hash_slots,
                               num_index=self.options.index_num) as f:
                    stop = f.written_entries() + 1 if piece.stop is None else piece.stop
                    for first in range(piece.first, stop, step):
                        out = self.row_filter.filter_batch(
                            converter.convert(entries(f, first, min(stop, first + step)), piece.store))
                        if out.num_rows:
                            yield out
            except RmqFormatError as exc:
                if piece.report:
                    yield from malformed(piece.store, exc.path, exc.offset, exc.reason)


class PushdownIndexReader(FilterPushdown, IndexReader):
    """An :class:`IndexReader` that takes the filters Spark pushes down (option ``filterPushdown``)."""


class IndexDataSource(RocketMQSource):
    """``spark.read.format("rocketmq_index")``: the written entries of every index file."""

    reader_class = IndexReader
    pushdown_reader_class = PushdownIndexReader

    @classmethod
    def name(cls) -> str:
        return "rocketmq_index"

    @classmethod
    def full_schema(cls, schema: StructType | None = None) -> StructType:
        return index_schema()
