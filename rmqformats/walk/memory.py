"""Keeping freed batch memory in the process, so the next batch does not page-fault it in again.

Every batch is built into new buffers (Arrow owns them once they are handed
out). glibc's ``malloc`` serves large blocks with ``mmap`` and gives freed
memory back to the kernel, so each batch would touch fresh pages: one page
fault per 4 KiB, which on virtual machines costs more than decoding the
bytes (measured here: 730 ns a message instead of 470 on small messages).
Raising the mmap and trim thresholds makes ``free`` keep the memory for the
next batch; the resident set then stays at its peak instead of shrinking
between batches. Set ``RMQFORMATS_KEEP_MALLOC=1`` to leave ``malloc`` as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: ``mallopt`` parameters of glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: Blocks up to this size come from the heap and are reused after ``free``: every buffer of a batch of
#: ordinary messages (windows, field matrices, columns) is smaller. A larger block is a body decompressed
#: to hundreds of MiB: it is mapped, and unmapped when freed, so that it does not stay in the heap.
MMAP_THRESHOLD = 64 << 20
#: Free memory kept at the top of the heap before it is returned to the kernel (a few batches' worth).
TRIM_THRESHOLD = 256 << 20

_tuned = False


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; returns whether they are raised."""
    global _tuned
    if _tuned:
        return True
    if os.environ.get("RMQFORMATS_KEEP_MALLOC") or not sys.platform.startswith("linux"):
        return False
    if any(k.startswith("MALLOC_") for k in os.environ):  # the user tuned malloc already
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt thresholds)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _tuned
