"""Consume queues, batch consume queues and index files as Arrow record batches, tables and pandas frames.

The readers already read these files as numpy structured arrays whose
dtypes come from the specs (:func:`rmqformats.units.unit_dtype` over the
generated layout tables). This module turns those arrays into Arrow columns
in bulk: each field of a block of units is byte-swapped into a contiguous
native array in one numpy pass and handed to Arrow, so no Python code runs
per unit. The Arrow types are the fields' spec widths; the column names are
RocketMQ's (``commitLogOffset``, ``tagsCode``, ...), as the JSON output of
the readers spells them.

Which units, and where a queue ends, is decided by the readers, so the
tables hold exactly what the object API yields:

* a consume queue ends where the broker's recovery ends it
  (:meth:`rmqformats.queuefiles.UnitFiles.end_unit`: the first unit of
  the three newest files that fails ``is_valid``, such as the first
  all-zero unit); placeholder units (``fillPreBlank``) are left out by
  default as :meth:`ConsumeQueue.units` leaves them out, or kept as they
  are with ``placeholders=True`` (as :meth:`ConsumeQueue.unit_array` keeps
  them; the spec's ``is_placeholder`` test finds them);
* a batch consume queue ends at its first unit that fails ``is_accepted``;
* an index file's entries are 1 to the header's ``indexCount - 1``
  (:meth:`rmqformats.index.IndexFile.written_entries`).

Damaged files raise the readers' typed errors (:class:`QueueFileError`,
:class:`IndexSizeError`, :class:`IndexRangeError`, ...) with the same file,
offset and text. Files are read with positioned reads in blocks of at most
``batch_size`` units, so memory stays bounded whatever the file size::

    store = rmqformats.open_store("/data/rocketmq/store")
    store.consume_queue("TopicTest", 0).to_arrow()
    for batch in store.queue_batches(batch_queues=True):    # every queue of the store
        ...
    store.index().to_pandas()

The readers call this module for their ``to_arrow()``, ``to_pandas()`` and
``batches()``; the streams over every queue of a store are the columnar
capability's (:mod:`rmqformats.columnar.queues`, which also offers every name
of this module).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa

from .frames import from_numpy, require_pandas
from .generated.layouts import rocketmq_batch_consumequeue as bcq_layout
from .generated.layouts import rocketmq_consumequeue as cq_layout
from .generated.layouts import rocketmq_index_file as index_layout
from .queuefiles import ReadStep
from .units import unit_dtype

if TYPE_CHECKING:
    import pandas

# The readers of these files (rmqformats.consumequeue, .batch_consumequeue, .index) call this
# module for their to_arrow() and batches(); it sits below them and takes their objects as they are.
ConsumeQueue = Any
BatchConsumeQueue = Any
IndexFile = Any
IndexFiles = Any

#: Store times, as in the commit-log columns.
TIMESTAMP = pa.timestamp("ms", tz="UTC")
#: Units (or index entries) per record batch unless asked otherwise.
DEFAULT_BATCH_SIZE = 1 << 18

# Spec field -> column name. Everything else (order, widths, byte order) comes from the
# spec's dtype; an import error, not wrong columns, if a spec gains or renames a field.
_CQ_NAMES = {"ofs_commitlog": "commitLogOffset", "len_message": "size", "tags_code": "tagsCode"}
_BCQ_NAMES = {"ofs_commitlog": "commitLogOffset", "len_message": "size", "tags_code": "tagsCode",
              "store_timestamp": "storeTime", "msg_base_offset": "msgBaseOffset", "num_messages": "batchSize",
              "compacted_offset": "compactedOffset", "reserved": "reservedInt"}
_ENTRY_NAMES = {"key_hash": "keyHash", "ofs_physical": "commitLogOffset", "time_diff": "timeDiff",
                "prev_index": "prevIndex"}
_TIME_FIELDS = frozenset({"store_timestamp"})


def _spec_fields(dtype: np.dtype, names: dict[str, str]) -> list[tuple[str, str, np.dtype]]:
    """``(spec name, column name, native dtype)`` of every field of ``dtype``, in the spec's order."""
    assert tuple(names) == dtype.names, f"column names {list(names)} do not match the spec's {dtype.names}"
    return [(n, names[n], dtype[n].newbyteorder("=")) for n in dtype.names]


def _arrow_fields(fields: list[tuple[str, str, np.dtype]]) -> list[pa.Field]:
    return [pa.field(col, TIMESTAMP if spec in _TIME_FIELDS else pa.from_numpy_dtype(dt), nullable=False)
            for spec, col, dt in fields]


_CQ_FIELDS = _spec_fields(unit_dtype(cq_layout.UNIT_RUNS, cq_layout.UNIT_SEQ), _CQ_NAMES)
_BCQ_FIELDS = _spec_fields(unit_dtype(bcq_layout.UNIT_RUNS, bcq_layout.UNIT_SEQ), _BCQ_NAMES)
_ENTRY_FIELDS = _spec_fields(unit_dtype(index_layout.ENTRY_RUNS, index_layout.ENTRY_SEQ), _ENTRY_NAMES)
_IS_PLACEHOLDER = cq_layout.UNIT_VALUES["is_placeholder"]
_BATCH_SIZE_TYPE = dict((c, dt) for _, c, dt in _BCQ_FIELDS)["batchSize"]

_TOPIC = pa.field("topic", pa.string(), nullable=False)
_QUEUE_ID = pa.field("queueId", pa.int32(), nullable=False)

#: Consume-queue units: ``cqOffset`` is the unit's logical offset (its number in the queue).
CQ_SCHEMA = pa.schema([_TOPIC, _QUEUE_ID, pa.field("cqOffset", pa.int64(), nullable=False),
                       *_arrow_fields(_CQ_FIELDS)])
#: Batch consume-queue units: ``unitIndex`` is the unit's number in the queue's unit stream
#: (:attr:`BcqUnit.index`), ``msgBaseOffset`` the queue offset of its first message.
BCQ_SCHEMA = pa.schema([_TOPIC, _QUEUE_ID, pa.field("unitIndex", pa.int64(), nullable=False),
                        *_arrow_fields(_BCQ_FIELDS)])
#: Units of every queue of a store with ``batch_queues=True``: :data:`CQ_SCHEMA` plus the
#: number of queue offsets a unit covers (1 for a consume-queue unit). A batch
#: consume-queue unit's ``cqOffset`` is its ``msgBaseOffset``.
QUEUE_UNITS_SCHEMA = CQ_SCHEMA.append(BCQ_SCHEMA.field("batchSize"))
#: Index entries: ``entry`` is the entry number, ``slot`` the hash slot of ``keyHash``
#: (``keyHash % numHashSlots`` as Java computes it), ``storeTime`` what lookups compare
#: (the header's ``beginTimestamp + timeDiff * 1000``, whole seconds).
INDEX_SCHEMA = pa.schema([pa.field("file", pa.string(), nullable=False),
                          pa.field("entry", pa.int32(), nullable=False),
                          pa.field("slot", pa.int32(), nullable=False),
                          *_arrow_fields(_ENTRY_FIELDS),
                          pa.field("storeTime", TIMESTAMP, nullable=False)])
#: One row per index file: its counts and header (``IndexHeader`` names), and ``entries`` written.
INDEX_HEADER_SCHEMA = pa.schema([
    ("file", pa.string()), ("fileSize", pa.int64()), ("numHashSlots", pa.int32()), ("numIndex", pa.int32()),
    ("beginTimestamp", TIMESTAMP), ("endTimestamp", TIMESTAMP), ("beginPhyOffset", pa.int64()),
    ("endPhyOffset", pa.int64()), ("hashSlotCount", pa.int32()), ("indexCount", pa.int32()),
    ("entries", pa.int32()),
])


# -- blocks of rows and the batches made of them ------------------------------------------------


class _Part(NamedTuple):
    """Rows that share a label (topic or index file name) and a queue id: numpy columns by column name."""

    label: bytes
    queue_id: int
    columns: dict[str, np.ndarray]

    @property
    def rows(self) -> int:
        return len(next(iter(self.columns.values())))


def _label_array(labels: list[bytes], counts: list[int]) -> pa.Array:
    """A string column holding ``labels[i]`` ``counts[i]`` times, built from buffers."""
    total = sum(len(label) * count for label, count in zip(labels, counts))
    if total >= 1 << 31:
        raise ValueError("a batch's labels exceed 2 GiB; use a smaller batch_size")
    offsets = np.empty(sum(counts) + 1, np.int32)
    offsets[0] = 0
    at = pos = 0
    for label, count in zip(labels, counts):  # one run per part, not per row
        run = offsets[at + 1:at + count + 1]
        run[:] = np.arange(1, count + 1, dtype=np.int32)
        run *= len(label)
        run += pos
        at += count
        pos += count * len(label)
    data = b"".join(label * count for label, count in zip(labels, counts))
    return pa.Array.from_buffers(pa.string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


class _Labels:
    """Label columns of one label, sliced from one shared pair of buffers.

    A queue's batches all hold its topic: their topic columns share one
    buffer of ``capacity`` copies (and one offsets buffer) instead of
    each building its own. Batches of several labels are built whole.
    """

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.label: bytes | None = None
        self.buffers: tuple[pa.Buffer, pa.Buffer] | None = None

    def column(self, labels: list[bytes], counts: list[int]) -> pa.Array:
        if len(labels) > 1 or counts[0] > self.capacity:
            return _label_array(labels, counts)
        label, n = labels[0], counts[0]
        if label != self.label or self.buffers is None:
            full = _label_array([label], [self.capacity])
            self.label, self.buffers = label, (full.buffers()[1], full.buffers()[2])
        offsets, data = self.buffers
        return pa.Array.from_buffers(pa.string(), n, [None, offsets.slice(0, (n + 1) * 4),
                                                      data.slice(0, n * len(label))])


def _record_batch(schema: pa.Schema, parts: list[_Part], labels: _Labels) -> pa.RecordBatch:
    counts = [p.rows for p in parts]
    arrays = []
    for i, field in enumerate(schema):
        if i == 0:  # topic or file
            arrays.append(labels.column([p.label for p in parts], counts))
        elif field.name == "queueId":
            arrays.append(from_numpy(np.repeat(np.array([p.queue_id for p in parts], np.int32), counts)))
        else:
            cols = [p.columns[field.name] for p in parts]
            arrays.append(from_numpy(cols[0] if len(cols) == 1 else np.concatenate(cols), field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _batches(schema: pa.Schema, parts: Iterable[_Part], batch_size: int) -> Iterator[pa.RecordBatch]:
    """Record batches of at most ``batch_size`` rows from a stream of parts of at most that many.

    A part is never split (its arrays go to Arrow without a copy); small
    parts (short queues, a file's last rows) are joined up to ``batch_size``.
    """
    labels = _Labels(batch_size)
    pending: list[_Part] = []
    rows = 0
    for part in parts:
        n = part.rows
        if not n:
            continue
        if rows + n > batch_size:
            yield _record_batch(schema, pending, labels)
            pending, rows = [], 0
        pending.append(part)
        rows += n
    if rows:
        yield _record_batch(schema, pending, labels)


def _check_batch_size(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int of at least 1, not {batch_size!r}")
    return batch_size


class Batches:
    """An iterator of :class:`pyarrow.RecordBatch` with one :attr:`schema`.

    Batches hold ``batch_size`` rows each (the last one fewer). Files are
    read as the iteration reaches them, and their errors are raised then.
    :attr:`unreadable` lists ``(topic, queue id, reason)`` of the queues a
    store-wide read with ``errors="skip"`` left out.
    """

    def __init__(self, schema: pa.Schema, gen: Iterator[pa.RecordBatch]):
        self.schema = schema
        self.unreadable: list[tuple[str, int, str]] = []
        self._gen = gen

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self._gen

    def __next__(self) -> pa.RecordBatch:
        return next(self._gen)

    def read_all(self) -> pa.Table:
        """Every remaining batch as one table."""
        return pa.Table.from_batches(list(self._gen), schema=self.schema)

    def read_pandas(self) -> pandas.DataFrame:
        """Every remaining batch as one :class:`pandas.DataFrame`."""
        require_pandas()
        return self.read_all().to_pandas()

    def to_reader(self) -> pa.RecordBatchReader:
        """The remaining batches as a :class:`pyarrow.RecordBatchReader` (for Arrow datasets, DuckDB, Polars)."""
        return pa.RecordBatchReader.from_batches(self.schema, self._gen)


# -- consume queues -----------------------------------------------------------------------------


def _decode(raw: np.ndarray, fields: list[tuple[str, str, np.dtype]]) -> dict[str, np.ndarray]:
    """Each field of stored units as a contiguous native array, by spec name (one pass per field)."""
    return {spec: raw[spec].astype(dt) for spec, _col, dt in fields}


def _keep(columns: dict[str, np.ndarray], mask: np.ndarray | None) -> dict[str, np.ndarray]:
    if mask is None or mask.all():
        return columns
    index = np.flatnonzero(mask)
    return {k: v[index] for k, v in columns.items()}


def _cq_steps(cq: ConsumeQueue, start: int | None, stop: int | None, batch_size: int) -> list[ReadStep]:
    files = cq.files
    return files.plan(files.first_unit() if start is None else start,
                      cq.max_offset if stop is None else stop, batch_size)


def _cq_parts(cq: ConsumeQueue, steps: list[ReadStep], placeholders: bool, code: int | None,
              with_batch_size: bool = False) -> Iterator[_Part]:
    label = cq.topic.encode("utf-8")
    for step in steps:
        spec = _decode(cq.files.read_stored(step), _CQ_FIELDS)
        mask = None if placeholders else ~_IS_PLACEHOLDER(spec)
        if code is not None:
            match = spec["tags_code"] == code
            mask = match if mask is None else mask & match
        columns = {"cqOffset": np.arange(step.unit, step.unit + step.count, dtype=np.int64)}
        columns.update((col, spec[name]) for name, col, _dt in _CQ_FIELDS)
        columns = _keep(columns, mask)
        if with_batch_size:
            columns["batchSize"] = np.ones(len(columns["cqOffset"]), _BATCH_SIZE_TYPE)
        yield _Part(label, cq.queue_id, columns)


def consume_queue_batches(cq: ConsumeQueue, start: int | None = None, stop: int | None = None, *,
                          placeholders: bool = False, tag: str | None = None,
                          batch_size: int = DEFAULT_BATCH_SIZE) -> Batches:
    """The units of ``cq`` from logical offset ``start`` to ``stop - 1`` as record batches (:data:`CQ_SCHEMA`).

    The units :meth:`ConsumeQueue.units` yields, with the same arguments:
    from the first unit on disk to recovery's end by default, placeholders
    left out unless ``placeholders=True``, and with ``tag`` only units
    whose tags code is that tag's hash (rejected in ``SCHEDULE_TOPIC_XXXX``).
    """
    _check_batch_size(batch_size)
    code = cq._tag_filter(tag)

    def run() -> Iterator[pa.RecordBatch]:
        steps = _cq_steps(cq, start, stop, batch_size)
        yield from _batches(CQ_SCHEMA, _cq_parts(cq, steps, placeholders, code), batch_size)

    return Batches(CQ_SCHEMA, run())


def consume_queue_table(cq: ConsumeQueue, start: int | None = None, stop: int | None = None,
                        **options) -> pa.Table:
    """:func:`consume_queue_batches` as one table."""
    return consume_queue_batches(cq, start, stop, **options).read_all()


# -- batch consume queues -----------------------------------------------------------------------


def _bcq_steps(bcq: BatchConsumeQueue, start: int | None, stop: int | None, batch_size: int) -> list[ReadStep]:
    return bcq.files.plan(bcq.first_unit if start is None else start,
                          bcq.end_unit if stop is None else stop, batch_size)


def _bcq_parts(bcq: BatchConsumeQueue, steps: list[ReadStep], as_queue_units: bool = False) -> Iterator[_Part]:
    label = bcq.topic.encode("utf-8")
    for step in steps:
        spec = _decode(bcq.files.read_stored(step), _BCQ_FIELDS)
        if as_queue_units:  # QUEUE_UNITS_SCHEMA
            columns = {"cqOffset": spec["msg_base_offset"]}
            columns.update((col, spec[name]) for name, col, _dt in _CQ_FIELDS)
            columns["batchSize"] = spec["num_messages"]
        else:
            columns = {"unitIndex": np.arange(step.unit, step.unit + step.count, dtype=np.int64)}
            columns.update((col, spec[name]) for name, col, _dt in _BCQ_FIELDS)
        yield _Part(label, bcq.queue_id, columns)


def batch_consume_queue_batches(bcq: BatchConsumeQueue, start: int | None = None, stop: int | None = None, *,
                                batch_size: int = DEFAULT_BATCH_SIZE) -> Batches:
    """The units of ``bcq`` numbered ``start`` to ``stop - 1`` as record batches (:data:`BCQ_SCHEMA`).

    The units :meth:`BatchConsumeQueue.units` yields: by default from the
    first unit on disk to the first unit recovery rejects.
    """
    _check_batch_size(batch_size)

    def run() -> Iterator[pa.RecordBatch]:
        steps = _bcq_steps(bcq, start, stop, batch_size)
        yield from _batches(BCQ_SCHEMA, _bcq_parts(bcq, steps), batch_size)

    return Batches(BCQ_SCHEMA, run())


def batch_consume_queue_table(bcq: BatchConsumeQueue, start: int | None = None, stop: int | None = None,
                              **options) -> pa.Table:
    """:func:`batch_consume_queue_batches` as one table."""
    return batch_consume_queue_batches(bcq, start, stop, **options).read_all()


# -- index files --------------------------------------------------------------------------------


def _index_parts(f: IndexFile, batch_size: int, strict: bool) -> Iterator[_Part]:
    label = f.name.encode("utf-8")
    last = f.written_entries(strict=strict)
    begin = np.int64(f.header.begin_timestamp)
    slots = np.int32(f.num_hash_slots)
    for first in range(1, last + 1, batch_size):
        stop = min(last + 1, first + batch_size)
        spec = _decode(f.entry_array(first, stop), _ENTRY_FIELDS)
        columns = {"entry": np.arange(first, stop, dtype=np.int32),
                   # Java's %: the sign of the dividend (only a damaged entry has a negative hash)
                   "slot": np.fmod(spec["key_hash"], slots)}
        columns.update((col, spec[name]) for name, col, _dt in _ENTRY_FIELDS)
        # Java long arithmetic: wraps on overflow, as IndexEntry.time_ms does.
        with np.errstate(over="ignore"):
            columns["storeTime"] = begin + spec["time_diff"].astype(np.int64) * np.int64(1000)
        yield _Part(label, 0, columns)


def _index_files(files: IndexFile | IndexFiles | Iterable[IndexFile]) -> list[IndexFile]:
    if hasattr(files, "written_entries"):  # one index file
        return [files]
    return list(files)


def index_batches(files: IndexFile | IndexFiles | Iterable[IndexFile], *, strict: bool = True,
                  batch_size: int = DEFAULT_BATCH_SIZE) -> Batches:
    """Every written entry of ``files`` (in their order) as record batches (:data:`INDEX_SCHEMA`).

    Entries are read ``batch_size`` at a time with positioned reads, so a
    full-size 420 MB file never sits in memory. A header whose
    ``indexCount`` claims more entries than the file holds raises
    :class:`IndexRangeError`; with ``strict=False`` the entries the file
    holds are read.
    """
    _check_batch_size(batch_size)
    opened = _index_files(files)

    def parts() -> Iterator[_Part]:
        for f in opened:
            yield from _index_parts(f, batch_size, strict)

    return Batches(INDEX_SCHEMA, _batches(INDEX_SCHEMA, parts(), batch_size))


def index_table(files: IndexFile | IndexFiles | Iterable[IndexFile], *, strict: bool = True,
                batch_size: int = DEFAULT_BATCH_SIZE) -> pa.Table:
    """:func:`index_batches` as one table."""
    return index_batches(files, strict=strict, batch_size=batch_size).read_all()


def index_headers(files: IndexFile | IndexFiles | Iterable[IndexFile]) -> pa.Table:
    """One row per index file (:data:`INDEX_HEADER_SCHEMA`): name, size, counts and header."""
    rows = []
    for f in _index_files(files):
        h = f.header
        rows.append({"file": f.name, "fileSize": f.size, "numHashSlots": f.num_hash_slots,
                     "numIndex": f.num_index, "beginTimestamp": h.begin_timestamp,
                     "endTimestamp": h.end_timestamp, "beginPhyOffset": h.begin_phy_offset,
                     "endPhyOffset": h.end_phy_offset, "hashSlotCount": h.hash_slot_count,
                     "indexCount": h.index_count, "entries": h.num_entries})
    return pa.Table.from_pylist(rows, schema=INDEX_HEADER_SCHEMA)


__all__ = [
    "BCQ_SCHEMA", "CQ_SCHEMA", "DEFAULT_BATCH_SIZE", "INDEX_HEADER_SCHEMA", "INDEX_SCHEMA", "QUEUE_UNITS_SCHEMA",
    "Batches", "batch_consume_queue_batches", "batch_consume_queue_table", "consume_queue_batches",
    "consume_queue_table", "index_batches", "index_headers", "index_table",
]
