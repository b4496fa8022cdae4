"""The tiered-store plugin's POSIX backend: commit-log and consume-queue segments per topic queue.

``PosixFileSegment`` keeps every file at
``<tieredStoreFilePath>/<md5(cluster)[:8]>_<cluster>/<broker>/<topic>/<queueId>/<TYPE>/<name>``,
``TYPE`` being ``COMMIT_LOG``, ``CONSUME_QUEUE`` or ``INDEX`` and ``name``
the file's base offset as 20 digits after the first 8 hex digits of the
MD5 of that offset in decimal (``MessageStoreUtil.offset2FileName``).

A queue's tiered commit log holds only that queue's messages, copied from
the broker's commit log with PHYSICALOFFSET rewritten to their offset in
the tiered commit log (the ``__CRC32#`` property, if any, is not
recomputed). Files are written by appending, never pre-allocated; a sealed
file may end with a 16-byte coda (size 16, the BLANK magic, the newest
store time). The tiered consume queue is a stream of 20-byte units, as in
``consumequeue/``, whose commit-log offsets are tiered commit-log offsets;
its files are named by ``queue offset * 20``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..commitlog import CommitLog, DataEnd, EndReason, Segment
from ..errors import FileChangedError, TieredFileError, UnitNotFoundError
from ..generated.layouts import rocketmq_consumequeue as cq_layout
from ..mapped import pread_into
from ..message import Message
from ..units import unit_dtype
from ..walk.chain import NOT_CHAINED, ScanChain, refuse_options

#: ``offset2FileName``: 8 hex digits of a hash, then the offset as 20 digits.
FILE_NAME = re.compile(r"^[0-9a-f]{8}(\d{20})$")
TYPES = ("COMMIT_LOG", "CONSUME_QUEUE", "INDEX")
#: ``RMQ_SYS_TIERED_STORE_INDEX_TOPIC``: the pseudo-topic whose queue 0 holds the uploaded index files.
INDEX_TOPIC = "rmq_sys_INDEX"
CQ_UNIT = unit_dtype(cq_layout.UNIT_RUNS, cq_layout.UNIT_SEQ)
CQ_UNIT_SIZE = CQ_UNIT.itemsize
_CLEAN_SEGMENT_ENDS = (EndReason.END_OF_FILE, EndReason.BLANK_LAST)
#: Consume-queue units read at a time.
_CHUNK = 1 << 16


def segment_files(folder: str) -> list[Segment]:
    """The ``offset2FileName`` files of a folder, by base offset."""
    if not os.path.isdir(folder):
        return []
    out = []
    for name in os.listdir(folder):
        m = FILE_NAME.match(name)
        path = os.path.join(folder, name)
        if m and os.path.isfile(path):
            out.append(Segment(path, int(m.group(1)), os.path.getsize(path)))
    out.sort(key=lambda s: s.start_offset)
    return out


class TieredScan(ScanChain):
    """The messages (or, with ``batches``, the record batches) of a tiered commit log, file after file;
    ``end``, ``blanks`` and ``bytes_done`` as a commit-log scan."""

    def __init__(self, log: "TieredCommitLog", start: int | None, options: dict, *, batches: bool = False,
                 columns=None):
        self._log, self._start, self._options, self._batches = log, start, options, batches
        super().__init__(columns, batches=batches)

    def _covered(self, part) -> int:
        return self._file_size  # the whole file, its closing coda included

    def _parts(self):
        log, start = self._log, self._start
        segments = log.segments
        if not segments:
            self.end = DataEnd(0, EndReason.NO_SEGMENTS, None, 0)
            return
        first = 0 if start is None else log.segment_index(start)
        for i in range(first, len(segments)):
            seg = segments[i]
            one = CommitLog(seg.path)
            one.segments = (seg,)  # one file, its base offset from the tiered name
            one.record_crc = False  # the upload rewrote PHYSICALOFFSET, not __CRC32#
            at = start if i == first else None
            part = one.batches(self.columns, start=at, **self._options) if self._batches else \
                one.scan(start=at, **self._options)
            self._file_size = seg.size
            yield part
            if i < len(segments) - 1 and part.end.reason not in _CLEAN_SEGMENT_ENDS:
                return
            if part.end.reason is EndReason.END_OF_FILE and i < len(segments) - 1:
                nxt = segments[i + 1]
                if nxt.start_offset != seg.start_offset + seg.size and not part.blanks:
                    self.end = DataEnd(seg.start_offset + seg.size, EndReason.TRUNCATED, seg.path, seg.size,
                                       f"next file starts at {nxt.start_offset}, not where this one ends")
                    return


class TieredCommitLog(CommitLog):
    """A topic queue's tiered commit log (``COMMIT_LOG/``); offsets are tiered commit-log offsets."""

    layout = "tiered"

    def __init__(self, folder: str | os.PathLike[str]):
        self.path = os.fspath(folder)
        self.segments = tuple(segment_files(self.path))
        self._fds = {}

    def __repr__(self) -> str:
        return f"TieredCommitLog({self.path!r}, {len(self.segments)} files)"

    def scan(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False,
             **options) -> TieredScan:
        refuse_options(self.path, options, "a tiered commit log")
        return TieredScan(self, start, {"verify_crc": verify_crc, "strict": strict})

    def batches(self, columns=None, *, start: int | None = None, **options):
        """Messages as :class:`pyarrow.RecordBatch` objects, file after file, with the filters and options of
        :meth:`CommitLog.batches` (``salvage`` and ``live`` do not apply)."""
        refuse_options(self.path, {k: options.pop(k, None) for k in NOT_CHAINED}, "a tiered commit log")
        return TieredScan(self, start, options, batches=True, columns=columns)


@dataclass(frozen=True)
class TieredUnit:
    """A tiered consume-queue unit: queue offset, and where its message is in the tiered commit log."""

    queue_offset: int
    commitlog_offset: int
    size: int
    tags_code: int


class TieredConsumeQueue:
    """A topic queue's tiered consume queue (``CONSUME_QUEUE/``)."""

    def __init__(self, folder: str | os.PathLike[str], commitlog: TieredCommitLog | None = None):
        self.folder = os.fspath(folder)
        self.files = segment_files(self.folder)
        self.commitlog = commitlog
        for f in self.files:
            if f.start_offset % CQ_UNIT_SIZE:
                raise TieredFileError(f.path, None, f"base offset {f.start_offset} is not a multiple of "
                                                    f"{CQ_UNIT_SIZE}")

    @property
    def min_offset(self) -> int:
        return self.files[0].start_offset // CQ_UNIT_SIZE if self.files else 0

    def units(self) -> Iterator[TieredUnit]:
        """Every unit, by queue offset; a unit that is not valid (``offset < 0`` or ``size <= 0``) ends them."""
        for f in self.files:
            if f.size % CQ_UNIT_SIZE:
                raise TieredFileError(f.path, f.size - f.size % CQ_UNIT_SIZE,
                                      f"size {f.size} is not a whole number of {CQ_UNIT_SIZE}-byte units")
            base = f.start_offset // CQ_UNIT_SIZE
            with open(f.path, "rb") as fh:
                for first in range(0, f.size // CQ_UNIT_SIZE, _CHUNK):
                    n = min(_CHUNK, f.size // CQ_UNIT_SIZE - first)
                    buf = np.empty(n, CQ_UNIT)
                    got = pread_into(fh.fileno(), buf, first * CQ_UNIT_SIZE)
                    if got < n * CQ_UNIT_SIZE:
                        raise FileChangedError(f.path, first * CQ_UNIT_SIZE + got, "the file shrank while it was read")
                    for k, (ofs, size, tags) in enumerate(buf.tolist()):
                        if ofs < 0 or size <= 0:
                            return
                        yield TieredUnit(base + first + k, ofs, size, tags)

    @property
    def max_offset(self) -> int:
        end = self.min_offset
        for u in self.units():
            end = u.queue_offset + 1
        return end

    def message(self, unit: TieredUnit) -> Message:
        if self.commitlog is None:
            raise UnitNotFoundError(self.folder, None, "no tiered commit log to resolve units in")
        return self.commitlog.read(unit.commitlog_offset)
