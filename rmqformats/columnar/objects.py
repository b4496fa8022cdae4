"""Arrow record batches of a commit log whose framing only an object scan reads (the tiered layout).

Its ``scan()`` hands out :class:`~rmqformats.message.Message` objects (each
decoded by the walk's kernels, one record at a time); this fills the same
columns (:data:`rmqformats.columnar.COLUMNS`) with the same values from them,
a batch at a time. Plain and DLedger commit logs build their columns from the
compiled walk's rows instead (:mod:`rmqformats.walk.scan`,
:mod:`rmqformats.dledger.columnar`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime

import pyarrow as pa

from ..walk.arrow import SCHEMA, resolve_columns
from ..walk.scan import DEFAULT_BATCH_SIZE
from ..compression import DEFAULT_MAX_BODY_SIZE
from ..errors import DecompressionError, RmqFormatError
from ..message import Message, to_millis

#: Options of the compiled scan that only tune its speed.
_PERFORMANCE = ("window_size", "threads", "range_size", "max_batch_bytes", "jobs")
#: Messages decoded before a batch is built from them, at most.
_MAX_OBJECTS = 8192


def _body_error(m: Message, max_body: int) -> str | None:
    if m.compression is None:
        return None
    try:
        m.decompressed_body(max_body)
    except DecompressionError as exc:
        return exc.reason
    return None


def _body(m: Message, max_body: int) -> bytes:
    try:
        return m.decompressed_body(max_body)
    except DecompressionError:
        return m.body_raw


def _column(name: str, msgs: list[Message], decompress: bool, max_body: int) -> list:
    if name == "commitLogOffset":
        return [m.commitlog_offset for m in msgs]
    if name == "storeSize":
        return [m.store_size for m in msgs]
    if name == "bodyCRC":
        return [m.body_crc for m in msgs]
    if name == "queueId":
        return [m.queue_id for m in msgs]
    if name == "flag":
        return [m.flag for m in msgs]
    if name == "queueOffset":
        return [m.queue_offset for m in msgs]
    if name == "sysFlag":
        return [m.sys_flag for m in msgs]
    if name == "bornTimestamp":
        return [m.born_timestamp for m in msgs]
    if name == "bornHost":
        return [m.born_host for m in msgs]
    if name == "storeTimestamp":
        return [m.store_timestamp for m in msgs]
    if name == "storeHost":
        return [m.store_host for m in msgs]
    if name == "reconsumeTimes":
        return [m.reconsume_times for m in msgs]
    if name == "preparedTransactionOffset":
        return [m.prepared_transaction_offset for m in msgs]
    if name == "topic":
        return [m.topic for m in msgs]
    if name == "properties":
        return [list(m.properties.items()) for m in msgs]
    if name == "propertiesString":
        return [m.properties_raw for m in msgs]
    if name == "msgId":
        return [m.msg_id for m in msgs]
    if name == "body":  # a body that does not decompress is kept as stored (bodyError says why)
        return [_body(m, max_body) if decompress else m.body_raw for m in msgs]
    if name == "bodyError":
        return [_body_error(m, max_body) if decompress else None for m in msgs]
    if name == "tags":
        return [m.tags for m in msgs]
    if name == "keys":
        return [m.keys for m in msgs]
    if name == "uniqKey":
        return [m.uniq_key for m in msgs]
    if name == "priority":
        return [m.priority for m in msgs]
    if name == "liteTopic":
        return [m.lite_topic for m in msgs]
    if name == "segment":
        return [os.path.basename(m.segment or "") for m in msgs]
    raise KeyError(name)


def refuse_options(path: str, options: dict, what: str) -> None:
    """Raise a typed error naming the scan options (``salvage`` …) that ``what`` does not support."""
    given = sorted(k for k, v in options.items() if v)
    if given:
        raise RmqFormatError(path, None, f"{', '.join(given)} does not apply to {what}")


class ObjectBatches:
    """The options and attributes of :class:`rmqformats.columnar.ColumnarScan`, over a log's object scan.

    ``window_size``, ``threads``, ``range_size`` and ``jobs`` are accepted and have no effect;
    batches hold at most 8192 rows, whatever ``batch_size`` asks.
    """

    def __init__(self, log, *, columns=None, batch_size: int = DEFAULT_BATCH_SIZE, decompress: bool = True,
                 verify_crc: bool = False, strict: bool = False, start: int | None = None,
                 topic: str | None = None, queue_id: int | None = None, tag: str | None = None,
                 key: str | None = None, since: int | str | datetime | None = None,
                 until: int | str | datetime | None = None, from_offset: int | None = None,
                 to_offset: int | None = None, stop: int | None = None,
                 max_body_size: int = DEFAULT_MAX_BODY_SIZE, **_performance):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        refuse_options(log.path, {k: v for k, v in _performance.items() if k not in _PERFORMANCE}, "this layout")
        self.columns = resolve_columns(columns)
        self.schema = pa.schema([SCHEMA.field(c) for c in self.columns])
        self._scan = log.scan(start=start, verify_crc=verify_crc, strict=strict)
        self.end = None
        self.blanks = self._scan.blanks
        # Message objects are held until their batch is built: keep that bounded.
        self._batch_size = min(batch_size, _MAX_OBJECTS)
        self._decompress = decompress
        self._max_body = max_body_size
        since = None if since is None else to_millis(since)
        until = None if until is None else to_millis(until)
        checks = []
        if topic is not None:
            checks.append(lambda m: m.topic == topic)
        if queue_id is not None:
            checks.append(lambda m: m.queue_id == queue_id)
        if tag is not None:
            checks.append(lambda m: m.tags == tag)
        if key is not None:
            checks.append(lambda m: key in m.keys or m.uniq_key == key)
        if since is not None:
            checks.append(lambda m: m.store_timestamp >= since)
        if until is not None:
            checks.append(lambda m: m.store_timestamp < until)
        if from_offset is not None:
            checks.append(lambda m: m.commitlog_offset >= from_offset)
        self._keep = lambda m: all(c(m) for c in checks)
        self._to = to_offset if stop is None else (stop if to_offset is None else min(stop, to_offset))
        self._gen = self._run()

    @property
    def bytes_done(self) -> int:
        return self._scan.bytes_done

    @property
    def last_index(self) -> int:
        """Index of the last DLedger entry read (-1 before the first, and for a log without entries)."""
        return getattr(self._scan, "last_index", -1)

    @property
    def last_term(self) -> int:
        """Term of the last DLedger entry read (-1 before the first, and for a log without entries)."""
        return getattr(self._scan, "last_term", -1)

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self._gen

    def __next__(self) -> pa.RecordBatch:
        return next(self._gen)

    def read_all(self) -> pa.Table:
        return pa.Table.from_batches(list(self._gen), schema=self.schema)

    def _batch(self, msgs: list[Message]) -> pa.RecordBatch:
        arrays = [pa.array(_column(c, msgs, self._decompress, self._max_body), self.schema.field(c).type)
                  for c in self.columns]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _run(self) -> Iterator[pa.RecordBatch]:
        pending: list[Message] = []
        for m in self._scan:
            if self._to is not None and m.commitlog_offset >= self._to:
                break
            if self._keep(m):
                pending.append(m)
                if len(pending) >= self._batch_size:
                    yield self._batch(pending)
                    pending = []
        else:
            self.end = self._scan.end
        if pending:
            yield self._batch(pending)
