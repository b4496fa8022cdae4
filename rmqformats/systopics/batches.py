"""The decoded system columns appended to the message batches of a walk, as ``--decode-system`` gives them.

:func:`with_system_columns` takes the batches of
:meth:`CommitLog.batches <rmqformats.commitlog.CommitLog.batches>` (read
with :func:`scan_columns`, which adds what :func:`~.columns.decode` reads)
and gives each with the columns of :data:`~.columns.DECODED_SCHEMA` after
the requested ones: the same names and Arrow types in ``messages --format
jsonl``, ``export``, ``sql`` and the Spark commit-log source. The values are
:func:`~.columns.decode`'s, computed on whole columns per batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from . import names as N
from .columns import DECODED_SCHEMA, decode

#: The names of the decoded system columns, in order.
SYSTEM_COLUMNS: tuple[str, ...] = tuple(DECODED_SCHEMA.names)
#: The message columns :func:`~.columns.decode` reads.
NEEDED = ("topic", "properties", "storeTimestamp", "sysFlag", "reconsumeTimes")


@dataclass(frozen=True)
class SystemDecoding:
    """How the system columns are decoded: the broker's delay levels and the custom trace topics."""

    #: The delay of each level in ms (``messageDelayLevel``; see :func:`~.names.parse_delay_levels`).
    delay_levels_ms: tuple[int, ...] = N.DEFAULT_DELAY_LEVELS_MS
    #: Trace topics besides ``RMQ_SYS_TRACE_TOPIC`` and ``rmq_sys_TRACE_DATA_*``.
    trace_topics: tuple[str, ...] = field(default_factory=tuple)


def scan_columns(columns: Sequence[str], order: Sequence[str]) -> list[str]:
    """``columns`` with the message columns :func:`~.columns.decode` reads added, in the order of ``order``
    (the columnar schema's names)."""
    need = set(columns) | set(NEEDED)
    return [c for c in order if c in need]


def system_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the decoded system columns appended."""
    for f in DECODED_SCHEMA:
        schema = schema.append(f)
    return schema


def with_system_columns(batch: pa.RecordBatch, keep: Sequence[str], *,
                        decoding: SystemDecoding = SystemDecoding()) -> pa.RecordBatch:
    """The columns ``keep`` of ``batch`` (which also holds :data:`NEEDED`), then the decoded system columns."""
    decoded = decode(batch, delay_levels_ms=decoding.delay_levels_ms, trace_topics=decoding.trace_topics)
    fields = [batch.schema.field(c) for c in keep] + list(DECODED_SCHEMA)
    arrays = [batch.column(c) for c in keep] + list(decoded.columns)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def system_batches(batches: Iterable[pa.RecordBatch], keep: Sequence[str], *,
                   decoding: SystemDecoding = SystemDecoding()) -> Iterator[pa.RecordBatch]:
    """:func:`with_system_columns` of each batch, one at a time."""
    for batch in batches:
        yield with_system_columns(batch, keep, decoding=decoding)
        batch = None  # not held while the next one is read


def needed_batch(*, topic: Sequence[str], properties: Sequence[dict[str, str] | None],
                 store_timestamp: Sequence[int], sys_flag: Sequence[int], reconsume_times: Sequence[int]
                 ) -> pa.RecordBatch:
    """The columns :data:`NEEDED`, with the columnar schema's types, from values given row by row
    (store times as epoch ms): what :func:`~.columns.decode` reads of messages not read as batches."""
    from ..columnar import SCHEMA
    values = {"topic": topic, "properties": [list(p.items()) if p is not None else None for p in properties],
              "storeTimestamp": store_timestamp, "sysFlag": sys_flag, "reconsumeTimes": reconsume_times}
    arrays = []
    for name in NEEDED:
        t = SCHEMA.field(name).type
        arrays.append(pa.array(values[name], pa.int64()).cast(t) if pa.types.is_timestamp(t)
                      else pa.array(values[name], t))
    return pa.RecordBatch.from_arrays(arrays, names=list(NEEDED))


def decoded_values(batch: pa.RecordBatch, *, decoding: SystemDecoding = SystemDecoding()) -> list[tuple]:
    """The decoded system columns of each row of ``batch`` (which holds :data:`NEEDED`) as a tuple of Python
    values in the order of :data:`SYSTEM_COLUMNS`, times as epoch ms (a due time a hostile property puts past
    the year 9999 stays a number)."""
    decoded = decode(batch, delay_levels_ms=decoding.delay_levels_ms, trace_topics=decoding.trace_topics)
    columns = [c.cast(pa.int64()).to_pylist() if pa.types.is_timestamp(c.type) else c.to_pylist()
               for c in decoded.columns]
    return list(zip(*columns))


def system_rows(rows: Sequence[dict], *, decoding: SystemDecoding = SystemDecoding()) -> list[dict]:
    """The decoded system columns of messages given as :meth:`Message.to_json_dict
    <rmqformats.message.Message.to_json_dict>` dicts (times as epoch ms, as there)."""
    if not rows:
        return []
    batch = needed_batch(topic=[r.get("topic") for r in rows], properties=[r.get("properties") for r in rows],
                         store_timestamp=[r.get("storeTimestamp") for r in rows],
                         sys_flag=[r.get("sysFlag") for r in rows],
                         reconsume_times=[r.get("reconsumeTimes") for r in rows])
    return [dict(zip(SYSTEM_COLUMNS, values)) for values in decoded_values(batch, decoding=decoding)]
