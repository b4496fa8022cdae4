"""Frames for every reader: the check the ``to_pandas()`` methods make first (pandas is the ``[pandas]`` extra,
not a core dependency), and Arrow arrays on numpy memory."""

from __future__ import annotations

import functools
from collections.abc import Sequence

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
    numpy dtype's width (``timestamp[ms]`` on int64, for example).
    """
    values = np.ascontiguousarray(values)
    if type is None:
        type = pa.from_numpy_dtype(values.dtype)
    if type.bit_width != values.dtype.itemsize * 8:
        values = values.astype(type.to_pandas_dtype() if not pa.types.is_timestamp(type) else np.int64)
    return pa.Array.from_buffers(type, len(values), [None, pa.py_buffer(values)])


def from_strings(values: Sequence[str]) -> pa.Array:
    """A string array of Python strings, built on its buffers: ``pa.array(values, pa.string())`` without
    the import of pandas that ``pa.array``'s first call makes."""
    data = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(data) + 1, np.int32)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


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
