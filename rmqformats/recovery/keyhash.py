"""Index key hashes of many ``topic#key`` strings at once, in compiled code.

The index files hold ``IndexFile.indexKeyHashMethod(topic + "#" + key)``:
Java ``String.hashCode`` made non-negative. Java's hash is the recursion
``h = 31 * h + unit`` over UTF-16 code units, so the hash of
``topic#key`` continues from the hash of ``topic#`` (computed once per
topic) over the key's units. For an ASCII key the units are its bytes, and
a compiled loop over Arrow's string buffers does it; keys with other
characters (rare) go through :func:`rmqformats.index.index_key_hash`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

from ..frames import to_numpy
from ..index import index_key_hash
from ..jit import jit_options
from ..javahash import java_string_hash

_MASK = 0xFFFFFFFF


@njit(**jit_options(__file__, nogil=True))
def _continue_hash(data, offsets, starts, out, ascii_ok):  # pragma: no cover (compiled)
    for i in range(len(starts)):
        h = starts[i]
        ok = True
        for p in range(offsets[i], offsets[i + 1]):
            b = data[p]
            if b >= 0x80:
                ok = False
                break
            h = (h * 31 + b) & 0xFFFFFFFF
        ascii_ok[i] = ok
        if h >= 0x80000000:  # as a signed int, then Math.abs (MIN_VALUE maps to 0)
            h = 0 if h == 0x80000000 else 0x100000000 - h
        out[i] = h


def _topic_state(topic: str) -> int:
    """``String.hashCode`` of ``topic + "#"`` as an unsigned 32-bit state."""
    return java_string_hash(topic + "#") & _MASK


def key_hashes(strings: pa.Array, topic_index: np.ndarray, topic_names: list[str]) -> np.ndarray:
    """``index_key_hash(topic + "#" + strings[i])`` with ``topic = topic_names[topic_index[i]]``.

    One value per string; a null string gives -1.

    >>> key_hashes(pa.array(["k1", None]), np.array([0, 0]), ["T"]).tolist() == [index_key_hash("T#k1"), -1]
    True
    """
    strings = strings.cast(pa.string()) if strings.type != pa.string() else strings
    n = len(strings)
    out = np.full(n, -1, np.int64)
    if not n:
        return out
    valid = ~to_numpy(strings.is_null())
    states = np.array([_topic_state(t) for t in topic_names] or [0], np.int64)
    starts = states[np.asarray(topic_index, np.int64)]
    bufs = strings.buffers()
    offsets = np.frombuffer(bufs[1], np.int32, n + 1, strings.offset * 4).astype(np.int64)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    hashed = np.empty(n, np.int64)
    ascii_ok = np.empty(n, np.bool_)
    _continue_hash(data, offsets, starts, hashed, ascii_ok)
    out[valid] = hashed[valid]
    for i in np.flatnonzero(valid & ~ascii_ok).tolist():
        out[i] = index_key_hash(f"{topic_names[int(topic_index[i])]}#{strings[i].as_py()}")
    return out
