"""Read-only access to store files: positioned reads (``pread``) that a shrinking file cannot kill.

Store files are read while brokers write, clean up and roll them, and while
operators copy or delete them. A memory map of a file that shrinks kills the
process with SIGBUS at the first access past the new end; a positioned read
returns fewer bytes instead, which the readers turn into
:class:`~rmqformats.errors.FileChangedError` (file, offset, reason). So the
readers never map store files: :class:`FileImage` keeps a file's bytes at
their own positions in private memory, filled by ``pread`` as a reader goes.
"""

from __future__ import annotations

import mmap
import os

from .errors import FileChangedError

#: A scan drops the pages it has passed from its mapping every this many bytes.
RELEASE_EVERY = 32 << 20


def open_readonly(path: str, *, sequential: bool = True) -> mmap.mmap | None:
    """Map ``path`` read-only; ``None`` for an empty file, which mmap cannot map.

    Not used by the readers: an access past the end of a file that shrank
    since it was mapped is a SIGBUS (see :class:`FileImage`). Kept for
    benchmarks that compare against a memory map.

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


def release_pages(mm, upto: int) -> int:
    """Give back the pages before ``upto`` of a mapping or a :class:`FileImage` (they stay in the page cache).

    Returns the position at which to call again (``upto + RELEASE_EVERY``).

    File-backed pages of a read-only mapping count in the resident set until
    the mapping goes; over a 1 GiB segment that would look like 1 GiB of
    memory. Decoded messages hold copies, never views, so the pages are free.
    """
    if isinstance(mm, FileImage):
        mm.release(upto)
    elif hasattr(mm, "madvise"):
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


def shrank(path: str, at: int, size: int) -> FileChangedError:
    """The error for a read that found the end of ``path`` at ``at`` though it had ``size`` bytes."""
    return FileChangedError(path, at, f"the file shrank while it was read: it had {size} bytes when opened, "
                                      f"it now ends at {at}")


def pread_exact(fd: int, n: int, offset: int, path: str, size: int) -> bytes:
    """``n`` bytes at ``offset``, in as many reads as it takes (one ``pread`` returns at most 0x7ffff000 bytes).

    ``size`` is the file's size when it was opened: a read that ends before
    ``offset + n`` raises :class:`FileChangedError`.
    """
    data = pread(fd, n, offset)
    if len(data) == n:
        return data
    if len(data) == 0:
        raise shrank(path, offset, size)
    # A long read: the rest into one buffer, so a 2 GiB record is not joined from pieces.
    buf = bytearray(n)
    buf[:len(data)] = data
    done = len(data)
    del data
    done += pread_into(fd, memoryview(buf)[done:], offset + done)
    if done != n:
        raise shrank(path, offset + done, size)
    return bytes(buf)


#: Bytes a sequential :class:`FileImage` reads at a time.
FILL_CHUNK = 8 << 20
#: Bytes a random-access :class:`FileImage` reads at a time (one block).
FILL_BLOCK = 64 << 10


class FileImage:
    """A file's bytes at their own positions in private memory, read with ``pread`` when needed.

    ``buf`` is an anonymous mapping of the file's size (address space, not
    memory, until pages are filled) that supports what a memory map of the
    file does (``len``, slices, ``struct.unpack_from``, ``numpy.frombuffer``),
    but only the parts asked for hold the file's bytes:

    - sequential readers call :meth:`fill_to` before reading up to a position
      (the file is read ahead in chunks of :data:`FILL_CHUNK`) and
      :meth:`release` for what they have passed;
    - random readers slice (``image[a:b]``) or call :meth:`ensure`, which
      reads the blocks (64 KiB unless ``block`` says) not yet read.

    When the file has become shorter than it was at opening, the read that
    meets its end raises :class:`FileChangedError`; a memory map would end the
    process with SIGBUS instead. A file that grows is read at its size at opening.
    """

    def __init__(self, path: str | os.PathLike[str], *, sequential: bool = True, block: int = FILL_BLOCK,
                 start: int = 0):
        self.path = os.fspath(path)
        self._fd: int | None = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            #: The file's size when it was opened.
            self.size = os.fstat(self._fd).st_size
            if hasattr(os, "posix_fadvise") and self.size:
                os.posix_fadvise(self._fd, 0, 0, os.POSIX_FADV_SEQUENTIAL if sequential else os.POSIX_FADV_RANDOM)
            flags = {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} if hasattr(mmap, "MAP_ANONYMOUS") else {}
            self.buf = mmap.mmap(-1, self.size, **flags) if self.size else b""
        except BaseException:
            os.close(self._fd)
            raise
        #: Bytes from ``start`` (or the last :meth:`release`) to here hold the file's bytes; a
        #: sequential reader that starts inside the file reads nothing before ``start``.
        self.filled = min(max(start, 0), self.size)
        #: Bytes read at a time by :meth:`ensure` (a power of two).
        self.block = block
        #: Per block, non-zero once read; made at opening for random access.
        self.blocks: bytearray | None = None if sequential else bytearray(-(-self.size // block))

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"FileImage({self.path!r}, {self.size} bytes, {self.filled} read)"

    def _read(self, start: int, stop: int) -> None:
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        with memoryview(self.buf) as view:
            got = pread_into(self._fd, view[start:stop], start)
        if got != stop - start:
            raise shrank(self.path, start + got, self.size)

    def fill_to(self, end: int) -> int:
        """Read ahead so that the bytes before ``end`` (at most the size) hold the file's; returns the new :attr:`filled`."""
        if end <= self.filled:
            return self.filled
        stop = min(self.size, max(end, self.filled + FILL_CHUNK))
        if stop > self.filled:
            self._read(self.filled, stop)
            self.filled = stop
        return self.filled

    def ensure(self, start: int, end: int) -> None:
        """Read the blocks of ``[start, end)`` (clipped to the size) not yet read."""
        end = min(end, self.size)
        start = max(start, 0)
        if start >= end or end <= self.filled:
            return
        if self.blocks is None:
            self.blocks = bytearray(-(-self.size // self.block))
        blocks, block = self.blocks, self.block
        first = start // block
        last = (end - 1) // block
        b = first
        while b <= last:
            if blocks[b]:
                b += 1
                continue
            run = b
            while run <= last and not blocks[run]:
                run += 1
            self._read(b * block, min(run * block, self.size))
            blocks[b:run] = b"\x01" * (run - b)
            b = run

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, _ = key.indices(self.size)
            self.ensure(start, stop)
        else:
            index = key + self.size if key < 0 else key
            self.ensure(index, index + 1)
        return self.buf[key]

    def release(self, upto: int) -> None:
        """Give back the memory of the bytes before ``upto``; they must not be read again."""
        upto = min(upto - upto % mmap.PAGESIZE, self.filled)
        if upto > 0 and hasattr(self.buf, "madvise"):
            self.buf.madvise(mmap.MADV_DONTNEED, 0, upto)

    def close(self) -> None:
        """Free the memory and close the file."""
        if isinstance(self.buf, mmap.mmap):
            self.buf.close()
        self.buf = b""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "FileImage":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except (AttributeError, OSError, BufferError):
            pass
