"""The DLedger entry index (``dledger-<selfId>/index/``): one 32-byte unit per entry, and its check against the data."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import DLedgerEntryError, FileChangedError
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
                    for k, u in enumerate(buf.tolist()):
                        magic, position, size, index, term = u
                        if magic != _NORMAL:
                            return
                        yield IndexUnit(index, magic, position, size, term, f.path, pos + k * UNIT_SIZE)
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


def check_index(log, index: DLedgerIndex, *, jobs: int | None = None) -> list[str]:
    """Where the entry index disagrees with the entries of ``log`` (as the DLedger recovery compares them).

    The recovery rewrites the index from the data where they differ, so a
    difference is a finding, not damage to the messages. Returns at most
    100 texts naming the unit's file and offset. The entries are walked by
    ``jobs`` worker processes (default: the log's :attr:`jobs`).
    """
    found: list[str] = []
    units = index.units()
    first_file_start = index.files[0].start if index.files else 0
    walk = log.entry_log.batches(_CHECKED, decompress=False, jobs=log.jobs if jobs is None else jobs)
    for batch in walk:
        for entry in zip(*(batch.column(c).to_pylist() for c in _CHECKED)):
            unit = next(units, None)
            while unit is not None and unit.index < entry[0]:
                unit = next(units, None)
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
