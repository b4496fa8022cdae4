"""The store checked from the commit log's side: queues, index and timer log against the messages.

:func:`cross_check` walks the commit log once with the columnar decoder (in
bounded batches) and, for every message, works out what the broker's
dispatch would have written for it:

* a consume-queue unit (``CommitLogDispatcherBuildConsumeQueue``): for every
  message that is not a transaction PREPARED or ROLLBACK, in the queue and at
  the queue offset the record names (a delayed message is stored under
  ``SCHEDULE_TOPIC_XXXX``, queue ``delayLevel - 1``, a retry under
  ``%RETRY%group``: the record already says so), plus one unit per light
  message queue of ``INNER_MULTI_DISPATCH`` at its ``INNER_MULTI_QUEUE_OFFSET``
  (queue 0 of a ``%LMQ%`` queue); a topic with batch consume queues gets a
  batch unit whose base offset is the record's queue offset;
* index entries (``IndexService.buildIndex``): one for ``topic#UNIQ_KEY`` and
  one per ``topic#key`` of ``KEYS`` (split on spaces, empty keys skipped),
  for every message but a transaction ROLLBACK.

It then reports the ones that are missing, and, the other way round,
consume-queue units past the end of the commit log's data, index entries
that point at no message (or at one without that key), timer-log units that
point past the end or at a record that is not a timer message, queues
behind or ahead of the commit log, and what the broker would dispatch again
or truncate on its next start, with or without a clean shutdown (from the
checkpoint's timestamps), and the messages past the checkpoint's confirm
offset. Every finding names the file and byte on both sides (a RocksDB
record: the database folder, column family and key).

RocksDB consume queues (5.2.0+, in ``consumequeue/`` or 5.5's
``consumequeue_rocksdb/``) are checked as file queues are, unit by unit,
and their ``max`` / ``min`` values in the ``offset`` column family against
the commit log; the 5.4+ RocksDB message store (``rocksdbstore/``): timer
records as timer-log units, transaction and index records for pointing past
the end of the data.

With the commit log's ``jobs`` above 1, the walk's workers do each batch's
work (:class:`_CheckFold`): the units each queue should hold, compared with
its files, and the index keys; the reader applies their digests in
commit-log order and matches the index entries. A batch's findings are put
in commit-log order (then kind, queue, queue offset), so the findings, and
which of them the limit keeps, are the same for any jobs and batch size.

Memory stays bounded: the commit log, the queues and the index files are
read in batches, per-queue state is a few integers, and at most
``max_findings`` findings are kept (all are counted).

The module is one piece past the usual size because every part works on the
one walk's batches and shares its state (the per-queue states, the
segments' places, the findings and their limit): split, the parts would
import each other.
"""

from __future__ import annotations

import bisect
import contextlib
import enum
import os
import pickle
import tempfile
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..commitlog import DataEnd
from ..consumequeue import (DEFAULT_DELAY_LEVELS_MS, INNER_MULTI_DISPATCH, INNER_MULTI_QUEUE_OFFSET, SCHEDULE_TOPIC,
                            deleted_below, tally_units)
from ..consumequeue import UNIT_DTYPE as CQ_UNIT_DTYPE
from ..frames import from_numpy, map_key_rows, present_rows, scalar, to_numpy
from ..walk.arrow import property_column
from ..errors import RmqFormatError, place
from ..generated.layouts import rocketmq_commitlog as cl_layout
from ..generated.layouts import rocketmq_consumequeue as cq_layout
from ..javahash import tags_code
from ..message import format_millis
from .keyhash import key_hashes
from .queueunits import QueueUnits
from ..queuefiles import queue_files

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint
    from ..store import Store

#: The SYSFLAG bits of the transaction type, and its values (``MessageSysFlag``).
_TRAN_MASK, _TRAN_SHIFT = cl_layout.SYS_FLAG_BITS["transaction_type"]
TRAN_PREPARED = cl_layout.TRANSACTION_TYPE["prepared"]
TRAN_ROLLBACK = cl_layout.TRANSACTION_TYPE["rollback"]
#: ``TimerMessageStore.TIMER_TOPIC``: the topic timer messages are stored under until due.
TIMER_TOPIC = "rmq_sys_wheel_timer"
#: ``MessageConst.PROPERTY_TIMER_OUT_MS``: every record the timer log points at carries it.
TIMER_OUT_MS = "TIMER_OUT_MS"
#: ``MixAll.RETRY_GROUP_TOPIC_PREFIX``, ``TopicValidator.SYSTEM_TOPIC_PREFIX``, ``MixAll.LMQ_PREFIX``.
RETRY_PREFIX = "%RETRY%"
SYSTEM_PREFIX = "rmq_sys_"
LMQ_PREFIX = "%LMQ%"
#: ``MixAll.LMQ_DISPATCH_SEPARATOR``.
LMQ_SEPARATOR = ","
#: Messages decoded per batch of the walk.
BATCH_ROWS = 65536
#: Index entries read per positioned read.
_INDEX_CHUNK = 65536
_CQ_UNIT = CQ_UNIT_DTYPE.itemsize
_CQ_OFS, _CQ_LEN, _CQ_TAGS = CQ_UNIT_DTYPE.names or ()
#: ``mappedFileSizeConsumeQueue`` default (300,000 units): names a missing file of a queue with none left.
_DEFAULT_CQ_FILE = 300_000 * _CQ_UNIT
#: The properties the dispatch reads besides TAGS, KEYS and UNIQ_KEY: the delay level (the tags code of a
#: SCHEDULE_TOPIC_XXXX unit), the light queues, and a batch message's first queue offset and count.
DISPATCH_PROPERTIES = ("DELAY", INNER_MULTI_DISPATCH, INNER_MULTI_QUEUE_OFFSET, "INNER_BASE", "INNER_NUM")
_COLUMNS = ["commitLogOffset", "storeSize", "queueId", "queueOffset", "sysFlag", "storeTimestamp", "topic",
            "tags", "keys", "uniqKey", *map(property_column, DISPATCH_PROPERTIES)]
_IS_EXT_ADDRESS = cq_layout.UNIT_VALUES["is_ext_address"]


class Severity(enum.Enum):
    """A problem (the store disagrees with itself) or a note (what the broker would do)."""

    PROBLEM = "problem"
    NOTE = "note"


class Kind(enum.Enum):
    """What a finding is about."""

    MISSING_UNIT = "missing-unit"
    UNIT_PAST_END = "unit-past-end"
    UNIT_NO_SEGMENT = "unit-in-missing-segment"
    QUEUE_BEHIND = "queue-behind"
    QUEUE_AHEAD = "queue-ahead"
    MISSING_INDEX = "missing-index-entry"
    INDEX_ORPHAN = "index-entry-points-at-nothing"
    NO_INDEX = "no-index-files"
    INDEX_TIMES = "index-header-matches-no-time"
    COMMITLOG_GAP = "commit-log-gap"
    SEGMENT_OVERLAP = "segment-named-inside-another"
    TIMER_PAST_END = "timer-unit-past-end"
    TIMER_NOT_TIMER = "timer-unit-not-a-timer-message"
    QUEUE_BOUND = "queue-bound-disagrees"
    TRANS_PAST_END = "transaction-record-past-end"
    UNREADABLE = "unreadable"
    NOT_CHECKED = "not-checked"
    RESTART = "restart-dispatch"
    ABNORMAL_RECOVERY = "abnormal-recovery"
    AFTER_CHECKPOINT = "after-checkpoint"
    AFTER_CONFIRM = "after-confirm-offset"
    NOT_DOUBLE_WRITTEN = "not-double-written"


_SEVERITY = {k: Severity.PROBLEM for k in Kind}
_SEVERITY.update({Kind.NOT_CHECKED: Severity.NOTE, Kind.RESTART: Severity.NOTE, Kind.ABNORMAL_RECOVERY: Severity.NOTE,
                  Kind.AFTER_CHECKPOINT: Severity.NOTE, Kind.AFTER_CONFIRM: Severity.NOTE,
                  Kind.NOT_DOUBLE_WRITTEN: Severity.NOTE})


@dataclass(frozen=True)
class Place:
    """A byte in a store file: whole path and byte position (``None``: the file or folder as a whole)."""

    path: str
    offset: int | None = None
    #: The file does not exist (a place a record should be at).
    absent: bool = False
    #: In a RocksDB database (``path``): the column family and the key, as text.
    key: str | None = None
    #: The file exists but ends before ``offset`` (a segment cut short): its length.
    file_length: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        text = place(self.path, self.offset)
        if self.key is not None:
            text += f" {self.key}"
        if self.file_length is not None:
            text += f" (past the end of the file, {self.file_length} bytes)"
        return text + (" (no such file)" if self.absent else "")

    def to_json_dict(self) -> dict:
        out = {"path": self.path, "offset": self.offset, "absent": self.absent}
        if self.key is not None:
            out["key"] = self.key
        return out


@dataclass(frozen=True)
class Finding:
    """One thing :func:`cross_check` found, with the commit-log side and the other file's side."""

    kind: Kind
    text: str
    #: Where in the commit log (the message, or where the pointer leads).
    commitlog: Place | None = None
    #: Where in the consume queue, index file or timer log.
    other: Place | None = None
    topic: str | None = None
    queue_id: int | None = None
    queue_offset: int | None = None
    commitlog_offset: int | None = None

    @property
    def severity(self) -> Severity:
        return _SEVERITY[self.kind]

    def __str__(self) -> str:
        sides = "; ".join(f"{name} {place}" for name, place in (("commit log", self.commitlog),
                                                                  (self.other_label(), self.other)) if place)
        return f"{self.text}" + (f" [{sides}]" if sides else "")

    def other_label(self) -> str:
        """What the other side is: ``queue``, ``index``, ``timer log`` or ``checkpoint``."""
        if self.kind in (Kind.MISSING_INDEX, Kind.INDEX_ORPHAN, Kind.NO_INDEX, Kind.INDEX_TIMES):
            return "index"
        if self.kind in (Kind.TIMER_PAST_END, Kind.TIMER_NOT_TIMER):
            return "timer store" if self.other is not None and self.other.key is not None else "timer log"
        if self.kind is Kind.TRANS_PAST_END:
            return "transaction store"
        if self.kind in (Kind.ABNORMAL_RECOVERY, Kind.AFTER_CHECKPOINT, Kind.AFTER_CONFIRM):
            return "checkpoint"
        if self.kind is Kind.UNREADABLE and self.topic is None:  # a file that is no queue's
            return "file"
        return "queue"

    def to_json_dict(self) -> dict:
        return {"kind": self.kind.value, "severity": self.severity.value, "text": self.text,
                "commitLog": self.commitlog.to_json_dict() if self.commitlog else None,
                "other": self.other.to_json_dict() if self.other else None,
                "topic": self.topic, "queueId": self.queue_id, "queueOffset": self.queue_offset,
                "commitLogOffset": self.commitlog_offset}


@dataclass(frozen=True)
class RecoveryPlan:
    """What the broker would do with the store on its next start."""

    #: No ``abort`` file: the next start runs the normal recovery.
    clean_shutdown: bool
    checkpoint: Checkpoint | None
    data_end: DataEnd | None
    #: ``maxPhyOffsetOfConsumeQueue``: the largest end (offset + size) of a unit in any queue.
    max_queue_end: int
    #: Messages at or after ``max_queue_end`` (dispatched again by either recovery), and the first.
    restart_dispatch: int
    restart_first: int | None
    #: The segment abnormal recovery starts from (the newest whose first message was stored at or
    #: before the checkpoint's ``getMinTimestamp``), its offset, and the messages it dispatches again.
    abnormal_segment: str | None
    abnormal_start: int
    abnormal_dispatch: int
    #: Units of any queue pointing at or past the end of data: ``truncateDirtyLogicFiles`` removes them.
    truncated_units: int
    #: Messages stored after each checkpoint timestamp: (count, first commit-log offset).
    after_physic: tuple[int, int | None] = (0, None)
    after_logics: tuple[int, int | None] = (0, None)
    after_index: tuple[int, int | None] = (0, None)
    #: Messages starting past the checkpoint's ``confirmPhyOffset`` (5.1.1+; 0: not written): (count, first).
    after_confirm: tuple[int, int | None] = (0, None)

    def to_json_dict(self) -> dict:
        cp = self.checkpoint
        return {
            "cleanShutdown": self.clean_shutdown,
            "checkpoint": None if cp is None else {
                "physicMsgTimestamp": cp.physic_msg_timestamp, "logicsMsgTimestamp": cp.logics_msg_timestamp,
                "indexMsgTimestamp": cp.index_msg_timestamp, "minTimestamp": cp.min_timestamp},
            "dataEnd": None if self.data_end is None else {
                "offset": self.data_end.offset, "reason": self.data_end.reason.value,
                "segment": self.data_end.segment, "fileOffset": self.data_end.file_offset},
            "maxQueueEnd": self.max_queue_end, "restartDispatch": self.restart_dispatch,
            "restartFirst": self.restart_first, "abnormalSegment": self.abnormal_segment,
            "abnormalStart": self.abnormal_start, "abnormalDispatch": self.abnormal_dispatch,
            "truncatedUnits": self.truncated_units,
            "afterPhysicMsgTimestamp": list(self.after_physic), "afterLogicsMsgTimestamp": list(self.after_logics),
            "afterIndexMsgTimestamp": list(self.after_index), "afterConfirmOffset": list(self.after_confirm),
        }


@dataclass(frozen=True)
class CrossCheck:
    """The result of :func:`cross_check`."""

    #: Messages walked, and those that should have a queue unit / index entries.
    messages: int
    dispatched: int
    indexed: int
    queues: int
    index_entries: int
    timer_units: int
    findings: tuple[Finding, ...]
    #: Every finding counted, including those past ``max_findings``.
    counts: dict[Kind, int]
    recovery: RecoveryPlan
    #: Per queue ``(topic, queueId)``: messages of the commit log the queue lacks past its end.
    behind: dict[tuple[str, int], int] = field(default_factory=dict)
    #: Per consume queue: units within its range that agree with their message in every field the
    #: one-way check compares (offset, size, tags code; queue and offset by construction).
    verified: dict[tuple[str, int], int] = field(default_factory=dict)
    #: The BLANK records the walk passed (one per full segment).
    blanks: tuple = ()
    #: Damaged ranges the walk skipped; see :func:`damaged_ranges`.
    damaged: tuple = ()
    #: The file and RocksDB consume queues as the check listed them (``Store.queues()``, in its order), for a
    #: caller that checks them again (``check_consistency``'s ``queues``); ``None`` where the RocksDB one
    #: could not be read.
    listed: tuple | None = None
    #: Per file consume queue: its units counted as ``check_consistency`` counts them (``(units, of them in
    #: deleted ranges)``, :func:`rmqformats.consumequeue.tally_units`) while looking for units past the end
    #: of data, for a caller that checks the queues again (``check_consistency``'s ``counted``).
    counted: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)

    @property
    def problems(self) -> int:
        """Number of problems found (notes not counted)."""
        return sum(n for k, n in self.counts.items() if _SEVERITY[k] is Severity.PROBLEM)

    @property
    def ok(self) -> bool:
        return self.problems == 0

    @property
    def truncated(self) -> bool:
        """More findings were counted than kept."""
        return sum(self.counts.values()) > len(self.findings)


class _Findings:
    """Findings kept up to a limit, all counted."""

    def __init__(self, limit: int):
        self.limit = limit
        self.kept: list[Finding] = []
        self.counts: Counter[Kind] = Counter()

    def add(self, finding: Finding) -> None:
        self.counts[finding.kind] += 1
        if len(self.kept) < self.limit:
            self.kept.append(finding)

    def full(self, kind: Kind) -> bool:
        """Only counting from now on (callers can skip building the text)."""
        return len(self.kept) >= self.limit


# -- places ---------------------------------------------------------------------------------


class _Segments:
    """Commit-log places from offsets."""

    def __init__(self, store: Store):
        self.segments = store.commitlog.segments
        self.starts = [s.start_offset for s in self.segments]
        self.folder = store.commitlog.path
        # No segment holding bytes: names as of the default mappedFileSizeCommitLog (1 GiB).
        self.size = max((s.size for s in self.segments), default=0) or 1 << 30

    def place(self, offset: int) -> Place:
        i = bisect.bisect_right(self.starts, offset) - 1
        if i >= 0:
            seg = self.segments[i]
            if offset < seg.start_offset + seg.size:
                return Place(seg.path, offset - seg.start_offset)
            if offset < seg.start_offset + self.size:  # a segment shorter than the others: cut short
                return Place(seg.path, offset - seg.start_offset, file_length=seg.size)
        name = offset // self.size * self.size
        folder = self.folder if os.path.isdir(self.folder) else os.path.dirname(self.folder)
        return Place(os.path.join(folder, f"{name:020d}"), offset - name, absent=True)

    @property
    def first(self) -> int:
        return self.starts[0] if self.starts else 0


#: A read of a queue's units for a batch takes up to this many times as many (and at most
#: :data:`_AHEAD_UNITS`): a batch of a broker with many queues holds a few messages of each.
_AHEAD_TIMES = 16
_AHEAD_UNITS = 4096
#: The most bytes of units read ahead held for all queues together.
_AHEAD_BYTES = 16 << 20


class _ReadAhead:
    """Units of many queues read ahead of the walk, each queue's latest read kept, the least recently used
    dropped past :data:`_AHEAD_BYTES`."""

    def __init__(self, budget: int = _AHEAD_BYTES):
        self.budget = budget
        self._held: OrderedDict[str, tuple[int, np.ndarray]] = OrderedDict()
        self._bytes = 0

    def get(self, key: str, start: int, stop: int) -> np.ndarray | None:
        """Units ``start`` to ``stop - 1`` of queue ``key`` where they are held."""
        held = self._held.get(key)
        if held is None or held[0] > start or stop > held[0] + len(held[1]):
            return None
        self._held.move_to_end(key)
        return held[1][start - held[0]:stop - held[0]]

    def put(self, key: str, first: int, units: np.ndarray) -> None:
        """Hold queue ``key``'s units from unit ``first`` (in place of those held before)."""
        old = self._held.pop(key, None)
        if old is not None:
            self._bytes -= old[1].nbytes
        self._held[key] = (first, units)
        self._bytes += units.nbytes
        while self._bytes > self.budget and len(self._held) > 1:
            _, (_, dropped) = self._held.popitem(last=False)
            self._bytes -= dropped.nbytes


class _RawQueue:
    """A consume queue's unit files read as stored, ignoring where recovery would end the queue."""

    def __init__(self, folder: str):
        self.folder = folder
        self.files = queue_files(folder)
        self.starts = [f.start for f in self.files]
        self.file_size = self.files[-1].size if self.files else _DEFAULT_CQ_FILE
        self.first_unit = self.files[0].start // _CQ_UNIT if self.files else 0
        self._end: int | None = None

    def place(self, unit: int) -> Place:
        pos = unit * _CQ_UNIT
        i = bisect.bisect_right(self.starts, pos) - 1
        if i >= 0 and pos < self.files[i].start + self.files[i].size:
            return Place(self.files[i].path, pos - self.files[i].start)
        size = self.file_size or _DEFAULT_CQ_FILE
        name = pos // size * size
        return Place(os.path.join(self.folder, f"{name:020d}"), pos - name, absent=True)

    def read(self, start: int, stop: int, ahead: _ReadAhead | None = None,
             upto: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
        """Units ``start`` to ``stop - 1``, and which of them a file holds (``None``: all).

        With ``ahead``, units are served from it where it holds them, and a
        read takes more units than asked for, up to ``upto`` (where the queue
        ended when the queues were listed: units past it may still be written)
        and the file's end, which it then holds for the next reads.
        """
        if ahead is not None:
            held = ahead.get(self.folder, start, stop)
            if held is not None:
                return held, None
        lo, hi = start * _CQ_UNIT, stop * _CQ_UNIT
        i = bisect.bisect_right(self.starts, lo) - 1
        end = self.files[i].start + self.files[i].size - self.files[i].size % _CQ_UNIT if i >= 0 else 0
        if i >= 0 and hi <= end:
            f = self.files[i]  # one file holds them all: one read, nothing to fill in
            want = hi
            if ahead is not None and upto > stop:
                want = max(hi, min(end, upto * _CQ_UNIT, lo + min(_AHEAD_TIMES * (hi - lo), _AHEAD_UNITS * _CQ_UNIT)))
            fd = os.open(f.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                data = os.pread(fd, want - lo, lo - f.start)
            finally:
                os.close(fd)
            if len(data) >= hi - lo:  # (else the file shrank: read as below)
                units = np.frombuffer(data, CQ_UNIT_DTYPE, len(data) // _CQ_UNIT)
                if ahead is not None and len(units) > stop - start:
                    ahead.put(self.folder, start, units)
                return units[:stop - start], None
        units = np.zeros(stop - start, CQ_UNIT_DTYPE.newbyteorder("="))
        present = np.zeros(stop - start, bool)
        for f in self.files:
            a, b = max(lo, f.start), min(hi, f.start + f.size - f.size % _CQ_UNIT)
            if a >= b:
                continue
            fd = os.open(f.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                data = os.pread(fd, b - a, a - f.start)
            finally:
                os.close(fd)
            n = len(data) // _CQ_UNIT
            i = (a - lo) // _CQ_UNIT
            units[i:i + n] = np.frombuffer(data[:n * _CQ_UNIT], CQ_UNIT_DTYPE)
            present[i:i + n] = True
        return units, present


# -- the walk ---------------------------------------------------------------------------------


def _batch_topics(store: Store) -> frozenset[str]:
    """The topics whose units are in ``batchconsumequeue/`` (``queue.type=BatchCQ`` or its folder exists)."""
    batch: set[str] = set()
    try:
        path = store.path("config", "topics.json")
        if os.path.exists(path) or os.path.exists(path + ".bak"):
            from ..config import read_config_file  # its schemas take 0.2 s to load: only for a config file
            model = read_config_file(path).model
            if model is not None:
                batch = {n for n, t in model.topic_config_table.items() if t.queue_type == "BatchCQ"}
    except (RmqFormatError, OSError, ValueError):
        pass
    parent = store.path("batchconsumequeue")
    if os.path.isdir(parent):
        batch |= set(os.listdir(parent))
    return frozenset(batch)


def _multi_dispatch(topic: str) -> bool:
    """``MultiDispatchUtils.isNeedHandleMultiDispatch`` (with ``enableMultiDispatch``)."""
    return not (topic.startswith(RETRY_PREFIX) or topic.startswith(SYSTEM_PREFIX) or topic == SCHEDULE_TOPIC)


class _QueueState:
    """What the walk learnt about one queue."""

    __slots__ = ("next", "last_offset", "missing", "batch", "matched", "first")

    def __init__(self, batch: bool):
        self.matched = 0  # units within the queue's range that agree with their message in every field
        self.first = -1  # smallest queue offset of a message of the queue in the commit log
        self.next = -1  # queue offset after the newest message of the queue in the commit log
        self.last_offset = -1  # that message's commit-log offset
        self.missing = 0
        self.batch = batch


def cross_check(store: Store, *, index: bool = True, timer: bool = True, max_findings: int = 1000,
                index_safe: bool = False, batch_size: int = BATCH_ROWS,
                delay_levels_ms: tuple[int, ...] = DEFAULT_DELAY_LEVELS_MS,
                on_batch: Callable[[pa.RecordBatch], None] | None = None, columns: Iterable[str] = (),
                decompress: bool = False, num_hash_slots: int | None = None,
                num_index: int | None = None) -> CrossCheck:
    """Check the store from the commit log's side (see the module docstring).

    ``index`` / ``timer`` turn the index and timer-log parts on or off;
    ``index_safe`` is the broker's ``messageIndexSafe`` (abnormal recovery
    then starts from the index flush mark too). ``on_batch`` receives every
    record batch of the walk (columns ``commitLogOffset``, ``storeSize``,
    ``queueId``, ``queueOffset``, ``sysFlag``, ``storeTimestamp``, ``topic``,
    …, and those of ``columns``, with bodies decompressed when ``decompress``)
    so a caller can aggregate in the same pass.
    """
    found = _Findings(max_findings)
    segs = _Segments(store)
    batch_topics = _batch_topics(store)
    cq_ends: dict[tuple[str, int], int] = {}
    #: The file consume queues' ends as listed, used again below rather than found again.
    file_ends: dict[tuple[str, int], int] = {}

    # 5.2+ RocksDB consume queue (consumequeue/ or 5.5 consumequeue_rocksdb/): checked unit by unit below.
    rocks = _Rocks.open(store, found)
    rocksdb_queues = rocks is not None or _rocksdb_unreadable(store)
    # The queue ends recovery would keep, and the broker's ``maxPhyOffsetOfConsumeQueue``.
    max_queue_end = segs.first
    listed: list[tuple[str, int, bool]] = []
    from ..consumequeue import list_queues  # file consume queues (the RocksDB ones are in ``rocks``)
    file_queues = list_queues(store.path("consumequeue"), store)
    for batch, infos in ((False, file_queues), (True, store.batch_queues())):
        for info in infos:
            listed.append((info.topic, info.queue_id, batch))
            if info.error:
                found.add(Finding(Kind.UNREADABLE, f"{info.topic}/{info.queue_id}: {info.error}",
                                  other=Place(info.folder), topic=info.topic, queue_id=info.queue_id))
                continue
            cq_ends[(info.topic, info.queue_id)] = info.max_offset
            if not batch:
                file_ends[(info.topic, info.queue_id)] = info.max_offset
            unit_end = _last_unit_end(store, info.topic, info.queue_id, batch, file_ends)
            if unit_end is not None:
                max_queue_end = max(max_queue_end, unit_end)

    if rocks is not None:
        max_queue_end = max(max_queue_end, rocks.max_end)

    cp = None
    try:
        cp = store.checkpoint()
    except RmqFormatError as exc:
        found.add(Finding(Kind.UNREADABLE, exc.whole(), other=Place(store.path("checkpoint"))))
    confirm = cp.confirm_phy_offset if cp is not None else 0
    # A 5.4+ broker indexing in RocksDB (indexRocksDBEnable) writes no index files: its records are checked below.
    index_files = _IndexStream(store, num_hash_slots, num_index, found) \
        if index and not _index_in_rocksdb(store) else None
    marks = {} if cp is None else {"physic": cp.physic_msg_timestamp, "logics": cp.logics_msg_timestamp,
                                   "index": cp.index_msg_timestamp}

    index_mode = None if index_files is None else "unreadable" if index_files.unreadable and not index_files.files \
        else "count" if index_files.missing_all else "match"
    consts = _Dispatch(segs=segs, batch_topics=batch_topics, cq_root=store.path("consumequeue"),
                       cq_ends=cq_ends, max_queue_end=max_queue_end, confirm=confirm,
                       marks=tuple(marks.items()), delay_levels_ms=tuple(delay_levels_ms),
                       units="none" if rocks is None and rocksdb_queues else "here" if rocks is None else "reader",
                       index=index_mode, limit=max_findings)
    walk_state = _WalkState(store, consts, found, rocks, index_files)
    fold = _CheckFold(consts, walk_state)
    # Without a caller of its own batches, the workers of a parallel walk take the batch work (see _CheckFold).
    walk = store.commitlog.batches(columns=list(dict.fromkeys([*_COLUMNS, *columns])), batch_size=batch_size,
                                   decompress=decompress, fold=fold if on_batch is None else None)
    try:
        for batch in walk:
            if on_batch is not None:
                on_batch(batch)
            fold.add(batch)
    finally:
        fold.close()
    messages, dispatched, indexed = walk_state.messages, walk_state.dispatched, walk_state.indexed
    queues, raw_queues = walk_state.queues, walk_state.raw_queues
    restart, after, after_confirm = walk_state.restart, walk_state.after, walk_state.after_confirm
    seg_first, seg_count = walk_state.seg_first, walk_state.seg_count

    end = walk.end
    data_end = end.offset if end is not None else None
    if index_files is not None:
        index_files.finish(segs, data_end)
    _check_segment_files(store.commitlog.segments, data_end, found)

    # Queues behind (the commit log has messages past their end) or ahead of the commit log.
    behind: dict[tuple[str, int], int] = {}
    for (topic, q), state in queues.items():
        cq_end = cq_ends.get((topic, q), 0)
        raw = raw_queues.get((topic, q))
        where = raw.place(cq_end) if raw is not None else _last_unit_place(store, topic, q, state.batch, file_ends)
        if state.next > cq_end:
            behind[(topic, q)] = state.next - cq_end
            found.add(Finding(
                Kind.QUEUE_BEHIND,
                f"{topic}/{q}: the queue ends at offset {cq_end} but the commit log holds its messages up to "
                f"queue offset {state.next - 1}: {state.next - cq_end} message(s) have no unit, so consumers "
                f"do not see them and lag is understated",
                segs.place(state.last_offset), where, topic, q, cq_end, state.last_offset))
        elif state.next < cq_end and data_end is not None:
            found.add(Finding(
                Kind.QUEUE_AHEAD,
                f"{topic}/{q}: the queue has units up to offset {cq_end - 1} but the commit log's messages of "
                f"this queue end at queue offset {state.next - 1}",
                segs.place(data_end), raw.place(state.next) if raw is not None else where, topic, q,
                state.next, data_end))
    for topic, q, batch in listed:
        if (topic, q) in queues or (topic, q) not in cq_ends:
            continue
        last_at = _last_unit_offset(store, topic, q, batch, file_ends)
        if last_at is not None and last_at >= segs.first and cq_ends[(topic, q)] > 0:
            found.add(Finding(
                Kind.QUEUE_AHEAD,
                f"{topic}/{q}: the queue has units up to offset {cq_ends[(topic, q)] - 1} but the commit log "
                f"holds none of its messages",
                segs.place(last_at), _last_unit_place(store, topic, q, batch, file_ends), topic, q, None, last_at))

    truncated = 0
    counted: dict[tuple[str, int], tuple[int, int]] = {}
    if data_end is not None:
        truncated = _units_past_end(store, listed, data_end, segs, found, file_ends, counted)
    if rocks is not None:
        rocks.finish(segs, data_end, found)
        if data_end is not None:
            truncated += rocks.units_past_end(segs, data_end, found)

    timer_units = _check_timer(store, data_end, segs, found) if timer else 0
    timer_units += _check_rocksdb_messages(store, data_end, segs, found, timer=timer, index=index)
    if confirm > 0 and after_confirm[0]:
        _confirm_note(confirm, after_confirm, data_end, segs, found, store.path("checkpoint"))

    # Abnormal recovery: from the newest segment whose first message was stored at or before the mark.
    abnormal_idx = 0
    if cp is not None:
        mark = min(cp.min_timestamp, cp.min_timestamp_index) if index_safe else cp.min_timestamp
        for i in range(len(segs.segments) - 1, -1, -1):
            t = seg_first.get(i)
            if t is not None and t != 0 and t <= mark:
                abnormal_idx = i
                break
    abnormal_seg = segs.segments[abnormal_idx] if segs.segments else None
    abnormal_dispatch = sum(c for i, c in seg_count.items() if i >= abnormal_idx)
    plan = RecoveryPlan(
        clean_shutdown=not store.has_abort_file, checkpoint=cp, data_end=end, max_queue_end=max_queue_end,
        restart_dispatch=int(restart[0]), restart_first=restart[1],
        abnormal_segment=abnormal_seg.path if abnormal_seg else None,
        abnormal_start=abnormal_seg.start_offset if abnormal_seg else 0, abnormal_dispatch=abnormal_dispatch,
        truncated_units=truncated, after_physic=(after["physic"][0], after["physic"][1]),
        after_logics=(after["logics"][0], after["logics"][1]), after_index=(after["index"][0], after["index"][1]),
        after_confirm=(after_confirm[0], after_confirm[1]))
    _recovery_notes(plan, segs, found, store.path("checkpoint"))
    if rocks is not None:
        _not_double_written(listed, rocks, found)
    verified = {k: st.matched for k, st in queues.items() if not st.batch}
    if rocks is not None:
        behind.update({k: n for k, n in rocks.behind.items() if k not in behind})
        verified.update({k: st.matched for k, st in rocks.states.items() if k not in verified})
    return CrossCheck(messages, dispatched, indexed, len(listed) + (len(rocks.infos) if rocks is not None else 0),
                      index_files.entries if index_files is not None else 0, timer_units,
                      tuple(found.kept), dict(found.counts), plan, behind, verified, tuple(walk.blanks),
                      damaged_ranges(walk), None if rocks is None and rocksdb_queues else
                      tuple(file_queues) + (tuple(rocks.listed) if rocks is not None else ()), counted)


def damaged_ranges(walk) -> tuple:
    """The damaged ranges (segment, file offset, length, reason) a commit-log walk skipped.

    The walk stops at the first damage, as the broker's recovery does, and
    skips none: this is empty. A salvage walk (``salvage=True``) resyncs past
    damage and lists what it skipped; this is the one place its ranges are
    taken from, for the report's segment map and the check.
    """
    return tuple(getattr(walk, "damaged", None) or ())


#: The commit-log columns :func:`dispatch_units` and :func:`index_keys` read.
DISPATCH_COLUMNS = tuple(_COLUMNS)


def property_rows(batch: pa.RecordBatch, name: str, rows: np.ndarray | None = None) -> dict[int, str]:
    """The rows of ``batch`` (among ``rows``, where given) whose message has property ``name``, with its
    value: from the batch's column of that property, or from its ``properties`` map where it has no such
    column."""
    column = property_column(name)
    if column in batch.schema.names:
        return present_rows(batch.column(column), rows)
    return map_key_rows(batch.column("properties"), name, rows)


def transaction_types(batch: pa.RecordBatch) -> np.ndarray:
    """The transaction type of each row (``MessageSysFlag.getTransactionValue``)."""
    return (to_numpy(batch.column("sysFlag")) & _TRAN_MASK) >> _TRAN_SHIFT


def dispatch_units(batch: pa.RecordBatch, *,
                   delay_levels_ms: tuple[int, ...] = DEFAULT_DELAY_LEVELS_MS) -> dict:
    """The consume-queue units ``CommitLogDispatcherBuildConsumeQueue`` writes for a batch of the walk.

    ``(topic, queueId) -> (queue offsets, commit-log offsets, sizes, tags
    codes)``, rows in commit-log order within each queue: every message but
    a transaction PREPARED or ROLLBACK, plus one unit per light message
    queue of ``INNER_MULTI_DISPATCH`` (see the module docstring). The batch
    holds at least the columns of :data:`DISPATCH_COLUMNS`.
    """
    return _dispatch(batch, delay_levels_ms)[-1]


def _dispatch(batch: pa.RecordBatch, delay_levels_ms: tuple[int, ...]) -> tuple:
    """What the dispatch works from in a batch, and what :func:`dispatch_units` gives: ``(commit-log
    offsets, store times, transaction types, topic codes, topic names, rows with a unit, units by queue)``."""
    off = to_numpy(batch.column("commitLogOffset"))
    tran = transaction_types(batch)
    stamp = to_numpy(batch.column("storeTimestamp").cast(pa.int64()))
    codes = pc.dictionary_encode(batch.column("topic"))
    tidx = to_numpy(codes.indices)
    names = codes.dictionary.to_pylist()
    rows = (tran != TRAN_PREPARED) & (tran != TRAN_ROLLBACK)
    etags = _expected_tags(batch, tidx, names, stamp, delay_levels_ms)
    units = _expected_units(batch, rows, tidx, names, to_numpy(batch.column("queueId")),
                            to_numpy(batch.column("queueOffset")), off, to_numpy(batch.column("storeSize")), etags)
    return off, stamp, tran, tidx, names, rows, units


def index_keys(batch: pa.RecordBatch, tran: np.ndarray, tidx: np.ndarray,
               names: list) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """The keys ``IndexService.buildIndex`` writes for a batch: ``(rows, key hashes, key values)``.

    ``UNIQ_KEY``, then each of ``KEYS``, for every message but a transaction
    ROLLBACK; the rows of the ``UNIQ_KEY`` keys come first, then those of
    ``KEYS`` in their order (a stable sort on the rows gives the broker's
    order of ``putKey`` calls). The hash is that of ``topic#key``.
    """
    kept = tran != TRAN_ROLLBACK
    uniq_col = batch.column("uniqKey")
    keys_col = batch.column("keys")
    uniq_rows = np.flatnonzero(kept & ~to_numpy(uniq_col.is_null()))
    items = pc.list_flatten(keys_col)
    item_rows = to_numpy(pc.list_parent_indices(keys_col)).astype(np.int64)
    item_keep = kept[item_rows] if len(item_rows) else np.zeros(0, bool)
    uniq_vals = uniq_col.take(from_numpy(uniq_rows))
    key_vals = items.filter(from_numpy(item_keep))
    key_rows = item_rows[item_keep]
    rows_arr = np.concatenate([uniq_rows.astype(np.int64), key_rows])
    hashes_arr = np.concatenate([key_hashes(uniq_vals, tidx[uniq_rows], names),
                                 key_hashes(key_vals, tidx[key_rows], names)])
    values = pa.concat_arrays([uniq_vals.cast(pa.string()), key_vals.cast(pa.string())])
    return rows_arr, hashes_arr, values


def _queue_folder(store: Store, topic: str, q: int, batch: bool) -> str:
    return store.path("batchconsumequeue" if batch else "consumequeue", topic, str(q))


def _expected_tags(batch: pa.RecordBatch, tidx: np.ndarray, names: list, stamp: np.ndarray,
                   delay_levels_ms: tuple[int, ...]) -> np.ndarray:
    """The tags code the dispatch writes for each row (as :func:`~rmqformats.consumequeue.expected_tags_code`).

    The hash of TAGS (0 without), each distinct tag hashed once; in
    ``SCHEDULE_TOPIC_XXXX`` the delivery time from the ``DELAY`` level.
    """
    enc = pc.dictionary_encode(batch.column("tags"))
    values = enc.dictionary.to_pylist()
    table = np.array([tags_code(t) for t in values] + [0], np.int64)
    idx = to_numpy(pc.fill_null(enc.indices, scalar(len(values), enc.indices.type)))  # (no tags: the last entry)
    out = table[idx]
    if SCHEDULE_TOPIC in names:
        rows = np.flatnonzero(tidx == names.index(SCHEDULE_TOPIC))
        delay = property_rows(batch, "DELAY", rows)
        for i in rows.tolist():
            try:
                level = int(delay[i]) if delay.get(i) else 0
            except ValueError:
                level = 0
            level = min(level, len(delay_levels_ms))
            out[i] = int(stamp[i]) if level <= 0 else int(stamp[i]) + delay_levels_ms[level - 1]
    return out


def _expected_units(batch: pa.RecordBatch, rows: np.ndarray, tidx: np.ndarray, names: list,
                    qid: np.ndarray, qoff: np.ndarray, off: np.ndarray, size: np.ndarray,
                    etags: np.ndarray | None = None) -> QueueUnits:
    """The units the dispatch writes for ``rows``, by queue: ``(topic, queueId) -> (queue offsets, commit-log
    offsets, sizes, tags codes)`` as a :class:`~rmqformats.recovery.queueunits.QueueUnits`."""
    if etags is None:
        etags = np.zeros(len(off), np.int64)
    sel = np.flatnonzero(rows)
    key = (tidx[sel].astype(np.int64) << 32) | (qid[sel].astype(np.int64) & 0xFFFFFFFF)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else np.zeros(0, np.int64)
    keys = [(names[k >> 32], int(np.int32(k & 0xFFFFFFFF))) for k in ordered[starts].tolist()]
    r = sel[order]
    cols = (qoff[r], off[r], size[r], etags[r])
    # Light message queues: one more unit per INNER_MULTI_DISPATCH queue.
    extra: dict[tuple[str, int], list[tuple[int, int, int, int]]] = {}
    multi = property_rows(batch, INNER_MULTI_DISPATCH)
    if multi:
        offsets = property_rows(batch, INNER_MULTI_QUEUE_OFFSET)
        for i in sorted(i for i in multi if rows[i]):
            if not _multi_dispatch(names[tidx[i]]):
                continue
            queues, qoffs = multi[i], offsets.get(i)
            if not queues or not qoffs or not queues.strip() or not qoffs.strip():
                continue
            qs, os_ = queues.split(LMQ_SEPARATOR), qoffs.split(LMQ_SEPARATOR)
            if len(qs) != len(os_):
                continue
            for name, value in zip(qs, os_):
                if "/" in name:
                    continue
                try:
                    lmq_offset = int(value)
                except ValueError:
                    continue
                q = 0 if name.startswith(LMQ_PREFIX) else int(qid[i])
                extra.setdefault((name, q), []).append((lmq_offset, int(off[i]), int(size[i]), int(etags[i])))
    if not extra:
        bounds = np.r_[starts, len(ordered)].astype(np.int64)
        return QueueUnits(keys, bounds, *cols)
    # A queue's light-queue units come after its own, in the order of their messages.
    index = {k: g for g, k in enumerate(keys)}
    gid = [np.repeat(np.arange(len(keys), dtype=np.int64), np.diff(np.r_[starts, len(ordered)]))]
    parts = [list(cols)]
    for k, items in extra.items():
        g = index.setdefault(k, len(keys))
        if g == len(keys):
            keys.append(k)
        a = np.array(items, np.int64)
        gid.append(np.full(len(a), g, np.int64))
        parts.append([a[:, 0], a[:, 1], a[:, 2], a[:, 3]])
    return QueueUnits.group(keys, np.concatenate(gid), *(np.concatenate([p[c] for p in parts]) for c in range(4)))


def _check_units(raw: _RawQueue, topic: str, q: int, eq: np.ndarray, eo: np.ndarray, es: np.ndarray,
                 et: np.ndarray, state: _QueueState, segs: _Segments, found: _Findings, max_queue_end: int,
                 cq_end: int) -> None:
    """Compare the units at queue offsets ``eq`` of one queue with the messages they should point at."""
    units = QueueUnits([(topic, q)], np.array([0, len(eq)], np.int64), eq, eo, es, et)
    matched, missing = _compare_units([raw], units, _queue_ends([cq_end]), segs, found, max_queue_end)
    state.matched += int(matched[0])
    state.missing += int(missing[0])


_INT64 = np.iinfo(np.int64)


def _queue_ends(ends: list[int]) -> np.ndarray:
    """Queue ends as int64s: an end past the largest (a RocksDB ``max`` value can be any 8 bytes) is that
    largest, which no queue offset of a record reaches."""
    return np.array([min(max(e, _INT64.min), _INT64.max) for e in ends], np.int64)


#: The block of a queue none of whose offsets can be read (all negative).
_NO_UNIT = np.zeros(1, CQ_UNIT_DTYPE)
_NOT_HELD = np.zeros(1, bool)


def _compare_units(raws: list, units: QueueUnits, cq_ends: np.ndarray, segs: _Segments, found: _Findings,
                   max_queue_end: int, ahead: _ReadAhead | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Compare the units the queues ``units`` hold (``raws[g]`` reads queue ``g``'s, ``cq_ends[g]`` is where
    its recovery ends) with the messages they should point at; findings into ``found``.

    Returns per queue the units within the range recovery keeps that agree with their message in every
    field (each counted once), and the messages without a unit. Each queue's units are read in one piece
    where its offsets are near each other, and compared for all queues at once.
    """
    eq, eo, es, et = units.eq, units.eo, units.es, units.et
    sizes = units.sizes
    n_queues = len(sizes)
    valid = eq >= 0
    big = np.iinfo(np.int64).max
    starts = units.bounds[:-1]
    if len(eq):
        lows = np.minimum.reduceat(np.where(valid, eq, big), starts)
        highs = np.maximum.reduceat(np.where(valid, eq, -1), starts) + 1
    else:
        lows = highs = np.zeros(0, np.int64)
    blocks: list[bytes] = []  # the units read, as stored (joined once: structured arrays join slowly)
    gaps: list[tuple[int, np.ndarray]] = []  # (where, which units a file holds) of blocks not read whole
    base = np.zeros(n_queues, np.int64)  # where each queue's block starts among the blocks
    shift = np.zeros(n_queues, np.int64)  # the queue offset of its block's first unit
    scattered: list[int] = []
    held = 0
    for g, lo, hi, n, upto in zip(range(n_queues), lows.tolist(), highs.tolist(), sizes.tolist(), cq_ends.tolist()):
        if hi <= lo:  # no valid offset: nothing to read
            block, here = _NO_UNIT, _NOT_HELD
            lo = 0
        elif hi - lo <= max(4 * n, 4096):
            block, here = raws[g].read(lo, hi, ahead, upto)
        else:  # scattered queue offsets (damaged records): one read per message
            scattered.append(g)
            continue
        base[g], shift[g] = held, lo
        blocks.append(block.astype(CQ_UNIT_DTYPE, copy=False).tobytes())
        if here is not None:
            gaps.append((held, here))
        held += len(block)
    at = np.where(valid, eq - np.repeat(shift, sizes), 0) + np.repeat(base, sizes)
    for g in scattered:  # their rows get blocks of their own, one unit per row
        s, e = int(units.bounds[g]), int(units.bounds[g + 1])
        part = np.zeros(e - s, CQ_UNIT_DTYPE)
        here = np.zeros(e - s, bool)
        for i in np.flatnonzero(valid[s:e]).tolist():
            u, p = raws[g].read(int(eq[s + i]), int(eq[s + i]) + 1)
            part[i], here[i] = u[0], True if p is None else p[0]
        at[s:e] = held + np.arange(e - s)
        blocks.append(part.tobytes())
        gaps.append((held, here))
        held += e - s
    held_units = np.frombuffer(b"".join(blocks), CQ_UNIT_DTYPE)
    holds = np.ones(held, bool)
    for where, here in gaps:
        holds[where:where + len(here)] = here
    got = held_units[at] if len(at) else np.zeros(0, CQ_UNIT_DTYPE)
    present = (holds[at] if len(at) else np.zeros(0, bool)) & valid
    ok = present & (got[_CQ_OFS] == eo) & (got[_CQ_LEN] == es)
    gid = np.repeat(np.arange(n_queues, dtype=np.int64), sizes)
    firsts = np.array([raw.first_unit for raw in raws], np.int64)
    # Units that agree in every field the one-way check compares, within the range recovery keeps.
    tags_ok = (got[_CQ_TAGS] == et) | _IS_EXT_ADDRESS(got)
    agree = ok & tags_ok & (eq >= np.repeat(firsts, sizes)) & (eq < np.repeat(np.asarray(cq_ends), sizes))
    ga, qa = gid[agree], eq[agree]
    # Each unit once: a record naming the same light queue twice must not count a unit twice. (Rising
    # offsets within a queue, as the walk gives them, are distinct: no sort needed to count them.)
    rising = (ga[1:] != ga[:-1]) | (qa[1:] > qa[:-1])
    if not bool(rising.all()):
        pairs = np.unique(np.stack([ga, qa], axis=1), axis=0)
        ga = pairs[:, 0]
    matched = np.bincount(ga, minlength=n_queues)
    bad = np.flatnonzero(~ok)
    missing = np.bincount(gid[bad], minlength=n_queues)
    for j, i in enumerate(bad.tolist()):
        if found.full(Kind.MISSING_UNIT):  # (a limit once reached stays reached: the rest are counted)
            found.counts[Kind.MISSING_UNIT] += len(bad) - j
            break
        g = int(gid[i])
        topic, q = units.keys_[g]
        u = got[i]
        if eq[i] < 0:
            why = f"the record's queue offset {int(eq[i])} is negative"
        elif not present[i]:
            why = "no consume-queue file holds that offset"
        elif int(u[_CQ_OFS]) == 0 and int(u[_CQ_LEN]) == 0 and int(u[_CQ_TAGS]) == 0:
            why = "the unit there is zeroed"
        else:
            why = f"the unit there points at commit-log offset {int(u[_CQ_OFS])} size {int(u[_CQ_LEN])}"
        fate = ("the next start dispatches it again" if eo[i] >= max_queue_end
                else "no restart dispatches it again: consumers of the queue never see it")
        found.add(Finding(Kind.MISSING_UNIT,
                          f"{topic}/{q} queue offset {int(eq[i])}: no unit for the message at commit-log offset "
                          f"{int(eo[i])} ({why}; {fate})",
                          segs.place(int(eo[i])), raws[g].place(max(int(eq[i]), 0)), topic, q, int(eq[i]),
                          int(eo[i])))
    return matched, missing


def _check_batch_units(store: Store, topic: str, q: int, eq: np.ndarray, eo: np.ndarray, es: np.ndarray,
                       state: _QueueState, segs: _Segments, found: _Findings) -> None:
    """Batch consume queues: a unit whose base offset is the record's queue offset and that points at it."""
    bcq = store.batch_consume_queue(topic, q)
    units: dict[int, tuple[int, int, int, int]] = {}
    lo, hi = int(eq.min()), int(eq.max())
    try:
        first = bcq.find(lo).index if bcq.files.files else None
    except RmqFormatError:
        first = bcq.first_unit if bcq.files.files else None
    if first is not None:
        try:
            for u in bcq.units(first):
                if u.msg_base_offset > hi:
                    break
                units[u.msg_base_offset] = (u.commitlog_offset, u.size, u.batch_size, u.index)
        except RmqFormatError:
            pass
    for qo, o, s in zip(eq.tolist(), eo.tolist(), es.tolist()):
        got = units.get(qo)
        if got is not None and got[:2] == (o, s):
            if qo + got[2] > state.next:
                state.next, state.last_offset = qo + got[2], o
            continue
        state.missing += 1
        why = "no unit has that base offset" if got is None else \
            f"the unit with that base offset points at commit-log offset {got[0]} size {got[1]}"
        # The unit with the base offset, else where the next unit would be written (else the file that
        # cannot be read to find that).
        try:
            where = Place(*_unit_place(bcq.files, got[3] if got is not None else bcq.end_unit))
        except RmqFormatError as exc:
            where = Place(os.path.abspath(exc.path) if exc.path else bcq.files.folder, exc.offset)
        found.add(Finding(Kind.MISSING_UNIT,
                          f"{topic}/{q} (batch consume queue) queue offset {qo}: no unit for the message at "
                          f"commit-log offset {o} ({why})",
                          segs.place(o), where, topic, q, qo, o))


def _check_segment_files(segments, data_end: int | None, found: _Findings) -> None:
    """Commit-log files whose names and sizes do not follow each other, before the data end: a segment named
    inside the one before it, and bytes no segment file holds (a missing file, or one shorter than the
    others). The walk reads them as the broker's recovery does; what the broker then does, preflight says."""
    from ..walk.salvage import gaps, overlaps
    for a, b in overlaps(segments):
        if data_end is None or b.start_offset < data_end:
            found.add(Finding(Kind.SEGMENT_OVERLAP, f"segment {os.path.basename(b.path)} is named for commit-log "
                                                    f"offset {b.start_offset}, inside {os.path.basename(a.path)} "
                                                    f"(which ends at {a.start_offset + a.size}): its records are "
                                                    f"read at offsets from its name, as the broker reads them "
                                                    f"(MappedFileQueue.checkSelf only logs it)",
                              Place(os.path.abspath(b.path), 0)))
    usual = Counter(s.size for s in segments).most_common(1)[0][0] if segments else 0
    ends = {s.start_offset + s.size: s for s in segments}
    for gap in gaps(segments):
        if data_end is not None and gap.commitlog_offset >= data_end:
            continue
        before = ends.get(gap.commitlog_offset)
        if before is not None and before.size < usual:  # the file before is shorter than the others
            what, where = (f"segment {os.path.basename(before.path)} is {before.size:,} bytes, not the "
                           f"{usual:,} of the others", Place(os.path.abspath(before.path), before.size))
        else:
            what, where = "no segment file holds them", Place(os.path.abspath(gap.segment), 0, absent=True)
        found.add(Finding(Kind.COMMITLOG_GAP, f"{gap.length:,} byte(s) at commit-log offset {gap.commitlog_offset} "
                                              f"are in no segment file: {what} (`rmqformats preflight` says what "
                                              f"the broker does with it)", where))


def _check_header_times(f, found: _Findings) -> None:
    """An index file with entries whose header's store times no query window can match: the broker's key
    queries pass it by (``IndexService.queryOffset`` searches a file only where ``IndexFile.isTimeMatched``,
    and a query from time 0 to the end of time matches none here), so its entries are never found."""
    from ..index import LONG_MAX
    try:
        entries = f.written_entries(strict=False)
    except RmqFormatError:
        return  # said where its entries are read
    h = f.header
    if entries and not f.is_time_matched(0, LONG_MAX):
        found.add(Finding(Kind.INDEX_TIMES, f"index file {os.path.basename(f.path)}: its header's store times "
                                            f"(begin {h.begin_timestamp}, end {h.end_timestamp}) match no query "
                                            f"time window, so the broker's key queries pass its {entries} "
                                            f"entr{'y' if entries == 1 else 'ies'} by",
                          other=Place(os.path.abspath(f.path), 0)))


# -- the batch work, in the reader or in the walk's workers -----------------------------------


class _BatchFindings(_Findings):
    """One batch's findings, gathered to be put in commit-log order (:func:`_finding_order`).

    ``counting``: the walk's findings were full before the batch, so these
    are only counted (their texts are not even made).
    """

    def __init__(self, counting: bool):
        super().__init__(0)
        self.counting = counting

    def add(self, finding: Finding) -> None:
        self.counts[finding.kind] += 1
        if not self.counting:
            self.kept.append(finding)

    def full(self, kind: Kind) -> bool:
        return self.counting


_KIND_RANK = {kind: i for i, kind in enumerate(Kind)}


def _finding_order(f: Finding) -> tuple:
    """The order of a batch's findings: by commit-log offset, then kind, queue and queue offset.

    Each batch's findings are about its own offsets (an index entry's: those
    after the batch before), so in this order the walk's findings do not
    depend on where batches end: one job or several, any batch size.
    """
    return (-1 if f.commitlog_offset is None else f.commitlog_offset, _KIND_RANK[f.kind], f.topic or "",
            -1 if f.queue_id is None else f.queue_id, -1 if f.queue_offset is None else f.queue_offset)


def _add_findings(found: _Findings, kept: list[Finding], counts: Counter) -> None:
    """Add a batch's findings: ``kept`` in order, then the rest of ``counts`` (those it only counted)."""
    for finding in kept:
        found.add(finding)
    for kind, n in counts.items():
        extra = n - sum(1 for f in kept if f.kind is kind)
        if extra:
            found.counts[kind] += extra


def _first_count(off: np.ndarray, mask: np.ndarray) -> tuple[int, int | None]:
    """How many rows ``mask`` holds, and the commit-log offset of the first."""
    if not mask.any():
        return 0, None
    return int(mask.sum()), int(off[np.argmax(mask)])


def _add_first(total: list, part: tuple[int, int | None]) -> None:
    total[0] += part[0]
    if total[1] is None:
        total[1] = part[1]


@dataclass(frozen=True)
class _Dispatch:
    """What the batch work needs that is known before the walk (the workers read it once a walk, from the
    file :meth:`_CheckFold.empty` writes)."""

    segs: _Segments
    batch_topics: frozenset[str]
    cq_root: str
    cq_ends: dict[tuple[str, int], int]
    max_queue_end: int
    confirm: int
    marks: tuple[tuple[str, int], ...]
    delay_levels_ms: tuple[int, ...]
    #: Consume-queue units: ``here`` (file queues compared with the batch), ``reader`` (RocksDB queues: all
    #: compared by the reader), ``none`` (the RocksDB queues cannot be read: nothing compared).
    units: str
    #: Index entries: ``None`` (not checked), ``unreadable``, ``count`` (no index files), ``match``.
    index: str | None
    limit: int


class _WorkerWalk:
    """What a worker keeps of the walk it works for, from range to range: the constants (read once), and
    the queue files it has listed and their units read ahead (as the reader keeps them for the whole walk)."""

    def __init__(self) -> None:
        self.consts: _Dispatch | None = None
        self.raw: dict[tuple[str, int], _RawQueue] = {}
        self.ahead = _ReadAhead()


#: In a worker: the walk it last worked for, by token.
_WORKER_WALK: dict[str, _WorkerWalk] = {}


def _worker_walk(token: str) -> _WorkerWalk:
    walk = _WORKER_WALK.get(token)
    if walk is None:
        _WORKER_WALK.clear()
        walk = _WORKER_WALK[token] = _WorkerWalk()
    return walk


def _shared_consts(token: str, path: str) -> _Dispatch:
    walk = _worker_walk(token)
    if walk.consts is None:
        with open(path, "rb") as f:
            walk.consts = pickle.load(f)
    return walk.consts


class _CheckFold:
    """The check's work on each batch of the walk, as a :class:`~rmqformats.walk.parallel.Fold`.

    Each batch becomes a digest: messages per segment, the rows past the
    marks, the units the dispatch writes for each queue, the index keys.
    A file consume queue's units are compared with the batch right there
    (reading the queue's files), so only the outcome travels: the state
    changes and the findings. In a parallel walk's workers (copies from
    :meth:`empty`) the digests are kept and handed back; in the reader each
    digest is applied to the walk's state (:class:`_WalkState`) in
    commit-log order, those of the workers' ranges when they are merged.
    What a batch's findings and state changes are does not depend on which
    process made the digest, so the check's result is the serial walk's.
    """

    def __init__(self, consts: _Dispatch | None, state: _WalkState | None = None,
                 shared: tuple[str, str] | None = None):
        self._start(consts, state, shared)

    def _start(self, consts: _Dispatch | None, state: _WalkState | None, shared: tuple[str, str] | None) -> None:
        self._consts = consts
        #: Where the workers' copies find the constants: ``(token, path of a pickle)``, written once a walk
        #: (a store of many queues has a large ``cq_ends``: pickled with every range it would cost more
        #: than the range's walk).
        self._shared = shared
        self.digests: list[tuple] = []
        self._state = state
        self._raw: dict[tuple[str, int], _RawQueue]
        if state is not None:
            self._raw, self._ahead = state.raw_queues, _ReadAhead()
        elif shared is not None:  # a worker's copy
            walk = _worker_walk(shared[0])
            self._raw, self._ahead = walk.raw, walk.ahead
        else:
            self._raw, self._ahead = {}, _ReadAhead()
        self._kept = 0  # findings kept by this copy's digests (a worker's)

    @property
    def c(self) -> _Dispatch:
        if self._consts is None:
            assert self._shared is not None
            self._consts = _shared_consts(*self._shared)
        return self._consts

    def __getstate__(self) -> dict:
        return {"shared": self._shared, "digests": self.digests}

    def __setstate__(self, d: dict) -> None:
        self._start(None, None, d["shared"])
        self.digests = d["digests"]

    def empty(self) -> _CheckFold:
        if self._shared is None:
            fd, path = tempfile.mkstemp(prefix="rmqformats-check-", suffix=".pickle")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(self.c, f, protocol=pickle.HIGHEST_PROTOCOL)
            self._shared = (uuid.uuid4().hex, path)
        return _CheckFold(None, shared=self._shared)

    def close(self) -> None:
        """Remove the workers' copy of the constants (after the walk)."""
        if self._shared is not None:
            _WORKER_WALK.pop(self._shared[0], None)  # (what this process's copies read, if any)
            with contextlib.suppress(OSError):
                os.remove(self._shared[1])

    def add(self, batch: pa.RecordBatch) -> None:
        digest = self._digest(batch)
        if digest is None:
            return
        if self._state is not None:
            self._state.apply(digest)
        else:
            self.digests.append(digest)

    def merge(self, later: _CheckFold) -> None:
        assert self._state is not None, "merged into a worker's copy"
        for digest in later.digests:
            self._state.apply(digest)

    def _digest(self, batch: pa.RecordBatch) -> tuple | None:
        c = self.c
        n = batch.num_rows
        if not n:
            return None
        off, stamp, tran, tidx, names, cq_rows, expected = _dispatch(batch, c.delay_levels_ms)

        # Per segment: messages, and the store time of a message at the segment's first byte.
        starts = np.asarray(c.segs.starts, np.int64)
        seg_no = np.searchsorted(starts, off, side="right") - 1
        seg_counts = [(int(s), int(k)) for s, k in zip(*np.unique(seg_no, return_counts=True))]
        seg_first = [(int(seg_no[i]), int(stamp[i])) for i in np.flatnonzero(off == starts[seg_no]).tolist()]
        restart = _first_count(off, off >= c.max_queue_end) if c.units == "here" else (0, None)
        confirm = _first_count(off, off > c.confirm) if c.confirm > 0 else (0, None)
        after = tuple(_first_count(off, stamp > mark) for _, mark in c.marks)

        # Queues in the order of their first message, so that the walk meets them in the same order
        # however it is cut into batches; their findings sorted by commit-log offset, for the same reason.
        order = expected.by_first_message()
        counting = self._state.found.full(Kind.MISSING_UNIT) if self._state is not None else \
            self._kept >= c.limit
        found = _BatchFindings(counting)
        entries = []
        if c.units != "none":  # none: the RocksDB consume queue cannot be read (reported), not taken for missing units
            here = np.array([c.units == "here" and topic not in c.batch_topics for topic, _ in expected.keys_], bool)
            compared = self._units_here(expected.select(here), found) if here.any() else {}
            for g in order:
                key = expected.keys_[g]
                entries.append(compared[key] if here[g] else (*key, *expected.run(g)))
        found.kept.sort(key=_finding_order)
        self._kept += len(found.kept)
        return (n, int(cq_rows.sum()), seg_counts, seg_first, restart, confirm, after, entries,
                (found.kept, found.counts), self._index_digest(batch, off, tran, tidx, names))

    def _units_here(self, units: QueueUnits, found: _BatchFindings) -> dict[tuple[str, int], tuple]:
        """File queues' units compared with the batch's (findings into ``found``): each queue's state changes,
        ``(topic, queueId, next queue offset, its message's commit-log offset, units matched, missing)``."""
        raws = []
        for key in units.keys_:
            raw = self._raw.get(key)
            if raw is None:
                raw = self._raw[key] = _RawQueue(os.path.join(self.c.cq_root, key[0], str(key[1])))
            raws.append(raw)
        ends = _queue_ends([self.c.cq_ends.get(key, 0) for key in units.keys_])
        matched, missing = _compare_units(raws, units, ends, self.c.segs, found, self.c.max_queue_end, self._ahead)
        top, top_offset = units.newest()
        return {key: (key[0], key[1], nxt + 1, last, m, k) for key, nxt, last, m, k in
                zip(units.keys_, top.tolist(), top_offset.tolist(), matched.tolist(), missing.tolist())}

    def _index_digest(self, batch: pa.RecordBatch, off: np.ndarray, tran: np.ndarray, tidx: np.ndarray,
                      names: list) -> tuple | None:
        mode = self.c.index
        if mode is None:
            return None
        if mode == "unreadable":  # reported as unreadable; nothing to match against
            return ("unreadable",)
        if mode == "count":  # no index files: count the keys, nothing to match
            kept = from_numpy(tran != TRAN_ROLLBACK)
            has_uniq = pc.and_(kept, pc.is_valid(batch.column("uniqKey")))
            none = scalar(0, pa.int32())  # (the type of list lengths)
            n_keys = pc.if_else(kept, pc.fill_null(pc.list_value_length(batch.column("keys")), none), none)
            with_keys = pc.or_(has_uniq, pc.greater(n_keys, none))
            return ("count", (pc.sum(has_uniq.cast(pa.int64())).as_py() or 0) + (pc.sum(n_keys).as_py() or 0),
                    pc.sum(with_keys.cast(pa.int64())).as_py() or 0)
        rows, hashes, values = index_keys(batch, tran, tidx, names)
        return ("match", len(np.unique(rows)), off, tidx, names, rows, hashes, values)


class _WalkState:
    """What the check learns from the walk's batches, applied digest by digest in commit-log order."""

    def __init__(self, store: Store, consts: _Dispatch, found: _Findings, rocks: _Rocks | None,
                 index_files: _IndexStream | None):
        self.store = store
        self.c = consts
        self.found = found
        self.rocks = rocks
        self.index_files = index_files
        self.messages = self.dispatched = self.indexed = 0
        self.queues: dict[tuple[str, int], _QueueState] = {}
        self.raw_queues: dict[tuple[str, int], _RawQueue] = {}
        self.restart: list = [0, None]
        self.after_confirm: list = [0, None]
        self.after: dict[str, list] = {name: [0, None] for name in ("physic", "logics", "index")}
        self.seg_first: dict[int, int] = {}  # segment number -> store time of its first message (if at byte 0)
        self.seg_count: Counter[int] = Counter()

    def _queue(self, topic: str, q: int, batch: bool) -> _QueueState:
        state = self.queues.get((topic, q))
        if state is None:
            state = self.queues[(topic, q)] = _QueueState(batch)
        return state

    def apply(self, digest: tuple) -> None:
        n, dispatched, seg_counts, seg_first, restart, confirm, after, entries, (kept, counts), index = digest
        c = self.c
        found = _BatchFindings(self.found.full(Kind.MISSING_UNIT))
        self.messages += n
        self.dispatched += dispatched
        for s, k in seg_counts:
            self.seg_count[s] += k
        for s, t in seg_first:
            self.seg_first[s] = t
        _add_first(self.restart, restart)
        _add_first(self.after_confirm, confirm)
        for (name, _), part in zip(c.marks, after):
            _add_first(self.after[name], part)
        queues, raws = self.queues, self.raw_queues
        for entry in entries:
            if type(entry[2]) is int:  # a file queue, compared where the digest was made (no arrays)
                topic, q, nxt, last_offset, matched, missing = entry
                key = (topic, q)
                state = queues.get(key)
                if state is None:
                    state = queues[key] = _QueueState(False)
                if nxt > state.next:
                    state.next, state.last_offset = nxt, last_offset
                if key not in raws:
                    raws[key] = _RawQueue(os.path.join(c.cq_root, topic, str(q)))
                state.matched += matched
                state.missing += missing
                continue
            topic, q, eq, eo, es, et = entry
            rocks = self.rocks
            if rocks is not None and topic not in c.batch_topics and rocks.holds(topic, q):
                rocks.check(topic, q, eq, eo, es, et, c.segs, found, c.max_queue_end)
                if not os.path.isdir(self.store.path("consumequeue", topic, str(q))):
                    continue  # only in RocksDB; a queue kept both ways (double write) is checked both ways
            state = self._queue(topic, q, topic in c.batch_topics)
            last = int(np.argmax(eq))
            if eq[last] + 1 > state.next:
                state.next, state.last_offset = int(eq[last]) + 1, int(eo[last])
            if state.batch:  # also moves ``state.next`` past the messages of an inner batch
                _check_batch_units(self.store, topic, q, eq, eo, es, state, c.segs, found)
            else:
                raw = self.raw_queues.get((topic, q))
                if raw is None:
                    raw = self.raw_queues[(topic, q)] = _RawQueue(self.store.path("consumequeue", topic, str(q)))
                _check_units(raw, topic, q, eq, eo, es, et, state, c.segs, found, c.max_queue_end,
                             c.cq_ends.get((topic, q), 0))
        if index is not None and self.index_files is not None:
            self.indexed += self.index_files.apply(index, c.segs, found)
        if found.kept or found.counts:
            kept = sorted(kept + found.kept, key=_finding_order)
            counts = counts + found.counts
        _add_findings(self.found, kept, counts)


def _file_queue(store: Store, topic: str, q: int, ends: dict[tuple[str, int], int] | None):
    """The consume queue of ``topic`` / ``q``; a file queue in ``ends`` (the ends a listing of the queues found)
    takes its end from there, not walking its files for it again."""
    cq = store.consume_queue(topic, q)
    end = None if ends is None else ends.get((topic, q))
    if end is not None and cq.kind == "file":
        cq.files.known_end(end)
    return cq


def _last_unit_end(store: Store, topic: str, q: int, batch: bool,
                   ends: dict[tuple[str, int], int] | None = None) -> int | None:
    """End (offset + size) of a queue's last unit recovery keeps; ``None`` for an empty queue."""
    try:
        if batch:
            bcq = store.batch_consume_queue(topic, q)
            if bcq.end_unit <= bcq.first_unit:
                return None
            b = bcq.unit(bcq.end_unit - 1)
            return b.commitlog_offset + b.size
        cq = _file_queue(store, topic, q, ends)
        end = cq.max_offset
        if end <= cq.files.first_unit():
            return None
        c = cq.unit(end - 1)
        return c.commitlog_offset + c.size
    except RmqFormatError:
        return None


def _last_unit_offset(store: Store, topic: str, q: int, batch: bool,
                      ends: dict[tuple[str, int], int] | None = None) -> int | None:
    end = _last_unit_end(store, topic, q, batch, ends)
    if end is None:
        return None
    try:
        if batch:
            bcq = store.batch_consume_queue(topic, q)
            return bcq.unit(bcq.end_unit - 1).commitlog_offset
        cq = _file_queue(store, topic, q, ends)
        return cq.unit(cq.max_offset - 1).commitlog_offset
    except RmqFormatError:
        return None


def _last_unit_place(store: Store, topic: str, q: int, batch: bool,
                     ends: dict[tuple[str, int], int] | None = None) -> Place:
    """The file and byte of a queue's last unit (recovery's end), or its folder."""
    try:
        if batch:
            bcq = store.batch_consume_queue(topic, q)
            return Place(*_unit_place(bcq.files, bcq.end_unit - 1))
        cq = _file_queue(store, topic, q, ends)
        return Place(*_unit_place(cq.files, cq.max_offset - 1))
    except RmqFormatError:
        return Place(_queue_folder(store, topic, q, batch))


def _units_past_end(store: Store, listed: list[tuple[str, int, bool]], data_end: int, segs: _Segments,
                    found: _Findings, ends: dict[tuple[str, int], int] | None = None,
                    counted: dict[tuple[str, int], tuple[int, int]] | None = None) -> int:
    """Units of every queue that point at or past the end of data; returns how many (``ends``: the queues'
    ends as the listing found them). Every unit is read: ``counted`` gets each file consume queue read to
    its end (:func:`rmqformats.consumequeue.tally_units`), so that ``check_consistency`` need not read them
    again."""
    total = 0
    starts = np.array(segs.starts, np.int64)
    sizes = np.array([seg.size for seg in segs.segments], np.int64)
    for topic, q, batch in listed:
        try:
            if batch:
                bcq = store.batch_consume_queue(topic, q)
                first, stop, files = bcq.first_unit, bcq.end_unit, bcq.files
                ofs_name = "ofs_commitlog"
                len_name = "len_message"
            else:
                cq = _file_queue(store, topic, q, ends)
                first, stop, files = cq.files.first_unit(), cq.max_offset, cq.files
                ofs_name, len_name = _CQ_OFS, _CQ_LEN
            # What check_consistency counts of a file queue, counted here as its units go by.
            tally = [0, 0] if not batch and counted is not None and cq.kind == "file" else None
            below = deleted_below(cq) if tally is not None else 0
            unit = first
            while unit < stop:
                array = files.read(unit, min(stop, unit + BATCH_ROWS))
                if not len(array):
                    break
                if tally is not None:
                    n, d = tally_units(array, below)
                    tally[0] += n
                    tally[1] += d
                ofs = array[ofs_name].astype(np.int64)
                # Units inside the data's range whose segment file is missing (a gap between segments).
                seg = np.searchsorted(starts, ofs, side="right") - 1
                if len(starts):
                    in_file = (seg >= 0) & (ofs < starts[np.maximum(seg, 0)] + sizes[np.maximum(seg, 0)])
                else:
                    in_file = np.zeros(len(ofs), bool)
                for i in np.flatnonzero((ofs >= segs.first) & (ofs < data_end) & ~in_file
                                        & (array[len_name] > 0)).tolist():
                    o = int(ofs[i])
                    found.add(Finding(
                        Kind.UNIT_NO_SEGMENT,
                        f"{topic}/{q}{' (batch consume queue)' if batch else ''} unit {unit + i}: points at "
                        f"commit-log offset {o}, in a segment file that is missing",
                        segs.place(o), Place(*_unit_place(files, unit + i)), topic, q,
                        None if batch else unit + i, o))
                bad = np.flatnonzero((ofs >= data_end) & (array[len_name] > 0))
                total += len(bad)
                for i in bad.tolist():
                    o = int(array[ofs_name][i])
                    found.add(Finding(
                        Kind.UNIT_PAST_END,
                        f"{topic}/{q}{' (batch consume queue)' if batch else ''} unit {unit + i}: points at "
                        f"commit-log offset {o}, at or past the end of the data ({data_end}); abnormal recovery "
                        f"truncates it",
                        segs.place(o), Place(*_unit_place(files, unit + i)), topic, q,
                        None if batch else unit + i, o))
                unit += len(array)
            if tally is not None:
                counted[(topic, q)] = (tally[0], tally[1])
        except RmqFormatError as exc:
            found.add(Finding(Kind.UNREADABLE, f"{topic}/{q}: {exc.whole()}", other=Place(_queue_folder(store, topic, q, batch)),
                              topic=topic, queue_id=q))
    return total


def _unit_place(files, unit: int) -> tuple[str, int | None]:
    located = files.file_of(unit)
    if located is None:
        return files.folder, None
    return located[0].path, located[1]


# -- index ------------------------------------------------------------------------------------


class _IndexStream:
    """The entries of every index file, in file order, matched against the walk's batches.

    The broker writes entries in commit-log order (``buildIndex`` skips a
    message before the newest file's end offset), so the entries of the
    files, one after the other, never go back in commit-log offset; each
    batch of messages takes the entries up to its last offset.
    """

    def __init__(self, store: Store, num_hash_slots, num_index, found: _Findings):
        self.found = found
        self.folder = store.path("index")
        self.files = []
        self.entries = 0
        from ..index import IndexFile
        # One by one (in the broker's load order), so that one unreadable file leaves the others checked.
        names = sorted(os.listdir(self.folder)) if os.path.isdir(self.folder) else []
        for name in names:
            path = os.path.join(self.folder, name)
            if not os.path.isfile(path):
                continue
            try:
                self.files.append(IndexFile(path, num_hash_slots=num_hash_slots, num_index=num_index))
            except (RmqFormatError, OSError) as exc:
                found.add(Finding(Kind.UNREADABLE, f"{path}: {exc}" if isinstance(exc, OSError) else exc.whole(),
                                  other=Place(path)))
                continue
            _check_header_times(self.files[-1], found)
        self.unreadable = len(self.files) < sum(os.path.isfile(os.path.join(self.folder, n)) for n in names)
        self._chunks = self._read_chunks()
        # Pending entries: phy offsets, hashes, file numbers, entry numbers.
        self._phy = np.zeros(0, np.int64)
        self._hash = np.zeros(0, np.int64)
        self._file = np.zeros(0, np.int64)
        self._num = np.zeros(0, np.int64)
        self._done = False
        # No index file at all (none readable when some are there is reported as unreadable, not as this).
        self.missing_all = not self.files and not self.unreadable

    def _read_chunks(self):
        for fno, f in enumerate(self.files):
            try:
                n = f.written_entries(strict=False)
                start = 1
                while start <= n:
                    stop = min(n + 1, start + _INDEX_CHUNK)
                    a = f.entry_array(start, stop)
                    yield (a["ofs_physical"].astype(np.int64), a["key_hash"].astype(np.int64),
                           np.full(len(a), fno, np.int64), np.arange(start, stop, dtype=np.int64))
                    start = stop
            except RmqFormatError as exc:
                self.found.add(Finding(Kind.UNREADABLE, exc.whole(), other=Place(f.path)))

    def _pull(self, upto: int | None) -> None:
        """Read chunks until the newest pending entry is past ``upto`` (``None``: read all)."""
        while not self._done and (upto is None or not len(self._phy) or self._phy[-1] <= upto):
            try:
                p, h, f, n = next(self._chunks)
            except StopIteration:
                self._done = True
                break
            self.entries += len(p)
            self._phy = np.concatenate([self._phy, p])
            self._hash = np.concatenate([self._hash, h])
            self._file = np.concatenate([self._file, f])
            self._num = np.concatenate([self._num, n])

    def _take(self, upto: int | None) -> tuple[np.ndarray, ...]:
        self._pull(upto)
        take = np.ones(len(self._phy), bool) if upto is None else self._phy <= upto
        out = (self._phy[take], self._hash[take], self._file[take], self._num[take])
        keep = ~take
        self._phy, self._hash, self._file, self._num = (self._phy[keep], self._hash[keep], self._file[keep],
                                                        self._num[keep])
        return out

    def _entry_place(self, fno: int, number: int) -> Place:
        f = self.files[fno]
        from ..index import ENTRY_SIZE, HEADER_SIZE, SLOT_SIZE
        return Place(f.path, HEADER_SIZE + f.num_hash_slots * SLOT_SIZE + number * ENTRY_SIZE)

    def apply(self, digest: tuple, segs: _Segments, found: _Findings) -> int:
        """Match the entries up to a batch's last offset with its keys (a :class:`_CheckFold` digest's
        index part), the findings into ``found``; returns the batch's messages with keys."""
        if digest[0] == "unreadable":
            return 0
        if digest[0] == "count":  # counted, nothing found (a zero count is kept as well)
            self.found.counts[Kind.MISSING_INDEX] += digest[1]
            return digest[2]
        _, indexed, off, tidx, names, rows, hashes, values = digest
        phy, h, fno, num = self._take(int(off[-1]))
        pos = np.searchsorted(off, phy)
        at = np.minimum(pos, len(off) - 1)
        hit = (pos < len(off)) & (off[at] == phy)
        entry_keys = (at.astype(np.int64) << 32) | (h & 0xFFFFFFFF)
        exp_rows = rows
        exp_keys = (exp_rows << 32) | (hashes & 0xFFFFFFFF)
        known = np.isin(entry_keys, exp_keys) & hit
        for j in np.flatnonzero(~known).tolist():
            p = int(phy[j])
            if p < segs.first:
                continue  # its commit-log segment was deleted
            why = ("no message starts there" if not hit[j]
                   else "the message there has no key with that hash")
            found.add(Finding(Kind.INDEX_ORPHAN,
                                   f"index entry {int(num[j])} of {os.path.basename(self.files[fno[j]].path)} points "
                                   f"at commit-log offset {p}: {why}",
                                   segs.place(p), self._entry_place(int(fno[j]), int(num[j])), commitlog_offset=p))
        have = np.isin(exp_keys, entry_keys[hit])
        for j in np.flatnonzero(~have).tolist():
            r = int(exp_rows[j])
            if found.full(Kind.MISSING_INDEX):
                found.counts[Kind.MISSING_INDEX] += 1
                continue
            o = int(off[r])
            key = values[j].as_py()
            where, how = self._covering(o, int(hashes[j]))
            found.add(Finding(Kind.MISSING_INDEX,
                                   f"{names[tidx[r]]}#{key}: the message at commit-log offset {o} is not in the "
                                   f"index (no entry with its offset and that key's hash; {how})",
                                   segs.place(o), where, names[tidx[r]], None, None, o))
        return indexed

    def _covering(self, offset: int, key_hash: int) -> tuple[Place, str]:
        """Where the entry should be found: the key's hash slot in the file whose range holds ``offset``.

        Returns the place and a few words for the finding's text; without
        such a file (removed, or never written), the index folder.
        """
        from ..index import HEADER_SIZE, SLOT_SIZE
        for f in self.files:
            h = f.header
            if h.begin_phy_offset <= offset <= h.end_phy_offset:
                return Place(f.path, HEADER_SIZE + (key_hash % f.num_hash_slots) * SLOT_SIZE), "its hash slot"
        if self.files and offset > self.files[-1].header.end_phy_offset:
            f = self.files[-1]  # after everything indexed: the newest file would have taken it
            return Place(f.path, HEADER_SIZE + (key_hash % f.num_hash_slots) * SLOT_SIZE), \
                "its hash slot in the newest file"
        return Place(self.folder, absent=not os.path.isdir(self.folder)), "no index file covers its offset"

    def finish(self, segs: _Segments, data_end: int | None) -> None:
        """Entries past the last message: they point past the end of data, or inside the last record."""
        phy, h, fno, num = self._take(None)
        for j in range(len(phy)):
            p = int(phy[j])
            if p < segs.first:
                continue
            why = ("past the end of the data" if data_end is not None and p >= data_end
                   else "no message starts there")
            self.found.add(Finding(Kind.INDEX_ORPHAN,
                                   f"index entry {int(num[j])} of {os.path.basename(self.files[fno[j]].path)} points "
                                   f"at commit-log offset {p}: {why}",
                                   segs.place(p), self._entry_place(int(fno[j]), int(num[j])), commitlog_offset=p))
        if self.missing_all and self.found.counts[Kind.MISSING_INDEX]:
            n = self.found.counts.pop(Kind.MISSING_INDEX)
            self.found.add(Finding(Kind.NO_INDEX,
                                   f"no index files: {n} key(s) of the commit log's messages are not indexed "
                                   f"(expected unless the broker ran with messageIndexEnable=false)",
                                   other=Place(self.folder, absent=not os.path.isdir(self.folder))))
        for f in self.files:
            f.close()


# -- timer log --------------------------------------------------------------------------------


def _check_timer(store: Store, data_end: int | None, segs: _Segments, found: _Findings) -> int:
    """Timer-log units must point at a ``rmq_sys_wheel_timer`` record of their size before the end of data."""
    try:
        ts = store.timer()
        if not ts.exists:
            return 0
        n = 0
        paths = {seg.start: seg.path for seg in ts.log_segments}
        scan = ts.scan()
        for u, record in _with_timer_targets(store, scan, segs.first, data_end, lambda u: u.commitlog_offset,
                                              lambda u: u.commitlog_size):
            n += 1
            o = u.commitlog_offset
            if o < segs.first:
                continue  # its commit-log segment was deleted
            where = Place(paths.get(u.offset - u.position, os.path.join(ts.log_folder, u.segment_name)), u.position)
            if data_end is not None and o + u.commitlog_size > data_end:
                found.add(Finding(Kind.TIMER_PAST_END,
                                  f"timer-log unit at {u.offset} points at commit-log offset {o} size "
                                  f"{u.commitlog_size}, past the end of the data ({data_end})",
                                  segs.place(o), where, commitlog_offset=o))
                continue
            why = _not_a_timer_message(record, u.commitlog_size, "unit")
            if why is not None:
                found.add(Finding(Kind.TIMER_NOT_TIMER,
                                  f"timer-log unit at {u.offset} points at commit-log offset {o}: {why}",
                                  segs.place(o), where, commitlog_offset=o))
        end = scan.end
        if end is not None and not end.reason.is_clean:
            pos = end.offset - next((start for start in sorted(paths, reverse=True) if start <= end.offset), 0)
            found.add(Finding(Kind.UNREADABLE,
                              f"the timer log's data ends at damage (timer-log offset {end.offset}: {end.reason.value}"
                              f"{': ' + end.detail if end.detail else ''}); the units after it are not checked",
                              other=Place(end.segment or ts.log_folder, pos if end.segment else None)))
        # The wheel and config/timercheck, which the timer store loads on start (and pending reads).
        for part in (lambda: ts.wheel, ts.checkpoint):
            try:
                part()
            except RmqFormatError as exc:
                found.add(Finding(Kind.UNREADABLE, exc.whole(), other=Place(
                    os.path.abspath(exc.path) if exc.path else ts.root, exc.offset)))
        return n
    except RmqFormatError as exc:
        found.add(Finding(Kind.UNREADABLE, exc.whole(), other=Place(store.path("timerlog"))))
        return 0


# -- RocksDB consume queue and message store ------------------------------------------------------


def _not_double_written(listed: list[tuple[str, int, bool]], rocks: "_Rocks", found: _Findings) -> None:
    """A combined store (file queues and a RocksDB consume queue) whose database lacks some topics' queues:
    with selective double write (``rocksdbCQSelectiveDoubleWriteEnable``, 5.5.1, apache/rocketmq #10450) the
    broker writes only selected topics to RocksDB, so those queues are checked as files only, not reported as
    missing units."""
    if not rocks.infos:
        return
    left = sorted((t, q) for t, q, batch in listed if not batch and (t, q) not in rocks.infos)
    if not left:
        return
    topics = sorted({t for t, _ in left})
    shown = ", ".join(topics[:5]) + (f" and {len(topics) - 5} more" if len(topics) > 5 else "")
    found.add(Finding(Kind.NOT_DOUBLE_WRITTEN,
                      f"{len(left)} file consume queue(s) of {len(topics)} topic(s) ({shown}) have no copy in the "
                      f"RocksDB consume queue: a combined store with selective double write "
                      f"(rocksdbCQSelectiveDoubleWriteEnable, 5.5.1) writes only selected topics to RocksDB, so "
                      f"they are checked as files only and not taken for missing units",
                      other=Place(rocks.queues.path)))


def _index_in_rocksdb(store: Store) -> bool:
    """No index files, and the RocksDB message store has index records or progress: the index is in RocksDB."""
    if store.root is None:
        return False
    folder = store.path("index")
    if os.path.isdir(folder) and os.listdir(folder):
        return False
    ms = store.rocksdb_message_store()
    if ms is None:
        return False
    from ..rocksdb.messagestore import CF_INDEX
    try:
        return ms.has(CF_INDEX) and (bool(ms.marks(CF_INDEX)) or ms.index_count() > 0)
    except RmqFormatError:
        return False


def _rocksdb_unreadable(store: Store) -> bool:
    """The store root has a RocksDB consume-queue folder (one :class:`_Rocks` could not open)."""
    from ..rocksdb.consumequeue import rocksdb_queues_paths
    return store.root is not None and bool(rocksdb_queues_paths(store.root))


class _RocksRaw:
    """A RocksDB consume queue's units in the shape of :class:`_RawQueue` (keys for places)."""

    def __init__(self, cq):
        self.cq = cq
        self.folder = cq.folder
        self.first_unit = cq.first_offset()

    def place(self, unit: int, bound: str | None = None) -> Place:
        from ..rocksdb.consumequeue import CF_OFFSETS, CF_UNITS
        if bound is not None:
            return Place(self.folder, key=f"[{CF_OFFSETS}] {self.cq.topic}/{self.cq.queue_id} {bound}")
        return Place(self.folder, key=f"[{CF_UNITS}] {self.cq.topic}/{self.cq.queue_id}/{unit}")

    def read(self, start: int, stop: int, ahead: _ReadAhead | None = None,
             upto: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Units ``start`` to ``stop - 1`` in native order (file unit fields), and which of them have a key
        (as :meth:`_RawQueue.read`; RocksDB reads nothing ahead)."""
        units = np.zeros(stop - start, CQ_UNIT_DTYPE.newbyteorder("="))
        present = np.zeros(stop - start, bool)
        for offsets, rows in self.cq._rows(max(start, 0), stop):
            i = offsets - start
            for mine, theirs in zip(CQ_UNIT_DTYPE.names or (), rows.dtype.names or ()):
                units[mine][i] = rows[theirs]
            present[i] = True
        return units, present


class _Rocks:
    """The RocksDB consume queue's side of :func:`cross_check`: queues, their states and findings."""

    def __init__(self, queues, infos, store: Store):
        self.queues = queues
        self.path = queues.path
        self.listed = infos
        self.infos = {(i.topic, i.queue_id): i for i in infos if not i.error}
        self.ends = {k: i.max_offset for k, i in self.infos.items()}
        self.states: dict[tuple[str, int], _QueueState] = {}
        self.raws: dict[tuple[str, int], _RocksRaw] = {}
        self.behind: dict[tuple[str, int], int] = {}
        # Only in RocksDB when consumequeue/ is the database itself or the topic has no folder there.
        self._files_root = store.path("consumequeue")
        self.max_end = 0
        for (topic, q), info in self.infos.items():
            if info.max_offset > info.min_offset:
                try:
                    u = queues.consume_queue(topic, q).unit(info.max_offset - 1)
                    self.max_end = max(self.max_end, u.commitlog_offset + u.size)
                except RmqFormatError:
                    pass

    @classmethod
    def open(cls, store: Store, found: _Findings) -> _Rocks | None:
        """The store's RocksDB consume queue, read; ``None`` without one or when it cannot be read (reported)."""
        if store.root is None:
            return None
        queues = store.rocksdb_queues()
        if queues is None:
            return None
        try:
            infos = queues.queues()
        except RmqFormatError as exc:
            found.add(Finding(Kind.UNREADABLE, f"the RocksDB consume queue cannot be read, its units are not "
                                               f"checked: {exc.reason}", other=Place(queues.path)))
            return None
        for i in infos:
            if i.error:
                found.add(Finding(Kind.UNREADABLE, f"{i.topic}/{i.queue_id}: {i.error}", other=Place(queues.path),
                                  topic=i.topic, queue_id=i.queue_id))
        return cls(queues, infos, store)

    def holds(self, topic: str, q: int) -> bool:
        """The messages of ``topic`` / ``q`` are checked against RocksDB (its queue, or no file folder for it)."""
        return (topic, q) in self.infos or not os.path.isdir(os.path.join(self._files_root, topic, str(q)))

    def raw(self, topic: str, q: int) -> _RocksRaw:
        raw = self.raws.get((topic, q))
        if raw is None:
            raw = self.raws[(topic, q)] = _RocksRaw(self.queues.consume_queue(topic, q))
        return raw

    def check(self, topic: str, q: int, eq: np.ndarray, eo: np.ndarray, es: np.ndarray, et: np.ndarray,
              segs: _Segments, found: _Findings, max_queue_end: int) -> None:
        """The units the messages of one batch should have, against the RocksDB consume queue."""
        state = self.states.get((topic, q))
        if state is None:
            state = self.states[(topic, q)] = _QueueState(False)
        last = int(np.argmax(eq))
        if eq[last] + 1 > state.next:
            state.next, state.last_offset = int(eq[last]) + 1, int(eo[last])
        low = int(eq.min())
        if state.first < 0 or low < state.first:
            state.first = low
        try:
            _check_units(self.raw(topic, q), topic, q, eq, eo, es, et, state, segs, found, max_queue_end,
                         self.ends.get((topic, q), 0))
        except RmqFormatError as exc:
            found.add(Finding(Kind.UNREADABLE, f"{topic}/{q}: {exc.whole()}", other=Place(self.path), topic=topic,
                              queue_id=q))

    def finish(self, segs: _Segments, data_end: int | None, found: _Findings) -> None:
        """Queues behind or ahead of the commit log, their ``max`` / ``min`` values against it, and keys
        of the units' column family that are no queue's unit."""
        try:
            count, first = self.queues.damaged_keys()
        except RmqFormatError as exc:
            count, first = 0, []
            found.add(Finding(Kind.UNREADABLE, str(exc), other=Place(self.queues.path)))
        for key in first:
            found.add(Finding(Kind.UNREADABLE,
                              f"a key of the RocksDB consume queue that is no unit of a queue it names ({count} such "
                              f"key(s) in all): {key.hex()}", other=Place(self.queues.path, key=f"[default] {key.hex()}")))
        for (topic, q), state in self.states.items():
            end = self.ends.get((topic, q), 0)
            raw = self.raw(topic, q)
            if state.next > end:
                self.behind[(topic, q)] = state.next - end
                found.add(Finding(
                    Kind.QUEUE_BEHIND,
                    f"{topic}/{q} (RocksDB consume queue): the queue ends at offset {end} but the commit log holds "
                    f"its messages up to queue offset {state.next - 1}: {state.next - end} message(s) have no unit, "
                    f"so consumers do not see them and lag is understated",
                    segs.place(state.last_offset), raw.place(end, "max"), topic, q, end, state.last_offset))
            elif state.next < end and data_end is not None:
                found.add(Finding(
                    Kind.QUEUE_AHEAD,
                    f"{topic}/{q} (RocksDB consume queue): the queue has units up to offset {end - 1} but the "
                    f"commit log's messages of this queue end at queue offset {state.next - 1}",
                    segs.place(data_end), raw.place(end - 1, "max"), topic, q, state.next, data_end))
        for (topic, q), info in self.infos.items():
            try:
                self._bounds(topic, q, info, segs, data_end, found)
            except RmqFormatError as exc:
                found.add(Finding(Kind.UNREADABLE, f"{topic}/{q}: {exc.whole()}", other=Place(self.path), topic=topic,
                                  queue_id=q))

    def _bounds(self, topic: str, q: int, info, segs: _Segments, data_end: int | None, found: _Findings) -> None:
        """A queue's ``max`` and ``min`` values, and the minimum offset the broker computes, against the commit log."""
        cq = self.queues.consume_queue(topic, q)
        raw = self.raw(topic, q)
        bounds = cq.bounds
        top, low = bounds.get("max"), bounds.get("min")
        if top is not None:
            unit = cq._value(top.cq_offset)
            if data_end is not None and top.commitlog_offset >= data_end:
                found.add(Finding(
                    Kind.QUEUE_BOUND,
                    f"{topic}/{q} (RocksDB consume queue): its max value (queue offset {top.cq_offset}) points at "
                    f"commit-log offset {top.commitlog_offset}, at or past the end of the data ({data_end}): the "
                    f"broker reports a max offset the commit log does not hold",
                    segs.place(top.commitlog_offset), raw.place(top.cq_offset, "max"), topic, q, top.cq_offset,
                    top.commitlog_offset))
            elif unit is None:
                found.add(Finding(
                    Kind.QUEUE_BOUND,
                    f"{topic}/{q} (RocksDB consume queue): its max value names queue offset {top.cq_offset} "
                    f"(commit-log offset {top.commitlog_offset}) but no unit has that key",
                    segs.place(top.commitlog_offset), raw.place(top.cq_offset, "max"), topic, q, top.cq_offset,
                    top.commitlog_offset))
            elif int(unit[0]) != top.commitlog_offset:
                found.add(Finding(
                    Kind.QUEUE_BOUND,
                    f"{topic}/{q} (RocksDB consume queue): its max value says queue offset {top.cq_offset} is at "
                    f"commit-log offset {top.commitlog_offset}, the unit there says {int(unit[0])}",
                    segs.place(top.commitlog_offset), raw.place(top.cq_offset, "max"), topic, q, top.cq_offset,
                    top.commitlog_offset))
        if low is not None:
            if top is not None and low.cq_offset > top.cq_offset + 1:
                found.add(Finding(
                    Kind.QUEUE_BOUND,
                    f"{topic}/{q} (RocksDB consume queue): its min value (queue offset {low.cq_offset}) is past its "
                    f"max value ({top.cq_offset}): the queue reads as empty",
                    segs.place(low.commitlog_offset), raw.place(low.cq_offset, "min"), topic, q, low.cq_offset,
                    low.commitlog_offset))
            elif data_end is not None and low.commitlog_offset >= data_end:
                found.add(Finding(
                    Kind.QUEUE_BOUND,
                    f"{topic}/{q} (RocksDB consume queue): its min value (queue offset {low.cq_offset}) points at "
                    f"commit-log offset {low.commitlog_offset}, at or past the end of the data ({data_end})",
                    segs.place(low.commitlog_offset), raw.place(low.cq_offset, "min"), topic, q, low.cq_offset,
                    low.commitlog_offset))
        state = self.states.get((topic, q))
        if state is not None and 0 <= state.first < info.min_offset <= info.max_offset:
            skipped = info.min_offset - state.first
            found.add(Finding(
                Kind.QUEUE_BOUND,
                f"{topic}/{q} (RocksDB consume queue): the broker's min offset is {info.min_offset} but the commit log "
                f"still holds the queue's messages from queue offset {state.first}: a consumer starting from the "
                f"min skips {skipped} message(s)",
                None, raw.place(info.min_offset, "min"), topic, q, info.min_offset, None))

    def units_past_end(self, segs: _Segments, data_end: int, found: _Findings) -> int:
        """Units of every RocksDB queue pointing at or past the end of data (or into a missing segment)."""
        total = 0
        starts = np.array(segs.starts, np.int64)
        sizes = np.array([seg.size for seg in segs.segments], np.int64)
        for (topic, q), info in self.infos.items():
            raw = self.raw(topic, q)
            try:
                for offsets, rows in raw.cq._rows(raw.first_unit, info.max_offset):
                    ofs = rows[rows.dtype.names[0]].astype(np.int64)
                    size = rows[rows.dtype.names[1]]
                    seg = np.searchsorted(starts, ofs, side="right") - 1
                    if len(starts):
                        in_file = (seg >= 0) & (ofs < starts[np.maximum(seg, 0)] + sizes[np.maximum(seg, 0)])
                    else:
                        in_file = np.zeros(len(ofs), bool)
                    for i in np.flatnonzero((ofs >= segs.first) & (ofs < data_end) & ~in_file & (size > 0)).tolist():
                        o, u = int(ofs[i]), int(offsets[i])
                        found.add(Finding(
                            Kind.UNIT_NO_SEGMENT,
                            f"{topic}/{q} (RocksDB consume queue) unit {u}: points at commit-log offset {o}, in a "
                            f"segment file that is missing", segs.place(o), raw.place(u), topic, q, u, o))
                    bad = np.flatnonzero((ofs >= data_end) & (size > 0))
                    total += len(bad)
                    for i in bad.tolist():
                        o, u = int(ofs[i]), int(offsets[i])
                        found.add(Finding(
                            Kind.UNIT_PAST_END,
                            f"{topic}/{q} (RocksDB consume queue) unit {u}: points at commit-log offset {o}, at or "
                            f"past the end of the data ({data_end})", segs.place(o), raw.place(u), topic, q, u, o))
            except RmqFormatError as exc:
                found.add(Finding(Kind.UNREADABLE, f"{topic}/{q}: {exc.whole()}", other=Place(self.path), topic=topic,
                                  queue_id=q))
        return total


def _check_rocksdb_messages(store: Store, data_end: int | None, segs: _Segments, found: _Findings, *,
                            timer: bool, index: bool) -> int:
    """The 5.4+ RocksDB message store's records against the commit log; returns the timer records checked.

    Timer records as timer-log units (before the end of data, at a timer
    message of their size); transaction and index records must point before
    the end of data.
    """
    if store.root is None:
        return 0
    ms = store.rocksdb_message_store()
    if ms is None:
        return 0
    from ..rocksdb.messagestore import CF_INDEX, CF_TIMER, CF_TRANS
    n = 0
    try:
        if timer and ms.has(CF_TIMER):
            for e, record in _with_timer_targets(store, ms.timer_entries(), segs.first, data_end,
                                                  lambda e: e.commitlog_offset, lambda e: e.size):
                n += 1
                o = e.commitlog_offset
                if o < segs.first:
                    continue  # its commit-log segment was deleted
                where = Place(ms.path, key=f"[{CF_TIMER}] {e.delivery_time}/{e.uniq_key}")
                if data_end is not None and o + e.size > data_end:
                    found.add(Finding(Kind.TIMER_PAST_END,
                                      f"RocksDB timer record {e.uniq_key} (due {e.delivery_time}) points at commit-log "
                                      f"offset {o} size {e.size}, past the end of the data ({data_end})",
                                      segs.place(o), where, commitlog_offset=o))
                    continue
                why = _not_a_timer_message(record, e.size, "record")
                if why is not None:
                    found.add(Finding(Kind.TIMER_NOT_TIMER,
                                      f"RocksDB timer record {e.uniq_key} (due {e.delivery_time}) points at commit-log "
                                      f"offset {o}: {why}", segs.place(o), where, commitlog_offset=o))
        if ms.has(CF_TRANS) and data_end is not None:
            for t in ms.trans_entries():
                if t.commitlog_offset >= segs.first and t.commitlog_offset + t.size > data_end:
                    found.add(Finding(Kind.TRANS_PAST_END,
                                      f"RocksDB transaction record {t.topic}@{t.uniq_key} points at commit-log offset "
                                      f"{t.commitlog_offset} size {t.size}, past the end of the data ({data_end}): "
                                      f"the broker's transaction check reads no half message there",
                                      segs.place(t.commitlog_offset),
                                      Place(ms.path, key=f"[{CF_TRANS}] {t.commitlog_offset}@{t.topic}@{t.uniq_key}"),
                                      t.topic, None, None, t.commitlog_offset))
        if index and ms.has(CF_INDEX) and data_end is not None:
            for x in ms.index_entries():
                if x.commitlog_offset >= max(segs.first, data_end):
                    found.add(Finding(Kind.INDEX_ORPHAN,
                                      f"RocksDB index entry {x.topic}#{x.key} ({x.index_type}) points at commit-log "
                                      f"offset {x.commitlog_offset}: past the end of the data ({data_end})",
                                      segs.place(x.commitlog_offset),
                                      Place(ms.path, key=f"[{CF_INDEX}] {x.store_hour}@{x.topic}@{x.index_type}@"
                                                         f"{x.key}@{x.commitlog_offset}"),
                                      x.topic, None, None, x.commitlog_offset))
    except RmqFormatError as exc:
        found.add(Finding(Kind.UNREADABLE, f"the RocksDB message store: {exc}", other=Place(ms.path)))
    return n


def _with_timer_targets(store: Store, items: Iterable, first: int, data_end: int | None, offset_of: Callable,
                        size_of: Callable):
    """Each of ``items`` (timer units or records) with what :meth:`CommitLog.read_along` reads for the record
    it points at, where it is one to check (in one of the store's segments, and within ``data_end``)."""
    return store.commitlog.read_along(items, offset=offset_of, size=size_of,
                                      wanted=lambda x: offset_of(x) >= first and not (
                                          data_end is not None and offset_of(x) + size_of(x) > data_end))


def _not_a_timer_message(msg, size: int, whose: str) -> str | None:
    """Why ``msg`` (a :class:`Message`, or the error of reading one) is not the timer message that a timer
    ``whose`` ("unit" or "record") of ``size`` points at."""
    if isinstance(msg, RmqFormatError):
        return f"no message: {msg.reason}"
    if msg.topic != TIMER_TOPIC:
        return f"a message of topic {msg.topic!r}, not {TIMER_TOPIC}"
    if TIMER_OUT_MS not in msg.properties:
        return f"a {TIMER_TOPIC} message without {TIMER_OUT_MS}"
    if msg.store_size != size:
        return f"a record of {msg.store_size} bytes, the {whose} says {size}"
    return None


def _confirm_note(confirm: int, after: list, data_end: int | None, segs: _Segments, found: _Findings,
                  checkpoint_path: str) -> None:
    """Messages starting past the checkpoint's ``confirmPhyOffset``."""
    count, first = after
    at = _checkpoint_fields()["ofs_confirm_phy"]
    end = f" up to the end of the data at {data_end}" if data_end is not None else ""
    found.add(Finding(
        Kind.AFTER_CONFIRM,
        f"{count} message(s) start past the checkpoint's confirmPhyOffset {confirm}, the first at commit-log offset "
        f"{first}{end}: a broker in controller mode (or with duplicationEnable) does not dispatch them on its next "
        f"start and cuts the commit log back to what its replicas confirm; otherwise the broker moves the confirm "
        f"offset to its last message (only that one then starts at it)",
        segs.place(first), Place(checkpoint_path, at), commitlog_offset=first))


# -- recovery ---------------------------------------------------------------------------------


def _checkpoint_fields() -> dict[str, int]:
    """Byte position of each field of the ``checkpoint`` file, from the spec's layout."""
    import struct
    from ..generated.layouts import rocketmq_checkpoint as cp_layout
    names, fmt = cp_layout.ROCKETMQ_CHECKPOINT_RUNS[0]
    return {name: struct.calcsize(fmt[0] + fmt[1:1 + i]) for i, name in enumerate(names)}


def _recovery_notes(plan: RecoveryPlan, segs: _Segments, found: _Findings, checkpoint_path: str) -> None:
    end = plan.data_end
    if plan.restart_dispatch and plan.restart_first is not None:
        found.add(Finding(
            Kind.RESTART,
            f"the next start dispatches the {plan.restart_dispatch} message(s) from commit-log offset "
            f"{plan.restart_first} (past the end of every queue's last unit, {plan.max_queue_end}) to their queues "
            f"and the index", segs.place(plan.restart_first), commitlog_offset=plan.restart_first))
    state = "the broker did not shut down cleanly (abort file)" if not plan.clean_shutdown else \
        "after a crash (there is no abort file now)"
    if plan.checkpoint is not None and plan.abnormal_segment is not None and end is not None:
        found.add(Finding(
            Kind.ABNORMAL_RECOVERY,
            f"{state}, abnormal recovery would start at segment {os.path.basename(plan.abnormal_segment)} "
            f"(the newest whose first message was stored at or before "
            f"{format_millis(plan.checkpoint.min_timestamp)}, the checkpoint's getMinTimestamp: the older of "
            f"physicMsgTimestamp and logicsMsgTimestamp less 3 s), dispatch {plan.abnormal_dispatch} message(s) again up to the end "
            f"of data at {end.offset} ({end.reason.value}), cut the commit log there and remove "
            f"{plan.truncated_units} consume-queue unit(s) at or past it",
            Place(plan.abnormal_segment, 0), Place(checkpoint_path, 0), commitlog_offset=plan.abnormal_start))
    if plan.checkpoint is not None:
        cp = plan.checkpoint
        at = _checkpoint_fields()
        for label, field_name, mark, (count, first) in (
                ("physicMsgTimestamp (commit-log flush)", "physic_msg_timestamp", cp.physic_msg_timestamp,
                 plan.after_physic),
                ("logicsMsgTimestamp (consume-queue flush)", "logics_msg_timestamp", cp.logics_msg_timestamp,
                 plan.after_logics),
                ("indexMsgTimestamp (index flush)", "index_msg_timestamp", cp.index_msg_timestamp,
                 plan.after_index)):
            if count and first is not None:
                found.add(Finding(Kind.AFTER_CHECKPOINT,
                                  f"{count} message(s) were stored after the checkpoint's {label} "
                                  f"{format_millis(mark)}, the first "
                                  f"at commit-log offset {first}",
                                  segs.place(first), Place(checkpoint_path, at[field_name]), commitlog_offset=first))


# -- lag ----------------------------------------------------------------------------------------


def undispatched(store: Store) -> dict[tuple[str, int], int]:
    """Per queue, the messages of the commit log past the end of every queue that the queue lacks.

    The cheap part of :func:`cross_check` that ``lag`` uses: only the commit
    log after ``maxPhyOffsetOfConsumeQueue`` (the largest end of a unit in any
    queue) is read, which is what the broker dispatches on its next start.
    A message counts for its queue when its queue offset is at or past the
    queue's end.
    """
    try:
        file_and_rocks = store.queues()
    except RmqFormatError:
        return {}  # a RocksDB consume queue that cannot be opened: nothing to compare with
    ends: dict[tuple[str, int], int] = {}
    start = None
    for batch, infos in ((False, file_and_rocks), (True, store.batch_queues())):
        for info in infos:
            if info.error:
                continue
            ends[(info.topic, info.queue_id)] = info.max_offset
            end = _last_unit_end(store, info.topic, info.queue_id, batch,
                                 None if batch or info.kind != "file" else {(info.topic, info.queue_id): info.max_offset})
            if end is not None:
                start = end if start is None else max(start, end)
    segments = store.commitlog.segments
    if not segments:
        return {}
    if start is None:
        start = segments[0].start_offset
    out: Counter[tuple[str, int]] = Counter()
    walk = store.commitlog.batches(columns=_COLUMNS, from_offset=start, decompress=False)
    for batch in walk:
        if not batch.num_rows:
            continue
        tran = transaction_types(batch)
        codes = pc.dictionary_encode(batch.column("topic"))
        expected = _expected_units(batch, (tran != TRAN_PREPARED) & (tran != TRAN_ROLLBACK),
                                   to_numpy(codes.indices), codes.dictionary.to_pylist(),
                                   to_numpy(batch.column("queueId")), to_numpy(batch.column("queueOffset")),
                                   to_numpy(batch.column("commitLogOffset")), to_numpy(batch.column("storeSize")))
        for key, (eq, *_) in expected.items():
            n = int((eq >= ends.get(key, 0)).sum())
            if n:
                out[key] += n
    return dict(out)


def findings_by_kind(findings: Iterable[Finding]) -> dict[Kind, list[Finding]]:
    """The findings grouped by kind, in :class:`Kind` order."""
    out: dict[Kind, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.kind, []).append(f)
    return {k: out[k] for k in Kind if k in out}
