"""Read-only access to store files: memory maps with bounded resident pages, and ``pread``."""

from __future__ import annotations

import mmap
import os

#: A scan drops the pages it has passed from its mapping every this many bytes.
RELEASE_EVERY = 32 << 20


def open_readonly(path: str, *, sequential: bool = True) -> mmap.mmap | None:
    """Map ``path`` read-only; ``None`` for an empty file, which mmap cannot map.

    ``sequential`` tells the kernel to read ahead (scans); pass ``False`` for
    files read at scattered places (index lookups), so only touched pages load.
    """
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return None
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mm, "madvise"):
        mm.madvise(mmap.MADV_SEQUENTIAL if sequential else mmap.MADV_RANDOM)
    return mm


def release_pages(mm: mmap.mmap, upto: int) -> int:
    """Unmap the pages before ``upto`` from this process (they stay in the page cache).

    Returns the position at which to call again (``upto + RELEASE_EVERY``).

    File-backed pages of a read-only mapping count in the resident set until
    the mapping goes; over a 1 GiB segment that would look like 1 GiB of
    memory. Decoded messages hold copies, never views, so the pages are free.
    """
    if hasattr(mm, "madvise"):
        mm.madvise(mmap.MADV_DONTNEED, 0, upto - upto % mmap.PAGESIZE)
    return upto + RELEASE_EVERY


if hasattr(os, "pread"):
    pread = os.pread
else:  # Windows has no pread: seek and read (callers do not share a descriptor between threads)
    def pread(fd: int, n: int, offset: int) -> bytes:
        """Read ``n`` bytes at ``offset`` of ``fd``."""
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, n)


def pread_into(fd: int, buf, offset: int) -> int:
    """Fill the writable buffer ``buf`` from ``fd`` at ``offset``; returns the bytes read (fewer at the file's end)."""
    view = memoryview(buf).cast("B")
    done = 0
    while done < len(view):
        if hasattr(os, "preadv"):
            got = os.preadv(fd, [view[done:]], offset + done)
        else:  # Windows: seek and read (callers do not share a descriptor between threads)
            os.lseek(fd, offset + done, os.SEEK_SET)
            data = os.read(fd, len(view) - done)
            got = len(data)
            view[done:done + got] = data
        if got <= 0:
            break
        done += got
    return done
