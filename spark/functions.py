"""Per-partition functions for ``mapInArrow``, for jobs that already hold the files or their bytes.

:class:`SplitDecoder` decodes rows ``(path, start, end)``, each a byte range
of a segment file (``end`` null: to the file's end), as the data source's
splits do; :func:`segment_splits` makes such rows. :class:`BinaryFileDecoder`
decodes the rows of ``spark.read.format("binaryFile")``, each a whole
segment in memory. Both give the data source's columns (or those asked for),
with its ``mode``, corrupt-record column and ``salvage``; ``system=SystemDecoding()``
(:class:`rmqformats.systopics.SystemDecoding`) adds the decoded system columns, as the source's
``decodeSystem``, and ``body_decoder=``/``body_fields=`` the decoded body columns, as its
``bodyDecoder``/``bodyFields``::

    from rmqformats.spark import SplitDecoder, segment_splits
    decode = SplitDecoder(columns=["topic", "storeTimestamp", "body"])
    ranges = spark.createDataFrame(segment_splits("/data/store", split_size=256 << 20), "path string, start long, end long")
    messages = ranges.repartition(64).mapInArrow(decode, decode.schema)

    decode = BinaryFileDecoder()
    spark.read.format("binaryFile").load("/data/store/commitlog/*").mapInArrow(decode, decode.schema)

There is no driver-side walk here: each range or file is read on its own,
as ``open_store(segment)`` reads one segment (it is its own commit log, so
its end of file is the end of the data), and damage ends a range (with
``salvage``, the walk resyncs after it).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence

import pyarrow as pa
from pyspark.sql.types import StructType

from rmqformats.commitlog import Segment
from rmqformats.queuefiles import QUEUE_FILE_NAME
from rmqformats.systopics import SystemDecoding

from .malformed import Malformed
from .options import (DEFAULT_BATCH_SIZE, MODES, PERMISSIVE, OptionError, ReadOptions, body_columns, body_decoding,
                      parse_options)
from .partitions import segments_of
from .paths import COMMITLOG, find_root, local_path, resolve
from .schema import Converter, message_schema, with_corrupt_column
from .splits import SegmentSplit, SplitReader


def _start_offset(path: str) -> int:
    name = os.path.basename(path)
    return int(name) if QUEUE_FILE_NAME.match(name) else 0


def store_of(path: str) -> str:
    """The ``store`` column of a segment: its store root, or the folder holding it."""
    return find_root(path) or os.path.dirname(path)


def segment_splits(paths: str | Sequence[str], split_size: int | None = None, **options: str) -> list[tuple[str, int, int]]:
    """``(path, start, end)`` of the byte ranges of every segment under ``paths``, for :class:`SplitDecoder`.

    ``paths`` and ``options`` (``recursiveFileLookup``, ``pathGlobFilter``, ...)
    as the data source takes them; ``split_size`` bytes per range (default:
    whole segments).
    """
    given = [paths] if isinstance(paths, str) else list(paths)
    parsed = parse_options("rocketmq_commitlog", {**options, "paths": json.dumps(given)})
    out = []
    for store in resolve(parsed, COMMITLOG):
        for seg in segments_of(store):
            step = split_size or max(seg.size, 1)
            out += [(seg.path, b, min(b + step, seg.size)) for b in range(0, max(seg.size, 1), step)]
    return out


class _Decoder:
    """The options of the functions (those of the data source), their schema and split reader."""

    def __init__(self, columns: Sequence[str] | None = None, *, mode: str = PERMISSIVE,
                 corrupt_column: str | None = None, salvage: bool = False, verify_crc: bool = False,
                 decompress: bool = True, topics: Iterable[str] | None = None,
                 batch_size: int = DEFAULT_BATCH_SIZE, system: SystemDecoding | None = None,
                 body_decoder: str | None = None, body_fields: str | Sequence[str] | None = None):
        mode = mode.upper()
        if mode not in MODES:
            raise OptionError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.options = ReadOptions("rocketmq_commitlog", (), mode=mode, corrupt_column=corrupt_column,
                                   batch_size=batch_size, decompress=decompress, verify_crc=verify_crc,
                                   topics=None if topics is None else tuple(topics), salvage=salvage,
                                   decode_system=system is not None, body_decoder=body_decoder,
                                   body_fields=None if body_fields is None else tuple(
                                       body_fields.split(",") if isinstance(body_fields, str) else body_fields))
        if body_decoder is not None or body_fields is not None:
            from rmqformats.body_decoders import BodyDecoderError
            try:
                body_decoding(self.options)
            except BodyDecoderError as exc:
                raise OptionError(str(exc)) from None
            if body_decoder is None:
                raise OptionError("body_fields need a body_decoder")
        #: With ``system`` (the ``decodeSystem`` option of the source), the decoded system columns too.
        self.system = system
        full = message_schema(decode_system=system is not None, body_columns=body_columns(self.options))
        if corrupt_column is not None and corrupt_column in full.fieldNames():
            raise OptionError(f"corrupt_column {corrupt_column!r} is one of the message columns; name another")
        schema = with_corrupt_column(full, corrupt_column)
        if columns is not None:
            wanted = set(columns) | {corrupt_column}
            unknown = set(columns) - set(schema.fieldNames())
            if unknown:
                raise OptionError(f"no column {', '.join(sorted(unknown))}; the columns are "
                                  f"{', '.join(full.fieldNames())}")
            schema = StructType([f for f in schema.fields if f.name in wanted])
        #: The schema to give ``mapInArrow``.
        self.schema: StructType = schema
        self._full = full

    def _reader(self) -> tuple[SplitReader, Malformed]:
        # Built on the executor: converters hold Arrow objects that need not travel.
        converter = Converter(self.schema, self._full, self.options.corrupt_column)
        malformed = Malformed("rocketmq_commitlog", self.options.mode, converter)
        o = self.options
        return SplitReader(converter, malformed, decompress=o.decompress, verify_crc=o.verify_crc,
                           batch_size=o.batch_size, topics=o.topics, system=self.system,
                           body=body_decoding(o)), malformed


class SplitDecoder(_Decoder):
    """``mapInArrow`` function over rows ``(path string, start long, end long)``: the messages of each range.

    A range owns the records that start in it, as a split of the data
    source does; ``path`` may be a ``file:`` URI.
    """

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        reader, _ = self._reader()
        for batch in batches:
            paths = batch.column("path").to_pylist()
            starts = batch.column("start").to_pylist()
            ends = batch.column("end").to_pylist()
            for path, start, end in zip(paths, starts, ends):
                local = local_path(path)
                seg = Segment(local, _start_offset(local), os.path.getsize(local))
                end = seg.size if end is None else min(end, seg.size)
                split = SegmentSplit(store_of(local), seg, True, start or 0, end)
                yield from reader.read(split, salvage=self.options.salvage)


class BinaryFileDecoder(_Decoder):
    """``mapInArrow`` function over ``spark.read.format("binaryFile")`` rows: the messages of each segment.

    Each file's ``content`` is written to a temporary file (under ``TMPDIR``)
    for the decoder, which reads files, and removed after; rows and errors
    name the original path.
    """

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        reader, malformed = self._reader()
        for batch in batches:
            contents = batch.column("content")
            for i, path in enumerate(batch.column("path").to_pylist()):
                local = local_path(path)
                folder = tempfile.mkdtemp(prefix="rmqformats-")
                try:
                    copy = os.path.join(folder, os.path.basename(local))
                    with open(copy, "wb") as f:
                        f.write(contents[i].as_buffer() or b"")
                    malformed.rename = {copy: local}
                    seg = Segment(copy, _start_offset(local), os.path.getsize(copy))
                    split = SegmentSplit(store_of(local), seg, True, 0, seg.size)
                    yield from reader.read(split, salvage=self.options.salvage)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
