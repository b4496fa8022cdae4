"""Write RocksDB consume queues and RocksDB configs as a 5.2+ broker lays them out, for tests.

No RocketMQ RocksDB build is at hand, so the databases are written with the
same binding the reader uses (``rocksdict``), with keys and values built by
the construct schemas generated from ``formats/rocketmq_rocksdb_*.ksy``,
following ``RocksDBConsumeQueueTable``, ``RocksDBConsumeQueueOffsetTable``,
the v1 ``RocksDB*ConfigManager`` classes and the v2 ``*ManagerV2`` classes.

:func:`rocksdb_twin` turns a copy of a file store into its RocksDB twin: the
units of every file consume queue go into a RocksDB consume queue (with the
store time of the message each points at, as dispatch writes it), and the
topic folders are removed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from typing import Any

from ..generated.construct import rocketmq_rocksdb_config_data_version as _dv_spec
from ..generated.construct import rocketmq_rocksdb_config_key as _cfg_key_spec
from ..generated.construct import rocketmq_rocksdb_config_offset as _cfg_offset_spec
from ..generated.construct import rocketmq_rocksdb_config_record as _cfg_record_spec
from ..generated.construct import rocketmq_rocksdb_cq_checkpoint as _checkpoint_spec
from ..generated.construct import rocketmq_rocksdb_cq_offset as _offset_spec
from ..generated.construct import rocketmq_rocksdb_cq_unit as _unit_spec
from ..rocksdb.consumequeue import CF_OFFSETS, CHECKPOINT_TOPIC, offset_key, unit_key


def _open_writable(path: str, column_families: Iterable[str] = (), *, plain_writes: bool = False):
    """A database at ``path`` to write; with ``plain_writes`` (only ``db[key] = value`` and column families'
    item assignment are used), one that works in a forked child too (:class:`_Ingesting`)."""
    from rocksdict import Options, Rdict

    from ..rocksdb.db import background_threads_lost, note_open
    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.create_missing_column_families(True)
    lost = plain_writes and background_threads_lost()
    if lost:
        opts.set_disable_auto_compactions(True)
    db = Rdict(path, options=opts, column_families={n: Options(raw_mode=True) for n in column_families})
    note_open()
    return _Ingesting(db) if lost else db


class _Ingesting:
    """A database written through table files that it ingests, never through its memtables.

    For a process forked from one that had opened a RocksDB database (see
    :func:`rmqformats.rocksdb.db.background_threads_lost`): RocksDB's background
    threads are not in it, so a memtable flush (at close too) would wait for them
    forever. Writes are kept in bounded runs, each sorted (the last value of a key
    wins, as in a write to the database) and ingested as one table file.
    """

    #: Pairs held before a run is written and ingested.
    RUN = 1 << 16

    def __init__(self, db):
        self._db = db
        self._runs: dict[str, dict[bytes, bytes]] = {}

    def get_column_family(self, name: str) -> "_IngestingColumn":
        return _IngestingColumn(self, name)

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self.put("default", key, value)

    def put(self, column_family: str, key: bytes, value: bytes) -> None:
        run = self._runs.setdefault(column_family, {})
        run[bytes(key)] = bytes(value)
        if len(run) >= self.RUN:
            self._ingest(column_family)

    def _ingest(self, column_family: str) -> None:
        from ..rocksdb.db import ingest_pairs
        ingest_pairs(self._db, column_family, self._runs.pop(column_family, {}).items())

    def close(self) -> None:
        for column_family in list(self._runs):
            self._ingest(column_family)
        self._db.close()


class _IngestingColumn:
    """One column family of an :class:`_Ingesting` database."""

    def __init__(self, db: _Ingesting, name: str):
        self._db, self._name = db, name

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self._db.put(self._name, key, value)


def _close(db, path: str) -> None:
    from rocksdict import Rdict
    if not isinstance(db, _Ingesting):
        for name in Rdict.list_cf(path):  # every column family into table files, as a clean shutdown leaves them
            (db if name == "default" else db.get_column_family(name)).flush()
    db.close()
    # The binding's own file; a broker's database has none.
    try:
        os.remove(os.path.join(path, "rocksdict-config.json"))
    except FileNotFoundError:
        pass


def unit_value(commitlog_offset: int, size: int, tags_code: int, store_timestamp: int) -> bytes:
    """A 28-byte ``default`` column family value."""
    return _unit_spec.rocketmq_rocksdb_cq_unit.build({"unit": {
        "ofs_commitlog": commitlog_offset, "len_message": size, "tags_code": tags_code,
        "store_timestamp": store_timestamp}})


def offset_value(commitlog_offset: int, cq_offset: int) -> bytes:
    """A 16-byte ``offset`` column family value."""
    return _offset_spec.rocketmq_rocksdb_cq_offset.build({"offset": {"ofs_commitlog": commitlog_offset,
                                                                     "cq_offset": cq_offset}})


def write_rocksdb_queues(path: str, queues: Mapping[tuple[str, int], list[tuple[int, int, int, int, int]]], *,
                         write_min: bool = False) -> None:
    """Write a RocksDB consume queue at ``path``.

    ``queues`` maps (topic, queue id) to units ``(cq_offset, commitlog_offset,
    size, tags_code, store_timestamp)`` in offset order. Each queue gets its
    ``max`` value and, with ``write_min``, the ``min`` value the broker writes
    once it has corrected the minimum (its first unit); the dispatch
    checkpoint is the end of the furthest message.
    """
    from rocksdict import WriteBatch
    db = _open_writable(path, [CF_OFFSETS])
    offsets = db.get_column_family_handle(CF_OFFSETS)
    checkpoint = 0
    for (topic, qid), units in queues.items():
        if not units:
            continue
        # One batch per queue, as the broker writes units and their max value together.
        batch = WriteBatch(raw_mode=True)
        for cq, phy, size, tags, ts in units:
            batch.put(unit_key(topic, qid, cq), unit_value(phy, size, tags, ts))
            checkpoint = max(checkpoint, phy + size)
        last, first = units[-1], units[0]
        batch.put(offset_key(topic, qid, "max"), offset_value(last[1], last[0]), offsets)
        if write_min:
            batch.put(offset_key(topic, qid, "min"), offset_value(first[1], first[0]), offsets)
        db.write(batch)
    batch = WriteBatch(raw_mode=True)
    batch.put(offset_key(CHECKPOINT_TOPIC, 0, "max"), _checkpoint_spec.rocketmq_rocksdb_cq_checkpoint.build(
        {"checkpoint": {"ofs_max_phy": checkpoint}}), offsets)
    db.write(batch)
    _close(db, path)


def rocksdb_twin(store_root: str, *, write_min: bool = False) -> None:
    """Replace the file consume queues of the store at ``store_root`` (a copy!) by a RocksDB consume queue."""
    from ..store import open_store
    store = open_store(store_root)
    queues: dict[tuple[str, int], list[tuple[int, int, int, int, int]]] = {}
    for info in store.queues():
        cq = store.consume_queue(info.topic, info.queue_id, kind="file")
        rows = []
        for u in cq.units():
            resolved = cq.resolve(u)
            ts = resolved.message.store_timestamp if resolved.message is not None else 0
            rows.append((u.cq_offset, u.commitlog_offset, u.size, u.tags_code, ts))
        queues[(info.topic, info.queue_id)] = rows
    parent = store.path("consumequeue")
    shutil.rmtree(parent)
    os.makedirs(parent)
    write_rocksdb_queues(parent, queues, write_min=write_min)


# -- configs ------------------------------------------------------------------------------------

def _browser_compatible(value: Any) -> bytes:
    """JSON as fastjson's ``BrowserCompatible`` writes it: compact, non-ASCII escaped, integer map keys bare."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text.encode("ascii")


def _offset_wrapper(offsets: Mapping[int, int]) -> bytes:
    body = ",".join(f"{int(q)}:{int(o)}" for q, o in sorted(offsets.items()))
    return ('{"offsetTable":{' + body + "}}").encode("ascii")


def write_config_v1(config_dir: str, *, topics: Mapping[str, Any] | None = None,
                    groups: Mapping[str, Any] | None = None, offsets: Mapping[str, Mapping[int, int]] | None = None,
                    data_versions: Mapping[str, Mapping[str, Any]] | None = None,
                    forbidden: Mapping[str, Mapping[str, int]] | None = None) -> None:
    """Write the v1 databases ``config/topics/``, ``subscriptionGroups/``, ``consumerOffsets/``.

    ``topics`` / ``groups`` map names to the JSON of their beans,
    ``offsets`` ``topic@group`` to {queue id: offset}; ``data_versions`` maps
    a database name to its ``DataVersion`` JSON (the 5.3.1+ ``kvDataVersion``
    column family) and ``forbidden`` a group to its forbidden map (5.3.1+).
    """
    from ..rocksdb.config import CF_DATA_VERSION, CF_FORBIDDEN, DATA_VERSION_KEY
    tables = {"topics": {k: _browser_compatible(v) for k, v in (topics or {}).items()},
              "subscriptionGroups": {k: _browser_compatible(v) for k, v in (groups or {}).items()},
              "consumerOffsets": {k: _offset_wrapper(v) for k, v in (offsets or {}).items()}}
    for name, records in tables.items():
        path = os.path.join(config_dir, name)
        cfs = [CF_DATA_VERSION, CF_FORBIDDEN] if data_versions is not None else []
        db = _open_writable(path, cfs)
        for k, v in records.items():
            db[k.encode("utf-8")] = v
        if data_versions is not None and name in data_versions:
            db.get_column_family(CF_DATA_VERSION)[DATA_VERSION_KEY] = _browser_compatible(data_versions[name])
        if forbidden and name == "subscriptionGroups":
            cf = db.get_column_family(CF_FORBIDDEN)
            for g, m in forbidden.items():
                cf[g.encode("utf-8")] = _browser_compatible(m)
        _close(db, path)


def write_config_metadata(config_dir: str, *, topics: Mapping[str, Any] | None = None,
                          groups: Mapping[str, Any] | None = None,
                          offsets: Mapping[str, Mapping[int, int]] | None = None,
                          data_versions: Mapping[str, Mapping[str, Any]] | None = None,
                          forbidden: Mapping[str, Mapping[str, int]] | None = None) -> str:
    """Write ``config/metadata/``, the one database of ``useSingleRocksDBForAllConfigs`` (5.3.4+), and return its
    path: the v1 tables in the column families ``topic``, ``subscriptionGroup`` and ``consumerOffset``
    (records as :func:`write_config_v1` writes them), their data versions in ``<table>Version`` (the
    ``data_versions`` keys are the record column families) and the groups' forbidden maps in ``forbidden``."""
    from ..rocksdb.config import CF_FORBIDDEN, DATA_VERSION_KEY, METADATA_FOLDER, METADATA_TABLES
    path = os.path.join(config_dir, METADATA_FOLDER)
    cfs = [name for cf, (_, _, version_cf, _) in METADATA_TABLES.items() for name in (cf, version_cf)]
    db = _open_writable(path, [*cfs, CF_FORBIDDEN])
    records = {"topic": {k: _browser_compatible(v) for k, v in (topics or {}).items()},
               "subscriptionGroup": {k: _browser_compatible(v) for k, v in (groups or {}).items()},
               "consumerOffset": {k: _offset_wrapper(v) for k, v in (offsets or {}).items()}}
    for cf, rows in records.items():
        family = db.get_column_family(cf)
        for k, v in rows.items():
            family[k.encode("utf-8")] = v
        stamp = (data_versions or {}).get(cf)
        if stamp is not None:
            db.get_column_family(METADATA_TABLES[cf][2])[DATA_VERSION_KEY] = _browser_compatible(stamp)
    family = db.get_column_family(CF_FORBIDDEN)
    for g, m in (forbidden or {}).items():
        family[g.encode("utf-8")] = _browser_compatible(m)
    _close(db, path)
    return path


def v2_key(table: str, *, name: str | None = None, group: str | None = None, topic: str | None = None,
           queue_id: int | None = None, data_version: bool = False) -> bytes:
    """A ``config/rdb`` key: a table's data version, a named record, or an offset record."""
    def enc(text: str | None) -> int:
        return len((text or "").encode("utf-8"))
    spec: dict[str, Any] = {"table_prefix": "table", "table_id": table,
                            "record_prefix": "data_version" if data_version else "data",
                            "data_version_name": None, "named": None, "offset": None}
    if data_version:
        spec["data_version_name"] = "data_version"
    elif name is not None:
        spec["named"] = {"len_name": enc(name), "name": name}
    else:
        spec["offset"] = {"len_group": enc(group), "group": group, "len_topic": enc(topic), "topic": topic,
                          "queue_id": queue_id}
    return _cfg_key_spec.rocketmq_rocksdb_config_key.build(spec)


def write_config_v2(config_dir: str, *, topics: Mapping[str, Any] | None = None,
                    groups: Mapping[str, Any] | None = None,
                    offsets: Mapping[tuple[str, str, int], int] | None = None,
                    data_versions: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Write ``config/rdb/``: ``offsets`` maps (topic, group, queue id) to the committed offset;
    ``data_versions`` maps a table id name (``topic``, ``consumer_offset`` …) to its ``DataVersion`` JSON."""
    path = os.path.join(config_dir, "rdb")
    db = _open_writable(path)
    record = _cfg_record_spec.rocketmq_rocksdb_config_record
    for table, records in (("topic", topics or {}), ("subscription_group", groups or {})):
        for name, bean in records.items():
            db[v2_key(table, name=name)] = record.build({"serialization_type": "json",
                                                         "payload": json.dumps(bean, separators=(",", ":"),
                                                                               ensure_ascii=False).encode("utf-8")})
    for (topic, group, qid), off in (offsets or {}).items():
        db[v2_key("consumer_offset", group=group, topic=topic, queue_id=qid)] = \
            _cfg_offset_spec.rocketmq_rocksdb_config_offset.build({"offset": {"offset": off}})
    for table, dv in (data_versions or {}).items():
        db[v2_key(table, data_version=True)] = _dv_spec.rocketmq_rocksdb_config_data_version.build(
            {"data_version": {"state_version": dv.get("stateVersion", 0), "timestamp": dv.get("timestamp", 0),
                              "counter": dv.get("counter", 0)}})
    _close(db, path)


# -- the RocksDB message store (5.4.0+, rocksdbstore/) --------------------------------------------

def timer_key(delivery_time: int, uniq_key: str) -> bytes:
    """A ``timer`` column family key (``TimerRocksDBRecord.getKeyBytes``)."""
    from ..generated.construct import rocketmq_rocksdb_timer_key as spec
    return spec.rocketmq_rocksdb_timer_key.build({"delivery_time": delivery_time, "uniq_key": uniq_key})


def timer_value(commitlog_offset: int, size: int) -> bytes:
    """A 12-byte ``timer`` column family value: size, then offset."""
    from ..generated.construct import rocketmq_rocksdb_timer_value as spec
    return spec.rocketmq_rocksdb_timer_value.build({"timer": {"len_message": size, "ofs_commitlog": commitlog_offset}})


def trans_key(commitlog_offset: int, topic: str, uniq_key: str) -> bytes:
    """A ``trans`` column family key (``TransRocksDBRecord.getKeyBytes``)."""
    from ..generated.construct import rocketmq_rocksdb_trans_key as spec
    return spec.rocketmq_rocksdb_trans_key.build({"ofs_commitlog": commitlog_offset,
                                                  "topic_and_uniq_key": f"{topic}@{uniq_key}"})


def trans_value(check_times: int, size: int) -> bytes:
    """An 8-byte ``trans`` column family value."""
    from ..generated.construct import rocketmq_rocksdb_trans_value as spec
    return spec.rocketmq_rocksdb_trans_value.build({"trans": {"check_times": check_times, "len_message": size}})


def index_key(store_timestamp: int, topic: str, index_type: str, key: str, uniq_key: str,
              commitlog_offset: int) -> bytes:
    """A ``default`` column family key of the message index (``IndexRocksDBRecord.getKeyBytes``)."""
    from ..generated.construct import rocketmq_rocksdb_index_key as spec
    middle = f"{topic}@U@{uniq_key}@" if index_type == "U" else f"{topic}@{index_type}@{key}@{uniq_key}@"
    hour = store_timestamp // 3_600_000 * 3_600_000
    # The middle's size is the key's size less the rest (``_io.size - _io.pos - 8``): build into a stream
    # of the key's final size, so that ``_io.size`` is known while building.
    stream = io.BytesIO(bytes(8 + 1 + len(middle.encode("utf-8")) + 8))
    spec.rocketmq_rocksdb_index_key.build_stream({"store_hour": hour, "middle": middle,
                                                  "ofs_commitlog": commitlog_offset}, stream)
    return stream.getvalue()


def index_value(store_timestamp: int) -> bytes:
    """An 8-byte index value: the exact store time."""
    from ..generated.construct import rocketmq_rocksdb_index_value as spec
    return spec.rocketmq_rocksdb_index_value.build({"entry": {"store_timestamp": store_timestamp}})


def mark_value(value: int) -> bytes:
    """An 8-byte progress value (``lastOffsetPy``, ``timeline_checkpoint`` …)."""
    from ..generated.construct import rocketmq_rocksdb_message_mark as spec
    return spec.rocketmq_rocksdb_message_mark.build({"mark": {"position": value}})


def write_rocksdb_message_store(path: str, *, timer: Iterable[tuple[int, str, int, int]] = (),
                                trans: Iterable[tuple[int, str, str, int, int]] = (),
                                index: Iterable[tuple[int, str, str, str, str, int]] = (),
                                timer_scan_offset: int | None = None, timeline: int | None = None) -> None:
    """Write a RocksDB message store at ``path`` (``<root>/rocksdbstore``) as ``MessageRocksDBStorage`` does.

    ``timer``: ``(delivery_time, uniq_key, commitlog_offset, size)``;
    ``trans``: ``(commitlog_offset, topic, uniq_key, check_times, size)``;
    ``index``: ``(store_timestamp, topic, type, key, uniq_key, commitlog_offset)``.
    The progress keys are written as the broker writes them: ``lastOffsetPy``
    of ``trans`` and of the index (with ``lastStoreTimeStamp``) from their
    records, the timer's two checkpoints when given.
    """
    from ..rocksdb.messagestore import (CF_TIMER, CF_TRANS, LAST_OFFSET_PY, LAST_STORE_TIMESTAMP, TIMER_SCAN_OFFSET,
                                        TIMER_TIMELINE)
    db = _open_writable(path, [CF_TIMER, CF_TRANS], plain_writes=True)  # rebuild writes it, in forked children too
    timer_cf, trans_cf = db.get_column_family(CF_TIMER), db.get_column_family(CF_TRANS)
    for when, uniq, phy, size in timer:
        timer_cf[timer_key(when, uniq)] = timer_value(phy, size)
    if timer_scan_offset is not None:
        timer_cf[TIMER_SCAN_OFFSET] = mark_value(timer_scan_offset)
    if timeline is not None:
        timer_cf[TIMER_TIMELINE] = mark_value(timeline)
    last = 0
    for phy, topic, uniq, checks, size in trans:
        trans_cf[trans_key(phy, topic, uniq)] = trans_value(checks, size)
        last = max(last, phy)
    if last:
        trans_cf[LAST_OFFSET_PY] = mark_value(last)
    last_phy = last_time = 0
    for stamp, topic, kind, key, uniq, phy in index:
        db[index_key(stamp, topic, kind, key, uniq, phy)] = index_value(stamp)
        last_phy, last_time = max(last_phy, phy), max(last_time, stamp)
    if last_phy:
        db[LAST_OFFSET_PY] = mark_value(last_phy)
        db[LAST_STORE_TIMESTAMP] = mark_value(last_time)
    _close(db, path)


#: ``TimerMessageStore.TIMER_TOPIC`` and the half-message topic of the RocksDB transaction store.
TIMER_TOPIC = "rmq_sys_wheel_timer"
TRANS_HALF_TOPIC = "RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC"


def write_rocksdb_store(root: str, *, queue_folder: str = "consumequeue_rocksdb", messages: int = 6,
                        timers: int = 3, halves: int = 2, confirm_offset: int = 0,
                        segment_size: int = 1 << 20, open_halves: Iterable[int] | None = None,
                        check_times: Mapping[int, int] | None = None, timer_scan_offset: int | None = None,
                        timeline: int | None = None) -> dict[str, Any]:
    """Write a small 5.5 store at ``root`` keeping everything but the commit log in RocksDB.

    The commit log holds ``messages`` messages of ``TopicTest`` queue 0 (with
    KEYS and UNIQ_KEY), ``timers`` timer messages (``rmq_sys_wheel_timer``
    with ``TIMER_OUT_MS``) and ``halves`` transactional half messages; every
    message has its unit in a RocksDB consume queue in ``queue_folder``
    (``useSeparateStorePathForRocksdbCQ``); ``rocksdbstore/`` holds a timer
    record per timer message, a transaction record per half message and the
    index entries of the ``TopicTest`` messages. ``open_halves`` (default: all)
    are the half messages still in the ``trans`` column family (the others
    closed), ``check_times`` maps a half to
    its check count; ``timer_scan_offset`` (default ``timers``) is how many
    timer messages the scan has read into ``timer`` records, ``timeline``
    (default the first store time) the time delivered up to. Returns what was placed:
    ``{"offsets": {topic: [(commit-log offset, size), ...]}, "dataEnd": …}``.
    """
    from .commitlog import MessageSpec, write_commitlog
    from .timer import encode_checkpoint
    base = 1_700_000_000_000
    specs: list[MessageSpec] = []
    for i in range(messages):
        specs.append(MessageSpec("TopicTest", f"body {i}".encode(), {"KEYS": f"k{i}", "UNIQ_KEY": f"U{i:04d}",
                                                                     "TAGS": "TagA"},
                                 queue_offset=i, store_timestamp=base + i, trailing_separator=True))
    for i in range(timers):
        specs.append(MessageSpec(TIMER_TOPIC, f"timer {i}".encode(),
                                 {"TIMER_OUT_MS": str(base + 60_000 * (i + 1)), "UNIQ_KEY": f"T{i:04d}",
                                  "REAL_TOPIC": "TopicTest", "REAL_QID": "0"},
                                 queue_offset=i, store_timestamp=base + 100 + i, trailing_separator=True))
    for i in range(halves):
        specs.append(MessageSpec(TRANS_HALF_TOPIC, f"half {i}".encode(),
                                 {"UNIQ_KEY": f"H{i:04d}", "REAL_TOPIC": "TopicTest", "REAL_QID": "0",
                                  "TRAN_MSG": "true"},
                                 queue_offset=i, store_timestamp=base + 200 + i, trailing_separator=True))
    placed = write_commitlog(os.path.join(root, "commitlog"), specs, segment_size)
    by_topic: dict[str, list[tuple[int, int]]] = {}
    queues: dict[tuple[str, int], list[tuple[int, int, int, int, int]]] = {}
    from ..consumequeue import java_string_hash
    for spec, where in zip(specs, placed):
        by_topic.setdefault(spec.topic, []).append((where.commitlog_offset, where.size))
        tags = spec.properties.get("TAGS") if isinstance(spec.properties, dict) else None
        queues.setdefault((spec.topic, spec.queue_id), []).append(
            (spec.queue_offset, where.commitlog_offset, where.size, java_string_hash(tags) if tags else 0,
             spec.store_timestamp))
    os.makedirs(os.path.join(root, "consumequeue"), exist_ok=True)
    write_rocksdb_queues(os.path.join(root, queue_folder), queues)
    scan = timers if timer_scan_offset is None else timer_scan_offset
    timeline = base if timeline is None else timeline
    timer_records = [(base + 60_000 * (i + 1), f"T{i:04d}", *by_topic[TIMER_TOPIC][i])
                     for i in range(min(scan, timers))]
    still_open = range(halves) if open_halves is None else sorted(open_halves)
    trans_records = [(by_topic[TRANS_HALF_TOPIC][i][0], "TopicTest", f"H{i:04d}", (check_times or {}).get(i, 0),
                      by_topic[TRANS_HALF_TOPIC][i][1]) for i in still_open]
    index_records = []
    for i, (phy, _) in enumerate(by_topic.get("TopicTest", [])):
        index_records.append((base + i, "TopicTest", "K", f"k{i}", f"U{i:04d}", phy))
    write_rocksdb_message_store(os.path.join(root, "rocksdbstore"), timer=timer_records, trans=trans_records,
                                index=index_records, timer_scan_offset=scan, timeline=timeline)
    end = placed[-1].commitlog_offset + placed[-1].size if placed else 0
    last = max(s.store_timestamp for s in specs)
    with open(os.path.join(root, "checkpoint"), "wb") as f:
        f.write(encode_checkpoint(physic_msg_timestamp=last, logics_msg_timestamp=last, index_msg_timestamp=last,
                                  confirm_phy_offset=confirm_offset))
    return {"offsets": by_topic, "dataEnd": end, "queues": queues, "timer": timer_records, "trans": trans_records,
            "index": index_records, "timerScanOffset": scan, "timeline": timeline}
