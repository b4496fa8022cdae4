"""``rebuild``: a new store folder the broker starts on, its queues and index written from the commit log.

The commit log is walked once, in bounded batches, as the broker's
``ReputMessageService`` walks it; for each batch the dispatch model of the
two-way check (:func:`rmqformats.recovery.crosscheck.dispatch_units` and
:func:`~rmqformats.recovery.crosscheck.index_keys`) says what
``CommitLogDispatcherBuildConsumeQueue`` and ``CommitLogDispatcherBuildIndex``
write, and :mod:`.writers` writes it. What the new folder holds:

- ``commitlog/``: the segments up to the data end the broker's recovery
  keeps, copied (or hard-linked with ``link``); the segment holding the data
  end is copied up to it and zero-filled after it, as a pre-allocated mapped
  file; later segments are left out (recovery would delete them).
- ``consumequeue/`` (files, or a RocksDB database with
  ``queues_kind="rocksdb"``), ``batchconsumequeue/``, ``index/``,
  ``checkpoint``: written from the walk. A queue of the store none of whose
  messages the commit log still holds (all in deleted segments) is copied
  as it is, as the broker keeps it: its end is the offset its next message
  gets, which consumer offsets refer to.
- Everything else at the store root (``config/``, timer files,
  ``compaction/``, …) copied as it is, but ``lock`` and ``abort``: the new
  store was written whole and flushed, so the broker takes the normal
  recovery on it.

With ``only``, the parts not named are copied as they are instead (the
commit log whole). The output folder is written through
:class:`~rmqformats.output.AtomicFolder`: atomic, exclusive, marked with
``_SUCCESS``, never inside the store read.

The checkpoint is written as a broker that dispatched and flushed everything
leaves it: ``physicMsgTimestamp`` the store time of the last message,
``logicsMsgTimestamp`` that of the last message dispatched to a consume
queue, ``indexMsgTimestamp`` the end time of the last full index file (0
when none is full: ``IndexService.flush`` sets it only for a full file);
``masterFlushedOffset`` and ``confirmPhyOffset`` are the old checkpoint's
(the confirm offset lowered to the data end when past it).
"""

from __future__ import annotations

import datetime
import errno
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..consumequeue import DEFAULT_DELAY_LEVELS_MS
from ..frames import to_numpy
from ..errors import RmqFormatError, RocksDBError
from ..output import SUCCESS_MARKER, AtomicFolder, OutputError, WriteError
from ..recovery.crosscheck import (DISPATCH_COLUMNS, TIMER_TOPIC, TRAN_PREPARED, TRAN_ROLLBACK, _index_in_rocksdb,
                                   _batch_topics, dispatch_units, index_keys, property_rows, transaction_types)
from ..recovery.salvage import PastEnd, intact_past
from ..rocksdb.consumequeue import FOLDERS as ROCKSDB_QUEUE_FOLDERS
from ..rocksdb.consumequeue import rocksdb_queues_paths
from ..rocksdb.messagestore import FOLDER as ROCKSDB_MESSAGES_FOLDER
from ..timer import TIMER_LOG_DIR, TIMER_WHEEL_FILE
from .salvage import OFFSETS_FILE, SalvagedLog, SalvageWriteError, write_salvaged_commitlog
from .sizes import StoreSizes, store_sizes
from .truncate import (RocksDBMessagesCut, TimerCut, copy_prefix, copy_rocksdb_message_store, copy_timer,
                       cut_queue_copy)
from .writers import (BatchQueueFilesWriter, IndexFilesWriter, QueueFilesWriter, RocksDBQueuesWriter,
                      checkpoint_bytes)

#: The parts ``only`` can name.
PARTS = ("commitlog", "queues", "index", "checkpoint")
#: Root entries the rebuild writes itself or leaves out; the rest is copied.
_OWN = {"commitlog", "consumequeue", "batchconsumequeue", "index", "checkpoint", "lock", "abort", SUCCESS_MARKER,
        TIMER_LOG_DIR, TIMER_WHEEL_FILE, *ROCKSDB_QUEUE_FOLDERS, ROCKSDB_MESSAGES_FOLDER, OFFSETS_FILE}
_COPY_CHUNK = 8 << 20


class RebuildError(Exception):
    """A rebuild that cannot be done (no store root, a part named wrongly): a usage error."""


@dataclass
class Resized:
    """A commit-log segment of another size than the configured one, written at the configured size."""

    path: str
    size: int
    written: int
    #: Non-zero bytes past the configured size (left out: no commit-log offset reaches them).
    nonzero_dropped: int


@dataclass
class RebuildResult:
    """What a rebuild wrote."""

    out: str
    parts: tuple[str, ...]
    queues_kind: str
    sizes: StoreSizes
    data_end: int | None
    messages: int = 0
    queue_units: int = 0
    batch_units: int = 0
    index_files: list[str] = field(default_factory=list)
    index_entries: int = 0
    segments: int = 0
    linked: int = 0
    checkpoint: dict = field(default_factory=dict)
    #: Queue folders of the old store the walk wrote no unit for, copied and cut at the data end
    #: (``truncateDirtyLogicFiles``): what is left are units of messages in deleted head segments.
    kept_queues: list = field(default_factory=list)
    #: Queues all of whose units pointed at or past the data end: not written (the broker deletes their files).
    removed_queues: list = field(default_factory=list)
    #: Units of the old queues at or past the data end, not carried over.
    removed_units: int = 0
    #: What cutting the timer log at the data end removed.
    timer: TimerCut = field(default_factory=TimerCut)
    #: The intact messages past the data end the new store leaves out (the salvage walk's count).
    past_end: PastEnd | None = None
    #: The walk's data end is at damage (not a clean end of the data).
    data_end_damaged: bool = False
    #: The folder the consume queues were written into (RocksDB: the store's own, e.g. consumequeue_rocksdb).
    queues_folder: str = "consumequeue"
    #: Keys of the old RocksDB consume queue that are no queue's unit (count, first in hex); not carried
    #: over (the new database is written from the commit log). A count of -1: the database is unreadable.
    damaged_queue_keys: tuple = (0, [])
    #: The store indexes in RocksDB (``rocksdbstore/``), not in index files: none written.
    index_in_rocksdb: bool = False
    #: Records of the RocksDB message store past the data end, left out.
    rocksdb_messages: RocksDBMessagesCut | None = None
    #: Segments written at the configured size instead of their own.
    resized: list = field(default_factory=list)
    #: The end of the rebuilt ``rmq_sys_wheel_timer`` queue 0 (``None``: no such queue written).
    timer_queue_end: int | None = None
    #: The commit log written anew by ``salvage`` (see :mod:`.salvage`).
    salvaged: SalvagedLog | None = None
    #: The offset map ``salvage`` wrote (a path in the new store).
    offsets_file: str | None = None
    #: Queue-offset holes found in the commit log (``topic, queueId, from, to``).
    holes: list = field(default_factory=list)
    #: Empty (0-byte) segment files before the first one holding bytes: left out (see :func:`_skip_empty_head`).
    empty_head: list = field(default_factory=list)
    #: Units of the old consume queue (files, or the RocksDB database the broker reads) pointing into the
    #: empty head segments: the messages lost with their bytes (``None``: a database that cannot be read).
    empty_head_units: int | None = None
    seconds: float = 0.0


def rebuild_store(store, out: str, *, force: bool = False, link: bool = False,
                  only: tuple[str, ...] | None = None, queues_kind: str | None = None,
                  config: str | None = None, timezone: datetime.tzinfo | None = None,
                  reads: tuple[str, ...] = (), batch_size: int = 65536,
                  delay_levels_ms: tuple[int, ...] = DEFAULT_DELAY_LEVELS_MS, salvage: bool = False) -> RebuildResult:
    """Write a rebuilt copy of ``store`` (a :class:`~rmqformats.store.Store`) into the new folder ``out``.

    ``queues_kind``: ``"file"`` or ``"rocksdb"`` (default: the kind the store
    has); ``config``: a broker properties or JSON store config for the file
    sizes (see :mod:`.sizes`); ``timezone``: the broker's, for new index file
    names (default: this machine's); ``reads``: more paths the output may
    not lie in (the store root always); ``salvage``: the commit log written anew from every intact message
    the salvage walk reads, past damage too (see :mod:`.salvage`), and the rest rebuilt from it.
    """
    t0 = time.monotonic()
    if store.root is None:
        raise RebuildError(f"{store.commitlog.path}: rebuild needs a store root (the folder holding commitlog/)")
    parts = tuple(PARTS if not only else only)
    for p in parts:
        if p not in PARTS:
            raise RebuildError(f"unknown part {p!r} (one of {', '.join(PARTS)})")
    root = store.root
    rocks_paths = rocksdb_queues_paths(root)
    kind = queues_kind or ("rocksdb" if rocks_paths else "file")
    # The RocksDB consume queue goes where the store keeps its own (5.5 consumequeue_rocksdb/), else
    # into consumequeue/ (storeType=defaultRocksDB); no other database of it is carried over.
    rocks_folder = os.path.basename(rocks_paths[0]) if rocks_paths else "consumequeue"
    if kind not in ("file", "rocksdb"):
        raise RebuildError(f"unknown consume-queue kind {kind!r} (file or rocksdb)")
    if salvage and only is not None and set(only) != set(PARTS):
        raise RebuildError("salvage writes a new commit log: every part is rebuilt from it (no only)")
    if salvage and type(store.commitlog).__name__ != "CommitLog":
        # A DLedger or tiered log holds its records inside entries or blobs of its own: not rewritten here.
        raise RebuildError(f"{store.commitlog.path}: salvage rewrites a plain commit log (commitlog/ segments), "
                           f"not a {type(store.commitlog).__name__}")
    if salvage and link:
        raise RebuildError("salvage writes every commit-log segment anew: nothing to hard-link (no link)")
    sizes = store_sizes(root, config=config)
    with AtomicFolder(out, force=force, reads=[root, *reads], replaceable=_is_rebuild_output) as target, \
            _write_errors(target):
        new = target.path
        result = RebuildResult(out=os.path.abspath(out), parts=parts, queues_kind=kind, sizes=sizes, data_end=None)
        _copy_rest(root, new, parts)
        if "commitlog" in parts:
            store = _skip_empty_head(store, result)
        read = store
        if salvage:
            read = _salvage_commitlog(store, new, sizes.cl_file, batch_size, result)
        need_walk = any(p in parts for p in ("queues", "index", "checkpoint", "commitlog"))
        if need_walk:
            _walk(read, new, parts, kind, sizes, timezone, batch_size, delay_levels_ms, result, rocks_folder)
        if salvage:
            pass  # written above
        elif "commitlog" in parts:
            _copy_commitlog(store, os.path.join(new, "commitlog"), result.data_end, link, result, sizes.cl_file)
        else:
            _copy_commitlog(store, os.path.join(new, "commitlog"), None, link, result)
        segments = store.commitlog.segments
        first = segments[0].start_offset if segments else 0
        if result.timer_queue_end is None and os.path.join("consumequeue", TIMER_TOPIC, "0") in result.removed_queues:
            result.timer_queue_end = 0  # the timer queue lost every unit: nothing of it is left to read
        cut_end = result.data_end if "commitlog" in parts else None
        if result.salvaged is not None and result.salvaged.first_changed is not None:
            # Timer-log units from the first message moved on point at what is no longer there: cut there, and
            # the timer checkpoint goes back to the timer queue's offset of that message, so that the
            # TimerMessageStore enqueues the timer messages from it again, at their new offsets.
            cut_end = min(result.salvaged.first_changed, result.salvaged.damage_start or result.data_end)
            back = result.salvaged.first_queue_offset.get(TIMER_TOPIC)
            if back is not None:
                result.timer_queue_end = back
        _writing(os.path.join(new, TIMER_LOG_DIR))
        result.timer = copy_timer(root, new, cut_end, first, result.timer_queue_end)
        ms_src = os.path.join(root, ROCKSDB_MESSAGES_FOLDER)
        if os.path.isdir(ms_src):
            ms_dst = os.path.join(new, ROCKSDB_MESSAGES_FOLDER)
            _writing(ms_dst)
            if "commitlog" in parts and result.data_end is not None:
                result.rocksdb_messages = copy_rocksdb_message_store(ms_src, ms_dst, cut_end, first,
                                                                     result.timer_queue_end)
            else:
                _copy_entry(ms_src, ms_dst)
        if rocks_paths and "queues" in parts:
            rocks = store.rocksdb_queues()
            if rocks is not None:
                try:
                    count, first_keys = rocks.damaged_keys()
                except RmqFormatError as exc:
                    count, first_keys = -1, [str(exc).encode()]
                result.damaged_queue_keys = (count, [k.hex() for k in first_keys])
        if os.path.isdir(os.path.join(root, "consumequeue")):
            os.makedirs(os.path.join(new, "consumequeue"), exist_ok=True)
        if result.data_end is not None and result.data_end_damaged:
            result.past_end = intact_past(store.commitlog, result.data_end, batch_size=batch_size)
    result.seconds = time.monotonic() - t0
    return result


#: The file or folder of the new store being written (the temporary path), named by a write error.
_WRITING: list[str] = []


def _writing(path: str) -> None:
    """Say which path of the new store the next writes go to (named by a write error there)."""
    _WRITING[:] = [path]


@contextmanager
def _write_errors(target: AtomicFolder) -> Iterator[None]:
    """An :class:`OSError` while writing the new store: a :class:`WriteError` naming the path being written
    (the file the error names when it lies in the new store, else the one :func:`_writing` said), never
    the file being read."""
    _WRITING[:] = [target.path]
    try:
        yield
    except shutil.Error as exc:  # copytree: a list of (source, destination, reason)
        first = exc.args[0][0] if exc.args and isinstance(exc.args[0], list) and exc.args[0] else None
        if first is None:
            raise WriteError(target.final(_WRITING[0]), f"cannot write: {exc}") from exc
        raise WriteError(target.final(first[1]), f"cannot write: {first[2]}") from exc
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        names = [n for n in (exc.filename2, exc.filename) if n is not None]
        inside = [os.fspath(n) for n in names if _within(os.fspath(n), target.path)]
        if names and not inside and exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
            raise  # reading the store failed: the read error names its file
        path = inside[0] if inside else _WRITING[0]
        reason = os.strerror(exc.errno) if exc.errno is not None else str(exc)
        raise WriteError(target.final(path), f"cannot write: {reason}") from exc
    finally:
        _WRITING.clear()


def _within(path: str, folder: str) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder + os.sep)


def _is_rebuild_output(folder: str) -> bool:
    """A folder ``--force`` may replace: an earlier rebuild's output (its marker and commit log)."""
    return os.path.isfile(os.path.join(folder, SUCCESS_MARKER)) and os.path.isdir(os.path.join(folder, "commitlog"))


def _copy_rest(root: str, new: str, parts: tuple[str, ...]) -> None:
    """Root entries the rebuild does not write, copied as they are (and parts not rebuilt)."""
    skip = set(_OWN)
    for name in sorted(os.listdir(root)):
        src = os.path.join(root, name)
        if name in skip or name.startswith("."):
            continue
        _writing(os.path.join(new, name))
        _copy_entry(src, os.path.join(new, name))
    not_rebuilt = {"queues": tuple(dict.fromkeys(("consumequeue", "batchconsumequeue", *ROCKSDB_QUEUE_FOLDERS))),
                   "index": ("index",),
                   "checkpoint": ("checkpoint",)}
    for part, names in not_rebuilt.items():
        if part in parts:
            continue
        for name in names:
            src = os.path.join(root, name)
            if os.path.lexists(src):
                _writing(os.path.join(new, name))
                _copy_entry(src, os.path.join(new, name))


def _copy_entry(src: str, dst: str) -> None:
    if os.path.isdir(src) and not os.path.islink(src):
        shutil.copytree(src, dst, symlinks=True)
    else:
        shutil.copy2(src, dst, follow_symlinks=False)


def _copy_file(src: str, dst: str, length: int, size: int) -> None:
    """Copy the first ``length`` bytes of ``src`` into ``dst`` of ``size`` bytes (zero-filled after)."""
    copy_prefix(src, dst, length, size)


def _copy_commitlog(store, folder: str, data_end: int | None, link: bool, result: RebuildResult,
                    size: int | None = None) -> None:
    """The segments up to the data end, each ``size`` bytes (the configured ``mappedFileSizeCommitLog``;
    ``None``: as they are). A segment of another size, which ``MappedFileQueue.doLoad`` refuses ("length
    not matched message store config value"), is written at the configured size: bytes past it lie past
    the offset the next segment's name starts at, where no commit-log offset reaches them (the walk never
    reads them), so they are left out and reported; a shorter one is zero-filled to it, as a mapped file
    is pre-allocated."""
    os.makedirs(folder, exist_ok=True)
    kept = [seg for seg in store.commitlog.segments if data_end is None or seg.start_offset <= data_end]
    for n, seg in enumerate(kept):
        dst = os.path.join(folder, os.path.basename(seg.path))
        whole = data_end is None or seg.start_offset + seg.size <= data_end
        target = seg.size if size is None else size
        # The last segment is always copied: the broker appends to it, which must not reach the old store.
        if whole and link and n < len(kept) - 1 and seg.size == target:
            _writing(dst)
            try:
                os.link(seg.path, dst)
                result.linked += 1
                result.segments += 1
                continue
            except OSError:
                pass  # another file system: copied instead
        length = min(seg.size if whole else data_end - seg.start_offset, target)
        _writing(dst)
        _copy_file(seg.path, dst, length, target)
        if seg.size != target:
            result.resized.append(Resized(seg.path, seg.size, target, _nonzero_after(seg.path, target)))
        result.segments += 1


def _skip_empty_head(store, result: RebuildResult):
    """The store with its commit log starting at the first segment file that holds bytes.

    Segment files of 0 bytes before it (cut to nothing) make the broker refuse the store: ``MappedFileQueue``'s
    ``load`` (``doLoad`` from 4.9.2) returns false for a file whose length is not ``mappedFileSizeCommitLog``,
    and 5.1.3 on deletes a 0-byte file only when it is the last. Their messages are gone with their bytes;
    the segments after them are whole. The new store leaves them out, as retention (``deleteExpiredFile``)
    leaves out head segments: the commit log then starts at the next segment (``CommitLog.getMinOffset``
    is the first mapped file's start), the queues' units of the messages in them are kept as units of
    deleted segments, and nothing after them is lost. A 0-byte segment after one holding bytes is a gap,
    where the walk ends the data."""
    import copy
    log = store.commitlog
    segs = log.segments
    if type(log).__name__ != "CommitLog" or not segs:
        return store
    n = 0
    while n < len(segs) - 1 and segs[n].size == 0:
        n += 1
    if not n:
        return store
    result.empty_head = [seg.path for seg in segs[:n]]
    lo, hi = segs[0].start_offset, segs[n].start_offset
    rocks = rocksdb_queues_paths(store.root)
    if not rocks:
        result.empty_head_units = _units_between(store.path("consumequeue"), lo, hi)
    else:  # the queue the broker reads: the first RocksDB database found (see rocksdb_queues_paths)
        from ..rocksdb.consumequeue import RocksDBQueues
        try:
            with RocksDBQueues(rocks[0]) as queues:
                result.empty_head_units = queues.units_pointing_into(lo, hi)
        except RocksDBError:
            pass  # a database that cannot be read: not counted (rebuild reads it again and says why)
    kept = copy.copy(log)
    kept.segments = segs[n:]
    kept._fds = {}
    from dataclasses import replace
    return replace(store, commitlog=kept, _opened={})


def _units_between(parent: str, lo: int, hi: int) -> int:
    """Units of the file consume queues under ``parent`` pointing at commit-log offsets in ``[lo, hi)``,
    read one queue file at a time."""
    from ..consumequeue import UNIT_DTYPE as CQ_UNIT
    from ..queuefiles import list_queue_dirs, queue_files
    if not os.path.isdir(parent) or os.path.isfile(os.path.join(parent, "CURRENT")):
        return 0
    n = 0
    for _topic, _qid, folder in list_queue_dirs(parent):
        for f in queue_files(folder):
            units = np.fromfile(f.path, dtype=CQ_UNIT, count=f.size // CQ_UNIT.itemsize)
            ofs = units["ofs_commitlog"]
            n += int(np.count_nonzero((ofs >= lo) & (ofs < hi) & (units["len_message"] > 0)))
    return n


def _salvage_commitlog(store, new: str, segment_size: int, batch_size: int, result: RebuildResult):
    """Write the new commit log from the salvage walk (:mod:`.salvage`); the store to walk for the rest:
    the old one with the new commit log."""
    from dataclasses import replace

    from ..commitlog import CommitLog
    folder = os.path.join(new, "commitlog")
    _writing(folder)
    try:
        log = write_salvaged_commitlog(store.commitlog, folder, os.path.join(new, OFFSETS_FILE),
                                       segment_size=segment_size, batch_size=batch_size, follow=(TIMER_TOPIC,))
    except SalvageWriteError as exc:
        raise RebuildError(str(exc)) from None
    result.salvaged = log
    result.segments = len(log.segments)
    result.offsets_file = os.path.join(result.out, OFFSETS_FILE)
    return replace(store, commitlog=CommitLog(folder), _opened={})


def _nonzero_after(path: str, start: int) -> int:
    """Bytes of ``path`` from ``start`` on that are not zero."""
    n = 0
    with open(path, "rb") as f:
        f.seek(start)
        while chunk := f.read(_COPY_CHUNK):
            n += len(chunk) - chunk.count(0)
    return n


def _walk(store, new: str, parts, kind: str, sizes: StoreSizes, timezone, batch_size: int,
          delay_levels_ms, result: RebuildResult, rocks_folder: str = "consumequeue") -> None:
    do_queues = "queues" in parts
    # A 5.4+ broker indexing in RocksDB (indexRocksDBEnable) writes no index files: its index records are
    # carried in rocksdbstore/, cut at the data end there.
    do_index = "index" in parts and not _index_in_rocksdb(store)
    result.index_in_rocksdb = "index" in parts and not do_index
    is_batch = _batch_topics(store).__contains__
    cq: QueueFilesWriter | None = None
    bcq: BatchQueueFilesWriter | None = None
    rdb: RocksDBQueuesWriter | None = None
    if do_queues:
        if kind == "rocksdb":
            rdb = RocksDBQueuesWriter(os.path.join(new, rocks_folder))
            result.queues_folder = rocks_folder
        else:
            cq = QueueFilesWriter(os.path.join(new, "consumequeue"), sizes.cq_file)
        bcq = BatchQueueFilesWriter(os.path.join(new, "batchconsumequeue"), sizes.bcq_file)
    ix = None
    if do_index:
        ix = IndexFilesWriter(os.path.join(new, "index"), sizes.num_hash_slots, sizes.num_index,
                              names=_existing_index_names(store), tz=timezone)
    _writing(os.path.join(new, "consumequeue" if do_queues else "index"))
    last_stamp = last_cq_stamp = 0
    walk = store.commitlog.batches(columns=list(DISPATCH_COLUMNS), batch_size=batch_size, decompress=False)
    try:
        for batch in walk:
            n = batch.num_rows
            if not n:
                continue
            result.messages += n
            off = to_numpy(batch.column("commitLogOffset"))
            stamp = to_numpy(batch.column("storeTimestamp").cast(pa.int64()))
            tran = transaction_types(batch)
            last_stamp = int(stamp[-1])
            dispatched = np.flatnonzero((tran != TRAN_PREPARED) & (tran != TRAN_ROLLBACK))
            if len(dispatched):
                last_cq_stamp = int(stamp[dispatched[-1]])
            if bcq is not None:
                _put_queues(batch, off, stamp, dispatch_units(batch, delay_levels_ms=delay_levels_ms),
                            is_batch, cq, bcq, rdb)
            if ix is not None:
                _put_index(batch, off, stamp, tran, ix)
    finally:
        if ix is not None:
            ix.finish()
        if rdb is not None:
            rdb.finish()
    end = walk.end
    result.data_end = end.offset if end is not None else None
    result.data_end_damaged = end is not None and not end.reason.is_clean
    writer = rdb if rdb is not None else cq
    if writer is not None:
        result.timer_queue_end = writer.ends.get((TIMER_TOPIC, 0))
    if bcq is not None:
        _keep_queues_without_messages(store, new, cq, bcq, result.data_end, result)
    if cq is not None:
        result.queue_units = cq.units
        result.holes = cq.holes
    if rdb is not None:
        result.queue_units = rdb.units
    if bcq is not None:
        result.batch_units = bcq.units
    if ix is not None:
        result.index_files = [os.path.basename(p) for p in ix.paths]
        result.index_entries = ix.entries
    if "checkpoint" in parts:
        try:
            old = store.checkpoint()
        except (RmqFormatError, OSError):  # an unreadable checkpoint: its offsets are taken as 0
            old = None
        confirm = old.confirm_phy_offset if old is not None else 0
        if result.data_end is not None and confirm > result.data_end:
            confirm = result.data_end
        index_ts = ix.last_full_end if ix is not None else (old.index_msg_timestamp if old else 0)
        fields = {"physic_msg_timestamp": last_stamp, "logics_msg_timestamp": last_cq_stamp,
                  "index_msg_timestamp": index_ts,
                  "master_flushed_offset": old.master_flushed_offset if old is not None else 0,
                  "confirm_phy_offset": confirm}
        result.checkpoint = fields
        _writing(os.path.join(new, "checkpoint"))
        with open(os.path.join(new, "checkpoint"), "wb") as f:
            f.write(checkpoint_bytes(**fields))


def _keep_queues_without_messages(store, new: str, cq: QueueFilesWriter | None,
                                  bcq: BatchQueueFilesWriter, data_end: int | None, result: RebuildResult) -> None:
    """Queue folders of the store the walk wrote no unit for, copied and cut at the data end as
    ``ConsumeQueue.truncateDirtyLogicFiles`` cuts them (see :mod:`.truncate`): the units left are
    those of messages in deleted head segments, which the broker keeps (their end is the queue's
    next offset, which consumer offsets refer to; without them a new message would start the queue
    at offset 0). A queue with no unit left is not written, as the broker deletes all its files."""
    from ..batch_consumequeue import UNIT_DTYPE as BCQ_UNIT
    from ..consumequeue import UNIT_DTYPE as CQ_UNIT
    from ..queuefiles import list_queue_dirs
    end = data_end if data_end is not None else 1 << 62
    for parent, writer, dtype in (("consumequeue", cq, CQ_UNIT), ("batchconsumequeue", bcq, BCQ_UNIT)):
        if writer is None or os.path.isfile(store.path(parent, "CURRENT")):
            continue
        for topic, qid, folder in list_queue_dirs(store.path(parent)):
            if (topic, qid) in writer.ends:
                continue
            rel = os.path.join(parent, topic, str(qid))
            cut = cut_queue_copy(folder, os.path.join(new, rel), end, dtype)
            if cut is None:
                result.removed_queues.append(rel)
                continue
            result.removed_units += cut.removed_units
            cut.rel = rel
            result.kept_queues.append(cut)


def _existing_index_names(store) -> list[str]:
    folder = store.path("index")
    if not os.path.isdir(folder):
        return []
    return sorted(n for n in os.listdir(folder) if n.isdigit() and os.path.isfile(os.path.join(folder, n)))


def _put_queues(batch: pa.RecordBatch, off: np.ndarray, stamp: np.ndarray, units: dict, is_batch,
                cq: QueueFilesWriter | None, bcq: BatchQueueFilesWriter, rdb: RocksDBQueuesWriter | None) -> None:
    inner = None
    to_rocksdb = {}
    for (topic, qid), (eq, eo, es, et) in units.items():
        if is_batch(topic):
            if inner is None:
                inner = (property_rows(batch, "INNER_BASE"), property_rows(batch, "INNER_NUM"))
            rows = np.searchsorted(off, eo)
            qoff = to_numpy(batch.column("queueOffset"))
            bases = np.empty(len(rows), np.int64)
            nums = np.empty(len(rows), np.int64)
            for j, r in enumerate(rows.tolist()):
                b, m = inner[0].get(r), inner[1].get(r)
                try:  # CommitLog.checkMessageAndReturnSize: both properties, or the record's own offset and 1
                    bases[j], nums[j] = (int(b), int(m)) if b is not None and m is not None else (int(qoff[r]), 1)
                except ValueError:
                    bases[j], nums[j] = int(qoff[r]), 1
            bcq.put(topic, qid, eo, es, et, stamp[rows], bases, nums)
        elif rdb is not None:
            to_rocksdb[(topic, qid)] = (eq, eo, es, et, stamp[np.searchsorted(off, eo)])
        elif cq is not None:
            cq.put(topic, qid, eq, eo, es, et)
    if rdb is not None and to_rocksdb:
        rdb.put_batch(to_rocksdb)


def _put_index(batch: pa.RecordBatch, off: np.ndarray, stamp: np.ndarray, tran: np.ndarray,
               ix: IndexFilesWriter) -> None:
    codes = pc.dictionary_encode(batch.column("topic"))
    tidx = to_numpy(codes.indices)
    names = codes.dictionary.to_pylist()
    rows, hashes, _values = index_keys(batch, tran, tidx, names)
    order = np.argsort(rows, kind="stable")  # per message: UNIQ_KEY, then KEYS in order
    rows, hashes = rows[order], hashes[order]
    if len(off):
        ix.start(int(stamp[0]))
    if len(rows):
        ix.put_keys(hashes, off[rows], stamp[rows])
