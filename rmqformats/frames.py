"""Frames for every reader: the check the ``to_pandas()`` methods make first (pandas is the ``[pandas]`` extra,
not a core dependency), Arrow arrays on numpy memory, and a key's rows in a map column."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

#: What to install for ``to_pandas()``.
PANDAS_HINT = "pip install 'rmqformats[pandas]'"


def require_pandas() -> None:
    """Raise ``ModuleNotFoundError`` naming the extra to install when pandas is missing."""
    try:
        import pandas  # noqa: F401
    except ImportError as exc:
        raise ModuleNotFoundError(f"to_pandas() needs pandas, which rmqformats installs with its "
                                  f"[pandas] extra: {PANDAS_HINT}", name="pandas") from exc



def from_numpy(values: np.ndarray, type: pa.DataType | None = None) -> pa.Array:
    """An Arrow array of a fixed-width type on a contiguous numpy array's memory (no copy).

    ``pa.array`` would do the same, but its first call on a numpy array
    imports pandas (to look for pandas types): a quarter of a second and
    tens of MiB in every fresh worker, for nothing. ``type`` must have the
    numpy dtype's width (``timestamp[ms]`` on int64, for example). Booleans
    are packed into bits (a copy).
    """
    if values.dtype == np.bool_:
        return pa.Array.from_buffers(pa.bool_(), len(values),
                                     [None, pa.py_buffer(np.packbits(values, bitorder="little"))])
    values = np.ascontiguousarray(values)
    if type is None:
        type = pa.from_numpy_dtype(values.dtype)
    if type.bit_width != values.dtype.itemsize * 8:
        values = values.astype(type.to_pandas_dtype() if not pa.types.is_timestamp(type) else np.int64)
    return pa.Array.from_buffers(type, len(values), [None, pa.py_buffer(values)])


def to_numpy(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean Arrow array's values as numpy (a view where they are not bits): what
    ``array.to_numpy(zero_copy_only=False)`` gives, without the import of pandas its first call makes (a
    quarter of a second and tens of MiB in every process). Arrays with nulls, and other types, are
    handed to ``to_numpy``."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    kind = array.type
    if array.null_count or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                                or pa.types.is_boolean(kind)):
        return array.to_numpy(zero_copy_only=False)
    if not pa.types.is_boolean(kind):
        return buffer_values(array, np.dtype(kind.to_pandas_dtype()))
    data = array.buffers()[1]
    n, at = len(array), array.offset
    if data is None or n == 0:
        return np.zeros(0, np.bool_)
    bits = np.frombuffer(data, np.uint8)[at // 8:(at + n + 7) // 8 + 1]
    return np.unpackbits(bits, bitorder="little")[at % 8:at % 8 + n].view(np.bool_)


def buffer_values(array: pa.Array | pa.ChunkedArray, dtype: np.dtype) -> np.ndarray:
    """A view of a fixed-width array's values buffer as ``dtype`` (of the type's width), the slots of null
    values as stored."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    data = array.buffers()[1]
    if data is None or len(array) == 0:
        return np.zeros(0, dtype)
    return np.frombuffer(data, dtype)[array.offset:array.offset + len(array)]


def from_strings(values: Sequence[str | None]) -> pa.Array:
    """A string array of Python strings (``None``: null), built on its buffers: ``pa.array(values,
    pa.string())`` without the import of pandas that ``pa.array``'s first call makes."""
    data = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(len(data) + 1, np.int32)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    valid = None
    if any(v is None for v in values):
        valid = pa.py_buffer(np.packbits(np.array([v is not None for v in values], np.bool_), bitorder="little"))
    return pa.Array.from_buffers(pa.string(), len(data), [valid, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


def repeated(text: str, n: int) -> pa.Array:
    """A string array of ``text`` ``n`` times, built from buffers (``OverflowError`` past 2 GiB of text)."""
    data = text.encode("utf-8")
    offsets = np.arange(n + 1, dtype=np.int64) * len(data)
    if offsets[-1] >= 1 << 31:
        raise OverflowError(f"{n} times {len(data)} bytes do not fit a string array")
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                  pa.py_buffer(data * n)])


def present_rows(array: pa.Array | pa.ChunkedArray, rows: np.ndarray | None = None) -> dict[int, str]:
    """The rows of a string array that hold a value (among ``rows``, ascending row numbers, where given),
    with that value: :func:`map_key_rows` for a column of one property's values."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count == len(array):
        return {}
    at = np.flatnonzero(to_numpy(array.is_valid()))
    if rows is not None:
        at = at[np.isin(at, rows, assume_unique=True)]
    return dict(zip(at.tolist(), array.take(from_numpy(at)).to_pylist())) if len(at) else {}


def map_key_rows(array: pa.MapArray, key: str, rows: np.ndarray | None = None) -> dict[int, str]:
    """The rows of a ``map<string, string>`` array whose map holds ``key`` (among ``rows``, ascending row
    numbers, where given), with its first value there: what ``pyarrow.compute.map_lookup(array, key,
    "first")`` gives for them (the other rows would be null).

    Keys are compared by length first and byte for byte only where the length is ``key``'s: for a name
    few keys share a length with (``INNER_MULTI_DISPATCH``) it takes less than half of ``map_lookup``'s time.
    """
    entries = array.values  # the pairs of every row of the array it was sliced from: the offsets index them
    keys, items = entries.field(0), entries.field(1)
    if entries.offset or keys.offset or len(keys) != len(entries):  # not as the walk builds maps
        import pyarrow.compute as pc
        values = pc.map_lookup(array, scalar(key), "first").to_pylist()
        wanted = range(len(values)) if rows is None else rows.tolist()
        return {r: values[r] for r in wanted if values[r] is not None}
    ends = buffer_values(array.offsets, np.int32).astype(np.int64)
    if rows is None:
        pairs = np.arange(ends[0], ends[-1])
    else:  # the pairs of those rows
        counts = ends[rows + 1] - ends[rows]
        first = np.repeat(ends[rows] - np.r_[0, np.cumsum(counts)[:-1]], counts)
        pairs = first + np.arange(int(counts.sum()))
    if not len(pairs):
        return {}
    target = np.frombuffer(key.encode("utf-8"), np.uint8)
    starts = np.frombuffer(keys.buffers()[1], np.int32)[:len(keys) + 1].astype(np.int64)
    hits = pairs[starts[pairs + 1] - starts[pairs] == len(target)]
    if len(hits) and len(target):
        data = np.frombuffer(keys.buffers()[2], np.uint8)
        hits = hits[(data[starts[hits][:, None] + np.arange(len(target))] == target).all(axis=1)]
    if not len(hits):
        return {}
    at_row = np.searchsorted(ends, hits, side="right") - 1
    keep = np.r_[True, at_row[1:] != at_row[:-1]]  # the first pair of a row holding the key
    if array.null_count:  # a null map may still cover pairs
        keep &= to_numpy(array.is_valid())[at_row]
    return dict(zip(at_row[keep].tolist(), items.take(from_numpy(hits[keep])).to_pylist()))


def rows_in_millis(table: pa.Table, max_chunksize: int = 1000) -> tuple[Iterator[dict], set[str]]:
    """The rows of ``table`` as dicts, a batch at a time, with times as epoch milliseconds (exactly); and
    the names of the time columns. Arrow's own conversion of zoned times would load pandas."""
    times = {f.name for f in table.schema if pa.types.is_timestamp(f.type)}
    if times:
        table = table.cast(pa.schema([pa.field(f.name, pa.int64()) if f.name in times else f for f in table.schema]))
    return (row for part in table.to_batches(max_chunksize=max_chunksize) for row in part.to_pylist()), times


def empty_table(schema: pa.Schema) -> pa.Table:
    """A table of ``schema`` with no rows: ``schema.empty_table()`` without the import of pandas it makes."""
    return pa.Table.from_batches([], schema=schema)


@functools.lru_cache(maxsize=256)
def scalar(value: str | int | bool | None, type: pa.DataType | None = None) -> pa.Scalar:
    """A pyarrow scalar of a string, whole number, boolean or ``None`` (of ``type``; by default string,
    int64 and bool): ``pa.scalar`` without the import of pandas its first call makes, for the constants
    given to ``pyarrow.compute`` functions."""
    if value is None:
        return pa.nulls(1, type or pa.null())[0]
    if isinstance(value, bool):
        arr = pa.Array.from_buffers(pa.bool_(), 1, [None, pa.py_buffer(np.packbits([value], bitorder="little"))])
    elif isinstance(value, int):
        arr = from_numpy(np.array([value], np.int64))
    else:
        arr = from_strings([value])
    return arr[0] if type is None or arr.type == type else arr.cast(type)[0]
