"""The commit log of a broker in DLedger mode: entries of the DLedger file store, each wrapping one message.

The walk (:mod:`rmqformats.dledger.columnar`) follows the DLedger library's
recovery and decodes the message inside each entry with the commit-log
walk's record decoder; :meth:`DLedgerCommitLog.scan` and
:meth:`DLedgerCommitLog.entries` are views over it, its batches
:meth:`DLedgerCommitLog.batches`.

Messages carry the offsets RocketMQ gives them: ``commitlog_offset`` is the
entry's position plus 48 (``DLedgerEntry.BODY_OFFSET``), the value the broker
writes into PHYSICALOFFSET and the consume queues; ``file_offset`` is the
record's position in its file. :attr:`DataEnd.offset` is an entry position
(DLedger's ``processOffset``).
"""

from __future__ import annotations

import os

import numpy as np

from ..commitlog import CommitLog, Scan
from ..segments import Blank, DataEnd
from ..walk import kernels as K
from ..walk import layout as L
from ..walk.messages import ROWS
from ..walk.chain import NOT_CHAINED, ScanChain, refuse_options
from ..walk.record import decode_message
from ..errors import (
    DLedgerEntryError,
    MessageNotFoundError,
    RecordError,
    RmqFormatError,
    TruncatedRecordError,
)
from ..mapped import pread as _pread
from ..message import Message
from . import columnar
from .columnar import BODY_OFFSET, DLedgerColumnarScan, EntryWalk, MessageWalk
from .entry import DLedgerEndReason, DLedgerEntry  # noqa: F401 - DLedgerEndReason: part of this module's API

#: ``DLedgerEntry.HEADER_SIZE`` (the header without the body length).
HEADER_SIZE = BODY_OFFSET - 4
ENTRY_MAGIC = L.ENTRY_MAGIC
BLANK_MAGIC = L.ENTRY_MAGIC_BLANK
#: Bytes read from a data file at a time (more for a longer entry).
WINDOW = columnar.WINDOW
assert BODY_OFFSET == 48


class DLedgerScan(Scan):
    """An iterator of the messages of a DLedger commit log, in log order.

    A view over the DLedger walk (:class:`rmqformats.dledger.columnar.MessageWalk`): each message is
    made from a row its kernel found. After it is exhausted, :attr:`end` tells where and why the data
    ended (an entry position) and :attr:`blanks` lists the BLANK fillers passed; with ``with_entries``
    it yields the :class:`DLedgerEntry` objects instead. With ``strict=True`` a corrupt end raises its
    typed error. Its end, BLANK fillers, progress and iteration are :class:`~rmqformats.commitlog.Scan`'s.
    """

    def __init__(self, log: "DLedgerCommitLog", start: int | None, verify_crc: bool, strict: bool,
                 with_entries: bool = False):
        walk = EntryWalk if with_entries else MessageWalk
        # WINDOW is read here, at each scan: a program (or a test) may set it.
        self._walk = walk(log, columns=("commitLogOffset",), batch_size=ROWS, decompress=False,
                          verify_crc=verify_crc, strict=strict, start=start, window_size=WINDOW)
        self._gen = self._run()

    @property
    def last_index(self) -> int:
        """Index of the last entry read (-1 before the first)."""
        return self._walk.last_index

    @property
    def last_term(self) -> int:
        """Term of the last entry read (-1 before the first)."""
        return self._walk.last_term


class DLedgerCommitLog(CommitLog):
    """A DLedger commit log: the data files of ``dledger-<selfId>/data`` (or several folders).

    The same API as :class:`~rmqformats.commitlog.CommitLog`: :meth:`scan`,
    :meth:`read` (by message offset, the entry position plus 48),
    :meth:`read_msg_id` and the columnar :meth:`batches`; plus
    :meth:`entries` and the entry :meth:`index`.
    """

    layout = "dledger"

    def __repr__(self) -> str:
        return f"DLedgerCommitLog({self.path!r}, {len(self.segments)} files)"

    @property
    def index_folder(self) -> str | None:
        """The library's ``index/`` folder beside ``data/``, when there is one."""
        from ..segments import split_folders
        folder = os.path.normpath(split_folders(self.path)[0])
        if os.path.isfile(folder):
            folder = os.path.dirname(folder)
        index = os.path.join(os.path.dirname(folder), "index")
        return index if os.path.isdir(index) else None

    def scan(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False,
             **options) -> DLedgerScan:
        """Iterate the messages (from the file holding ``start``); see the module docstring."""
        refuse_options(self.path, options, "a DLedger commit log")
        return DLedgerScan(self, start, verify_crc, strict)

    def entries(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False) -> DLedgerScan:
        """Iterate the :class:`DLedgerEntry` objects (headers and messages), from the data file holding
        position ``start``; ``end`` as :meth:`scan`."""
        return DLedgerScan(self, start, verify_crc, strict, with_entries=True)

    @property
    def entry_log(self) -> "DLedgerCommitLog":
        """The DLedger log whose entries :meth:`entries` and the entry columns of :meth:`batches` give: this one
        (of a store switched to DLedger, its DLedger part)."""
        return self

    def entry_start(self, index: int) -> int | None:
        """Where a walk of :meth:`entries` may start to reach entry ``index`` without reading the files
        before it: the entry's position, as the index (``index/``) gives it and the entry there confirms;
        ``None`` without an index, or where the two disagree (the walk then starts at the beginning)."""
        idx = self.index()
        unit = None if idx is None or index <= 0 else idx.unit(index)
        if unit is None:
            return None
        try:
            entry = self.read_entry(unit.position)
        except RmqFormatError:  # no entry there, or a damaged one: the walk from the start meets it in order
            return None
        return unit.position if entry.index == index else None

    def batches(self, columns=None, *, jobs: int | None = None, fold=None, **options):
        """Messages as :class:`pyarrow.RecordBatch` objects, with the filters of :meth:`CommitLog.batches`;
        ``jobs`` worker processes walk byte ranges of the data files (:mod:`rmqformats.dledger.parallel`)."""
        jobs = self._walk_jobs(jobs)
        if jobs > 1 and not options.get("live"):
            from .parallel import ParallelDLedgerScan
            return ParallelDLedgerScan(self, columns=columns, jobs=jobs, fold=fold, **options)
        return DLedgerColumnarScan(self, columns=columns, **options)  # serial: the caller adds every batch

    def read_entry(self, position: int) -> DLedgerEntry:
        """The entry that starts at ``position`` of the data files, with its message."""
        seg = self.segments[self.segment_index(position)]
        pos = position - seg.start_offset
        fd = self._fd(seg.path)
        head = _pread(fd, BODY_OFFSET, pos)
        if len(head) < BODY_OFFSET:
            raise TruncatedRecordError(seg.path, pos, f"{len(head)} bytes left, less than an entry header")
        fields = np.empty((K.N_E, 1), np.int64)
        K.entry_header(np.frombuffer(head, np.uint8), 0, fields, 0, True)
        magic, size, index, term, ofs, channel, chain_crc, body_crc, len_body, _ = fields[:, 0].tolist()
        if magic == BLANK_MAGIC:
            raise MessageNotFoundError(seg.path, pos, "no entry starts here (the BLANK filler)")
        if magic != ENTRY_MAGIC or ofs != position:
            raise MessageNotFoundError(seg.path, pos, f"no entry starts here (magic {magic}, pos {ofs})")
        if len_body + BODY_OFFSET != size:
            raise DLedgerEntryError(seg.path, pos, f"entry size {size} is not body length {len_body} + {BODY_OFFSET}")
        left = seg.size - pos
        if size > left:
            raise TruncatedRecordError(seg.path, pos, f"entry size {size} runs past the end of the file "
                                                      f"({left} bytes left)")
        data = _pread(fd, len_body, pos + BODY_OFFSET)
        p = pos + BODY_OFFSET
        if len(data) < L.HEADER:
            raise TruncatedRecordError(seg.path, p, "entry body shorter than a record header")
        try:
            msg = decode_message(data, 0, seg.path, seg.start_offset + p)
        except RecordError as exc:
            raise type(exc)(exc.path, p + (exc.offset or 0), exc.reason) from None
        return DLedgerEntry(index, term, ofs, size, channel, chain_crc, body_crc, seg.path, pos,
                            msg._replace(file_offset=p))

    def read(self, offset: int) -> Message:
        """The message whose record starts at ``offset`` (its entry's position plus 48)."""
        seg = self.segments[self.segment_index(offset)]
        if offset - seg.start_offset < BODY_OFFSET:
            raise MessageNotFoundError(seg.path, offset - seg.start_offset,
                                       f"no message starts here (offset {offset} is inside an entry header)")
        return self.read_entry(offset - BODY_OFFSET).message

    def index(self):
        """The entry index files (``index/``), or ``None`` without them."""
        from .index import DLedgerIndex
        folder = self.index_folder
        return None if folder is None else DLedgerIndex(folder)


class MixedScan(ScanChain):
    """The messages (or, with ``batches``, the record batches) of the old commit log, then those of the DLedger
    log; ``end`` is where the data ends."""

    def __init__(self, log: "MixedCommitLog", start: int | None, options: dict, *, batches: bool = False,
                 columns=None):
        self._log, self._start, self._options, self._batches = log, start, options, batches
        super().__init__(columns, batches=batches)

    def _open(self, log, start):
        if self._batches:
            return log.batches(self.columns, start=start, **self._options)
        return log.scan(start=start, **self._options)

    def _parts(self):
        log, start = self._log, self._start
        if start is None or start < log.divided_offset:
            yield self._open(log.old, start)
            if not self.end.reason.is_clean:
                return
            start = None
        yield self._open(log.new, start)


class MixedCommitLog(DLedgerCommitLog):
    """A store switched to DLedger: the old ``commitlog/`` up to ``dividedCommitlogOffset``, then the DLedger data.

    RocketMQ's ``DLedgerCommitLog`` reads offsets below the first DLedger
    file's start from the old commit log (which it closed with a BLANK
    record) and the others from DLedger.
    """

    layout = "dledger"

    def __init__(self, old: str, new: str):
        self.old = CommitLog(old)
        self.new = DLedgerCommitLog(new)
        self.path = new
        self._fds = {}
        self.segments = (*self.old.segments, *self.new.segments)

    def __repr__(self) -> str:
        return f"MixedCommitLog({self.old.path!r}, {self.new.path!r})"

    @property
    def divided_offset(self) -> int:
        """``dividedCommitlogOffset``: where the DLedger data starts."""
        return self.new.segments[0].start_offset if self.new.segments else \
            max((s.start_offset + s.size for s in self.old.segments), default=0)

    def scan(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False,
             **options) -> MixedScan:
        refuse_options(self.path, options, "a DLedger commit log")
        return MixedScan(self, start, {"verify_crc": verify_crc, "strict": strict})

    def entries(self, *, verify_crc: bool = False, strict: bool = False) -> DLedgerScan:
        return self.new.entries(verify_crc=verify_crc, strict=strict)

    @property
    def entry_log(self) -> DLedgerCommitLog:
        return self.new

    def batches(self, columns=None, *, start: int | None = None, **options):
        """The record batches of the old log's walk, then the DLedger log's, with the filters and options of
        :meth:`DLedgerCommitLog.batches`."""
        refuse_options(self.path, {k: options.pop(k, None) for k in NOT_CHAINED}, "a DLedger commit log")
        return MixedScan(self, start, options, batches=True, columns=columns)

    def read(self, offset: int) -> Message:
        return self.new.read(offset) if offset >= self.divided_offset else self.old.read(offset)

    def read_entry(self, position: int) -> DLedgerEntry:
        return self.new.read_entry(position)

    @property
    def index_folder(self) -> str | None:
        return self.new.index_folder

    def close(self) -> None:
        self.old.close()
        self.new.close()
