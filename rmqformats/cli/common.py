"""What the commands share: opening a store, times, progress bars, tables, common options."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from tqdm import tqdm

from ..commitlog import Scan
from ..message import Message, format_millis, to_millis
from ..sample import sample_store_path
from ..store import Store, open_store
from . import tables
from .usage import Unknown, UsageError  # noqa: F401 - the commands take them from here

_PROGRESS_EVERY = 4096
#: Rows decoded at a time for the messages table.
_TABLE_BATCH = 8192
#: Bytes of commit log the messages command reads at a time (small: it prints as it reads).
_MESSAGES_WINDOW = 8 << 20




def parse_time(text: str) -> int:
    """Milliseconds since the epoch from epoch milliseconds or an ISO 8601 time (UTC if naive)."""
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        return to_millis(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not epoch milliseconds or an ISO 8601 time: {text!r}") from None


def iso(ms: int) -> str:
    """ISO 8601 text of epoch ms; the raw number, flagged, for a value no date can show."""
    return format_millis(ms)


def release_arg(text: str) -> str:
    """``--release``: a broker release (:func:`rmqformats.versions.releases.broker_release`), else a usage error."""
    from ..versions.releases import UnknownReleaseError, broker_release
    try:
        return broker_release(text)
    except UnknownReleaseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def open_from_args(args: argparse.Namespace) -> Store:
    store = _open_from_args(args)
    if hasattr(args, "jobs"):  # every walk of its commit log in this command uses that many worker processes
        store.commitlog.jobs = cpus() if args.jobs is None else args.jobs
    return store


def _open_from_args(args: argparse.Namespace) -> Store:
    if args.sample:
        if getattr(args, "store", None):
            raise UsageError(f"--sample reads the bundled sample store; give either it or STORE "
                             f"({args.store}), not both")
        if getattr(args, "commitlog", None):
            raise UsageError("--commitlog names a store root's commit-log folders; it does not go with --sample")
        return open_store(sample_store_path())
    if not args.store:
        raise UsageError("give a STORE path or --sample")
    commitlog = getattr(args, "commitlog", None)
    return open_store(_absolute(args.store), commitlog=None if commitlog is None else _absolute(commitlog))


#: Entries of a folder that make it a store root (``storePathRootDir``).
_ROOT_ENTRIES = ("commitlog", "consumequeue", "config", "checkpoint", "index")


def store_paths(store: Store) -> list[str]:
    """What a command reading ``store`` must never write into: its root, its commit-log folders and files."""
    from ..commitlog import split_folders
    paths = [store.root] if store.root is not None else []
    for part in split_folders(store.commitlog.path):
        paths += file_store_paths(part) if os.path.isfile(part) else [part]
    paths += [seg.path for seg in getattr(store.commitlog, "segments", ())]
    return paths


def file_store_paths(path: str) -> list[str]:
    """What reading the single store file ``path`` forbids writing into: the file; its folder when that is
    a store's ``commitlog/`` (or other part) folder; the store root above it when it looks like one.
    A segment copied into a folder of its own leaves the rest of that folder writable."""
    paths = []
    for where in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):  # a link, and what it names
        paths.append(where)
        folder = os.path.dirname(where)
        root = os.path.dirname(folder)
        if os.path.basename(folder) in _ROOT_ENTRIES:
            paths.append(folder)
            if sum(os.path.exists(os.path.join(root, e)) for e in _ROOT_ENTRIES) >= 2:
                paths.append(root)
    return paths


def _absolute(path: str) -> str:
    """``path`` made absolute; each folder of a ``;``-separated list (several commit-log folders) on its own."""
    from ..commitlog import FOLDER_SEPARATOR, split_folders
    parts = split_folders(path)
    return FOLDER_SEPARATOR.join(os.path.abspath(p) for p in parts) if len(parts) > 1 else os.path.abspath(path)


def with_progress(scan: Scan, total: int, label: str) -> Iterator[Message]:
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


def batches_with_progress(scan, total: int, label: str) -> Iterator:
    """Yield the record batches of a columnar ``scan`` while a progress bar on stderr follows its bytes (on a TTY)."""
    bar = tqdm(total=total, unit="B", unit_scale=True, desc=label, file=sys.stderr,
               disable=not sys.stderr.isatty(), leave=False)
    try:
        for batch in scan:
            bar.update(scan.bytes_done - bar.n)
            yield batch
            del batch  # not held while the scan decodes the next one (a batch can hold hundreds of MiB)
        bar.update(total - bar.n)
    finally:
        bar.close()


def short(text: str, width: int = 48) -> str:
    """``text`` cut in the middle to ``width`` characters, for table cells fitted to a terminal (JSON,
    ``--wide`` and plain tables, to a pipe or a file, keep it whole)."""
    text = str(text)  # a key a hand-edited config file holds as an integer
    if len(text) <= width or tables.table_width(sys.stdout) is None:
        return text
    return tables.cut_middle(text, width)


def print_table(rows: list[list], header: list[str], out, indent: str = "") -> None:
    """``rows`` under ``header`` as aligned columns, fitted to the terminal (see :mod:`.tables`)."""
    tables.print_table(rows, header, out, indent)


def byte_stream(out):
    """The byte stream under the text stream ``out``, after what was written to it as text (a stream that
    decodes the bytes into ``out`` where it has none, as a ``StringIO``)."""
    out.flush()
    raw = getattr(out, "buffer", None)
    return raw if raw is not None else _TextBytes(out)


class _TextBytes:
    """Bytes written to a text stream as UTF-8 text."""

    def __init__(self, out):
        self.out = out

    def write(self, data) -> None:
        self.out.write(bytes(data).decode("utf-8"))

    def flush(self) -> None:
        self.out.flush()


def add_store_args(sp: argparse.ArgumentParser, formats: tuple[str, ...] = ("table", "jsonl")) -> None:
    """STORE, ``--sample`` and ``--format`` (one of ``formats``): the options of most commands."""
    sp.add_argument("store", nargs="?", help="store root, commitlog/ folder or one segment file")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    add_commitlog_arg(sp)
    sp.add_argument("--format", choices=list(formats), default="table", help="output format")
    if "json" in formats:
        sp.add_argument("--json", dest="format", action="store_const", const="json",
                        help="the same as --format json")


def add_commitlog_arg(sp: argparse.ArgumentParser) -> None:
    """``--commitlog``: the commit-log folder(s) of a store root kept elsewhere (``storePathCommitLog``)."""
    sp.add_argument("--commitlog", metavar="FOLDERS", help="the store root's commit-log folder(s) when not "
                                                           "STORE/commitlog (storePathCommitLog; several "
                                                           "separated by ';')")


def add_verify_crc(sp: argparse.ArgumentParser, default: bool) -> None:
    """``--verify-crc``, on or off by default, and ``--force-verify-prop-crc``."""
    sp.add_argument("--verify-crc", action=argparse.BooleanOptionalAction, default=default,
                    help="check body CRCs; the data ends at the first mismatch, as in broker recovery with "
                         f"checkCRCOnRecover and its default configuration (default: {'on' if default else 'off'})")
    sp.add_argument("--force-verify-prop-crc", action="store_true",
                    help="with --verify-crc, check each record against its __CRC32# property instead (a record "
                         "without one fails), as broker recovery with forceVerifyPropCRC=true: stricter on "
                         "stores written with enabledAppendPropCRC")


def refuse_empty_range(low_option: str, low: int | None, high_option: str, high: int | None, *,
                       closed: bool = False, times: bool = False) -> None:
    """A :class:`UsageError` naming both values when two bounds select nothing: ``low`` at or after
    ``high`` (after it only, for a ``closed`` range whose ``high`` is taken too). ``times``: the values
    are epoch ms, shown as ISO 8601."""
    if low is None or high is None or low < high or (closed and low == high):
        return
    show = iso if times else str
    where = "after" if low > high else "equal to"
    last = "the last value taken" if closed else "the first left out"
    raise UsageError(f"{low_option} {show(low)} is {where} {high_option} {show(high)}, so nothing can match: "
                     f"{low_option} is the first value taken, {high_option} {last}")


def refuse_empty_filters(args: argparse.Namespace) -> None:
    """The filters of :func:`add_message_filters` that select nothing, refused (:func:`refuse_empty_range`)."""
    refuse_empty_range("--since", args.since, "--until", args.until, times=True)
    refuse_empty_range("--from-offset", args.from_offset, "--to-offset", args.to_offset)


def add_message_filters(sp: argparse.ArgumentParser) -> None:
    """The message filters of ``messages`` and ``export`` (all given must hold)."""
    from .filters import property_filter, tag_expression, topic_list
    sp.add_argument("--topic", type=topic_list, action="append", metavar="TOPIC[,TOPIC…]",
                    help="only messages of these topics, as stored (%%RETRY%%… and SCHEDULE_TOPIC_XXXX are topics "
                         "of their own): a comma-separated list, or the option repeated")
    sp.add_argument("--queue", type=int, help="queue id")
    sp.add_argument("--tag", type=tag_expression, metavar="EXPRESSION",
                    help="a subscription's tag expression, as RocketMQ's FilterAPI reads it: 'TagA || TagB' "
                         "(the TAGS value is one of them), 'TagA' (exactly it), '*' (every message)")
    sp.add_argument("--property", type=property_filter, action="append", metavar="NAME=VALUE",
                    help="only messages whose property NAME has exactly VALUE (repeatable: all must hold)")
    sp.add_argument("--outstanding", metavar="GROUP",
                    help="only the messages consumer group GROUP has not consumed: on each queue it has an offset "
                         "of (consumerOffset.json, or the RocksDB config the broker loads), from its committed "
                         "offset (the queue's first, if later) on, as `lag` counts them")
    sp.add_argument("--key", help="one of the KEYS, or the UNIQ_KEY")
    sp.add_argument("--since", type=parse_time, help="store time >= (epoch ms or ISO 8601, UTC if no zone)")
    sp.add_argument("--until", type=parse_time, help="store time < (epoch ms or ISO 8601)")
    sp.add_argument("--from-offset", type=int, help="commit-log offset >=")
    sp.add_argument("--to-offset", type=int, help="commit-log offset <")
    sp.add_argument("--stop-at-corrupt-body", action="store_true",
                    help="a compressed body that does not decompress ends the read with an error (by default the "
                         "message keeps its stored body, with the reason in bodyError, and the read goes on)")


def cpus() -> int:
    """The CPUs this process may run on: the default of ``--jobs``."""
    from ..walk.jobs import default_jobs
    return default_jobs()


def _jobs(text: str) -> int:
    from .bodies import positive
    return positive(text)


def add_jobs(sp: argparse.ArgumentParser) -> None:
    """``--jobs`` (and its old name ``--threads``): worker processes walking the commit log."""
    sp.add_argument("--jobs", "--threads", dest="jobs", type=_jobs, default=None, metavar="N",
                    help="worker processes decoding the commit log's byte ranges; the output is the same as "
                         "with --jobs 1, which walks it in this process alone (default: the CPUs this process "
                         "may use; a commit log under 1 GiB is walked in this process). --threads is the old name")


def add_salvage(sp: argparse.ArgumentParser) -> None:
    """``--salvage`` and ``--live``: reading past damage, and reading a store whose broker is running."""
    sp.add_argument("--salvage", action="store_true",
                    help="go on after damage: resync at the next valid record, read every intact message and "
                         "list the damaged ranges skipped on stderr. Exit status 3 when the data ended at damage "
                         "or (with --salvage) damaged ranges were skipped; 0 when it ended cleanly")
    sp.add_argument("--live", action="store_true",
                    help="the broker is writing this store: a record at the end of the last segment that is "
                         "not completely written ends the data cleanly (it is never printed, live or not)")
