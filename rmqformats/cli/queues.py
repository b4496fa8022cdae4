"""``queue``, ``lookup`` and ``check``: consume queues, the index files and their agreement with the commit log."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import sys

from ..consumequeue import SCHEDULE_TOPIC, tags_code
from . import bodies, present, status
from .common import UsageError, Unknown, iso, open_from_args, parse_time, short, print_table, add_store_args
from .common import add_jobs, release_arg
from .tables import print_rows_streamed, table_width, write_wrapped
from .common import add_commitlog_arg, refuse_empty_range

def _queue_positionals(args: argparse.Namespace) -> tuple[str | None, int | None]:
    """(topic, queue id) from ``[STORE] [TOPIC [QID]]``; with ``--sample`` there is no STORE."""
    values = list(args.positional)
    if not args.sample:
        if not values:
            raise UsageError("give a STORE path or --sample")
        args.store = values.pop(0)
    elif values and (len(values) > 2 or os.path.sep in values[0] or os.path.isdir(values[0])):
        raise UsageError(f"--sample reads the bundled sample store; give either it or STORE ({values[0]}), "
                         "not both")
    if len(values) > 2:
        raise UsageError("expected [STORE] [TOPIC [QID]]")
    topic = values[0] if values else None
    if len(values) == 2 and not values[1].isdigit():
        raise UsageError(f"QID must be a number 0 or more, not {values[1]!r}")
    if args.resolve is False and (args.body is not None or args.body_limit is not None):
        raise UsageError("--body and --body-limit need --resolve")
    refuse_empty_range("--from", args.from_offset, "--to", args.to_offset)
    return topic, int(values[1]) if len(values) == 2 else None


def _unit_row(r, args: argparse.Namespace | None = None) -> list:
    u = r.unit if hasattr(r, "unit") else r
    row = [u.cq_offset, u.commitlog_offset, u.size, u.tags_code]
    if hasattr(r, "status"):
        m = r.message
        row += [r.status.name] + ([iso(m.store_timestamp), m.tags or "", " ".join(m.keys), m.msg_id]
                                  if m is not None else ["", "", "", r.detail])
        if args is not None and _body_shown(args):
            row.append(_message_body_cell(m, args) if m is not None else "")
    return row


def _body_shown(args: argparse.Namespace) -> bool:
    return args.resolve and args.body not in (None, "none")


def _body_cell(data: bytes, args: argparse.Namespace) -> str:
    limit = bodies.TABLE_LIMIT if args.body_limit is None else args.body_limit
    return bodies.render(data, args.body, limit, table=True)


def _message_body_cell(m, args: argparse.Namespace) -> str:
    """A message's body cell; a body that does not decompress is shown as stored, after the reason (as the
    message table shows it)."""
    shown = _body_cell(m.shown_body, args)
    return shown if m.body_error is None else f"[not decompressed: {m.body_error}] {shown}"


def _unknown_queue(store, topic: str | None, queue_id: int | None) -> Unknown:
    """The error for a topic (or topic and queue id, or queue id of any topic) the store has no queue of."""
    listed = [*store.queues(), *store.batch_queues()]
    if topic is None:
        ids = sorted({q.queue_id for q in listed})
        return Unknown(f"unknown queue id {queue_id}: no topic under {store.path('consumequeue')} or "
                       f"{store.path('batchconsumequeue')} has it (queue ids there: "
                       f"{', '.join(map(str, ids)) or 'none'})")
    known = sorted({q.topic for q in listed})
    same = sorted(q.queue_id for q in listed if q.topic == topic)
    if same:
        return Unknown(f"unknown queue {topic}/{queue_id}: {store.path('consumequeue', topic)} has queue ids "
                       f"{', '.join(map(str, same))}")
    return Unknown(f"unknown topic {topic!r}: no consume queue under {store.path('consumequeue')} or "
                   f"{store.path('batchconsumequeue')} ({len(known)} topics there)")


def cmd_queue(args: argparse.Namespace) -> int:
    topic, queue_id = _queue_positionals(args)
    store = open_from_args(args)
    out = sys.stdout
    if args.outstanding is not None:
        rows = _group_rows(store, args.outstanding, topic, queue_id)
        if queue_id is None:
            return _outstanding_queues(args, store, rows)
        r = rows[0]
        # The units the group has not consumed: from its committed offset, or the queue's first when later.
        start = max(r.committed_offset or 0, r.min_offset)
        args.from_offset = start if args.from_offset is None else max(args.from_offset, start)
    if queue_id is None:
        infos = [("RocksDBConsumeQueue" if q.kind == "rocksdb" else kind, q)
                 for kind, found in (("ConsumeQueue", store.queues()), ("BatchConsumeQueue", store.batch_queues()))
                 for q in found if topic is None or q.topic == topic]
        if topic is not None and not infos:
            raise _unknown_queue(store, topic, None)
        if args.format == "jsonl":
            for kind, q in infos:
                out.write(json.dumps({"topic": q.topic, "queueId": q.queue_id, "type": kind,
                                      "minOffset": q.min_offset, "maxOffset": q.max_offset,
                                      "files": q.num_files, "error": q.error}, ensure_ascii=False) + "\n")
        else:
            # The type as the JSON names it (ConsumeQueue for a plain queue, never blank).
            print_table([[short(q.topic), q.queue_id, kind,
                     q.min_offset, q.max_offset, q.num_files, q.error or ""] for kind, q in infos],
                   ["topic", "queueId", "type", "minOffset", "maxOffset", "files", "error"], out)
        return 0
    cq = store.consume_queue(topic, queue_id, kind=args.kind)
    if not cq.files.files:
        bcq = store.batch_consume_queue(topic, queue_id)
        if bcq.files.files:
            return _batch_queue(args, bcq, topic, queue_id)
        raise _unknown_queue(store, topic, queue_id)
    stop = args.to_offset
    header = ["cqOffset", "commitLogOffset", "size", "tagsCode"]
    if args.resolve:
        header += ["status", "storeTimestamp", "tags", "keys", "msgId"] + (["body"] if _body_shown(args) else [])
    where = "RocksDB consume queue" if cq.kind == "rocksdb" else f"{len(cq.files.files)} file(s)"
    title = f"# {topic}/{queue_id}: offsets {cq.min_offset}..{cq.max_offset}, {where}"
    if args.resolve and _columns_resolve(cq):
        n = _write_resolved(cq, args, out, header, title)
    else:
        if args.resolve:  # a DLedger commit log: a unit at a time, through its reader
            items = cq.messages(args.from_offset, stop, tag=args.tag)
        elif args.tag is not None and topic == SCHEDULE_TOPIC:  # tags codes are delivery times: check messages
            items = (r.unit for r in cq.messages(args.from_offset, stop, tag=args.tag))
        else:
            items = cq.units(args.from_offset, stop, tag=args.tag)
        n = _write_queue(items, args, out, _unit_json, _unit_row, header, title)
    if n == 0 and args.limit != 0:
        sys.stderr.write(f"rmqformats: no unit of {topic}/{queue_id} matched\n")
    return 0


def _group_rows(store, group: str, topic: str | None, queue_id: int | None) -> list:
    """The ``lag`` rows of ``group`` (of ``topic``, of its queue ``queue_id``); :class:`Unknown` when none."""
    from ..lag import consumer_lag
    rows = [r for r in consumer_lag(store, group=group, topic=topic, with_store_time=False)
            if queue_id is None or r.queue_id == queue_id]
    if not rows:
        groups = sorted({r.group for r in consumer_lag(store, with_store_time=False)})
        if group not in groups:
            raise Unknown(f"unknown consumer group {group!r}: no committed offset of it in {store.path('config')} "
                          f"(groups there: {', '.join(groups) or 'none'})")
        where = topic if queue_id is None else f"{topic}/{queue_id}"
        raise Unknown(f"consumer group {group!r} has no offset on {where}; `rmqformats lag "
                      f"{shlex.quote(store.root)} --group {shlex.quote(group)}` lists the queues it has")
    return rows


def _outstanding_queues(args: argparse.Namespace, store, rows: list) -> int:
    """The queues a group has offsets on, with its committed offset and the messages it has not consumed."""
    out = sys.stdout
    names = {"SimpleCQ": "ConsumeQueue", "BatchCQ": "BatchConsumeQueue"}
    if args.format == "jsonl":
        for r in rows:
            out.write(json.dumps({"topic": r.topic, "queueId": r.queue_id, "type": names[r.queue_type],
                                  "minOffset": r.min_offset, "maxOffset": r.max_offset,
                                  "committedOffset": r.committed_offset, "outstanding": r.available},
                                 ensure_ascii=False) + "\n")
    else:
        print_table([[short(r.topic), r.queue_id, names[r.queue_type], r.min_offset,
                      r.max_offset, "" if r.committed_offset is None else r.committed_offset, r.available]
                     for r in rows],
                    ["topic", "queueId", "type", "minOffset", "maxOffset", "committedOffset", "outstanding"], out)
    return 0


def _bcq_unit_json(u) -> dict:
    """A batch consume-queue unit under the names of a consume-queue unit, plus its batch fields."""
    return {"cqOffset": u.msg_base_offset, "commitLogOffset": u.commitlog_offset, "size": u.size,
            "tagsCode": u.tags_code, "storeTime": u.store_time, "msgBaseOffset": u.msg_base_offset,
            "batchSize": u.batch_size, "unitIndex": u.index}


def _batch_queue(args: argparse.Namespace, bcq, topic: str, queue_id: int) -> int:
    """``queue`` for a batch consume queue: one row per message (queue offset), resolved or not."""
    out = sys.stdout
    if args.resolve:
        items = bcq.messages(args.from_offset, args.to_offset)
    else:
        items = _unit_messages(bcq, args.from_offset, args.to_offset)
    if args.tag is not None:
        code = tags_code(args.tag)
        items = (item for item in items if (item.tags == args.tag if args.resolve else item[1].tags_code == code))
    header = ["cqOffset", "commitLogOffset", "size", "tagsCode", "msgBaseOffset", "batchSize", "storeTime"]
    if args.resolve:
        header += ["tags", "keys", "msgId"] + (["body"] if _body_shown(args) else [])
    n = _write_queue(items, args, out, _bcq_json, _bcq_row, header,
                     f"# {topic}/{queue_id} (batch consume queue): offsets {bcq.min_offset}..{bcq.max_offset}, "
                     f"{len(bcq.files.files)} file(s)")
    if n == 0 and args.limit != 0:
        sys.stderr.write(f"rmqformats: no message of {topic}/{queue_id} matched\n")
    return 0


def _write_queue(items, args: argparse.Namespace, out, json_of, row_of, header: list[str], title: str) -> int:
    """``queue``'s output of ``items`` (at most ``--limit`` of them): a JSON line each (``json_of``), or a table
    of ``row_of`` rows under the line ``title``, written a block at a time; returns how many it wrote."""
    if args.limit is not None:
        items = itertools.islice(items, args.limit)
    if args.format == "jsonl":
        n = 0
        for n, item in enumerate(items, 1):
            out.write(json.dumps(json_of(item, args), ensure_ascii=False) + "\n")
        return n
    out.write(title + "\n")
    return print_rows_streamed((row_of(item, args) for item in items), header, out)


def _columns_resolve(cq) -> bool:
    """Whether ``queue --resolve`` reads this queue's messages as columns (the module that does so is
    imported with ``--resolve`` only)."""
    from ..columnar.resolve import can_resolve
    return can_resolve(cq)


#: The message columns a resolved unit's table row shows (``bodyError`` for a body that does not decompress).
_RESOLVED_TABLE_COLUMNS = ("storeTimestamp", "tags", "keys", "msgId", "body", "bodyError")


def _write_resolved(cq, args: argparse.Namespace, out, header: list[str], title: str) -> int:
    """``queue --resolve`` from the resolved units' columns (:mod:`rmqformats.columnar.resolve`): the text
    :func:`_write_queue` makes of :func:`_unit_json` or :func:`_unit_row`; returns how many units it wrote."""
    from ..columnar.resolve import resolved_batches
    from ..export import JSONL_COLUMNS
    from .tables import print_columns_streamed
    jsonl = args.format == "jsonl"
    batches = _at_most(resolved_batches(cq, args.from_offset, args.to_offset, tag=args.tag,
                                        columns=JSONL_COLUMNS if jsonl else _RESOLVED_TABLE_COLUMNS), args.limit)
    if not jsonl:
        out.write(title + "\n")
        return print_columns_streamed((_resolved_cells(b, args) for b in batches), header, out)
    from .common import byte_stream
    stream = byte_stream(out)
    n = 0
    for batch in batches:
        for piece in _body_pieces(batch):
            stream.write(_resolved_jsonl(piece, args))
            n += piece.units.num_rows
    return n


def _at_most(batches, limit: int | None):
    """The resolved batches up to ``limit`` units in all."""
    if limit is None:
        yield from batches
        return
    left = limit
    for batch in batches:
        if left <= 0:
            return
        if batch.units.num_rows > left:
            batch = _units_slice(batch, 0, left)
        left -= batch.units.num_rows
        yield batch


def _units_slice(batch, start: int, stop: int):
    """The units ``start`` to ``stop - 1`` of a resolved batch, with their messages."""
    import numpy as np

    from ..columnar.resolve import ResolvedBatch
    before = int(np.count_nonzero(batch.ok[:start]))
    ok = batch.ok[start:stop]
    return ResolvedBatch(batch.units.slice(start, stop - start),
                         batch.messages.slice(before, int(np.count_nonzero(ok))), ok)


def _body_pieces(batch):
    """A resolved batch in pieces whose messages' bodies are bounded in bytes (their text is made whole)."""
    import numpy as np

    from ..export import text_slices
    pieces = list(text_slices(batch.messages))
    if len(pieces) <= 1:
        yield batch
        return
    rows = np.flatnonzero(batch.ok)
    start = 0
    done = 0
    for i, piece in enumerate(pieces):
        done += piece.num_rows
        stop = len(batch.ok) if i == len(pieces) - 1 else int(rows[done - 1]) + 1
        yield _units_slice(batch, start, stop)
        start = stop


def _scattered(values, ok, fill):
    """An array with a row per unit: the values of the units ``ok`` marks (one per such unit, in order),
    ``fill`` (an Arrow scalar) elsewhere."""
    import numpy as np
    import pyarrow as pa

    from ..frames import from_numpy
    if ok.all():
        return values
    index = np.where(ok, np.cumsum(ok) - 1, len(values))
    return pa.concat_arrays([values, pa.repeat(fill.cast(values.type), 1)]).take(from_numpy(index))


def _resolved_jsonl(batch, args: argparse.Namespace) -> memoryview:
    """The JSON Lines of a resolved batch: :func:`_unit_json` of each unit."""
    import pyarrow as pa

    from ..export import OPTIONAL_JSON_KEYS, json_objects, jsonl_lines, text_bytes
    from ..frames import scalar
    messages = batch.messages
    columns, optional = dict(zip(messages.schema.names, messages.columns)), frozenset()
    if args.body not in (None, "base64") or args.body_limit is not None:  # (else the body stays in its place)
        columns, optional = bodies.json_columns(columns, messages.column("body"), args.body, args.body_limit)
    objects = json_objects(pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns)),
                           OPTIONAL_JSON_KEYS | optional)
    units = batch.units
    names = ["cqOffset", "commitLogOffset", "size", "tagsCode", "status"]
    lines = pa.RecordBatch.from_arrays(
        [units.column(c) for c in names] + [_scattered(objects, batch.ok, scalar("null", pa.large_string())),
                                            units.column("detail")],
        names=names + ["message", "detail"])
    return text_bytes(jsonl_lines(lines, frozenset(("detail",)), raw=frozenset(("message",))))


def _resolved_cells(batch, args: argparse.Namespace) -> list:
    """The table cells of a resolved batch: :func:`_unit_row` of each unit, a string array per column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..export import stored_message_cells
    from ..frames import from_numpy, scalar
    units, messages, ok = batch.units, batch.messages, batch.ok
    empty = scalar("")
    cells = [pc.cast(units.column(c), pa.string()) for c in ("cqOffset", "commitLogOffset", "size", "tagsCode")]
    cells.append(units.column("status"))
    *shown, msg_id = stored_message_cells(messages)  # the message table's cells of the same columns
    cells += [_scattered(c, ok, empty) for c in shown]
    # No message: the reason in the msgId column.
    cells.append(pc.if_else(from_numpy(ok), _scattered(msg_id, ok, empty), pc.fill_null(units.column("detail"), empty)))
    if _body_shown(args):  # (no message: an empty body's cell, which is empty in every view)
        from .messages import _body_cells
        cells.append(_scattered(pc.cast(_body_cells(messages, args), pa.string()), ok, empty))
    return cells


def _unit_json(item, args: argparse.Namespace) -> dict:
    """A ``queue`` JSON line of a consume queue's unit, resolved (a :class:`ResolvedUnit`) or not."""
    if not args.resolve:
        return item.to_json_dict()
    d = item.unit.to_json_dict()
    d["status"] = item.status.name
    m = item.message
    d["message"] = (bodies.apply_json(m.to_json_dict(), m.shown_body, args.body, args.body_limit)
                    if m is not None else None)
    if item.detail:
        d["detail"] = item.detail
    return d


def _bcq_json(item, args: argparse.Namespace) -> dict:
    """A ``queue`` JSON line of a batch consume queue's message: resolved, or ``(queue offset, unit)``."""
    if not args.resolve:
        q, u = item
        d = _bcq_unit_json(u)
        d["cqOffset"] = q
        d["innerIndex"] = q - u.msg_base_offset
        return d
    d = _bcq_unit_json(item.unit)
    d["cqOffset"] = item.queue_offset
    d["status"] = "OK"
    if item.inner is not None:
        # The record is the outer batch: its fields once, without its body (the item's body is the
        # message's); the item's own values next to it.
        record = item.message.to_json_dict()
        record.pop("body")
        d["message"] = record
        d["innerIndex"] = item.queue_offset - item.unit.msg_base_offset
        d["innerProperties"] = item.inner.properties
        d["innerFlag"] = item.inner.flag
        d.update({("inner" + k[0].upper() + k[1:]): v
                  for k, v in bodies.json_fields(item.inner.body, args.body, args.body_limit).items()})
    else:
        m = item.message
        d["message"] = bodies.apply_json(m.to_json_dict(), m.body, args.body, args.body_limit)
    return d


def _bcq_row(item, args: argparse.Namespace) -> list:
    """A ``queue`` table row of a batch consume queue's message: resolved, or ``(queue offset, unit)``."""
    if args.resolve:
        return [item.queue_offset, item.unit.commitlog_offset, item.unit.size, item.unit.tags_code,
                item.unit.msg_base_offset, item.unit.batch_size, iso(item.message.store_timestamp),
                item.tags or "", " ".join(k for k in (item.properties.get("KEYS") or "").split(" ") if k),
                item.message.msg_id] + ([_body_cell(item.body, args)] if _body_shown(args) else [])
    q, u = item
    return [q, u.commitlog_offset, u.size, u.tags_code, u.msg_base_offset, u.batch_size, iso(u.store_time)]


def _unit_messages(bcq, start: int | None, stop: int | None):
    """``(queue offset, unit)`` for every message of a batch consume queue from ``start`` to ``stop - 1``,
    without reading the commit log: one row per message, as with ``--resolve``."""
    start = bcq.min_offset if start is None else max(start, bcq.min_offset)
    stop = bcq.max_offset if stop is None else min(stop, bcq.max_offset)
    if start >= stop:
        return
    for u in bcq.units(bcq.find(start).index):
        if u.msg_base_offset >= stop:
            return
        for q in range(max(start, u.msg_base_offset), min(stop, u.end_offset)):
            yield q, u


# -- lookup ------------------------------------------------------------------------

def _index_folder(store, args: argparse.Namespace) -> str:
    """The store's index folder; an :class:`IndexFileError` when it holds no index file (nothing to search)."""
    from ..errors import IndexFileError
    folder = store.path("index")
    if os.path.isdir(folder) and any(os.path.isfile(os.path.join(folder, n)) for n in os.listdir(folder)):
        return folder
    raise IndexFileError(folder, None, f"{'no index files' if os.path.isdir(folder) else 'no such folder'}: "
                                       "lookup searches the index files, and this store has none (a broker with "
                                       "messageIndexEnable=false, or files deleted); `rmqformats messages "
                                       f"{shlex.quote(store.root)} --topic {shlex.quote(args.topic)} --key "
                                       f"{shlex.quote(args.key)}` finds the messages by scanning the commit log")


def _no_hits(folder: str, args: argparse.Namespace) -> str:
    """Why a lookup found nothing, in words: no entry for the key, or no index file in the time window asked,
    with the times the index files cover."""
    from ..index import LONG_MAX, IndexFiles
    begin = 0 if args.begin is None else args.begin
    end = LONG_MAX if args.end is None else args.end
    with IndexFiles(folder, num_hash_slots=args.hash_slots, num_index=args.index_num) as files:
        written = [f for f in files if f.header.num_entries > 0]
        searched = [f for f in written if f.is_time_matched(begin, end)]
        if written:
            low = min(f.header.begin_timestamp for f in written)
            high = max(f.header.end_timestamp for f in written)
            cover = (f"the {len(written)} index file(s) with entries in {folder} cover store times {iso(low)} "
                     f"to {iso(high)}")
        else:
            cover = f"the {len(files)} index file(s) in {folder} hold no entries yet"
    if written and not searched:
        window = " and ".join(f"{name} {iso(v)}" for name, v in (("--begin", args.begin), ("--end", args.end))
                              if v is not None)
        return f"no index file covers the window asked ({window}): {cover}"
    return f"no index entry for key {args.key!r} in topic {args.topic!r}: {cover}"


def cmd_lookup(args: argparse.Namespace) -> int:
    refuse_empty_range("--begin", args.begin, "--end", args.end, closed=True, times=True)
    store = open_from_args(args)
    folder = _index_folder(store, args)
    hits = store.lookup(args.topic, args.key, begin=args.begin, end=args.end, max_num=args.max,
                        check_keys=not args.raw, num_hash_slots=args.hash_slots, num_index=args.index_num)
    out = sys.stdout
    rows = []
    for h in hits:
        m = h.message
        if args.format == "jsonl":
            d = {"commitLogOffset": h.commitlog_offset, "indexFile": h.index_file, "entry": h.entry,
                 "storeTimeFromIndex": h.store_time_approx, "keyMatches": h.key_matches}
            if h.error:
                d["error"] = h.error
            if not args.raw:
                d["message"] = m.to_json_dict() if m is not None else None
            out.write(json.dumps(d, ensure_ascii=False) + "\n")
        elif args.raw:
            rows.append([h.commitlog_offset, h.index_file, h.entry, iso(h.store_time_approx)])
        else:
            rows.append([h.commitlog_offset, h.index_file, h.entry,
                         iso(m.store_timestamp) if m is not None else "", short(m.topic) if m else "",
                         m.queue_id if m else "", m.queue_offset if m else "", m.tags or "" if m else "",
                         " ".join(m.keys) if m else "", m.msg_id if m else (h.error or "")])
    if not hits:
        sys.stderr.write(f"rmqformats: {_no_hits(folder, args)}\n")
    if args.format == "table":
        if args.raw:
            print_table(rows, ["commitLogOffset", "indexFile", "entry", "storeTimeFromIndex"], out)
        else:
            print_table(rows, ["commitLogOffset", "indexFile", "entry", "storeTimestamp", "topic", "queueId", "queueOffset",
                          "tags", "keys", "msgId"], out)
    return 0


# -- check -------------------------------------------------------------------------

def _write_place(label: str, place) -> None:
    """``label  path @ 0x…`` on one line, or, when that does not fit the width, the path on a line of its own."""
    out = sys.stdout
    line = f"{'':<18}{label:<11} {place}"
    limit = table_width(out)
    if limit is None or len(line) <= limit:
        out.write(line + "\n")
        return
    where = "" if place.offset is None else present.place("", place.offset)  # as the one-line `path @ 0x…` says it
    out.write(f"{'':<18}{label}{where}{' (no such file)' if place.absent else ''}, in\n{place.path}\n")


#: ``check --format jsonl``: the record kind of each line, for each list of the report, in the order written.
CHECK_RECORDS = (("unreadable", "unreadable"), ("problems", "problem"), ("findings", "finding"),
                 ("configFindings", "configFinding"))


def _config_findings(store, release: str | None) -> list[dict]:
    """The config files the broker of ``release`` may not parse: every file of ``config/`` holding a name
    without quotes (fastjson 1's integer map keys), which 5.5.0's fastjson2 refused (apache/rocketmq #10284),
    as notes, the same routine and text as ``preflight``'s. Without ``release``, each applies when upgrading
    to the rule's release or later; for a release before it, there are none."""
    if store.root is None:
        return []
    from ..errors import place
    from ..config.unquoted import unquoted_names
    from ..preflight.release_rules import FASTJSON2_UNQUOTED as rule, fastjson2_source, holds_for, unquoted_text
    if release is not None and not holds_for(release, rule):
        return []
    applies = (f"release {release}" if release is not None
               else f"when upgrading to {rule.release} or later")
    return [{"severity": "note", "kind": "config-unparsable", "path": found.path, "offset": found.offset,
             "place": place(found.path, found.offset), "key": found.key, "object": found.owner,
             "appliesTo": applies, "text": unquoted_text(found), "rule": rule.to_json_dict(),
             "source": fastjson2_source()}
            for found in unquoted_names(os.path.join(store.root, "config"))]


def _write_check_lines(doc: dict, out) -> None:
    """The report as JSON Lines: a ``check`` line (the verdict and the counts), then one line per
    unreadable queue, unit mismatch (``problem``) and finding, then the ``recovery`` line (what a
    restart would do), each with ``"record"`` naming its kind."""
    lists = {*dict(CHECK_RECORDS), "recovery"}
    out.write(json.dumps({"record": "check", **{k: v for k, v in doc.items() if k not in lists}},
                         ensure_ascii=False, default=str) + "\n")
    for key, kind in CHECK_RECORDS:
        for r in doc.get(key, ()):
            out.write(json.dumps({"record": kind, **r}, ensure_ascii=False, default=str) + "\n")
    if "recovery" in doc:
        out.write(json.dumps({"record": "recovery", **doc["recovery"]}, ensure_ascii=False, default=str) + "\n")


def cmd_check(args: argparse.Namespace) -> int:
    store = open_from_args(args)
    if args.topic is not None or args.queue is not None:
        listed = [*store.queues(), *store.batch_queues()]
        if args.topic is not None and not any(q.topic == args.topic for q in listed):
            raise _unknown_queue(store, args.topic, None)
        if args.queue is not None and not any(q.queue_id == args.queue and args.topic in (None, q.topic)
                                              for q in listed):
            raise _unknown_queue(store, args.topic, args.queue)
    cross = None
    if args.both_ways and store.root is not None:
        from ..recovery import Severity, cross_check
        cross = cross_check(store, index=args.index, timer=args.timer, max_findings=args.max_problems,
                            index_safe=args.index_safe)
    # Queues whose every unit the walk from the commit log's side found right are not read again.
    report = store.check_consistency(topic=args.topic, queue_id=args.queue, max_problems=args.max_problems,
                                     verified=cross.verified if cross is not None else None,
                                     queues=cross.listed if cross is not None else None,
                                     counted=cross.counted if cross is not None else None)
    problems = list(report.problems)
    if cross is not None:
        end = cross.recovery.data_end
        if end is not None:  # units past the end of data are reported by the cross-check, with both places
            problems = [p for p in problems if p.unit.commitlog_offset < end.offset]
        findings = [f for f in cross.findings
                    if (args.topic is None or f.topic in (None, args.topic))
                    and (args.queue is None or f.queue_id in (None, args.queue))]
    ok = not problems and not report.unreadable and (cross is None or cross.ok)
    config_findings = _config_findings(store, args.release)  # notes: the verdict stays as it is
    if args.format in ("jsonl", "json"):
        doc = {
            "ok": ok, "queues": report.queues, "units": report.units, "deletedUnits": report.deleted,
            "problems": [{"topic": p.topic, "queueId": p.queue_id, "cqOffset": p.cq_offset, "where": p.where,
                          "field": p.field, "unit": p.unit.to_json_dict(), "unitValue": p.expected,
                          "recordValue": p.found} for p in problems],
            "unreadable": [{"topic": t, "queueId": q, "error": e} for t, q, e in report.unreadable],
        }
        if cross is not None:
            doc.update({"messages": cross.messages, "dispatchedMessages": cross.dispatched,
                        "indexedMessages": cross.indexed, "indexEntries": cross.index_entries,
                        "timerUnits": cross.timer_units,
                        "counts": {k.value: n for k, n in cross.counts.items()},
                        "findings": [f.to_json_dict() for f in findings],
                        "recovery": cross.recovery.to_json_dict()})
        doc["configFindings"] = config_findings
        if args.format == "json":
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, default=str, indent=2) + "\n")
        else:
            _write_check_lines(doc, sys.stdout)
    else:
        w = sys.stdout.write
        w(f"consume queues  {report.queues:,} queue(s), {report.units:,} unit(s) checked against the commit log\n")
        if report.deleted:
            w(f"                {report.deleted:,} unit(s) point at deleted commit-log segments (not checked)\n")
        if cross is not None:
            write_wrapped(f"commit log      {cross.messages:,} message(s) checked against the queues "
                          f"({cross.dispatched:,} dispatched to one), the index ({cross.indexed:,} with keys; "
                          f"{cross.index_entries:,} entries) and the timer log ({cross.timer_units:,} units)",
                          sys.stdout, 16)
        for t, q, e in report.unreadable:
            w(f"unreadable      {t}/{q}: {e}\n")
        for p in problems:
            w(f"mismatch        {p}\n")
        if cross is not None:
            for f in findings:
                write_wrapped(f"{'problem' if f.severity is Severity.PROBLEM else 'note':<16}{f.kind.value}: "
                              f"{f.text}", sys.stdout, 16)
                if f.commitlog is not None:
                    _write_place("commit log", f.commitlog)
                if f.other is not None:
                    _write_place(f.other_label(), f.other)
            if cross.truncated:
                w("counts          " + ", ".join(f"{k.value} {n}" for k, n in cross.counts.items()) +
                  f" (the first {len(cross.findings)} listed)\n")
        from ..recovery.crosscheck import Place
        for c in config_findings:
            write_wrapped(f"note            {c['kind']} ({c['appliesTo']}): {c['text']}", sys.stdout, 16)
            _write_place("config", Place(c["path"], c["offset"]))
            write_wrapped(f"rule            {c['rule']['name']} (from {c['rule']['release']}; "
                          f"{c['rule']['method']}; {c['rule']['knownFrom']})", sys.stdout, 16)
            # A citation (TAG:path) has no space: one longer than a line is broken after a `/`.
            write_wrapped(f"source          {c['source']}", sys.stdout, 16, break_after="/")
        w("result          " + ("consistent\n" if ok else "INCONSISTENT\n"))
    return status.OK if ok else status.FINDINGS


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("queue", help="consume queues: list them, or the units of one (resolved to messages)",
                        description="Without TOPIC/QID, list the consume queues with their offset ranges; "
                                    "with them, list that queue's units.")
    sp.add_argument("positional", nargs="*", metavar="STORE TOPIC QID",
                    help="store root, then optionally a topic and a queue id (no STORE with --sample)")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    sp.add_argument("--format", choices=["table", "jsonl"], default="table", help="output format")
    add_commitlog_arg(sp)
    sp.add_argument("--resolve", action="store_true", help="read the message each unit points at")
    sp.add_argument("--tag", help="only units of this tag (tags-code match, checked on the message with --resolve)")
    sp.add_argument("--from", dest="from_offset", type=bodies.non_negative,
                    help="first logical offset (default: the queue's min)")
    sp.add_argument("--to", dest="to_offset", type=bodies.non_negative, help="logical offset to stop before")
    sp.add_argument("--limit", type=bodies.non_negative, help="stop after this many rows")
    sp.add_argument("--outstanding", metavar="GROUP",
                    help="the units consumer group GROUP has not consumed: from its committed offset (the "
                         "queue's first, if later) on; without QID, the queues it has offsets on, with its "
                         "committed offset and how many it has not consumed (as `lag` counts them)")
    bodies.add_body_args(sp, "with --resolve, message bodies")
    sp.add_argument("--kind", choices=["file", "rocksdb"],
                    help="read the queue's files or the RocksDB consume queue (default: the files when the "
                         "queue has a folder, as the broker prefers them)")
    sp.set_defaults(func=cmd_queue, store=None)

    sp = sub.add_parser("lookup", help="find messages by key or UNIQ_KEY through the index files",
                        description="Search the index files as the broker's queryMessage does (newest file "
                                    "first, at most --max hits) and read each hit's message; hits whose "
                                    "message does not carry the key (hash collisions) are dropped unless --raw.")
    add_store_args(sp)
    sp.add_argument("--topic", required=True, help="the message's stored topic")
    sp.add_argument("--key", required=True, help="one of the KEYS, or the UNIQ_KEY")
    sp.add_argument("--begin", type=parse_time,
                    help="store time >= (epoch ms or ISO 8601); the index keeps store times to the second "
                         "(whole seconds after the file's first message), so a message is matched by that "
                         "second: as the broker, a --begin with milliseconds may miss messages stored in the "
                         "same second")
    sp.add_argument("--end", type=parse_time,
                    help="store time <= (epoch ms or ISO 8601), to the index's one-second resolution as --begin")
    sp.add_argument("--max", type=bodies.positive, default=64,
                    help="at most this many hits (the broker's maxMsgsNumBatch: 64)")
    sp.add_argument("--raw", action="store_true",
                    help="the index hits exactly as the broker returns them, without reading the messages")
    sp.add_argument("--hash-slots", type=int, help="maxHashSlotNum of the broker (default: inferred from the size)")
    sp.add_argument("--index-num", type=int, help="maxIndexNum of the broker (default: inferred from the size)")
    sp.set_defaults(func=cmd_lookup)

    sp = sub.add_parser("check", help="check the consume queues, index and timer log against the commit log, "
                                      "both ways",
                        description="Check that every consume-queue unit agrees with the commit-log record it "
                                    "points at, and, from the commit log's side, that every message has the "
                                    "consume-queue units and index entries the broker's dispatch writes, that no "
                                    "unit, index entry or timer-log unit points past the end of the data or at "
                                    "nothing, and what a restart or an abnormal recovery would dispatch again or "
                                    "truncate given the checkpoint. Each finding names the file and byte on both "
                                    "sides; the findings of the walk come in commit-log order, and --max-problems "
                                    "keeps the first ones (all are counted). Config files with names a later "
                                    "release cannot parse (the unquoted "
                                    "keys 5.5.0's fastjson2 refused) are named with the key, for --release or an "
                                    "upgrade. Notes (what the broker would do) do not make the store inconsistent. "
                                    "--format jsonl writes a 'check' line (the verdict and the counts), then a "
                                    "line per unreadable queue, unit mismatch ('problem'), finding and config note "
                                    "('configFinding'), then the "
                                    "'recovery' line, each with \"record\" naming its kind; --format json is the "
                                    "same report as one document.",
                        epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store_args(sp, formats=("table", "jsonl", "json"))
    sp.add_argument("--topic", help="only this topic's queues")
    sp.add_argument("--queue", type=bodies.non_negative, help="only this queue id")
    sp.add_argument("--max-problems", type=bodies.positive, default=1000,
                    help="list at most this many mismatches and findings (all are counted)")
    sp.add_argument("--both-ways", action=argparse.BooleanOptionalAction, default=True,
                    help="also check from the commit log's side (default: on; off checks only the units)")
    sp.add_argument("--index", action=argparse.BooleanOptionalAction, default=True,
                    help="check the index files (default: on; off for a broker with messageIndexEnable=false)")
    sp.add_argument("--timer", action=argparse.BooleanOptionalAction, default=True,
                    help="check the timer log (default: on)")
    sp.add_argument("--index-safe", action="store_true",
                    help="the broker runs with messageIndexSafe=true (abnormal recovery also waits for the index)")
    sp.add_argument("--release", metavar="X", type=release_arg,
                    help="the broker release that will start (default: none; what a later release cannot read, "
                         "such as the unquoted config keys 5.5.0's fastjson2 refused, is a note that applies "
                         "when upgrading to it)")
    add_jobs(sp)
    sp.set_defaults(func=cmd_check)


