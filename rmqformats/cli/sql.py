"""``sql``: a SQL query over a store's tables (DuckDB), as a table, JSON Lines, CSV or Parquet."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from .. import output
from . import tables
from .common import UsageError, add_commitlog_arg, add_jobs, open_from_args, store_paths
from .ends import report_end
from .usage import QueryError

FORMATS = ("table", "jsonl", "csv", "parquet")


def _json_default(value):
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _json_column(arr: pa.Array) -> pa.Array:
    """JSON text of each value; a map as an object (its keys in order), as ``properties`` is written."""
    values = arr.to_pylist()
    if pa.types.is_map(arr.type):
        values = [None if v is None else dict(v) for v in values]
    return pa.array([None if v is None else json.dumps(v, ensure_ascii=False, default=_json_default)
                     for v in values], pa.string())


def _nested(t: pa.DataType) -> bool:
    return pa.types.is_nested(t) or pa.types.is_map(t)


def text_cells(batch: pa.RecordBatch) -> list[pa.Array]:
    """Each column of a result batch as text for the table: times as ISO 8601 (UTC), bodies as base64,
    lists, maps and structs as JSON."""
    from ..export import base64_text, time_text
    cells = []
    for arr in batch.columns:
        t = arr.type
        if pa.types.is_timestamp(t):
            arr = time_text(pc.cast(arr, pa.timestamp("ms", tz="UTC")))  # %S holds the milliseconds
        elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
            arr = base64_text(arr)
        elif _nested(t):
            arr = _json_column(arr)
        elif not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            arr = pc.cast(arr, pa.string())
        cells.append(pc.cast(arr, pa.string()))
    return cells


def json_lines(batch: pa.RecordBatch) -> bytes:
    """JSON Lines of a result batch: times as epoch milliseconds (as ``messages --format jsonl``), bodies
    base64, HUGEINT sums as integers."""
    columns = []
    for arr in batch.columns:
        if pa.types.is_timestamp(arr.type):
            arr = pc.cast(pc.cast(arr, pa.timestamp("ms", tz="UTC")), pa.int64())
        columns.append(arr.to_pylist())
    names = batch.schema.names
    lines = []
    for row in zip(*columns):
        record = {n: (int(v) if hasattr(v, "as_integer_ratio") and not isinstance(v, (int, float)) and v == int(v)
                      else v) for n, v in zip(names, row)}
        lines.append(json.dumps(record, ensure_ascii=False, default=_json_default))
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


def csv_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A result batch with what CSV cannot hold as text: bodies base64, lists, maps and structs JSON."""
    from ..export import base64_text
    arrays, fields = [], []
    for f, arr in zip(batch.schema, batch.columns):
        if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type):
            arr = pc.cast(base64_text(arr), pa.string())
        elif _nested(f.type):
            arr = _json_column(arr)
        arrays.append(arr)
        fields.append(pa.field(f.name, arr.type))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _write_table(batches: Iterable[pa.RecordBatch], schema: pa.Schema, out) -> int:
    """The rows as a table fitted to the terminal: text columns may be cut in the middle, numbers and
    times never are."""
    from ..export import TableStream
    width = tables.table_width(out)

    def fitted(h, w, c):
        layout = tables.fit_layout(h, w, c, width)
        tables.note_left_out(h, layout, width)
        return layout
    cut = [i for i, f in enumerate(schema) if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
           or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) or _nested(f.type)]
    table = TableStream(list(schema.names), out, cut=cut, layout=fitted)
    for batch in batches:
        table.write(text_cells(batch))
    table.close()
    return table.rows


class _Sink:
    """Result rows into a file written atomically (:class:`rmqformats.output.AtomicFile`) or to stdout."""

    def __init__(self, fmt: str, out: str | None, schema: pa.Schema, *, force: bool, reads: list[str]):
        self.fmt = fmt
        self.file = None
        if out is not None:
            self.file = output.AtomicFile(out, force=force, reads=reads)
            self.stream = self.file.stream
        else:
            sys.stdout.flush()
            self.stream = sys.stdout.buffer
        self.path = out
        self.writer = None
        self.schema = schema

    def write(self, batch: pa.RecordBatch) -> None:
        with self._errors():
            if self.fmt == "jsonl":
                self.stream.write(json_lines(batch))
            elif self.fmt == "csv":
                batch = csv_ready(batch)
                if self.writer is None:
                    import pyarrow.csv as pcsv
                    self.writer = pcsv.CSVWriter(self.stream, batch.schema)
                self.writer.write_batch(batch)
            else:
                if self.writer is None:
                    import pyarrow.parquet as pq
                    self.writer = pq.ParquetWriter(self.stream, batch.schema, compression="zstd")
                self.writer.write_batch(batch)

    def close(self) -> None:
        with self._errors():
            if self.writer is None and self.fmt == "csv":
                self.stream.write((",".join(json.dumps(n) for n in self.schema.names) + "\n").encode())
            if self.writer is None and self.fmt == "parquet":
                import pyarrow.parquet as pq
                self.writer = pq.ParquetWriter(self.stream, self.schema, compression="zstd")
            if self.writer is not None:
                self.writer.close()
            self.stream.flush()
        if self.file is not None:
            self.file.commit()

    def abort(self) -> None:
        if self.file is not None:
            self.file.abort()

    def _errors(self):
        from contextlib import nullcontext
        return output.write_errors(self.path) if self.path is not None else nullcontext()


def _counted(batches: Iterable[pa.RecordBatch], counter: list[int]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        counter[0] += batch.num_rows
        yield batch


def cmd_sql(args: argparse.Namespace) -> int:
    from ..sql import SqlError, query
    fmt = args.format
    if args.query is None and args.sample:  # `sql --sample "SELECT …"`: the one argument is the query
        args.query, args.store = args.store, None
    if args.query is None:
        raise UsageError("give STORE and the query (or --sample and the query)")
    if fmt == "parquet" and args.output is None:
        raise UsageError("--format parquet writes a file: give -o OUT")
    if fmt == "table" and args.output is not None:
        raise UsageError("-o writes --format jsonl, csv or parquet; the table is for the terminal")
    store = open_from_args(args)
    reads = store_paths(store)
    if args.output is not None:
        output.check_target(args.output, folder=False, force=args.force, reads=reads)
    decoding = body_decoding(args)
    from ..systopics import SystemDecoding
    from .pending import delay_levels
    system = SystemDecoding(delay_levels_ms=delay_levels(args.config, store.root), trace_topics=tuple(args.trace_topic or ()))
    try:
        result = query(store, args.query, jobs=store.commitlog.jobs, body_decoder=decoding, system=system)
    except SqlError as exc:
        raise QueryError(str(exc)) from None
    rows = [0]
    try:
        batches = _counted(result, rows)
        if fmt == "table" and args.output is None:
            _write_table(batches, result.schema, sys.stdout)
        else:
            sink = _Sink(fmt, args.output, result.schema, force=args.force,
                         reads=reads)
            try:
                for batch in batches:
                    sink.write(batch)
                sink.close()
            except BaseException:
                sink.abort()
                raise
    except SqlError as exc:
        raise QueryError(str(exc)) from None
    finally:
        result.close()
    if args.output is not None:
        sys.stderr.write(f"rmqformats: wrote {rows[0]} row{'s' if rows[0] != 1 else ''} to {args.output}\n")
    # The messages table read to its end: where the data ended at damage (or crossed a missing file), the
    # note and the exit status of messages and export.
    source = result.sources.get("messages")
    if source is not None and source.scan is not None and source.scan.end is not None:
        return report_end(source.scan, store.commitlog)
    return 0


def add_commands(sub) -> None:
    """Add ``sql`` to the ``rmqformats`` subcommands."""
    sp = sub.add_parser(
        "sql", help="run a SQL query over the store's tables (DuckDB; the sql extra)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a SQL query (DuckDB's dialect) over the store's tables, streamed from the files:\n"
                    "  messages             the commit log (the columns of export --columns, then the\n"
                    "                       decoded system columns of --decode-system: kind, realTopic, …)\n"
                    "  queue_units          every consume-queue unit (file, batch and RocksDB queues)\n"
                    "  index_entries        every written index entry\n"
                    "  consumer_offsets     committed offsets with queue ranges and lag (the rows of lag)\n"
                    "  topics               config/topics.json\n"
                    "  subscription_groups  config/subscriptionGroup.json\n"
                    "  timer                the timer log's units\n"
                    "Topic, queueId, storeTimestamp and commitLogOffset conditions of the WHERE clause\n"
                    "narrow what is read; times without a zone are UTC. A query that DuckDB refuses exits 2\n"
                    "with one line naming its position.")
    sp.add_argument("store", nargs="?", help="store root, commitlog/ folder or one segment file")
    sp.add_argument("query", nargs="?", help="the SQL query (one SELECT)")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    add_commitlog_arg(sp)
    sp.add_argument("--format", choices=FORMATS, default="table",
                    help="output format (default: table; parquet needs -o)")
    sp.add_argument("-o", "--output", metavar="OUT",
                    help="write the rows to this file (atomically; refused when it exists, unless --force)")
    sp.add_argument("--force", action="store_true", help="replace an existing OUT file")
    add_jobs(sp)
    add_body_decoder(sp)
    from .pending import add_decoding_args
    add_decoding_args(sp)
    sp.set_defaults(func=cmd_sql)


def add_body_decoder(sp: argparse.ArgumentParser) -> None:
    """``--body-decoder`` and ``--body-fields``: bodies decoded into ``bodyDecoded`` or named fields' columns
    (with ``bodyDecodeError``)."""
    sp.add_argument("--body-decoder", metavar="SPEC",
                    help="decode bodies into a bodyDecoded column (bodyDecodeError says why one did not): json, "
                         "text:ENCODING, protobuf:DESCRIPTOR_SET:MESSAGE (the protobuf extra), avro:SCHEMA_FILE "
                         "(the avro extra), python:MODULE:FUNCTION, or a decoder of the rmqformats.body_decoders "
                         "entry points")
    sp.add_argument("--body-fields", metavar="FIELD[,FIELD…]",
                    help="with --body-decoder: these fields of each decoded body, as text, in columns named "
                         "body.FIELD in place of bodyDecoded (customer.id: field id of field customer; items.0: "
                         "the first item; null where a body has no such field)")


def body_decoding(args: argparse.Namespace):
    """The :class:`rmqformats.body_decoders.BodyDecoding` of ``--body-decoder`` and ``--body-fields`` (``None``
    without them); a spec that names no decoder is a usage error."""
    from ..body_decoders import BodyDecoderError, decoding
    try:
        return decoding(args.body_decoder, args.body_fields)
    except BodyDecoderError as exc:
        raise UsageError(str(exc)) from None
