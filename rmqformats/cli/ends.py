"""How a walk of the commit log ended, on stderr, and the exit status it gives a command (``messages``,
``export``, ``sql``, ``pending``, ``dump``)."""

from __future__ import annotations

import os
import sys

from . import status
from .present import whole


def report_end(scan, log=None) -> int:
    """Write the damaged ranges a salvage skipped and a data end at damage to stderr; returns the exit status.

    A plain scan crosses a missing segment file as the broker's recovery
    does; the bytes no file holds are damage all the same.
    """
    damaged = list(getattr(scan, "damaged", ()))
    overlapping = []
    if log is not None and scan.end is not None:
        from ..walk.salvage import gaps, overlaps
        if not hasattr(scan, "damaged"):
            damaged = [g for g in gaps(log.segments) if g.commitlog_offset < scan.end.offset]
        overlapping = [(a, b) for a, b in overlaps(log.segments) if b.start_offset < scan.end.offset]
    for r in damaged:
        sys.stderr.write(f"rmqformats: damaged range skipped: {whole(r)}\n")
    for a, b in overlapping:
        sys.stderr.write(f"rmqformats: segment {os.path.abspath(b.path)} is named for commit-log offset "
                         f"{b.start_offset}, inside {os.path.basename(a.path)} (which ends at "
                         f"{a.start_offset + a.size}): its records are read at offsets from its name\n")
    end = scan.end
    if end is not None and not end.reason.is_clean:
        sys.stderr.write(f"rmqformats: data ends early: {whole(end)}\n")
        return status.DAMAGED
    return status.DAMAGED if damaged or overlapping else status.OK
