"""Consumer lag computed offline from ``config/consumerOffset.json`` and the consume queues.

For every consumer group and topic queue that has a committed offset, the
lag is the queue's max offset (the broker's ``getMaxOffsetInQueue``: the
offset the next message will get) minus the committed offset (the next
offset the group will consume), as ``ConsumeStats`` in the broker's admin
API counts it. Queues of the same topic on disk without a committed offset
are listed too, counted from 0 as the broker does (``queryOffset`` < 0 → 0).

Topics with ``queue.type=BatchCQ`` (5.x) are read from ``batchconsumequeue/``,
whose offsets count messages inside batches. LMQ offsets
(``lmqConsumerOffset.json``) are queue 0 of their ``%LMQ%`` topic.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from .errors import RmqFormatError

if TYPE_CHECKING:
    import pandas
    import pyarrow

    from .queuefiles import QueueInfo
    from .storeview import StoreView


#: The largest value of a Java long: queue offsets are longs in the broker.
LONG_MAX = (1 << 63) - 1


class LagRow(NamedTuple):
    """Lag of one consumer group on one topic queue."""

    group: str
    topic: str
    queue_id: int
    #: Next offset the group will consume (``consumerOffset.json``); ``None`` when it has none.
    committed_offset: int | None
    #: First offset still on disk.
    min_offset: int
    #: Offset the next message will get (``getMaxOffsetInQueue``); 0 when the queue has no files.
    max_offset: int
    #: ``max_offset - committed_offset`` (committed taken as 0 when absent), never below 0.
    lag: int
    #: Messages still on disk that the group has not consumed: ``max_offset - max(committed, min_offset)``.
    available: int
    #: Store time (epoch ms) of the next message the group will get; ``None`` when caught up or unknown.
    next_message_store_time: int | None
    #: The committed offset is below ``min_offset``: messages were deleted before being consumed.
    behind_min: bool
    #: The committed offset is past ``max_offset`` (queue truncated or offset reset beyond the end).
    beyond_max: bool
    #: ``SimpleCQ`` (``consumequeue/``) or ``BatchCQ`` (``batchconsumequeue/``).
    queue_type: str
    #: The queue has files on disk.
    queue_found: bool
    #: Anything else worth knowing (why the store time is missing, …).
    note: str = ""
    #: Messages of this queue in the commit log past the queue's end (not yet dispatched to it): the
    #: queue is behind the commit log and ``lag`` understates the backlog by this many. Filled in by
    #: :func:`rmqformats.recovery.crosscheck.undispatched` through ``rmqformats lag``; 0 otherwise.
    behind_commitlog: int = 0
    #: The queue's max offset does not fit a Java long: its last unit claims offset Long.MAX_VALUE (a
    #: RocksDB ``max`` record no broker writes), so the broker's ``getMaxOffsetInQueue`` (that offset
    #: plus 1) wraps to Long.MIN_VALUE. ``max_offset`` is then Long.MAX_VALUE, the largest offset a
    #: unit can have, and ``lag`` and ``available`` are 0: no count of messages can be told from it.
    max_overflow: bool = False

    @property
    def flags(self) -> list[str]:
        """What this row is flagged for (``rmqformats lag`` exits 1 when a row has any), in words."""
        out = []
        if self.behind_min:
            out.append("committed offset below the queue's first (messages deleted unconsumed)")
        if self.beyond_max:
            out.append("committed offset past the queue's end")
        if not self.queue_found:
            out.append("no consume queue on disk")
        if self.behind_commitlog:
            out.append(f"queue behind the commit log by {self.behind_commitlog} message(s)")
        if self.max_overflow:
            out.append("queue's max offset past Long.MAX_VALUE (its last unit claims offset Long.MAX_VALUE)")
        return out

    @property
    def flagged(self) -> bool:
        """Whether ``rmqformats lag`` flags this row (and exits 1)."""
        return bool(self.behind_min or self.beyond_max or not self.queue_found or self.behind_commitlog
                    or self.max_overflow)

    def to_json_dict(self) -> dict:
        """Java-style names, for JSON output."""
        return {"group": self.group, "topic": self.topic, "queueId": self.queue_id,
                "committedOffset": self.committed_offset, "minOffset": self.min_offset,
                "maxOffset": self.max_offset, "lag": self.lag, "available": self.available,
                "nextMessageStoreTime": self.next_message_store_time, "behindMin": self.behind_min,
                "beyondMax": self.beyond_max, "queueType": self.queue_type, "queueFound": self.queue_found,
                "note": self.note, "behindCommitLog": self.behind_commitlog, "maxOverflow": self.max_overflow}


def _queue_infos(store: StoreView) -> tuple[dict[tuple[str, int], QueueInfo], dict[tuple[str, int], QueueInfo]]:
    simple: dict[tuple[str, int], QueueInfo] = {}
    batch: dict[tuple[str, int], QueueInfo] = {}
    if os.path.isdir(store.path("consumequeue")):
        for q in store.queues():  # files first: a broker keeping both kinds reads the files by default
            simple.setdefault((q.topic, q.queue_id), q)
    if os.path.isdir(store.path("batchconsumequeue")):
        batch = {(q.topic, q.queue_id): q for q in store.batch_queues()}
    return simple, batch


def _next_store_time(store: StoreView, batch: bool, topic: str, queue_id: int, offset: int) -> tuple[int | None, str]:
    """Store time of the message at queue offset ``offset``, or ``None`` and why."""
    try:
        if batch:
            return store.batch_consume_queue(topic, queue_id).find(offset).store_time, ""
        unit = store.consume_queue(topic, queue_id).unit(offset)
        return store.commitlog.read(unit.commitlog_offset).store_timestamp, ""
    except RmqFormatError as exc:
        return None, f"next message not readable: {exc}"


def _model(store: StoreView, name: str):
    """The model of ``config/<name>`` (or its ``.bak``); ``None`` when neither exists or it is empty."""
    from .config import read_config_file
    path = store.path("config", name)
    if not (os.path.exists(path) or os.path.exists(path + ".bak")):
        return None
    return read_config_file(path).model


class LagRows:
    """The rows of :func:`consumer_lag`, made as they are iterated (each iteration makes them again).

    Memory is bounded in bytes, not one object per row: a store with
    millions of committed offsets is listed without holding them as rows.
    Compares equal to a list of the same rows.
    """

    def __init__(self, make: Callable[[], Iterator[LagRow]]):
        self._make = make

    def __iter__(self) -> Iterator[LagRow]:
        return self._make()

    def __bool__(self) -> bool:
        return next(iter(self), None) is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, LagRows)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LagRows({list(self)!r})"

    def to_arrow(self) -> "pyarrow.Table":
        """The rows as a :class:`pyarrow.Table`, one column per field of :class:`LagRow` (its
        ``to_json_dict`` names), in the order the rows are made."""
        import pyarrow as pa
        types = {"group": pa.string(), "topic": pa.string(), "queueId": pa.int32(), "committedOffset": pa.int64(),
                 "minOffset": pa.int64(), "maxOffset": pa.int64(), "lag": pa.int64(), "available": pa.int64(),
                 "nextMessageStoreTime": pa.timestamp("ms", tz="UTC"), "behindMin": pa.bool_(),
                 "beyondMax": pa.bool_(), "queueType": pa.string(), "queueFound": pa.bool_(), "note": pa.string(),
                 "behindCommitLog": pa.int64(), "maxOverflow": pa.bool_()}
        schema = pa.schema(list(types.items()))  # the keys of LagRow.to_json_dict, in its order
        batches, chunk = [], []
        for row in self:  # built a chunk of rows at a time: no list of every row's dict
            chunk.append(row.to_json_dict())
            if len(chunk) == 65536:
                batches.append(pa.RecordBatch.from_pylist(chunk, schema=schema))
                chunk = []
        batches.append(pa.RecordBatch.from_pylist(chunk, schema=schema))
        return pa.Table.from_batches(batches, schema=schema)

    def to_pandas(self) -> "pandas.DataFrame":
        """The rows as a :class:`pandas.DataFrame`, through :meth:`to_arrow` (needs the ``[pandas]`` extra)."""
        from .frames import require_pandas
        require_pandas()
        return self.to_arrow().to_pandas()


def _rocksdb_offsets(store: StoreView, has_json: bool) -> tuple[dict[tuple[str, str, int], int], str] | None:
    """The committed offsets of ``config/rdb`` or ``config/consumerOffsets`` and the database's name, when the
    broker would load them rather than ``consumerOffset.json`` (see
    :func:`rmqformats.rocksdb.config.effective_committed`); else ``None``. ``has_json``: whether the JSON
    file's ``offsetTable`` has a key (all the v1 merge rule asks of it)."""
    from .rocksdb.config import config_databases
    if not config_databases(store.path("config")):
        return None
    from .rocksdb.config import effective_committed
    offsets, where = effective_committed(store.path("config"), {("", "", 0): 0} if has_json else {})
    if where == "consumerOffset.json":
        return None
    return offsets, where


def consumer_lag(store: StoreView, *, group: str | None = None, topic: str | None = None,
                 with_store_time: bool = True) -> LagRows:
    """Lag per group, topic and queue, sorted by group, topic and queue id.

    ``group`` / ``topic`` keep only those rows. ``with_store_time`` reads the
    next unconsumed message of each lagging queue for its store time.
    Raises :class:`~rmqformats.errors.ConfigError` when ``consumerOffset.json``
    (or ``lmqConsumerOffset.json``) cannot be read, nor its ``.bak``.

    The result is an iterable of :class:`LagRow` made as it is read
    (:class:`LagRows`). The offsets files are read here, once, into the
    sorted runs of :class:`rmqformats.config.offsetorder.OffsetSorter`:
    memory is bounded in bytes whatever the number of keys (a large file's
    runs go to temporary files, about its size, removed with the result).
    """
    from .config.compact import read_offset_tables
    from .config.offsetorder import OffsetSorter
    from .errors import ConfigError

    # Every table that holds committed offsets is a source, numbered in the order their values override
    # each other: consumerOffset.json's offsetTable (or the RocksDB offsets the broker loads instead) and
    # lmqOffsetTable, then lmqConsumerOffset.json's.
    sorter = OffsetSorter(group=group, topic=topic)
    for first, name in ((0, "consumerOffset.json"), (2, "lmqConsumerOffset.json")):
        found = read_offset_tables(
            store.path("config", name),
            builders=lambda table, first=first: sorter.table(first + (table == "lmqOffsetTable"),
                                                             lmq=table == "lmqOffsetTable"))
        if first == 0:
            has_json = found is not None and found.offset_table is not None and len(found.offset_table) > 0
            rocks = _rocksdb_offsets(store, has_json)
            if rocks is not None:  # the broker loads these instead of the JSON file's offsetTable
                offsets, where = rocks
                sorter.drop(0)
                by_key: dict[str, list[tuple[int, int]]] = {}
                for (t, g, qid), off in offsets.items():
                    by_key.setdefault(f"{t}@{g}", []).append((qid, off))
                del offsets

                def error(reason: str) -> None:
                    raise ConfigError(store.path("config", where), None, reason)

                table = sorter.table(0)
                for key, pairs in by_key.items():
                    table.add(key, pairs, error)
                table.build()
                del by_key
    sorter.finish()
    # topics.json only tells which topics use batch consume queues; the folders say so as well,
    # so a damaged topics.json does not stop the lag from being computed.
    try:
        topics = _model(store, "topics.json")
    except RmqFormatError:
        topics = None
    batch_topics = set()
    if topics is not None:
        batch_topics = {name for name, t in topics.topic_config_table.items() if t.queue_type == "BatchCQ"}
    simple, batch = _queue_infos(store)
    simple_ids: dict[str, list[int]] = {}
    batch_ids: dict[str, list[int]] = {}
    for ids, source in ((simple_ids, simple), (batch_ids, batch)):
        for qt, qid in source:
            ids.setdefault(qt, []).append(qid)

    def rows() -> Iterator[LagRow]:
        for g, t, committed in sorter.committed():
            # Queues of a (topic, group) without a committed offset: the broker counts them from 0.
            ids = batch_ids if (t in batch_topics or t in batch_ids) else simple_ids
            for qid in ids.get(t, ()):
                committed.setdefault(qid, None)  # type: ignore[arg-type]
            for qid in sorted(committed):
                yield _row(store, g, t, qid, committed[qid], batch_topics, simple, batch, with_store_time)

    return LagRows(rows)


def _row(store: StoreView, g: str, t: str, qid: int, offset: int | None, batch_topics: set,
         simple: dict, batch: dict, with_store_time: bool) -> LagRow:
    is_batch = t in batch_topics or (t, qid) in batch
    info = (batch if is_batch else simple).get((t, qid))
    notes = []
    if info is None:
        lo = hi = 0
        notes.append(f"no {'batchconsumequeue' if is_batch else 'consumequeue'} folder: max offset taken as 0")
    else:
        lo, hi = info.min_offset, info.max_offset
        if info.error:
            notes.append(f"queue unreadable: {info.error}")
    base = 0 if offset is None else offset
    if offset is None:
        notes.append("no committed offset: counted from 0 as the broker does")
    overflow = hi > LONG_MAX
    if overflow:  # see LagRow.max_overflow
        notes.append(f"the queue's last unit claims offset {LONG_MAX} (Long.MAX_VALUE), which no broker writes: "
                     f"its max offset (that plus 1) does not fit a Java long, and the broker's "
                     f"getMaxOffsetInQueue wraps to {-LONG_MAX - 1}; max shown as {LONG_MAX}, lag not counted")
        hi = LONG_MAX
    lag = 0 if overflow else min(max(0, hi - base), LONG_MAX)
    start = max(base, lo)
    available = 0 if overflow else min(max(0, hi - start), LONG_MAX)
    store_time = None
    if with_store_time and info is not None and available > 0:
        store_time, why = _next_store_time(store, is_batch, t, qid, start)
        if why:
            notes.append(why)
    return LagRow(g, t, qid, offset, lo, hi, lag, available, store_time,
                  offset is not None and offset < lo, offset is not None and offset > hi,
                  "BatchCQ" if is_batch else "SimpleCQ", info is not None, "; ".join(notes), max_overflow=overflow)


def unconsumed(store: Store, group: str) -> dict[tuple[str, int], tuple[int, int]]:
    """The queue offsets ``group`` has not consumed that its queues still hold, per (topic, queue id):
    ``(start, max offset)``, ``start`` its committed offset or the queue's first when later (the rows of
    :func:`consumer_lag`, whose ``available`` is ``max - start``); empty when the store has no committed
    offset of ``group``."""
    out = {}
    for r in consumer_lag(store, group=group, with_store_time=False):
        base = 0 if r.committed_offset is None else r.committed_offset
        out[(r.topic, r.queue_id)] = (max(base, r.min_offset), r.max_offset)
    return out
