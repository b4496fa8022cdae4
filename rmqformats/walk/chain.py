"""Several walks of the commit-log record walk read as one: the files of a tiered commit log, or the old
commit log and then the DLedger data of a store switched to DLedger.

A :class:`ScanChain` runs its parts (object scans or column scans of the
walk) one after the other and has one scan's attributes: ``end`` (the last
part's, or ``None`` where ``to_offset`` or ``stop`` ended a part first),
``blanks``, ``bytes_done``, and for column scans ``columns``, ``schema`` and
:meth:`~ScanChain.read_all`. Its subclass says which parts, and whether the
next one is read after a part's end (:meth:`ScanChain._parts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from ..errors import RmqFormatError
from ..segments import Blank, DataEnd
from .arrow import field, resolve_columns


#: Options of :meth:`rmqformats.commitlog.CommitLog.batches` that do not apply to a log read as a chain of walks.
NOT_CHAINED = ("salvage", "live")


def refuse_options(path: str, options: dict, what: str) -> None:
    """Raise a typed error naming the scan options (``salvage`` …) that ``what`` does not support."""
    given = sorted(k for k, v in options.items() if v)
    if given:
        raise RmqFormatError(path, None, f"{', '.join(given)} does not apply to {what}")


class ScanChain:
    """The items (messages or record batches) of several scans, one scan after the other."""

    def __init__(self, columns: str | Iterable[str] | None = None, *, batches: bool = False):
        #: Where and why the data ended: the last part's end (``None`` until the parts are read, and where
        #: ``to_offset`` or ``stop`` ended a part).
        self.end: DataEnd | None = None
        self.blanks: list[Blank] = []
        self.last_index = self.last_term = -1
        if batches:
            self.columns = resolve_columns(columns)
            self.schema = pa.schema([field(c) for c in self.columns])
        self._done = 0
        self._current: Any = None
        self._gen = self._run()

    def _parts(self) -> Iterator[Any]:
        """The scans to read, in order; resumed after each is read, with :attr:`end` set to its end."""
        raise NotImplementedError

    def _covered(self, part: Any) -> int:
        """Bytes of commit log a read part covered."""
        return part.bytes_done

    @property
    def bytes_done(self) -> int:
        """Bytes of commit log covered so far (for progress reports)."""
        return self._done + (self._current.bytes_done if self._current is not None else 0)

    def __iter__(self) -> Iterator[Any]:
        return self._gen

    def __next__(self) -> Any:
        return next(self._gen)

    def read_all(self) -> pa.Table:
        """Every remaining record batch as one :class:`pyarrow.Table` (column scans only)."""
        return pa.Table.from_batches(list(self._gen), schema=self.schema)

    def _run(self) -> Iterator[Any]:
        parts = self._parts()
        for part in parts:
            self._current = part
            yield from part
            self._current = None
            self._done += self._covered(part)
            self.blanks.extend(part.blanks)
            self.end = part.end
            self.last_index = getattr(part, "last_index", self.last_index)
            self.last_term = getattr(part, "last_term", self.last_term)
            if part.end is None:  # ``to_offset`` or ``stop`` ended it: nothing after it is wanted
                return
