"""The DLedger entry index (``dledger-<selfId>/index/``): one 32-byte unit per entry, and its check against the data."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import DLedgerEntryError, FileChangedError
from ..frames import to_numpy
from ..generated.layouts import rocketmq_dledger_index as layout
from ..mapped import pread_into
from ..queuefiles import queue_files
from ..units import unit_dtype

UNIT = unit_dtype(layout.UNIT_RUNS, layout.UNIT_SEQ)
UNIT_SIZE = UNIT.itemsize
assert UNIT_SIZE == 32
_NORMAL = layout.UNIT_MAGIC["normal"]
#: Units read at a time.
_CHUNK = 1 << 15
#: The entry columns of the walk :func:`check_index` compares with each unit's index, position, size and term.
_CHECKED = ("entryIndex", "entryPosition", "entrySize", "entryTerm")
#: The unit's fields compared with them.
_UNIT_FIELDS = ("index", "ofs_entry", "len_entry", "term")


@dataclass(frozen=True)
class IndexUnit:
    """One unit of the entry index."""

    index: int
    magic: int
    position: int
    size: int
    term: int
    file: str
    file_offset: int


class DLedgerIndex:
    """The files of ``index/``, read up to the first unit that is not an entry's (the zero tail)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.files = queue_files(folder)

    def units(self) -> Iterator[IndexUnit]:
        """Every written unit, in index order; the first zero or foreign unit ends them."""
        for path, at, block in self.unit_blocks():
            for k, (magic, position, size, index, term) in enumerate(block.tolist()):
                yield IndexUnit(index, magic, position, size, term, path, at + k * UNIT_SIZE)

    def unit_blocks(self) -> Iterator[tuple[str, int, np.ndarray]]:
        """:meth:`units` a block at a time: ``(file, offset of its first unit, units)``, the units an array of
        :data:`UNIT`, each block from one file."""
        for f in self.files:
            with open(f.path, "rb") as fh:
                pos = 0
                while pos < f.size:
                    n = min(_CHUNK, (f.size - pos) // UNIT_SIZE)
                    if n == 0:
                        return
                    buf = np.empty(n, UNIT)
                    got = pread_into(fh.fileno(), buf, pos)
                    if got < n * UNIT_SIZE:
                        raise FileChangedError(f.path, pos + got, "the file shrank while it was read")
                    foreign = np.flatnonzero(buf["magic"] != _NORMAL)
                    if len(foreign):
                        if foreign[0]:
                            yield f.path, pos, buf[:foreign[0]]
                        return
                    yield f.path, pos, buf
                    pos += n * UNIT_SIZE

    def unit(self, index: int) -> IndexUnit | None:
        """The unit of entry ``index``, read where DLedger writes it (``index`` × 32 bytes into the index);
        ``None`` when no file holds that place or the unit there is not that entry's."""
        place = index * UNIT_SIZE
        for f in self.files:
            if f.start <= place and place + UNIT_SIZE <= f.start + f.size:
                buf = np.empty(1, UNIT)
                with open(f.path, "rb") as fh:
                    if pread_into(fh.fileno(), buf, place - f.start) < UNIT_SIZE:
                        return None
                magic, position, size, found, term = buf.tolist()[0]
                if magic != _NORMAL or found != index:
                    return None
                return IndexUnit(found, magic, position, size, term, f.path, place - f.start)
        return None


class _UnitCursor:
    """The units of an index in order, looked at a block at a time and taken one by one or many at once."""

    def __init__(self, index: DLedgerIndex):
        self._blocks = index.unit_blocks()
        self._held: list[tuple[str, int, np.ndarray]] = []  # blocks read, the first from ``self._at`` on
        self._at = 0

    def ahead(self, n: int) -> np.ndarray:
        """The next ``n`` units (fewer where the index ends), not taken; only the blocks that hold them are read
        and joined."""
        parts: list[np.ndarray] = []
        have = 0
        while have < n:
            if len(parts) == len(self._held):
                block = next(self._blocks, None)
                if block is None:
                    break
                self._held.append(block)
            part = self._held[len(parts)][2][self._at if not parts else 0:][:n - have]
            parts.append(part)
            have += len(part)
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.empty(0, UNIT)

    def skip(self, n: int) -> None:
        """Take the next ``n`` units (they are held: see :meth:`ahead`)."""
        self._at += n
        while self._held and self._at >= len(self._held[0][2]):
            self._at -= len(self._held[0][2])
            self._held.pop(0)

    def next(self) -> IndexUnit | None:
        """Take the next unit."""
        got = self.ahead(1)
        if not len(got):
            return None
        path, at, _ = self._held[0]
        magic, position, size, index, term = got.tolist()[0]
        unit = IndexUnit(index, magic, position, size, term, path, at + self._at * UNIT_SIZE)
        self.skip(1)
        return unit


def check_index(log, index: DLedgerIndex, *, jobs: int | None = None) -> list[str]:
    """Where the entry index disagrees with the entries of ``log`` (as the DLedger recovery compares them).

    The recovery rewrites the index from the data where they differ, so a
    difference is a finding, not damage to the messages. Returns at most
    100 texts naming the unit's file and offset. The entries are walked by
    ``jobs`` worker processes (default: the log's :attr:`jobs`).
    """
    found: list[str] = []
    units = _UnitCursor(index)
    first_file_start = index.files[0].start if index.files else 0
    walk = log.entry_log.batches(_CHECKED, decompress=False, jobs=log.jobs if jobs is None else jobs)
    for batch in walk:
        entries = [to_numpy(batch.column(c)) for c in _CHECKED]
        # Where the next units are those of the batch's entries, field for field, they are taken at once.
        near = units.ahead(batch.num_rows)
        if len(near) == batch.num_rows and all(np.array_equal(near[f], e) for f, e in zip(_UNIT_FIELDS, entries)):
            units.skip(len(near))
            continue
        for entry in zip(*(e.tolist() for e in entries)):
            unit = units.next()
            while unit is not None and unit.index < entry[0]:
                unit = units.next()
            if unit is None:
                found.append(f"entry {entry[0]} (position {entry[1]}): no index unit "
                             f"(the index ends before it; files from unit {first_file_start // UNIT_SIZE})")
                return found
            got = (unit.index, unit.position, unit.size, unit.term)
            if got != entry:
                found.append(str(DLedgerEntryError(unit.file, unit.file_offset,
                                                   f"index unit (index, pos, size, term) {got} != entry {entry}")))
                if len(found) >= 100:
                    return found
    return found
