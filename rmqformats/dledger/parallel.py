"""The walk of a DLedger commit log on several cores: byte ranges of its data files walked by worker processes.

:class:`ParallelDLedgerScan` is the plain commit log's
:class:`~rmqformats.walk.parallel.ParallelScan` over entries: each worker
walks the entries that start in its range (the first one found by its magic
code and its ``pos`` field, which holds the entry's own position) with no
entry before it, and hands back the first entry's index and term. The reader
keeps a range only where it starts where the walk before it ended and its
first entry follows the last one read (the next index, a term no smaller),
as DLedger's recovery requires; anywhere else it walks that range itself.
So batches, ``end``, ``blanks``, ``last_index``, ``last_term`` and errors
are those of :class:`~rmqformats.dledger.columnar.DLedgerColumnarScan` alone.
"""

from __future__ import annotations

from ..walk.parallel import ParallelScan
from .columnar import DLedgerColumnarScan


class ParallelDLedgerScan(ParallelScan, DLedgerColumnarScan):
    """:class:`DLedgerColumnarScan`'s batches, its data files' byte ranges walked by ``jobs`` worker processes
    (``range_size`` bytes each); takes the options of both."""

    _worker_type = DLedgerColumnarScan

    def _parallel_from(self) -> tuple[int, int] | None:
        # The walk starts at the start of the data file holding ``start``, as the serial walk does.
        at = super()._parallel_from()
        return None if at is None else (at[0], 0)


__all__ = ["ParallelDLedgerScan"]
