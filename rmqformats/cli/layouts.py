"""``tiered`` and ``compaction``: the stores that live beside the commit log, read on their own.

A DLedger commit log and a commit log in several folders need no command
of their own: every command reads them through ``STORE`` (a store root, a
DLedger ``data`` folder, or folders separated by ``;``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence

from ..errors import StoreNotFoundError, WrongLayoutError
from ..store import open_store
from . import status
from .common import Unknown, UsageError, add_jobs, cpus, iso, print_table, short
from .present import whole
from .tables import column_blocks, print_columns_streamed, print_rows_streamed, row_blocks, table_width

_HEADER = ["commitLogOffset", "topic", "queueId", "queueOffset", "storeTimestamp", "tags", "keys", "bodyBytes"]


def _row(m) -> list:
    return [m.commitlog_offset, short(m.topic), m.queue_id, m.queue_offset, iso(m.store_timestamp), m.tags or "",
            " ".join(m.keys), len(m.shown_body)]  # the body as shown, decompressed: bodyBytes as in messages


def _write_messages(msgs, fmt: str, out) -> None:
    """``msgs`` (an iterable, read once, never held) as JSON Lines or a table."""
    if fmt == "jsonl":
        for m in msgs:
            out.write(json.dumps(m.to_json_dict(), ensure_ascii=False) + "\n")
    else:
        print_rows_streamed((_row(m) for m in msgs), _HEADER, out)


def _write_log(log, fmt: str, out, *, verify_crc: bool = False):
    """The messages of a commit log as :func:`_write_messages` writes them, decoded a batch at a time; returns
    the walk's data end."""
    from ..export import JSONL_COLUMNS, MESSAGE_TABLE_SOURCE
    scan = log.batches(JSONL_COLUMNS if fmt == "jsonl" else MESSAGE_TABLE_SOURCE, verify_crc=verify_crc)
    _write_pieces(scan, fmt, out)
    return scan.end


def _queue_pieces(cq, log, columns: Sequence[str]) -> Iterator:
    """A batch consume queue's messages, as :meth:`~rmqformats.batch_consumequeue.BatchConsumeQueue.messages`
    gives them, in pieces: record batches of ``columns`` from its log's walk while its units point, one for
    one and in order, at the records there and agree with them, as a compaction queue's do; then, from the
    first unit that does not (an inner batch, a unit of several messages, a record no unit points at, a
    damaged one), an iterator of the message objects of the rest, which says why where one is wrong."""
    import numpy as np
    import pyarrow.compute as pc

    from ..batch_consumequeue import INNER_BASE, INNER_NUM, UNIT_DTYPE
    from ..frames import scalar, to_numpy
    from ..walk import layout as L
    from ..walk.arrow import property_column
    ofs, size, _, _, base, num, *_ = UNIT_DTYPE.names or ()
    start, stop = cq.min_offset, cq.max_offset
    if start >= stop:
        return
    first = cq.find(start)
    unit, end_unit = first.index, cq.end_unit
    inner = [property_column(INNER_BASE), property_column(INNER_NUM)]
    checked = ["commitLogOffset", "topic", "queueId", "queueOffset", "storeSize", "sysFlag", *inner]
    walk = log.batches(list(dict.fromkeys([*columns, *checked])), from_offset=first.commitlog_offset)
    for batch in walk:
        units = cq.unit_array(unit, min(end_unit, unit + batch.num_rows))
        n = len(units)
        last = np.flatnonzero(units[base] >= stop)  # the units from here hold nothing to list
        n = int(last[0]) if len(last) else n
        offsets = to_numpy(batch.column("commitLogOffset"))[:n]
        good = ((units[ofs][:n] == offsets) & (units[base][:n] >= start) & (units[num][:n] == 1)
                & (units[size][:n] == to_numpy(batch.column("storeSize"))[:n])
                & (units[base][:n] == to_numpy(batch.column("queueOffset"))[:n])
                & (to_numpy(batch.column("queueId"))[:n] == cq.queue_id)
                & (to_numpy(batch.column("sysFlag"))[:n] & L.INNER_BATCH == 0))
        for name in inner:
            good &= ~to_numpy(batch.column(name).is_valid())[:n]
        good &= to_numpy(pc.fill_null(pc.equal(batch.column("topic"), scalar(cq.topic)), scalar(False)))[:n]
        bad = np.flatnonzero(~good)
        taken = int(bad[0]) if len(bad) else n
        if taken:
            yield batch.select(list(columns)).slice(0, taken)
        unit += taken
        if taken < n:
            break
        if n < len(units) or unit >= end_unit:
            return
    if unit < end_unit:
        yield (m.message for m in cq.messages_from(unit, start, stop))


def _write_pieces(pieces: Iterator, fmt: str, out) -> None:
    """Record batches (of :data:`~rmqformats.export.JSONL_COLUMNS` for JSON Lines, else of
    :data:`~rmqformats.export.MESSAGE_TABLE_SOURCE`) and iterators of message objects, in turn, as
    :func:`_write_messages` writes messages (one table)."""
    import pyarrow as pa

    from ..export import MESSAGE_TABLE_SOURCE, jsonl_bytes, message_table_columns
    if fmt == "jsonl":
        for piece in pieces:
            if isinstance(piece, pa.RecordBatch):
                out.write(bytes(jsonl_bytes(piece)).decode("utf-8"))
            else:
                _write_messages(piece, fmt, out)
        return
    width = 48 if table_width(out) is not None else 1 << 30  # as short() cuts a topic for a terminal
    msg_id = MESSAGE_TABLE_SOURCE.index("msgId")

    def blocks():
        for piece in pieces:
            if isinstance(piece, pa.RecordBatch):
                yield [c for i, c in enumerate(message_table_columns(piece, width)) if i != msg_id]
            else:
                yield from row_blocks((_row(m) for m in piece), _BLOCK)
    print_columns_streamed(column_blocks(blocks(), _BLOCK), _HEADER, out)


#: Rows of a table block (``print_rows_streamed``'s): the rows a table holds before it writes them.
_BLOCK = 1000


def _end_status(end) -> int:
    if end is not None and not end.reason.is_clean:
        sys.stderr.write(f"rmqformats: data ends early: {whole(end)}\n")
        return status.DAMAGED
    return status.OK


def found_at(path: str) -> str:
    """What is at ``path``, in words: for errors that say what was expected and what was found."""
    import glob

    from ..commitlog import SEGMENT_NAME
    if not os.path.exists(path):
        return "nothing: no such file or folder"
    if not os.path.isdir(path):
        from ..filekind import UnknownFileKindError, detect
        try:
            return detect(path).with_article
        except UnknownFileKindError:
            return "a file"
    names = sorted(os.listdir(path))
    if not names:
        return "an empty folder"
    if "commitlog" in names and os.path.isdir(os.path.join(path, "commitlog")):
        parts = [n for n in ("commitlog", "consumequeue", "index", "compaction", "timerlog") if n in names]
        return f"a broker store root ({', '.join(p + '/' for p in parts)})"
    if glob.glob(os.path.join(glob.escape(path), "*_*", "*", "*", "*", "COMMIT_LOG")):
        return "a tiered store (tieredStoreFilePath)"
    if {"compactionLog", "compactionCq"} & set(names):
        return "a compaction folder (compactionLog/, compactionCq/): give its store root"
    from ..dledger.detect import dledger_data_folder
    if dledger_data_folder(path) is not None:
        return "a DLedger store"
    segments = [n for n in names if SEGMENT_NAME.match(n)]
    if segments:
        return f"a folder of {len(segments)} commit-log segment(s)"
    shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    return f"a folder holding {shown}"


def require_tiered(path: str, root: str | None):
    """The tiered store at ``path``; :class:`WrongLayoutError` when it holds no tiered files."""
    from ..tiered import TieredStore
    ts = TieredStore(path, root=root)
    if not ts.queues() and not ts.index_files():
        raise WrongLayoutError(path, None, "not a tiered store: expected tieredStoreFilePath, holding "
                                           "<hash>_<cluster>/<broker>/<topic>/<queueId>/COMMIT_LOG (CONSUME_QUEUE, "
                                           f"INDEX) folders of the posix backend; found {found_at(path)}")
    return ts


def cmd_tiered(args: argparse.Namespace) -> int:
    ts = require_tiered(args.path, args.store)
    out = sys.stdout
    if args.key is not None:
        if args.topic is None:
            raise SystemExit("rmqformats tiered: error: --key needs --topic")
        hits = ts.lookup(args.topic, args.key, num_hash_slots=args.hash_slots, num_items=args.index_num)
        _write_messages([h.message for h in hits], args.format, out)
        return status.OK
    if args.topic is not None:
        queues = [q for q in ts.queues() if q.topic == args.topic and (args.queue is None or q.queue_id == args.queue)]
        if not queues:
            raise StoreNotFoundError(args.path, None, f"no tiered files for {args.topic}"
                                                      + ("" if args.queue is None else f"/{args.queue}"))
        code = status.OK
        for q in queues:
            code = max(code, _end_status(_write_log(q.commitlog(), args.format, out, verify_crc=args.verify_crc)))
        return code
    rows, code = [], status.OK
    for q in ts.queues():
        log = q.commitlog()
        scan = log.batches("commitLogOffset", verify_crc=args.verify_crc, decompress=False)
        n = sum(batch.num_rows for batch in scan)
        cq = q.consume_queue()
        row = {"cluster": q.cluster, "broker": q.broker, "topic": q.topic, "queueId": q.queue_id,
               "commitLogFiles": len(log.segments), "messages": n, "minOffset": cq.min_offset,
               "maxOffset": cq.max_offset, "dataEnd": str(scan.end)}
        code = max(code, _end_status(scan.end))
        if args.format == "jsonl":
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            rows.append([q.broker, short(q.topic), q.queue_id, len(log.segments), n, cq.min_offset, cq.max_offset])
    if args.format == "table":
        print_table(rows, ["broker", "topic", "queueId", "commitLogFiles", "messages", "minOffset", "maxOffset"], out)
        for f in ts.index_files(num_hash_slots=args.hash_slots, num_items=args.index_num):
            out.write(f"index {f.path}: {'compacted' if f.compacted else 'writing form'}, {f.header.num_items} items, "
                      f"{f.num_hash_slots} slots\n")
    return code


#: The columns of the ``dledger`` table: the entry header's fields and where its message is.
_ENTRY_TABLE = ("entryIndex", "entryTerm", "entryPosition", "entrySize", "commitLogOffset", "topic", "queueId",
                "queueOffset", "storeTimestamp")
#: The columns of its JSON Lines: those and the rest of the header, the data file and the message id.
_ENTRY_JSON = (*_ENTRY_TABLE, "entryChannel", "entryChainCrc", "entryBodyCrc", "segment", "msgId")


def _shown_entries(batches, from_index: int, limit: int | None) -> Iterator:
    """The batches' rows from entry index ``from_index`` on, at most ``limit`` of them."""
    import pyarrow.compute as pc

    from ..frames import scalar
    n = 0
    for batch in batches:
        if from_index > 0:
            batch = batch.filter(pc.greater_equal(batch.column("entryIndex"), scalar(from_index)))
        if limit is not None:
            batch = batch.slice(0, limit - n)
        if batch.num_rows:
            n += batch.num_rows
            yield batch
        if limit is not None and n >= limit:
            return


def _entries_json(batch, files) -> str:
    """The JSON Lines of the entries of ``batch`` (:data:`_ENTRY_JSON`'s columns); ``files``: the data files'
    names, paths and first positions, as arrays."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..export import jsonl_bytes
    names, paths, starts = files
    which = pc.index_in(batch.column("segment"), value_set=names)
    col = batch.column
    lines = pa.record_batch(
        [col("entryIndex"), col("entryTerm"), col("entryPosition"), col("entrySize"), col("entryChannel"),
         col("entryChainCrc"), col("entryBodyCrc"), paths.take(which),
         pc.subtract(col("entryPosition"), starts.take(which)), col("commitLogOffset"), col("topic"),
         col("queueId"), col("queueOffset"), col("storeTimestamp").cast(pa.int64()), col("msgId")],
        names=["index", "term", "entryOffset", "size", "channel", "chainCrc", "bodyCrc", "file", "fileOffset",
               "commitLogOffset", "topic", "queueId", "queueOffset", "storeTimestamp", "msgId"])
    return bytes(jsonl_bytes(lines)).decode("utf-8")


def _entries_cells(batch, topic_width: int) -> list:
    """The ``dledger`` table's cells of the entries of ``batch`` (:data:`_ENTRY_TABLE`'s columns)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..export import short_text, time_text
    return [short_text(batch.column(c), topic_width) if c == "topic" else
            time_text(batch.column(c)) if c == "storeTimestamp" else pc.cast(batch.column(c), pa.string())
            for c in _ENTRY_TABLE]


def cmd_dledger(args: argparse.Namespace) -> int:
    from ..dledger import DLedgerCommitLog
    store = open_store(args.store)
    log = store.commitlog
    if not isinstance(log, DLedgerCommitLog):
        raise WrongLayoutError(args.store, None, "not a DLedger commit log: expected dledger-*/data under the store "
                                                 "root, or a folder of DLedger data files; found a plain commit "
                                                 f"log ({log.path}: its files hold plain records)")
    log.jobs = cpus() if args.jobs is None else args.jobs
    out = sys.stdout
    if args.check_index:
        from ..dledger.index import check_index
        idx = log.index()
        if idx is None:
            raise StoreNotFoundError(log.path, None, "no DLedger index/ folder beside the data")
        found = check_index(log, idx)
        for text in found:
            out.write(text + "\n")
        out.write(f"index {'agrees with the data' if not found else 'differs from the data'}\n")
        return status.FINDINGS if found else status.OK
    data = log.entry_log  # of a store switched to DLedger, its DLedger part
    # From the data file holding entry --from-index where the index says (and the entry confirms) where it is.
    scan = data.batches(_ENTRY_JSON if args.format == "jsonl" else _ENTRY_TABLE, decompress=False,
                        start=data.entry_start(args.from_index), verify_crc=args.verify_crc, jobs=log.jobs)
    shown = _shown_entries(scan, args.from_index, args.limit)
    if args.format == "jsonl":
        import numpy as np

        from ..frames import from_numpy, from_strings
        files = (from_strings([os.path.basename(seg.path) for seg in data.segments]),
                 from_strings([seg.path for seg in data.segments]),
                 from_numpy(np.array([seg.start_offset for seg in data.segments], np.int64)))
        n = 0
        for batch in shown:
            out.write(_entries_json(batch, files))
            n += batch.num_rows
    else:
        end = len(str(max((s.start_offset + s.size for s in log.segments), default=0)))
        width = 48 if table_width(out) is not None else 1 << 30  # as short() cuts a topic for a terminal
        n = print_columns_streamed((_entries_cells(batch, width) for batch in shown),
                                   ["index", "term", "entryOffset", "size", "commitLogOffset", "topic", "queueId",
                                    "queueOffset", "storeTimestamp"], out, min_widths={2: end, 4: end})
    if args.limit is None or n < args.limit:
        return _end_status(scan.end)
    return status.OK


def cmd_compaction(args: argparse.Namespace) -> int:
    parent = os.path.dirname(os.path.abspath(args.store))
    if os.path.basename(os.path.normpath(args.store)) == "compaction" and \
            os.path.isdir(os.path.join(parent, "commitlog")):
        raise UsageError(f"{os.path.abspath(args.store)} is the store's compaction/ folder: give the store root "
                         f"({parent}), which holds it")
    store = open_store(args.store)
    comp = store.compaction()
    out = sys.stdout
    if not comp.exists:
        if args.topic is not None:
            raise WrongLayoutError(args.store, None, "no compaction topics: expected a compaction/ folder "
                                                     "(compaction topics, 5.1.0+) in the store root; found "
                                                     f"{found_at(args.store)} without one")
        out.write("no compaction/ folder: the store has no compaction topics\n")
        return status.OK
    queues = [q for q in comp.queues() if (args.topic is None or q.topic == args.topic)
              and (args.queue is None or q.queue_id == args.queue)]
    if args.topic is not None and not queues:
        known = sorted({f"{q.topic}/{q.queue_id}" for q in comp.queues()})
        raise Unknown(f"no compaction queue {args.topic}" + ("" if args.queue is None else f"/{args.queue}")
                      + f" under {comp.folder}; it has "
                      + (", ".join(known[:20]) + (" …" if len(known) > 20 else "") if known else "none"))
    if args.topic is not None:
        code = status.OK
        for q in queues:
            if q.sub_folder and not args.in_progress:
                continue
            from ..export import JSONL_COLUMNS, MESSAGE_TABLE_SOURCE
            _write_pieces(_queue_pieces(q.consume_queue(), q.commitlog(),
                                        JSONL_COLUMNS if args.format == "jsonl" else MESSAGE_TABLE_SOURCE),
                          args.format, out)
        return code
    cp = comp.position_checkpoint()
    if not queues:
        sys.stderr.write(f"rmqformats: no compaction queues under {os.path.abspath(comp.folder)}: the store has "
                         "no compaction topics\n")
    rows, code = [], status.OK
    for q in queues:
        scan = q.commitlog().batches("commitLogOffset", decompress=False)
        n = sum(batch.num_rows for batch in scan)
        info = q.consume_queue().info()
        code = max(code, _end_status(scan.end))
        key = f"{q.topic}_{q.queue_id}"
        if args.format == "jsonl":
            out.write(json.dumps({"topic": q.topic, "queueId": q.queue_id, "subFolder": q.sub_folder, "messages": n,
                                  "minOffset": info.min_offset, "maxOffset": info.max_offset,
                                  "compactedTo": (cp or {}).get(key)}) + "\n")
        else:
            rows.append([short(q.topic), q.queue_id, q.sub_folder, n, info.min_offset, info.max_offset,
                         (cp or {}).get(key, "")])
    if args.format == "table":
        print_table(rows, ["topic", "queueId", "subFolder", "messages", "minOffset", "maxOffset", "compactedTo"], out)
    return code


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("tiered", help="the tiered store (posix backend): queues, messages, key lookups")
    sp.add_argument("path", help="tieredStoreFilePath (the folder holding <hash>_<cluster>/)")
    sp.add_argument("--store", help="the broker's store root (tiered_index_file/ and tieredStoreMetadata.json)")
    sp.add_argument("--topic", help="list this topic's messages (all its tiered queues, or --queue); with --key, "
                                    "the topic the key is looked up in")
    sp.add_argument("--queue", type=int, help="queue id")
    sp.add_argument("--key", help="look up a KEYS value or UNIQ_KEY of --topic through the tiered index files")
    sp.add_argument("--hash-slots", type=int, help="tieredStoreIndexFileMaxHashSlotNum when not the default")
    sp.add_argument("--index-num", type=int, help="tieredStoreIndexFileMaxIndexNum when not the default")
    sp.add_argument("--verify-crc", action=argparse.BooleanOptionalAction, default=False,
                    help="check body CRCs (the upload leaves __CRC32# unmatched, so only body CRCs count)")
    sp.add_argument("--format", choices=["table", "jsonl"], default="table", help="output format")
    sp.set_defaults(func=cmd_tiered)

    sp = sub.add_parser("dledger", help="the entries of a DLedger commit log (index, term, position, CRCs), "
                                        "or a check of its entry index")
    sp.add_argument("store", help="store root or DLedger data folder")
    sp.add_argument("--from-index", type=int, default=0,
                    help="first entry index shown (read from the data file holding it, where index/ says)")
    sp.add_argument("--limit", type=int, help="stop after this many entries")
    sp.add_argument("--check-index", action="store_true", help="compare index/ with the data, as the recovery does")
    sp.add_argument("--verify-crc", action=argparse.BooleanOptionalAction, default=False,
                    help="check each message's body CRC (and __CRC32#); the data ends at the first mismatch")
    sp.add_argument("--format", choices=["table", "jsonl"], default="table", help="output format")
    add_jobs(sp)
    sp.set_defaults(func=cmd_dledger)

    sp = sub.add_parser("compaction", help="compaction topics: compaction logs, queues, position-checkpoint")
    sp.add_argument("store", help="store root")
    sp.add_argument("--topic", help="list this compaction topic's kept messages (all its queues, or --queue) "
                                    "instead of the queues")
    sp.add_argument("--queue", type=int, help="queue id")
    sp.add_argument("--in-progress", action="store_true", help="with --topic, also the compacting/ and "
                                                               "replicating/ sub-folders")
    sp.add_argument("--format", choices=["table", "jsonl"], default="table", help="output format")
    sp.set_defaults(func=cmd_compaction)
