"""The ``rmqformats`` command: inspect a store and list its messages."""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

from tqdm import tqdm

from . import __version__
from .commitlog import Scan
from .consumequeue import tags_code
from .errors import InvalidMessageIdError, RmqFormatError
from .message import Message, millis_to_datetime, to_millis
from .sample import sample_store_path
from .store import Store, open_store

_PROGRESS_EVERY = 4096
#: Rows decoded at a time for the messages table.
_TABLE_BATCH = 8192
#: Bytes of commit log the messages command reads at a time (small: it prints as it reads).
_MESSAGES_WINDOW = 8 << 20


def _parse_time(text: str) -> int:
    """Milliseconds since the epoch from epoch milliseconds or an ISO 8601 time (UTC if naive)."""
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        return to_millis(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not epoch milliseconds or an ISO 8601 time: {text!r}") from None


def _iso(ms: int) -> str:
    return millis_to_datetime(ms).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _open(args: argparse.Namespace) -> Store:
    if args.sample:
        return open_store(sample_store_path())
    if not args.store:
        raise SystemExit("rmqformats: error: give a STORE path or --sample")
    return open_store(args.store)


def _with_progress(scan: Scan, total: int, label: str) -> Iterator[Message]:
    """Yield from ``scan`` while a progress bar on stderr follows its bytes (only on a TTY)."""
    bar = tqdm(total=total, unit="B", unit_scale=True, desc=label, file=sys.stderr,
               disable=not sys.stderr.isatty(), leave=False)
    try:
        for i, msg in enumerate(scan, 1):
            if i % _PROGRESS_EVERY == 0:
                bar.update(scan.bytes_done - bar.n)
            yield msg
        bar.update(total - bar.n)
    finally:
        bar.close()


def _short(text: str, width: int = 48) -> str:
    """``text`` cut in the middle to ``width`` characters, for table cells (JSON keeps it whole)."""
    if len(text) <= width:
        return text
    half = (width - 1) // 2
    return f"{text[:half]}…{text[-(width - 1 - half):]}"


def _table(rows: list[list], header: list[str], out, indent: str = "") -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        out.write(indent + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")


# -- inspect -----------------------------------------------------------------

def inspect_store(store: Store, *, verify_crc: bool = False, progress: bool = True) -> dict:
    """Summarise a store's commit log: segments, counts per topic and queue, time range, data end."""
    log = store.commitlog
    scan = log.scan(verify_crc=verify_crc)
    it = _with_progress(scan, log.total_size, "scan") if progress else scan
    per_queue: dict[tuple[str, int], int] = Counter()
    per_segment: dict[str, int] = Counter()
    versions: Counter = Counter()
    first_ts = last_ts = None
    count = 0
    for msg in it:
        count += 1
        per_queue[(msg.topic, msg.queue_id)] += 1
        per_segment[msg.segment] += 1
        versions[f"V{msg.version}"] += 1
        ts = msg.store_timestamp
        first_ts = ts if first_ts is None or ts < first_ts else first_ts
        last_ts = ts if last_ts is None or ts > last_ts else last_ts
    end = scan.end
    blanks = {b.segment: b for b in scan.blanks}
    topics: dict[str, dict] = defaultdict(lambda: {"messages": 0, "queues": {}})
    for (topic, qid), n in sorted(per_queue.items()):
        topics[topic]["messages"] += n
        topics[topic]["queues"][str(qid)] = n
    beyond = sum(s.size for s in log.segments if end and end.segment and s.start_offset > end.offset)
    gaps = [{"after": a.name, "expectedOffset": a.start_offset + a.size, "next": b.name}
            for a, b in zip(log.segments, log.segments[1:]) if b.start_offset != a.start_offset + a.size]
    return {
        "store": store.root or log.path,
        "storeRoot": store.root is not None,
        "abortFile": store.has_abort_file if store.root else None,
        **(_store_parts(store) if store.root else {}),
        "segments": [
            {"name": s.name, "startOffset": s.start_offset, "size": s.size,
             "messages": per_segment.get(s.path, 0),
             "blankOffset": blanks[s.path].commitlog_offset if s.path in blanks else None}
            for s in log.segments
        ],
        "segmentGaps": gaps,
        "messages": count,
        "recordVersions": dict(sorted(versions.items())),
        "blankRecords": len(scan.blanks),
        "firstStoreTimestamp": first_ts,
        "lastStoreTimestamp": last_ts,
        "topics": dict(sorted(topics.items())),
        "dataEnd": {
            "commitLogOffset": end.offset, "reason": end.reason.name, "description": end.reason.value,
            "clean": end.reason.is_clean, "segment": end.segment, "fileOffset": end.file_offset,
            "detail": end.detail, "bytesAfterInLaterSegments": beyond,
        },
    }


def _store_parts(store: Store) -> dict:
    """Shutdown state, checkpoint, consume queues and index files of a store root."""
    state = store.state()
    parts: dict = {"shutdown": {
        "clean": state.clean_shutdown, "summary": state.summary(), "abortFile": state.abort_exists,
        "abortPid": state.abort_pid, "lockFile": state.lock_exists}}
    try:
        cp = store.checkpoint()
        parts["checkpoint"] = None if cp is None else {
            "physicMsgTimestamp": cp.physic_msg_timestamp, "logicsMsgTimestamp": cp.logics_msg_timestamp,
            "indexMsgTimestamp": cp.index_msg_timestamp, "masterFlushedOffset": cp.master_flushed_offset,
            "confirmPhyOffset": cp.confirm_phy_offset}
    except RmqFormatError as exc:
        parts["checkpoint"] = {"error": str(exc)}
    queues = store.queues()
    batch = store.batch_queues()
    parts["consumeQueues"] = {
        "queues": len(queues), "units": sum(q.count for q in queues),
        "batchQueues": len(batch), "batchMessages": sum(q.count for q in batch),
        "errors": [{"topic": q.topic, "queueId": q.queue_id, "error": q.error}
                   for q in [*queues, *batch] if q.error]}
    try:
        index = store.index()
        files = index.files
        parts["indexFiles"] = {"files": len(files), "entries": sum(max(f.header.index_count - 1, 0) for f in files),
                               "hashSlots": files[0].num_hash_slots if files else None,
                               "indexNum": files[0].num_index if files else None}
    except RmqFormatError as exc:
        parts["indexFiles"] = {"error": str(exc)}
    return parts


def _print_inspect(info: dict, out) -> None:
    w = out.write
    w(f"store      {info['store']}\n")
    if "shutdown" in info:
        w(f"shutdown   {info['shutdown']['summary']}\n")
    elif info["abortFile"] is not None:
        w(f"shutdown   {'unclean (abort file present)' if info['abortFile'] else 'clean (no abort file)'}\n")
    cp = info.get("checkpoint")
    if cp and "error" in cp:
        w(f"checkpoint {cp['error']}\n")
    elif cp:
        stamps = [f"{name} {_iso(cp[key]) if cp[key] > 0 else 0}" for name, key in (
            ("physic", "physicMsgTimestamp"), ("logics", "logicsMsgTimestamp"), ("index", "indexMsgTimestamp"))]
        w(f"checkpoint {', '.join(stamps)}\n")
        if cp["masterFlushedOffset"] or cp["confirmPhyOffset"]:
            w(f"           masterFlushedOffset {cp['masterFlushedOffset']}, confirmPhyOffset {cp['confirmPhyOffset']}\n")
    cq = info.get("consumeQueues")
    if cq:
        text = f"{cq['queues']} consume queues, {cq['units']} units"
        if cq["batchQueues"]:
            text += f"; {cq['batchQueues']} batch consume queues, {cq['batchMessages']} messages"
        w(f"queues     {text}\n")
        for e in cq["errors"]:
            w(f"           {e['topic']}/{e['queueId']}: {e['error']}\n")
    idx = info.get("indexFiles")
    if idx and "error" in idx:
        w(f"index      {idx['error']}\n")
    elif idx:
        w(f"index      {idx['files']} files, {idx['entries']} entries"
          + (f" ({idx['hashSlots']} hash slots, {idx['indexNum']} entries per file)" if idx["files"] else "") + "\n")
    seg = info["segments"]
    w(f"segments   {len(seg)}, {sum(s['size'] for s in seg):,} bytes\n")
    _table([[s["name"], f"{s['size']:,}", s["messages"], "" if s["blankOffset"] is None else s["blankOffset"]]
            for s in seg], ["segment", "size", "messages", "BLANK at"], out, "  ")
    for gap in info["segmentGaps"]:
        w(f"  gap: {gap['after']} ends at offset {gap['expectedOffset']}, next segment is {gap['next']}\n")
    versions = ", ".join(f"{k} {v}" for k, v in info["recordVersions"].items()) or "none"
    w(f"messages   {info['messages']} ({versions}); BLANK records {info['blankRecords']}\n")
    if info["firstStoreTimestamp"] is not None:
        w(f"stored     {_iso(info['firstStoreTimestamp'])} .. {_iso(info['lastStoreTimestamp'])}\n")
    end = info["dataEnd"]
    where = f"offset {end['commitLogOffset']}"
    if end["segment"]:
        where += f" (segment {end['segment'].rsplit('/', 1)[-1]} @ 0x{end['fileOffset']:x})"
    w(f"data ends  {where}: {end['description']}{': ' + end['detail'] if end['detail'] else ''}\n")
    if end["bytesAfterInLaterSegments"]:
        w(f"           {end['bytesAfterInLaterSegments']:,} bytes of later segments are past the end\n")
    w("topics\n")
    rows = [[_short(topic), t["messages"], " ".join(f"{q}:{n}" for q, n in t["queues"].items())]
            for topic, t in info["topics"].items()]
    _table(rows, ["topic", "messages", "queue:messages"], out, "  ")


def cmd_inspect(args: argparse.Namespace) -> int:
    store = _open(args)
    info = inspect_store(store, verify_crc=args.verify_crc)
    if args.format == "jsonl":
        sys.stdout.write(json.dumps(info, ensure_ascii=False) + "\n")
    else:
        _print_inspect(info, sys.stdout)
    return 0


# -- messages ----------------------------------------------------------------

def message_filter(args: argparse.Namespace) -> Callable[[Message], bool]:
    """A predicate for the filters given on the command line."""
    checks: list[Callable[[Message], bool]] = []
    if args.topic is not None:
        checks.append(lambda m: m.topic == args.topic)
    if args.queue is not None:
        checks.append(lambda m: m.queue_id == args.queue)
    if args.tag is not None:
        checks.append(lambda m: m.tags == args.tag)
    if args.key is not None:
        checks.append(lambda m: args.key in m.keys or m.uniq_key == args.key)
    if args.since is not None:
        checks.append(lambda m: m.store_timestamp >= args.since)
    if args.until is not None:
        checks.append(lambda m: m.store_timestamp < args.until)
    if args.from_offset is not None:
        checks.append(lambda m: m.commitlog_offset >= args.from_offset)
    return lambda m: all(c(m) for c in checks)


def _message_row(m: Message) -> list:
    return [m.commitlog_offset, _short(m.topic), m.queue_id, m.queue_offset, _iso(m.store_timestamp),
            m.tags or "", " ".join(m.keys), m.msg_id, len(m.body_raw)]


_MESSAGE_HEADER = ["offset", "topic", "queue", "queueOffset", "storeTime", "tags", "keys", "msgId", "bodyBytes"]


def _scan_filters(args: argparse.Namespace) -> dict:
    """The columnar scan's filter options for the filters given on the command line."""
    return {"topic": args.topic, "queue_id": args.queue, "tag": args.tag, "key": args.key, "since": args.since,
            "until": args.until, "from_offset": args.from_offset, "to_offset": args.to_offset,
            "verify_crc": args.verify_crc}


def _batches_with_progress(scan, total: int, label: str) -> Iterator:
    """Yield the record batches of a columnar ``scan`` while a progress bar on stderr follows its bytes (on a TTY)."""
    bar = tqdm(total=total, unit="B", unit_scale=True, desc=label, file=sys.stderr,
               disable=not sys.stderr.isatty(), leave=False)
    try:
        for batch in scan:
            bar.update(scan.bytes_done - bar.n)
            yield batch
        bar.update(total - bar.n)
    finally:
        bar.close()


def _binary_stdout():
    """``sys.stdout``'s byte stream (after what was written as text), or ``None`` if it has none."""
    sys.stdout.flush()
    return getattr(sys.stdout, "buffer", None)


def _report_end(end) -> None:
    if end is not None and not end.reason.is_clean:
        sys.stderr.write(f"rmqformats: data ends early: {end}\n")


def _object_messages(args: argparse.Namespace, log, from_offset: int | None) -> tuple[Iterator[Message], Scan]:
    """The selected messages through the object API's scan, from ``from_offset``."""
    start = None
    if from_offset is not None and log.segments:
        # Records are found from a segment start; earlier records are skipped by the filter.
        try:
            start = log.segments[log.segment_index(from_offset)].start_offset
        except RmqFormatError:
            start = None
    scan = log.scan(start=start, verify_crc=args.verify_crc)
    keep = message_filter(argparse.Namespace(**{**vars(args), "from_offset": from_offset}))

    def selected() -> Iterator[Message]:
        for m in _with_progress(scan, log.total_size, "scan"):
            if args.to_offset is not None and m.commitlog_offset >= args.to_offset:
                return
            if keep(m):
                yield m
    return selected(), scan


def cmd_messages(args: argparse.Namespace) -> int:
    store = _open(args)
    log = store.commitlog
    out = sys.stdout
    if args.msg_id is not None or args.offset is not None:
        msg = log.read_msg_id(args.msg_id) if args.msg_id is not None else log.read(args.offset)
        if args.limit is None or args.limit > 0:
            if args.format == "jsonl":
                out.write(json.dumps(msg.to_json_dict(), ensure_ascii=False) + "\n")
            else:
                _table([_message_row(msg)], _MESSAGE_HEADER, out)
        elif args.format == "table":
            _table([], _MESSAGE_HEADER, out)
        return 0
    # The columnar decoder, a batch at a time: the output starts before the scan ends and memory stays flat.
    from .columnar import DEFAULT_BATCH_SIZE
    from .errors import DecompressionError
    from .export import (JSONL_COLUMNS, MESSAGE_TABLE_SOURCE, TableStream, jsonl_bytes, message_table_columns,
                         write_jsonl)
    jsonl = args.format == "jsonl"
    limit = args.limit
    # Smaller batches for the table: its rows are formatted a batch at a time.
    batch_size = DEFAULT_BATCH_SIZE if jsonl else _TABLE_BATCH
    if limit is not None:
        batch_size = min(batch_size, max(limit + 1, 1024))
    scan = log.batches(JSONL_COLUMNS if jsonl else MESSAGE_TABLE_SOURCE, decompress=jsonl, batch_size=batch_size,
                       window_size=_MESSAGES_WINDOW, **_scan_filters(args))
    raw = _binary_stdout() if jsonl else None
    table = None
    if not jsonl:
        end_offset = max((s.start_offset + s.size for s in log.segments), default=0)
        table = TableStream(_MESSAGE_HEADER, out, min_widths={0: len(str(end_offset))}, cut=(1, 5, 6))
    n = 0
    last = None
    try:
        for batch in _batches_with_progress(scan, log.total_size, "scan"):
            if limit is not None and n >= limit:
                break
            more = limit is not None and batch.num_rows > limit - n
            if more:
                batch = batch.slice(0, limit - n)
            n += batch.num_rows
            if batch.num_rows:
                last = batch.column(0)[-1].as_py()
            if table is not None:
                table.write(message_table_columns(batch))
            elif raw is not None:
                write_jsonl(batch, raw)
            else:
                out.write(bytes(jsonl_bytes(batch)).decode("utf-8"))
            if more:
                break
    except DecompressionError:
        # A body that does not decompress: the object API prints the messages before it and fails there.
        if raw is not None:
            raw.flush()
        after = args.from_offset if last is None else max(last + 1, args.from_offset or 0)
        selected, obj_scan = _object_messages(args, log, after)
        for m in selected:
            if limit is not None and n >= limit:
                break
            n += 1
            out.write(json.dumps(m.to_json_dict(), ensure_ascii=False) + "\n")
        _report_end(obj_scan.end)
        return 0
    if table is not None:
        table.close()
    elif raw is not None:
        raw.flush()
    _report_end(scan.end)
    return 0


# -- export ------------------------------------------------------------------------

def _column_list(text: str) -> list[str]:
    from .columnar import COLUMNS
    names = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in names if c not in COLUMNS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown column(s) {', '.join(unknown) or '(none given)'}; "
                                         f"the columns are {', '.join(COLUMNS)}")
    return names


def cmd_export(args: argparse.Namespace) -> int:
    fmt, out_path = args.to
    if fmt not in ("parquet", "jsonl", "csv"):
        sys.stderr.write(f"rmqformats: error: --to takes parquet, jsonl or csv, then OUT; not {fmt!r}\n")
        return 2
    if args.partition_by is not None and fmt != "parquet":
        sys.stderr.write("rmqformats: error: --partition-by needs --to parquet\n")
        return 2
    from .columnar import COLUMNS
    from .export import OutputExistsError, export_batches, export_columns, prepare_output
    store = _open(args)
    log = store.commitlog
    try:
        prepare_output(out_path, fmt, args.force)
    except OutputExistsError as exc:
        sys.stderr.write(f"rmqformats: error: {exc}\n")
        return 2
    columns = export_columns(fmt, args.columns)
    need = set(columns)
    if fmt == "parquet":
        need.add("segment")
        if args.partition_by:
            need.add(args.partition_by)
    scan = log.batches([c for c in COLUMNS if c in need], decompress=args.decompress, threads=args.threads,
                       **_scan_filters(args))
    target = out_path
    if out_path == "-":
        target = _binary_stdout()
        if target is None:
            sys.stderr.write("rmqformats: error: stdout takes no bytes here; give a file\n")
            return 2
    sink = export_batches(_batches_with_progress(scan, log.total_size, "export"), fmt, target, scan.schema,
                          partition_by=args.partition_by, keep_segment="segment" in columns)
    where = "stdout" if out_path == "-" else out_path
    files = len(sink.files) if out_path != "-" else 0
    what = f"{sink.rows} message{'s' if sink.rows != 1 else ''}"
    if fmt == "parquet":
        sys.stderr.write(f"rmqformats: exported {what} to {files} Parquet file{'s' if files != 1 else ''} "
                         f"in {where}\n")
    else:
        sys.stderr.write(f"rmqformats: exported {what} to {where}\n")
    _report_end(scan.end)
    return 0


# -- queue -------------------------------------------------------------------------

def _queue_positionals(args: argparse.Namespace) -> tuple[str | None, int | None]:
    """(topic, queue id) from ``[STORE] [TOPIC [QID]]``; with ``--sample`` there is no STORE."""
    values = list(args.positional)
    if not args.sample:
        if not values:
            raise SystemExit("rmqformats: error: give a STORE path or --sample")
        args.store = values.pop(0)
    if len(values) > 2:
        raise SystemExit("rmqformats: error: expected [STORE] [TOPIC [QID]]")
    topic = values[0] if values else None
    if len(values) == 2 and not values[1].lstrip("-").isdigit():
        raise SystemExit(f"rmqformats: error: QID must be a number, not {values[1]!r}")
    return topic, int(values[1]) if len(values) == 2 else None


def _unit_row(r) -> list:
    u = r.unit if hasattr(r, "unit") else r
    row = [u.cq_offset, u.commitlog_offset, u.size, u.tags_code]
    if hasattr(r, "status"):
        m = r.message
        row += [r.status.name] + ([_iso(m.store_timestamp), m.tags or "", " ".join(m.keys), m.msg_id]
                                  if m is not None else ["", "", "", r.detail])
    return row


def cmd_queue(args: argparse.Namespace) -> int:
    topic, queue_id = _queue_positionals(args)
    store = _open(args)
    out = sys.stdout
    if queue_id is None:
        infos = [(kind, q) for kind, found in (("ConsumeQueue", store.queues()),
                                                ("BatchConsumeQueue", store.batch_queues()))
                 for q in found if topic is None or q.topic == topic]
        if args.format == "jsonl":
            for kind, q in infos:
                out.write(json.dumps({"topic": q.topic, "queueId": q.queue_id, "type": kind,
                                      "minOffset": q.min_offset, "maxOffset": q.max_offset,
                                      "files": q.num_files, "error": q.error}, ensure_ascii=False) + "\n")
        else:
            _table([[_short(q.topic), q.queue_id, "batch" if kind == "BatchConsumeQueue" else "",
                     q.min_offset, q.max_offset, q.num_files, q.error or ""] for kind, q in infos],
                   ["topic", "queue", "type", "minOffset", "maxOffset", "files", "error"], out)
        return 0
    cq = store.consume_queue(topic, queue_id)
    if not cq.files.files:
        bcq = store.batch_consume_queue(topic, queue_id)
        if bcq.files.files:
            return _batch_queue(args, bcq, topic, queue_id)
        raise SystemExit(f"rmqformats: error: no consume queue {topic}/{queue_id} in {store.root}")
    stop = args.to_offset
    items = (cq.messages(args.from_offset, stop, tag=args.tag) if args.resolve
             else cq.units(args.from_offset, stop, tag=args.tag))
    rows = []
    for n, item in enumerate(items):
        if args.limit is not None and n >= args.limit:
            break
        if args.format == "jsonl":
            if args.resolve:
                d = item.unit.to_json_dict()
                d["status"] = item.status.name
                d["message"] = item.message.to_json_dict() if item.message is not None else None
                if item.detail:
                    d["detail"] = item.detail
            else:
                d = item.to_json_dict()
            out.write(json.dumps(d, ensure_ascii=False) + "\n")
        else:
            rows.append(_unit_row(item))
    if args.format == "table":
        header = ["cqOffset", "commitLogOffset", "size", "tagsCode"]
        if args.resolve:
            header += ["status", "storeTime", "tags", "keys", "msgId"]
        sys.stdout.write(f"# {topic}/{queue_id}: offsets {cq.min_offset}..{cq.max_offset}, "
                         f"{len(cq.files.files)} file(s)\n")
        _table(rows, header, out)
    return 0


def _bcq_unit_json(u) -> dict:
    """A batch consume-queue unit under the names of a consume-queue unit, plus its batch fields."""
    return {"cqOffset": u.msg_base_offset, "commitLogOffset": u.commitlog_offset, "size": u.size,
            "tagsCode": u.tags_code, "storeTime": u.store_time, "msgBaseOffset": u.msg_base_offset,
            "batchSize": u.batch_size, "unitIndex": u.index}


def _batch_queue(args: argparse.Namespace, bcq, topic: str, queue_id: int) -> int:
    """``queue`` for a batch consume queue: one row per unit, or per message with ``--resolve``."""
    out = sys.stdout
    rows = []
    if args.resolve:
        items = bcq.messages(args.from_offset, args.to_offset)
    else:
        first = 0 if args.from_offset is None else bcq.find(max(args.from_offset, bcq.min_offset)).index
        items = (u for u in bcq.units(first) if args.to_offset is None or u.msg_base_offset < args.to_offset)
    n = 0
    for item in items:
        if args.tag is not None and (item.tags != args.tag if args.resolve else
                                     item.tags_code != tags_code(args.tag)):
            continue
        if args.limit is not None and n >= args.limit:
            break
        n += 1
        if args.resolve:
            d = _bcq_unit_json(item.unit)
            d["cqOffset"] = item.queue_offset
            d["status"] = "OK"
            d["message"] = item.message.to_json_dict()
            if item.inner is not None:
                d["innerIndex"] = item.queue_offset - item.unit.msg_base_offset
                d["innerProperties"] = item.inner.properties
                d["innerFlag"] = item.inner.flag
                d["innerBody"] = base64.b64encode(item.inner.body).decode("ascii")
            if args.format == "jsonl":
                out.write(json.dumps(d, ensure_ascii=False) + "\n")
            else:
                rows.append([item.queue_offset, item.unit.commitlog_offset, item.unit.size, item.unit.tags_code,
                             item.unit.msg_base_offset, item.unit.batch_size, _iso(item.message.store_timestamp),
                             item.tags or "", " ".join(k for k in (item.properties.get("KEYS") or "").split(" ") if k),
                             item.message.msg_id])
        elif args.format == "jsonl":
            out.write(json.dumps(_bcq_unit_json(item), ensure_ascii=False) + "\n")
        else:
            rows.append([item.msg_base_offset, item.commitlog_offset, item.size, item.tags_code,
                         item.msg_base_offset, item.batch_size, _iso(item.store_time)])
    if args.format == "table":
        header = ["cqOffset", "commitLogOffset", "size", "tagsCode", "msgBaseOffset", "batchSize", "storeTime"]
        if args.resolve:
            header += ["tags", "keys", "msgId"]
        out.write(f"# {topic}/{queue_id} (batch consume queue): offsets {bcq.min_offset}..{bcq.max_offset}, "
                  f"{len(bcq.files.files)} file(s)\n")
        _table(rows, header, out)
    return 0


# -- lookup ------------------------------------------------------------------------

def cmd_lookup(args: argparse.Namespace) -> int:
    store = _open(args)
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
            rows.append([h.commitlog_offset, h.index_file, h.entry, _iso(h.store_time_approx)])
        else:
            rows.append([h.commitlog_offset, h.index_file, h.entry,
                         _iso(m.store_timestamp) if m is not None else "", _short(m.topic) if m else "",
                         m.queue_id if m else "", m.queue_offset if m else "", m.tags or "" if m else "",
                         " ".join(m.keys) if m else "", m.msg_id if m else (h.error or "")])
    if args.format == "table":
        if args.raw:
            _table(rows, ["commitLogOffset", "indexFile", "entry", "storeTime(index)"], out)
        else:
            _table(rows, ["commitLogOffset", "indexFile", "entry", "storeTime", "topic", "queue", "queueOffset",
                          "tags", "keys", "msgId"], out)
    return 0


# -- check -------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace) -> int:
    store = _open(args)
    report = store.check_consistency(topic=args.topic, queue_id=args.queue, max_problems=args.max_problems)
    if args.format == "jsonl":
        sys.stdout.write(json.dumps({
            "ok": report.ok, "queues": report.queues, "units": report.units, "deletedUnits": report.deleted,
            "problems": [{"topic": p.topic, "queueId": p.queue_id, "cqOffset": p.cq_offset, "where": p.where,
                          "field": p.field, "unit": p.unit.to_json_dict(), "unitValue": p.expected,
                          "recordValue": p.found} for p in report.problems],
            "unreadable": [{"topic": t, "queueId": q, "error": e} for t, q, e in report.unreadable],
        }, ensure_ascii=False, default=str) + "\n")
    else:
        w = sys.stdout.write
        w(f"consume queues  {report.queues} queue(s), {report.units} unit(s) checked against the commit log\n")
        if report.deleted:
            w(f"                {report.deleted} unit(s) point at deleted commit-log segments (not checked)\n")
        for t, q, e in report.unreadable:
            w(f"unreadable      {t}/{q}: {e}\n")
        for p in report.problems:
            w(f"mismatch        {p}\n")
        w("result          " + ("consistent\n" if report.ok else "INCONSISTENT\n"))
    return 0 if report.ok else 1


# -- config ------------------------------------------------------------------------

def _read_config_files(store: Store) -> tuple[list, list[str]]:
    """Every known config file of the store (or its ``.bak``), and the errors of those that fail."""
    from .config import read_config_file
    from .config.schema import known_files
    found, errors = [], []
    for folder, name, schema in known_files():
        path = store.path(folder, name)
        if not (os.path.exists(path) or os.path.exists(path + ".bak")):
            continue
        try:
            found.append(read_config_file(path, schema=schema))
        except RmqFormatError as exc:
            errors.append(str(exc))
    return found, errors


def config_summary(files: list, errors: list[str]) -> dict:
    """The config files of a store as plain JSON-ready values: files, topics, groups, offsets."""
    from .config import ConsumerOffsetsFile, DelayOffsetsFile, SubscriptionGroupsFile, TopicsFile
    out: dict = {"files": [], "errors": errors, "topics": [], "groups": [], "consumerOffsets": [],
                 "delayOffsets": []}
    for f in files:
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
                                               "queueId": e.queue_id, "offset": e.offset})
        elif isinstance(m, DelayOffsetsFile):
            for level, off in m.by_level.items():
                topic, qid = m.queue_of(level)
                out["delayOffsets"].append({"level": level, "topic": topic, "queueId": qid, "offset": off})
    return out


def _print_config(info: dict, out) -> None:
    w = out.write
    w("files\n")
    _table([[f["name"], f["source"], f["encoding"] or "", "valid" if f["valid"] else "empty",
             len(f["unknownKeys"])] for f in info["files"]],
           ["file", "source", "encoding", "status", "unknownKeys"], out, "  ")
    for f in info["files"]:
        for warning in f["warnings"]:
            w(f"  {f['name']}: {warning}\n")
    for err in info["errors"]:
        w(f"  error: {err}\n")
    w(f"topics ({len(info['topics'])})\n")
    _table([[_short(t["topic"]), t["readQueueNums"], t["writeQueueNums"], t["permString"],
             "yes" if t["order"] else "no", t["topicSysFlag"],
             " ".join(f"{k}={v}" for k, v in (t["attributes"] or {}).items())] for t in info["topics"]],
           ["topic", "read", "write", "perm", "order", "sysFlag", "attributes"], out, "  ")
    w(f"groups ({len(info['groups'])})\n")
    yn = {True: "yes", False: "no", None: ""}
    _table([[_short(g["group"]), yn[g["consumeEnable"]], yn[g["consumeBroadcastEnable"]],
             yn[g["consumeMessageOrderly"]], g["retryQueueNums"], g["retryMaxTimes"], g["brokerId"]]
            for g in info["groups"]],
           ["group", "consume", "broadcast", "orderly", "retryQueues", "retryMax", "brokerId"], out, "  ")
    w(f"consumer offsets ({len(info['consumerOffsets'])})\n")
    _table([[_short(o["group"]), _short(o["topic"]), o["queueId"], o["offset"]] for o in info["consumerOffsets"]],
           ["group", "topic", "queue", "offset"], out, "  ")
    w(f"delay offsets ({len(info['delayOffsets'])})\n")
    _table([[d["level"], f"{d['topic']}/{d['queueId']}", d["offset"]] for d in info["delayOffsets"]],
           ["level", "queue", "offset"], out, "  ")


def cmd_config(args: argparse.Namespace) -> int:
    store = _open(args)
    if args.file is not None:
        from .config import read_config_file
        from .config.schema import known_files, to_json_model
        folder = next((d for d, n, _ in known_files() if n == args.file), "config")
        f = read_config_file(store.path(folder, args.file))
        model = f.model.to_json() if f.model is not None else None
        doc = {"name": f.name, "path": f.path, "source": f.source, "encoding": f.encoding,
               "unknownKeys": list(f.unknown_keys), "warnings": list(f.warnings), "model": to_json_model(model)}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=None if args.format == "jsonl" else 2) + "\n")
        return 0
    files, errors = _read_config_files(store)
    info = config_summary(files, errors)
    info = {"config": store.path("config"), **info}
    if args.format == "jsonl":
        sys.stdout.write(json.dumps(info, ensure_ascii=False) + "\n")
    else:
        _print_config(info, sys.stdout)
    for err in errors:
        sys.stderr.write(f"rmqformats: error: {err}\n")
    return 2 if errors else 0


# -- lag ---------------------------------------------------------------------------

def cmd_lag(args: argparse.Namespace) -> int:
    store = _open(args)
    rows = store.consumer_lag(group=args.group, topic=args.topic, with_store_time=args.store_time)
    out = sys.stdout
    if args.format == "jsonl":
        for r in rows:
            out.write(json.dumps(r.to_json_dict(), ensure_ascii=False) + "\n")
        return 0
    table = [[_short(r.group, 32), _short(r.topic, 32), r.queue_id,
              "" if r.committed_offset is None else r.committed_offset, r.min_offset, r.max_offset, r.lag,
              "" if r.next_message_store_time is None else _iso(r.next_message_store_time),
              ",".join(f for f, on in (("behind-min", r.behind_min), ("beyond-max", r.beyond_max),
                                        ("no-queue", not r.queue_found), ("batch", r.queue_type == "BatchCQ")) if on)]
             for r in rows]
    _table(table, ["group", "topic", "queue", "committed", "min", "max", "lag", "nextStoreTime", "flags"], out)
    by_group: dict[str, int] = defaultdict(int)
    for r in rows:
        by_group[r.group] += r.lag
    for g, total in sorted(by_group.items()):
        out.write(f"total lag {g}: {total}\n")
    for r in rows:
        if r.note:
            out.write(f"note {r.group} {r.topic}/{r.queue_id}: {r.note}\n")
    return 0


# -- entry point ---------------------------------------------------------------

class _ExportHelp(argparse.RawDescriptionHelpFormatter):
    """Help text with the column names filled in only when it is shown (they come with the columnar decoder)."""

    def _fill_text(self, text, width, indent):
        if "{columns}" in text:
            import textwrap

            from .columnar import COLUMNS
            text = text.replace("{columns}", textwrap.fill(", ".join(COLUMNS) + ".", width - len(indent)))
        return super()._fill_text(text, width, indent)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``rmqformats`` command."""
    p = argparse.ArgumentParser(prog="rmqformats", description="Read Apache RocketMQ broker store files.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("store", nargs="?", help="store root, commitlog/ folder or one segment file")
        sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
        sp.add_argument("--format", choices=["table", "jsonl"], default="table", help="output format")

    def verify_crc(sp: argparse.ArgumentParser, default: bool) -> None:
        sp.add_argument("--verify-crc", action=argparse.BooleanOptionalAction, default=default,
                        help="check body CRCs (and __CRC32#); the data ends at the first mismatch, as in "
                             f"broker recovery with checkCRCOnRecover (default: {'on' if default else 'off'})")

    sp = sub.add_parser("inspect", help="segments, counts per topic and queue, time range, where the data ends")
    common(sp)
    verify_crc(sp, True)
    sp.set_defaults(func=cmd_inspect)

    def message_filters(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--topic")
        sp.add_argument("--queue", type=int, help="queue id")
        sp.add_argument("--tag", help="exact TAGS value")
        sp.add_argument("--key", help="one of the KEYS, or the UNIQ_KEY")
        sp.add_argument("--since", type=_parse_time, help="store time >= (epoch ms or ISO 8601, UTC if no zone)")
        sp.add_argument("--until", type=_parse_time, help="store time < (epoch ms or ISO 8601)")
        sp.add_argument("--from-offset", type=int, help="commit-log offset >=")
        sp.add_argument("--to-offset", type=int, help="commit-log offset <")

    sp = sub.add_parser("messages", help="list messages, filtered",
                        description="List the messages of the commit log, in commit-log order, as they are "
                                    "read: the table's column widths are set by its first 1000 rows; a later, "
                                    "longer topic, tags or keys value is cut in the middle with '…'.")
    common(sp)
    verify_crc(sp, False)
    message_filters(sp)
    sp.add_argument("--offset", type=int, help="only the message at this commit-log offset")
    sp.add_argument("--msg-id", help="only the message with this offset message id")
    sp.add_argument("--limit", type=int, help="stop after this many messages")
    sp.set_defaults(func=cmd_messages)

    sp = sub.add_parser(
        "export", help="write the messages, filtered, to Parquet, JSON Lines or CSV",
        formatter_class=_ExportHelp,
        description="Write the messages of the commit log to files, streaming (memory stays bounded).\n\n"
                    "parquet  OUT is a folder: one zstd Parquet file per commit-log segment, named after it\n"
                    "         (00000000000000000000.parquet; none for a segment without selected messages).\n"
                    "         --partition-by topic writes topic=<URL-escaped topic>/<segment>.parquet without\n"
                    "         the topic column (Hive-style; pyarrow.dataset and pq.read_table read it back).\n"
                    "jsonl    OUT is a file or -: the lines of 'messages --format jsonl'.\n"
                    "csv      OUT is a file or -: a header, then one row per message; columns CSV cannot\n"
                    "         hold are text: properties a JSON object, keys joined by spaces, body base64;\n"
                    "         timestamps are written as 2026-11-21 09:53:00.123Z (UTC), null as an empty field.\n\n"
                    "Columns by default: jsonl those of 'messages --format jsonl'; parquet and csv also tags,\n"
                    "keys and uniqKey. --columns picks any of:\n{columns}")
    sp.add_argument("store", nargs="?", help="store root, commitlog/ folder or one segment file")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    sp.add_argument("--to", required=True, nargs=2, metavar=("{parquet,jsonl,csv}", "OUT"),
                    help="output format and where to write it (- for stdout with jsonl and csv)")
    verify_crc(sp, False)
    message_filters(sp)
    sp.add_argument("--columns", type=_column_list, help="comma-separated column names (written in schema order)")
    sp.add_argument("--no-decompress", dest="decompress", action="store_false",
                    help="write compressed bodies as stored (default: decompressed by SYSFLAG)")
    sp.add_argument("--partition-by", choices=["topic"], help="parquet: one folder per topic")
    sp.add_argument("--threads", type=int, default=1, help="threads building record batches (default: 1)")
    sp.add_argument("--force", action="store_true",
                    help="overwrite a non-empty OUT file, or replace an earlier export in the OUT folder")
    sp.set_defaults(func=cmd_export)

    sp = sub.add_parser("queue", help="consume queues: list them, or the units of one (resolved to messages)",
                        description="Without TOPIC/QID, list the consume queues with their offset ranges; "
                                    "with them, list that queue's units.")
    sp.add_argument("positional", nargs="*", metavar="STORE TOPIC QID",
                    help="store root, then optionally a topic and a queue id (no STORE with --sample)")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    sp.add_argument("--format", choices=["table", "jsonl"], default="table", help="output format")
    sp.add_argument("--resolve", action="store_true", help="read the message each unit points at")
    sp.add_argument("--tag", help="only units of this tag (tags-code match, checked on the message with --resolve)")
    sp.add_argument("--from", dest="from_offset", type=int, help="first logical offset (default: the queue's min)")
    sp.add_argument("--to", dest="to_offset", type=int, help="logical offset to stop before")
    sp.add_argument("--limit", type=int, help="stop after this many units")
    sp.set_defaults(func=cmd_queue, store=None)

    sp = sub.add_parser("lookup", help="find messages by key or UNIQ_KEY through the index files",
                        description="Search the index files as the broker's queryMessage does (newest file "
                                    "first, at most --max hits) and read each hit's message; hits whose "
                                    "message does not carry the key (hash collisions) are dropped unless --raw.")
    common(sp)
    sp.add_argument("--topic", required=True, help="the message's stored topic")
    sp.add_argument("--key", required=True, help="one of the KEYS, or the UNIQ_KEY")
    sp.add_argument("--begin", type=_parse_time, help="store time >= (epoch ms or ISO 8601)")
    sp.add_argument("--end", type=_parse_time, help="store time <= (epoch ms or ISO 8601)")
    sp.add_argument("--max", type=int, default=64, help="at most this many hits (the broker's maxMsgsNumBatch: 64)")
    sp.add_argument("--raw", action="store_true",
                    help="the index hits exactly as the broker returns them, without reading the messages")
    sp.add_argument("--hash-slots", type=int, help="maxHashSlotNum of the broker (default: inferred from the size)")
    sp.add_argument("--index-num", type=int, help="maxIndexNum of the broker (default: inferred from the size)")
    sp.set_defaults(func=cmd_lookup)

    sp = sub.add_parser("check", help="check that consume-queue units agree with the commit log")
    common(sp)
    sp.add_argument("--topic", help="only this topic's queues")
    sp.add_argument("--queue", type=int, help="only this queue id")
    sp.add_argument("--max-problems", type=int, default=1000, help="stop after this many mismatches")
    sp.set_defaults(func=cmd_check)
    sp = sub.add_parser("config", help="config/ JSON files: topics, groups, consumer and delay offsets")
    common(sp)
    sp.add_argument("--file", help="show one file's model as JSON (e.g. topics.json)")
    sp.set_defaults(func=cmd_config)

    sp = sub.add_parser("lag", help="consumer lag per group and queue, from consumerOffset.json and the queues")
    common(sp)
    sp.add_argument("--group", help="only this consumer group")
    sp.add_argument("--topic", help="only this topic")
    sp.add_argument("--store-time", action=argparse.BooleanOptionalAction, default=True,
                    help="read the next unconsumed message's store time (default: on)")
    sp.set_defaults(func=cmd_lag)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (RmqFormatError, InvalidMessageIdError) as exc:
        sys.stderr.write(f"rmqformats: error: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
