"""``inspect``: what a store holds and where its data ends."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections import defaultdict

from ..errors import RmqFormatError, RocksDBError, display_path
from ..store import Store
from . import status
from .bodies import non_negative
from .present import place, whole
from .tables import write_wrapped
from ..columnar import find_record_start
from ..columnar.summary import SUMMARY_COLUMNS, LogSummary, int_values
from ..commitlog import DataEnd, EndReason, nonzero_span
from ..versions import annotations as ann
from ..versions.detect import Detector, RecordFacts
from .common import iso, open_from_args, short, print_table, add_store_args, add_verify_crc
from .common import add_jobs, add_salvage, batches_with_progress

#: Topics and queues ``inspect`` lists by the bytes they hold, unless ``--top`` says otherwise.
DEFAULT_TOP = 10
#: TOTALSIZE and MAGICCODE: all a BLANK record writes.
BLANK_HEADER = 8


class LogTally:
    """What ``inspect`` sums over the commit log's batches: the :class:`LogSummary` and the release-detection
    facts (:class:`RecordFacts`); a :class:`rmqformats.walk.parallel.Fold`, so that workers sum their ranges."""

    def __init__(self, segments):
        self.segments = tuple(segments)
        self.summary = LogSummary(self.segments)
        self.facts = RecordFacts()

    def empty(self) -> "LogTally":
        return LogTally(self.segments)

    def add(self, batch) -> None:
        versions = self.summary.add(batch)
        self.facts.add(offsets=int_values(batch.column("commitLogOffset")), versions=versions,
                       sys_flags=int_values(batch.column("sysFlag")), properties=batch.column("propertiesString"))

    def merge(self, later: "LogTally") -> None:
        self.summary.merge(later.summary)
        self.facts.merge(later.facts)


class _Early:
    """The release facts loaded and :func:`_store_parts` read in a thread of their own (``store``: ``None``
    without a store root), while the walk's workers decode the log."""

    def __init__(self, store: Store | None):
        self._store = store
        self._parts: dict = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="rmqformats-inspect-parts", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            ann.load()
            if self._store is not None:
                self._parts = _store_parts(self._store)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread, where it would have been
            self._error = exc

    def parts(self) -> dict:
        """What :func:`_store_parts` gave (its error raised here)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._parts


def inspect_store(store: Store, *, verify_crc: bool = False, force_verify_prop_crc: bool = False,
                  progress: bool = True, salvage: bool = False,
                  live: bool = False, tiered: str | None = None, top: int = DEFAULT_TOP) -> dict:
    """Summarise a store's commit log: segments, messages and bytes per topic and queue, time range, data end.

    The commit log is read once with the columnar walk and summed a record
    batch at a time (:class:`rmqformats.columnar.summary.LogSummary`).
    Bytes are the records' sizes in the commit log (TOTALSIZE).
    ``largestTopics`` and ``largestQueues`` list the ``top`` topics and
    queues holding the most bytes (all with 0). With ``salvage`` the counts
    are those of every intact message and ``damaged`` lists the ranges
    skipped (see :mod:`rmqformats.recovery.salvage`).
    """
    log = store.commitlog
    options = {k: v for k, v in (("salvage", salvage), ("live", live),
                                 ("force_verify_prop_crc", force_verify_prop_crc)) if v}
    tally = LogTally(log.segments)
    scan = log.batches(columns=SUMMARY_COLUMNS, decompress=False, verify_crc=verify_crc, fold=tally, **options)
    # While worker processes walk the log, this process is idle: it loads the specs' release facts and
    # reads the store's other parts meanwhile (about 0.15 s each on a 2-core machine).
    early = _Early(store if store.root else None) if getattr(scan, "parallel", False) else None
    for batch in (batches_with_progress(scan, log.total_size, "scan") if progress else scan):
        tally.add(batch)
    parts = early.parts() if early is not None else _store_parts(store) if store.root else {}
    summary = tally.summary
    detector = Detector()
    detector.take(tally.facts)
    end = scan.end
    blanks = {b.segment: b for b in scan.blanks}
    per_segment = summary.per_segment()
    per_queue = summary.per_queue()
    topics: dict[str, dict] = defaultdict(lambda: {"messages": 0, "bytes": 0, "queues": {}, "queueBytes": {}})
    for (topic, qid), (n, size) in per_queue.items():
        t = topics[topic]
        t["messages"] += n
        t["bytes"] += size
        t["queues"][str(qid)] = n
        t["queueBytes"][str(qid)] = size
    largest_topics = sorted(({"topic": name, "messages": t["messages"], "bytes": t["bytes"]}
                             for name, t in topics.items()), key=lambda r: (-r["bytes"], -r["messages"], r["topic"]))
    largest_queues = sorted(({"topic": topic, "queueId": qid, "messages": n, "bytes": size}
                             for (topic, qid), (n, size) in per_queue.items()),
                            key=lambda r: (-r["bytes"], -r["messages"], r["topic"], r["queueId"]))
    bytes_after, records_after = end.bytes_after, end.records_after
    if end.reason is EndReason.BLANK_LAST and getattr(log, "layout", "file") != "dledger":
        bytes_after, records_after = _after_blank(log, end)
    if store.root:
        detector.store(store.root)
    beyond = sum(s.size for s in log.segments if end and end.segment and s.start_offset > end.offset)
    gaps = [{"after": a.name, "expectedOffset": a.start_offset + a.size, "next": b.name}
            for a, b in zip(log.segments, log.segments[1:]) if b.start_offset != a.start_offset + a.size]
    from ..layouts import describe_layouts
    return {
        "store": store.root or log.path,
        "storeRoot": store.root is not None,
        "layouts": _with_deprecations(describe_layouts(store, scan=scan, tiered=tiered)),
        "abortFile": store.has_abort_file if store.root else None,
        **parts,
        "segments": [
            {"name": s.name, "startOffset": s.start_offset, "size": s.size,
             "messages": per_segment.get(s.path, 0),
             "blankOffset": blanks[s.path].commitlog_offset if s.path in blanks else None}
            for s in log.segments
        ],
        "segmentGaps": gaps,
        "messages": summary.messages,
        "recordVersions": summary.versions(),
        "blankRecords": len(scan.blanks),
        "firstStoreTimestamp": summary.first_timestamp,
        "lastStoreTimestamp": summary.last_timestamp,
        "topics": dict(sorted(topics.items())),
        "messageBytes": sum(t["bytes"] for t in topics.values()),
        "largestTopics": largest_topics[:top] if top else largest_topics,
        "largestQueues": largest_queues[:top] if top else largest_queues,
        "writtenBy": detector.result().to_json(),
        "dataEnd": {
            "commitLogOffset": end.offset, "reason": end.reason.name, "description": end.reason.value,
            "clean": end.reason.is_clean, "segment": end.segment, "fileOffset": end.file_offset,
            "detail": end.detail, "bytesAfterInLaterSegments": beyond,
            "bytesAfter": bytes_after, "recordsAfter": records_after,
        },
        "damaged": [r.to_json_dict() for r in getattr(scan, "damaged", ())],
    }


def _after_blank(log, end: DataEnd) -> tuple[int, int]:
    """Bytes and message records after a BLANK record that ends the data in the last segment.

    The broker writes a BLANK where a segment is full, with nothing after it;
    one written over a record (by hand, or a tool that ends the data there)
    leaves the records after it in the file, which the broker's recovery
    drops too. The bytes run from the BLANK to the last non-zero byte of the
    segment (as for a zero-filled header with data after it); the records are those a salvage walk reads from the first record start
    after the BLANK (compiled, in bounded windows).
    """
    seg = next(s for s in log.segments if s.path == end.segment)
    span = nonzero_span(seg.path, end.file_offset + BLANK_HEADER)
    if span is None:
        return 0, 0
    first = find_record_start(seg, end.file_offset + 1, seg.size)
    records = 0
    if first is not None:
        scan = log.batches(columns="commitLogOffset", start=seg.start_offset + first, decompress=False, salvage=True)
        records = sum(b.num_rows for b in scan)
    return span[1] - end.file_offset, records


def _with_deprecations(lay: dict) -> dict:
    """``lay`` with ``dledgerDeprecated`` when the store has DLedger data (the fact lives in the DLedger spec)."""
    if "dledger" in lay["commitLog"] or lay.get("dledgerBesideCommitLog"):
        from ..versions import annotations as ann
        c = ann.load().change("rocketmq_dledger_data", "broker_dledger_deprecated")
        lay["dledgerDeprecated"] = {"release": c.release.version, "doc": c.doc, "citation": c.ref,
                                    "spec": c.location}
    return lay


def _store_parts(store: Store) -> dict:
    """Shutdown state, checkpoint, consume queues and index files of a store root."""
    state = store.state()
    parts: dict = {"shutdown": {
        "clean": state.clean_shutdown, "summary": state.summary(), "abortFile": state.abort_exists,
        "abortPid": state.abort_pid, "lockFile": state.lock_exists}}
    if not (state.abort_exists or state.lock_exists or state.abort_bak_exists
            or os.path.exists(store.path("checkpoint"))):
        # No file a broker leaves at its root: nothing tells how (or whether) a broker stopped.
        parts["shutdown"].update(clean=None, summary="unknown (no abort, lock or checkpoint file in the folder)")
    try:
        cp = store.checkpoint()
        parts["checkpoint"] = None if cp is None else {
            "physicMsgTimestamp": cp.physic_msg_timestamp, "logicsMsgTimestamp": cp.logics_msg_timestamp,
            "indexMsgTimestamp": cp.index_msg_timestamp, "masterFlushedOffset": cp.master_flushed_offset,
            "confirmPhyOffset": cp.confirm_phy_offset}
    except RmqFormatError as exc:
        parts["checkpoint"] = {"error": exc.whole()}
    try:
        queues = store.queues()
        rocks_error = None
    except RocksDBError as exc:  # the RocksDB consume queue cannot be read: show the rest of the store
        from ..consumequeue import list_queues
        queues, rocks_error = list_queues(store.path("consumequeue"), store), exc
    batch = store.batch_queues()
    parts["consumeQueues"] = {
        "queues": len(queues), "units": sum(q.count for q in queues),
        "batchQueues": len(batch), "batchMessages": sum(q.count for q in batch),
        "errors": [{"topic": q.topic, "queueId": q.queue_id, "error": q.error}
                   for q in [*queues, *batch] if q.error]}
    from ..rocksdb.config import config_databases
    dbs = config_databases(store.path("config"))
    if dbs:  # RocksDB configs: v1 (5.1.4+) and v2 config/rdb (5.3.2+)
        parts["rocksdbConfig"] = dbs
    rocks = store.rocksdb_queues()
    if rocks is not None:  # 5.2.0+ storeType=defaultRocksDB (both kinds in a combined store)
        from ..rocksdb.consumequeue import summary
        parts["consumeQueues"]["fileQueues"] = sum(1 for q in queues if q.kind == "file")
        parts["rocksdbConsumeQueue"] = summary(rocks, queues) if rocks_error is None else {
            "path": rocks.path, "queues": 0, "units": 0, "error": rocks_error.whole()}
    messages = store.rocksdb_message_store()
    if messages is not None:  # 5.4.0+ (RIP-82): timer, transaction and index records in rocksdbstore/
        parts["rocksdbMessageStore"] = messages.summary()
    props_path = store.path("config", "broker.properties")
    if os.path.isfile(props_path):  # the broker's persisted settings (default brokerConfigPath)
        from ..brokerconfig import ROCKSDB_KEYS, read_broker_properties
        try:
            props = read_broker_properties(props_path)
            parts["brokerProperties"] = {"path": props.path, "timerEngine": props.timer_engine(),
                                         "settings": {k: props.values[k] for k in ROCKSDB_KEYS if k in props.values},
                                         "notes": props.notes()}
        except RmqFormatError as exc:
            parts["brokerProperties"] = {"path": props_path, "error": exc.whole()}
    try:
        index = store.index()
        files = index.files
        parts["indexFiles"] = {"files": len(files), "entries": sum(max(f.header.index_count - 1, 0) for f in files),
                               "hashSlots": files[0].num_hash_slots if files else None,
                               "indexNum": files[0].num_index if files else None}
    except RmqFormatError as exc:
        parts["indexFiles"] = {"error": exc.whole()}
    return parts


def _print_message_store(ms: dict, out) -> None:
    """The 5.4+ RocksDB message store: records per column family, progress marks, and whether a copy was read."""
    w = out.write
    w(f"rocksdb    message store {ms['path']}\n")
    if ms.get("error"):
        w(f"           {ms['error']}\n")
        return
    for name, label, marks in (("timer", "timer records (RocksDB timer engine)",
                                (("sys_topic_scan_offset_checkpoint", "timer queue read to offset"),
                                 ("timeline_checkpoint", "delivered up to"))),
                               ("trans", "open transactions (half messages)",
                                (("lastOffsetPy", "dispatched to commit-log offset"),)),
                               ("index", "index entries",
                                (("lastOffsetPy", "indexed to commit-log offset"),
                                 ("lastStoreTimeStamp", "last store time")))):
        cf = ms.get(name)
        if cf is None:
            continue
        extra = []
        for key, text in marks:
            if key in cf:
                value = cf[key]
                is_time = key in ("timeline_checkpoint", "lastStoreTimeStamp") and value > 0
                extra.append(f"{text} {iso(value) if is_time else value}")
        w(f"           {cf['records']:,} {label}" + (f"; {', '.join(extra)}" if extra else "") + "\n")
    if ms.get("readFromCopy"):
        who = f"process {ms['lockedByPid']}" if ms.get("lockedByPid") else "another process"
        w(f"           read from a copy: {who} (a running broker) holds the database's LOCK\n")


def _print_inspect(info: dict, out) -> None:
    w = out.write
    w(f"store      {info['store']}\n")
    _print_layouts(info["layouts"], out)
    if "shutdown" in info:
        w(f"shutdown   {info['shutdown']['summary']}\n")
    elif info["abortFile"] is not None:
        w(f"shutdown   {'unclean (abort file present)' if info['abortFile'] else 'clean (no abort file)'}\n")
    else:
        w("shutdown   unknown (a commit-log folder or segment, not a store root)\n")
    cp = info.get("checkpoint")
    if cp and "error" in cp:
        w(f"checkpoint {cp['error']}\n")
    elif cp:
        stamps = [f"{name} {iso(cp[key]) if cp[key] > 0 else 0}" for name, key in (
            ("physic", "physicMsgTimestamp"), ("logics", "logicsMsgTimestamp"), ("index", "indexMsgTimestamp"))]
        write_wrapped(f"checkpoint {', '.join(stamps)}", out)
        if cp["masterFlushedOffset"] or cp["confirmPhyOffset"]:
            w(f"           masterFlushedOffset {cp['masterFlushedOffset']}, confirmPhyOffset {cp['confirmPhyOffset']}\n")
    cq = info.get("consumeQueues")
    if cq:
        text = f"{cq['queues']:,} consume queues, {cq['units']:,} units"
        if cq["batchQueues"]:
            text += f"; {cq['batchQueues']:,} batch consume queues, {cq['batchMessages']:,} messages"
        w(f"queues     {text}\n")
        for e in cq["errors"]:
            w(f"           {e['topic']}/{e['queueId']}: {e['error']}\n")
    rq = info.get("rocksdbConsumeQueue")
    if rq:
        w(f"rocksdb    consume queue database {rq['path']}: {rq['queues']} queues, {rq['units']} units"
          + (f", dispatched to commit-log offset {rq['dispatchedTo']}" if rq.get("dispatchedTo") is not None else "")
          + (f"; {cq['fileQueues']} queues in files too" if cq and cq.get("fileQueues") else "") + "\n")
        if rq.get("error"):
            w(f"           {rq['error']}\n")
        behind = info["dataEnd"]["commitLogOffset"] - (rq.get("dispatchedTo") or 0)
        if rq.get("dispatchedTo") is not None and behind:
            # Records that no consume queue takes (transaction prepare/rollback) also count here.
            w(f"           {abs(behind):,} bytes of commit-log data "
              + ("after the dispatched ones\n" if behind > 0 else "dispatched past the end of the data\n"))
    ms = info.get("rocksdbMessageStore")
    if ms:
        _print_message_store(ms, out)
    bp = info.get("brokerProperties")
    if bp:
        if bp.get("error"):
            w(f"broker     {bp['error']}\n")
        else:
            engine = "RocksDB timeline" if bp["timerEngine"] == "rocksdb" else "file time wheel"
            settings = ", ".join(f"{k}={v}" for k, v in bp["settings"].items())
            write_wrapped(f"broker     {bp['path']}: timer engine {engine}" + (f"; {settings}" if settings else ""),
                          out)
            for note in bp["notes"]:
                write_wrapped(f"           {note}", out)
    if info.get("rocksdbConfig"):
        w("config     RocksDB " + ", ".join(f"{d['folder']} ({d['layout']})" for d in info["rocksdbConfig"]) + "\n")
    idx = info.get("indexFiles")
    if idx and "error" in idx:
        w(f"index      {idx['error']}\n")
    elif idx:
        w(f"index      {idx['files']:,} files, {idx['entries']:,} entries"
          + (f" ({idx['hashSlots']:,} hash slots, {idx['indexNum']:,} entries per file)" if idx["files"] else "")
          + "\n")
    seg = info["segments"]
    w(f"segments   {len(seg)}, {sum(s['size'] for s in seg):,} bytes\n")
    print_table([[s["name"], f"{s['size']:,}", f"{s['messages']:,}", "" if s["blankOffset"] is None else s["blankOffset"]]
            for s in seg], ["name", "size", "messages", "blankOffset"], out, "  ")
    for gap in info["segmentGaps"]:
        w(f"  gap: {gap['after']} ends at offset {gap['expectedOffset']}, next segment is {gap['next']}\n")
    versions = ", ".join(f"{k} {v:,}" for k, v in info["recordVersions"].items()) or "none"
    w(f"messages   {info['messages']:,} ({versions}); BLANK records {info['blankRecords']:,}\n")
    if info["firstStoreTimestamp"] is not None:
        w(f"stored     {iso(info['firstStoreTimestamp'])} .. {iso(info['lastStoreTimestamp'])}\n")
    written = info.get("writtenBy")
    if written:
        w(f"written by {written['summary']} (RocketMQ release, from {len(written['evidence'])} pieces of evidence)\n")
        for e in written["evidence"]:
            write_wrapped(f"           {e['releases']}: {e['observation']}", out, 13)
        for e in written.get("client", []):
            write_wrapped(f"           client {e['releases']}: {e['observation']} (says nothing of the broker)", out, 13)
    end = info["dataEnd"]
    where = f"offset {end['commitLogOffset']}"
    if end["segment"]:
        where += f" ({place(display_path(end['segment']), end['fileOffset'])})"
    write_wrapped(f"data ends  {where}: {end['description']}{': ' + end['detail'] if end['detail'] else ''}", out)
    if end["bytesAfterInLaterSegments"]:
        w(f"           {end['bytesAfterInLaterSegments']:,} bytes of later segments are past the end\n")
    if end["bytesAfter"] and end["reason"] == "BLANK_LAST":
        w(f"           data follows the BLANK record: {end['bytesAfter']:,} bytes, {end['recordsAfter']:,} message "
          f"records in this segment (the broker's recovery drops them too)\n")
    elif end["bytesAfter"]:
        w(f"           data follows: {end['bytesAfter']:,} bytes, {end['recordsAfter']:,} message records in "
          f"this segment (--salvage reads them)\n")
    if info["damaged"]:
        w(f"damaged    {len(info['damaged'])} ranges skipped, {sum(r['length'] for r in info['damaged']):,} bytes\n")
        print_table([[r["segment"].rsplit("/", 1)[-1], r["fileOffset"], r["commitLogOffset"],
                      f"{r['length']:,}", r["reason"]] for r in info["damaged"]],
                    ["segment", "fileOffset", "commitLogOffset", "length", "reason"], out, "  ")
    w("topics\n")
    rows = [[short(topic), f"{t['messages']:,}", " ".join(f"{q}:{n}" for q, n in t["queues"].items())]
            for topic, t in info["topics"].items()]
    print_table(rows, ["topic", "messages", "queues"], out, "  ")
    total = info["messageBytes"]
    share = (lambda n: f"{100 * n / total:.1f}%") if total else (lambda n: "")
    for key, what, header, cells in (
            ("largestTopics", "topics", ["topic", "messages", "bytes", "share"],
             lambda r: [short(r["topic"]), f"{r['messages']:,}", f"{r['bytes']:,}", share(r["bytes"])]),
            ("largestQueues", "queues", ["topic", "queueId", "messages", "bytes", "share"],
             lambda r: [short(r["topic"]), r["queueId"], f"{r['messages']:,}", f"{r['bytes']:,}", share(r["bytes"])])):
        shown, of = len(info[key]), len(info["topics"]) if what == "topics" else \
            sum(len(t["queues"]) for t in info["topics"].values())
        if shown:
            w(f"largest {what} by bytes" + (f" ({shown} of {of})" if shown < of else "") + "\n")
            print_table([cells(r) for r in info[key]], header, out, "  ")


def _print_layouts(lay: dict, out) -> None:
    w = out.write
    kind = {"file": "file segments", "dledger": "DLedger entries",
            "file, then dledger": f"file segments, then DLedger entries from offset {lay.get('dledgerFrom')}"
            }[lay["commitLog"]]
    folders = lay["commitLogFolders"]
    w(f"layouts    commit log: {kind}" + (f" in {len(folders)} folders" if lay["multiFolder"] else "") + "\n")
    if lay["multiFolder"]:
        for f in folders:
            w(f"             {f}\n")
    dl = lay.get("dledger")
    if lay.get("dledgerDeprecated"):
        dep = lay["dledgerDeprecated"]
        write_wrapped(f"           broker DLedger mode is deprecated from {dep['release']} on: {dep['doc']} "
                      f"[{dep['spec']}]", out, 13)
    if dl:
        w(f"           DLedger data {dl['dataFolder']}, last entry index {dl['lastIndex']} term {dl['lastTerm']}"
          + (f", checkpoint {dl['checkpoint']}" if dl.get("checkpoint") else "") + "\n")
        if "indexUnits" in dl:
            w(f"           DLedger index {dl['indexUnits']} units, last index {dl['indexLastIndex']}"
              + ("" if dl["indexMatchesData"] else " (differs from the data; the recovery rebuilds it)") + "\n")
        elif dl.get("indexError"):
            w(f"           DLedger index: {dl['indexError']}\n")
    if lay.get("dledgerBesideCommitLog"):
        w(f"           also DLedger data in {lay['dledgerBesideCommitLog']} (not read: the commit log is)\n")
    comp = lay.get("compaction")
    if comp:
        w(f"           compaction: {len(comp['queues'])} queue(s)"
          + (f", position-checkpoint {comp['positionCheckpoint']}" if comp["positionCheckpoint"] is not None else "")
          + "\n")
        for q in comp["queues"]:
            where = f"{q['topic']}/{q['queueId']}" + (f" ({q['subFolder']})" if q["subFolder"] else "")
            w(f"             {where}: " + (q["error"] if "error" in q else
                                           f"{q['messages']} messages, queue offsets {q['minOffset']}..{q['maxOffset']}")
              + "\n")
    tiered = lay.get("tiered")
    if tiered:
        if "error" in tiered:
            w(f"           tiered store: {tiered['error']}\n")
        else:
            w(f"           tiered store: {tiered['queues']} queue(s), {tiered['messages']} messages, "
              f"{len(tiered['indexFiles'])} index file(s)\n")


#: ``--format jsonl``: the record kind of each line, for each list of the report, in the order written.
RECORDS = (("segments", "segment"), ("segmentGaps", "segmentGap"), ("damaged", "damagedRange"),
           ("topics", "topic"), ("largestTopics", "largestTopic"), ("largestQueues", "largestQueue"))


def write_lines(info: dict, out) -> None:
    """``info`` as JSON Lines: an ``inspect`` line (the store as a whole: layouts, shutdown, checkpoint,
    queues, index, counts, times, where the data ends), then one line per segment, segment gap,
    damaged range, topic and largest topic and queue (a row of each table the text shows), each with
    ``"record"`` naming its kind."""
    lists = dict(RECORDS)
    out.write(json.dumps({"record": "inspect", **{k: v for k, v in info.items() if k not in lists}},
                         ensure_ascii=False) + "\n")
    for key, kind in RECORDS:
        rows = info[key]
        if key == "topics":
            rows = ({"topic": name, **t} for name, t in rows.items())
        for r in rows:
            out.write(json.dumps({"record": kind, **r}, ensure_ascii=False) + "\n")


def cmd_inspect(args: argparse.Namespace) -> int:
    store = open_from_args(args)
    if args.tiered:
        from .layouts import require_tiered
        require_tiered(args.tiered, store.root)
    info = inspect_store(store, verify_crc=args.verify_crc, force_verify_prop_crc=args.force_verify_prop_crc,
                         salvage=args.salvage, live=args.live,
                         tiered=args.tiered, top=args.top)
    if args.format == "jsonl":
        write_lines(info, sys.stdout)
    elif args.format == "json":
        sys.stdout.write(json.dumps(info, ensure_ascii=False, indent=2) + "\n")
    else:
        _print_inspect(info, sys.stdout)
    from ..recovery.salvage import DamagedRange
    for r in info["damaged"]:  # the text of messages and export
        rng = DamagedRange(r["segment"], r["fileOffset"], r["commitLogOffset"], r["length"], r["reason"])
        sys.stderr.write(f"rmqformats: damaged range skipped: {whole(rng)}\n")
    # A missing segment file is damage too, though a plain scan crosses it as the broker does.
    return status.DAMAGED if info["damaged"] or info["segmentGaps"] or not info["dataEnd"]["clean"] else status.OK


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("inspect", help="segments, messages and bytes per topic and queue, time range, "
                                        "where the data ends",
                        description="What a store holds and where its data ends. --format jsonl writes an "
                                    "'inspect' line (the store as a whole), then a line per segment, segment gap, "
                                    "damaged range, topic, largest topic and largest queue, each with \"record\" "
                                    "naming its kind; --format json is the same report as one document.")
    add_store_args(sp, formats=("table", "jsonl", "json"))
    add_verify_crc(sp, True)
    add_salvage(sp)
    add_jobs(sp)
    sp.add_argument("--tiered", metavar="PATH", help="also describe the tiered store at PATH (tieredStoreFilePath)")
    sp.add_argument("--top", metavar="N", type=non_negative, default=DEFAULT_TOP,
                    help=f"list the N topics and N queues holding the most bytes (default {DEFAULT_TOP}; 0: all)")
    sp.set_defaults(func=cmd_inspect)

