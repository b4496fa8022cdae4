"""Folders of fixed-size unit files: consume queues and batch consume queues.

A queue is a stream of equal-size units cut into files named by the stream
position of their first byte (20 decimal digits). This module finds the
queues of a store, the files of a queue, and reads units as numpy arrays,
stopping where the broker's recovery stops. The unit layouts come from the
specs through :func:`rmqformats.units.unit_dtype`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .errors import FileChangedError, QueueFileError, place, with_article
from .mapped import FileImage, pread_exact, pread_into

#: Store files named by the offset of their first byte, as 20 decimal digits
#: (commit-log and timer-log segments, queue files).
QUEUE_FILE_NAME = re.compile(r"^\d{20}$")
#: How many of the newest files the broker's recovery walks (``ConsumeQueue.recover``).
RECOVER_FILES = 3


@dataclass(frozen=True)
class QueueFile:
    """One file of a queue."""

    path: str
    #: Position of the file's first byte in the queue's unit stream (its name).
    start: int
    #: File size in bytes.
    size: int

    @property
    def name(self) -> str:
        """The file name."""
        return os.path.basename(self.path)


class QueueInfo(NamedTuple):
    """A queue found on disk and its range of logical offsets."""

    topic: str
    queue_id: int
    #: Logical offset of the first message on disk (placeholder units skipped).
    min_offset: int
    #: Logical offset the next message would get: the broker's ``getMaxOffsetInQueue``.
    max_offset: int
    num_files: int
    folder: str
    #: Why the queue could not be read (then the offsets are 0), else ``None``.
    error: str | None = None
    #: Where the queue is kept: ``"file"`` (``consumequeue/<topic>/<queueId>/`` files) or ``"rocksdb"``
    #: (the RocksDB consume queue of 5.2.0+).
    kind: str = "file"

    @property
    def count(self) -> int:
        """Messages between ``min_offset`` and ``max_offset``."""
        return self.max_offset - self.min_offset


class ReadStep(NamedTuple):
    """``count`` units from unit number ``unit``, at byte ``pos`` of ``file``."""

    unit: int
    file: QueueFile
    pos: int
    count: int


def list_queue_dirs(parent: str) -> list[tuple[str, int, str]]:
    """``(topic, queue_id, folder)`` of every ``<parent>/<topic>/<queueId>/``, sorted.

    Folders whose names are not queue ids are skipped; a missing ``parent``
    gives an empty list (a store that never had such a queue).
    """
    if not os.path.isdir(parent):
        return []
    out = []
    for topic in os.listdir(parent):
        tdir = os.path.join(parent, topic)
        if not os.path.isdir(tdir):
            continue
        for qid in os.listdir(tdir):
            qdir = os.path.join(tdir, qid)
            if qid.isdigit() and os.path.isdir(qdir):
                out.append((topic, int(qid), qdir))
    out.sort(key=lambda t: (t[0], t[1]))
    return out


def queue_files(folder: str) -> tuple[QueueFile, ...]:
    """The 20-digit files of a folder (a queue, or a log of segments), in offset order.

    A missing folder has none.
    """
    if not os.path.isdir(folder):
        return ()
    files = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if QUEUE_FILE_NAME.match(name) and os.path.isfile(path):
            files.append(QueueFile(path, int(name), os.path.getsize(path)))
    files.sort(key=lambda f: f.start)
    return tuple(files)


#: Bytes read at a time where a queue file's end is looked for (a page).
_PROBE_BLOCK = 4096


def _first_zero_unit(mm, unit_size: int, count: int) -> int:
    """An all-zero unit's number, found by bisection (``count`` when the last unit is not zero).

    A queue file is written from its start, so the units after its data are
    the zero fill; bisecting finds where the fill starts while touching a
    few pages instead of the whole tail. The unit found is all-zero in any
    case (a hole in the data may be found instead of the fill), which is
    all the caller relies on.
    """
    zero = bytes(unit_size)
    if count == 0 or mm[(count - 1) * unit_size:count * unit_size] != zero:
        return count
    lo, hi = 0, count - 1  # unit ``hi`` is all-zero
    while lo < hi:
        mid = (lo + hi) // 2
        if mm[mid * unit_size:(mid + 1) * unit_size] == zero:
            hi = mid
        else:
            lo = mid + 1
    return hi


class UnitFiles:
    """The unit files of one queue, read as numpy structured arrays.

    ``accept`` is the broker's recovery test for one unit, applied to an
    array of units; the queue ends at the first unit it rejects in the
    files recovery walks. Unit numbers are stream positions divided by the
    unit size (for a consume queue, the logical offsets).
    """

    def __init__(self, folder: str, dtype: np.dtype, accept: Callable[[np.ndarray], np.ndarray]):
        self.folder = folder
        self.dtype = dtype
        #: The dtype of the arrays returned: the file's fields in native byte order.
        self.native = dtype.newbyteorder("=")
        self.unit_size = dtype.itemsize
        self.accept = accept
        self.files = queue_files(folder)
        self._end: int | None = None
        #: Files the recovery walk converted to native byte order while :meth:`read` runs it, for
        #: that read: the newest files are then read and byte-swapped once, not twice. Nothing is
        #: kept otherwise (a store lists thousands of queues).
        self._walked: dict[str, np.ndarray] | None = None

    def __repr__(self) -> str:
        return f"UnitFiles({self.folder!r}, {len(self.files)} files)"

    def check_file(self, f: QueueFile) -> None:
        """Raise :class:`QueueFileError` for a file that cannot hold whole units where its name says."""
        if f.start % self.unit_size:
            raise QueueFileError(f.path, None, f"file name {f.start} is not a multiple of the "
                                               f"{self.unit_size}-byte unit")
        if f.size % self.unit_size:
            raise QueueFileError(f.path, f.size - f.size % self.unit_size,
                                 f"file size {f.size} is not a multiple of the {self.unit_size}-byte unit "
                                 f"(a unit is cut short)")

    def first_unit(self) -> int:
        """Unit number of the first unit on disk (0 for an empty queue)."""
        return self.files[0].start // self.unit_size if self.files else 0

    def load(self, f: QueueFile) -> np.ndarray:
        """All units of one file, as a copy in native byte order (read with ``pread``, never mapped)."""
        self.check_file(f)
        fd = os.open(f.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            size = os.fstat(fd).st_size
            data = pread_exact(fd, size - size % self.unit_size, 0, f.path, size) if size else b""
        finally:
            os.close(fd)
        return np.frombuffer(data, self.dtype).astype(self.native)

    def _first_rejected(self, f: QueueFile) -> tuple[int, int]:
        """(number in ``f`` of the first unit ``accept`` rejects, or -1; units in ``f``).

        Only the units before an all-zero unit (the zero fill after the data)
        are copied to native byte order and tested, several times faster than
        testing the big-endian mapping; when ``accept`` rejects the all-zero
        unit, the walk ends there at the latest. The copy is kept for
        :meth:`read`.
        """
        self.check_file(f)
        # pread into a private image, not a memory map: a file cut while read raises FileChangedError.
        # Pages, not the default 64 KiB blocks: the bisection below reads ~20 single units far apart.
        mm = FileImage(f.path, sequential=False, block=_PROBE_BLOCK)
        if mm.size == 0:
            mm.close()
            return -1, 0
        try:
            count = len(mm) // self.unit_size
            # Units from an all-zero one on are not converted when ``accept`` rejects that unit:
            # the walk ends there at the latest.
            zero_rejected = not bool(self.accept(np.zeros(1, self.native))[0])
            used = _first_zero_unit(mm, self.unit_size, count) if zero_rejected else count
            mm.ensure(0, used * self.unit_size)
            units = np.frombuffer(mm.buf, self.dtype, count=used).astype(self.native)
        finally:
            mm.close()
        bad = np.flatnonzero(~self.accept(units))
        if bad.size:
            first = int(bad[0])
        elif used < count:
            first = used
        else:
            first = -1
        if self._walked is not None:
            self._walked[f.path] = units
        return first, count

    def known_end(self, end: int) -> None:
        """Take ``end`` as :meth:`end_unit`: found moments ago by a walk of these same files (a listing of the
        queues), not walked again."""
        self._end = end

    def end_unit(self) -> int:
        """Unit number after the last unit recovery keeps (the queue's end).

        Like ``ConsumeQueue.recover``, the walk starts at the third-newest
        file: a file whose units all pass goes on to the next, the first
        unit that fails ends the queue, and later files would be deleted.
        """
        if self._end is None:
            end = self.first_unit()
            for i in range(max(0, len(self.files) - RECOVER_FILES), len(self.files)):
                f = self.files[i]
                first_bad, count = self._first_rejected(f)
                end = f.start // self.unit_size + (first_bad if first_bad >= 0 else count)
                if first_bad >= 0:
                    break
                nxt = self.files[i + 1] if i + 1 < len(self.files) else None
                if nxt is not None and nxt.start != f.start + f.size:
                    raise QueueFileError(nxt.path, None, f"gap in the queue: {f.name} ends at stream "
                                                         f"position {f.start + f.size}, {nxt.name} starts "
                                                         f"at {nxt.start}")
            self._end = end
        return self._end

    def file_of(self, unit: int) -> tuple[QueueFile, int] | None:
        """The file holding unit number ``unit`` and the unit's byte position in it."""
        pos = unit * self.unit_size
        lo, hi = 0, len(self.files)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.files[mid].start <= pos:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return None
        f = self.files[lo - 1]
        return (f, pos - f.start) if pos < f.start + f.size else None

    def read(self, start: int, stop: int) -> np.ndarray:
        """Units ``start`` to ``stop - 1``, clipped to those on disk before the end.

        A copy in native byte order, read with ``pread`` (never mapped).
        """
        walked = self._walked = {} if self._end is None else None
        try:
            steps = self.plan(start, stop, sys.maxsize)  # one step per file
        finally:
            self._walked = None
        parts = []
        for step in steps:
            first = step.pos // self.unit_size
            native = walked.pop(step.file.path, None) if walked else None
            if native is not None and first + step.count <= len(native):
                parts.append(native[first:first + step.count])
                continue
            parts.append(self.read_stored(step).astype(self.native))
        return np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else np.zeros(0, self.native)

    def plan(self, start: int, stop: int, max_units: int) -> list[ReadStep]:
        """How to read units ``start`` to ``stop - 1``, clipped as :meth:`read` clips them.

        One :class:`ReadStep` per file part of at most ``max_units`` units
        (a file's units are cut into steps of equal size, not a remainder).
        Raises what :meth:`read` raises for these units (the recovery walk's
        errors, a missing file, a file that cannot hold whole units) before
        anything is read, so a caller can skip a damaged queue whole.
        """
        if max_units < 1:
            raise ValueError(f"max_units must be at least 1, not {max_units}")
        start = max(start, self.first_unit())
        stop = min(stop, self.end_unit())
        steps = []
        unit = start
        while unit < stop:
            located = self.file_of(unit)
            if located is None:
                raise QueueFileError(self.folder, None, f"no file holds unit {unit} "
                                                        f"(stream position {unit * self.unit_size})")
            f, pos = located
            self.check_file(f)
            left = min(stop - unit, (f.size - pos) // self.unit_size)
            pieces = -(-left // max_units)  # ceil(left / max_units)
            n = -(-left // pieces)  # ceil(left / pieces) <= max_units
            steps.append(ReadStep(unit, f, pos, n))
            unit += n
        return steps

    def read_stored(self, step: ReadStep) -> np.ndarray:
        """The units of one step as stored (the file's byte order), read with positioned reads into a new array.

        Nothing stays mapped, so reading a queue of any length keeps the
        resident set at one step. Raises :class:`FileChangedError` if the
        file has become shorter since the queue was listed.
        """
        out = np.empty(step.count, self.dtype)
        want = step.count * self.unit_size
        fd = os.open(step.file.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            got = pread_into(fd, out, step.pos)
        finally:
            os.close(fd)
        if got != want:
            raise FileChangedError(step.file.path, step.pos + got,
                                   f"file ends {got} bytes into {with_article(want)}-byte read; it was {step.file.size} "
                                   f"bytes when the queue was listed")
        return out

    def where(self, unit: int) -> str:
        """``FILE @ 0x…`` of a unit number (the file's whole path), for messages."""
        located = self.file_of(unit)
        if located is None:
            return f"{os.path.abspath(self.folder)} unit {unit}"
        f, pos = located
        return place(os.path.abspath(f.path), pos)
