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
from typing import TYPE_CHECKING, NamedTuple

from .errors import RmqFormatError

if TYPE_CHECKING:
    from .queuefiles import QueueInfo
    from .store import Store


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

    def to_json_dict(self) -> dict:
        """Java-style names, for JSON output."""
        return {"group": self.group, "topic": self.topic, "queueId": self.queue_id,
                "committedOffset": self.committed_offset, "minOffset": self.min_offset,
                "maxOffset": self.max_offset, "lag": self.lag, "available": self.available,
                "nextMessageStoreTime": self.next_message_store_time, "behindMin": self.behind_min,
                "beyondMax": self.beyond_max, "queueType": self.queue_type, "queueFound": self.queue_found,
                "note": self.note, "behindCommitLog": self.behind_commitlog}


def _queue_infos(store: Store) -> tuple[dict[tuple[str, int], QueueInfo], dict[tuple[str, int], QueueInfo]]:
    simple: dict[tuple[str, int], QueueInfo] = {}
    batch: dict[tuple[str, int], QueueInfo] = {}
    if os.path.isdir(store.path("consumequeue")):
        for q in store.queues():  # files first: a broker keeping both kinds reads the files by default
            simple.setdefault((q.topic, q.queue_id), q)
    if os.path.isdir(store.path("batchconsumequeue")):
        batch = {(q.topic, q.queue_id): q for q in store.batch_queues()}
    return simple, batch


def _next_store_time(store: Store, batch: bool, topic: str, queue_id: int, offset: int) -> tuple[int | None, str]:
    """Store time of the message at queue offset ``offset``, or ``None`` and why."""
    try:
        if batch:
            return store.batch_consume_queue(topic, queue_id).find(offset).store_time, ""
        unit = store.consume_queue(topic, queue_id).unit(offset)
        return store.commitlog.read(unit.commitlog_offset).store_timestamp, ""
    except RmqFormatError as exc:
        return None, f"next message not readable: {exc}"


def _model(store: Store, name: str):
    """The model of ``config/<name>`` (or its ``.bak``); ``None`` when neither exists or it is empty."""
    from .config import read_config_file
    path = store.path("config", name)
    if not (os.path.exists(path) or os.path.exists(path + ".bak")):
        return None
    return read_config_file(path).model


def consumer_lag(store: Store, *, group: str | None = None, topic: str | None = None,
                 with_store_time: bool = True) -> list[LagRow]:
    """Lag per group, topic and queue, sorted by group, topic and queue id.

    ``group`` / ``topic`` keep only those rows. ``with_store_time`` reads the
    next unconsumed message of each lagging queue for its store time.
    Raises :class:`~rmqformats.errors.ConfigError` when ``consumerOffset.json``
    (or ``lmqConsumerOffset.json``) cannot be read, nor its ``.bak``.
    """
    from .config.stream import read_committed_offsets
    committed: dict[tuple[str, str, int], int] = {}
    for name in ("consumerOffset.json", "lmqConsumerOffset.json"):
        # Streamed: a consumerOffset.json of hundreds of MB costs its text, not a parsed document.
        offsets = read_committed_offsets(store.path("config", name))
        if name == "consumerOffset.json":
            # A 5.x broker may keep them in RocksDB (config/consumerOffsets, config/rdb) instead.
            from .rocksdb.config import effective_committed
            offsets, _ = effective_committed(store.path("config"), offsets)
        committed.update(offsets)
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

    # Queues of a (topic, group) without a committed offset: the broker counts them from 0.
    wanted: dict[tuple[str, str, int], int | None] = dict(committed)
    pairs = {(t, g) for t, g, _ in committed}
    simple_ids: dict[str, list[int]] = {}
    batch_ids: dict[str, list[int]] = {}
    for ids, source in ((simple_ids, simple), (batch_ids, batch)):
        for qt, qid in source:
            ids.setdefault(qt, []).append(qid)
    for t, g in pairs:
        ids = batch_ids if (t in batch_topics or t in batch_ids) else simple_ids
        for qid in ids.get(t, ()):
            if (t, g, qid) not in wanted:
                wanted[(t, g, qid)] = None

    rows = []
    for (t, g, qid), offset in wanted.items():
        if (group is not None and g != group) or (topic is not None and t != topic):
            continue
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
        lag = max(0, hi - base)
        start = max(base, lo)
        available = max(0, hi - start)
        store_time = None
        if with_store_time and info is not None and available > 0:
            store_time, why = _next_store_time(store, is_batch, t, qid, start)
            if why:
                notes.append(why)
        rows.append(LagRow(g, t, qid, offset, lo, hi, lag, available, store_time,
                           offset is not None and offset < lo, offset is not None and offset > hi,
                           "BatchCQ" if is_batch else "SimpleCQ", info is not None, "; ".join(notes)))
    rows.sort(key=lambda r: (r.group, r.topic, r.queue_id))
    return rows
