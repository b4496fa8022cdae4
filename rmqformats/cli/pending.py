"""``pending``: the scheduled, timer, transaction and POP messages still in flight when the store was written."""

from __future__ import annotations

import argparse
import json
import sys

from . import status
from .common import UsageError, add_jobs, add_store_args, iso, open_from_args
from .ends import report_end
from .tables import print_rows_streamed


def delay_levels(path: str | None, root: str | None = None) -> tuple[int, ...]:
    """The broker's ``messageDelayLevel`` from the config file ``path`` (``--config``), else from the store
    root's ``config/broker.properties`` when it holds one, else the default."""
    from ..systopics.settings import DelayLevelError
    from ..systopics.settings import delay_levels as read_levels
    try:
        return read_levels(config=path, root=root).levels_ms
    except DelayLevelError as exc:
        if path is None:
            raise
        raise UsageError(f"--config {path}: {exc.reason}") from None


def cmd_pending(args: argparse.Namespace) -> int:
    from ..frames import rows_in_millis
    from ..systopics.pending import PARTS, pending, table_cells
    store = open_from_args(args)
    result = pending(store, delay_levels_ms=delay_levels(args.config, store.root),
                     trace_topics=args.trace_topic or ())
    out = sys.stdout
    for line in result.body_errors:  # the rest is listed; the record whose body has not its format is named
        sys.stderr.write(f"rmqformats pending: {store.commitlog.path}: body not decoded at {line}\n")
    if args.format == "json":
        last = result.last_store_time_ms
        rcp = result.rocksdb_timer_checkpoint
        doc: dict[str, object] = {
            "lastStoreTime": last,
            # a list of objects, as config's: the levels are data, not keys
            "delayOffsets": ([{"level": k, "offset": v} for k, v in result.delay_offsets.items()]
                             if result.has_delay_offsets else None),
            "timerCheckpoint": None if result.timer_checkpoint is None else dict(zip(
                ("lastTimerQueueOffset", "lastReadTimeMs"), result.timer_checkpoint)),
            "rocksdbTimerCheckpoint": None if rcp is None else dict(zip(("scanOffset", "timeline"), rcp)),
            "rocksdbTransactions": result.rocksdb_transactions, "counts": result.counts()}
        for part, attr, _ in PARTS:
            doc[part] = list(rows_in_millis(getattr(result, attr))[0])
        out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return _ended(result, store)
    if args.format == "jsonl":
        for part, attr, _ in PARTS:
            for row in rows_in_millis(getattr(result, attr))[0]:
                out.write(json.dumps({"record": part, **row}, ensure_ascii=False) + "\n")
        return _ended(result, store)
    last = result.last_store_time_ms
    out.write(f"last store time: {iso(last) if last is not None else '(no message)'}\n")
    out.write("delay offsets: " + (", ".join(f"level {k}: {v}" for k, v in result.delay_offsets.items())
                                   if result.has_delay_offsets else "no config/delayOffset.json (every level from 0)")
              + "\n")
    cp = result.timer_checkpoint
    out.write("timer checkpoint: " + (f"queue offset {cp[0]}, read up to {iso(cp[1])}" if cp is not None
                                      else "no config/timercheck (every timer message listed)") + "\n")
    rcp = result.rocksdb_timer_checkpoint
    if rcp is not None:
        out.write(f"RocksDB timer store: scanned to queue offset {rcp[0]}, delivered up to {iso(rcp[1])} "
                  "(config/timercheck not used)\n")
    if result.rocksdb_transactions:
        out.write("RocksDB transaction store: open RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC halves from its trans records\n")
    for part, attr, title in PARTS:
        table = getattr(result, attr)
        out.write(f"\n{title}: {table.num_rows}\n")
        if table.num_rows:
            print_rows_streamed(table_cells(table, iso), table.column_names, out, "  ")
    return _ended(result, store)


def _ended(result, store) -> int:
    """The exit status of the walk, after its note where the data ended at damage (as ``messages`` says it):
    what was pending past there is not listed."""
    return status.OK if result.scan is None else report_end(result.scan, store.commitlog)


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("pending", help="scheduled, timer, transaction and POP messages still in flight; dead letters",
                        description="Walk the commit log once and list what was still in flight when the store was "
                                    "written: scheduled messages past config/delayOffset.json's offsets, timer "
                                    "messages past config/timercheck, open transactions (half messages no op "
                                    "closes, prepared records no commit or rollback closes) with their age to the "
                                    "last store time and check count, POP checkpoints with unacked offsets, and "
                                    "dead-letter messages per origin topic and group.",
                        epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store_args(sp, ("table", "jsonl", "json"))
    add_decoding_args(sp)
    add_jobs(sp)
    sp.set_defaults(func=cmd_pending)


def add_decoding_args(sp: argparse.ArgumentParser) -> None:
    """``--config`` (for ``messageDelayLevel``) and ``--trace-topic``: how system messages are decoded."""
    sp.add_argument("--config", metavar="FILE", help="broker .properties or JSON store config for messageDelayLevel "
                                                     "(default: the store's config/broker.properties when it has "
                                                     "one, else 1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m "
                                                     "30m 1h 2h)")
    sp.add_argument("--trace-topic", action="append", metavar="TOPIC",
                    help="a custom trace topic (besides RMQ_SYS_TRACE_TOPIC); may be repeated")


def add_system_args(sp: argparse.ArgumentParser) -> None:
    """``--decode-system`` and the options of :func:`add_decoding_args`."""
    sp.add_argument("--decode-system", action="store_true",
                    help="add the decoded system columns (kind, realTopic, realQueueId, delayLevel, dueTime, "
                         "timerCancelsKey, transactionId, transactionState, transactionCheckTimes, "
                         "preparedQueueOffset, producerGroup, group, originTopic, originMsgId, retryCount): "
                         "filled for the broker's own messages, null elsewhere")
    add_decoding_args(sp)


def system_decoding(args: argparse.Namespace, root: str | None = None):
    """The :class:`~rmqformats.systopics.SystemDecoding` of ``--decode-system``, or ``None`` without it
    (``root``: the store root, whose ``config/broker.properties`` gives the delay levels without ``--config``)."""
    if not getattr(args, "decode_system", False):
        if getattr(args, "config", None) is not None or getattr(args, "trace_topic", None):
            raise UsageError("--config and --trace-topic go with --decode-system")
        return None
    from ..systopics import SystemDecoding
    return SystemDecoding(delay_levels_ms=delay_levels(args.config, root),
                          trace_topics=tuple(args.trace_topic or ()))
