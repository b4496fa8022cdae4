"""How a read is cut into Spark partitions, on the driver.

Commit logs: one partition per segment by default; with ``splitSize``, one
per byte range of that many bytes inside a segment (:class:`.SegmentSplit`).
By default the driver first walks the record chain (:mod:`.dataend`) so that
each split starts on the chain and no split after the data end is planned;
with ``salvage`` each split finds its own first record and the splits cover
every segment's non-zero bytes.

Queue and index files: pieces of whole units or entries (never a unit cut in
two), at most ``splitSize`` bytes each (128 MiB by default, Spark's
``maxPartitionBytes``), packed into partitions of up to that many bytes, so
that thousands of small queue files do not become thousands of tasks.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from rmqformats.commitlog import Segment
from rmqformats.queuefiles import QUEUE_FILE_NAME

from .dataend import bounds, check_chain, data_limit
from .filters import RowFilter
from .options import DEFAULT_UNIT_SPLIT, ReadOptions
from .paths import DataFile, StoreFiles
from .splits import SegmentSplit

_log = logging.getLogger(__name__)


def segments_of(store: StoreFiles) -> list[Segment]:
    """The commit-log segments of a store's selected files, in offset order (a name not of 20 digits starts at 0)."""
    segs = []
    for f in store.files:
        name = os.path.basename(f.path)
        segs.append(Segment(f.path, int(name) if QUEUE_FILE_NAME.match(name) else 0, f.size))
    return sorted(segs, key=lambda s: (s.start_offset, s.path))


#: Types of the constant columns whole splits are left out by.
_CONSTANT_TYPES = {"store": pa.string(), "segment": pa.string(), "topic": pa.string(), "queueId": pa.int32(),
                   "queueType": pa.string(), "file": pa.string()}


class Pruning:
    """What the pushed-down filters say about whole splits, and how many splits they left out."""

    def __init__(self, row_filter: RowFilter | None):
        self.filter = row_filter if row_filter else None
        self.offsets = (None, None) if self.filter is None else self.filter.bounds("commitLogOffset")
        self.times = (None, None) if self.filter is None else self.filter.bounds("storeTimestamp")
        #: Splits considered and splits planned.
        self.considered = 0
        self.planned = 0

    def keeps(self, **constants) -> bool:
        """False when no row with these constant columns (store, segment, topic, ...) passes the filters."""
        return self.filter is None or self.filter.keeps(constants, _CONSTANT_TYPES)

    def offset_range(self, lo: int, hi: int) -> bool:
        """Whether a record starting in commit-log offsets ``[lo, hi)`` can pass the filters."""
        low, high = self.offsets
        if low is not None and high is not None and low > high:
            return False
        return (low is None or hi > low) and (high is None or lo <= high)

    def time_range(self, low_us: int, high_us: int) -> bool:
        """Whether records whose store times lie in ``[low_us, high_us]`` can pass the filters."""
        low, high = self.times
        if low is not None and high is not None and low > high:
            return False
        return (low is None or high_us >= low) and (high is None or low_us <= high)

    def log(self, source: str) -> None:
        if self.filter is not None:
            _log.info("%s: the pushed-down filters leave %d of %d splits to read", source, self.planned,
                      self.considered)


def commitlog_splits(stores: Iterable[StoreFiles], options: ReadOptions,
                     pruning: Pruning | None = None) -> list[SegmentSplit]:
    """The splits of every store's commit log (see the module docstring).

    ``pruning`` leaves out the splits no row of which can pass the pushed-down
    filters: by store and segment name, by the commit-log offsets a split
    covers and (from the driver's walk) by the store times of its records.
    """
    pruning = pruning or Pruning(None)
    out: list[SegmentSplit] = []
    for store in stores:
        segments = segments_of(store)
        if not segments or not pruning.keeps(store=store.store):
            continue
        if options.salvage:
            out += _salvage_splits(store.store, segments, options.split_size, pruning)
        else:
            out += _chain_splits(store.store, segments, options.split_size, options.verify_crc, pruning)
    return out


def _salvage_splits(store: str, segments: list[Segment], split_size: int | None,
                    pruning: Pruning) -> list[SegmentSplit]:
    out = []
    for i, seg in enumerate(segments):
        if not pruning.keeps(segment=os.path.basename(seg.path)):
            continue
        limit = data_limit(seg.path)
        if limit == 0:  # all zero: nothing to read, nothing damaged
            continue
        b = bounds(limit, split_size)
        e = np.append(b[1:], seg.size)
        last = i == len(segments) - 1
        for k in range(len(b)):
            pruning.considered += 1
            if pruning.offset_range(seg.start_offset + int(b[k]), seg.start_offset + int(e[k])):
                pruning.planned += 1
                out.append(SegmentSplit(store, seg, last, int(b[k]), int(e[k]), limit=limit))
    return out


def _chain_splits(store: str, segments: list[Segment], split_size: int | None, verify_crc: bool,
                  pruning: Pruning) -> list[SegmentSplit]:
    chain = check_chain(segments, split_size, verify_crc=verify_crc)
    if chain.info is not None and chain.info.damage:
        _log.warning("%s: the data of the commit log ends at %s @ %d: %s; the records after it are not read "
                     "(salvage=true reads them)", store, chain.info.path, chain.info.pos, chain.info.reason)
    out = []
    for i, seg in enumerate(segments[:chain.end_segment + 1]):
        b = bounds(seg.size, split_size)
        e = np.append(b[1:], seg.size)
        starts = chain.starts[i]
        wanted = np.flatnonzero(starts >= 0)
        end_pos = k_end = None
        info = None
        if i == chain.end_segment:
            end_pos = chain.end.file_offset
            k_end = max(0, int(np.searchsorted(b, end_pos, side="right")) - 1)
            wanted = wanted[wanted <= k_end]
            if chain.info is not None and chain.info.damage:
                info = chain.info
                wanted = np.union1d(wanted, [k_end])
        last = i == len(segments) - 1
        named = pruning.keeps(segment=os.path.basename(seg.path))
        for k in wanted.tolist():
            stop = int(e[k]) if k_end is None or k < k_end else min(int(e[k]), end_pos)
            start = int(starts[k]) if starts[k] >= 0 and starts[k] < stop else None
            reports = info if k == k_end else None
            pruning.considered += 1
            # The split that reports damage is always read: its mode decides what the damage gives.
            if reports is None and not (named and pruning.offset_range(seg.start_offset + int(b[k]),
                                                                        seg.start_offset + stop)
                                        and pruning.time_range(int(chain.time_low[i][k]),
                                                               int(chain.time_high[i][k]))):
                continue
            pruning.planned += 1
            out.append(SegmentSplit(store, seg, last, int(b[k]), int(e[k]), start=start, stop=stop, planned=True,
                                    end_info=reports))
    return out


# -- queue and index files ----------------------------------------------------------------------


@dataclass(frozen=True)
class UnitPiece:
    """Units ``[first, stop)`` of one queue file, or entries of one index file (``stop`` ``None``: all written).

    ``report`` marks the piece that reports what is wrong with its queue or
    file as a whole (recovery's walk, a file that cannot hold whole units),
    so that a damaged queue gives one corrupt-record row, not one per piece.
    """

    store: str
    path: str
    first: int
    stop: int | None
    report: bool
    #: Queue pieces: the queue type, topic, id and folder, and every selected file of the queue
    #: as ``(path, start, size)`` (its recovery end depends on the newest three).
    queue_type: str | None = None
    topic: str | None = None
    queue_id: int | None = None
    folder: str | None = None
    queue_files: tuple[tuple[str, int, int], ...] = ()


class UnitPartition(InputPartition):
    """Pieces of queue or index files read by one task."""

    def __init__(self, pieces: list[UnitPiece]):
        super().__init__(f"{len(pieces)} pieces from {pieces[0].path}")
        self.pieces = pieces


def _pack(pieces: list[tuple[UnitPiece, int]], split_size: int) -> list[UnitPartition]:
    """Partitions of consecutive pieces of at most ``split_size`` bytes (a larger piece alone)."""
    out: list[UnitPartition] = []
    current: list[UnitPiece] = []
    size = 0
    for piece, nbytes in pieces:
        if current and size + nbytes > split_size:
            out.append(UnitPartition(current))
            current, size = [], 0
        current.append(piece)
        size += nbytes
    if current:
        out.append(UnitPartition(current))
    return out


def queue_partitions(stores: Iterable[StoreFiles], options: ReadOptions, unit_sizes: dict[str, int],
                     pruning: Pruning | None = None) -> list[UnitPartition]:
    """Pieces of whole units of every selected queue file, packed into partitions.

    ``unit_sizes`` maps a queue type to its unit size in bytes. A file whose
    name or size is not a whole number of units is one piece; its reader
    reports it. ``pruning`` leaves out the queues whose store, type, topic or
    id the pushed-down filters reject.
    """
    pruning = pruning or Pruning(None)
    split = options.split_size or DEFAULT_UNIT_SPLIT
    pieces: list[tuple[UnitPiece, int]] = []
    for store in stores:
        queues: dict[tuple[str, str, int], list[DataFile]] = {}
        for f in store.files:
            if options.topics is None or f.topic in options.topics:
                queues.setdefault((f.queue_type, f.topic, f.queue_id), []).append(f)
        for (queue_type, topic, qid), files in sorted(queues.items()):
            pruning.considered += 1
            if not pruning.keeps(store=store.store, queueType=queue_type, topic=topic, queueId=qid):
                continue
            pruning.planned += 1
            unit = unit_sizes[queue_type]
            files = sorted(files, key=lambda f: int(os.path.basename(f.path)))
            described = tuple((f.path, int(os.path.basename(f.path)), f.size) for f in files)
            common = dict(queue_type=queue_type, topic=topic, queue_id=qid, folder=os.path.dirname(files[0].path),
                          queue_files=described)
            step = max(1, split // unit)
            first_piece = True
            for path, start, size in described:
                if start % unit or size % unit:
                    ranges = [(start // unit, (start + size) // unit)]
                else:
                    ranges = [(u, min(u + step, (start + size) // unit))
                              for u in range(start // unit, (start + size) // unit, step)] or [(start // unit,) * 2]
                for lo, hi in ranges:
                    pieces.append((UnitPiece(store.store, path, lo, hi, first_piece, **common), (hi - lo) * unit))
                    first_piece = False
    return _pack(pieces, split)


def index_partitions(stores: Iterable[StoreFiles], options: ReadOptions,
                     pruning: Pruning | None = None) -> list[UnitPartition]:
    """Pieces of whole entries of every selected index file, packed into partitions.

    Each file's header is read here for its entry count; a file whose
    counts or header are wrong is one piece whose reader reports it.
    """
    from rmqformats.errors import RmqFormatError
    from rmqformats.index import ENTRY_SIZE, IndexFile

    split = options.split_size or DEFAULT_UNIT_SPLIT
    step = max(1, split // ENTRY_SIZE)
    pieces: list[tuple[UnitPiece, int]] = []
    pruning = pruning or Pruning(None)
    for store in stores:
        for f in store.files:
            pruning.considered += 1
            if not pruning.keeps(store=store.store, file=os.path.basename(f.path)):
                continue
            pruning.planned += 1
            try:
                with IndexFile(f.path, num_hash_slots=options.hash_slots, num_index=options.index_num) as index:
                    written = index.written_entries()
            except RmqFormatError:
                pieces.append((UnitPiece(store.store, f.path, 1, None, True), ENTRY_SIZE))
                continue
            ranges = [(n, min(n + step, written + 1)) for n in range(1, written + 1, step)]
            for i, (lo, hi) in enumerate(ranges):
                pieces.append((UnitPiece(store.store, f.path, lo, hi, i == 0), (hi - lo) * ENTRY_SIZE))
    return _pack(pieces, split)
