"""What each message of a batch is to the broker, and the values its properties carry, as Arrow columns.

:func:`classify` gives each row's kind from its topic, tag and properties;
:func:`decode` adds the columns of :data:`DECODED_SCHEMA`, filled for the
rows they apply to and null elsewhere. Both work on whole columns with
``pyarrow.compute``: no Python code runs per message.

The rules, from the RocketMQ source (``rocketmq-all-5.3.3`` unless named):

* scheduled (``ScheduleMessageService``, ``SCHEDULE_TOPIC_XXXX``): the real
  topic and queue in ``REAL_TOPIC`` / ``REAL_QID``; due at the store time
  plus the delay of level ``DELAY`` (``computeDeliverTimestamp``; a level
  above the last is the last, as ``CommitLog`` clamps it on put);
* timer (``TimerMessageStore``, ``rmq_sys_wheel_timer``, 5.0.0+): due at
  ``TIMER_OUT_MS`` (the delivery time rounded down to the timer precision,
  set on put), else ``TIMER_DELIVER_MS``, else the store time plus
  ``TIMER_DELAY_SEC`` seconds or ``TIMER_DELAY_MS``; a message with
  ``TIMER_DEL_UNIQKEY`` is a cancellation;
* transaction half and op (``TransactionalMessageUtil``,
  ``TransactionalMessageBridge``): the half message keeps the real topic
  and queue, its id (``__transactionId__``, else ``UNIQ_KEY``), the check
  count ``TRANSACTION_CHECK_TIMES`` and ``TRAN_PREPARED_QUEUE_OFFSET``;
  the SYSFLAG transaction bits give the state of a record in its own topic;
* retry and dead-letter (``%RETRY%group``, ``%DLQ%group``, also when they are
  the real topic of a scheduled copy): the origin topic ``RETRY_TOPIC`` (or
  ``DLQ_ORIGIN_TOPIC``, 5.1.0+), the origin id ``ORIGIN_MESSAGE_ID`` (or
  ``DLQ_ORIGIN_MESSAGE_ID``), the retry count from the record's
  reconsume times;
* POP (``PopAckConstants``, 5.0.0+): ``rmq_sys_REVIVE_LOG_*`` messages tagged
  ``ck`` (checkpoint) or ``ack`` / ``bAck`` (ack);
* trace: ``RMQ_SYS_TRACE_TOPIC``, ``rmq_sys_TRACE_DATA_*`` or a custom trace
  topic given by the caller; LMQ dispatch: ``INNER_MULTI_DISPATCH`` naming
  ``%LMQ%`` queues; lite: the 5.5 ``__LITE_TOPIC`` property.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..frames import from_numpy, from_strings, scalar
from . import names as N

TIMESTAMP = pa.timestamp("ms", tz="UTC")

#: The kinds :func:`classify` gives, in the order they are tested after the topic rules.
KINDS = ("normal", "scheduled", "timer", "timerCancel", "transactionHalf", "transactionOp", "retry", "deadLetter",
         "popCheckpoint", "popAck", "trace", "lmqDispatch", "lite")

#: The batch columns :func:`decode` reads.
DECODE_COLUMNS = ("topic", "properties", "storeTimestamp", "sysFlag", "reconsumeTimes", "queueId", "queueOffset")

#: The columns :func:`decode` returns.
DECODED_SCHEMA = pa.schema([
    ("kind", pa.string()),
    ("realTopic", pa.string()),
    ("realQueueId", pa.int32()),
    ("delayLevel", pa.int32()),
    ("dueTime", TIMESTAMP),
    ("timerCancelsKey", pa.string()),
    ("transactionId", pa.string()),
    ("transactionState", pa.string()),
    ("transactionCheckTimes", pa.int32()),
    ("preparedQueueOffset", pa.int64()),
    ("producerGroup", pa.string()),
    ("group", pa.string()),
    ("originTopic", pa.string()),
    ("originMsgId", pa.string()),
    ("retryCount", pa.int32()),
])

_INT = r"^-?[0-9]{1,18}$"
# The constants given to pyarrow.compute are made as Arrow values here: a Python literal there would make
# pyarrow import pandas on its first use (a quarter of a second and tens of MiB in every process).
_FALSE = scalar(False)
_HALF_TOPICS = from_strings([N.TRANS_HALF_TOPIC, N.ROCKSDB_TRANS_HALF_TOPIC])
_OP_TOPICS = from_strings([N.TRANS_OP_HALF_TOPIC, N.ROCKSDB_TRANS_OP_HALF_TOPIC])
_NAMED_TOPICS = from_strings(sorted({N.SCHEDULE_TOPIC, N.TIMER_TOPIC, *_HALF_TOPICS.to_pylist(),
                                     *_OP_TOPICS.to_pylist()}))
_ACK_TAGS = from_strings([N.POP_ACK_TAG, N.POP_BATCH_ACK_TAG])
_TIMER_KINDS = from_strings(["timer", "timerCancel"])


def prop(batch: pa.RecordBatch | pa.Table, name: str) -> pa.Array:
    """The value of property ``name`` in each row (null where absent)."""
    col = batch.column("properties")
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return pc.map_lookup(col, scalar(name), "last")


def to_int(values: pa.Array, type_: pa.DataType = pa.int64()) -> pa.Array:
    """Decimal text as integers; null where the text is not a decimal integer (as the broker's
    ``Long.parseLong`` would throw, the value is not used)."""
    ok = pc.fill_null(pc.match_substring_regex(values, _INT), _FALSE)
    clean = pc.if_else(ok, values, scalar(None, pa.string()))
    out = pc.cast(clean, pa.int64())
    if type_ != pa.int64():
        fits = pc.and_(pc.greater_equal(out, scalar(-(1 << 31))), pc.less(out, scalar(1 << 31)))
        out = pc.cast(pc.if_else(fits, out, scalar(None, pa.int64())), type_)
    return out


def _col(batch, name: str) -> pa.Array:
    col = batch.column(name)
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _null(n: int, type_: pa.DataType) -> pa.Array:
    return pa.nulls(n, type_)


def _positions(mask: pa.Array, count: int) -> pa.Array:
    """For each row, its place among the ``count`` rows ``mask`` keeps, or ``count`` for a row it drops."""
    return pc.if_else(mask, pc.subtract(pc.cumulative_sum(pc.cast(mask, pa.int64())), scalar(1)), scalar(count))


def _place(values: pa.Array, mask: pa.Array, count: int, other: pa.Scalar) -> pa.Array:
    """``values`` (one per row ``mask`` keeps) at their rows, ``other`` at the rest."""
    return pc.take(pa.concat_arrays([values, pa.repeat(other, 1)]), _positions(mask, count))


def classify(batch: pa.RecordBatch | pa.Table, *, trace_topics: Iterable[str] = ()) -> pa.Array:
    """The kind of each row (one of :data:`KINDS`); ``batch`` needs ``topic`` and ``properties``."""
    topic = _col(batch, "topic")
    n = len(topic)
    traces = from_strings(sorted({N.TRACE_TOPIC, *trace_topics}))
    # The rules run on the rows that may be other than normal: a topic one of them names (tested once per
    # distinct topic of the batch), or an LMQ dispatch or lite property. Most rows are plain messages.
    enc = pc.dictionary_encode(topic)
    names = enc.dictionary
    named = pc.or_(pc.or_(pc.is_in(names, _NAMED_TOPICS), pc.is_in(names, traces)),
                   pc.or_(pc.or_(pc.starts_with(names, N.RETRY_PREFIX), pc.starts_with(names, N.DLQ_PREFIX)),
                          pc.or_(pc.starts_with(names, N.REVIVE_TOPIC_PREFIX),
                                 pc.starts_with(names, N.TRACE_TOPIC_PREFIX))))
    lmq = prop(batch, N.INNER_MULTI_DISPATCH)
    lite = prop(batch, N.LITE_TOPIC)
    maybe = pc.or_(pc.fill_null(pc.take(named, enc.indices), _FALSE),
                   pc.or_(pc.fill_null(pc.match_substring(lmq, N.LMQ_PREFIX), _FALSE), pc.is_valid(lite)))
    count = pc.sum(pc.cast(maybe, pa.int64())).as_py() or 0
    if count == 0:
        return pa.repeat(scalar("normal"), n)
    if count == n:
        return _rules(batch, lmq, lite, traces)
    kinds = _rules(batch.filter(maybe), pc.filter(lmq, maybe), pc.filter(lite, maybe), traces)
    return _place(kinds, maybe, count, scalar("normal"))


def _rules(batch: pa.RecordBatch | pa.Table, lmq: pa.Array, lite: pa.Array, traces: pa.Array) -> pa.Array:
    """The kind of each row of ``batch``, by the first rule that holds (``lmq`` and ``lite``: its
    ``INNER_MULTI_DISPATCH`` and ``__LITE_TOPIC`` values)."""
    topic = _col(batch, "topic")
    n = len(topic)
    revive = pc.fill_null(pc.starts_with(topic, N.REVIVE_TOPIC_PREFIX), _FALSE)
    timer = pc.fill_null(pc.equal(topic, scalar(N.TIMER_TOPIC)), _FALSE)
    # A property lookup reads every row's properties: the tags and the cancellation key only where they count.
    tags = prop(batch, N.TAGS) if pc.any(revive).as_py() else pa.nulls(n, pa.string())
    cancel = prop(batch, N.TIMER_DEL_UNIQKEY) if pc.any(timer).as_py() else pa.nulls(n, pa.string())
    rules = [
        (pc.equal(topic, scalar(N.SCHEDULE_TOPIC)), "scheduled"),
        (pc.and_(timer, pc.is_valid(cancel)), "timerCancel"),
        (timer, "timer"),
        (pc.is_in(topic, _HALF_TOPICS), "transactionHalf"),
        (pc.is_in(topic, _OP_TOPICS), "transactionOp"),
        (pc.starts_with(topic, N.RETRY_PREFIX), "retry"),
        (pc.starts_with(topic, N.DLQ_PREFIX), "deadLetter"),
        (pc.and_(revive, pc.equal(tags, scalar(N.POP_CK_TAG))), "popCheckpoint"),
        (pc.and_(revive, pc.is_in(tags, _ACK_TAGS)), "popAck"),
        (pc.or_(pc.is_in(topic, traces), pc.starts_with(topic, N.TRACE_TOPIC_PREFIX)), "trace"),
        (pc.match_substring(lmq, N.LMQ_PREFIX), "lmqDispatch"),
        (pc.is_valid(lite), "lite"),
    ]
    out = pa.repeat(scalar("normal"), n)
    for cond, kind in reversed(rules):  # the first rule that holds wins
        out = pc.if_else(pc.fill_null(cond, _FALSE), scalar(kind), out)
    return out


def delay_due(store_ms: pa.Array, level: pa.Array, delay_levels_ms: tuple[int, ...]) -> pa.Array:
    """Store time plus the delay of ``level`` (clamped to the last level; null for a level under 1)."""
    table = from_numpy(np.array((0,) + tuple(delay_levels_ms), np.int64))
    clamped = pc.min_element_wise(level, scalar(len(delay_levels_ms), level.type), skip_nulls=False)
    valid = pc.greater(clamped, scalar(0, level.type))
    idx = pc.if_else(valid, clamped, scalar(0, level.type))
    delay = pc.take(table, pc.fill_null(idx, scalar(0, level.type)))
    return pc.if_else(valid, pc.add(store_ms, delay), scalar(None, pa.int64()))


def decode(batch: pa.RecordBatch | pa.Table, *, delay_levels_ms: tuple[int, ...] = N.DEFAULT_DELAY_LEVELS_MS,
           trace_topics: Iterable[str] = ()) -> pa.RecordBatch:
    """The columns of :data:`DECODED_SCHEMA` for each row of ``batch`` (which needs :data:`DECODE_COLUMNS`).

    ``delay_levels_ms``: the broker's ``messageDelayLevel`` (see
    :func:`~rmqformats.systopics.names.parse_delay_levels`); ``trace_topics``:
    custom trace topics besides ``RMQ_SYS_TRACE_TOPIC``.
    """
    needed = ["topic", "properties", "storeTimestamp", "sysFlag", "reconsumeTimes"]
    missing = [c for c in needed if c not in batch.schema.names]
    if missing:
        raise ValueError(f"decode needs the batch columns {', '.join(missing)}")
    kind = classify(batch, trace_topics=trace_topics)
    n = len(kind)
    # Only the broker's own messages and transaction records get values: the rest of the work is done on
    # those rows alone and the values are placed back at their rows.
    tx = pc.not_equal(pc.bit_wise_and(pc.cast(_col(batch, "sysFlag"), pa.int32()),
                                      scalar(N.TRANSACTION_MASK, pa.int32())), scalar(0, pa.int32()))
    mask = pc.or_(pc.not_equal(kind, scalar("normal")), tx)
    picked = pc.sum(pc.cast(mask, pa.int64())).as_py() or 0
    if picked == 0:
        return pa.RecordBatch.from_arrays([kind] + [pa.nulls(n, f.type) for f in list(DECODED_SCHEMA)[1:]],
                                          schema=DECODED_SCHEMA)
    sub = pa.Table.from_batches([batch.select(needed)]) if isinstance(batch, pa.RecordBatch) else batch.select(needed)
    sub = sub.filter(mask)
    rows = _decode_rows(sub, pc.filter(kind, mask), delay_levels_ms)
    if picked == n:
        return rows
    at = _positions(mask, picked)
    arrays = [kind] + [pc.take(pa.concat_arrays([rows.column(i), pa.nulls(1, f.type)]), at)
                       for i, f in enumerate(DECODED_SCHEMA) if i]
    return pa.RecordBatch.from_arrays(arrays, schema=DECODED_SCHEMA)


def _decode_rows(batch: pa.Table, kind: pa.Array, delay_levels_ms: tuple[int, ...]) -> pa.RecordBatch:
    """The columns of :data:`DECODED_SCHEMA` for rows whose kinds are known.

    Each group of columns is computed only when a row it applies to is
    there (the rest stay null): a batch's system rows are mostly of one or
    two kinds, and each step costs about the same on few rows as on many.
    """
    topic = _col(batch, "topic")
    n = len(topic)
    store_ms = pc.cast(_col(batch, "storeTimestamp"), pa.int64())

    def has(cond) -> bool:
        return bool(pc.any(pc.fill_null(cond, _FALSE)).as_py())

    def only(cond, values):
        return pc.if_else(pc.fill_null(cond, _FALSE), values, scalar(None, values.type))

    def none(type_: pa.DataType) -> pa.Array:
        return pa.nulls(n, type_)

    is_sched = pc.equal(kind, scalar("scheduled"))
    is_timer = pc.is_in(kind, _TIMER_KINDS)
    is_half = pc.equal(kind, scalar("transactionHalf"))
    carries_real = pc.or_(pc.or_(is_sched, is_timer), is_half)
    if has(carries_real):
        real_topic = only(carries_real, prop(batch, N.REAL_TOPIC))
        real_qid = only(carries_real, to_int(prop(batch, N.REAL_QUEUE_ID), pa.int32()))
    else:
        real_topic, real_qid = none(pa.string()), none(pa.int32())

    level, due, cancels = none(pa.int32()), none(pa.int64()), none(pa.string())
    if has(is_sched):
        level = only(is_sched, to_int(prop(batch, N.DELAY), pa.int32()))
        due = delay_due(store_ms, level, tuple(delay_levels_ms))
    if has(is_timer):
        out_ms = to_int(prop(batch, N.TIMER_OUT_MS))
        deliver = to_int(prop(batch, N.TIMER_DELIVER_MS))
        by_sec = pc.add(store_ms, pc.multiply(to_int(prop(batch, N.TIMER_DELAY_SEC)), scalar(1000)))
        by_ms = pc.add(store_ms, to_int(prop(batch, N.TIMER_DELAY_MS)))
        timer_due = pc.coalesce(out_ms, deliver, by_sec, by_ms)
        due = pc.if_else(pc.fill_null(is_sched, _FALSE), due, only(is_timer, timer_due))
        is_cancel = pc.equal(kind, scalar("timerCancel"))
        if has(is_cancel):
            cancels = only(is_cancel, prop(batch, N.TIMER_DEL_UNIQKEY))

    sys_flag = pc.cast(_col(batch, "sysFlag"), pa.int32())
    code = pc.shift_right(pc.bit_wise_and(sys_flag, scalar(N.TRANSACTION_MASK, pa.int32())),
                          scalar(N.TRANSACTION_SHIFT, pa.int32()))
    has_state = pc.not_equal(code, scalar(0, pa.int32()))
    in_tx = pc.or_(is_half, has_state)
    if has(in_tx):
        names = from_strings([N.TRANSACTION_TYPES.get(i, f"unknown({i})") for i in range(4)])
        state = pc.if_else(is_half, scalar("half"), only(has_state, pc.take(names, code)))
        tx_id = only(in_tx, pc.coalesce(prop(batch, N.TRANSACTION_ID), prop(batch, N.UNIQ_KEY)))
        checks = (only(is_half, pc.coalesce(to_int(prop(batch, N.TRANSACTION_CHECK_TIMES), pa.int32()),
                                            scalar(0, pa.int32()))) if has(is_half) else none(pa.int32()))
        prepared_qo = only(in_tx, to_int(prop(batch, N.TRANSACTION_PREPARED_QUEUE_OFFSET)))
        pgroup = only(in_tx, prop(batch, N.PRODUCER_GROUP))
    else:
        state, tx_id, checks = none(pa.string()), none(pa.string()), none(pa.int32())
        prepared_qo, pgroup = none(pa.int64()), none(pa.string())

    # Retry and dead-letter copies, also while they wait in the schedule topic under their real topic.
    eff = pc.coalesce(real_topic, topic)
    is_retry = pc.fill_null(pc.starts_with(eff, N.RETRY_PREFIX), _FALSE)
    is_dlq = pc.fill_null(pc.starts_with(eff, N.DLQ_PREFIX), _FALSE)
    rd = pc.or_(is_retry, is_dlq)
    if has(rd):
        group = pc.if_else(is_retry, pc.utf8_slice_codeunits(eff, len(N.RETRY_PREFIX)),
                           only(is_dlq, pc.utf8_slice_codeunits(eff, len(N.DLQ_PREFIX))))
        origin_topic = only(rd, pc.coalesce(prop(batch, N.DLQ_ORIGIN_TOPIC), prop(batch, N.RETRY_TOPIC)))
        origin_id = only(rd, pc.coalesce(prop(batch, N.DLQ_ORIGIN_MESSAGE_ID), prop(batch, N.ORIGIN_MESSAGE_ID)))
        retries = only(rd, pc.cast(_col(batch, "reconsumeTimes"), pa.int32()))
    else:
        group, origin_topic, origin_id, retries = none(pa.string()), none(pa.string()), none(pa.string()), \
            none(pa.int32())

    arrays = [kind, real_topic, real_qid, level, pc.cast(due, TIMESTAMP), cancels, tx_id, state, checks,
              prepared_qo, pgroup, group, origin_topic, origin_id, retries]
    arrays = [a if len(a) == n else _null(n, f.type) for a, f in zip(arrays, DECODED_SCHEMA)]
    return pa.RecordBatch.from_arrays([pc.cast(a, f.type) for a, f in zip(arrays, DECODED_SCHEMA)],
                                      schema=DECODED_SCHEMA)
