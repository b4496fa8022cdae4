"""``dump``: the records of any single store file, with their file offsets.

The kind of each file comes from :mod:`rmqformats.filekind`; :data:`DUMPERS`
maps a kind to the function listing its records (more kinds add theirs with
:func:`register`). A dumper yields one dict per record, ``fileOffset``
first; the default view is the fields a person looks at, ``--deep`` every
field. ``--summary`` gives counts and ranges instead of the records.

One folder is read as a whole: the 5.4+ RocksDB message store
(``rocksdbstore/``, kind ``rocksdbstore``), whose records are keys and
values of its ``timer``, ``trans`` and ``default`` (index) column families
(``record`` says which); they have no file offset.

A commit-log segment is read by the walk (``--jobs``), in
:mod:`.segment_dump`: its JSON, its default table and its summary are made
from the walk's columns a batch at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .. import filekind
from ..errors import RmqFormatError
from . import bodies, segment_dump, status
from .common import UsageError, add_jobs, cpus, iso, print_table
from .tables import print_columns

#: Records of a table written at a time (a table's widths come from its first block).
_TABLE_BLOCK = 1000


@dataclass(frozen=True)
class DumpOptions:
    deep: bool
    body: str | None
    body_limit: int | None
    table: bool
    #: An index file's slot and entry counts (the broker's maxHashSlotNum, maxIndexNum) when not inferred.
    hash_slots: int | None = None
    index_num: int | None = None
    #: Worker processes walking a commit-log segment (``--jobs``; ``None``: this process alone).
    jobs: int | None = None


#: A dumper: ``(path, options) -> records``, each a dict with ``fileOffset`` first.
Dumper = Callable[[str, DumpOptions], Iterator[dict]]
#: Fields whose range ``--summary`` reports, per kind (numbers; times in ms are shown as ISO too).
RANGES: dict[str, tuple[str, ...]] = {}
DUMPERS: dict[str, Dumper] = {}


def register(kind: str, dumper: Dumper, ranges: tuple[str, ...] = ()) -> None:
    """Add (or replace) the dumper of a file kind and the fields ``--summary`` gives ranges of."""
    DUMPERS[kind] = dumper
    RANGES[kind] = ranges


# -- the kinds ------------------------------------------------------------------------------------

def _commitlog(path: str, o: DumpOptions) -> Iterator[dict]:
    return segment_dump.records(path, deep=o.deep, body=o.body, body_limit=o.body_limit, table=o.table, jobs=o.jobs)


def _start_offset(path: str, kind: str) -> int:
    """The offset a queue-kind file starts at: its 20-digit name. A file named otherwise is refused (a typed
    error), not read as if it started at 0: units and addresses in it count from that offset."""
    from ..errors import QueueFileError, TimerLogError
    name = os.path.basename(path)
    if len(name) == 20 and name.isdigit():
        return int(name)
    error = TimerLogError if kind == "timerlog" else QueueFileError
    raise error(path, None, f"a {kind} file is named by the 20-digit offset of its first byte, not {name!r}: "
                            f"copy or link it under that name (00000000000000000000 for the first file) "
                            f"and dump that")


def _queue_parts(path: str) -> tuple[str, str, int]:
    folder = os.path.dirname(path)
    qid = os.path.basename(folder)
    return folder, os.path.basename(os.path.dirname(folder)), int(qid) if qid.isdigit() else 0


def _consumequeue(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..consumequeue import ConsumeQueue
    folder, topic, qid = _queue_parts(path)
    cq = ConsumeQueue(folder, topic, qid)
    start = _start_offset(path, "consumequeue") // cq.files.unit_size
    stop = start + os.path.getsize(path) // cq.files.unit_size
    for u in cq.units(start, stop):
        d: dict[str, object] = {"fileOffset": (u.cq_offset - start) * cq.files.unit_size, **u.to_json_dict()}
        if o.deep:
            d["topic"], d["queueId"] = topic, qid
        yield d


def _batchconsumequeue(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..batch_consumequeue import BatchConsumeQueue
    folder, topic, qid = _queue_parts(path)
    bcq = BatchConsumeQueue(folder, topic, qid)
    size = bcq.files.unit_size
    start = _start_offset(path, "batchconsumequeue") // size
    for u in bcq.units(start, start + os.path.getsize(path) // size):
        d: dict[str, object] = {"fileOffset": (u.index - start) * size, "unit": u.index, "commitLogOffset": u.commitlog_offset,
             "size": u.size, "tagsCode": u.tags_code, "storeTime": u.store_time,
             "msgBaseOffset": u.msg_base_offset, "batchSize": u.batch_size}
        if o.deep:
            d.update(compactedOffset=u.compacted_offset, reservedInt=u.reserved, topic=topic, queueId=qid)
        yield d


def _ext(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..consumequeue_ext import ConsumeQueueExt
    from ..queuefiles import QueueFile
    start = _start_offset(path, "consumequeue_ext")
    ext = ConsumeQueueExt(os.path.dirname(path))
    for u in ext._file_units(QueueFile(path, start, os.path.getsize(path))):
        d: dict[str, object] = {"fileOffset": u.ext_offset - start, "extOffset": u.ext_offset, "size": u.size,
             "tagsCode": u.tags_code, "msgStoreTime": u.msg_store_time, "filterBitmapBytes": len(u.filter_bitmap)}
        if o.deep:
            d["address"] = u.address
            d["filterBitmap"] = u.filter_bitmap.hex()
        yield d


def _index(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..index import ENTRY_SIZE, IndexFile
    with IndexFile(path, num_hash_slots=o.hash_slots, num_index=o.index_num) as f:
        h = f.header
        yield {"fileOffset": 0, "record": "HEADER", "beginTimestamp": h.begin_timestamp,
               "endTimestamp": h.end_timestamp, "beginPhyOffset": h.begin_phy_offset, "endPhyOffset": h.end_phy_offset,
               "hashSlotCount": h.hash_slot_count, "indexCount": h.index_count, "hashSlots": f.num_hash_slots,
               "indexNum": f.num_index}
        n = f.written_entries(strict=False)
        step = 65536
        for first in range(1, n + 1, step):
            a = f.entry_array(first, min(n + 1, first + step))
            for i, (kh, po, td, pi) in enumerate(zip(*(a[name].tolist() for name in a.dtype.names or ()))):
                number = first + i
                d = {"fileOffset": f._entries_at + number * ENTRY_SIZE, "record": "ENTRY", "entry": number,
                     "keyHash": kh, "phyOffset": po, "timeDiff": td, "prevIndex": pi}
                if o.deep:
                    d["storeTimeFromIndex"] = h.begin_timestamp + td * 1000
                yield d


def _checkpoint(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..checkpoint import read_checkpoint
    cp = read_checkpoint(path)
    names = ("physicMsgTimestamp", "logicsMsgTimestamp", "indexMsgTimestamp", "masterFlushedOffset",
             "confirmPhyOffset")
    values = (cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp, cp.master_flushed_offset,
              cp.confirm_phy_offset)
    for i, (name, value) in enumerate(zip(names, values)):
        yield _field_record(8 * i, name, value, o.table)


def _field_record(at: int, name: str, value: int, table: bool) -> dict:
    """One field of a checkpoint file: in JSON its raw value and, when it is a time, the ISO 8601 UTC
    ``time``; in a table the time in its place (as every table shows a time)."""
    is_time = name.endswith(("Timestamp", "TimeMs", ".timestamp")) and value > 0
    if table:
        return {"fileOffset": at, "field": name, "value": iso(value) if is_time else value}
    return {"fileOffset": at, "field": name, "value": value, "time": iso(value) if is_time else None}


def _timerlog(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..queuefiles import QueueFile
    from ..timer import TimerLogScan
    start = _start_offset(path, "timerlog")
    scan = TimerLogScan([QueueFile(path, start, os.path.getsize(path))])
    for u in scan:
        d = {"fileOffset": u.position, "offset": u.offset, "unitKind": u.kind, "prevPos": u.prev_pos,
             "magic": u.magic, "currWriteTimeMs": u.curr_write_time_ms, "delayMs": u.delay_ms,
             "commitLogOffset": u.commitlog_offset, "commitLogSize": u.commitlog_size}
        if o.deep:
            d.update(size=u.size, topicHash=u.topic_hash, reserved=u.reserved, delayedTimeMs=u.delayed_time_ms)
        yield d
    for b in scan.blanks:  # the marker that ends the segment: the recovery goes on in the next one
        yield {"fileOffset": b.position, "offset": b.offset, "unitKind": "BLANK", "prevPos": b.prev_pos,
               "magic": b.magic, "size": b.size}


def _timerwheel(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..timer import SLOT_SIZE, TimerWheel
    with TimerWheel(path) as wheel:
        for index in wheel.used_indexes().tolist():
            s = wheel.raw_slot(index)
            d = {"fileOffset": index * SLOT_SIZE, "slot": s.index, "timeMs": s.time_ms, "firstPos": s.first_pos,
                 "lastPos": s.last_pos, "num": s.num}
            if o.deep:
                d.update(timeUnits=s.time_units, reserved=s.reserved)
            yield d


def _timercheck(path: str, o: DumpOptions) -> Iterator[dict]:
    from ..timer import read_timer_checkpoint
    cp = read_timer_checkpoint(path)
    fields = (("lastReadTimeMs", cp.last_read_time_ms), ("lastTimerLogFlushPos", cp.last_timer_log_flush_pos),
              ("lastTimerQueueOffset", cp.last_timer_queue_offset),
              ("masterTimerQueueOffset", cp.master_timer_queue_offset),
              ("dataVersion.stateVersion", cp.data_version_state_version),
              ("dataVersion.timestamp", cp.data_version_timestamp), ("dataVersion.counter", cp.data_version_counter))
    for i, (name, value) in enumerate(fields):
        yield _field_record(8 * i, name, value, o.table)


def _config(path: str, o: DumpOptions) -> Iterator[dict]:
    """A config JSON file: its model as the broker reads it (one record), or its top-level keys in a table."""
    from ..config import read_config_file
    from ..config.schema import known_files, to_json_model
    name = os.path.basename(path)
    schema = next((s for _, n, s in known_files() if n == name), None)
    if schema is None:
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            model = json.loads(data.decode("utf-8")) if data.strip() else None
        except (UnicodeDecodeError, ValueError) as exc:
            raise RmqFormatError(path, None, f"not JSON: {exc}") from None
        doc = {"fileOffset": 0, "name": name, "source": path, "schema": None, "model": model}
    else:
        f = read_config_file(path)
        doc = {"fileOffset": 0, "name": f.name, "source": f.source, "schema": f.schema,
               "encoding": f.encoding, "unknownKeys": list(f.unknown_keys), "warnings": list(f.warnings),
               "model": to_json_model(f.model.to_json() if f.model is not None else None)}
    if o.table and isinstance(doc["model"], dict):
        for key, value in doc["model"].items():
            count = len(value) if isinstance(value, (dict, list)) else None
            yield {"fileOffset": 0, "key": key, "entries": "" if count is None else count,
                   "value": json.dumps(value, ensure_ascii=False) if count is None or o.deep else ""}
        return
    yield doc


def _marker(path: str, o: DumpOptions) -> Iterator[dict]:
    with open(path, "rb") as fh:
        data = fh.read(4096)
    yield {"fileOffset": 0, "name": os.path.basename(path), "bytes": os.path.getsize(path),
           "content": data.decode("utf-8", "backslashreplace")}


def _index_summary(path: str, o: DumpOptions) -> dict:
    """``--summary`` of an index file from whole arrays of entries (a full file holds 20 million)."""
    from ..index import IndexFile
    with IndexFile(path, num_hash_slots=o.hash_slots, num_index=o.index_num) as f:
        n = f.written_entries(strict=False)
        low = high = None
        step = 1 << 20
        for first in range(1, n + 1, step):
            phy = f.entry_array(first, min(n + 1, first + step))["ofs_physical"]
            if len(phy):
                lo, hi = int(phy.min()), int(phy.max())
                low = lo if low is None else min(low, lo)
                high = hi if high is None else max(high, hi)
    ranges = {"entry": [1, n]} if n else {}
    if low is not None:
        ranges["phyOffset"] = [low, high]
    return {"records": n + 1, "recordKinds": {"ENTRY": n, "HEADER": 1} if n else {"HEADER": 1}, "ranges": ranges}


#: Kinds whose ``--summary`` has a faster way than reading every record:
#: ``(path, options) -> records, recordKinds, ranges``.
SUMMARIES: dict[str, Callable[[str, DumpOptions], dict]] = {
    "index": _index_summary, "commitlog": lambda path, o: segment_dump.summary(path, jobs=o.jobs)}


register("commitlog", _commitlog, segment_dump.RANGES)
register("consumequeue", _consumequeue, ("cqOffset", "commitLogOffset"))
register("batchconsumequeue", _batchconsumequeue, ("msgBaseOffset", "commitLogOffset", "storeTime"))
register("consumequeue_ext", _ext, ("extOffset", "msgStoreTime"))
register("index", _index, ("entry", "phyOffset"))
register("checkpoint", _checkpoint)
register("timerlog", _timerlog, ("offset", "commitLogOffset", "currWriteTimeMs"))
register("timerwheel", _timerwheel, ("slot", "timeMs"))
register("timercheck", _timercheck)


def _rocksdbstore(path: str, o: DumpOptions) -> Iterator[dict]:
    """The records of the RocksDB message store, column family by column family, progress keys first."""
    from ..rocksdb.messagestore import CF_INDEX, CF_TIMER, CF_TRANS, RocksDBMessageStore
    with RocksDBMessageStore(path) as ms:
        ms.db  # opens now, from a copy when a broker holds the lock
        if ms.copied:
            sys.stderr.write(f"rmqformats: {path}: read from a copy (a running broker holds its LOCK)\n")
        for cf in (CF_TIMER, CF_TRANS, CF_INDEX):
            for name, value in ms.marks(cf).items():
                yield {"record": "mark", "columnFamily": cf, "key": name, "value": value}
        for t in ms.timer_entries():
            yield {"record": "timer", "columnFamily": CF_TIMER, "deliveryTimeMs": t.delivery_time,
                   "uniqKey": t.uniq_key, "commitLogOffset": t.commitlog_offset, "size": t.size}
        for x in ms.trans_entries():
            yield {"record": "transaction", "columnFamily": CF_TRANS, "commitLogOffset": x.commitlog_offset,
                   "topic": x.topic, "uniqKey": x.uniq_key, "checkTimes": x.check_times, "size": x.size}
        for e in ms.index_entries():
            d = {"record": "index", "columnFamily": CF_INDEX, "storeTimestamp": e.store_timestamp,
                 "topic": e.topic, "indexType": e.index_type, "key": e.key, "commitLogOffset": e.commitlog_offset}
            if o.deep:
                d.update(storeHour=e.store_hour, uniqKey=e.uniq_key)
            yield d


def _rocksdbstore_score(f: filekind.FileFacts) -> int:
    return 0  # a folder: chosen in cmd_dump, never from a file's facts


register("rocksdbstore", _rocksdbstore, ("commitLogOffset", "deliveryTimeMs", "storeTimestamp"))
filekind.register(filekind.FileKind("rocksdbstore", "RocksDB message store (timer, transaction, index records)",
                                    _rocksdbstore_score))


def _config_metadata(path: str, o: DumpOptions) -> Iterator[dict]:
    """The records of ``config/metadata`` (useSingleRocksDBForAllConfigs), column family by column family: each
    key as text and its value as the JSON it holds."""
    from ..rocksdb.config import metadata_records
    for cf, key, value in metadata_records(path):
        yield {"record": "config", "columnFamily": cf, "key": key, "value": value}


register("configmetadata", _config_metadata)
filekind.register(filekind.FileKind("configmetadata", "RocksDB config database config/metadata "
                                    "(useSingleRocksDBForAllConfigs, 5.3.4+)", _rocksdbstore_score))


def _folder_kind(path: str) -> filekind.FileKind | None:
    """The kind of a folder ``dump`` reads as a whole (the RocksDB message store, ``config/metadata``), else
    ``None``."""
    from ..rocksdb.config import METADATA_FOLDER
    from ..rocksdb.db import is_rocksdb
    from ..rocksdb.messagestore import FOLDER
    if not (os.path.isdir(path) and is_rocksdb(path)):
        return None
    if os.path.basename(path) == FOLDER:
        return next(k for k in filekind.KINDS if k.name == "rocksdbstore")
    if os.path.basename(path) == METADATA_FOLDER and os.path.basename(os.path.dirname(path)) == "config":
        return next(k for k in filekind.KINDS if k.name == "configmetadata")
    return None
register("config", _config)
register("marker", _marker)


def _folder_advice(path: str) -> str:
    """Why ``dump`` does not read the folder ``path`` (it reads files), what the folder is and which
    command reads it."""
    from .layouts import found_at
    names = sorted(os.listdir(path))
    base, parent = os.path.basename(path), os.path.basename(os.path.dirname(path))
    grand = os.path.basename(os.path.dirname(os.path.dirname(path)))
    first = next((os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))), None)
    files = (f"`rmqformats dump {first}` lists one of its files' records" if first is not None else
             "it holds no file for dump to read")
    if "commitlog" in names and os.path.isdir(os.path.join(path, "commitlog")):
        what, how = "a store root", (f"`rmqformats inspect {path}` describes it; messages, queue, check, lookup "
                                     "and config read it")
    elif base == "commitlog" or any(filekind._OFFSET_NAME.match(n) for n in names) and \
            base not in ("timerlog", "consumequeue_ext") and parent != "consumequeue_ext" and \
            grand not in ("consumequeue", "batchconsumequeue"):
        what, how = found_at(path), f"`rmqformats messages {path}` reads its messages; {files}"
    elif base in ("consumequeue", "batchconsumequeue"):
        what, how = f"the {base} folder", f"`rmqformats queue {os.path.dirname(path)}` lists its queues"
    elif grand in ("consumequeue", "batchconsumequeue") and base.isdigit():
        root = os.path.dirname(os.path.dirname(os.path.dirname(path)))
        what, how = f"the files of queue {parent}/{base}", (f"`rmqformats queue {root} {parent} {base}` lists "
                                                            f"its units; {files}")
    elif parent in ("consumequeue", "batchconsumequeue"):
        what, how = f"the queues of topic {base}", (f"`rmqformats queue {os.path.dirname(os.path.dirname(path))} "
                                                    f"{base}` lists them")
    elif base == "index":
        what, how = "the index folder", (f"`rmqformats lookup {os.path.dirname(path)} --topic T --key K` searches "
                                         f"it; {files}")
    elif base == "config":
        what, how = "the config folder", f"`rmqformats config {os.path.dirname(path)}` reads it; {files}"
    elif base == "compaction":
        what, how = "the compaction folder", (f"`rmqformats compaction {os.path.dirname(path)}` lists its "
                                              f"queues; {files}")
    elif base == "timerlog":
        what, how = "the timer-log folder", f"`rmqformats check {os.path.dirname(path)}` checks it; {files}"
    else:
        what = found_at(path)
        if what.startswith("a tiered store"):
            how = f"`rmqformats tiered {path}` reads it"
        elif what.startswith("a DLedger"):
            how = f"`rmqformats dledger {path}` reads it"
        elif what.startswith("a compaction folder"):
            how = f"`rmqformats compaction {os.path.dirname(path)}` reads it"
        else:
            how = files
    return f"a folder, not a file: {what}; {how}"


# -- output ---------------------------------------------------------------------------------------

def _summary(path: str, kind: filekind.FileKind, records: Iterator[dict], o: DumpOptions) -> dict:
    head = {"file": path, "kind": kind.name, "description": kind.description, "bytes": os.path.getsize(path)}
    if kind.name in SUMMARIES:
        return {**head, **SUMMARIES[kind.name](path, o)}
    ranges = RANGES.get(kind.name, ())
    counts: dict[str, int] = {}
    low: dict[str, int] = {}
    high: dict[str, int] = {}
    n = 0
    for r in records:
        n += 1
        what = r.get("record") or r.get("unitKind")
        if isinstance(what, str):
            counts[what] = counts.get(what, 0) + 1
        for f in ranges:
            v = r.get(f)
            if isinstance(v, int):
                low[f] = min(low.get(f, v), v)
                high[f] = max(high.get(f, v), v)
    out: dict = {**head, "records": n}
    if counts:
        out["recordKinds"] = dict(sorted(counts.items()))
    out["ranges"] = {f: [low[f], high[f]] for f in ranges if f in low}
    return out


def _cell(key: str, value) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and (key.endswith(("Timestamp", "TimeMs", "StoreTime")) or key in ("storeTime", "timeMs")) \
            and value > 0:
        return iso(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return value


def _write_table(records: Iterator[dict], out) -> int:
    """Records as tables of up to a block each (a new header where the fields change); returns the count."""
    n = 0
    block: list[dict] = []

    def flush() -> None:
        if not block:
            return
        header = list(block[0])
        print_table([[_cell(k, r.get(k)) for k in header] for r in block], header, out, "  ")
        block.clear()

    for r in records:
        n += 1
        if block and (len(block) >= _TABLE_BLOCK or list(r) != list(block[0])):
            flush()
        block.append(r)
    flush()
    return n


def _write_segment_table(path: str, o: DumpOptions, out) -> int:
    """A commit-log segment's table from the walk's columns: the text :func:`_write_table` makes of its
    records, block by block; returns the count."""
    n = 0
    blanks = []
    for part in segment_dump.table_blocks(path, block=_TABLE_BLOCK, deep=o.deep, body=o.body,
                                          body_limit=o.body_limit, jobs=o.jobs):
        if isinstance(part, dict):
            blanks.append(part)
        else:
            header, columns = part
            print_columns(columns, header, out, "  ")
            n += len(columns[0])
    return n + _write_table(iter(blanks), out)


def _write_summary_text(s: dict, out) -> None:
    w = out.write
    w(f"  {s['records']:,} records, {s['bytes']:,} bytes\n")
    for k, v in s.get("recordKinds", {}).items():
        w(f"  {k:<16} {v:,}\n")
    for f, (lo, hi) in s["ranges"].items():
        shown = f"{_cell(f, lo)} .. {_cell(f, hi)}"
        w(f"  {f:<16} {shown}\n")


def cmd_dump(args: argparse.Namespace) -> int:
    if args.kind is not None and args.kind not in [k.name for k in filekind.KINDS]:
        raise UsageError(f"unknown --kind {args.kind!r}; the kinds are {', '.join(k.name for k in filekind.KINDS)}")
    out = sys.stdout
    worst = status.OK
    fmt = args.format
    segment_dump.ENDED_EARLY.clear()
    if fmt == "json":
        out.write("[")
    first_doc = True
    for path in args.files:
        whole = os.path.abspath(path)
        try:
            folder = _folder_kind(whole) if args.kind is None else None
            if args.kind in ("rocksdbstore", "configmetadata") or folder is not None:
                name = args.kind if folder is None else folder.name
                kind = next(k for k in filekind.KINDS if k.name == name)
                if not os.path.isdir(whole):
                    raise filekind.UnknownFileKindError(whole, None, f"{kind.with_article} is a folder")
            elif os.path.isdir(whole):
                raise filekind.UnknownFileKindError(whole, None, _folder_advice(whole))
            elif args.kind is not None:
                kind = next(k for k in filekind.KINDS if k.name == args.kind)
                filekind.facts(whole)  # a missing file or a folder is still an error
            else:
                kind = filekind.detect(whole)
            dumper = DUMPERS.get(kind.name)
            if dumper is None:
                raise filekind.UnknownFileKindError(whole, None, f"{kind.description}: no dumper for this kind yet")
            opts = DumpOptions(args.deep, args.body, args.body_limit, fmt == "table", args.hash_slots,
                               args.index_num, cpus() if args.jobs is None else args.jobs)
            # A commit-log segment's records are written from the walk's columns.
            walked = kind.name == "commitlog" and not args.summary
            records = dumper(whole, opts)
            if args.summary:
                s = _summary(whole, kind, records, opts)
                if fmt == "table":
                    out.write(f"{path}\n  {kind.description} ({kind.name})\n")
                    _write_summary_text(s, out)
                elif fmt == "jsonl":
                    out.write(json.dumps(s, ensure_ascii=False) + "\n")
                else:
                    out.write(("" if first_doc else ",") + "\n" + json.dumps(s, ensure_ascii=False))
                    first_doc = False
                continue
            if fmt == "table":
                out.write(f"{path}\n  {kind.description} ({kind.name})\n")
                n = _write_segment_table(whole, opts, out) if walked else _write_table(records, out)
                if n == 0:
                    out.write("  (no records)\n")
            elif fmt == "jsonl":
                if walked:
                    segment_dump.write_json(whole, out, lines=True, deep=opts.deep, body=opts.body,
                                            body_limit=opts.body_limit, jobs=opts.jobs)
                for r in () if walked else records:
                    out.write(json.dumps({"file": whole, "kind": kind.name, **r}, ensure_ascii=False) + "\n")
            else:
                out.write(("" if first_doc else ",") + "\n" + json.dumps(
                    {"file": whole, "kind": kind.name}, ensure_ascii=False)[:-1] + ', "records": [')
                first_doc = False
                sep = ""
                try:
                    if walked:
                        segment_dump.write_json(whole, out, lines=False, deep=opts.deep, body=opts.body,
                                                body_limit=opts.body_limit, jobs=opts.jobs)
                    for r in () if walked else records:
                        out.write(sep + "\n  " + json.dumps(r, ensure_ascii=False))
                        sep = ","
                finally:  # the document stays valid JSON when a file fails part way
                    out.write("\n]}")
        except RmqFormatError as exc:
            out.flush()
            sys.stderr.write(f"rmqformats: error: {exc.whole()}\n")
            worst = status.ERROR
    if fmt == "json":
        out.write("\n]\n")
    if worst == status.OK and segment_dump.ENDED_EARLY:  # a segment's data ended at damage (said on stderr)
        return status.DAMAGED
    return worst


def add_commands(sub) -> None:
    """Add ``dump`` to the ``rmqformats`` subcommands."""
    kinds = ", ".join(k.name for k in filekind.KINDS)
    sp = sub.add_parser("dump", help="the records of any store file, with their file offsets",
                        description="Print the records of single store files, each with its byte offset in "
                                    "the file. The kind of each file is found from its path, name and first "
                                    f"bytes ({kinds}); --kind overrides it.")
    sp.add_argument("files", nargs="+", metavar="FILE", help="store files")
    sp.add_argument("--kind", metavar="KIND", help="read every FILE as this kind (one of the kinds above)")
    sp.add_argument("--summary", action="store_true", help="counts and ranges instead of the records")
    sp.add_argument("--deep", action="store_true", help="every field of each record")
    add_jobs(sp)
    sp.add_argument("--format", choices=["table", "jsonl", "json"], default="table", help="output format")
    sp.add_argument("--hash-slots", type=bodies.positive, metavar="N",
                    help="index files: the broker's maxHashSlotNum (default: inferred from the size; a size that "
                         "tells neither count is refused with the counts that fit it)")
    sp.add_argument("--index-num", type=bodies.positive, metavar="N",
                    help="index files: the broker's maxIndexNum (default: inferred from the size, as --hash-slots)")
    bodies.add_body_args(sp, "commit-log message bodies")
    sp.set_defaults(func=cmd_dump)
