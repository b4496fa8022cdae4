"""Frames for every reader: the check the ``to_pandas()`` methods make first (pandas is the ``[pandas]`` extra,
not a core dependency), and Arrow arrays on numpy memory."""

from __future__ import annotations

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
