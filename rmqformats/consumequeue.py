"""Consume queues (``consumequeue/<topic>/<queueId>/``): units, messages and consistency.

A consume queue holds one 20-byte unit per message of a topic queue: the
message's commit-log offset, its size and its tags code. Units are read as
numpy arrays (the layout, the recovery test and the placeholder test come
from ``formats/rocketmq_consumequeue.ksy`` through the generated layout
tables) and resolved to commit-log messages on demand.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import properties as props
from .errors import RmqFormatError, UnitNotFoundError
from .frames import require_pandas
from .generated.layouts import rocketmq_consumequeue as layout
from .javahash import java_string_hash, tags_code
from .message import Message
from .queuefiles import QueueInfo, UnitFiles, list_queue_dirs
from .queuearrow import Batches, consume_queue_batches
from .storeview import StoreView
from .units import unit_dtype

if TYPE_CHECKING:
    import pandas
    import pyarrow


UNIT_DTYPE = unit_dtype(layout.UNIT_RUNS, layout.UNIT_SEQ)
_IS_VALID = layout.UNIT_VALUES["is_valid"]
_IS_PLACEHOLDER = layout.UNIT_VALUES["is_placeholder"]
_IS_EXT_ADDRESS = layout.UNIT_VALUES["is_ext_address"]
_OFS, _LEN, _TAGS = layout.UNIT_SEQ
#: Units decoded per numpy read when iterating a queue.
BATCH_UNITS = 65536

#: The topic of delayed messages, whose units hold a delivery time instead of a tags hash.
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
#: The default ``messageDelayLevel`` of the broker, in milliseconds per level (1-based).
DEFAULT_DELAY_LEVELS_MS = tuple(
    n * {"s": 1000, "m": 60_000, "h": 3_600_000}[u[-1]]
    for u in "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h".split()
    for n in (int(u[:-1]),)
)
#: Properties of a light message queue (LMQ) multi-dispatch: the extra queues and their offsets.
INNER_MULTI_DISPATCH = "INNER_MULTI_DISPATCH"
INNER_MULTI_QUEUE_OFFSET = "INNER_MULTI_QUEUE_OFFSET"


class CqUnit(NamedTuple):
    """One consume-queue unit at logical offset ``cq_offset``."""

    cq_offset: int
    commitlog_offset: int
    size: int
    tags_code: int

    @property
    def is_placeholder(self) -> bool:
        """A placeholder before the queue's first message (``fillPreBlank``): no message."""
        return bool(_IS_PLACEHOLDER(self._asdict_spec()))

    @property
    def is_ext_address(self) -> bool:
        """``tags_code`` is the address of a ``consumequeue_ext`` unit, not a tags hash."""
        return bool(_IS_EXT_ADDRESS(self._asdict_spec()))

    def _asdict_spec(self) -> dict[str, int]:
        return {_OFS: self.commitlog_offset, _LEN: self.size, _TAGS: self.tags_code}

    def to_json_dict(self) -> dict:
        """The unit with RocketMQ's names (``cqOffset``, ``commitLogOffset``, ``size``, ``tagsCode``)."""
        return {"cqOffset": self.cq_offset, "commitLogOffset": self.commitlog_offset,
                "size": self.size, "tagsCode": self.tags_code}


class UnitStatus(enum.Enum):
    """What a unit's commit-log offset leads to."""

    OK = "ok"
    PLACEHOLDER = "placeholder: no message"
    DELETED = "commit-log range deleted"
    BEYOND_END = "past the end of the commit-log data"
    NO_MESSAGE = "no message starts at the offset"


class ResolvedUnit(NamedTuple):
    """A unit and the commit-log message it points at (``None`` unless ``status`` is OK)."""

    unit: CqUnit
    status: UnitStatus
    message: Message | None
    #: Why the message could not be read, for NO_MESSAGE.
    detail: str = ""


def _units(array: np.ndarray, first: int) -> Iterator[CqUnit]:
    offsets, sizes, tags = (array[n].tolist() for n in (_OFS, _LEN, _TAGS))
    for i, (o, s, t) in enumerate(zip(offsets, sizes, tags)):
        yield CqUnit(first + i, o, s, t)


class ConsumeQueue:
    """The consume queue of one topic queue.

    ``min_offset`` and ``max_offset`` are the logical offsets of the first
    message on disk and of the next message to come (the broker's
    ``getMaxOffsetInQueue``), so the queue holds ``max_offset - min_offset``
    messages. ``store`` (the :class:`~rmqformats.store.Store`) is needed to
    resolve units to messages.
    """

    #: Where the units are kept (``"rocksdb"`` for :class:`rmqformats.rocksdb.RocksDBConsumeQueue`).
    kind = "file"

    def __init__(self, folder: str, topic: str, queue_id: int, *, store: StoreView | None = None):
        self.folder = folder
        self.topic = topic
        self.queue_id = queue_id
        self.store = store
        self.files = UnitFiles(folder, UNIT_DTYPE, _IS_VALID)
        self._min: int | None = None

    def __repr__(self) -> str:
        return f"ConsumeQueue({self.topic!r}, {self.queue_id}, {len(self.files.files)} files)"

    @property
    def max_offset(self) -> int:
        """Logical offset after the last unit (recovery's end of the queue)."""
        return self.files.end_unit()

    @property
    def min_offset(self) -> int:
        """Logical offset of the first message still readable: the broker's ``getMinOffsetInQueue``.

        Placeholder units are skipped, and, when the queue was opened
        through its store, so are units whose commit-log segment has been
        deleted (``correctMinOffset``).
        """
        if self._min is None:
            start, end = self.files.first_unit(), self.max_offset
            segments = self.store.commitlog.segments if self.store is not None else ()
            phy_min = segments[0].start_offset if segments else 0
            self._min = end
            # The first unit is nearly always the one: read a few, then more and more (up to a batch).
            step = 1024
            while start < end:
                array = self.files.read(start, min(end, start + step))
                real = np.flatnonzero(~_IS_PLACEHOLDER(array) & (array[_OFS] >= phy_min))
                if real.size:
                    self._min = start + int(real[0])
                    break
                start += len(array)
                step = min(step * 4, BATCH_UNITS)
        return self._min

    def info(self) -> QueueInfo:
        """This queue's :class:`QueueInfo`."""
        return QueueInfo(self.topic, self.queue_id, self.min_offset, self.max_offset,
                         len(self.files.files), self.folder)

    def unit_array(self, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Units ``start`` to ``stop - 1`` (clipped to the queue) as a numpy structured array."""
        return self.files.read(self.files.first_unit() if start is None else start,
                               self.max_offset if stop is None else stop)

    def units(self, start: int | None = None, stop: int | None = None, *,
              tag: str | None = None) -> Iterator[CqUnit]:
        """The units from ``start`` to ``stop - 1``, placeholders skipped.

        By default from the first unit on disk, so units whose commit-log
        segment was deleted are included (:meth:`resolve` says so).

        With ``tag``, only units whose tags code is that tag's hash (the
        broker's server-side filter; hashes can collide, so resolve the
        units to check the tags). In ``SCHEDULE_TOPIC_XXXX`` tags codes are
        delivery times, so ``tag`` is rejected there.
        """
        for chunk in self.unit_chunks(start, stop, tag=tag):
            for o, p, s, t in zip(*(values.tolist() for values in chunk)):
                yield CqUnit(o, p, s, t)

    def unit_chunks(self, start: int | None = None, stop: int | None = None, *,
                    tag: str | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """The units of :meth:`units` a chunk at a time, as arrays: their logical offsets, commit-log
        offsets, sizes and tags codes."""
        code = self._tag_filter(tag)
        unit = self.files.first_unit() if start is None else max(start, self.files.first_unit())
        stop = self.max_offset if stop is None else min(stop, self.max_offset)
        while unit < stop:
            array = self.files.read(unit, min(stop, unit + BATCH_UNITS))
            if not len(array):
                break
            keep = ~_IS_PLACEHOLDER(array)
            if code is not None:
                keep &= array[_TAGS] == code
            index = np.flatnonzero(keep)
            if len(index):
                picked = array[index]
                yield index + unit, picked[_OFS], picked[_LEN], picked[_TAGS]
            unit += len(array)

    def _tag_filter(self, tag: str | None) -> int | None:
        """The tags code units must have for ``tag`` (``None``: no filter); rejects a tag in ``SCHEDULE_TOPIC_XXXX``."""
        if tag is None:
            return None
        if self.topic == SCHEDULE_TOPIC:
            raise ValueError(f"units of {SCHEDULE_TOPIC} hold delivery times, not tag hashes: "
                             f"filter their messages by tag instead")
        return tags_code(tag)

    # The columnar readers are a capability above this reader; imported on first use only.
    def batches(self, start: int | None = None, stop: int | None = None, *, placeholders: bool = False,
                tag: str | None = None, batch_size: int = 1 << 18) -> Batches:
        """The units of :meth:`units` as :class:`pyarrow.RecordBatch` objects (see :mod:`rmqformats.queuearrow`).

        Columns ``topic``, ``queueId``, ``cqOffset``, ``commitLogOffset``,
        ``size``, ``tagsCode``. Options: ``placeholders`` (keep placeholder
        units, as :meth:`unit_array` does), ``tag``, ``batch_size``.
        """
        return consume_queue_batches(self, start, stop, placeholders=placeholders, tag=tag, batch_size=batch_size)

    def to_arrow(self, start: int | None = None, stop: int | None = None, *, placeholders: bool = False,
                 tag: str | None = None, batch_size: int = 1 << 18) -> pyarrow.Table:
        """The units as one :class:`pyarrow.Table`; the options of :meth:`batches`."""
        return self.batches(start, stop, placeholders=placeholders, tag=tag, batch_size=batch_size).read_all()

    def to_pandas(self, start: int | None = None, stop: int | None = None, *, placeholders: bool = False,
                  tag: str | None = None, batch_size: int = 1 << 18) -> pandas.DataFrame:
        """The units as a :class:`pandas.DataFrame`, through :meth:`to_arrow`."""
        require_pandas()
        return self.to_arrow(start, stop, placeholders=placeholders, tag=tag, batch_size=batch_size).to_pandas()

    def unit(self, cq_offset: int) -> CqUnit:
        """The unit at logical offset ``cq_offset``; raises :class:`UnitNotFoundError`."""
        if not self.files.first_unit() <= cq_offset < self.max_offset:
            raise UnitNotFoundError(self.folder, None,
                                    f"offset {cq_offset} is outside the queue's units "
                                    f"[{self.files.first_unit()}, {self.max_offset})")
        return next(_units(self.files.read(cq_offset, cq_offset + 1), cq_offset))

    def resolve(self, unit: CqUnit) -> ResolvedUnit:
        """Read the message ``unit`` points at, or say why there is none."""
        return next(self.resolve_each([unit]))

    def resolve_each(self, units: Iterable[CqUnit]) -> Iterator[ResolvedUnit]:
        """:meth:`resolve` of each of ``units``, in order: their messages read a chunk at a time
        (:meth:`~rmqformats.commitlog.CommitLog.read_along`)."""
        commitlog = self._store().commitlog
        segments = commitlog.segments
        first = segments[0].start_offset if segments else None
        end = segments[-1].start_offset + segments[-1].size if segments else None

        def readable(u: CqUnit) -> bool:
            return first is not None and first <= u.commitlog_offset < end and not u.is_placeholder

        for unit, m in commitlog.read_along(units, offset=lambda u: u.commitlog_offset, size=lambda u: u.size,
                                            wanted=readable):
            if m is not None:
                yield (ResolvedUnit(unit, UnitStatus.NO_MESSAGE, None, m.whole()) if isinstance(m, RmqFormatError)
                       else ResolvedUnit(unit, UnitStatus.OK, m))
            elif unit.is_placeholder:
                yield ResolvedUnit(unit, UnitStatus.PLACEHOLDER, None)
            elif first is None or unit.commitlog_offset < first:
                yield ResolvedUnit(unit, UnitStatus.DELETED, None, "no commit-log segment holds this offset any more")
            else:
                yield ResolvedUnit(unit, UnitStatus.BEYOND_END, None)

    def messages(self, start: int | None = None, stop: int | None = None, *,
                 tag: str | None = None) -> Iterator[ResolvedUnit]:
        """Units resolved to their messages; with ``tag``, only messages carrying that tag."""
        hash_filter = None if self.topic == SCHEDULE_TOPIC else tag
        for resolved in self.resolve_each(self.units(start, stop, tag=hash_filter)):
            if tag is not None and (resolved.message is None or resolved.message.tags != tag):
                continue
            yield resolved

    def _store(self) -> StoreView:
        if self.store is None:
            raise ValueError("this consume queue was opened without its store; use Store.consume_queue()")
        return self.store


def list_queues(parent: str, store: StoreView | None = None) -> list[QueueInfo]:
    """A :class:`QueueInfo` for every queue under ``parent`` (``consumequeue/``).

    With the ``store``, minimum offsets skip units of deleted commit-log
    segments, as the broker's do. A queue whose files cannot be read gets
    offsets 0 and the reason in ``error`` instead of stopping the listing.
    """
    out = []
    for topic, qid, folder in list_queue_dirs(parent):
        cq = ConsumeQueue(folder, topic, qid, store=store)
        try:
            out.append(cq.info())
        except RmqFormatError as exc:
            out.append(QueueInfo(topic, qid, 0, 0, len(cq.files.files), folder, exc.whole()))
    return out


# -- consistency ------------------------------------------------------------------------


@dataclass(frozen=True)
class Inconsistency:
    """A consume-queue unit that disagrees with the commit-log record it points at."""

    topic: str
    queue_id: int
    cq_offset: int
    #: ``<queueId>/<file> @ 0x…``: where the unit is.
    where: str
    unit: CqUnit
    #: The field that disagrees (``message``, ``topic``, ``queueId``, ``queueOffset``, ``size``, ``tagsCode``).
    field: str
    expected: object
    found: object

    def __str__(self) -> str:
        return (f"{self.where}: {self.topic}/{self.queue_id} unit {self.cq_offset}: {self.field} "
                f"of the commit-log record is {self.found!r}, the unit says {self.expected!r}")


@dataclass(frozen=True)
class ConsistencyReport:
    """The result of :func:`check_consistency`."""

    queues: int
    units: int
    #: :class:`Inconsistency` for consume queues, ``BcqInconsistency`` for batch consume queues.
    problems: tuple = field(default_factory=tuple)
    #: Queues that could not be read at all, with the reason.
    unreadable: tuple[tuple[str, int, str], ...] = field(default_factory=tuple)
    #: Units pointing at a deleted commit-log range (expected on a live broker, not an error).
    deleted: int = 0

    @property
    def ok(self) -> bool:
        """No inconsistency and no unreadable queue."""
        return not self.problems and not self.unreadable


def _expected_queue(msg: Message, topic: str, queue_id: int) -> tuple[str, int, int | None]:
    """(topic, queue id, queue offset) the record gives for a unit of ``topic``/``queue_id``.

    A light message queue (LMQ) unit points at its parent's record; its
    offset is the matching entry of ``INNER_MULTI_QUEUE_OFFSET``.
    """
    if msg.topic != topic:
        queues = msg.properties.get(INNER_MULTI_DISPATCH, "").split(",")
        offsets = msg.properties.get(INNER_MULTI_QUEUE_OFFSET, "").split(",")
        if topic in queues and len(offsets) == len(queues):
            try:
                return topic, queue_id, int(offsets[queues.index(topic)])
            except ValueError:
                return topic, queue_id, None
    return msg.topic, msg.queue_id, msg.queue_offset


def expected_tags_code(msg: Message, delay_levels_ms: tuple[int, ...] = DEFAULT_DELAY_LEVELS_MS) -> int | None:
    """The tags code the broker dispatches for ``msg`` (``None`` if it cannot be known).

    In ``SCHEDULE_TOPIC_XXXX`` it is the delivery time: store time plus the
    delay of the message's level (from ``messageDelayLevel``).
    """
    if msg.topic == SCHEDULE_TOPIC:
        level = msg.delay_time_level
        if level <= 0:
            return msg.store_timestamp
        if level > len(delay_levels_ms):
            level = len(delay_levels_ms)
        return msg.store_timestamp + delay_levels_ms[level - 1]
    return tags_code(msg.properties.get(props.TAGS))


def check_queue(cq: ConsumeQueue, *, delay_levels_ms: tuple[int, ...] = DEFAULT_DELAY_LEVELS_MS,
                max_problems: int = 1000) -> tuple[int, list[Inconsistency], int]:
    """Check every unit of ``cq``; returns (units checked, problems, units in deleted ranges)."""
    problems: list[Inconsistency] = []
    checked = deleted = 0
    for unit in cq.units():
        checked += 1
        resolved = cq.resolve(unit)

        def report(name: str, expected: object, found: object) -> None:
            problems.append(Inconsistency(cq.topic, cq.queue_id, unit.cq_offset, cq.files.where(unit.cq_offset),
                                          unit, name, expected, found))

        if resolved.status is UnitStatus.DELETED:
            deleted += 1
            continue
        msg = resolved.message
        if msg is None:
            report("message", f"a message at commit-log offset {unit.commitlog_offset}",
                   resolved.detail or resolved.status.value)
        else:
            topic, queue_id, queue_offset = _expected_queue(msg, cq.topic, cq.queue_id)
            if topic != cq.topic:
                report("topic", cq.topic, msg.topic)
            elif queue_id != cq.queue_id:
                report("queueId", cq.queue_id, queue_id)
            elif queue_offset != unit.cq_offset:
                report("queueOffset", unit.cq_offset, queue_offset)
            if msg.store_size != unit.size:
                report("size", unit.size, msg.store_size)
            if not unit.is_ext_address:
                code = expected_tags_code(msg, delay_levels_ms)
                if code is not None and code != unit.tags_code:
                    report("tagsCode", unit.tags_code, code)
        if len(problems) >= max_problems:
            del problems[max_problems:]  # one unit can disagree in several fields
            break
    if cq.kind == "rocksdb" and len(problems) < max_problems:  # keys missing between the min and max offsets
        problems += cq.missing_units(max_problems - len(problems))  # type: ignore[attr-defined]
    return checked, problems, deleted


def deleted_below(cq: ConsumeQueue) -> int:
    """The commit-log offset below which a unit of ``cq`` points into a deleted range: the first segment's
    start (0 for a queue without a store or a store without segments)."""
    segments = cq.store.commitlog.segments if cq.store is not None else ()
    return segments[0].start_offset if segments else 0


def tally_units(array: np.ndarray, below: int) -> tuple[int, int]:
    """Of the file units ``array`` (``UnitFiles.read``), those :func:`check_queue` checks (all but the
    placeholders) and those of them pointing below ``below`` (:func:`deleted_below`)."""
    real = ~_IS_PLACEHOLDER(array)
    return int(real.sum()), int((real & (array[_OFS] < below)).sum())


def _checkable_units(cq: ConsumeQueue, stop: threading.Event | None = None) -> tuple[int, int]:
    """(units :func:`check_queue` would check, those of them in deleted commit-log ranges), read in batches
    (until ``stop`` is set: then the counts are partial, and not used)."""
    below = deleted_below(cq)
    total = deleted = 0
    unit, end = cq.files.first_unit(), cq.max_offset
    while unit < end and not (stop is not None and stop.is_set()):
        array = cq.files.read(unit, min(end, unit + BATCH_UNITS))
        if not len(array):
            break
        n, d = tally_units(array, below)
        total += n
        deleted += d
        unit += len(array)
    return total, deleted


def _listed(store: StoreView, info: QueueInfo):
    """The queue of ``info``, a listing just made: a file queue takes the end the listing found."""
    cq = store.consume_queue(info.topic, info.queue_id, kind=info.kind)
    if info.kind == "file":
        cq.files.known_end(info.max_offset)
    return cq


def _counted(store: StoreView, info: QueueInfo, stop: threading.Event) -> tuple[ConsumeQueue, tuple[int, int]]:
    """A queue and its :func:`_checkable_units`, on a thread."""
    cq = _listed(store, info)
    return cq, _checkable_units(cq, stop)


def check_consistency(store: StoreView, *, topic: str | None = None, queue_id: int | None = None,
                      delay_levels_ms: tuple[int, ...] = DEFAULT_DELAY_LEVELS_MS,
                      max_problems: int = 1000,
                      verified: dict[tuple[str, int], int] | None = None,
                      queues: Iterable[QueueInfo] | None = None,
                      counted: dict[tuple[str, int], tuple[int, int]] | None = None) -> ConsistencyReport:
    """Check that every consume-queue unit points at a commit-log message that agrees with it.

    Batch consume queues are checked too (see
    :meth:`rmqformats.batch_consumequeue.BatchConsumeQueue.check`); their
    problems are :class:`~rmqformats.batch_consumequeue.BcqInconsistency`.

    For each unit the record at its commit-log offset must exist and have
    the queue's topic and queue id, the unit's logical offset as queue
    offset (for LMQ queues, the matching ``INNER_MULTI_QUEUE_OFFSET``), the
    unit's size as TOTALSIZE, and the tags code the broker would dispatch
    (tags hash, or delivery time in ``SCHEDULE_TOPIC_XXXX``; ext addresses
    are not compared). Units before the commit log's first segment are
    counted as deleted, not reported. At most ``max_problems`` are listed.

    ``verified`` maps a consume queue to the number of its units already
    found to agree with their records in all these fields (by
    :func:`rmqformats.recovery.cross_check`, from the commit log's side); a
    queue all of whose units are is counted without being read again.

    ``queues``: the store's file and RocksDB queues (``store.queues()``) as a
    listing just made found them (their ends are not walked for again).

    ``counted`` maps a file consume queue to its units as this check counts
    them (:func:`tally_units` over every unit up to the end ``queues`` gives),
    counted already by a caller that read them all for another reason
    (:func:`rmqformats.recovery.cross_check`): a verified queue found there is
    not read again.
    """
    file_infos = list(store.queues() if queues is None else queues)
    # The verified queues' units are only counted: on several threads (reads and numpy sums release the GIL),
    # as many as the commit log's walk has jobs, ahead of the loop that takes the counts in order.
    counted = counted or {}
    wanted = [] if not verified else [
        i for i in file_infos if not i.error and i.kind == "file" and (i.topic, i.queue_id) in verified
        and (i.topic, i.queue_id) not in counted
        and (topic is None or i.topic == topic) and (queue_id is None or i.queue_id == queue_id)]
    jobs = min(getattr(getattr(store, "commitlog", None), "jobs", 1) or 1, len(wanted))
    pool = ThreadPoolExecutor(jobs) if jobs > 1 else None
    stop = threading.Event()  # set when the loop ends early (a limit, an error, Ctrl-C): the counts stop too
    counts = {} if pool is None else {
        (i.topic, i.queue_id): pool.submit(_counted, store, i, stop) for i in wanted}
    try:
        return _check_queues(store, file_infos, counts, counted, topic=topic, queue_id=queue_id,
                             delay_levels_ms=delay_levels_ms, max_problems=max_problems, verified=verified)
    finally:
        stop.set()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _check_queues(store: StoreView, file_infos: list, counts: dict, counted: dict, *, topic: str | None,
                  queue_id: int | None, delay_levels_ms: tuple[int, ...], max_problems: int,
                  verified: dict[tuple[str, int], int] | None) -> ConsistencyReport:
    """:func:`check_consistency`'s loop over the queues; ``counts``: futures of :func:`_counted` for the verified
    queues counted ahead; ``counted``: the counts the caller gave."""
    problems: list = []
    unreadable = []
    queues = units = deleted = 0
    # Batch consume queues (5.x ``queue.type=BatchCQ``) are checked after the consume queues.
    for batch, infos in ((False, file_infos), (True, store.batch_queues())):
        for info in infos:
            if len(problems) >= max_problems:
                break
            if (topic is not None and info.topic != topic) or (queue_id is not None and info.queue_id != queue_id):
                continue
            queues += 1
            if info.error:
                unreadable.append((info.topic, info.queue_id, info.error))
                continue
            try:
                if batch:
                    bcq = store.batch_consume_queue(info.topic, info.queue_id)
                    n, found, d = (sum(1 for _ in bcq.units()),
                                   bcq.check(max_problems=max_problems - len(problems)), 0)
                else:
                    ahead = counts.pop((info.topic, info.queue_id), None)
                    cq, tally = ahead.result() if ahead is not None else (
                        _listed(store, info), counted.get((info.topic, info.queue_id)))
                    # The commit-log walk verifies file consume queues only.
                    done = None if verified is None or info.kind != "file" else verified.get((info.topic, info.queue_id))
                    if done is not None:
                        n, d = _checkable_units(cq) if tally is None else tally
                        if n - d == done:
                            units += n
                            deleted += d
                            continue
                    n, found, d = check_queue(cq, delay_levels_ms=delay_levels_ms,
                                              max_problems=max_problems - len(problems))
            except RmqFormatError as exc:
                unreadable.append((info.topic, info.queue_id, exc.whole()))
                continue
            units += n
            deleted += d
            problems += found
    return ConsistencyReport(queues, units, tuple(problems), tuple(unreadable), deleted)


__all__ = [
    "BATCH_UNITS", "ConsistencyReport", "ConsumeQueue", "CqUnit", "Inconsistency", "QueueInfo",
    "ResolvedUnit", "UnitStatus", "check_consistency", "check_queue", "expected_tags_code",
    "deleted_below", "java_string_hash", "list_queues", "tags_code", "tally_units",
]
