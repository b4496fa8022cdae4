"""The decoded system columns of :class:`~rmqformats.message.Message` objects, as typed records.

:func:`decode_messages` builds the columns :func:`~.columns.decode` reads
from a list of messages and gives each message's row as a
:class:`SystemInfo`: the same values as the ``--decode-system`` columns,
from the same decoder, with Python names. :func:`system_messages` pairs
each message of an iteration (``store.commitlog.scan()``) with its
:class:`SystemInfo`, decoding a few thousand at a time;
:meth:`Store.system_messages <rmqformats.store.Store.system_messages>`
does that for a store's scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import datetime

from ..message import Message, millis_to_datetime_or_none
from .batches import SystemDecoding, decoded_values, needed_batch
from .columns import DECODED_SCHEMA

#: Messages decoded together by :func:`system_messages`.
CHUNK = 4096


@dataclass(frozen=True)
class SystemInfo:
    """What a message is to the broker: the decoded system columns of one message (see
    :data:`~.columns.DECODED_SCHEMA`), ``None`` where a column does not apply to it."""

    #: ``kind``: one of :data:`~.columns.KINDS`.
    kind: str
    #: ``realTopic`` / ``realQueueId``: where a scheduled, timer or transaction half message is delivered.
    real_topic: str | None
    real_queue_id: int | None
    #: ``delayLevel`` of a scheduled message.
    delay_level: int | None
    #: ``dueTime`` as epoch milliseconds (any 64-bit value a property held); :attr:`due_time` as a datetime.
    due_timestamp: int | None
    #: ``timerCancelsKey``: the ``realTopic+uniqKey`` a timer cancellation names.
    timer_cancels_key: str | None
    transaction_id: str | None
    #: ``transactionState``: ``half``, ``prepared``, ``commit`` or ``rollback``.
    transaction_state: str | None
    transaction_check_times: int | None
    prepared_queue_offset: int | None
    producer_group: str | None
    #: ``group`` / ``originTopic`` / ``originMsgId`` / ``retryCount`` of a retry or dead-letter message.
    group: str | None
    origin_topic: str | None
    origin_msg_id: str | None
    retry_count: int | None

    @property
    def due_time(self) -> datetime | None:
        """:attr:`due_timestamp` as a UTC datetime; ``None`` without one or outside the years 1 to 9999."""
        return None if self.due_timestamp is None else millis_to_datetime_or_none(self.due_timestamp)

    def to_json_dict(self) -> dict:
        """The values under their column names, times as epoch ms (as ``messages --format jsonl`` gives them)."""
        return {column: getattr(self, f.name) for column, f in zip(DECODED_SCHEMA.names, fields(self))}


def decode_messages(messages: Sequence[Message], *, decoding: SystemDecoding = SystemDecoding()) -> list[SystemInfo]:
    """The :class:`SystemInfo` of each of ``messages``, in order (:func:`~.columns.decode` on their columns)."""
    if not messages:
        return []
    batch = needed_batch(topic=[m.topic for m in messages], properties=[m.properties for m in messages],
                         store_timestamp=[m.store_timestamp for m in messages],
                         sys_flag=[m.sys_flag for m in messages],
                         reconsume_times=[m.reconsume_times for m in messages])
    return [SystemInfo(*values) for values in decoded_values(batch, decoding=decoding)]


def decode_message(message: Message, *, decoding: SystemDecoding = SystemDecoding()) -> SystemInfo:
    """The :class:`SystemInfo` of one message (decoding many at once with :func:`decode_messages` is quicker)."""
    return decode_messages([message], decoding=decoding)[0]


def system_messages(messages: Iterable[Message], *, decoding: SystemDecoding = SystemDecoding(),
                    chunk: int = CHUNK) -> Iterator[tuple[Message, SystemInfo]]:
    """Each of ``messages`` with its :class:`SystemInfo`, decoded ``chunk`` messages at a time."""
    if chunk < 1:
        raise ValueError(f"chunk must be 1 or more, not {chunk!r}")
    held: list[Message] = []
    for m in messages:
        held.append(m)
        if len(held) >= chunk:
            yield from zip(held, decode_messages(held, decoding=decoding))
            held = []
    if held:
        yield from zip(held, decode_messages(held, decoding=decoding))


class SystemScan:
    """:func:`system_messages` over a commit-log scan, with the scan's ``end`` (where and why the data ends;
    set once the scan has read its last message, which is when the last chunk is decoded)."""

    def __init__(self, scan: Iterable[Message], *, decoding: SystemDecoding = SystemDecoding(), chunk: int = CHUNK):
        self.scan = scan
        self._pairs = system_messages(scan, decoding=decoding, chunk=chunk)

    @property
    def end(self):
        """The scan's :class:`~rmqformats.commitlog.DataEnd` once it ended, else ``None``."""
        return getattr(self.scan, "end", None)

    def __iter__(self) -> Iterator[tuple[Message, SystemInfo]]:
        return self

    def __next__(self) -> tuple[Message, SystemInfo]:
        return next(self._pairs)
