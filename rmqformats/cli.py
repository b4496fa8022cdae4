"""The ``rmqformats`` command: inspect a store and list its messages."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

from tqdm import tqdm

from . import __version__
from .commitlog import Scan
from .errors import InvalidMessageIdError, RmqFormatError
from .message import Message, millis_to_datetime
from .sample import sample_store_path
from .store import Store, open_store

_PROGRESS_EVERY = 4096


def _parse_time(text: str) -> int:
    """Milliseconds since the epoch from epoch milliseconds or an ISO 8601 time (UTC if naive)."""
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not epoch milliseconds or an ISO 8601 time: {text!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


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


def _print_inspect(info: dict, out) -> None:
    w = out.write
    w(f"store      {info['store']}\n")
    if info["abortFile"] is not None:
        w(f"shutdown   {'unclean (abort file present)' if info['abortFile'] else 'clean (no abort file)'}\n")
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


def cmd_messages(args: argparse.Namespace) -> int:
    store = _open(args)
    log = store.commitlog
    if args.msg_id is not None or args.offset is not None:
        msg = log.read_msg_id(args.msg_id) if args.msg_id is not None else log.read(args.offset)
        selected: Iterator[Message] = iter([msg])
        scan = None
    else:
        start = None
        if args.from_offset is not None and log.segments:
            # Records are found from a segment start; earlier records are skipped by the filter.
            try:
                start = log.segments[log.segment_index(args.from_offset)].start_offset
            except RmqFormatError:
                start = None
        scan = log.scan(start=start, verify_crc=args.verify_crc)
        keep = message_filter(args)

        def selected_messages() -> Iterator[Message]:
            for m in _with_progress(scan, log.total_size, "scan"):
                if args.to_offset is not None and m.commitlog_offset >= args.to_offset:
                    return
                if keep(m):
                    yield m
        selected = selected_messages()
    out = sys.stdout
    rows = []
    n = 0
    for m in selected:
        if args.limit is not None and n >= args.limit:
            break
        n += 1
        if args.format == "jsonl":
            out.write(json.dumps(m.to_json_dict(), ensure_ascii=False) + "\n")
        else:
            rows.append(_message_row(m))
    if args.format == "table":
        _table(rows, _MESSAGE_HEADER, out)
    if scan is not None and scan.end is not None and not scan.end.reason.is_clean:
        sys.stderr.write(f"rmqformats: data ends early: {scan.end}\n")
    return 0


# -- entry point ---------------------------------------------------------------

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

    sp = sub.add_parser("messages", help="list messages, filtered")
    common(sp)
    verify_crc(sp, False)
    sp.add_argument("--topic")
    sp.add_argument("--queue", type=int, help="queue id")
    sp.add_argument("--tag", help="exact TAGS value")
    sp.add_argument("--key", help="one of the KEYS, or the UNIQ_KEY")
    sp.add_argument("--since", type=_parse_time, help="store time >= (epoch ms or ISO 8601, UTC if no zone)")
    sp.add_argument("--until", type=_parse_time, help="store time < (epoch ms or ISO 8601)")
    sp.add_argument("--from-offset", type=int, help="commit-log offset >=")
    sp.add_argument("--to-offset", type=int, help="commit-log offset <")
    sp.add_argument("--offset", type=int, help="only the message at this commit-log offset")
    sp.add_argument("--msg-id", help="only the message with this offset message id")
    sp.add_argument("--limit", type=int, help="stop after this many messages")
    sp.set_defaults(func=cmd_messages)
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
