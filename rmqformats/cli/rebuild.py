"""``rebuild``: a new store folder with the consume queues, index files and checkpoint written from the
commit log as the broker's dispatch writes them."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import status
from .common import UsageError, add_jobs, open_from_args, store_paths
from .present import camel_keys, iso


def _timezone(text: str | None):
    if text is None:
        return None
    import datetime
    if text.upper() in ("UTC", "Z"):
        return datetime.timezone.utc
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(text)
    except Exception:
        raise UsageError(f"--timezone: not a time zone name: {text!r} (e.g. UTC, Asia/Shanghai)") from None


def cmd_rebuild(args: argparse.Namespace) -> int:
    from ..rebuild import PARTS, RebuildError, rebuild_store
    only = None
    if args.only:
        only = tuple(p.strip() for p in args.only.split(",") if p.strip())
        bad = [p for p in only if p not in PARTS]
        if bad:
            raise UsageError(f"--only: unknown part {bad[0]!r} (one or more of {', '.join(PARTS)}, comma-separated)")
    if args.convert_queues and only is not None and "queues" not in only:
        raise UsageError("--convert-queues writes the consume queues: --only must include queues")
    store = open_from_args(args)
    if store.root is None:
        raise UsageError(f"{args.store}: rebuild needs a store root (the folder holding commitlog/)")
    try:
        result = rebuild_store(store, args.out, force=args.force, link=args.link, only=only,
                               queues_kind=args.convert_queues, config=args.config,
                               timezone=_timezone(args.timezone), reads=tuple(store_paths(store)),
                               salvage=args.salvage)
    except RebuildError as exc:
        raise UsageError(str(exc)) from None
    doc = {"out": result.out, "parts": list(result.parts), "queuesKind": result.queues_kind,
           "queuesFolder": result.queues_folder,
           "damagedQueueKeys": {"count": result.damaged_queue_keys[0], "first": result.damaged_queue_keys[1]},
           "rocksdbMessagesRemoved": None if result.rocksdb_messages is None else {
               "timer": result.rocksdb_messages.timer, "trans": result.rocksdb_messages.trans,
               "index": result.rocksdb_messages.index},
           "dataEnd": result.data_end, "messages": result.messages, "queueUnits": result.queue_units,
           "batchQueueUnits": result.batch_units, "indexFiles": result.index_files,
           "indexEntries": result.index_entries, "segments": result.segments, "linkedSegments": result.linked,
           "checkpoint": camel_keys(result.checkpoint) if result.checkpoint else result.checkpoint, "sizes": result.sizes.describe(),
           "queueOffsetHoles": [list(h) for h in result.holes],
           "keptQueues": [q.rel for q in result.kept_queues],
           "resizedSegments": [{"path": r.path, "size": r.size, "written": r.written,
                                "nonZeroBytesDropped": r.nonzero_dropped} for r in result.resized],
           "removedQueues": result.removed_queues, "removedUnits": result.removed_units,
           "timerLog": {"cut": result.timer.cut, "unitsRemoved": result.timer.units_removed,
                        "slotsChanged": result.timer.slots_changed, "slotsCleared": result.timer.slots_cleared},
           "intactPastDataEnd": result.past_end.to_json_dict() if result.past_end is not None else None,
           "lostMessages": result.past_end.messages if result.past_end is not None else 0,
           "keep": _keep_hint(args, result.data_end) if result.past_end is not None and result.past_end.messages else None,
           "emptyHeadSegments": result.empty_head,
           "emptyHeadUnits": result.empty_head_units,
           "salvage": _salvage_doc(result),
           "seconds": round(result.seconds, 3)}
    if args.format == "json":
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        out = sys.stdout
        out.write(f"wrote {result.out}: {', '.join(result.parts)} rebuilt ({result.queues_kind} consume queues in "
                  f"{result.queues_folder}/)\n")
        out.write(f"  commit log: {result.segments} segment(s) ({result.linked} hard-linked), data end "
                  f"{result.data_end}\n")
        out.write(f"  {result.messages} message(s) walked: {result.queue_units} consume-queue unit(s), "
                  f"{result.batch_units} batch unit(s), {result.index_entries} index entr(ies) in "
                  f"{len(result.index_files)} file(s)\n")
        for line in result.sizes.describe():
            out.write(f"  {line}\n")
        if result.checkpoint:
            cp = camel_keys(result.checkpoint)
            out.write("  checkpoint: " + " ".join(
                f"{k}={iso(v) if k.endswith('Timestamp') and v > 0 else v}" for k, v in cp.items()) + "\n")
        bad, first_keys = result.damaged_queue_keys
        if bad:
            out.write(f"  damaged: {'the' if bad < 0 else bad} key(s) of the old RocksDB consume queue that are no "
                      f"queue's unit (first {', '.join(first_keys[:3])}): not carried over, the new queue is "
                      f"written from the commit log\n")
        rm = result.rocksdb_messages
        if rm is not None:
            out.write(f"  rocksdbstore/ written anew without the records past the data end: {rm.timer} timer, "
                      f"{rm.trans} transaction, {rm.index} index record(s) left out\n")
        for r in result.resized:
            extra = (f"{r.size - r.written} byte(s) past the configured size left out ({r.nonzero_dropped} not zero; "
                     f"no commit-log offset reaches them: the next segment starts at the configured size)"
                     if r.size > r.written else f"zero-filled from {r.size} bytes")
            out.write(f"  resized: {r.path}: {r.size} bytes, not the configured {r.written} (MappedFileQueue.doLoad "
                      f"refuses it): written at {r.written}, {extra}\n")
        if result.empty_head:
            out.write(f"  left out: {_empty_head_text(result)}\n")
        for q in result.kept_queues:
            cut = f"; {q.removed_units} unit(s) at or past the data end removed" if q.removed_units else ""
            out.write(f"  kept: {q.rel} ({q.kept_units} unit(s) of messages in deleted head segments{cut})\n")
        if result.removed_queues:
            out.write(f"  removed: {len(result.removed_queues)} queue(s) all of whose units point at or past the "
                      f"data end, as ConsumeQueue.truncateDirtyLogicFiles deletes them: "
                      f"{', '.join(result.removed_queues[:5])}{' …' if len(result.removed_queues) > 5 else ''}\n")
        if result.timer.cut is not None:
            out.write(f"  timer log cut at {result.timer.cut}: {result.timer.units_removed} unit(s) from the first "
                      f"pointing past the data end removed; {result.timer.slots_changed} wheel slot(s) moved back, "
                      f"{result.timer.slots_cleared} cleared; config/timercheck lowered to match\n")
        sv = result.salvaged
        if sv is not None:
            out.write(f"  salvage: {sv.messages} intact message(s) written anew ({sv.moved} at another commit-log "
                      f"offset, {sv.requeued} with another queue offset; message ids from the offset change with "
                      f"it), {len(sv.damaged)} damaged range(s) skipped; old -> new offsets in "
                      f"{result.offsets_file}\n")
        for topic, qid, lo, hi in result.holes:
            out.write(f"  note: {topic}/{qid}: the commit log holds no message for queue offsets {lo} to {hi - 1}\n")
    if result.empty_head:
        sys.stderr.write(f"rmqformats rebuild: {_empty_head_text(result)}\n")
    if result.past_end is not None and result.past_end.messages:
        sys.stderr.write(f"rmqformats rebuild: {result.past_end.describe()}; the new store leaves them out (as the "
                         f"broker's recovery does); {_keep_hint(args, result.data_end)}\n")
        return status.DAMAGED
    holes = _holes(store, result)
    for gap in holes:
        sys.stderr.write(f"rmqformats rebuild: {gap.length:,} byte(s) at commit-log offset {gap.commitlog_offset} "
                         f"are in no segment file ({os.path.abspath(gap.segment)} is missing or the file before it "
                         f"is short): the new store keeps the hole; `rmqformats rebuild --salvage` writes the "
                         f"messages anew without it\n")
    return status.DAMAGED if result.empty_head or holes else status.OK


def _holes(store, result) -> list:
    """The commit-log bytes before the data end that no segment file of the store read holds (a salvage
    rebuild writes the messages anew, without them)."""
    if result.salvaged is not None or result.data_end is None:
        return []
    from ..walk.salvage import gaps
    left_out = {os.path.abspath(p) for p in result.empty_head}  # said apart, with the units that pointed there
    return [g for g in gaps(store.commitlog.segments)
            if g.commitlog_offset < result.data_end and os.path.abspath(g.segment) not in left_out]


def _empty_head_text(result) -> str:
    """What leaving out the empty head segments of the commit log lost."""
    names = ", ".join(result.empty_head[:3]) + (" …" if len(result.empty_head) > 3 else "")
    lost = ("messages the RocksDB consume queue referenced there are lost (not counted: the database cannot be "
            "read)"
            if result.empty_head_units is None else
            f"the messages of the {result.empty_head_units} consume-queue unit(s) pointing there are lost")
    return (f"{len(result.empty_head)} empty (0-byte) commit-log segment file(s) before the first holding bytes, "
            f"which MappedFileQueue.doLoad refuses: {names}; the new commit log starts after them, as after "
            f"retention deleted them (CommitLog.getMinOffset), with nothing after them lost; {lost}")


def _salvage_doc(result) -> dict | None:
    sv = result.salvaged
    if sv is None:
        return None
    return {"messages": sv.messages, "moved": sv.moved, "requeued": sv.requeued, "firstChanged": sv.first_changed,
            "oldDataEnd": sv.damage_start, "offsetsFile": result.offsets_file,
            "damagedRanges": [r.to_json_dict() for r in sv.damaged]}


def _keep_hint(args: argparse.Namespace, data_end: int | None) -> str:
    """The command that keeps the intact messages past the data end."""
    from ..preflight import keep_command
    return keep_command(args.store or "--sample", data_end or 0)


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser(
        "rebuild", help="write a new store folder with consume queues, index files and checkpoint rebuilt "
                        "from the commit log",
        description="Walk the commit log of STORE as the broker's dispatch does and write a new store folder "
                    "NEW: the commit log up to the data end the broker's recovery keeps (copied, or hard-linked "
                    "with --link), the consume queues (file or RocksDB) and batch consume queues, the index "
                    "files and the checkpoint as the broker writes them, the rest of the store root (config/, "
                    "timer files) copied. STORE is only read; NEW is written atomically (a temporary folder "
                    "renamed when complete, ending with _SUCCESS) and exclusively. Stop the broker first and "
                    "keep the original store.",
        epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.add_argument("store", nargs="?", help="store root (the folder holding commitlog/)")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    sp.add_argument("--out", required=True, help="the new store folder to write (missing or empty)")
    sp.add_argument("--force", action="store_true", help="replace a non-empty NEW written by an earlier rebuild")
    sp.add_argument("--link", action="store_true",
                    help="hard-link the whole commit-log segments instead of copying them (same file system; "
                         "the last segment, which the broker appends to, is always copied)")
    sp.add_argument("--only", metavar="PARTS",
                    help="rebuild only these parts (comma-separated: commitlog, queues, index, checkpoint); the "
                         "others are copied as they are")
    sp.add_argument("--salvage", action="store_true",
                    help="write the commit log anew from every intact message the salvage walk reads (past "
                         "damage too, as messages --salvage reads them), each at its new offset with its queue "
                         "offset assigned anew, as the broker appends it; the old -> new offsets in "
                         "NEW/salvage-offsets.jsonl")
    sp.add_argument("--convert-queues", choices=("rocksdb", "file"),
                    help="write this consume-queue kind instead of the store's own (storeType migration or "
                         "rollback)")
    sp.add_argument("--config", metavar="FILE",
                    help="broker .properties or JSON store config for the file sizes (mappedFileSizeConsumeQueue, "
                         "mapperFileSizeBatchConsumeQueue, maxHashSlotNum, maxIndexNum); default: the sizes of "
                         "the store's files, else the broker's defaults")
    sp.add_argument("--timezone", metavar="TZ",
                    help="the broker's time zone, for the names of new index files (default: this machine's)")
    sp.add_argument("--format", choices=("text", "json"), default="text",
                    help="text, or the summary as one JSON object (as schema-diff prints it)")
    sp.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    add_jobs(sp)
    sp.set_defaults(func=cmd_rebuild)
