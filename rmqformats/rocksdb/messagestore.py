"""The RocksDB message store of a 5.4+ broker (``<store>/rocksdbstore/``): timer, transaction and index records.

RIP-82 (``MessageRocksDBStorage``) keeps three column families in one
database: ``timer`` (scheduled messages of the RocksDB timer engine,
``timerRocksDBEnable``), ``trans`` (open transactional half messages,
``transRocksDBEnable``) and ``default`` (the message index,
``indexRocksDBEnable``). Every record points at a message of the commit
log; a few ASCII-named keys hold the engines' progress. Key and value
layouts come from ``formats/rocketmq_rocksdb_{timer,trans,index}_*.ksy`` and
``rocketmq_rocksdb_message_mark.ksy`` through the generated construct
schemas and layout tables.

The database is read offline and read-only (:class:`~.db.ReadOnlyDB`): no
lock is taken and nothing is written in its folder. When a running broker
holds its ``LOCK`` (:func:`~.db.held_lock`), the files are copied first and
the copy is read; :attr:`RocksDBMessageStore.copied` says so, and what the
commands print says so too.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

import construct
import numpy as np

from ..errors import RocksDBError
from ..generated.construct import rocketmq_rocksdb_index_key as _index_key_spec
from ..generated.construct import rocketmq_rocksdb_timer_key as _timer_key_spec
from ..generated.construct import rocketmq_rocksdb_trans_key as _trans_key_spec
from ..generated.layouts import rocketmq_rocksdb_index_key as _index_key_layout
from ..generated.layouts import rocketmq_rocksdb_index_value as _index_layout
from ..generated.layouts import rocketmq_rocksdb_message_mark as _mark_layout
from ..generated.layouts import rocketmq_rocksdb_timer_key as _timer_key_layout
from ..generated.layouts import rocketmq_rocksdb_timer_value as _timer_layout
from ..generated.layouts import rocketmq_rocksdb_trans_key as _trans_key_layout
from ..generated.layouts import rocketmq_rocksdb_trans_value as _trans_layout
from ..units import unit_dtype
from .db import ReadOnlyDB, held_lock, is_rocksdb

#: ``MessageRocksDBStorage.ROCKSDB_MESSAGE_DIRECTORY``: the database's folder under the store root.
FOLDER = "rocksdbstore"
#: Column families: the index (``default``), ``TIMER_COLUMN_FAMILY``, ``TRANS_COLUMN_FAMILY``.
CF_INDEX = "default"
CF_TIMER = "timer"
CF_TRANS = "trans"
#: Progress keys (``SYS_TOPIC_SCAN_OFFSET_CHECK_POINT``, ``TIMELINE_CHECK_POINT``, ``LAST_OFFSET_PY``,
#: ``LAST_STORE_TIMESTAMP``); their values are rocketmq_rocksdb_message_mark.
TIMER_SCAN_OFFSET = b"sys_topic_scan_offset_checkpoint"
TIMER_TIMELINE = b"timeline_checkpoint"
LAST_OFFSET_PY = b"lastOffsetPy"
LAST_STORE_TIMESTAMP = b"lastStoreTimeStamp"
_MARKS = {CF_TIMER: (TIMER_SCAN_OFFSET, TIMER_TIMELINE), CF_TRANS: (LAST_OFFSET_PY,),
          CF_INDEX: (LAST_OFFSET_PY, LAST_STORE_TIMESTAMP)}
#: ``MessageConst.INDEX_KEY_TYPE``, ``INDEX_TAG_TYPE``, ``INDEX_UNIQUE_TYPE``.
INDEX_TYPES = ("K", "T", "U")
#: Records read per batch.
BATCH = 65536

TIMER_DTYPE = unit_dtype(_timer_layout.TIMER_VALUE_RUNS, _timer_layout.TIMER_VALUE_SEQ)
TRANS_DTYPE = unit_dtype(_trans_layout.TRANS_VALUE_RUNS, _trans_layout.TRANS_VALUE_SEQ)
INDEX_DTYPE = unit_dtype(_index_layout.INDEX_VALUE_RUNS, _index_layout.INDEX_VALUE_SEQ)
MARK_DTYPE = unit_dtype(_mark_layout.MARK_VALUE_RUNS, _mark_layout.MARK_VALUE_SEQ)
_TIMER_KEY = _timer_key_spec.rocketmq_rocksdb_timer_key
_TRANS_KEY = _trans_key_spec.rocketmq_rocksdb_trans_key
_INDEX_KEY = _index_key_spec.rocketmq_rocksdb_index_key
# The keys' fixed-width fields (the first, and the index key's last), from the specs' layouts: decoded
# with struct per key, as parsing every key with construct costs ~30 µs; a key they do not fit is
# parsed with construct, whose error names the field.
_TIMER_HEAD = struct.Struct(_timer_key_layout.ROCKETMQ_ROCKSDB_TIMER_KEY_RUNS[0][1])
_TRANS_HEAD = struct.Struct(_trans_key_layout.ROCKETMQ_ROCKSDB_TRANS_KEY_RUNS[0][1])
_INDEX_HEAD = struct.Struct(_index_key_layout.ROCKETMQ_ROCKSDB_INDEX_KEY_RUNS[0][1])
_INDEX_TAIL = struct.Struct(_index_key_layout.ROCKETMQ_ROCKSDB_INDEX_KEY_RUNS[1][1])
#: The separator after the offset of a transaction key and after the hour of an index key (``KEY_SPLIT``).
_SEP = _TRANS_KEY.build({"ofs_commitlog": 0, "topic_and_uniq_key": ""})[_TRANS_HEAD.size:]


class TimerEntry(NamedTuple):
    """A scheduled message of the RocksDB timer engine."""

    delivery_time: int
    uniq_key: str
    commitlog_offset: int
    size: int


class TransEntry(NamedTuple):
    """An open transactional half message."""

    commitlog_offset: int
    topic: str
    uniq_key: str
    check_times: int
    size: int


class IndexEntry(NamedTuple):
    """A message index entry: ``key`` is one of KEYS (type ``K``), the TAGS (``T``) or the UNIQ_KEY (``U``)."""

    store_hour: int
    topic: str
    index_type: str
    key: str
    uniq_key: str
    commitlog_offset: int
    store_timestamp: int


def message_store_path(store_root: str) -> str | None:
    """``<root>/rocksdbstore`` when it holds a RocksDB database, else ``None``."""
    path = os.path.join(store_root, FOLDER)
    return path if is_rocksdb(path) else None


class RocksDBMessageStore:
    """The RocksDB message store of a store root; a context manager.

    ``copy`` ``None`` (default) reads a copy when a running broker holds the
    database's ``LOCK``, else the files in place; ``True`` / ``False`` force
    either.
    """

    def __init__(self, path: str | os.PathLike[str], *, copy: bool | None = None):
        self.path = os.path.abspath(os.fspath(path))
        self._copy = copy
        self._db: ReadOnlyDB | None = None
        #: Process id holding the ``LOCK`` when the database was opened (0: unknown), else ``None``.
        self.locked_by: int | None = None
        #: The database was read from a copy (see the module docstring).
        self.copied = False

    def __repr__(self) -> str:
        return f"RocksDBMessageStore({self.path!r})"

    @property
    def db(self) -> ReadOnlyDB:
        """The database, opened read-only on first use (from a copy when a broker holds the lock)."""
        if self._db is None:
            self.locked_by = held_lock(self.path)
            self.copied = self._copy if self._copy is not None else self.locked_by is not None
            self._db = ReadOnlyDB(self.path, copy=self.copied)
        return self._db

    def close(self) -> None:
        """Close the database (and remove a copy)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> RocksDBMessageStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def has(self, column_family: str) -> bool:
        """The database has ``column_family`` (a broker writes all three, used or not)."""
        return self.db.has_column_family(column_family)

    # -- progress marks -------------------------------------------------------------------------

    def marks(self, column_family: str) -> dict[str, int]:
        """The progress keys of ``column_family`` present, by name, with their values."""
        if not self.has(column_family):
            return {}
        out = {}
        for name in _MARKS.get(column_family, ()):
            value = self.db.get(column_family, name)
            if value is None:
                continue
            if len(value) != MARK_DTYPE.itemsize:
                raise RocksDBError(self.path, f"value is {len(value)} bytes, expected {MARK_DTYPE.itemsize}",
                                   column_family=column_family, key=name, key_text=name.decode())
            out[name.decode()] = int(np.frombuffer(value, MARK_DTYPE)[0][0])
        return out

    def _records(self, column_family: str, start: bytes = b"",
                 stop: bytes | None = None) -> Iterator[tuple[list[bytes], list[bytes]]]:
        """Keys and values of the records of ``column_family`` in batches, progress keys left out."""
        if not self.has(column_family):
            return
        skip = set(_MARKS.get(column_family, ()))
        for keys, values in self.db.batches(column_family, start, b"", stop, BATCH):
            if skip.intersection(keys):
                pairs = [(k, v) for k, v in zip(keys, values) if k not in skip]
                keys, values = [k for k, _ in pairs], [v for _, v in pairs]
            if keys:
                yield keys, values

    def _values(self, column_family: str, keys: list[bytes], values: list[bytes], dtype: np.dtype,
                text) -> np.ndarray:
        joined = b"".join(values)
        if len(joined) != dtype.itemsize * len(values):
            for key, value in zip(keys, values):
                if len(value) != dtype.itemsize:
                    raise RocksDBError(self.path, f"value is {len(value)} bytes, expected {dtype.itemsize}",
                                       column_family=column_family, key=key, key_text=text(key))
        return np.frombuffer(joined, dtype)

    def _parse(self, spec, column_family: str, key: bytes):
        try:
            return spec.parse(key)
        except (construct.ConstructError, UnicodeDecodeError) as exc:
            raise RocksDBError(self.path, f"not a record key: {str(exc).splitlines()[-1]}",
                               column_family=column_family, key=key) from None

    # -- timer ----------------------------------------------------------------------------------

    def timer_entries(self, *, start_time: int | None = None, stop_time: int | None = None) -> Iterator[TimerEntry]:
        """Scheduled messages in delivery order, from ``start_time`` to before ``stop_time`` (ms)."""
        start = b"" if start_time is None else int(start_time).to_bytes(8, "big", signed=True)
        stop = None if stop_time is None else int(stop_time).to_bytes(8, "big", signed=True)
        for keys, values in self._records(CF_TIMER, start, stop):
            rows = self._values(CF_TIMER, keys, values, TIMER_DTYPE, lambda k: None)
            head = _TIMER_HEAD.size
            for key, (size, offset) in zip(keys, rows.tolist()):
                when = _TIMER_HEAD.unpack_from(key)[0] if len(key) >= head else 0
                try:
                    uniq = key[head:].decode("utf-8") if when >= 1 else None
                except UnicodeDecodeError:
                    uniq = None
                if uniq is None:  # what the spec rejects: construct says why
                    k = self._parse(_TIMER_KEY, CF_TIMER, key)
                    when, uniq = k.delivery_time, k.uniq_key
                yield TimerEntry(when, uniq, offset, size)

    def timer_count(self) -> int:
        """How many scheduled messages the ``timer`` column family holds (their values' sizes checked)."""
        return sum(len(self._values(CF_TIMER, keys, values, TIMER_DTYPE, lambda k: None))
                   for keys, values in self._records(CF_TIMER))

    # -- transactions ---------------------------------------------------------------------------

    def trans_entries(self) -> Iterator[TransEntry]:
        """Open transactional half messages, in commit-log order."""
        for keys, values in self._records(CF_TRANS):
            rows = self._values(CF_TRANS, keys, values, TRANS_DTYPE, lambda k: None)
            head, sep_end = _TRANS_HEAD.size, _TRANS_HEAD.size + len(_SEP)
            for key, (checks, size) in zip(keys, rows.tolist()):
                try:
                    if key[head:sep_end] != _SEP:
                        raise ValueError
                    offset, text = _TRANS_HEAD.unpack_from(key)[0], key[sep_end:].decode("utf-8")
                except (ValueError, struct.error):  # what the spec rejects: construct says why
                    k = self._parse(_TRANS_KEY, CF_TRANS, key)
                    offset, text = k.ofs_commitlog, k.topic_and_uniq_key
                topic, sep, uniq = text.partition("@")
                if not sep or not topic or not uniq or "@" in uniq:
                    raise RocksDBError(self.path, "not a record key: the text after the offset is not "
                                       "topic@uniqKey", column_family=CF_TRANS, key=key)
                yield TransEntry(offset, topic, uniq, checks, size)

    def trans_count(self) -> int:
        """How many open half messages the ``trans`` column family holds."""
        return sum(len(self._values(CF_TRANS, keys, values, TRANS_DTYPE, lambda k: None))
                   for keys, values in self._records(CF_TRANS))

    # -- index ----------------------------------------------------------------------------------

    def index_entries(self) -> Iterator[IndexEntry]:
        """Message index entries, by hour, topic, type and key."""
        for keys, values in self._records(CF_INDEX):
            rows = self._values(CF_INDEX, keys, values, INDEX_DTYPE, lambda k: None)
            head, sep_end, tail = _INDEX_HEAD.size, _INDEX_HEAD.size + len(_SEP), _INDEX_TAIL.size
            for key, (stamp,) in zip(keys, rows.tolist()):
                try:
                    if len(key) < sep_end + tail or key[head:sep_end] != _SEP:
                        raise ValueError
                    hour, middle = _INDEX_HEAD.unpack_from(key)[0], key[sep_end:-tail].decode("utf-8")
                    offset = _INDEX_TAIL.unpack_from(key, len(key) - tail)[0]
                except ValueError:  # what the spec rejects (UnicodeDecodeError is one): construct says why
                    k = self._parse(_INDEX_KEY, CF_INDEX, key)
                    hour, middle, offset = k.store_hour, k.middle, k.ofs_commitlog
                parts = middle.split("@")
                # topic@type@key@uniqKey@ (K, T) or topic@U@uniqKey@: a trailing empty part.
                if len(parts) == 5 and parts[1] in ("K", "T") and parts[4] == "":
                    yield IndexEntry(hour, parts[0], parts[1], parts[2], parts[3], offset, stamp)
                elif len(parts) == 4 and parts[1] == "U" and parts[3] == "":
                    yield IndexEntry(hour, parts[0], "U", parts[2], parts[2], offset, stamp)
                else:
                    raise RocksDBError(self.path, "not an index key: the text between hour and offset is "
                                       "neither topic@K|T@key@uniqKey@ nor topic@U@uniqKey@",
                                       column_family=CF_INDEX, key=key)

    def index_count(self) -> int:
        """How many index entries the ``default`` column family holds."""
        return sum(len(self._values(CF_INDEX, keys, values, INDEX_DTYPE, lambda k: None))
                   for keys, values in self._records(CF_INDEX))

    # -- summary --------------------------------------------------------------------------------

    def summary(self) -> dict:
        """What ``inspect`` shows: column families, record counts, progress marks, and how it was read."""
        out: dict = {"path": self.path}
        try:
            db = self.db
            out["columnFamilies"] = list(db.column_families)
            out["lockedByPid"] = self.locked_by
            out["readFromCopy"] = self.copied
            for name, cf, count in (("timer", CF_TIMER, self.timer_count), ("trans", CF_TRANS, self.trans_count),
                                    ("index", CF_INDEX, self.index_count)):
                if self.has(cf):
                    out[name] = {"records": count(), **self.marks(cf)}
        except RocksDBError as exc:
            out["error"] = exc.whole()
        return out
