"""RocksDB consume queues (5.2.0+, ``storeType=defaultRocksDB``): units, offsets and the dispatch checkpoint.

The database lives in ``<store>/consumequeue/`` (beside the topic folders of
file consume queues when a broker keeps both), or, with 5.5's
``useSeparateStorePathForRocksdbCQ``, in ``<store>/consumequeue_rocksdb/``
(:data:`FOLDERS`). Its ``default`` column family
holds one unit per message under a key of topic, queue id and logical
offset; its ``offset`` column family the ``max`` (and, once corrected, the
``min``) unit of each queue and the dispatch checkpoint. Key and value
layouts come from the specs ``formats/rocketmq_rocksdb_cq_*.ksy`` through the
generated construct schemas and layout tables.

A :class:`RocksDBConsumeQueue` has the API of a file
:class:`~rmqformats.consumequeue.ConsumeQueue` (units, messages, min and max
offsets as the broker computes them), so the store facade, ``queue``,
``check`` and ``lag`` use either kind alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import construct
import numpy as np

from ..consumequeue import BATCH_UNITS, ConsumeQueue, CqUnit, Inconsistency
from ..errors import RocksDBError, UnitNotFoundError
from ..generated.construct import rocketmq_rocksdb_cq_key as _key_spec
from ..generated.construct import rocketmq_rocksdb_cq_offset_key as _offset_key_spec
from ..generated.layouts import rocketmq_rocksdb_cq_checkpoint as _checkpoint_layout
from ..generated.layouts import rocketmq_rocksdb_cq_offset as _offset_layout
from ..generated.layouts import rocketmq_rocksdb_cq_unit as _unit_layout
from ..queuefiles import QueueInfo
from ..units import unit_dtype
from .db import ReadOnlyDB, is_rocksdb

if TYPE_CHECKING:
    from ..storeview import StoreView

#: Column families of the consume-queue database.
CF_UNITS = "default"
CF_OFFSETS = "offset"
#: ``TopicValidator.RMQ_SYS_ROCKSDB_OFFSET_TOPIC``: the pseudo-topic of the dispatch checkpoint.
CHECKPOINT_TOPIC = "CHECKPOINT_TOPIC"
#: What :attr:`QueueInfo.kind` says for a queue of this database.
KIND = "rocksdb"

UNIT_DTYPE = unit_dtype(_unit_layout.UNIT_VALUE_RUNS, _unit_layout.UNIT_VALUE_SEQ)
OFFSET_DTYPE = unit_dtype(_offset_layout.OFFSET_VALUE_RUNS, _offset_layout.OFFSET_VALUE_SEQ)
CHECKPOINT_DTYPE = unit_dtype(_checkpoint_layout.CHECKPOINT_VALUE_RUNS, _checkpoint_layout.CHECKPOINT_VALUE_SEQ)
_OFS, _LEN, _TAGS, _TIME = _unit_layout.UNIT_VALUE_SEQ
_KEY = _key_spec.rocketmq_rocksdb_cq_key
_OFFSET_KEY = _offset_key_spec.rocketmq_rocksdb_cq_offset_key
#: Bytes of the logical offset at the end of a unit key (its last field).
_CQ_OFFSET_BYTES = 8


_INT64_MAX = (1 << 63) - 1


def unit_key(topic: str, queue_id: int, cq_offset: int) -> bytes:
    """The ``default`` column family key of a unit."""
    name = topic.encode("utf-8")
    return _KEY.build({"len_topic": len(name), "topic": topic, "queue_id": queue_id, "cq_offset": cq_offset})


def queue_prefix(topic: str, queue_id: int) -> bytes:
    """The bytes every unit key of ``topic`` / ``queue_id`` starts with."""
    return unit_key(topic, queue_id, 0)[:-_CQ_OFFSET_BYTES]


def offset_key(topic: str, queue_id: int, bound: str) -> bytes:
    """The ``offset`` column family key of a queue's ``max`` or ``min`` unit."""
    name = topic.encode("utf-8")
    return _OFFSET_KEY.build({"len_topic": len(name), "topic": topic, "bound": bound, "queue_id": queue_id})


class QueueBound(NamedTuple):
    """A ``max`` or ``min`` value of the ``offset`` column family."""

    commitlog_offset: int
    cq_offset: int


class RocksDBCqEntry(NamedTuple):
    """A unit with everything its value holds (the store time is not in file consume queues)."""

    cq_offset: int
    commitlog_offset: int
    size: int
    tags_code: int
    store_timestamp: int


def _parse_offset_key(db: ReadOnlyDB, key: bytes):
    try:
        return _OFFSET_KEY.parse(key)
    except (construct.ConstructError, UnicodeDecodeError) as exc:
        raise RocksDBError(db.path, f"not an offset key: {str(exc).splitlines()[-1]}",
                           column_family=CF_OFFSETS, key=key) from None


def _bound(db: ReadOnlyDB, key: bytes, value: bytes, what: str) -> QueueBound:
    if len(value) != OFFSET_DTYPE.itemsize:
        raise RocksDBError(db.path, f"value is {len(value)} bytes, expected {OFFSET_DTYPE.itemsize}",
                           column_family=CF_OFFSETS, key=key, key_text=what)
    row = np.frombuffer(value, OFFSET_DTYPE)[0]
    return QueueBound(int(row[_offset_layout.OFFSET_VALUE_SEQ[0]]), int(row[_offset_layout.OFFSET_VALUE_SEQ[1]]))


class RocksDBQueues:
    """The RocksDB consume-queue database of a store; a context manager.

    ``store`` (the :class:`~rmqformats.store.Store`) gives the commit log, for
    minimum offsets and resolving units.
    """

    def __init__(self, path: str | os.PathLike[str], store: StoreView | None = None):
        self.path = os.fspath(path)
        self.store = store
        self._db: ReadOnlyDB | None = None
        self._bounds: dict[tuple[str, int], dict[str, QueueBound]] | None = None
        self._checkpoint: int | None = None

    def __repr__(self) -> str:
        return f"RocksDBQueues({self.path!r})"

    @property
    def db(self) -> ReadOnlyDB:
        """The database, opened read-only on first use."""
        if self._db is None:
            self._db = ReadOnlyDB(self.path)
            for cf in (CF_UNITS, CF_OFFSETS):
                if not self._db.has_column_family(cf):
                    raise RocksDBError(self.path, f"no {cf!r} column family: not a RocksDB consume queue")
        return self._db

    def close(self) -> None:
        """Close the database."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> RocksDBQueues:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _load_bounds(self) -> dict[tuple[str, int], dict[str, QueueBound]]:
        if self._bounds is None:
            db = self.db
            bounds: dict[tuple[str, int], dict[str, QueueBound]] = {}
            for key, value in db.iterate(CF_OFFSETS):
                k = _parse_offset_key(db, key)
                what = f"{k.topic}/{k.queue_id} {k.bound}"
                if k.is_checkpoint:
                    if len(value) != CHECKPOINT_DTYPE.itemsize:
                        raise RocksDBError(db.path, f"value is {len(value)} bytes, expected "
                                           f"{CHECKPOINT_DTYPE.itemsize}", column_family=CF_OFFSETS,
                                           key=key, key_text="dispatch checkpoint")
                    self._checkpoint = int(np.frombuffer(value, CHECKPOINT_DTYPE)[0][0])
                    continue
                bounds.setdefault((k.topic, k.queue_id), {})[k.bound] = _bound(db, key, value, what)
            self._bounds = bounds
        return self._bounds

    def dispatch_checkpoint(self) -> int | None:
        """Commit-log offset up to which messages were dispatched (``CHECKPOINT_TOPIC``); ``None`` if absent."""
        self._load_bounds()
        return self._checkpoint

    def bounds(self, topic: str, queue_id: int) -> dict[str, QueueBound]:
        """The ``max`` and ``min`` values of a queue (either may be missing)."""
        return self._load_bounds().get((topic, queue_id), {})

    def topic_queues(self) -> list[tuple[str, int]]:
        """Every (topic, queue id) with a ``max`` or ``min`` value, sorted."""
        return sorted(self._load_bounds())

    def consume_queue(self, topic: str, queue_id: int) -> RocksDBConsumeQueue:
        """The consume queue of ``topic`` / ``queue_id`` (empty when the database has none)."""
        return RocksDBConsumeQueue(self, topic, queue_id)

    def damaged_keys(self, limit: int = 10) -> tuple[int, list[bytes]]:
        """Keys of the ``default`` column family that are no unit of a queue the ``offset`` column family
        names (a key of another layout, or a unit value of the wrong length): their count and the first
        ``limit``. The queues' own readers seek by prefix and never meet them."""
        prefixes = {queue_prefix(t, q) for t, q in self.topic_queues() if t != CHECKPOINT_TOPIC}
        width = UNIT_DTYPE.itemsize
        count, first = 0, list[bytes]()
        for keys, values in self.db.batches(CF_UNITS, b"", b"", None, 65536):
            for key, value in zip(keys, values):
                if key[:-_CQ_OFFSET_BYTES] in prefixes and len(value) == width:
                    continue
                count += 1
                if len(first) < limit:
                    first.append(key)
        return count, first

    def units_pointing_into(self, lo: int, hi: int) -> int:
        """Units of every queue (keys of a queue the ``offset`` column family names, values of a unit's
        length) whose message has bytes at a commit-log offset in ``[lo, hi)``; the database read in batches."""
        prefixes = {queue_prefix(t, q) for t, q in self.topic_queues() if t != CHECKPOINT_TOPIC}
        width = UNIT_DTYPE.itemsize
        count = 0
        for keys, values in self.db.batches(CF_UNITS, b"", b"", None, BATCH_UNITS):
            units = [v for k, v in zip(keys, values) if len(v) == width and k[:-_CQ_OFFSET_BYTES] in prefixes]
            if units:
                rows = np.frombuffer(b"".join(units), UNIT_DTYPE)
                ofs = rows[_OFS]
                count += int(np.count_nonzero((ofs >= lo) & (ofs < hi) & (rows[_LEN] > 0)))
        return count

    def queues(self) -> list[QueueInfo]:
        """A :class:`QueueInfo` (``kind="rocksdb"``) for every queue; unreadable ones carry the error."""
        out = []
        for topic, qid in self.topic_queues():
            cq = self.consume_queue(topic, qid)
            try:
                out.append(cq.info())
            except RocksDBError as exc:
                out.append(QueueInfo(topic, qid, 0, 0, 0, self.path, str(exc), KIND))
        return out


class _Location:
    """Where a RocksDB queue's units are, in the shape ``check`` and ``queue`` use for files."""

    def __init__(self, cq: RocksDBConsumeQueue):
        self._cq = cq

    @property
    def files(self) -> tuple[str, ...]:
        """The database folder when the queue has units, else nothing."""
        return (self._cq.folder,) if self._cq.bounds else ()

    @property
    def folder(self) -> str:
        """The database folder."""
        return self._cq.folder

    def first_unit(self) -> int:
        return self._cq.first_offset()

    def read(self, start: int, stop: int) -> np.ndarray:
        """The units from ``start`` to ``stop - 1`` present in the database, as numpy rows (spec field names)."""
        return self._cq.unit_array(start, stop)

    def file_of(self, unit: int) -> None:
        """No file holds a unit of the database (callers then name the folder)."""
        return None

    def where(self, unit: int) -> str:
        """The database, column family and key of a unit, for messages."""
        return f"{self._cq.folder} [{CF_UNITS}] {self._cq.topic}/{self._cq.queue_id}/{unit}"


class RocksDBConsumeQueue(ConsumeQueue):
    """The RocksDB consume queue of one topic queue, with the API of a file consume queue.

    ``max_offset`` is the broker's ``getMaxOffsetInQueue`` (the ``max`` unit's
    logical offset plus 1, 0 without one); ``min_offset`` its
    ``getMinOffsetInQueue``: the ``min`` value when it points at a commit-log
    offset still on disk, else the first unit whose commit-log offset is
    (``correctMinCqOffset``, computed here without writing it back).
    """

    kind = KIND

    def __init__(self, queues: RocksDBQueues, topic: str, queue_id: int):
        self.queues = queues
        self.folder = queues.path
        self.topic = topic
        self.queue_id = queue_id
        self.store = queues.store
        self.files = _Location(self)  # type: ignore[assignment]
        self._min: int | None = None
        self._prefix = queue_prefix(topic, queue_id)

    def __repr__(self) -> str:
        return f"RocksDBConsumeQueue({self.topic!r}, {self.queue_id}, {self.folder!r})"

    @property
    def bounds(self) -> dict[str, QueueBound]:
        return self.queues.bounds(self.topic, self.queue_id)

    @property
    def max_offset(self) -> int:
        top = self.bounds.get("max")
        return top.cq_offset + 1 if top is not None else 0

    def _phy_min(self) -> int:
        segments = self.store.commitlog.segments if self.store is not None else ()
        return segments[0].start_offset if segments else 0

    def _value(self, cq_offset: int) -> np.void | None:
        """The unit at ``cq_offset`` as one row, or ``None`` when it has no key."""
        key = unit_key(self.topic, self.queue_id, cq_offset)
        value = self.queues.db.get(CF_UNITS, key)
        if value is None:
            return None
        if len(value) != UNIT_DTYPE.itemsize:
            raise RocksDBError(self.folder, f"value is {len(value)} bytes, expected {UNIT_DTYPE.itemsize}",
                               column_family=CF_UNITS, key=key, key_text=f"{self.topic}/{self.queue_id}/{cq_offset}")
        return np.frombuffer(value, UNIT_DTYPE)[0]

    @property
    def min_offset(self) -> int:
        if self._min is None:
            self._min = self._compute_min()
        return self._min

    def _compute_min(self) -> int:
        bounds = self.bounds
        phy_min = self._phy_min()
        low = bounds.get("min")
        if low is not None and low.commitlog_offset >= phy_min:
            return low.cq_offset
        start = low.cq_offset if low is not None else 0
        top = bounds.get("max")
        if top is None:
            return 0
        if top.commitlog_offset < phy_min:
            return top.cq_offset + 1
        # RocksDBConsumeQueueTable.binarySearchInCQ(min=true): the first unit at or past phy_min.
        lo, hi, found = start, top.cq_offset, -1
        while lo <= hi:
            mid = lo + ((hi - lo) >> 1)
            row = self._value(mid)
            if row is None:
                lo = mid + 1
                continue
            phy = int(row[_OFS])
            if phy == phy_min:
                found = mid
                break
            if phy > phy_min:
                hi, found = mid - 1, mid
            else:
                lo = mid + 1
        return found if found >= 0 else start

    def first_offset(self) -> int:
        """Logical offset of the first unit in the database (0 when it has none)."""
        for key, _ in self.queues.db.iterate(CF_UNITS, self._prefix):
            if key.startswith(self._prefix) and len(key) == len(self._prefix) + _CQ_OFFSET_BYTES:
                return int.from_bytes(key[-_CQ_OFFSET_BYTES:], "big", signed=True)
            break
        return 0

    def info(self) -> QueueInfo:
        # No queue files: the units are records of the database.
        return QueueInfo(self.topic, self.queue_id, self.min_offset, self.max_offset, 0, self.folder, None, KIND)

    def _rows(self, start: int, stop: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(logical offsets, unit rows) of the units from ``start`` to ``stop - 1``, in batches.

        Keys of one queue differ only in their last 8 bytes, the big-endian
        offset, so key order is offset order and ``key < stop key`` is the
        offset test; lengths are checked per batch with numpy.
        """
        prefix = self._prefix
        if start >= stop or stop <= 0 or start > _INT64_MAX:
            return
        # Keys whose length is not the unit key's still stop at the stop key or fail in _batch.
        # A ``max`` value of 2^63-1 makes ``stop`` 2^63, which no key holds: the keys of negative
        # offsets (sign bit set) are the first past every offset a key can hold.
        stop_key = unit_key(self.topic, self.queue_id, stop) if stop <= _INT64_MAX else prefix + b"\x80" + bytes(7)
        for keys, values in self.queues.db.batches(CF_UNITS, unit_key(self.topic, self.queue_id, max(start, 0)),
                                                   prefix, stop_key, BATCH_UNITS):
            yield self._batch(keys, values)

    def _batch(self, keys: list[bytes], values: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        expected = len(self._prefix) + _CQ_OFFSET_BYTES
        joined_keys = b"".join(keys)
        joined = b"".join(values)
        size = UNIT_DTYPE.itemsize
        if len(joined_keys) != expected * len(keys) or len(joined) != size * len(values):
            for key, value in zip(keys, values):
                if len(key) != expected:
                    raise RocksDBError(self.folder, f"key is {len(key)} bytes, expected {expected}",
                                       column_family=CF_UNITS, key=key, key_text=f"{self.topic}/{self.queue_id}")
                if len(value) != size:
                    offset = int.from_bytes(key[-_CQ_OFFSET_BYTES:], "big", signed=True)
                    raise RocksDBError(self.folder, f"value is {len(value)} bytes, expected {size}",
                                       column_family=CF_UNITS, key=key,
                                       key_text=f"{self.topic}/{self.queue_id}/{offset}")
        offsets = np.frombuffer(joined_keys, np.uint8).reshape(len(keys), expected)[:, -_CQ_OFFSET_BYTES:]
        return offsets.copy().view(">i8").reshape(-1).astype(np.int64), np.frombuffer(joined, UNIT_DTYPE)

    def entries(self, start: int | None = None, stop: int | None = None) -> Iterator[RocksDBCqEntry]:
        """Every unit from ``start`` to ``stop - 1`` with its store time."""
        stop = self.max_offset if stop is None else min(stop, self.max_offset)
        for offsets, rows in self._rows(0 if start is None else start, stop):
            for o, p, s, t, ts in zip(offsets.tolist(), *(rows[n].tolist() for n in (_OFS, _LEN, _TAGS, _TIME))):
                yield RocksDBCqEntry(o, p, s, t, ts)

    def unit_array(self, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Units ``start`` to ``stop - 1`` as one numpy structured array (the value layout)."""
        stop = self.max_offset if stop is None else min(stop, self.max_offset)
        parts = [rows for _, rows in self._rows(0 if start is None else start, stop)]
        return np.concatenate(parts) if parts else np.zeros(0, UNIT_DTYPE)

    def unit_chunks(self, start: int | None = None, stop: int | None = None, *,
                    tag: str | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        code = self._tag_filter(tag)
        stop = self.max_offset if stop is None else min(stop, self.max_offset)
        for offsets, rows in self._rows(0 if start is None else start, stop):
            if code is not None:
                keep = rows[_TAGS] == code
                offsets, rows = offsets[keep], rows[keep]
            if len(offsets):
                yield offsets, rows[_OFS], rows[_LEN], rows[_TAGS]

    def missing_units(self, max_problems: int = 1000) -> list[Inconsistency]:
        """Offsets from ``min_offset`` to ``max_offset - 1`` without a key, one problem per run.

        The broker's range reads (``RocksDBConsumeQueueTable.rangeQuery``) stop
        at the first missing unit, so a consumer gets nothing past one. The
        problem's unit is the first missing offset (commit-log offset -1).
        """
        out: list[Inconsistency] = []
        expected, stop = self.min_offset, self.max_offset

        def report(first: int, end: int) -> None:
            out.append(Inconsistency(self.topic, self.queue_id, first, self.files.where(first),
                                     CqUnit(first, -1, 0, 0), "unit", f"units {first}..{end - 1}",
                                     "no key (the broker's range reads stop here)"))

        for offsets, _ in self._rows(expected, stop):
            for o in offsets.tolist():
                if o != expected:
                    report(expected, o)
                    if len(out) >= max_problems:
                        return out
                expected = o + 1
        if expected < stop:
            report(expected, stop)
        return out

    def unit(self, cq_offset: int) -> CqUnit:
        row = self._value(cq_offset) if 0 <= cq_offset < self.max_offset else None
        if row is None:
            raise UnitNotFoundError(self.folder, None, f"no unit {self.topic}/{self.queue_id}/{cq_offset} in the "
                                                       f"RocksDB consume queue (max offset {self.max_offset})")
        return CqUnit(cq_offset, int(row[_OFS]), int(row[_LEN]), int(row[_TAGS]))

    def batches(self, *args, **options):
        raise NotImplementedError("columnar batches are read from file consume queues only")


#: Folders under the store root that hold the RocksDB consume queue, first found wins:
#: ``StorePathConfigHelper.getStorePathRocksDBConsumeQueue`` with ``useSeparateStorePathForRocksdbCQ``
#: (5.5.0: ``consumequeue_rocksdb``; ``consumequeue_r`` is the name the change was first written with),
#: else ``consumequeue/`` itself (5.2.0 ``storeType=defaultRocksDB``; 5.3.1 ``rocksdbCQDoubleWriteEnable``
#: beside the file queues).
FOLDERS = ("consumequeue_rocksdb", "consumequeue_r", "consumequeue")


def rocksdb_queues_paths(store_root: str) -> list[str]:
    """Every folder of :data:`FOLDERS` under ``store_root`` that holds a RocksDB database."""
    return [p for p in (os.path.join(store_root, name) for name in FOLDERS) if is_rocksdb(p)]


def rocksdb_queues_path(store_root: str) -> str | None:
    """The folder the broker reads its RocksDB consume queue from (see :data:`FOLDERS`), else ``None``."""
    found = rocksdb_queues_paths(store_root)
    return found[0] if found else None


def summary(queues: RocksDBQueues, infos: list[QueueInfo]) -> dict:
    """What ``inspect`` shows of a RocksDB consume queue: queues, units, dispatch checkpoint."""
    mine = [q for q in infos if q.kind == KIND]
    out: dict = {"path": queues.path, "queues": len(mine), "units": sum(q.count for q in mine)}
    try:
        out["columnFamilies"] = list(queues.db.column_families)
        out["dispatchedTo"] = queues.dispatch_checkpoint()
    except RocksDBError as exc:
        out["error"] = exc.whole()
    return out
