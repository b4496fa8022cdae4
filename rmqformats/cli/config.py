"""``config`` and ``lag``: the config/ JSON files and consumer lag."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict

from ..errors import RmqFormatError
from ..store import Store
from . import status
from .common import Unknown, iso, open_from_args, short, print_table, add_jobs, add_store_args

class _Streamed:
    """A consumer offsets file too large to parse whole: its entries are read as they are written out."""

    def __init__(self, name: str, path: str, schema: str):
        self.name, self.path, self.schema = name, path, schema

    def entries(self):
        from ..config.stream import iter_consumer_offsets
        return iter_consumer_offsets(self.path)


def _read_config_files(store: Store) -> tuple[list, list[str]]:
    """Every known config file of the store (or its ``.bak``), and the errors of those that fail."""
    from ..config import read_config_file
    from ..config.schema import known_files
    from ..config.stream import STREAM_BYTES
    found, errors = [], []
    for folder, name, schema in known_files():
        path = store.path(folder, name)
        if not (os.path.exists(path) or os.path.exists(path + ".bak")):
            continue
        if schema == "consumerOffset" and os.path.isfile(path) and os.path.getsize(path) > STREAM_BYTES:
            found.append(_Streamed(name, path, schema))
            continue
        try:
            found.append(read_config_file(path, schema=schema))
        except RmqFormatError as exc:
            errors.append(exc.whole())
    try:  # RocksDB config databases (5.1.4+ v1 tables, 5.3.2+ config/rdb), in the same models
        found += store.rocksdb_configs()
    except RmqFormatError as exc:
        errors.append(exc.whole())
    return found, errors


def config_summary(files: list, errors: list[str]) -> dict:
    """The config files of a store as plain JSON-ready values: files, topics, groups, offsets."""
    from ..config import ConsumerOffsetsFile, DelayOffsetsFile, SubscriptionGroupsFile, TopicsFile
    out: dict = {"files": [], "errors": errors, "topics": [], "groups": [], "consumerOffsets": [],
                 "delayOffsets": []}
    streamed = []
    for f in files:
        if isinstance(f, _Streamed):
            out["files"].append({"name": f.name, "path": f.path, "source": "file", "encoding": None,
                                 "schema": f.schema, "valid": True, "unknownKeys": [],
                                 "warnings": ["large file: its offsets are streamed, checked as they are read"]})
            streamed.append(f)
            continue
        out["files"].append({"name": f.name, "path": f.path, "source": f.source, "encoding": f.encoding,
                             "schema": f.schema, "valid": f.model is not None,
                             "unknownKeys": list(f.unknown_keys), "warnings": list(f.warnings)})
        m = f.model
        if isinstance(m, TopicsFile):
            for name, t in m.topic_config_table.items():
                out["topics"].append({"topic": name, "readQueueNums": t.read_queue_nums,
                                      "writeQueueNums": t.write_queue_nums, "perm": t.perm,
                                      "permString": t.perm_string, "readable": t.readable, "writable": t.writable,
                                      "inherited": t.inherited, "order": t.order, "topicSysFlag": t.topic_sys_flag,
                                      "topicFilterType": t.topic_filter_type, "attributes": t.attributes})
        elif isinstance(m, SubscriptionGroupsFile):
            for name, g in m.subscription_group_table.items():
                out["groups"].append({"group": name, "consumeEnable": g.consume_enable,
                                      "consumeBroadcastEnable": g.consume_broadcast_enable,
                                      "consumeMessageOrderly": g.consume_message_orderly,
                                      "retryQueueNums": g.retry_queue_nums, "retryMaxTimes": g.retry_max_times,
                                      "brokerId": g.broker_id})
        elif isinstance(m, ConsumerOffsetsFile):
            for e in m.entries():
                out["consumerOffsets"].append({"file": f.name, "group": e.group, "topic": e.topic,
                                               "queueId": e.queue_id, "committedOffset": e.offset})
        elif isinstance(m, DelayOffsetsFile):
            for level, off in m.by_level.items():
                topic, qid = m.queue_of(level)
                out["delayOffsets"].append({"level": level, "topic": topic, "queueId": qid, "offset": off})
    # Sorted by name, as a person looks a topic or group up (the files keep the broker's hash order).
    out["topics"].sort(key=lambda t: t["topic"])
    out["groups"].sort(key=lambda g: g["group"])
    if streamed:  # read while written out (see _write_records, _write_document), twice for a table (widths, then lines)
        out["consumerOffsets"] = _Offsets(out["consumerOffsets"], streamed)
    return out


class _Offsets:
    """The consumer offsets of parsed and streamed files, read again at each iteration (never held)."""

    def __init__(self, first: list, streamed: list):
        self._first, self._streamed = first, streamed

    def __iter__(self):
        return _chain(self._first, self._streamed)


def _chain(first: list, streamed: list):
    yield from first
    for f in streamed:
        for e in f.entries():
            yield {"file": f.name, "group": e.group, "topic": e.topic, "queueId": e.queue_id,
                   "committedOffset": e.offset}


_PLACEHOLDER = "\x00consumerOffsets\x00"


#: ``--format jsonl``: the record kind of each line, for each list of the summary, in the order written.
_RECORDS = (("files", "file"), ("topics", "topic"), ("groups", "group"), ("consumerOffsets", "consumerOffset"),
            ("delayOffsets", "delayOffset"))


def _write_records(info: dict, out) -> None:
    """``info`` as JSON Lines: a ``config`` line (the folder and the errors), then one line per file,
    topic, group, consumer offset and delay offset, each with ``"record"`` naming its kind (the
    consumer offsets written as they are read: memory is one entry)."""
    out.write(json.dumps({"record": "config", "config": info["config"], "errors": info["errors"]},
                         ensure_ascii=False) + "\n")
    for key, kind in _RECORDS:
        for d in info[key]:
            out.write(json.dumps({"record": kind, **d}, ensure_ascii=False) + "\n")


def _write_document(info: dict, out) -> None:
    """``info`` as one JSON document, its consumer offsets written as they are read (memory: one entry)."""
    offsets = info["consumerOffsets"]
    if isinstance(offsets, list):
        out.write(json.dumps(info, ensure_ascii=False) + "\n")
        return
    head, tail = json.dumps({**info, "consumerOffsets": _PLACEHOLDER}, ensure_ascii=False).split(
        json.dumps(_PLACEHOLDER), 1)
    out.write(head + "[")
    parts: list[str] = []
    sep = ""
    try:
        for d in offsets:
            parts.append(json.dumps(d, ensure_ascii=False))
            if len(parts) >= 8192:  # written in slices: memory stays at one slice
                out.write(sep + ", ".join(parts))
                parts, sep = [], ", "
    finally:  # a damaged file ends the list where it was read to; the error goes to stderr
        out.write((sep + ", ".join(parts) if parts else "") + "]" + tail + "\n")


def _offset_cells(o: dict) -> list:
    return [short(o["group"]), short(o["topic"]), o["queueId"], o["committedOffset"]]


def _print_config(info: dict, out) -> None:
    w = out.write
    w("files\n")
    print_table([[f["name"], f["source"], f["encoding"] or "", "yes" if f["valid"] else "no (empty)",
                  len(f["unknownKeys"])] for f in info["files"]],
                ["name", "source", "encoding", "valid", "unknownKeys"], out, "  ")
    for f in info["files"]:
        for warning in f["warnings"]:
            w(f"  {f['name']}: {warning}\n")
    for err in info["errors"]:
        w(f"  error: {err}\n")
    w(f"topics ({len(info['topics'])})\n")
    print_table([[short(t["topic"]), t["readQueueNums"], t["writeQueueNums"], t["permString"],
             "yes" if t["order"] else "no", t["topicSysFlag"],
             " ".join(f"{k}={v}" for k, v in (t["attributes"] or {}).items())] for t in info["topics"]],
                ["topic", "readQueueNums", "writeQueueNums", "permString", "order", "topicSysFlag", "attributes"],
                out, "  ")
    w(f"groups ({len(info['groups'])})\n")
    yn = {True: "yes", False: "no", None: ""}
    print_table([[short(g["group"]), yn[g["consumeEnable"]], yn[g["consumeBroadcastEnable"]],
             yn[g["consumeMessageOrderly"]], g["retryQueueNums"], g["retryMaxTimes"], g["brokerId"]]
            for g in info["groups"]],
                ["group", "consumeEnable", "consumeBroadcastEnable", "consumeMessageOrderly", "retryQueueNums",
                 "retryMaxTimes", "brokerId"], out, "  ")
    # Read twice (widths, then lines) rather than held: a large file has millions of offsets.
    from .tables import ColumnWidths, print_table_streamed
    offsets = info["consumerOffsets"]
    # committedOffset: the name lag gives the same value
    columns = ColumnWidths(["group", "topic", "queueId", "committedOffset"])
    count = 0
    for o in offsets:
        columns.add(_offset_cells(o))
        count += 1
    w(f"consumer offsets ({count})\n")
    print_table_streamed(columns, (_offset_cells(o) for o in offsets), out, "  ")
    w(f"delay offsets ({len(info['delayOffsets'])})\n")
    print_table([[d["level"], d["topic"], d["queueId"], d["offset"]] for d in info["delayOffsets"]],
                ["level", "topic", "queueId", "offset"], out, "  ")


#: Members of a table written by one ``json.dumps`` call; a larger table is written a member at a time.
_JSON_MEMBERS = 256
#: Text gathered before it is written.
_JSON_PIECE = 1 << 20


def _write_json(value, out, indent: int | None) -> None:
    """Write ``value`` as ``json.dumps(value, ensure_ascii=False, indent=indent)`` writes it (map keys as
    text), a piece at a time: a config model (the tables of a large ``consumerOffset.json`` are mappings
    read on demand) is neither copied into dicts nor turned into one string."""
    pieces: list[str] = []
    held = 0
    for piece in _json_pieces(value, indent, 0):
        pieces.append(piece)
        held += len(piece)
        if held >= _JSON_PIECE:
            out.write("".join(pieces))
            pieces, held = [], 0
    out.write("".join(pieces))


class _Large(Exception):
    """A mapping other than a dict too large to be copied into one for ``json.dumps``."""


def _small_mapping(value):
    from collections.abc import Mapping
    if isinstance(value, Mapping) and len(value) <= _JSON_MEMBERS:
        return dict(value.items())
    raise _Large if isinstance(value, Mapping) else TypeError(f"{type(value).__name__} is not JSON")


def _json_pieces(value, indent: int | None, level: int):
    from collections.abc import Mapping
    if not isinstance(value, (Mapping, list, tuple)) or len(value) <= _JSON_MEMBERS:
        try:
            text = json.dumps(value, ensure_ascii=False, indent=indent, default=_small_mapping)
        except _Large:  # a large table inside: written a member at a time below
            pass
        else:
            yield text if not indent or not level else text.replace("\n", "\n" + " " * (indent * level))
            return
    if isinstance(value, Mapping):
        items = ((json.dumps(str(k), ensure_ascii=False) + ": ", v) for k, v in value.items())
        brackets = "{}"
    else:
        items = (("", v) for v in value)
        brackets = "[]"
    inner = "" if indent is None else "\n" + " " * (indent * (level + 1))
    comma = ", " if indent is None else ","
    first = True
    for head, v in items:
        yield (brackets[0] if first else comma) + inner + head
        first = False
        yield from _json_pieces(v, indent, level + 1)
    if first:
        yield brackets
    else:
        yield ("" if indent is None else "\n" + " " * (indent * level)) + brackets[1]


def cmd_config(args: argparse.Namespace) -> int:
    store = open_from_args(args)
    if args.file is not None:
        from ..config import read_config_file
        from ..config.schema import known_files
        folder = next((d for d, n, _ in known_files() if n == args.file), "config")
        f = read_config_file(store.path(folder, args.file))
        model = f.model.to_json() if f.model is not None else None
        doc = {"name": f.name, "path": f.path, "source": f.source, "encoding": f.encoding,
               "unknownKeys": list(f.unknown_keys), "warnings": list(f.warnings), "model": model}
        _write_json(doc, sys.stdout, None if args.format == "jsonl" else 2)
        sys.stdout.write("\n")
        return 0
    files, errors = _read_config_files(store)
    info = config_summary(files, errors)
    info = {"config": store.path("config"), **info}
    if args.format == "jsonl":
        _write_records(info, sys.stdout)
    elif args.format == "json":
        _write_document(info, sys.stdout)
    else:
        _print_config(info, sys.stdout)
    for err in errors:
        sys.stderr.write(f"rmqformats: error: {err}\n")
    return 2 if errors else 0


# -- lag ---------------------------------------------------------------------------

#: Lag tables of at most this many rows are held once; longer ones are made again for each pass.
LAG_ROWS_HELD = 100_000
_LAG_HEADER = ["group", "topic", "queueId", "committedOffset", "minOffset", "maxOffset", "lag", "nextMessageStoreTime",
               "flags"]


def _lag_cells(r) -> list:
    return [short(r.group, 32), short(r.topic, 32), r.queue_id,
            "" if r.committed_offset is None else r.committed_offset, r.min_offset, r.max_offset, r.lag,
            "" if r.next_message_store_time is None else iso(r.next_message_store_time),
            ",".join(f for f, on in (("behind-min", r.behind_min), ("beyond-max", r.beyond_max),
                                      ("no-queue", not r.queue_found), ("batch", r.queue_type == "BatchCQ"),
                                      ("behind-commitlog", r.behind_commitlog > 0),
                                      ("max-overflow", r.max_overflow)) if on)]


def _flagged(r) -> bool:
    return r.flagged


def cmd_lag(args: argparse.Namespace) -> int:
    from itertools import islice

    from .tables import ColumnWidths, print_table_streamed
    store = open_from_args(args)
    rows = store.consumer_lag(group=args.group, topic=args.topic, with_store_time=args.store_time)
    filtered = args.group is not None or args.topic is not None
    if filtered and not rows:  # (makes the first row only)
        _unknown_lag(store, args)
    if args.behind and store.root is not None:
        # Messages the commit log holds past a queue's end: the queue is behind and the lag understated.
        from ..lag import LagRows
        from ..recovery import undispatched
        gaps = undispatched(store)

        def behind(r):
            if (r.topic, r.queue_id) not in gaps:
                return r
            return r._replace(behind_commitlog=gaps[(r.topic, r.queue_id)],
                              note="; ".join(filter(None, [r.note, (
                                  f"the queue is behind the commit log: {gaps[(r.topic, r.queue_id)]} message(s) past "
                                  f"its end are not in it yet, so the lag is understated by as many")])))
        rows = LagRows(lambda base=rows: (behind(r) for r in base))
    out = sys.stdout
    flagged = False
    count = 0
    if args.format == "jsonl":  # one pass: each row written as it is made
        for r in rows:
            count += 1
            flagged = flagged or _flagged(r)
            out.write(json.dumps(r.to_json_dict(), ensure_ascii=False) + "\n")
        return status.FINDINGS if flagged else status.OK
    if args.format == "json":  # one document, written as the rows are made (never held whole)
        totals: dict[str, int] = defaultdict(int)
        flagged_rows = 0
        out.write('{"rows": [')
        for r in rows:
            out.write(("" if count == 0 else ", ") + json.dumps(r.to_json_dict(), ensure_ascii=False))
            count += 1
            totals[r.group] += r.lag
            flagged_rows += _flagged(r)
        out.write("], " + json.dumps({"totalLag": dict(sorted(totals.items())), "flaggedRows": flagged_rows},
                                     ensure_ascii=False)[1:] + "\n")
        return status.FINDINGS if flagged_rows else status.OK
    # A table needs its widths before its first line: a short table is held, a long one read twice
    # (three times when it has notes), never held whole.
    head = list(islice(iter(rows), LAG_ROWS_HELD + 1))
    source = head if len(head) <= LAG_ROWS_HELD else rows
    if source is rows:
        del head
    columns = ColumnWidths(_LAG_HEADER)
    by_group: dict[str, int] = defaultdict(int)
    noted = False
    for r in source:
        count += 1
        columns.add(_lag_cells(r))
        by_group[r.group] += r.lag
        flagged = flagged or _flagged(r)
        noted = noted or bool(r.note)
    print_table_streamed(columns, (_lag_cells(r) for r in source), out)
    for g, total in sorted(by_group.items()):
        out.write(f"total lag {g}: {total}\n")
    if noted:
        for r in source:
            if r.note:
                out.write(f"note {r.group} {r.topic}/{r.queue_id}: {r.note}\n")
    if not count:
        sys.stderr.write("rmqformats: no committed consumer offsets\n")
    return status.FINDINGS if flagged else status.OK


def _unknown_lag(store: Store, args: argparse.Namespace) -> None:
    """Raise :class:`Unknown` for a ``--group`` or ``--topic`` with no committed offsets."""
    groups_seen: set[str] = set()
    topics_seen: set[str] = set()
    for r in store.consumer_lag(with_store_time=False):  # names only, not rows
        groups_seen.add(r.group)
        if args.group is None or r.group == args.group:
            topics_seen.add(r.topic)
    groups, topics = sorted(groups_seen), sorted(topics_seen)
    where = store.path("config", "consumerOffset.json")
    if args.group is not None and args.group not in groups:
        raise Unknown(f"unknown group {args.group!r}: no committed offsets in {where} "
                      f"(groups there: {', '.join(groups) or 'none'})")
    raise Unknown(f"unknown topic {args.topic!r}" + (f" for group {args.group!r}" if args.group else "")
                  + f": no committed offsets in {where} (topics there: {', '.join(topics) or 'none'})")


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("config", help="config/ JSON files: topics, groups, consumer and delay offsets",
                        description="The config/ JSON files of a store. --format jsonl writes one line per "
                                    "record, each with \"record\" naming its kind: config (the folder and the "
                                    "errors), then file, topic, group, consumerOffset, delayOffset; --format json "
                                    "writes the same as one document.")
    add_store_args(sp, formats=("table", "jsonl", "json"))
    sp.add_argument("--file", help="show one file's model as JSON (e.g. topics.json)")
    sp.set_defaults(func=cmd_config)

    sp = sub.add_parser("lag", help="consumer lag per group and queue, from consumerOffset.json and the queues")
    add_store_args(sp, formats=("table", "jsonl", "json"))
    sp.add_argument("--group", help="only this consumer group")
    sp.add_argument("--topic", help="only this topic")
    sp.add_argument("--store-time", action=argparse.BooleanOptionalAction, default=True,
                    help="read the next unconsumed message's store time (default: on)")
    sp.add_argument("--behind", action=argparse.BooleanOptionalAction, default=True,
                    help="read the commit log past the queues' ends and flag queues behind it, whose lag is "
                         "understated (exit status 1 when one is; default: on)")
    add_jobs(sp)
    sp.set_defaults(func=cmd_lag)
