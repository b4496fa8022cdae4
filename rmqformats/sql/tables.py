"""The store's tables as Arrow record-batch streams, read as DuckDB pulls them.

Each table is a :class:`pyarrow.RecordBatchReader` over the reader that
already gives it: nothing is read before the query asks for its first batch,
and no table is held whole (the config tables are as small as the JSON files
they come from, which their reader holds anyway).

========================  ===========================================================================
``messages``              the commit log: :data:`rmqformats.columnar.SCHEMA` (``CommitLog.batches``), then
                          the decoded system columns (:data:`rmqformats.systopics.DECODED_SCHEMA`)
``queue_units``           every unit of the file, batch and RocksDB consume queues
                          (:data:`rmqformats.columnar.queues.QUEUE_UNITS_SCHEMA`)
``index_entries``         every written entry of the index files
                          (:data:`rmqformats.columnar.queues.INDEX_SCHEMA`)
``consumer_offsets``      committed offsets with each queue's range and lag, the rows of ``rmqformats lag``
``topics``                ``config/topics.json``, one row per topic
``subscription_groups``   ``config/subscriptionGroup.json``, one row per consumer group
``timer``                 the units of the timer log (5.x ``timerlog/``)
========================  ===========================================================================
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..walk.arrow import COLUMNS, SCHEMA, TIMESTAMP
from ..errors import StoreNotFoundError

#: The store facade (:class:`rmqformats.store.Store`), which offers ``Store.sql``: named, not imported, so
#: that the arrow points from the facade down to this capability only.
Store = Any

#: Rows of one batch of the tables built row by row here.
ROWS_PER_BATCH = 65536

CONSUMER_OFFSETS_SCHEMA = pa.schema([
    ("group", pa.string()), ("topic", pa.string()), ("queueId", pa.int32()), ("committedOffset", pa.int64()),
    ("minOffset", pa.int64()), ("maxOffset", pa.int64()), ("lag", pa.int64()), ("available", pa.int64()),
    ("nextMessageStoreTime", TIMESTAMP), ("behindMin", pa.bool_()), ("beyondMax", pa.bool_()),
    ("queueType", pa.string()), ("queueFound", pa.bool_()), ("note", pa.string()), ("maxOverflow", pa.bool_())])
TOPICS_SCHEMA = pa.schema([
    ("topic", pa.string()), ("readQueueNums", pa.int32()), ("writeQueueNums", pa.int32()), ("perm", pa.int32()),
    ("permString", pa.string()), ("topicFilterType", pa.string()), ("topicSysFlag", pa.int32()),
    ("order", pa.bool_()), ("queueType", pa.string()), ("attributes", pa.map_(pa.string(), pa.string()))])
SUBSCRIPTION_GROUPS_SCHEMA = pa.schema([
    ("group", pa.string()), ("consumeEnable", pa.bool_()), ("consumeFromMinEnable", pa.bool_()),
    ("consumeBroadcastEnable", pa.bool_()), ("retryQueueNums", pa.int32()), ("retryMaxTimes", pa.int32()),
    ("brokerId", pa.int64()), ("whichBrokerWhenConsumeSlowly", pa.int64()),
    ("consumeMessageOrderly", pa.bool_()), ("consumeTimeoutMinute", pa.int64()), ("groupSysFlag", pa.int32()),
    ("attributes", pa.map_(pa.string(), pa.string()))])
TIMER_SCHEMA = pa.schema([
    ("offset", pa.int64()), ("segment", pa.string()), ("position", pa.int64()), ("size", pa.int32()),
    ("prevPos", pa.int64()), ("magic", pa.int32()), ("kind", pa.string()), ("currWriteTime", TIMESTAMP),
    ("delayMs", pa.int64()), ("deliverTime", TIMESTAMP), ("commitLogOffset", pa.int64()),
    ("commitLogSize", pa.int32()), ("topicHash", pa.int32())])


@dataclass
class Source:
    """One table as it was read: the walk's arguments and the rows handed to the engine."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    #: Rows given to the engine so far.
    rows: int = 0
    #: Batches given to the engine so far.
    batches: int = 0
    #: The commit-log scan of ``messages`` (its ``bytes_done``, ``end``), once started.
    scan: Any = None
    #: The error that ended the reading of this table (raised again in place of the engine's).
    error: BaseException | None = None


def _counted(source: Source, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    try:
        for batch in batches:
            source.rows += batch.num_rows
            source.batches += 1
            yield batch
    except GeneratorExit:  # the engine stopped reading (a LIMIT reached, an error of its own)
        raise
    except BaseException as exc:  # the engine sees its own error; the caller gets this one
        source.error = exc
        raise


class Table:
    """A table the engine can scan as often as the query reads it (a self-join, a subquery, a CTE used
    twice): each scan is a new :class:`pyarrow.RecordBatchReader` over a new walk (the Arrow PyCapsule
    stream protocol), which reads nothing until its first batch is asked for."""

    def __init__(self, schema: pa.Schema, source: Source, batches: Callable[[], Iterable[pa.RecordBatch]]):
        self.schema = schema
        self.source = source
        self._batches = batches

    def reader(self) -> Table:
        """A new stream of the table's batches."""
        def run() -> Iterator[pa.RecordBatch]:
            yield from _counted(self.source, self._batches())
        return pa.RecordBatchReader.from_batches(self.schema, run())

    def __arrow_c_schema__(self):
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema=None):
        return self.reader().__arrow_c_stream__(requested_schema)


def _reader(schema: pa.Schema, source: Source, batches: Callable[[], Iterable[pa.RecordBatch]]) -> Table:
    return Table(schema, source, batches)


def _needs_root(store: Store, table: str) -> None:
    if store.root is None:
        raise StoreNotFoundError(store.commitlog.path, None,
                                 f"the {table} table needs a store root, not a commit-log folder or file")


def messages(store: Store, filters: dict[str, Any], columns: Iterable[str] | None, source: Source, *,
             jobs: int = 1, body_decoder: Any = None, system: Any = None) -> Table:
    """The commit log's messages, only ``columns`` (all when ``None``), pre-filtered by ``filters``, then the
    decoded system columns (decoded with ``system``, a :class:`rmqformats.systopics.SystemDecoding`, when the
    query names one); with ``body_decoder`` (a spec or a :class:`rmqformats.body_decoders.BodyDecoding`) also
    ``bodyDecoded`` (or the body fields' columns) and ``bodyDecodeError``."""
    from ..body_decoders import decoding as body_decoding
    from ..systopics import DECODED_SCHEMA, SYSTEM_COLUMNS, SystemDecoding, with_system_columns
    from ..systopics.batches import NEEDED
    named = None if columns is None else {c.lower() for c in columns}
    decoder = body_decoding(body_decoder)
    decoding = decoder is not None and (named is None or bool(named & {c.lower() for c in decoder.names}))
    # The system columns are always in the table; decoded only when the query names one (or selects *).
    systems = named is None or bool(named & {c.lower() for c in SYSTEM_COLUMNS})
    shown = [c for c in COLUMNS if named is None or c.lower() in named or (decoding and c == "body")]
    shown = shown or ["commitLogOffset"]
    wanted = [c for c in COLUMNS if c in shown or (systems and c in NEEDED)]
    system = system if system is not None else SystemDecoding()
    options: dict[str, Any] = {k: v for k, v in filters.items()
                               if k in ("topic", "queue_id", "since", "until", "from_offset", "to_offset")}
    options["decompress"] = "body" in wanted
    if jobs > 1:
        options["jobs"] = jobs
    source.options = dict(options)
    schema = pa.schema([SCHEMA.field(c) for c in shown] + list(DECODED_SCHEMA))
    if decoder is not None:
        schema = decoder.schema(schema)

    def batches() -> Iterator[pa.RecordBatch]:
        scan = store.commitlog.batches(wanted, **options)
        source.scan = scan
        for batch in scan:
            if systems:
                batch = with_system_columns(batch, shown, decoding=system)
            else:  # the columns are there, never filled when the query names none of them
                n = batch.num_rows
                batch = pa.RecordBatch.from_arrays([batch.column(c) for c in shown]
                                                   + [pa.nulls(n, f.type) for f in DECODED_SCHEMA],
                                                   schema=pa.schema([SCHEMA.field(c) for c in shown]
                                                                    + list(DECODED_SCHEMA)))
            if not decoding:
                if decoder is not None:  # the columns are there, never filled when the query names none
                    batch = decoder.nulls(batch)
                yield batch
                continue
            yield decoder.batch(batch)
    return _reader(schema, source, batches)


def queue_units(store: Store, filters: dict[str, Any], columns: Iterable[str] | None, source: Source, *,
                jobs: int = 1, body_decoder: Any = None, system: Any = None) -> Table:
    """Every consume-queue unit (file, batch and RocksDB queues), pre-filtered by one topic and queue id."""
    _needs_root(store, "queue_units")
    from ..columnar.queues import QUEUE_UNITS_SCHEMA
    options: dict[str, Any] = {"batch_queues": os.path.isdir(store.path("batchconsumequeue"))}
    topics = filters.get("topic")
    if topics is not None and len(topics) == 1:
        options["topic"] = topics[0]
    if "queue_id" in filters:
        options["queue_id"] = filters["queue_id"]
    source.options = dict(options)

    def batches() -> Iterable[pa.RecordBatch]:
        if not options["batch_queues"]:  # the same columns whether or not the store has batch queues
            for batch in store.queue_batches(**options):
                yield pa.RecordBatch.from_arrays(
                    [*batch.columns, pa.array([1] * batch.num_rows, QUEUE_UNITS_SCHEMA.field("batchSize").type)],
                    schema=QUEUE_UNITS_SCHEMA)
            return
        yield from store.queue_batches(**options)
    return _reader(QUEUE_UNITS_SCHEMA, source, batches)


def index_entries(store: Store, filters: dict[str, Any], columns: Iterable[str] | None, source: Source, *,
                  jobs: int = 1, body_decoder: Any = None, system: Any = None) -> Table:
    """Every written entry of every index file."""
    _needs_root(store, "index_entries")
    from ..columnar.queues import INDEX_SCHEMA

    def batches() -> Iterator[pa.RecordBatch]:
        if not os.path.isdir(store.path("index")):
            return
        with store.index() as files:
            yield from files.batches()
    return _reader(INDEX_SCHEMA, source, batches)


def _rows(schema: pa.Schema, rows: Iterable[dict]) -> Iterator[pa.RecordBatch]:
    chunk: list[dict] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == ROWS_PER_BATCH:
            yield pa.RecordBatch.from_pylist(chunk, schema=schema)
            chunk = []
    if chunk:
        yield pa.RecordBatch.from_pylist(chunk, schema=schema)


def consumer_offsets(store: Store, filters: dict[str, Any], columns: Iterable[str] | None, source: Source, *,
                     jobs: int = 1, body_decoder: Any = None, system: Any = None) -> Table:
    """The rows of ``rmqformats lag``: each committed offset with its queue's range and lag."""
    _needs_root(store, "consumer_offsets")
    with_time = columns is None or "nextmessagestoretime" in {c.lower() for c in columns}
    topics = filters.get("topic")
    topic = topics[0] if topics is not None and len(topics) == 1 else None
    source.options = {"topic": topic, "with_store_time": with_time}

    def rows() -> Iterator[dict]:
        for row in store.consumer_lag(topic=topic, with_store_time=with_time):
            yield {k: v for k, v in row.to_json_dict().items() if k in CONSUMER_OFFSETS_SCHEMA.names}
    return _reader(CONSUMER_OFFSETS_SCHEMA, source, lambda: _rows(CONSUMER_OFFSETS_SCHEMA, rows()))


def _config_model(store: Store, name: str) -> Any:
    from ..config import read_config_file
    path = store.path("config", name)
    if not (os.path.exists(path) or os.path.exists(path + ".bak")):
        return None
    return read_config_file(path).model


def _attributes(value: Any) -> list[tuple[str, str]] | None:
    return None if value is None else [(str(k), str(v)) for k, v in dict(value).items()]


def topics(store: Store, filters: dict[str, Any], columns: Iterable[str] | None, source: Source, *,
           jobs: int = 1, body_decoder: Any = None, system: Any = None) -> Table:
    """``config/topics.json``: one row per topic."""
    _needs_root(store, "topics")

    def rows() -> Iterator[dict]:
        model = _config_model(store, "topics.json")
        for name, t in (model.topic_config_table if model is not None else {}).items():
            yield {"topic": t.topic_name if t.topic_name is not None else name,
                   "readQueueNums": t.read_queue_nums, "writeQueueNums": t.write_queue_nums, "perm": t.perm,
                   "permString": t.perm_string, "topicFilterType": t.topic_filter_type,
                   "topicSysFlag": t.topic_sys_flag, "order": t.order, "queueType": t.queue_type,
                   "attributes": _attributes(t.attributes)}
    return _reader(TOPICS_SCHEMA, source, lambda: _rows(TOPICS_SCHEMA, rows()))


def subscription_groups(store: Store, filters: dict[str, Any], columns: Iterable[str] | None, source: Source,
                        *, jobs: int = 1, body_decoder: Any = None, system: Any = None) -> Table:
    """``config/subscriptionGroup.json``: one row per consumer group."""
    _needs_root(store, "subscription_groups")

    def rows() -> Iterator[dict]:
        model = _config_model(store, "subscriptionGroup.json")
        for name, g in (model.subscription_group_table if model is not None else {}).items():
            yield {"group": g.group_name if g.group_name is not None else name,
                   "consumeEnable": g.consume_enable, "consumeFromMinEnable": g.consume_from_min_enable,
                   "consumeBroadcastEnable": g.consume_broadcast_enable, "retryQueueNums": g.retry_queue_nums,
                   "retryMaxTimes": g.retry_max_times, "brokerId": g.broker_id,
                   "whichBrokerWhenConsumeSlowly": g.which_broker_when_consume_slowly,
                   "consumeMessageOrderly": g.consume_message_orderly,
                   "consumeTimeoutMinute": g.consume_timeout_minute, "groupSysFlag": g.group_sys_flag,
                   "attributes": _attributes(g.attributes)}
    return _reader(SUBSCRIPTION_GROUPS_SCHEMA, source, lambda: _rows(SUBSCRIPTION_GROUPS_SCHEMA, rows()))


def timer(store: Store, filters: dict[str, Any], columns: Iterable[str] | None, source: Source, *,
          jobs: int = 1, body_decoder: Any = None, system: Any = None) -> Table:
    """The units of the timer log (none when the store has no ``timerlog/``)."""
    _needs_root(store, "timer")

    def rows() -> Iterator[dict]:
        timers = store.timer()
        if not timers.exists:
            return
        for u in timers.units():
            yield {"offset": u.offset, "segment": u.segment_name, "position": u.position, "size": u.size,
                   "prevPos": u.prev_pos, "magic": u.magic, "kind": u.kind, "currWriteTime": u.curr_write_time_ms,
                   "delayMs": u.delay_ms, "deliverTime": u.delayed_time_ms,
                   "commitLogOffset": u.commitlog_offset, "commitLogSize": u.commitlog_size,
                   "topicHash": u.topic_hash}
    return _reader(TIMER_SCHEMA, source, lambda: _rows(TIMER_SCHEMA, rows()))


#: The tables, by name, in the order the documentation lists them.
TABLES: dict[str, Callable[..., Table]] = {
    "messages": messages, "queue_units": queue_units, "index_entries": index_entries,
    "consumer_offsets": consumer_offsets, "topics": topics, "subscription_groups": subscription_groups,
    "timer": timer,
}

def schema_of(name: str) -> pa.Schema:
    """The Arrow schema of table ``name``."""
    if name == "messages":
        from ..systopics import system_schema
        return system_schema(SCHEMA)
    if name == "queue_units":
        from ..columnar.queues import QUEUE_UNITS_SCHEMA
        return QUEUE_UNITS_SCHEMA
    if name == "index_entries":
        from ..columnar.queues import INDEX_SCHEMA
        return INDEX_SCHEMA
    return {"consumer_offsets": CONSUMER_OFFSETS_SCHEMA, "topics": TOPICS_SCHEMA,
            "subscription_groups": SUBSCRIPTION_GROUPS_SCHEMA, "timer": TIMER_SCHEMA}[name]
