"""Commit-log messages written out as JSON Lines, CSV or Parquet, and listed as a streamed text table.

Everything here works on the Arrow record batches of the columnar scan
(:meth:`rmqformats.commitlog.CommitLog.batches`), one batch at a time, so
memory stays bounded whatever the size of the store. Text is built per
column, not per message: JSON strings are escaped and bodies base64-encoded
by compiled kernels over the Arrow buffers, and the pieces of each line are
joined by Arrow.

The JSON of a message is exactly what ``json.dumps(message.to_json_dict(),
ensure_ascii=False)`` gives (``rmqformats messages --format jsonl``):
timestamps as epoch milliseconds, the body base64 after decompression, the
properties an object, keys in the column order.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from . import output
from .cells import cells, cut_array, one_line_array, pad, pad_array, widest
from .walk.arrow import COLUMNS
from .jit import jit_options
from .frames import from_numpy, from_strings, scalar, to_numpy
from .message import MAX_DATETIME_MS, MIN_DATETIME_MS, OUT_OF_RANGE_MARK
from .output import OutputExistsError

#: The keys of :meth:`rmqformats.message.Message.to_json_dict`, in order: the JSON Lines columns.
JSONL_COLUMNS = ("commitLogOffset", "storeSize", "bodyCRC", "queueId", "flag", "queueOffset", "sysFlag",
                 "bornTimestamp", "bornHost", "storeTimestamp", "storeHost", "reconsumeTimes",
                 "preparedTransactionOffset", "topic", "properties", "msgId", "body", "bodyError", "priority",
                 "liteTopic")
#: Columns a JSON object has only where they are not null (as ``to_json_dict`` adds ``bodyError``, ``priority``
#: and ``liteTopic`` only then).
OPTIONAL_JSON_KEYS = frozenset(("bodyError", "priority", "liteTopic"))
#: Columns of a Parquet or CSV export by default: all but the raw properties string and the segment name.
TABLE_COLUMNS = tuple(c for c in COLUMNS if c not in ("propertiesString", "segment"))
FORMATS = ("parquet", "jsonl", "csv")
#: Rows of one Parquet row group at most, and its bytes before a flush (batches are gathered up to these).
ROW_GROUP_ROWS = 1 << 17
ROW_GROUP_BYTES = 64 << 20
#: Longest binary value (body) of a Parquet file written with version-1 data pages. Such a page is its
#: levels and values joined into one more buffer, so the encoder holds the longest value twice; a file that
#: receives a longer one is written with version-2 pages (levels apart), which hold it once.
PAGE_V1_MAX_VALUE = 32 << 20
#: Bytes of batches held for all open Parquet files together before the largest is flushed.
MAX_PENDING_BYTES = 128 << 20
#: Parquet files open at once with ``partition_by``.
MAX_OPEN_FILES = 64
#: Codecs of the Parquet files. ``export`` of a 256 MiB ``small`` store (839,815 messages, every column, one
#: job), CPU seconds of the whole command and the folder's size: zstd 6.5-6.7 s, 72 MiB; snappy 5.9-6.0 s,
#: 124 MiB; lz4 5.8 s, 125 MiB; none 4.4-4.5 s, 305 MiB (gzip, left out: 102 s, 73 MiB).
PARQUET_CODECS = ("zstd", "snappy", "lz4", "none")
#: Rows turned into text at a time.
TEXT_ROWS = 8192
#: Bytes of binary values (bodies) turned into text at a time; a longer body is written in pieces.
TEXT_BYTES = 16 << 20
#: Bytes of a long body base64-encoded at a time (a multiple of 3: the pieces' text joins into the whole's).
_B64_PIECE = 3 << 20
#: Longest file or folder name written (most file systems allow 255 bytes).
_MAX_NAME = 255

assert all(c in COLUMNS for c in JSONL_COLUMNS) and list(JSONL_COLUMNS) == [c for c in COLUMNS if c in JSONL_COLUMNS]

_LS = pa.large_string()


@functools.cache
def _empty() -> pa.Scalar:
    """The empty large string (made on first use: a scalar from a Python value makes pyarrow import pandas,
    which importing this module must not)."""
    return scalar("", _LS)


def _lit(text: str) -> pa.Scalar:
    return scalar(text, _LS)


# -- kernels: JSON strings and base64 over Arrow buffers -------------------------------------------------

_JIT = jit_options(__file__, nogil=True)
_HEX = np.frombuffer(b"0123456789abcdef", np.uint8).copy()
_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8).copy()
_B64_PAIRS = np.stack([np.repeat(_B64, 64), np.tile(_B64, 64)], axis=1).ravel().copy()
_NULL = np.frombuffer(b"null", np.uint8).copy()
# Bytes a JSON string spends on each input byte, as json.dumps(ensure_ascii=False) escapes:
# " and \ and the short control escapes take 2, other control characters \u00XX take 6.
_ESCAPE_LEN = np.ones(256, np.int64)
_ESCAPE_LEN[:32] = 6
_SHORT = {ord('"'): ord('"'), ord("\\"): ord("\\"), 8: ord("b"), 9: ord("t"), 10: ord("n"), 12: ord("f"),
          13: ord("r")}
_SHORT_ESCAPE = np.zeros(256, np.uint8)
for _c, _e in _SHORT.items():
    _ESCAPE_LEN[_c] = 2
    _SHORT_ESCAPE[_c] = _e


@njit(**_JIT)
def json_quote(offsets, data, valid, esc_len, short, hexdigits, null):
    """JSON string literals of the strings ``data[offsets[i]:offsets[i+1]]``; ``null`` where not ``valid``.

    Returns the new offsets (int64) and bytes. The strings are valid UTF-8,
    whose bytes over 0x7f pass unchanged, as with ``ensure_ascii=False``.
    """
    n = len(offsets) - 1
    out_off = np.empty(n + 1, np.int64)
    total = 0
    for i in range(n):
        out_off[i] = total
        if not valid[i]:
            total += 4
            continue
        m = 2
        for p in range(offsets[i], offsets[i + 1]):
            m += esc_len[data[p]]
        total += m
    out_off[n] = total
    out = np.empty(total, np.uint8)
    for i in range(n):
        o = out_off[i]
        if not valid[i]:
            for k in range(4):
                out[o + k] = null[k]
            continue
        out[o] = 34
        o += 1
        for p in range(offsets[i], offsets[i + 1]):
            c = data[p]
            e = esc_len[c]
            if e == 1:
                out[o] = c
                o += 1
            elif e == 2:
                out[o] = 92
                out[o + 1] = short[c]
                o += 2
            else:
                out[o] = 92
                out[o + 1] = 117  # u
                out[o + 2] = 48
                out[o + 3] = 48
                out[o + 4] = hexdigits[c >> 4]
                out[o + 5] = hexdigits[c & 15]
                o += 6
        out[o] = 34
    return out_off, out


@njit(**_JIT)
def base64_encode(offsets, data, valid, quote, alphabet, pairs, null):
    """Base64 (standard alphabet, padded) of each value, in double quotes when ``quote``; ``null`` where not ``valid``.

    ``pairs`` holds the two output characters of each 12-bit value, so three
    input bytes take two table reads.
    """
    n = len(offsets) - 1
    q = 2 if quote else 0
    out_off = np.empty(n + 1, np.int64)
    total = 0
    for i in range(n):
        out_off[i] = total
        if not valid[i]:
            total += 4 if quote else 0
        else:
            total += (offsets[i + 1] - offsets[i] + 2) // 3 * 4 + q
    out_off[n] = total
    out = np.empty(total, np.uint8)
    for i in range(n):
        o = out_off[i]
        if not valid[i]:
            if quote:
                for k in range(4):
                    out[o + k] = null[k]
            continue
        if quote:
            out[o] = 34
            o += 1
        p = offsets[i]
        end = offsets[i + 1]
        while p + 3 <= end:
            v = (np.uint32(data[p]) << 16) | (np.uint32(data[p + 1]) << 8) | np.uint32(data[p + 2])
            a = (v >> 12) * 2
            b = (v & 4095) * 2
            out[o] = pairs[a]
            out[o + 1] = pairs[a + 1]
            out[o + 2] = pairs[b]
            out[o + 3] = pairs[b + 1]
            o += 4
            p += 3
        rest = end - p
        if rest > 0:
            v = np.uint32(data[p]) << 16
            if rest == 2:
                v |= np.uint32(data[p + 1]) << 8
            out[o] = alphabet[(v >> 18) & 63]
            out[o + 1] = alphabet[(v >> 12) & 63]
            out[o + 2] = alphabet[(v >> 6) & 63] if rest == 2 else 61
            out[o + 3] = 61
            o += 4
        if quote:
            out[o] = 34
    return out_off, out


@njit(**_JIT)
def map_bytes(offsets, data, lens, table):
    """Each value of ``data[offsets[i]:offsets[i+1]]`` with every byte ``b`` written as the ``lens[b]`` bytes
    at ``table[b]``. Returns the new offsets, the bytes, and per value whether it holds a byte whose
    ``lens`` is 0 (left for the caller: such a value's text here is empty)."""
    n = len(offsets) - 1
    out_off = np.empty(n + 1, np.int64)
    other = np.zeros(n, np.bool_)
    total = 0
    for i in range(n):
        out_off[i] = total
        m = 0
        for p in range(offsets[i], offsets[i + 1]):
            e = lens[data[p]]
            if e == 0:
                other[i] = True
                m = 0
                break
            m += e
        total += m
    out_off[n] = total
    out = np.empty(total, np.uint8)
    for i in range(n):
        if other[i]:
            continue
        o = out_off[i]
        for p in range(offsets[i], offsets[i + 1]):
            c = data[p]
            for k in range(lens[c]):
                out[o + k] = table[c, k]
            o += lens[c]
    return out_off, out, other


def _byte_table(texts: dict[int, bytes]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`map_bytes`' ``lens`` and ``table`` for the bytes ``texts`` names (the others 0)."""
    lens = np.zeros(256, np.int64)
    table = np.zeros((256, 4), np.uint8)
    for b, text in texts.items():
        lens[b] = len(text)
        table[b, :len(text)] = np.frombuffer(text, np.uint8)
    return lens, table


#: Hexadecimal text of each byte; the text of ``rmqformats.cli.present.escape_text`` for each ASCII byte (a
#: value with another byte is escaped by that function).
HEX_BYTES = _byte_table({b: b"%02x" % b for b in range(256)})
_ASCII_SHORT = {9: b"\\t", 10: b"\\n", 13: b"\\r", 92: b"\\\\"}
TEXT_BYTES_ASCII = _byte_table({b: _ASCII_SHORT.get(b, bytes([b]) if 32 <= b < 127 else b"\\x%02x" % b)
                                for b in range(128)})


def mapped_text(arr: pa.Array, tables: tuple[np.ndarray, np.ndarray]) -> tuple[pa.Array, np.ndarray]:
    """:func:`map_bytes` over a binary array (no nulls): ``large_string`` text, and which values it left."""
    offsets, data, _ = _parts(arr)
    out_off, out, other = map_bytes(offsets, data, *tables)
    return _text(len(arr), out_off, out), other


def _parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets, data bytes and validity of a string or binary array (slices included)."""
    n = len(arr)
    bufs = arr.buffers()
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    if n == 0 or bufs[1] is None:
        return np.zeros(n + 1, np.int64), np.empty(0, np.uint8), np.ones(n, np.bool_)
    offsets = np.frombuffer(bufs[1], np.int64 if large else np.int32)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    valid = np.ones(n, np.bool_) if arr.null_count == 0 else to_numpy(arr.is_valid())
    return offsets, data, valid


def _text(n: int, offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(_LS, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def quoted(arr: pa.Array) -> pa.Array:
    """JSON string literals of a string array (``null`` for nulls), as ``large_string``."""
    return _text(len(arr), *json_quote(*_parts(arr), _ESCAPE_LEN, _SHORT_ESCAPE, _HEX, _NULL))


def base64_text(arr: pa.Array, quote: bool = False) -> pa.Array:
    """Base64 of a binary array as ``large_string`` (JSON string literals, nulls ``null``, when ``quote``)."""
    offsets, data, valid = _parts(arr)
    text = _text(len(arr), *base64_encode(offsets, data, valid, quote, _B64, _B64_PAIRS, _NULL))
    if not quote and arr.null_count:
        text = pc.if_else(from_numpy(valid), text, scalar(None, _LS))
    return text


def _join(*parts) -> pa.Array:
    return pc.binary_join_element_wise(*parts, _empty())


def _list_parts(arr: pa.Array) -> tuple[np.ndarray, int, int]:
    """Offsets from 0 of a list or map array (slices included), and the range of its flat values."""
    offsets = to_numpy(arr.offsets).astype(np.int64)
    start, end = int(offsets[0]), int(offsets[-1])
    return offsets - start, start, end


def _null_where_invalid(arr: pa.Array, text: pa.Array, null: str = "null") -> pa.Array:
    if arr.null_count == 0:
        return text
    return pc.if_else(arr.is_valid(), text, _lit(null))


def json_object(arr: pa.Array) -> pa.Array:
    """JSON objects (``{"k": "v", …}``) of a ``map<string, string>`` array, as ``large_string``."""
    offsets, start, end = _list_parts(arr)
    keys = quoted(arr.keys.slice(start, end - start))
    items = quoted(arr.items.slice(start, end - start))
    entries = _join(keys, _lit(": "), items)
    lists = pa.LargeListArray.from_arrays(from_numpy(offsets), entries)
    text = _join(_lit("{"), pc.binary_join(lists, _lit(", ")), _lit("}"))
    return _null_where_invalid(arr, text)


def json_array(arr: pa.Array) -> pa.Array:
    """JSON arrays of strings (``["a", "b"]``) of a ``list<string>`` array, as ``large_string``."""
    offsets, start, end = _list_parts(arr)
    items = quoted(arr.values.slice(start, end - start))
    lists = pa.LargeListArray.from_arrays(from_numpy(offsets), items)
    text = _join(_lit("["), pc.binary_join(lists, _lit(", ")), _lit("]"))
    return _null_where_invalid(arr, text)


def json_values(arr: pa.Array) -> pa.Array:
    """Each value of a message column as JSON text, as ``json.dumps`` writes the value of ``to_json_dict``."""
    t = arr.type
    if pa.types.is_timestamp(t):
        arr, t = pc.cast(arr, pa.int64()), pa.int64()
    if pa.types.is_integer(t):
        return pc.fill_null(pc.cast(arr, _LS), _lit("null"))
    if pa.types.is_boolean(t):
        return pc.fill_null(pc.if_else(arr, _lit("true"), _lit("false")), _lit("null"))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return quoted(arr)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return base64_text(arr, quote=True)
    if pa.types.is_map(t):
        return json_object(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return json_array(arr)
    raise TypeError(f"no JSON text for a column of type {t}")


def jsonl_lines(batch: pa.RecordBatch, optional: frozenset[str] = OPTIONAL_JSON_KEYS, *,
                raw: frozenset[str] = frozenset()) -> pa.Array:
    """One JSON object and a newline per row of ``batch``, keys in column order, as ``large_string``.

    A column named in ``optional`` (but the first) is a key only in the rows where it is not null; one
    named in ``raw`` holds JSON text already (:func:`json_objects`, say), written as it is.
    """
    return _join(*_object_parts(batch, optional, raw), _lit("}\n"))


def json_objects(batch: pa.RecordBatch, optional: frozenset[str] = OPTIONAL_JSON_KEYS, *,
                 raw: frozenset[str] = frozenset()) -> pa.Array:
    """:func:`jsonl_lines` without the newlines: one JSON object per row, to nest in another's JSON."""
    return _join(*_object_parts(batch, optional, raw), _lit("}"))


def _object_parts(batch: pa.RecordBatch, optional: frozenset[str], raw: frozenset[str]) -> list:
    """The text pieces of :func:`jsonl_lines`' objects up to the closing brace, each an array or a scalar."""
    parts: list = []
    for i, name in enumerate(batch.schema.names):
        key = _lit(("{" if i == 0 else ", ") + json.dumps(name, ensure_ascii=False) + ": ")
        column = batch.column(i)
        values = column if name in raw else None
        if name in optional and i > 0:  # (the first key is always written: it opens the object)
            if column.null_count < len(column):
                shown = json_values(column) if values is None else values
                parts.append(pc.if_else(pc.is_null(column), _empty(), _join(key, shown)))
            continue
        parts.append(key)
        parts.append(json_values(column) if values is None else values)
    return parts


def text_bytes(lines: pa.Array) -> memoryview:
    """The bytes of a ``large_string`` array's values laid end to end (no copy)."""
    if len(lines) == 0:
        return memoryview(b"")
    offsets = np.frombuffer(lines.buffers()[1], np.int64)[lines.offset:lines.offset + len(lines) + 1]
    return memoryview(lines.buffers()[2])[int(offsets[0]):int(offsets[-1])]


def jsonl_bytes(batch: pa.RecordBatch, optional: frozenset[str] = OPTIONAL_JSON_KEYS) -> memoryview:
    """The JSON Lines text of ``batch`` as UTF-8 bytes (``optional``: see :func:`jsonl_lines`)."""
    return text_bytes(jsonl_lines(batch, optional))


def text_slices(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """Slices of ``batch`` of at most :data:`TEXT_ROWS` rows and :data:`TEXT_BYTES` bytes of binary values.

    The text of a slice is built whole: bounding its bodies bounds that text
    (base64 adds a third). A row over the bound is a slice of its own.
    """
    n = batch.num_rows
    binary = [batch.column(i) for i, f in enumerate(batch.schema)
              if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
    if not binary or sum(c.nbytes for c in binary) <= TEXT_BYTES:
        for at in range(0, n, TEXT_ROWS):
            yield batch.slice(at, TEXT_ROWS)
        return
    sizes = np.zeros(n, np.int64)
    for c in binary:
        lengths = pc.binary_length(c)
        sizes += to_numpy(pc.fill_null(lengths, scalar(0, lengths.type)))
    ends = np.cumsum(sizes)
    at = 0
    while at < n:
        base = int(ends[at - 1]) if at else 0
        stop = int(np.searchsorted(ends, base + TEXT_BYTES, side="right"))
        stop = min(max(stop, at + 1), at + TEXT_ROWS)
        yield batch.slice(at, stop - at)
        at = stop


def _binary_bytes(batch: pa.RecordBatch) -> int:
    """Bytes of the binary values of ``batch`` (its slice only)."""
    return sum(int(pc.sum(pc.binary_length(c)).as_py() or 0) for c, f in zip(batch.columns, batch.schema)
               if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type))


def _write_long_row(row: pa.RecordBatch, stream, optional: frozenset[str] = OPTIONAL_JSON_KEYS) -> None:
    """The JSON line of one row with large binary values, written with their base64 a piece at a time."""
    for i, name in enumerate(row.schema.names):
        column = row.column(i)
        if name in optional and i > 0 and column.null_count:
            continue
        stream.write((("{" if i == 0 else ", ") + json.dumps(name, ensure_ascii=False) + ": ").encode())
        t = column.type
        if (pa.types.is_binary(t) or pa.types.is_large_binary(t)) and column.null_count == 0:
            value = memoryview(column[0].as_buffer())
            stream.write(b'"')
            for at in range(0, len(value), _B64_PIECE):
                stream.write(base64.b64encode(value[at:at + _B64_PIECE]))
            stream.write(b'"')
        else:
            stream.write(text_bytes(json_values(column)))
    stream.write(b"}\n")


def write_jsonl(batch: pa.RecordBatch, stream, optional: frozenset[str] = OPTIONAL_JSON_KEYS) -> None:
    """Write the JSON Lines of ``batch`` to a binary ``stream``, a slice of rows at a time (bounding the text held);
    ``optional``: see :func:`jsonl_lines`."""
    for piece in text_slices(batch):
        if piece.num_rows == 1 and _binary_bytes(piece) > TEXT_BYTES:
            _write_long_row(piece, stream, optional)
        else:
            stream.write(jsonl_bytes(piece, optional))


class JsonArrayStream:
    """A byte stream that takes JSON Lines and writes them as the records of a JSON array: each record after
    ``\\n  ``, a comma between (``[`` and ``]`` are the caller's)."""

    def __init__(self, out):
        self.out = out
        self.before = b"\n  "  # written before the next record
        self.open = False  # within a record

    def write(self, data) -> None:
        data = bytes(data)
        if not data:
            return
        if not self.open:
            self.out.write(self.before)
            self.before = b",\n  "
            self.open = True
        # A JSON string holds no raw line end: each one ends a record.
        *done, rest = data.split(b"\n")
        if done:
            self.out.write(self.before.join(done))
            self.open = False
            if rest:
                self.out.write(self.before)
                self.open = True
        self.out.write(rest)

    def flush(self) -> None:
        self.out.flush()


# -- CSV -----------------------------------------------------------------------------------------------

def csv_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with the columns CSV cannot hold as text: properties as a JSON object, keys joined by
    spaces, binary (body) as base64 (``large_string``: base64 grows the bytes by a third)."""
    arrays = [_csv_column(arr) for arr in batch.columns]
    return pa.RecordBatch.from_arrays(arrays, schema=csv_schema(batch.schema))


def _csv_column(arr: pa.Array) -> pa.Array:
    t = arr.type
    if pa.types.is_map(t):
        return json_object(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pc.cast(_joined(arr), _LS)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return base64_text(arr)
    if pa.types.is_timestamp(t):  # as pyarrow's CSV writer shows them, damaged values raw and flagged
        return pc.cast(time_text(arr, "%Y-%m-%d %H:%M:%SZ"), _LS)
    return arr


def _joined(arr: pa.Array) -> pa.Array:
    """Each list of strings joined with spaces."""
    return pc.binary_join(arr, scalar(" ", arr.type.value_type))


def _write_long_csv_row(row: pa.RecordBatch, stream) -> None:
    """The CSV line of one row with large binary values, written with their base64 a piece at a time.

    The row is rendered by pyarrow's CSV writer with a placeholder for each
    such value (so every other cell is exactly what the writer makes of it);
    base64 needs no quoting, so each placeholder's quoted text is replaced by
    the value's base64 between quotes, written in pieces.
    """
    import io

    import pyarrow.csv as pcsv
    arrays, values = [], {}
    for i, (column, field) in enumerate(zip(row.columns, row.schema)):
        t = field.type
        if (pa.types.is_binary(t) or pa.types.is_large_binary(t)) and column.null_count == 0:
            mark = f"rmqformats-long-value-{i}"
            values[mark] = memoryview(column[0].as_buffer())
            arrays.append(from_strings([mark]).cast(_LS))
        else:
            arrays.append(_csv_column(column))
    text = io.BytesIO()
    pcsv.write_csv(pa.RecordBatch.from_arrays(arrays, schema=csv_schema(row.schema)), text,
                   pcsv.WriteOptions(include_header=False))
    line = text.getvalue()
    for mark, value in values.items():
        before, line = line.split(f'"{mark}"'.encode(), 1)
        stream.write(before + b'"')
        for at in range(0, len(value), _B64_PIECE):
            stream.write(base64.b64encode(value[at:at + _B64_PIECE]))
        stream.write(b'"')
    stream.write(line)


def csv_schema(schema: pa.Schema) -> pa.Schema:
    """The schema :func:`csv_batch` gives for batches of ``schema``."""
    def text(t: pa.DataType) -> bool:
        return (pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_binary(t)
                or pa.types.is_large_binary(t) or pa.types.is_timestamp(t))
    return pa.schema([pa.field(f.name, _LS) if text(f.type) else f for f in schema])


# -- output targets (the rules of writing are rmqformats.output's) -----------------------------------

def _is_export_folder(path: str) -> bool:
    """Whether a folder holds only what an export writes: ``*.parquet`` files, ``topic=*`` folders of them
    and the ``_SUCCESS`` marker."""
    for entry in os.scandir(path):
        if entry.is_file(follow_symlinks=False):
            if not (entry.name.endswith(".parquet") or entry.name.endswith(".parquet.tmp")
                    or entry.name == output.SUCCESS_MARKER):
                return False
        elif entry.is_dir(follow_symlinks=False) and entry.name.startswith("topic="):
            if not _is_export_folder(entry.path) or any(e.is_dir() for e in os.scandir(entry.path)):
                return False
        else:
            return False
    return True


def prepare_output(out: str, fmt: str, force: bool, reads: Iterable[str] = ()) -> None:
    """Check the output before reading: refuse an existing non-empty one without ``force``, a folder of
    other files, a target inside a store in ``reads`` (see :func:`rmqformats.output.check_target`)."""
    if out == "-":
        if fmt == "parquet":
            raise OutputExistsError("-", "Parquet is written to a folder, not to stdout")
        return
    output.check_target(out, folder=fmt == "parquet", force=force, reads=reads, replaceable=_is_export_folder)


#: Message columns whose values repeat from message to message (a few topics, tags, hosts, queues, sizes and
#: flags): the Parquet files hold them dictionary-encoded. The other columns (offsets, times, ids, keys,
#: properties, bodies) are nearly all distinct: the writer would build a dictionary for each until it gave it
#: up, which took about a third of its time on a store of small messages, for larger files.
DICTIONARY_COLUMNS = frozenset(("topic", "tags", "bornHost", "storeHost", "segment", "queueId", "flag", "sysFlag",
                                "reconsumeTimes", "storeSize", "liteTopic", "priority", "bodyError",
                                "preparedTransactionOffset"))


class _ParquetFile:
    """One Parquet file written batch by batch; batches are gathered into row groups of a useful size.

    The file has version-1 data pages (the most widely read) unless a body
    longer than :data:`PAGE_V1_MAX_VALUE` is written to it before its first
    row group; :meth:`takes` tells the sink when a version-1 file must be
    ended for such a body (it continues in a new file).
    """

    def __init__(self, path: str, schema: pa.Schema, compression: str):
        self.path = path
        self.schema = schema
        self.compression = compression
        self.writer = None
        self.page_version = "1.0"
        self.pending: list[pa.RecordBatch] = []
        self.rows = 0
        self.bytes = 0
        self.written = 0
        self._binary = [i for i, f in enumerate(schema) if pa.types.is_binary(f.type)]

    def _longest(self, batch: pa.RecordBatch) -> int:
        longest = 0
        for i in self._binary:
            n = pc.max(pc.binary_length(batch.column(i))).as_py()
            longest = max(longest, n or 0)
        return longest

    def takes(self, batch: pa.RecordBatch) -> bool:
        """Whether ``batch`` can go into this file: not a body too long for version-1 pages once they are
        chosen (a file's page version is fixed when its first row group is written)."""
        if self.page_version == "2.0" or not self._binary:
            return True
        if self._longest(batch) <= PAGE_V1_MAX_VALUE:
            return True
        if self.writer is None:
            self.page_version = "2.0"
            return True
        return False

    def write(self, batch: pa.RecordBatch) -> int:
        """Add ``batch`` (one :meth:`takes`); returns the change of the bytes held (for the caller's bound)."""
        before = self.bytes
        self.pending.append(batch)
        self.rows += batch.num_rows
        self.bytes += batch.nbytes
        self.written += batch.num_rows
        if self.rows >= ROW_GROUP_ROWS or self.bytes >= ROW_GROUP_BYTES:
            self.flush()
        return self.bytes - before

    def flush(self) -> None:
        if not self.pending:
            return
        import pyarrow.parquet as pq
        with output.write_errors(self.path):
            if self.writer is None:
                # Binary columns (bodies) get no min/max statistics: they would copy each value (a body
                # can be hundreds of MiB) and do not help a reader of bodies.
                other = [f.name for f in self.schema if not pa.types.is_binary(f.type)]
                repeating = [f.name for f in self.schema if f.name in DICTIONARY_COLUMNS]
                self.writer = pq.ParquetWriter(self.path, self.schema, compression=self.compression,
                                               use_dictionary=repeating, write_statistics=other,
                                               data_page_version=self.page_version)
            table = pa.Table.from_batches(self.pending, schema=self.schema)
            self.pending, self.rows, self.bytes = [], 0, 0
            self.writer.write_table(table, row_group_size=max(table.num_rows, 1))

    def close(self) -> None:
        self.flush()
        if self.writer is not None:
            with output.write_errors(self.path):
                self.writer.close()

    def abort(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError:
                pass
        if os.path.exists(self.path):
            os.remove(self.path)


def topic_folder(topic: str) -> str:
    """The Hive-style folder name of a topic: ``topic=`` and the topic URL-escaped (as pyarrow reads it)."""
    name = "topic=" + urllib.parse.quote(topic, safe="")
    if len(name.encode()) > _MAX_NAME:
        raise ValueError(f"topic {topic[:40]!r}… is too long for a folder name ({len(name.encode())} bytes escaped)")
    return name


class ParquetSink:
    """Parquet files in a folder: one per commit-log segment, or per topic folder and segment.

    Batches must come in commit-log order, each from one segment (as the
    columnar scan gives them), with a ``segment`` column; it is not written
    unless ``keep_segment``. With ``partition_by="topic"`` the rows go to
    ``topic=<escaped topic>/<segment>.parquet`` without the topic column
    (Hive-style, read back by ``pyarrow.dataset``). At most ``max_open``
    files are open; one closed early for room is continued in
    ``<segment>-1.parquet`` and so on. The sink writes straight into
    ``folder``: :func:`export_batches` gives it a temporary folder that is
    renamed onto the target, with ``_SUCCESS``, only when complete.
    """

    def __init__(self, folder: str, schema: pa.Schema, *, partition_by: str | None = None,
                 keep_segment: bool = False, compression: str = "zstd", max_open: int = MAX_OPEN_FILES):
        if partition_by not in (None, "topic"):
            raise ValueError(f"partition_by must be None or 'topic', not {partition_by!r}")
        self.folder = folder
        self.partition_by = partition_by
        self.compression = compression
        self.max_open = max(1, max_open)
        drop = set() if keep_segment else {"segment"}
        if partition_by:
            drop.add(partition_by)
        self._keep = [i for i, name in enumerate(schema.names) if name not in drop]
        self.schema = pa.schema([schema.field(i) for i in self._keep])
        self._segment: str | None = None
        self._open: OrderedDict[str, _ParquetFile] = OrderedDict()
        self._parts: dict[str, int] = {}
        self._pending = 0
        #: Paths of the finished files, and the rows written.
        self.files: list[str] = []
        self.rows = 0
        with output.write_errors(folder):
            os.makedirs(folder, exist_ok=True)

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        segments = batch.column(batch.schema.get_field_index("segment"))
        first, last = segments[0].as_py(), segments[-1].as_py()
        if first != last:  # not from the columnar scan: split at segment changes
            for part in _runs(batch, segments):
                self.write(part)
            return
        if first != self._segment:
            self.close_all()
            self._segment = first
            self._parts.clear()
        data = batch.select(self._keep)
        if self.partition_by is None:
            self._add("", data)
            return
        topics = batch.column(batch.schema.get_field_index(self.partition_by))
        codes = pc.dictionary_encode(topics)
        indices = to_numpy(codes.indices)
        values = codes.dictionary.to_pylist()
        if len(values) == 1:
            self._add(values[0], data)
            return
        order = np.argsort(indices, kind="stable")
        counts = np.bincount(indices, minlength=len(values))
        at = 0
        for code, count in enumerate(counts.tolist()):
            if count:
                # A copy of each topic's rows: a slice would keep the whole batch alive while it waits.
                self._add(values[code], data.take(pa.array(order[at:at + count])))
                at += count

    def _add(self, key: str, data: pa.RecordBatch) -> None:
        f = self._open.get(key)
        if f is None:
            if len(self._open) >= self.max_open:
                _, oldest = self._open.popitem(last=False)
                self._finish(oldest)
            f = self._open[key] = self._new_file(key)
        else:
            self._open.move_to_end(key)
        if not f.takes(data):  # a body too long for this file's version-1 pages: continued in a new file
            self._finish(self._open.pop(key))
            f = self._open[key] = self._new_file(key)
            f.takes(data)
        f.write(data)
        self._pending = sum(x.bytes for x in self._open.values())
        if self._pending > MAX_PENDING_BYTES:
            biggest = max(self._open.values(), key=lambda x: x.bytes)
            biggest.flush()
            self._pending = sum(x.bytes for x in self._open.values())

    def _new_file(self, key: str) -> _ParquetFile:
        base = self._segment
        folder = self.folder
        if self.partition_by is not None:
            folder = os.path.join(self.folder, topic_folder(key))
            with output.write_errors(folder):
                os.makedirs(folder, exist_ok=True)
        n = self._parts.get(key, 0)
        self._parts[key] = n + 1
        name = f"{base}.parquet" if n == 0 else f"{base}-{n}.parquet"
        return _ParquetFile(os.path.join(folder, name), self.schema, self.compression)

    def _finish(self, f: _ParquetFile) -> None:
        f.close()
        if f.written:
            self.files.append(f.path)
            self.rows += f.written

    def close_all(self) -> None:
        """Finish the open files (at a segment's end)."""
        while self._open:
            _, f = self._open.popitem(last=False)
            self._finish(f)
        self._pending = 0

    def close(self) -> None:
        self.close_all()

    def abort(self) -> None:
        """Remove the unfinished files (after an error)."""
        while self._open:
            _, f = self._open.popitem(last=False)
            f.abort()


def _runs(batch: pa.RecordBatch, values: pa.Array) -> Iterator[pa.RecordBatch]:
    """Slices of ``batch`` over which ``values`` stays the same."""
    codes = to_numpy(pc.dictionary_encode(values).indices)
    cuts = [0, *(np.flatnonzero(np.diff(codes)) + 1).tolist(), len(codes)]
    for a, b in zip(cuts, cuts[1:]):
        yield batch.slice(a, b - a)


class TextSink:
    """JSON Lines or CSV into a binary stream, or into a file through :class:`rmqformats.output.AtomicFile`
    (a unique temporary, renamed onto ``out`` when complete; ``force`` and ``reads`` as there)."""

    def __init__(self, out, fmt: str, schema: pa.Schema, *, force: bool = False, reads: Iterable[str] = ()):
        self.fmt = fmt
        self.rows = 0
        self.files: list[str] = []
        self.path: str | None = None
        self._file: output.AtomicFile | None = None
        if isinstance(out, (str, os.PathLike)):
            self.path = os.fspath(out)
            self._file = output.AtomicFile(self.path, force=force, reads=reads)
            self._stream = self._file.stream
        else:
            self._stream = out
        self._csv = None
        if fmt == "csv":
            import pyarrow.csv as pcsv
            with self._errors():
                self._csv = pcsv.CSVWriter(self._stream, csv_schema(schema))

    def _errors(self):
        """Write errors of a file named as such; those of a stream (a broken pipe) as they are."""
        return output.write_errors(self.path) if self.path is not None else nullcontext()

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        with self._errors():
            if self._csv is not None:
                for piece in text_slices(batch):
                    if piece.num_rows == 1 and _binary_bytes(piece) > TEXT_BYTES:
                        _write_long_csv_row(piece, self._stream)
                    else:
                        self._csv.write_batch(csv_batch(piece))
            else:
                write_jsonl(batch, self._stream)
        self.rows += batch.num_rows

    def close(self) -> None:
        with self._errors():
            if self._csv is not None:
                self._csv.close()
            self._stream.flush()
        if self._file is not None:
            self._file.commit()
            self.files.append(self.path)

    def abort(self) -> None:
        if self._file is not None:
            self._file.abort()


def export_columns(fmt: str, columns: Iterable[str] | None) -> tuple[str, ...]:
    """The columns an export writes: ``columns`` in schema order, or the format's default."""
    if columns is None:
        return JSONL_COLUMNS if fmt == "jsonl" else TABLE_COLUMNS
    from .walk.arrow import resolve_columns
    return resolve_columns(columns)


def export_batches(batches: Iterable[pa.RecordBatch], fmt: str, out, schema: pa.Schema, *,
                   partition_by: str | None = None, keep_segment: bool = True, max_open: int = MAX_OPEN_FILES,
                   force: bool = False, reads: Iterable[str] = (), compression: str = "zstd"):
    """Write ``batches`` (of ``schema``) to ``out`` in ``fmt``; returns the sink (``.rows``, ``.files``).

    ``out`` is a folder for Parquet (whose batches need the ``segment``
    column; it is written only if ``keep_segment``), a path or a binary
    stream for JSON Lines and CSV. A path is written as
    :mod:`rmqformats.output` writes: locked against a second writer, under a
    temporary name renamed onto ``out`` when complete (a folder then holds
    ``_SUCCESS``), never into a store in ``reads``; an existing non-empty
    target is replaced only with ``force``. On any error or interrupt nothing
    is renamed and the temporaries are removed. For Parquet, ``batches`` with a
    ``write_parquet(sink)`` method (a walk on several cores,
    :class:`rmqformats.walk.parallel.ParallelScan`) writes the segments'
    files itself, in its worker processes. ``compression`` is the Parquet
    files' codec (one of :data:`PARQUET_CODECS`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; the formats are {', '.join(FORMATS)}")
    if compression not in PARQUET_CODECS:
        raise ValueError(f"unknown Parquet compression {compression!r}; the codecs are {', '.join(PARQUET_CODECS)}")
    if fmt == "parquet":
        with output.AtomicFolder(out, force=force, reads=reads, replaceable=_is_export_folder) as folder:
            sink = ParquetSink(folder.path, schema, partition_by=partition_by, keep_segment=keep_segment,
                               max_open=max_open, compression=compression)
            write = getattr(batches, "write_parquet", None)  # a walk that writes the segments' files itself
            if write is not None:
                _drain(write, sink)
            else:
                _drain(batches, sink)
        sink.files = [folder.final(f) for f in sink.files]
        sink.folder = folder.target
        return sink
    sink = TextSink(out, fmt, schema, force=force, reads=reads)
    _drain(batches, sink)
    return sink


def _drain(batches: Iterable[pa.RecordBatch] | Callable, sink) -> None:
    """Write ``batches`` into ``sink`` (or let ``batches(sink)`` write them) and close it; abort it on error."""
    try:
        if callable(batches):
            batches(sink)
        else:
            for batch in batches:
                sink.write(batch)
                del batch  # not held while the next one is decoded: a batch can hold hundreds of MiB of bodies
        sink.close()
    except BaseException:
        sink.abort()
        raise


# -- the streamed text table --------------------------------------------------------------------------

def short_text(arr: pa.Array, width: int) -> pa.Array:
    """Strings wider than ``width`` display cells cut in the middle with ``…`` (see :mod:`rmqformats.cells`)."""
    return cut_array(arr, width)


class TableStream:
    """A text table written block by block, never holding more than one block of rows.

    The column widths are fixed from the header and the first ``block``
    rows (at least ``min_widths``); a later text value wider than its column
    is cut in the middle with ``…`` when its column is in ``cut``, other
    values (numbers, ids) overflow their column rather than lose characters.
    While the rows fit in the first block, the table is the same as one
    sized from all rows.

    ``layout``, given the header, the widths and which columns may be cut,
    returns the ``(column, width)`` pairs to show (to fit a terminal); a
    shown column in ``cut`` is then cut to its width.
    """

    def __init__(self, header: list[str], out, *, block: int = 1000, min_widths: dict[int, int] | None = None,
                 cut: Iterable[int] = (), indent: str = "",
                 layout: Callable[[list[str], list[int], list[bool]], list[tuple[int, int]]] | None = None):
        self.layout = layout
        self.shown: list[int] | None = None
        self.header = header
        self.out = out
        self.block = block
        self.min_widths = min_widths or {}
        self.cut = set(cut)
        self.indent = indent
        self.widths: list[int] | None = None
        self._first: list[list[pa.Array]] = []
        self._first_rows = 0
        self.rows = 0

    def write(self, columns: list[pa.Array]) -> None:
        """Add rows given as one string array per column (a control character shown as its escape,
        :func:`rmqformats.cells.one_line`)."""
        columns = [one_line_array(c) for c in columns]
        n = len(columns[0]) if columns else 0
        if n == 0:
            return
        self.rows += n
        if self.widths is None:
            self._first.append(columns)
            self._first_rows += n
            if self._first_rows >= self.block:
                self._fix_widths()
            return
        self._emit(columns)

    def close(self) -> None:
        if self.widths is None:
            self._fix_widths()
        self.out.flush()

    def _fix_widths(self) -> None:
        widths = [max(cells(h), self.min_widths.get(i, 0)) for i, h in enumerate(self.header)]
        for cols in self._first:
            for i, col in enumerate(cols):
                widths[i] = max(widths[i], widest(col))
        if self.layout is not None:
            chosen = self.layout(self.header, widths, [i in self.cut for i in range(len(widths))])
            self.shown = [i for i, _ in chosen]
            for i, w in chosen:
                widths[i] = w
        self.widths = widths
        shown = self.shown if self.shown is not None else range(len(widths))
        self.out.write(self.indent + "  ".join(pad(self.header[i], widths[i]) for i in shown).rstrip() + "\n")
        first, self._first = self._first, []
        for cols in first:
            self._emit(cols)

    def _emit(self, columns: list[pa.Array]) -> None:
        parts: list = [scalar(self.indent)] if self.indent else []
        widths = self.widths
        if self.shown is not None:
            columns = [columns[i] for i in self.shown]
            widths = [widths[i] for i in self.shown]
            cut = {n for n, i in enumerate(self.shown) if i in self.cut}
        else:
            cut = self.cut
        last = len(columns) - 1
        for i, (col, w) in enumerate(zip(columns, widths)):
            col = pc.fill_null(col, scalar("", col.type))
            if i in cut:
                col = short_text(col, w)
            if i < last:
                col = pad_array(col, w)
            parts += [col, scalar("  ")] if i < last else [col]
        lines = pc.binary_join_element_wise(*parts, scalar(""))
        lines = pc.utf8_rtrim(lines, characters=" ")
        self.out.write("\n".join(lines.to_pylist()) + "\n")
        self.out.flush()


#: The formats :func:`time_text` writes with :func:`iso_millis` (by the byte between date and time): what
#: ``strftime`` makes of them for milliseconds in UTC.
_ISO_SEPARATORS = {"%Y-%m-%dT%H:%M:%SZ": ord("T"), "%Y-%m-%d %H:%M:%SZ": ord(" ")}


@njit(**_JIT)
def iso_millis(ms, sep):
    """``YYYY-MM-DD<sep>HH:MM:SS.mmmZ`` of each epoch millisecond in the years 1 to 9999, as offsets and data
    of a string array (the proleptic Gregorian calendar, as ``strftime`` has it)."""
    n = ms.shape[0]
    data = np.empty(n * 24, np.uint8)
    offs = np.empty(n + 1, np.int32)
    offs[0] = 0
    for i in range(n):
        v = ms[i]
        days = v // 86400000
        rem = v - days * 86400000
        # The civil date of a day number (days since 1970-01-01), in eras of 400 years from March 1.
        z = days + 719468
        era = z // 146097
        doe = z - era * 146097
        yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
        doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
        mp = (5 * doy + 2) // 153
        day = doy - (153 * mp + 2) // 5 + 1
        month = mp + 3 if mp < 10 else mp - 9
        year = yoe + era * 400 + (1 if month <= 2 else 0)
        o = i * 24
        for k, (value, width) in enumerate(((year, 4), (month, 2), (day, 2), (rem // 3600000, 2),
                                            (rem // 60000 % 60, 2), (rem // 1000 % 60, 2), (rem % 1000, 3))):
            for j in range(width - 1, -1, -1):
                data[o + j] = 48 + value % 10
                value //= 10
            o += width
            data[o] = (45, 45, sep, 58, 58, 46, 90)[k]  # - - sep : : . Z
            o += 1
        offs[i + 1] = o
    return offs, data


def time_text(stamps: pa.Array, format: str = "%Y-%m-%dT%H:%M:%SZ") -> pa.Array:
    """ISO 8601 text of a ``timestamp[ms]`` column as :func:`rmqformats.message.format_millis` writes it.

    A value outside the years 1 to 9999 (a damaged field) is the raw number,
    flagged, rather than the text strftime would make of it.
    """
    if isinstance(stamps, pa.ChunkedArray):
        return pa.chunked_array([time_text(c, format) for c in stamps.chunks], pa.string())
    ms = pc.cast(stamps, pa.int64())
    bad = pc.or_(pc.less(ms, scalar(MIN_DATETIME_MS)), pc.greater(ms, scalar(MAX_DATETIME_MS)))
    kind = stamps.type
    sep = _ISO_SEPARATORS.get(format) if pa.types.is_timestamp(kind) and kind.unit == "ms" and kind.tz == "UTC" \
        else None

    def text(values: pa.Array, millis: pa.Array) -> pa.Array:
        """The text of ``values``, whose epoch milliseconds are ``millis`` (cast once, above)."""
        if sep is None:
            return pc.strftime(values, format=format)
        nulls = values.null_count
        offs, data = iso_millis(to_numpy(pc.fill_null(millis, scalar(0)) if nulls else millis), sep)
        out = pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offs), pa.py_buffer(data)])
        return pc.if_else(pc.is_valid(values), out, scalar(None, pa.string())) if nulls else out
    if not pc.any(bad).as_py():
        return text(stamps, ms)
    safe_ms = pc.if_else(bad, scalar(0), ms)
    raw = pc.binary_join_element_wise(pc.cast(ms, pa.string()), scalar(OUT_OF_RANGE_MARK), scalar(""))
    return pc.if_else(bad, raw, text(pc.cast(safe_ms, stamps.type), safe_ms))


def message_table_columns(batch: pa.RecordBatch, topic_width: int = 48) -> list[pa.Array]:
    """The ``rmqformats messages`` table cells of a batch with the columns of :data:`MESSAGE_TABLE_SOURCE`
    (``body`` not decompressed): offset, topic, queue, queueOffset, storeTime, tags, keys, msgId, bodyBytes."""
    col = batch.column
    return [
        pc.cast(col("commitLogOffset"), pa.string()),
        short_text(col("topic"), topic_width),
        pc.cast(col("queueId"), pa.string()),
        pc.cast(col("queueOffset"), pa.string()),
        *stored_message_cells(batch),
        pc.cast(pc.binary_length(col("body")), pa.string()),
    ]


def stored_message_cells(batch: pa.RecordBatch) -> list[pa.Array]:
    """The message table's ``storeTimestamp``, ``tags``, ``keys`` and ``msgId`` cells of a batch with those
    columns (the ``queue --resolve`` table shows the same)."""
    col = batch.column
    return [
        time_text(col("storeTimestamp")),
        pc.fill_null(col("tags"), scalar("", col("tags").type)),
        pc.fill_null(_joined(col("keys")), scalar("", col("keys").type.value_type)),
        col("msgId"),
    ]


#: Columns a batch needs for :func:`message_table_columns`.
MESSAGE_TABLE_SOURCE = ("commitLogOffset", "topic", "queueId", "queueOffset", "storeTimestamp", "tags", "keys",
                        "msgId", "body")
