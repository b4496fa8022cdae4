"""Bodies of the broker's own messages as records.

* transaction op messages (``RMQ_SYS_TRANS_OP_HALF_TOPIC``, tag ``d``): the
  half-queue offsets they close, decimal text separated by ``,``
  (``TransactionalMessageUtil.OFFSET_SEPARATOR``; one offset per op before
  the batched ops of ``TransactionalOpBatchService``, 5.0.0+) — see
  :func:`op_offsets` and, per batch, :func:`op_offsets_table`;
* POP checkpoints and acks (``rmq_sys_REVIVE_LOG_*``, tags ``ck``, ``ack``,
  ``bAck``): fastjson objects with the short names of ``PopCheckPoint``,
  ``AckMsg`` and ``BatchAckMsg`` (``store/pop``, 5.0.0+) — see
  :func:`pop_checkpoint`, :func:`pop_ack`;
* trace messages: records separated by U+0002, fields by U+0001
  (``TraceConstants.FIELD_SPLITOR`` / ``CONTENT_SPLITOR``), the first field
  the record type as ``TraceDataEncoder.decoderFromTraceDataString`` reads it
  — see :func:`trace_records`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ..frames import empty_table, from_strings, scalar
from . import names as N
from .columns import _col, prop, to_int

FIELD_SEPARATOR = "\x02"
CONTENT_SEPARATOR = "\x01"


class BodyFormatError(ValueError):
    """A system message body that does not have its format; says which and why."""


# -- transaction ops -------------------------------------------------------------------------

def op_offsets(body: bytes) -> list[int]:
    """The half-queue offsets an op body closes (``"12"`` or ``"12,13,"``)."""
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        raise BodyFormatError(f"transaction op body {body[:40]!r} is not ASCII") from None
    out = []
    for part in text.split(N.TRANS_OP_SEPARATOR):
        if not part:
            continue
        if not part.lstrip("-").isdigit():
            raise BodyFormatError(f"transaction op body {text[:80]!r}: {part!r} is not a queue offset")
        out.append(int(part))
    return out


#: The columns of :func:`op_offsets_table`.
OP_SCHEMA = pa.schema([("opQueueId", pa.int32()), ("halfQueueOffset", pa.int64()),
                       ("opCommitLogOffset", pa.int64())])


def op_offsets_table(batch: pa.RecordBatch | pa.Table) -> pa.Table:
    """One row per half-queue offset closed by the ``d``-tagged op messages of ``batch``.

    Needs the columns ``topic``, ``properties``, ``body``, ``queueId`` and
    ``commitLogOffset``; the op queue id is the half queue id it closes
    (``TransactionalMessageServiceImpl.getOpQueue``). A part of a body that is
    not a decimal offset is left out, as the broker's check skips it.
    """
    topic = _col(batch, "topic")
    is_op = pc.and_(pc.is_in(topic, from_strings([N.TRANS_OP_HALF_TOPIC, N.ROCKSDB_TRANS_OP_HALF_TOPIC])),
                    pc.equal(prop(batch, N.TAGS), scalar(N.TRANS_OP_REMOVE_TAG)))
    is_op = pc.fill_null(is_op, scalar(False))
    if not pc.any(is_op).as_py():
        return empty_table(OP_SCHEMA)
    body = pc.cast(pc.filter(_col(batch, "body"), is_op), pa.string(), safe=False)
    parts = pc.split_pattern(body, N.TRANS_OP_SEPARATOR)
    rows = pc.list_parent_indices(parts)
    values = to_int(pc.list_flatten(parts))
    qid = pc.take(pc.filter(_col(batch, "queueId"), is_op), rows)
    clo = pc.take(pc.filter(_col(batch, "commitLogOffset"), is_op), rows)
    table = pa.table([pc.cast(qid, pa.int32()), values, pc.cast(clo, pa.int64())], schema=OP_SCHEMA)
    return table.filter(pc.is_valid(table["halfQueueOffset"]))


# -- POP -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PopCheckpoint:
    """A ``ck`` body (``PopCheckPoint``): ``num`` messages popped from ``topic`` queue ``queue_id``."""

    start_offset: int
    pop_time: int
    invisible_time: int
    bit_map: int
    num: int
    queue_id: int
    topic: str
    group: str
    revive_offset: int
    offset_diffs: tuple[int, ...]
    broker_name: str | None = None
    #: ``rePutTimes``: how often the checkpoint was put again (text, as the broker keeps it).
    re_put_times: str | None = None

    @property
    def offsets(self) -> tuple[int, ...]:
        """The queue offsets the checkpoint covers (``startOffset`` plus each ``queueOffsetDiff``)."""
        if self.offset_diffs:
            return tuple(self.start_offset + d for d in self.offset_diffs)
        return tuple(range(self.start_offset, self.start_offset + self.num))

    @property
    def revive_time(self) -> int:
        """When the messages become visible again unless acked (``popTime + invisibleTime``)."""
        return self.pop_time + self.invisible_time


@dataclass(frozen=True)
class PopAck:
    """An ``ack`` (``AckMsg``) or ``bAck`` (``BatchAckMsg``) body: the offsets acked of a checkpoint."""

    ack_offsets: tuple[int, ...]
    start_offset: int
    group: str
    topic: str
    queue_id: int
    pop_time: int
    broker_name: str | None = None
    batch: bool = False


def _json(body: bytes, what: str) -> dict:
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BodyFormatError(f"{what} body is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise BodyFormatError(f"{what} body is not a JSON object")
    return value


def _get(d: dict, short: str, long: str, what: str, kind=int):
    value = d.get(short, d.get(long))
    if value is None:
        raise BodyFormatError(f"{what} body has no {short!r} ({long})")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise BodyFormatError(f"{what} body: {short!r} ({long}) is {value!r}, not an integer")
    if kind is str and not isinstance(value, str):
        raise BodyFormatError(f"{what} body: {short!r} ({long}) is {value!r}, not a string")
    return value


def _opt(d: dict, short: str, long: str, what: str, default: int) -> int:
    return _get(d, short, long, what) if short in d or long in d else default


def pop_checkpoint(body: bytes) -> PopCheckpoint:
    """A ``ck``-tagged revive message body."""
    d = _json(body, "POP checkpoint")
    diffs = d.get("d", d.get("queueOffsetDiff"))
    diffs = [] if diffs is None else diffs
    if not isinstance(diffs, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in diffs):
        raise BodyFormatError(f"POP checkpoint body: 'd' (queueOffsetDiff) is {diffs!r}, not a list of integers")
    w = "POP checkpoint"
    return PopCheckpoint(start_offset=_get(d, "so", "startOffset", w), pop_time=_get(d, "pt", "popTime", w),
                         invisible_time=_get(d, "it", "invisibleTime", w), bit_map=_opt(d, "bm", "bitMap", w, 0),
                         num=_get(d, "n", "num", w), queue_id=_get(d, "q", "queueId", w),
                         topic=_get(d, "t", "topic", w, str), group=_get(d, "c", "cid", w, str),
                         revive_offset=_opt(d, "ro", "reviveOffset", w, 0), offset_diffs=tuple(diffs),
                         broker_name=d.get("bn", d.get("brokerName")), re_put_times=d.get("rp", d.get("rePutTimes")))


def pop_ack(body: bytes, *, tag: str = N.POP_ACK_TAG) -> PopAck:
    """An ``ack`` or ``bAck`` (``tag``) revive message body."""
    batch = tag == N.POP_BATCH_ACK_TAG
    w = "POP batch ack" if batch else "POP ack"
    d = _json(body, w)
    if batch:
        offsets = d.get("aol", d.get("ackOffsetList"))
        if not isinstance(offsets, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in offsets):
            raise BodyFormatError(f"{w} body: 'aol' (ackOffsetList) is {offsets!r}, not a list of integers")
        offsets = tuple(offsets)
    else:
        offsets = (_get(d, "ao", "ackOffset", w),)
    return PopAck(ack_offsets=offsets, start_offset=_get(d, "so", "startOffset", w),
                  group=_get(d, "c", "consumerGroup", w, str), topic=_get(d, "t", "topic", w, str),
                  queue_id=_get(d, "q", "queueId", w), pop_time=_get(d, "pt", "popTime", w),
                  broker_name=d.get("bn", d.get("brokerName")), batch=batch)


# -- traces --------------------------------------------------------------------------------

#: Field names per trace record type, in the order ``TraceDataEncoder`` writes them (rocketmq-all-5.3.3).
TRACE_FIELDS: dict[str, tuple[str, ...]] = {
    "Pub": ("timeStamp", "regionId", "groupName", "topic", "msgId", "tags", "keys", "storeHost", "bodyLength",
            "costTime", "msgType", "offsetMsgId", "success", "clientHost"),
    "SubBefore": ("timeStamp", "regionId", "groupName", "requestId", "msgId", "retryTimes", "keys"),
    "SubAfter": ("requestId", "msgId", "costTime", "success", "keys", "contextCode", "timeStamp", "groupName"),
    "EndTransaction": ("timeStamp", "regionId", "groupName", "topic", "msgId", "tags", "keys", "storeHost",
                       "msgType", "transactionId", "transactionState", "fromTransactionCheck"),
    "Recall": ("timeStamp", "regionId", "groupName", "topic", "msgId", "success"),
}


@dataclass(frozen=True)
class TraceRecord:
    """One trace record: its type (``Pub``, ``SubBefore``, ``SubAfter``, ``EndTransaction``, ``Recall``)
    and its fields by name (an unknown type keeps its fields as ``field1`` …)."""

    type: str
    fields: dict[str, str] = field(default_factory=dict)


def trace_records(body: bytes) -> list[TraceRecord]:
    """The records of a trace message body.

    A ``Pub`` record of 13 fields has ``success`` where later ones have
    ``offsetMsgId`` (the decoder's length rule); fields past the known names
    are kept as ``extraN``.
    """
    text = body.decode("utf-8", errors="replace")
    out = []
    for record in text.split(FIELD_SEPARATOR):
        if not record.strip():
            continue  # the body ends with the separator
        parts = record.split(CONTENT_SEPARATOR)
        kind, values = parts[0], parts[1:]
        names = TRACE_FIELDS.get(kind)
        if names is None:
            names = tuple(f"field{i + 1}" for i in range(len(values)))
        elif kind == "Pub" and len(values) == 12:
            names = names[:11] + ("success",)
        fields = {names[i] if i < len(names) else f"extra{i - len(names) + 1}": v for i, v in enumerate(values)}
        out.append(TraceRecord(kind, fields))
    return out
