"""``dump`` of a commit-log segment: its records from the walk (``--jobs`` worker processes), as dicts, JSON
text, table blocks or a summary.

The records are those of :func:`records`, a dict each (the default view,
or every field with ``deep``), made record by record. The JSON text
(:func:`write_json`), the table's blocks (:func:`table_blocks`) and the
summary (:func:`summary`) are the same records made from the walk's
columns a batch at a time, held to :func:`records` by the tests. A
compressed body that does not decompress ends the records there with its
typed error; the summary reads no body.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from . import bodies, status
from .ends import report_end

#: Rows of a batch of the walk (records are written as they are made from it).
BATCH_ROWS = 8192
#: The columns of a message record's default view, from the walk's batches.
COLUMNS = ("commitLogOffset", "storeSize", "queueId", "queueOffset", "sysFlag", "storeTimestamp", "topic", "msgId",
           "body", "tags", "keys", "segment")
#: The fields of a message record of the default view (its table's header).
TABLE_HEADER = ["fileOffset", "record", "commitLogOffset", "storeSize", "topic", "queueId", "queueOffset",
                "storeTimestamp", "tags", "keys", "msgId", "bodyBytes"]
#: The fields whose range the summary gives.
RANGES = ("commitLogOffset", "queueOffset", "storeTimestamp")


def _open(path: str, jobs: int | None):
    from ..commitlog import CommitLog
    log = CommitLog(path)
    log.jobs = jobs or 1
    return log


def _body(data: bytes, body: str | None, body_limit: int | None, table: bool) -> dict:
    if table:
        if body in (None, "none"):
            return {}
        limit = bodies.TABLE_LIMIT if body_limit is None else body_limit
        return {"body": bodies.render(data, body, limit, table=True)}
    return bodies.json_fields(data, body, body_limit)


#: Where the data of the segments walked in this command ended early (:func:`note_end`), for its exit status.
ENDED_EARLY: list = []


def note_end(scan) -> None:
    """Say on stderr where the data of a walk ended early (damage, a cut record), as every walk says it."""
    if report_end(scan) != status.OK:
        ENDED_EARLY.append(scan.end)


def _blank(b, head: dict | None = None) -> dict:
    return {**(head or {}), "fileOffset": b.file_offset, "record": "BLANK", "commitLogOffset": b.commitlog_offset,
            "storeSize": b.length}


def records(path: str, *, deep: bool = False, body: str | None = None, body_limit: int | None = None,
            table: bool = False, jobs: int | None = None) -> Iterator[dict]:
    """The records of the segment at ``path`` as dicts, ``fileOffset`` first: its messages (the default
    view, or every field with ``deep``; the body shown as ``body`` and ``body_limit`` say, for a ``table``
    or for JSON), then its BLANK record."""
    log = _open(path, jobs)
    if deep:  # every field of every message: the object view of the walk
        scan = log.scan()
        for m in scan:
            d = {"fileOffset": m.file_offset, "record": "MESSAGE", **m.to_json_dict()}
            d.pop("body")
            d.update(_body(m.body, body, body_limit, table))
            yield d
    else:
        scan = log.batches(COLUMNS, decompress=False, batch_size=BATCH_ROWS)
        yield from _rows(log, scan, body, body_limit, table)
    for b in scan.blanks:
        yield _blank(b)
    note_end(scan)


def _rows(log, scan, body_view: str | None, body_limit: int | None, table: bool) -> Iterator[dict]:
    """The default view of the messages, a batch of the walk's columns at a time."""
    import os

    import pyarrow as pa

    from ..walk import arrow as A
    from ..walk import layout as L
    from ..compression import DEFAULT_MAX_BODY_SIZE, BodyDecompressionError
    from ..errors import DecompressionError
    segments = {os.path.basename(s.path): s for s in log.segments}
    for batch in scan:
        col = {name: batch.column(name).to_pylist() for name in COLUMNS if name != "storeTimestamp"}
        col["storeTimestamp"] = batch.column("storeTimestamp").cast(pa.int64()).to_pylist()
        for (offset, size, queue_id, queue_offset, sys_flag, store_ts, topic, msg_id, stored, tags, keys,
             name) in zip(*(col[c] for c in COLUMNS)):
            seg = segments[name]
            file_offset = offset - seg.start_offset
            d = {"fileOffset": file_offset, "record": "MESSAGE", "commitLogOffset": offset, "storeSize": size,
                 "topic": topic, "queueId": queue_id, "queueOffset": queue_offset, "storeTimestamp": store_ts,
                 "tags": tags, "keys": " ".join(keys or ()), "msgId": msg_id, "bodyBytes": len(stored)}
            data = stored
            if sys_flag & L.COMPRESSED:  # the body as the object view gives it: decompressed, or its error
                try:
                    data = A.body_decompressor_of((sys_flag & L.COMPRESSION_MASK) >> L.COMPRESSION_SHIFT)(
                        stored, DEFAULT_MAX_BODY_SIZE)
                except BodyDecompressionError as exc:
                    raise DecompressionError(seg.path, file_offset, str(exc)) from None
                data = data if isinstance(data, bytes) else bytes(data)
            d.update(_body(data, body_view, body_limit, table))
            yield d


# -- the same records from the walk's columns ---------------------------------------------------------

#: Bytes of bodies, decompressed, made at a time (a batch whose bodies decompress to more goes in pieces).
PIECE_BYTES = 64 << 20


def _shown_pieces(batch, path: str, start: int) -> Iterator[tuple]:
    """``batch`` (of stored bodies) in pieces of rows with their bodies as the object view shows them:
    decompressed by SYSFLAG (``large_binary`` where any is), at most :data:`PIECE_BYTES` of bodies a piece
    (or one body), however far they decompress. At a body that does not decompress: the rows before it, then
    its typed error."""
    import numpy as np
    import pyarrow as pa

    from ..compression import DEFAULT_MAX_BODY_SIZE, BodyDecompressionError
    from ..errors import DecompressionError
    from ..frames import to_numpy
    from ..walk import arrow as A
    from ..walk import layout as L
    bound = PIECE_BYTES
    stored = batch.column("body")
    flags = to_numpy(batch.column("sysFlag"))
    compressed = np.flatnonzero(flags & L.COMPRESSED).tolist()
    if not compressed:
        yield batch, stored
        return
    n = len(stored)
    offsets = np.frombuffer(stored.buffers()[1], np.int32)[stored.offset:stored.offset + n + 1].astype(np.int64)
    data = memoryview(stored.buffers()[2]) if stored.buffers()[2] is not None else memoryview(b"")
    sizes = np.diff(offsets)

    def piece(first: int, end: int, plain: dict):
        parts, at = [], int(offsets[first])
        for r, value in plain.items():
            parts += [data[at:offsets[r]], value]
            at = int(offsets[r + 1])
        parts.append(data[at:offsets[end]])
        bounds = np.zeros(end - first + 1, np.int64)
        np.cumsum(sizes[first:end], out=bounds[1:])
        return batch.slice(first, end - first), pa.Array.from_buffers(
            pa.large_binary(), end - first, [None, pa.py_buffer(bounds), pa.py_buffer(b"".join(parts))])

    first, plain = 0, {}
    held, done = 0, 0  # bytes of the bodies of rows first..done-1
    for r in compressed:
        flag = int(flags[r])
        held += int(offsets[r] - offsets[done])  # the stored bodies before it
        try:
            value = A.body_decompressor_of((flag & L.COMPRESSION_MASK) >> L.COMPRESSION_SHIFT)(
                data[offsets[r]:offsets[r + 1]], DEFAULT_MAX_BODY_SIZE)
        except BodyDecompressionError as exc:
            if r > first:
                yield piece(first, r, plain)
            raise DecompressionError(path, batch.column("commitLogOffset")[r].as_py() - start, str(exc)) from None
        plain[r] = value
        sizes[r] = len(value)
        held += len(value)
        done = r + 1
        if held >= bound:  # full: made now, before the next body is decompressed
            yield piece(first, done, plain)
            first, plain, held = done, {}, 0
    if first < n:
        yield piece(first, n, plain)


def _walk(log, deep: bool):
    """The walk of a segment's records, of the columns the view needs, bodies as stored."""
    return log.batches(_deep_columns() if deep else COLUMNS, decompress=False, batch_size=BATCH_ROWS)


def _shown_batches(scan, segment) -> Iterator[tuple]:
    """``(batch, bodies)`` of the walk ``scan`` of ``segment``: its batches (in pieces where their bodies
    decompress to more than :data:`PIECE_BYTES`) with their bodies as shown; at a body that does not
    decompress, the rows before it, then its typed error."""
    for batch in scan:
        for part, shown in _shown_pieces(batch, segment.path, segment.start_offset):
            yield part, shown
            part = shown = None  # not held while the next is made


def _deep_columns() -> tuple[str, ...]:
    """The message columns of ``deep``: the keys of ``Message.to_json_dict``, the body moved last (a body
    that does not decompress ends the output, so ``bodyError`` is never written)."""
    from ..export import JSONL_COLUMNS
    return tuple(c for c in JSONL_COLUMNS if c not in ("body", "bodyError")) + ("body",)


def _fields(batch, start: int, deep: bool) -> dict:
    """The fields of the records of ``batch``'s messages, ``fileOffset`` first, as Arrow columns (with
    ``deep``, :data:`_DEEP_OPTIONAL` too, null where a message has none); their bodies are the caller's."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..frames import repeated, scalar
    cols = {"fileOffset": pc.subtract(batch.column("commitLogOffset"), scalar(start)),
            "record": repeated("MESSAGE", batch.num_rows)}
    for name in _deep_columns()[:-1] if deep else TABLE_HEADER[2:]:
        if name == "keys":
            cols[name] = pc.fill_null(pc.binary_join(batch.column("keys"), scalar(" ")), scalar(""))
        elif name == "bodyBytes":  # the stored body's
            cols[name] = pc.binary_length(batch.column("body")).cast(pa.int64())
        else:
            cols[name] = batch.column(name)
    return cols


def _json_batch(batch, *, deep: bool, body: str | None, body_limit: int | None, head: dict, start: int,
                shown) -> tuple:
    """The records of ``batch`` (the walk's columns) as the columns of their JSON objects, in order, and the
    keys to write only where not null."""
    import pyarrow as pa

    from ..frames import repeated
    cols = {name: repeated(value, batch.num_rows) for name, value in head.items()}
    cols.update(_fields(batch, start, deep))
    cols, optional = bodies.json_columns(cols, shown, body, body_limit)
    return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols)), optional


def write_json(path: str, out, *, lines: bool, deep: bool = False, body: str | None = None,
               body_limit: int | None = None, jobs: int | None = None) -> None:
    """The records of the segment at ``path`` (as :func:`records` gives them for JSON) to the text stream
    ``out``: JSON Lines with ``file`` and ``kind`` first (``lines``), or the records of a JSON array (each
    after ``\\n  ``, a comma between)."""
    from ..export import OPTIONAL_JSON_KEYS, JsonArrayStream, write_jsonl
    from .common import byte_stream
    log = _open(path, jobs)
    start = log.segments[0].start_offset
    head = {"file": path, "kind": "commitlog"} if lines else {}
    raw = byte_stream(out)
    sink = raw if lines else JsonArrayStream(raw)
    scan = _walk(log, deep)
    try:
        for batch, shown in _shown_batches(scan, log.segments[0]):
            records, optional = _json_batch(batch, deep=deep, body=body, body_limit=body_limit, head=head,
                                            start=start, shown=shown)
            write_jsonl(records, sink, OPTIONAL_JSON_KEYS | optional)
        for b in scan.blanks:
            sink.write((json.dumps(_blank(b, head), ensure_ascii=False) + "\n").encode("utf-8"))
    finally:
        raw.flush()
    note_end(scan)


def _time_cells(stamps):
    """Table cells of a time column: ISO text for a positive time, the number otherwise (as the records')."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..export import time_text
    from ..frames import scalar
    ms = stamps.cast(pa.int64())
    return pc.if_else(pc.greater(ms, scalar(0)), time_text(stamps), pc.cast(ms, pa.string()))


#: The fields a ``deep`` record has only where the message does (``Message.to_json_dict``), in order.
_DEEP_OPTIONAL = ("priority", "liteTopic")


def _cell_text(column):
    """Table cells of a field's column, as the records' table shows each value: a time as ISO text when
    positive, properties as JSON, a number as decimal text, nothing for a null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..export import json_object
    from ..frames import scalar
    if pa.types.is_timestamp(column.type):
        column = _time_cells(column)
    elif pa.types.is_map(column.type):
        column = pc.cast(json_object(column), pa.string())
    elif pa.types.is_integer(column.type):
        column = pc.cast(column, pa.string())
    return pc.fill_null(column, scalar(""))


def table_blocks(path: str, *, block: int, deep: bool = False, body: str | None = None,
                 body_limit: int | None = None, jobs: int | None = None) -> Iterator[tuple[list[str], list] | dict]:
    """The table of the segment at ``path``: its messages' cells in blocks of at most ``block`` rows, each
    ``(header, one string array per column)``, as the records' table lays them out (a new block where a
    record's fields change: with ``deep``, a message with or without a priority or lite topic); then its
    BLANK record as a dict. At a body that does not decompress, the whole blocks before it, then its typed
    error."""
    import itertools

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..frames import to_numpy
    from .tables import column_blocks
    log = _open(path, jobs)
    segment = log.segments[0]
    limit = bodies.TABLE_LIMIT if body_limit is None else body_limit
    scan = _walk(log, deep)

    def runs() -> Iterator[tuple[list[str], list]]:
        """``(fields, cells)`` of the runs of rows whose records have the same fields."""
        for batch, shown in _shown_batches(scan, segment):
            cells = {name: _cell_text(c) for name, c in _fields(batch, segment.start_offset, deep).items()}
            if body not in (None, "none"):
                cells["body"] = pc.cast(bodies.render_array(shown, body, limit, table=True), pa.string())
            # Which optional fields each row has.
            kinds = np.zeros(batch.num_rows, np.int8)
            if deep:
                for bit, name in enumerate(_DEEP_OPTIONAL):
                    kinds |= to_numpy(batch.column(name).is_valid()).astype(np.int8) << bit
            bounds = [0, *(np.flatnonzero(np.diff(kinds)) + 1).tolist(), batch.num_rows]
            for a, b in zip(bounds, bounds[1:]):
                names = [n for n in cells if n not in _DEEP_OPTIONAL or kinds[a] >> _DEEP_OPTIONAL.index(n) & 1]
                yield names, [cells[n].slice(a, b - a) for n in names]

    for names, run in itertools.groupby(runs(), key=lambda r: r[0]):
        for columns in column_blocks((cells for _, cells in run), block):
            yield names, columns
    for b in scan.blanks:
        yield _blank(b)
    note_end(scan)


def summary(path: str, *, jobs: int | None = None) -> dict:
    """The record count, the records per kind and the ranges of :data:`RANGES` of the segment at ``path``,
    from the walk's columns (no body is read)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    log = _open(path, jobs)
    low: dict[str, int] = {}
    high: dict[str, int] = {}

    def add(name: str, lo: int, hi: int) -> None:
        low[name] = min(low.get(name, lo), lo)
        high[name] = max(high.get(name, hi), hi)

    n = 0
    scan = log.batches(RANGES, decompress=False)
    for batch in scan:
        n += batch.num_rows
        for name in RANGES:
            column = batch.column(name)
            if pa.types.is_timestamp(column.type):
                column = column.cast(pa.int64())
            lo, hi = (v.as_py() for v in pc.min_max(column).values())
            if lo is not None:
                add(name, lo, hi)
    blanks = list(scan.blanks)
    for b in blanks:
        add("commitLogOffset", b.commitlog_offset, b.commitlog_offset)
    note_end(scan)
    kinds = {name: k for name, k in (("BLANK", len(blanks)), ("MESSAGE", n)) if k}
    out: dict = {"records": n + len(blanks)}
    if kinds:
        out["recordKinds"] = kinds
    out["ranges"] = {f: [low[f], high[f]] for f in RANGES if f in low}
    return out
