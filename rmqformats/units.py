"""numpy record types for fixed-size units, built from the generated layout tables.

Consume-queue, batch-consume-queue, index and timer files are arrays of
fixed-size units. Reading them as numpy structured arrays decodes millions
of units per call; the field names, order and widths come from the
``<TYPE>_RUNS`` tables that :mod:`rmqformats.codegen.layout_gen` derives
from the ``.ksy`` specs, so nothing here restates a layout.
"""

from __future__ import annotations

import struct

import numpy as np

_NUMPY_CODES = {"b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4",
                "l": "i4", "L": "u4", "q": "i8", "Q": "u8"}


def unit_dtype(runs: tuple, seq: tuple[str, ...]) -> np.dtype:
    """The packed structured dtype of a type whose fields are all fixed integers.

    ``runs`` and ``seq`` are a type's ``<TYPE>_RUNS`` and ``<TYPE>_SEQ`` from a
    generated layout module. Raises ``ValueError`` when the runs do not cover
    the whole sequence (the type has a variable-size field).
    """
    fields: list[tuple[str, str]] = []
    for names, fmt in runs:
        order = "<" if fmt[0] == "<" else ">"
        codes = [c for c in fmt[1:] if not c.isdigit()]
        if len(codes) != len(names) or any(c not in _NUMPY_CODES for c in codes):
            raise ValueError(f"run {names} with format {fmt!r} is not a row of integers")
        fields += [(name, order + _NUMPY_CODES[c]) for name, c in zip(names, codes)]
    if tuple(name for name, _ in fields) != tuple(seq):
        raise ValueError(f"runs {[n for n, _ in fields]} do not cover the sequence {list(seq)}")
    dtype = np.dtype(fields)
    assert dtype.itemsize == sum(struct.calcsize(fmt) for _, fmt in runs)
    return dtype
