"""CRC-32 of many byte ranges of a window in one compiled loop (numba): the broker's body CRC check.

``zlib.crc32`` called once per body costs a Python step per message, more
than the walk itself on a store of small messages. This is the same CRC
(IEEE 802.3, reflected polynomial ``0xEDB88320``, as ``java.util.zip.CRC32``
and ``zlib``), computed eight bytes at a time (one unaligned load) from eight
tables ("slicing-by-8"), without the GIL.
"""

from __future__ import annotations

import zlib

import numpy as np
from numba import njit

from ..jit import jit_options
from .kernels import _le64

_JIT = jit_options(__file__, nogil=True, boundscheck=False)
_POLY = 0xEDB88320


def _tables() -> np.ndarray:
    """``t[256 * k + b]``: the CRC of byte ``b`` followed by ``k`` zero bytes (slicing-by-8), one flat array."""
    t = np.zeros((8, 256), np.uint64)
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        t[0, b] = c
    for b in range(256):
        c = int(t[0, b])
        for k in range(1, 8):
            c = int(t[0, c & 0xFF]) ^ (c >> 8)
            t[k, b] = c
    return t.ravel().copy()


_TABLES = _tables()


@njit(**_JIT)
def crc32(buf, pos, length, tables):
    """The CRC-32 of ``buf[pos:pos + length]`` (as ``zlib.crc32``); ``tables`` is :data:`_TABLES`."""
    c = np.uint64(0xFFFFFFFF)
    m = np.uint64(0xFF)
    p = pos
    end = pos + length
    while p + 8 <= end:
        x = _le64(buf, p) ^ c
        c = (tables[1792 + (x & m)] ^ tables[1536 + ((x >> np.uint64(8)) & m)]
             ^ tables[1280 + ((x >> np.uint64(16)) & m)] ^ tables[1024 + ((x >> np.uint64(24)) & m)]
             ^ tables[768 + ((x >> np.uint64(32)) & m)] ^ tables[512 + ((x >> np.uint64(40)) & m)]
             ^ tables[256 + ((x >> np.uint64(48)) & m)] ^ tables[x >> np.uint64(56)])
        p += 8
    while p < end:
        c = tables[(c ^ np.uint64(buf[p])) & m] ^ (c >> np.uint64(8))
        p += 1
    return c ^ np.uint64(0xFFFFFFFF)


#: Bodies at least this long are checked by ``zlib.crc32`` (several times faster per byte than the
#: table loop; its per-call cost is then small beside the bytes).
ZLIB_FROM = 1024


@njit(**_JIT)
def _first_body_mismatch(buf, pos, length, stored, tables, below):
    for j in range(len(pos)):
        n = length[j]
        # The broker checks non-empty bodies only, against the CRC's low 31 bits.
        if 0 < n < below and np.int64(crc32(buf, pos[j], n, tables) & np.uint64(0x7FFFFFFF)) != np.int64(stored[j]):
            return j
    return -1


def first_body_mismatch(buf: np.ndarray, pos: np.ndarray, length: np.ndarray, stored: np.ndarray) -> int:
    """Index of the first body ``buf[pos[j]:pos[j] + length[j]]`` whose BODYCRC ``stored[j]`` does not match, or -1."""
    first = int(_first_body_mismatch(buf, pos, length, stored, _TABLES, ZLIB_FROM))
    upto = len(pos) if first < 0 else first
    large = np.flatnonzero(length[:upto] >= ZLIB_FROM)
    if len(large):
        view = memoryview(buf)
        for j, p, n, c in zip(large.tolist(), pos[large].tolist(), length[large].tolist(), stored[large].tolist()):
            if zlib.crc32(view[p:p + n]) & 0x7FFFFFFF != c:
                return j
    return first


def warm_up() -> None:
    """Load the kernels' machine code now (see :func:`rmqformats.walk.kernels.warm_up`)."""
    buf = np.zeros(16, np.uint8)
    first_body_mismatch(buf, np.zeros(1, np.int64), np.full(1, 9, np.int64), np.zeros(1, np.int32))
