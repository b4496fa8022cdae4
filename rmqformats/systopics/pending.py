"""What was still in flight when a store was written, from one walk of its commit log.

* scheduled messages (``ScheduleMessageService``): delay level ``n`` is queue
  ``n - 1`` of ``SCHEDULE_TOPIC_XXXX``; ``config/delayOffset.json`` holds,
  per level, the next queue offset to deliver; a message at or past it is
  pending (every one is when the file is absent, as the broker starts each
  level at 0);
* timer messages (``TimerMessageStore``, 5.0.0+): ``config/timercheck``
  holds ``lastTimerQueueOffset`` (the next ``rmq_sys_wheel_timer`` offset to
  read into the timer log) and ``lastReadTimeMs`` (the time up to which the
  wheel has been delivered); a timer message is pending when it was not read
  yet or is due after that time; a message named by a later cancellation
  (``TIMER_DEL_UNIQKEY`` = ``realTopic+uniqKey``) is listed as cancelled;
* transactions (``TransactionalMessageServiceImpl``): a half message is
  closed by an op message (tag ``d``) of the same queue id whose body names
  its queue offset, and, for a record in its own topic with the SYSFLAG
  ``prepared``, by a ``commit`` or ``rollback`` record whose prepared
  transaction offset is its commit-log offset; an open transaction is one
  with no copy closed and its latest copy at or past the ``CID_RMQ_SYS_TRANS``
  offset of the half queue (where ``consumerOffset.json`` has one); its age is
  counted from its first half message to the store's last store time;
* the RocksDB message store of a 5.4.0+ broker (``rocksdbstore/``, RIP-82):
  with ``transRocksDBEnable`` a half message of
  ``RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC`` is open while its record is in the
  ``trans`` column family (which holds the open half messages; op messages
  are not consulted for them), its check count in the record; with ``timerRocksDBEnable`` (the ``timer``
  column family holds ``sys_topic_scan_offset_checkpoint``) a timer message
  is pending when the scan has not read it yet (its queue offset at or past
  that checkpoint) or its record is due at or after ``timeline_checkpoint``
  (the time the timeline has delivered up to); ``config/timercheck`` is
  then not used;
* POP checkpoints (``PopCheckPoint``): offsets of a ``ck`` with no ``ack`` /
  ``bAck`` of the same topic, group, queue, start offset and pop time (and no
  bit set in its bit map);
* dead-letter messages: counted per origin topic and group.

The walk reads the columns of :data:`WALK_COLUMNS` batch by batch; rows are
selected and counted with ``pyarrow.compute`` per batch, and only the rows
that may be pending are kept (the half messages past the check's offset,
scheduled and timer messages past their offsets, checkpoints and acks).
:func:`pending` makes its own walk; :class:`PendingWalk` is fed the batches
of a walk the caller makes, and :class:`PendingFeed` (the report's) keeps
the reason instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import RmqFormatError, whole_text
from ..frames import empty_table, from_numpy, from_strings, rows_in_millis, scalar, to_numpy
from . import bodies
from . import names as N
from .columns import DECODE_COLUMNS, TIMESTAMP, decode

if TYPE_CHECKING:
    from ..store import Store

#: The batch columns the walk reads.
WALK_COLUMNS = tuple(dict.fromkeys(DECODE_COLUMNS + ("commitLogOffset", "preparedTransactionOffset", "uniqKey", "tags",
                                                     "body")))

SCHEDULED_SCHEMA = pa.schema([("delayLevel", pa.int32()), ("queueOffset", pa.int64()), ("deliverFrom", pa.int64()),
                              ("realTopic", pa.string()), ("realQueueId", pa.int32()), ("dueTime", TIMESTAMP),
                              ("uniqKey", pa.string()), ("commitLogOffset", pa.int64())])
TIMER_SCHEMA = pa.schema([("queueOffset", pa.int64()), ("realTopic", pa.string()), ("realQueueId", pa.int32()),
                          ("dueTime", TIMESTAMP), ("uniqKey", pa.string()), ("state", pa.string()),
                          ("commitLogOffset", pa.int64())])
TRANSACTION_SCHEMA = pa.schema([("transactionId", pa.string()), ("source", pa.string()), ("realTopic", pa.string()),
                                ("realQueueId", pa.int32()), ("halfQueueId", pa.int32()),
                                ("halfQueueOffset", pa.int64()), ("commitLogOffset", pa.int64()),
                                ("firstStoreTime", TIMESTAMP), ("ageMs", pa.int64()),
                                ("checkTimes", pa.int32()), ("producerGroup", pa.string())])
DEAD_LETTER_SCHEMA = pa.schema([("originTopic", pa.string()), ("group", pa.string()), ("messages", pa.int64()),
                                ("maxRetryCount", pa.int32()), ("firstStoreTime", TIMESTAMP),
                                ("lastStoreTime", TIMESTAMP)])
POP_SCHEMA = pa.schema([("topic", pa.string()), ("group", pa.string()), ("queueId", pa.int32()),
                        ("startOffset", pa.int64()), ("popTime", TIMESTAMP), ("reviveTime", TIMESTAMP),
                        ("unackedOffsets", pa.list_(pa.int64())), ("commitLogOffset", pa.int64())])

#: The parts of what is pending, in order: (record kind in JSON Lines, attribute of :class:`Pending`, title).
PARTS = (("scheduled", "scheduled", "scheduled messages not yet delivered (past config/delayOffset.json)"),
         ("timer", "timers", "timer messages not yet delivered (past config/timercheck)"),
         ("transaction", "transactions", "open transactions (no op, commit or rollback closes them)"),
         ("popCheckpoint", "pop_checkpoints", "POP checkpoints with offsets no ack names"),
         ("deadLetter", "dead_letters", "dead-letter messages per origin topic and group"))



def table_cells(table: pa.Table, time_text: Callable[[int], str]) -> Iterator[list]:
    """The rows of a part of :class:`Pending` as the cells of a table, a batch at a time: times (epoch ms)
    as ``time_text`` writes them, lists joined by commas, nothing for a null."""
    rows, times = rows_in_millis(table)
    for row in rows:
        yield [("" if v is None else time_text(v)) if k in times else
               ",".join(map(str, v)) if isinstance(v, list) else "" if v is None else v for k, v in row.items()]

@dataclass
class Pending:
    """What :func:`pending` found; each part a :class:`pyarrow.Table`."""

    #: The largest store time of the walk (ms), the time ages are counted to; ``None`` for no message.
    last_store_time_ms: int | None
    #: Delay level → first queue offset not yet delivered (from ``delayOffset.json``; empty without it).
    delay_offsets: dict[int, int]
    #: Whether ``config/delayOffset.json`` was there.
    has_delay_offsets: bool
    #: ``(lastTimerQueueOffset, lastReadTimeMs)`` of ``config/timercheck``, ``None`` without it.
    timer_checkpoint: tuple[int, int] | None
    #: ``(sys_topic_scan_offset_checkpoint, timeline_checkpoint)`` of the RocksDB timer store, ``None`` without it.
    rocksdb_timer_checkpoint: tuple[int, int] | None
    #: Whether the open transactions of the RocksDB half topic come from the ``trans`` column family.
    rocksdb_transactions: bool
    #: The ``CID_RMQ_SYS_TRANS`` offset per half queue id (from ``consumerOffset.json``).
    transaction_check_offsets: dict[int, int]
    scheduled: pa.Table
    timers: pa.Table
    transactions: pa.Table
    pop_checkpoints: pa.Table
    dead_letters: pa.Table
    #: Bodies that did not have their format, one line each (``commit-log offset N: reason``).
    body_errors: list[str] = field(default_factory=list)
    #: The delay of each level in ms the scheduled messages' due times were computed with.
    delay_levels_ms: tuple[int, ...] = N.DEFAULT_DELAY_LEVELS_MS
    #: The walk of :func:`pending` (its ``end``: where the data ended, and why); ``None`` from a
    #: :class:`PendingWalk` fed by the caller.
    scan: Any = field(default=None, repr=False, compare=False)

    def counts(self) -> dict[str, int]:
        """Rows per part, by the record kinds of :data:`PARTS` (dead letters: origin topic and group pairs)."""
        return {part: getattr(self, attr).num_rows for part, attr, _ in PARTS}

    def scheduled_by_level(self) -> pa.Table:
        """Pending scheduled messages counted per delay level."""
        t = self.scheduled
        groups, levels = _groups(t["delayLevel"], nulls=True)
        due, known = _ints(t["dueTime"]), _valid(t["dueTime"])
        return pa.table({"delayLevel": levels,
                         "messages": _reduced(groups, len(levels), np.ones(t.num_rows, np.int64), np.add,
                                              _valid(t["queueOffset"]), empty=0),
                         "firstDue": _reduced(groups, len(levels), due, np.minimum, known).cast(TIMESTAMP),
                         "lastDue": _reduced(groups, len(levels), due, np.maximum, known).cast(TIMESTAMP)}
                        ).sort_by("delayLevel")


def _concat(parts: list[pa.Table], schema: pa.Schema) -> pa.Table:
    return pa.concat_tables(parts).cast(schema) if parts else empty_table(schema)


def pending(store: Store, *, delay_levels_ms: tuple[int, ...] | None = None, trace_topics: Iterable[str] = (),
            stop: int | None = None, batch_size: int = 65536, max_batch_bytes: int = 64 << 20) -> Pending:
    """Walk ``store`` (a :class:`~rmqformats.store.Store`) once and list what was still pending.

    ``delay_levels_ms``: the broker's ``messageDelayLevel`` (default: the one
    the store's ``config/broker.properties`` holds, else the broker's default;
    see :func:`~.settings.delay_levels`); ``stop``: the walk ends before the
    first record at or past this commit-log offset (the store as it was then,
    for the parts the walk decides). :class:`PendingWalk` does the same on
    the batches of a walk the caller makes.
    """
    walk = PendingWalk(store, delay_levels_ms=delay_levels_ms, trace_topics=trace_topics)
    scan = store.commitlog.batches(columns=list(WALK_COLUMNS), stop=stop, batch_size=batch_size,
                                   max_batch_bytes=max_batch_bytes)
    for batch in scan:
        walk(batch)
    result = walk.result()
    result.scan = scan
    return result


class PendingWalk:
    """What :func:`pending` gathers, fed the record batches of a walk of the commit log.

    Reads the store's offsets files, timer checkpoint and RocksDB marks when
    made; each batch (with at least the columns of :data:`WALK_COLUMNS`) is
    then given to the instance, in the commit log's order, and
    :meth:`result` gives the :class:`Pending`. ``rmqformats report`` feeds it
    the batches of its own walk.
    """

    def __init__(self, store: Store, *, delay_levels_ms: tuple[int, ...] | None = None,
                 trace_topics: Iterable[str] = ()):
        from ..rocksdb.messagestore import CF_TIMER, CF_TRANS, TIMER_SCAN_OFFSET, TIMER_TIMELINE
        from .settings import delay_levels
        if delay_levels_ms is None:
            delay_levels_ms = delay_levels(root=store.root).levels_ms
        self.delay_levels_ms = tuple(delay_levels_ms)
        self.trace_topics = tuple(trace_topics)
        config = store.config()
        self.ms = ms = store.rocksdb_message_store()
        marks = ms.marks(CF_TIMER) if ms is not None else {}
        self.rocks_timer = ((marks[TIMER_SCAN_OFFSET.decode()], marks.get(TIMER_TIMELINE.decode(), 0))
                            if TIMER_SCAN_OFFSET.decode() in marks else None)
        self.rocks_trans = ms is not None and ms.has(CF_TRANS)
        delay = config.delay_offsets
        self.has_delay_offsets = delay is not None
        self.delay_offsets = dict(delay.by_level) if delay is not None else {}
        cp = store.timer().checkpoint()
        self.timer_cp = None if cp is None else (cp.last_timer_queue_offset, cp.last_read_time_ms)
        self.walk_timer_cp = None if self.rocks_timer is not None else self.timer_cp
        offsets = config.consumer_offsets
        self.tx_offsets = dict((offsets.offset_table if offsets else {}).get(
            f"{N.TRANS_HALF_TOPIC}@{N.TRANS_CHECK_GROUP}", {}))
        self.level_from = from_numpy(np.array(
            [self.delay_offsets.get(i, 0) for i in range(len(self.delay_levels_ms) + 1)], np.int64))
        self.tx_from = from_numpy(np.array(
            [self.tx_offsets.get(i, 0) for i in range(max(self.tx_offsets, default=0) + 1)], np.int64))
        self.sched: list[pa.Table] = []
        self.timers: list[pa.Table] = []
        self.halves: list[pa.Table] = []
        self.rocks_halves: list[pa.Table] = []
        self.ops: list[pa.Table] = []
        self.prepared: list[pa.Table] = []
        self.closing: list[pa.Table] = []
        self.dlq: list[pa.Table] = []
        #: (commit-log offset, body, tag) of the POP checkpoints and acks: few, and JSON, so parsed one by one.
        self.ck_rows: list[tuple[int, bytes, str | None]] = []
        self.ack_rows: list[tuple[int, bytes, str | None]] = []
        self.last_store: int | None = None

    def __call__(self, batch: pa.RecordBatch) -> None:
        """Gather what may be pending in ``batch``."""
        if not batch.num_rows:
            return
        d = decode(batch, delay_levels_ms=self.delay_levels_ms, trace_topics=self.trace_topics)
        t = pa.Table.from_batches([batch.select(list(WALK_COLUMNS))]).drop_columns(["properties"])
        for name in d.schema.names:
            t = t.append_column(name, d.column(name))
        top = pc.max(pc.cast(t["storeTimestamp"], pa.int64())).as_py()
        self.last_store = top if self.last_store is None else max(self.last_store, top)
        kind = t["kind"]

        s = t.filter(pc.equal(kind, scalar("scheduled")))
        if s.num_rows:
            level = pc.fill_null(pc.cast(s["queueId"], pa.int64()), scalar(0))
            idx = pc.if_else(pc.and_(pc.greater_equal(level, scalar(0)),
                                     pc.less(level, scalar(len(self.delay_levels_ms)))),
                             pc.add(level, scalar(1)), scalar(0))
            start = pc.take(self.level_from, idx)
            s = s.append_column("deliverFrom", start).filter(pc.greater_equal(s["queueOffset"], start))
            self.sched.append(s.select(SCHEDULED_SCHEMA.names))

        tm = t.filter(pc.is_in(kind, from_strings(["timer", "timerCancel"])))
        if tm.num_rows:
            if self.walk_timer_cp is not None:
                due_ms = pc.cast(tm["dueTime"], pa.int64())
                keep = pc.or_(pc.greater_equal(tm["queueOffset"], scalar(self.walk_timer_cp[0])),
                              pc.fill_null(pc.greater(due_ms, scalar(self.walk_timer_cp[1])), scalar(True)))
                tm = tm.filter(keep)
            self.timers.append(tm.select(["queueOffset", "realTopic", "realQueueId", "dueTime", "uniqKey", "kind",
                                          "timerCancelsKey", "commitLogOffset"]))

        h = t.filter(pc.equal(kind, scalar("transactionHalf")))
        if h.num_rows and self.rocks_trans:
            in_rocks = pc.equal(h["topic"], scalar(N.ROCKSDB_TRANS_HALF_TOPIC))
            r = h.filter(in_rocks)
            if r.num_rows:
                self.rocks_halves.append(r.select(_ROCKS_HALF_COLUMNS))
            h = h.filter(pc.invert(in_rocks))
        if h.num_rows:
            qid = pc.cast(h["queueId"], pa.int64())
            inside = pc.less(qid, scalar(len(self.tx_from)))
            start = pc.if_else(inside, pc.take(self.tx_from, pc.if_else(inside, qid, scalar(0))), scalar(0))
            self.halves.append(h.filter(pc.greater_equal(h["queueOffset"], start)).select(_HALF_COLUMNS))
        if pc.any(pc.equal(kind, scalar("transactionOp"))).as_py():
            self.ops.append(bodies.op_offsets_table(batch))
        state = t["transactionState"]
        p = t.filter(pc.equal(state, scalar("prepared")))
        if p.num_rows:
            self.prepared.append(p.select(_PREPARED_COLUMNS))
        c = t.filter(pc.is_in(state, from_strings(["commit", "rollback"])))
        if c.num_rows:
            self.closing.append(c.select(["preparedTransactionOffset"]))

        for k, dest in (("popCheckpoint", self.ck_rows), ("popAck", self.ack_rows)):
            rows = t.filter(pc.equal(kind, scalar(k)))
            if rows.num_rows:
                dest.extend(zip(rows["commitLogOffset"].to_pylist(), rows["body"].to_pylist(),
                                rows["tags"].to_pylist()))

        dl = t.filter(pc.equal(kind, scalar("deadLetter")))
        if dl.num_rows:
            self.dlq.append(_dead_letter_counts(dl))

    def result(self) -> Pending:
        """What is pending, from the batches given so far (and the RocksDB message store's records)."""
        timers = self.timers
        if self.rocks_timer is not None:
            timers = _rocksdb_timers(timers, self.ms, self.rocks_timer)
        extra = _rocksdb_transactions(self.rocks_halves, self.ms) if self.rocks_trans else None
        errors: list[str] = []
        return Pending(
            last_store_time_ms=self.last_store, delay_offsets=self.delay_offsets,
            has_delay_offsets=self.has_delay_offsets, timer_checkpoint=self.timer_cp,
            rocksdb_timer_checkpoint=self.rocks_timer, rocksdb_transactions=self.rocks_trans,
            transaction_check_offsets=self.tx_offsets,
            scheduled=_concat(self.sched, SCHEDULED_SCHEMA).sort_by([("delayLevel", "ascending"),
                                                                     ("queueOffset", "ascending")]),
            timers=_timers(timers),
            transactions=_transactions(self.halves, self.ops, self.prepared, self.closing, self.last_store, extra),
            pop_checkpoints=_pop(self.ck_rows, self.ack_rows, errors),
            dead_letters=_dead_letters(self.dlq), body_errors=errors, delay_levels_ms=self.delay_levels_ms)


class PendingFeed:
    """A :class:`PendingWalk` for a walk made for other ends too (``rmqformats report``): what it gathers, or
    why it could not, never an error raised into that walk.

    A store whose settings, offsets files or timer checkpoint cannot be read
    (or a commit log opened without its root) gives no :class:`Pending`,
    only the reason; so does a failure while gathering, after which the
    batches are no longer looked at. :attr:`columns` are the columns the
    walk must read for it (none when it gathers nothing) and
    :attr:`delay_levels_ms` the delay levels it uses (``None`` when they
    could not be read).
    """

    def __init__(self, store: Store, *, delay_levels_ms: tuple[int, ...] | None = None,
                 trace_topics: Iterable[str] = ()):
        from .settings import delay_levels
        self.walk: PendingWalk | None = None
        self.error: str | None = None
        self.delay_levels_ms = delay_levels_ms
        self.columns: tuple[str, ...] = ()
        try:
            if delay_levels_ms is None and store.root is not None:
                self.delay_levels_ms = delay_levels(root=store.root).levels_ms
            self.walk = PendingWalk(store, delay_levels_ms=self.delay_levels_ms, trace_topics=trace_topics)
            self.columns = WALK_COLUMNS
        except (RmqFormatError, OSError) as exc:
            self.error = whole_text(exc)

    def __call__(self, batch: pa.RecordBatch) -> None:
        """Gather what may be pending in ``batch`` (nothing after a failure)."""
        if self.walk is None:
            return
        try:
            self.walk(batch)
        except (RmqFormatError, OSError) as exc:
            self.walk, self.error = None, whole_text(exc)

    def result(self) -> tuple[Pending | None, str | None]:
        """``(what is pending, None)``, or ``(None, why not)``."""
        if self.walk is None:
            return None, self.error
        try:
            return self.walk.result(), None
        except (RmqFormatError, OSError) as exc:
            return None, str(exc)


#: The columns kept of the half messages and the ``prepared`` records (not their bodies).
_HALF_COLUMNS = ["transactionId", "realTopic", "realQueueId", "queueId", "queueOffset", "commitLogOffset",
                 "storeTimestamp", "transactionCheckTimes", "producerGroup"]
_PREPARED_COLUMNS = ["transactionId", "topic", "queueId", "commitLogOffset", "storeTimestamp", "producerGroup"]
#: The columns of a RocksDB half message the ``trans`` records are joined with.
_ROCKS_HALF_COLUMNS = ["commitLogOffset", "transactionId", "realTopic", "realQueueId", "queueId", "queueOffset",
                       "storeTimestamp", "producerGroup"]


def _rocksdb_timers(parts: list[pa.Table], ms, checkpoint: tuple[int, int]) -> list[pa.Table]:
    """The timer messages of ``parts`` the RocksDB timer store has not delivered: not read by its scan yet, or
    with a record due at or after its timeline."""
    if not parts:
        return parts
    waiting = from_numpy(np.array([e.commitlog_offset for e in ms.timer_entries(start_time=checkpoint[1])],
                                  np.int64))
    t = pa.concat_tables(parts)
    keep = pc.or_(pc.greater_equal(t["queueOffset"], scalar(checkpoint[0])), pc.is_in(t["commitLogOffset"], waiting))
    # A cancellation is kept while it may still name a waiting message.
    keep = pc.or_(keep, pc.equal(t["kind"], scalar("timerCancel")))
    return [t.filter(keep)]


def _rocksdb_transactions(parts: list[pa.Table], ms) -> pa.Table:
    """The open transactions of the ``trans`` column family, with what their half messages in the walk say."""
    entries = list(ms.trans_entries())
    recs = pa.table({"commitLogOffset": from_numpy(np.array([e.commitlog_offset for e in entries], np.int64)),
                     "keyTopic": from_strings([e.topic for e in entries]),
                     "keyUniq": from_strings([e.uniq_key for e in entries]),
                     "checkTimes": from_numpy(np.array([e.check_times for e in entries], np.int32))})
    halves = (pa.concat_tables(parts) if parts
              else empty_table(pa.schema([(n, pa.null()) for n in _ROCKS_HALF_COLUMNS])))
    halves = halves.cast(pa.schema([("commitLogOffset", pa.int64()), ("transactionId", pa.string()),
                                    ("realTopic", pa.string()), ("realQueueId", pa.int32()),
                                    ("queueId", pa.int32()), ("queueOffset", pa.int64()),
                                    ("storeTimestamp", TIMESTAMP), ("producerGroup", pa.string())]))
    # Each record with its half message where the walk read one (offsets are unique in a walk).
    recs = recs.sort_by("commitLogOffset")
    at = pc.index_in(recs["commitLogOffset"], value_set=halves["commitLogOffset"].combine_chunks())
    j = recs
    for name in halves.column_names:
        if name != "commitLogOffset":
            j = j.append_column(name, halves[name].take(at))
    n = j.num_rows
    return pa.table({
        "transactionId": pc.coalesce(j["transactionId"], j["keyUniq"]), "source": pa.repeat(scalar("rocksdb"), n),
        "realTopic": pc.coalesce(j["realTopic"], j["keyTopic"]), "realQueueId": j["realQueueId"],
        "halfQueueId": j["queueId"], "halfQueueOffset": j["queueOffset"], "commitLogOffset": j["commitLogOffset"],
        "firstStoreTime": j["storeTimestamp"], "checkTimes": j["checkTimes"], "producerGroup": j["producerGroup"]})


def _timers(parts: list[pa.Table]) -> pa.Table:
    if not parts:
        return empty_table(TIMER_SCHEMA)
    t = pa.concat_tables(parts)
    cancels = t.filter(pc.equal(t["kind"], scalar("timerCancel")))
    msgs = t.filter(pc.equal(t["kind"], scalar("timer")))
    key = pc.binary_join_element_wise(msgs["realTopic"], msgs["uniqKey"], scalar("+"))
    cancelled = pc.is_in(key, cancels["timerCancelsKey"])
    state = pc.if_else(pc.fill_null(cancelled, scalar(False)), scalar("cancelled"), scalar("waiting"))
    msgs = msgs.append_column("state", state)
    # A message put again (a roll) keeps its UNIQ_KEY: its latest copy stands for it (one without a
    # UNIQ_KEY stands for none).
    groups, keys = _groups(msgs["uniqKey"])
    offsets, known = _ints(msgs["queueOffset"]), _valid(msgs["queueOffset"])
    latest = _reduced(groups, len(keys), offsets, np.maximum, known)
    msgs = msgs.filter(from_numpy(_is_group_value(groups, offsets, known, latest)))
    return msgs.select(TIMER_SCHEMA.names).cast(TIMER_SCHEMA).sort_by("queueOffset")


def _transactions(halves, ops, prepared, closing, last_store, extra: pa.Table | None = None) -> pa.Table:
    rows = [] if extra is None or not extra.num_rows else [extra]
    if halves:
        h = pa.concat_tables(halves)
        h = h.append_column("halfQueueId", pc.cast(h["queueId"], pa.int32()))
        closed_ops = pa.concat_tables(ops) if ops else empty_table(bodies.OP_SCHEMA)
        # The halves an op message closed, by their (half queue id, queue offset); then every half of their
        # transactions left out.
        closed = h.filter(pc.is_in(_pair_keys(h["halfQueueId"], h["queueOffset"]),
                                   value_set=_pair_keys(closed_ops["opQueueId"], closed_ops["halfQueueOffset"]),
                                   skip_nulls=True))
        h = h.filter(pc.invert(pc.is_in(h["transactionId"], value_set=closed["transactionId"].combine_chunks(),
                                        skip_nulls=True)))
        if h.num_rows:
            # Each transaction (a half without an id is none) by its latest half: the first half's store time,
            # the most checks of any.
            groups, ids = _groups(h["transactionId"])
            offsets, known = _ints(h["queueOffset"]), _valid(h["queueOffset"])
            last = _reduced(groups, len(ids), offsets, np.maximum, known)
            first = _reduced(groups, len(ids), _ints(h["storeTimestamp"]), np.minimum, _valid(h["storeTimestamp"]))
            checks = _reduced(groups, len(ids), _ints(h["transactionCheckTimes"]), np.maximum,
                              _valid(h["transactionCheckTimes"]))
            keep = _is_group_value(groups, offsets, known, last)
            at = from_numpy(groups[keep])
            latest = h.filter(from_numpy(keep))
            latest = latest.append_column("halfQueueOffset", last.take(at)).append_column(
                "firstStoreTime", first.take(at).cast(TIMESTAMP)).append_column(
                "checkTimes", checks.take(at).cast(pa.int32()))
            rows.append(pa.table({
                "transactionId": latest["transactionId"], "source": pa.repeat(scalar("half"), latest.num_rows),
                "realTopic": latest["realTopic"], "realQueueId": latest["realQueueId"],
                "halfQueueId": latest["halfQueueId"], "halfQueueOffset": latest["halfQueueOffset"],
                "commitLogOffset": latest["commitLogOffset"], "firstStoreTime": latest["firstStoreTime"],
                "checkTimes": latest["checkTimes"], "producerGroup": latest["producerGroup"]}))
    if prepared:
        p = pa.concat_tables(prepared)
        if closing:
            ends = pa.concat_tables(closing).column(0).combine_chunks()
            p = p.filter(pc.invert(pc.is_in(p["commitLogOffset"], value_set=ends, skip_nulls=True)))
        if p.num_rows:
            n = p.num_rows
            rows.append(pa.table({
                "transactionId": p["transactionId"], "source": pa.repeat(scalar("prepared"), n),
                "realTopic": p["topic"], "realQueueId": pc.cast(p["queueId"], pa.int32()),
                "halfQueueId": pa.nulls(n, pa.int32()), "halfQueueOffset": pa.nulls(n, pa.int64()),
                "commitLogOffset": p["commitLogOffset"], "firstStoreTime": p["storeTimestamp"],
                "checkTimes": pa.nulls(n, pa.int32()), "producerGroup": p["producerGroup"]}))
    if not rows:
        return empty_table(TRANSACTION_SCHEMA)
    t = pa.concat_tables([r.cast(pa.schema([f for f in TRANSACTION_SCHEMA if f.name != "ageMs"])) for r in rows])
    age = pc.subtract(scalar(last_store or 0), pc.cast(t["firstStoreTime"], pa.int64()))
    t = t.append_column("ageMs", age)
    return t.select(TRANSACTION_SCHEMA.names).cast(TRANSACTION_SCHEMA).sort_by("commitLogOffset")


def _pop(ck_rows, ack_rows, errors: list[str]) -> pa.Table:
    acked: dict[tuple, set[int]] = {}
    for offset, body, tag in ack_rows:
        try:
            ack = bodies.pop_ack(body, tag=tag or N.POP_ACK_TAG)
        except bodies.BodyFormatError as exc:
            errors.append(f"commit-log offset {offset}: {exc}")
            continue
        acked.setdefault((ack.topic, ack.group, ack.queue_id, ack.start_offset, ack.pop_time), set()).update(
            ack.ack_offsets)
    out = []
    for offset, body, _ in ck_rows:
        try:
            ck = bodies.pop_checkpoint(body)
        except bodies.BodyFormatError as exc:
            errors.append(f"commit-log offset {offset}: {exc}")
            continue
        done = acked.get((ck.topic, ck.group, ck.queue_id, ck.start_offset, ck.pop_time), set())
        left = [o for i, o in enumerate(ck.offsets) if o not in done and not (ck.bit_map >> i) & 1]
        if left:
            out.append({"topic": ck.topic, "group": ck.group, "queueId": ck.queue_id, "startOffset": ck.start_offset,
                        "popTime": ck.pop_time, "reviveTime": ck.revive_time, "unackedOffsets": left,
                        "commitLogOffset": offset})
    return pa.Table.from_pylist(out, POP_SCHEMA) if out else empty_table(POP_SCHEMA)


def _dead_letters(parts: list[pa.Table]) -> pa.Table:
    if not parts:
        return empty_table(DEAD_LETTER_SCHEMA)
    t = pa.concat_tables(parts)
    agg = _letters_by_origin(t.select(["originTopic", "group"]), {
        "messages": (_ints(t["messages"]), np.add, None),
        "maxRetryCount": (_ints(t["maxRetryCount"]), np.maximum, _valid(t["maxRetryCount"])),
        "firstStoreTime": (_ints(t["firstStoreTime"]), np.minimum, None),
        "lastStoreTime": (_ints(t["lastStoreTime"]), np.maximum, None)})
    return agg.sort_by([("messages", "descending"), ("originTopic", "ascending")])


def _dead_letter_counts(dl: pa.Table) -> pa.Table:
    """The dead letters of one batch (the walk's columns, decoded) counted by origin topic and group."""
    return _letters_by_origin(dl.select(["originTopic", "group"]), {
        "messages": (np.ones(dl.num_rows, np.int64), np.add, None),
        "maxRetryCount": (_ints(dl["retryCount"]), np.maximum, _valid(dl["retryCount"])),
        "firstStoreTime": (_ints(dl["storeTimestamp"]), np.minimum, None),
        "lastStoreTime": (_ints(dl["storeTimestamp"]), np.maximum, None)})


def _ints(column: pa.ChunkedArray) -> np.ndarray:
    """A whole-number or timestamp column as int64 values (0 where null)."""
    return to_numpy(pc.fill_null(pc.cast(column, pa.int64()), scalar(0)))


def _valid(column: pa.ChunkedArray) -> np.ndarray:
    return to_numpy(column.is_valid())


def _groups(keys: pa.ChunkedArray, *, nulls: bool = False) -> tuple[np.ndarray, pa.Array]:
    """Each row's group, numbered by the distinct values of ``keys`` in order of appearance, and those values.

    A null key is a group of its own with ``nulls``; otherwise its rows are in none (group -1), as a join
    matches no null key. Arrow's group-by and joins would load its query engine, and pandas with it.
    """
    encoded = pc.dictionary_encode(keys.combine_chunks(), null_encoding="encode" if nulls else "mask")
    groups = to_numpy(pc.fill_null(encoded.indices, scalar(-1, encoded.indices.type))).astype(np.int64)
    return groups, encoded.dictionary


def _reduced(groups: np.ndarray, count: int, data: np.ndarray, ufunc, counted: np.ndarray,
             empty: int | None = None) -> pa.Array:
    """``data``'s rows that count (``counted``, in a group) reduced by ``ufunc`` (``np.add``, ``np.minimum`` or
    ``np.maximum``) per group, as int64; a group with none is null, or ``empty`` where given."""
    rows = np.flatnonzero(counted & (groups >= 0))
    at = groups[rows]
    start = {np.add: 0, np.minimum: np.iinfo(np.int64).max, np.maximum: np.iinfo(np.int64).min}[ufunc]
    out = np.full(count, start if empty is None else empty, np.int64)
    ufunc.at(out, at, data[rows])
    seen = np.zeros(count, np.bool_)
    seen[at] = True
    valid = None if empty is not None or seen.all() else pa.py_buffer(np.packbits(seen, bitorder="little"))
    return pa.Array.from_buffers(pa.int64(), count, [valid, pa.py_buffer(out)])


def _is_group_value(groups: np.ndarray, values: np.ndarray, valid: np.ndarray, per_group: pa.Array) -> np.ndarray:
    """Which rows are in a group and hold its value of ``per_group`` (``values`` where ``valid``; a null matches
    nothing)."""
    if not len(per_group):
        return np.zeros(len(groups), np.bool_)
    held = to_numpy(pc.fill_null(per_group, scalar(0)))
    known = to_numpy(per_group.is_valid())
    inside = groups >= 0
    at = np.where(inside, groups, 0)
    return inside & known[at] & valid & (values == held[at])


def _pair_keys(first: pa.ChunkedArray, second: pa.ChunkedArray) -> pa.Array:
    """One text key per row of two whole-number columns (null where either is)."""
    return pc.binary_join_element_wise(pc.cast(first, pa.string()), pc.cast(second, pa.string()),
                                       scalar("/")).combine_chunks()


def _letters_by_origin(keys: pa.Table, values: dict[str, tuple]) -> pa.Table:
    """Dead letters grouped by origin topic and group (null a key of its own) in :data:`DEAD_LETTER_SCHEMA`:
    each of ``values`` (column -> (int64 values, numpy ufunc, which rows count or ``None`` for all))
    reduced by its ufunc over a group's rows; null where no row of the group counts.

    A group-by of Arrow's would load its query engine, and pandas with it, into every process that reads a
    store holding dead letters.
    """
    (a, names_a), (b, names_b) = (_groups(keys[name], nulls=True) for name in keys.column_names)
    pairs, first, groups = np.unique(a * (len(names_b) + 1) + b, return_index=True, return_inverse=True)
    columns = [names_a.take(from_numpy(a[first])), names_b.take(from_numpy(b[first]))]
    for name, (data, ufunc, counted) in values.items():
        column = _reduced(groups, len(pairs), data, ufunc, np.ones(len(data), np.bool_) if counted is None else counted)
        field = DEAD_LETTER_SCHEMA.field(name)
        columns.append(column if field.type == pa.int64() else column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=DEAD_LETTER_SCHEMA)
