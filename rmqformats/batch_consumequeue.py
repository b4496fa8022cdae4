"""Batch consume queues (5.x, ``batchconsumequeue/<topic>/<queueId>/``): units, offsets, messages.

Topics with ``queue.type=BatchCQ`` get a batch consume queue instead of a
consume queue. Each 46-byte unit points at one commit-log record and covers
``batch_size`` consecutive queue offsets from ``msg_base_offset``: one for
a plain message, ``INNER_NUM`` for an inner-batch record whose body holds
that many messages. The layout and the recovery test come from
``formats/rocketmq_batch_consumequeue.ksy`` through the generated layout
tables; the offset arithmetic follows ``BatchConsumeQueue`` (5.1.4-5.3.3).

:meth:`BatchConsumeQueue.messages` gives one :class:`QueueMessage` per
queue offset: the unit, the commit-log record, and for an inner batch the
item of the record's body that has that offset (item
``queue_offset - msg_base_offset``), as a consumer sees it after unwrapping.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import properties as props
from .batch import InnerMessage
from .commitlog import CommitLog
from .consumequeue import tags_code
from .errors import RmqFormatError, StoreNotFoundError, UnitMismatchError, UnitNotFoundError
from .frames import require_pandas
from .generated.layouts import rocketmq_batch_consumequeue as layout
from .message import Message
from .queuefiles import QueueInfo, UnitFiles, list_queue_dirs
from .queuearrow import Batches, batch_consume_queue_batches
from .storeview import StoreView
from .units import unit_dtype

if TYPE_CHECKING:
    import pandas
    import pyarrow


assert layout.UNIT_SEQ == ("ofs_commitlog", "len_message", "tags_code", "store_timestamp", "msg_base_offset",
                           "num_messages", "compacted_offset", "reserved")
UNIT_DTYPE = unit_dtype(layout.UNIT_RUNS, layout.UNIT_SEQ)
#: ``CQ_STORE_UNIT_SIZE``.
UNIT_SIZE = UNIT_DTYPE.itemsize
_IS_ACCEPTED = layout.UNIT_VALUES["is_accepted"]
_OFS, _LEN, _TAGS, _TIME, _BASE, _NUM, _COMPACTED, _RESERVED = layout.UNIT_SEQ
#: Units decoded per numpy read when iterating a queue.
BATCH_UNITS = 65536

#: Properties of an inner-batch record: the number of messages and the queue offset of the first.
INNER_NUM = "INNER_NUM"
INNER_BASE = "INNER_BASE"


class BcqUnit(NamedTuple):
    """One batch consume-queue unit; ``index`` is its number in the queue's unit stream."""

    index: int
    commitlog_offset: int
    size: int
    tags_code: int
    store_time: int
    #: Queue offset of the record's first message.
    msg_base_offset: int
    #: Number of queue offsets the record covers (``INNER_NUM``, or 1).
    batch_size: int
    compacted_offset: int
    reserved: int

    @property
    def end_offset(self) -> int:
        """Queue offset after the record's last message."""
        return self.msg_base_offset + self.batch_size

    def to_json_dict(self) -> dict:
        """The unit with the names RocketMQ's readers use."""
        return {"commitlogOffset": self.commitlog_offset, "size": self.size, "tagsCode": self.tags_code,
                "storeTime": self.store_time, "msgBaseOffset": self.msg_base_offset,
                "batchSize": self.batch_size, "compactedOffset": self.compacted_offset,
                "reservedInt": self.reserved}


class QueueMessage(NamedTuple):
    """The message at one queue offset of a batch consume queue.

    ``message`` is the commit-log record the unit points at. For an
    inner-batch record ``inner`` is the item of its body with this queue
    offset (item ``queue_offset - unit.msg_base_offset``); for a plain
    record it is ``None`` and the record is the message.
    """

    queue_offset: int
    unit: BcqUnit
    message: Message
    inner: InnerMessage | None

    @property
    def body(self) -> bytes:
        """The message body: the item's for an inner batch, else the record's (decompressed)."""
        return self.inner.body if self.inner is not None else self.message.body

    @property
    def properties(self) -> dict[str, str]:
        """The message properties: the item's for an inner batch, else the record's."""
        return self.inner.properties if self.inner is not None else self.message.properties

    @property
    def tags(self) -> str | None:
        """The ``TAGS`` property of the message."""
        return self.properties.get(props.TAGS)


@dataclass(frozen=True)
class BcqInconsistency:
    """A unit that disagrees with the commit-log record it points at, or with its neighbour."""

    topic: str
    queue_id: int
    #: ``<queueId>/<file> @ 0x…``: where the unit is.
    where: str
    unit: BcqUnit
    #: ``message``, ``topic``, ``queueId``, ``msgBaseOffset``, ``size``, ``batchSize``,
    #: ``innerBase``, ``storeTime`` or ``tagsCode``.
    field: str
    #: What the unit says (for ``msgBaseOffset`` against the previous unit: that unit's end).
    expected: object
    #: What the commit-log record (or the previous unit) says.
    found: object

    @property
    def cq_offset(self) -> int:
        """Queue offset of the unit's first message."""
        return self.unit.msg_base_offset

    def __str__(self) -> str:
        return (f"{self.where}: {self.topic}/{self.queue_id} unit {self.unit.index}: {self.field} "
                f"is {self.found!r} there, the unit says {self.expected!r}")


def _units(array: np.ndarray, first: int) -> Iterator[BcqUnit]:
    columns = [array[name].tolist() for name in layout.UNIT_SEQ]
    for i, row in enumerate(zip(*columns)):
        yield BcqUnit(first + i, *row)


def _inner_values(msg: Message) -> tuple[int, int] | None:
    """(INNER_BASE, INNER_NUM) when the record has both, as the dispatcher reads them; else ``None``."""
    base, num = msg.properties.get(INNER_BASE), msg.properties.get(INNER_NUM)
    if base is None or num is None:
        return None
    try:
        return int(base), int(num)
    except ValueError:
        return None


def unit_problems(unit: BcqUnit, msg: Message, topic: str, queue_id: int) -> list[tuple[str, object, object]]:
    """``(field, unit's value, record's value)`` for each way ``unit`` disagrees with ``msg``.

    The unit must be what the broker dispatches for the record: its topic
    and queue, base offset = QUEUEOFFSET (and ``INNER_BASE``), size =
    TOTALSIZE, batch size = ``INNER_NUM`` for a record that has
    ``INNER_NUM`` and ``INNER_BASE`` (else 1), store time = STORETIMESTAMP
    and tags code = hash of TAGS (0 without).
    """
    out: list[tuple[str, object, object]] = []
    if msg.topic != topic:
        out.append(("topic", topic, msg.topic))
    if msg.queue_id != queue_id:
        out.append(("queueId", queue_id, msg.queue_id))
    if msg.queue_offset != unit.msg_base_offset:
        out.append(("msgBaseOffset", unit.msg_base_offset, msg.queue_offset))
    inner = _inner_values(msg)
    if inner is not None and inner[0] != unit.msg_base_offset:
        out.append(("innerBase", unit.msg_base_offset, inner[0]))
    if msg.store_size != unit.size:
        out.append(("size", unit.size, msg.store_size))
    expected_batch = inner[1] if inner is not None else 1
    if expected_batch != unit.batch_size:
        out.append(("batchSize", unit.batch_size, expected_batch))
    if msg.store_timestamp != unit.store_time:
        out.append(("storeTime", unit.store_time, msg.store_timestamp))
    code = tags_code(msg.properties.get(props.TAGS))
    if code != unit.tags_code:
        out.append(("tagsCode", unit.tags_code, code))
    return out


class BatchConsumeQueue:
    """The batch consume queue of one topic queue.

    ``min_offset`` and ``max_offset`` are queue offsets (messages, not
    units), computed as the broker does: the first unit's base offset
    (moved past units whose record is before the commit log's first
    segment, ``correctMinOffset``, when the store is known), and the last
    unit's base offset plus its batch size. An empty queue has both 0.
    Units end where recovery stops (``BatchConsumeQueue.recover``). The
    ``store`` (or ``commitlog``) resolves units to messages; without either, the ``commitlog/``
    folder of the store root three folders up from ``folder`` (a DLedger
    store's queues are opened through their store).
    """

    def __init__(self, folder: str | os.PathLike[str], topic: str, queue_id: int, *,
                 store: StoreView | None = None, commitlog: CommitLog | None = None):
        self.folder = os.fspath(folder)
        self.topic = topic
        self.queue_id = queue_id
        self.store = store
        self.files = UnitFiles(self.folder, UNIT_DTYPE, _IS_ACCEPTED)
        self._min: int | None = None
        self._log = commitlog

    def __repr__(self) -> str:
        return f"BatchConsumeQueue({self.topic!r}, {self.queue_id}, {len(self.files.files)} files)"

    # -- units ---------------------------------------------------------------------------

    @property
    def first_unit(self) -> int:
        """Number of the first unit on disk."""
        return self.files.first_unit()

    @property
    def end_unit(self) -> int:
        """Number after the last unit recovery keeps."""
        return self.files.end_unit()

    def unit_array(self, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Units number ``start`` to ``stop - 1`` (clipped to the queue) as a numpy structured array."""
        return self.files.read(self.first_unit if start is None else start,
                               self.end_unit if stop is None else stop)

    def units(self, start: int | None = None, stop: int | None = None) -> Iterator[BcqUnit]:
        """The units numbered ``start`` to ``stop - 1`` (default: all), read in blocks."""
        unit = self.first_unit if start is None else max(start, self.first_unit)
        stop = self.end_unit if stop is None else min(stop, self.end_unit)
        while unit < stop:
            array = self.files.read(unit, min(stop, unit + BATCH_UNITS))
            if not len(array):
                break
            yield from _units(array, unit)
            unit += len(array)

    # The columnar readers are a capability above this reader; imported on first use only.
    def batches(self, start: int | None = None, stop: int | None = None, *, batch_size: int = 1 << 18) -> Batches:
        """The units of :meth:`units` as :class:`pyarrow.RecordBatch` objects (see :mod:`rmqformats.queuearrow`).

        Columns ``topic``, ``queueId``, ``unitIndex``, ``commitLogOffset``,
        ``size``, ``tagsCode``, ``storeTime``, ``msgBaseOffset``,
        ``batchSize``, ``compactedOffset``, ``reservedInt``. Option: ``batch_size``.
        """
        return batch_consume_queue_batches(self, start, stop, batch_size=batch_size)

    def to_arrow(self, start: int | None = None, stop: int | None = None, *, batch_size: int = 1 << 18) -> pyarrow.Table:
        """The units as one :class:`pyarrow.Table`; the options of :meth:`batches`."""
        return self.batches(start, stop, batch_size=batch_size).read_all()

    def to_pandas(self, start: int | None = None, stop: int | None = None, *, batch_size: int = 1 << 18) -> pandas.DataFrame:
        """The units as a :class:`pandas.DataFrame`, through :meth:`to_arrow`."""
        require_pandas()
        return self.to_arrow(start, stop, batch_size=batch_size).to_pandas()

    def unit(self, index: int) -> BcqUnit:
        """The unit numbered ``index``; raises :class:`UnitNotFoundError`."""
        if not self.first_unit <= index < self.end_unit:
            raise UnitNotFoundError(self.folder, None, f"unit {index} is outside the queue's units "
                                                       f"[{self.first_unit}, {self.end_unit})")
        return next(_units(self.files.read(index, index + 1), index))

    def location(self, index: int) -> tuple[str, int]:
        """(file path, byte position) of unit ``index``."""
        located = self.files.file_of(index)
        if located is None:
            raise UnitNotFoundError(self.folder, None, f"no file holds unit {index}")
        return located[0].path, located[1]

    # -- offsets -------------------------------------------------------------------------

    @property
    def max_offset(self) -> int:
        """Queue offset after the last message (``getMaxOffsetInQueue``)."""
        if self.end_unit <= self.first_unit:
            return 0
        return self.unit(self.end_unit - 1).end_offset

    @property
    def min_offset(self) -> int:
        """Queue offset of the first message (``getMinOffsetInQueue`` after ``correctMinOffset``)."""
        if self._min is None:
            first, end = self.first_unit, self.end_unit
            if end <= first:
                self._min = 0
            else:
                self._min = self.unit(first).msg_base_offset
                phy_min = self._commitlog_min()
                if phy_min is not None:
                    # Only the first file is looked at, as correctMinOffset does.
                    f = self.files.files[0]
                    stop = min(end, (f.start + f.size) // UNIT_SIZE)
                    for u in self.units(first, stop):
                        if u.commitlog_offset >= phy_min:
                            break
                        self._min = u.end_offset
        return self._min

    def _commitlog_min(self) -> int | None:
        """Start of the commit log's first segment; ``None`` when there is no store or segment."""
        try:
            segments = self._commitlog().segments
        except StoreNotFoundError:
            return None
        return segments[0].start_offset if segments else None

    def info(self) -> QueueInfo:
        """This queue's :class:`QueueInfo` (offsets in messages)."""
        return QueueInfo(self.topic, self.queue_id, self.min_offset, self.max_offset,
                         len(self.files.files), self.folder)

    def find(self, queue_offset: int) -> BcqUnit:
        """The unit holding ``queue_offset``: the last unit whose base offset is at most it.

        A binary search on ``msg_base_offset`` like ``getBatchMsgIndexBuffer``.
        Raises :class:`UnitNotFoundError` at or past ``max_offset``, before the
        first unit, or when the offset falls in a gap after the unit found
        (where the broker would hand out that unit anyway).
        """
        first, end = self.first_unit, self.end_unit
        if end <= first or queue_offset >= self.max_offset:
            raise UnitNotFoundError(self.folder, None, f"queue offset {queue_offset} is at or past the "
                                                       f"queue's end ({self.max_offset if end > first else 0})")
        lo, hi = first, end - 1
        if self.unit(lo).msg_base_offset > queue_offset:
            raise UnitNotFoundError(self.folder, None, f"queue offset {queue_offset} is before the first unit "
                                                       f"(base offset {self.unit(lo).msg_base_offset})")
        while lo < hi:  # invariant: base(lo) <= queue_offset, and the answer is in [lo, hi]
            mid = (lo + hi + 1) // 2
            if self.unit(mid).msg_base_offset <= queue_offset:
                lo = mid
            else:
                hi = mid - 1
        unit = self.unit(lo)
        if queue_offset >= unit.end_offset:
            path, pos = self.location(lo)
            raise UnitNotFoundError(path, pos, f"queue offset {queue_offset} is in no unit: the unit here "
                                               f"covers [{unit.msg_base_offset}, {unit.end_offset})")
        return unit

    # -- messages ------------------------------------------------------------------------

    def _commitlog(self) -> CommitLog:
        if self.store is not None:
            return self.store.commitlog
        if self._log is None:
            root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(self.folder))))
            folder = os.path.join(root, "commitlog")
            if not os.path.isdir(folder):
                raise StoreNotFoundError(folder, None, "no commit log beside this batch consume queue "
                                                       "(open the queue through its store)")
            self._log = CommitLog(folder)
        return self._log

    def resolve(self, unit: BcqUnit) -> Message:
        """The commit-log record of ``unit``; raises :class:`UnitMismatchError` naming the unit."""
        return self._resolved(unit, next(self._commitlog().read_each([unit.commitlog_offset], [unit.size])))

    def _resolved(self, unit: BcqUnit, msg: Message | RmqFormatError) -> Message:
        """``msg`` (:meth:`CommitLog.read_each`'s answer for ``unit``); raises :class:`UnitMismatchError`
        naming the unit where it is an error."""
        if isinstance(msg, RmqFormatError):
            path, pos = self.location(unit.index)
            raise UnitMismatchError(path, pos, f"unit {unit.index} points at commit-log offset "
                                               f"{unit.commitlog_offset}: {msg}") from msg
        return msg

    def messages(self, start: int | None = None, stop: int | None = None) -> Iterator[QueueMessage]:
        """The message of each queue offset from ``start`` to ``stop - 1`` (default: the whole queue).

        Inner-batch records are unwrapped: the message with queue offset
        ``q`` is item ``q - msg_base_offset`` of the record's body. Raises
        :class:`UnitMismatchError` for a unit whose record is missing or
        disagrees with it (queue, base offset, ``INNER_BASE``, size, batch
        size, or an item count other than the batch size), so a damaged
        unit never yields someone else's message.
        """
        start = self.min_offset if start is None else max(start, self.min_offset)
        stop = self.max_offset if stop is None else min(stop, self.max_offset)
        if start >= stop:
            return
        yield from self.messages_from(self.find(start).index, start, stop)

    def messages_from(self, first: int, start: int, stop: int) -> Iterator[QueueMessage]:
        """:meth:`messages` of the queue offsets ``start`` to ``stop - 1`` (within the queue's), from unit
        number ``first`` on: the unit holding ``start``, or a later one where a caller took the messages of
        the units before it another way."""
        units = itertools.takewhile(lambda u: u.msg_base_offset < stop, self.units(first))
        for unit, found in self._commitlog().read_along(units, offset=lambda u: u.commitlog_offset,
                                                        size=lambda u: u.size):
            msg = self._resolved(unit, found)
            problems = [p for p in unit_problems(unit, msg, self.topic, self.queue_id)
                        if p[0] not in ("storeTime", "tagsCode")]
            items: list[InnerMessage] = []
            if not problems and msg.has_flag("is_inner_batch"):
                items = msg.inner_messages()
                if len(items) != unit.batch_size:
                    problems.append(("innerMessages", unit.batch_size, len(items)))
            if problems:
                name, said, found = problems[0]
                path, pos = self.location(unit.index)
                raise UnitMismatchError(path, pos, f"unit {unit.index}: {name} is {found!r} in the commit-log "
                                                   f"record at {unit.commitlog_offset}, the unit says {said!r}")
            for q in range(max(start, unit.msg_base_offset), min(stop, unit.end_offset)):
                inner = items[q - unit.msg_base_offset] if items else None
                yield QueueMessage(q, unit, msg, inner)

    # -- consistency ---------------------------------------------------------------------

    def check(self, *, max_problems: int = 1000) -> list[BcqInconsistency]:
        """Every way the units disagree with their commit-log records or with each other.

        Each unit must point at a record that :func:`unit_problems` finds
        nothing wrong with, and start where the previous unit ends. Units
        whose record lies before the commit log's first segment (deleted
        by retention) are skipped. At most ``max_problems`` are listed.
        """
        out: list[BcqInconsistency] = []
        phy_min = self._commitlog_min() or 0
        previous: BcqUnit | None = None
        for unit, msg in self._commitlog().read_along(self.units(), offset=lambda u: u.commitlog_offset,
                                                      size=lambda u: u.size,
                                                      wanted=lambda u: u.commitlog_offset >= phy_min):
            found: list[tuple[str, object, object]] = []
            if previous is not None and unit.msg_base_offset != previous.end_offset:
                found.append(("msgBaseOffset", unit.msg_base_offset,
                              f"{previous.end_offset} (end of unit {previous.index})"))
            previous = unit
            if unit.commitlog_offset >= phy_min:
                if isinstance(msg, RmqFormatError):
                    found.append(("message", f"a message at commit-log offset {unit.commitlog_offset}",
                                  msg.reason))
                else:
                    found += unit_problems(unit, msg, self.topic, self.queue_id)
            where = self.files.where(unit.index) if found else ""
            out += [BcqInconsistency(self.topic, self.queue_id, where, unit, name, expected, value)
                    for name, expected, value in found]
            if len(out) >= max_problems:
                return out[:max_problems]
        return out


def list_batch_queues(parent: str | os.PathLike[str]) -> list[QueueInfo]:
    """A :class:`QueueInfo` (offsets in messages) for every queue under ``parent`` (``batchconsumequeue/``).

    A queue whose files cannot be read gets offsets 0 and the reason in
    ``error`` instead of stopping the listing.
    """
    out = []
    for topic, qid, folder in list_queue_dirs(os.fspath(parent)):
        bcq = BatchConsumeQueue(folder, topic, qid)
        try:
            out.append(bcq.info())
        except RmqFormatError as exc:
            out.append(QueueInfo(topic, qid, 0, 0, len(bcq.files.files), folder, exc.whole()))
    return out


__all__ = [
    "BATCH_UNITS", "INNER_BASE", "INNER_NUM", "UNIT_DTYPE", "UNIT_SIZE", "BatchConsumeQueue", "BcqInconsistency",
    "BcqUnit", "QueueMessage", "list_batch_queues", "unit_problems",
]
