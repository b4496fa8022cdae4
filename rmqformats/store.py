"""Opening a broker store: a store root, a ``commitlog/`` folder or one segment file.

A :class:`Store` gives the commit log and, when opened at a store root, the
other parts of the store: consume queues, index files, checkpoint and
shutdown state, timer files and the ``config/`` JSON files. Each part is read
by its own module; the methods here only find the files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .commitlog import SEGMENT_NAME, CommitLog, split_folders
from .errors import NotASegmentError, StoreNotFoundError
from .frames import require_pandas

if TYPE_CHECKING:  # the readers import the store's parts lazily
    import pandas
    import pyarrow

    from .batch_consumequeue import BatchConsumeQueue
    from .checkpoint import Checkpoint, StoreState
    from .columnar.queues import Batches
    from .compaction import Compaction
    from .config import ConfigFile, StoreConfig
    from .consumequeue import ConsistencyReport, ConsumeQueue, QueueInfo
    from .consumequeue_ext import ConsumeQueueExt
    from .index import IndexFiles, IndexHit
    from .lag import LagRow, LagRows
    from .rocksdb.consumequeue import RocksDBQueues
    from .rocksdb.messagestore import RocksDBMessageStore
    from .sql import Result
    from .systopics import SystemDecoding, SystemScan
    from .tiered import TieredStore
    from .timer import TimerStore


@dataclass(frozen=True)
class Store:
    """A broker store as found on disk.

    ``root`` is the store root (``storePathRootDir``) when the path given
    was one, else ``None``; ``commitlog`` reads its commit log.
    """

    root: str | None
    commitlog: CommitLog
    #: Databases opened on first use (RocksDB consume queue, message store), kept for the store's life.
    _opened: dict = field(default_factory=dict, compare=False, repr=False)

    def path(self, *parts: str) -> str:
        """A path under the store root; raises when the store was opened without one."""
        if self.root is None:
            raise StoreNotFoundError(self.commitlog.path, None,
                                     f"{'/'.join(parts)} needs a store root, not a commit-log folder or file")
        return os.path.join(self.root, *parts)

    # -- shutdown state and checkpoint -------------------------------------------------

    @property
    def has_abort_file(self) -> bool:
        """An ``abort`` file in the root: the broker did not shut down cleanly."""
        return self.root is not None and os.path.exists(os.path.join(self.root, "abort"))

    def state(self) -> StoreState:
        """The abort and lock files, and what they say about the last shutdown."""
        from .checkpoint import read_store_state
        return read_store_state(self.path())

    def checkpoint(self) -> Checkpoint | None:
        """The ``checkpoint`` file's values; ``None`` when the store has none."""
        from .checkpoint import read_checkpoint
        path = self.path("checkpoint")
        return read_checkpoint(path) if os.path.exists(path) else None

    # -- consume queues ---------------------------------------------------------------

    def queues(self) -> list[QueueInfo]:
        """Every topic and queue id under ``consumequeue/``, with its offset range.

        File consume queues first, then those of a RocksDB consume queue
        (5.2.0+) when ``consumequeue/`` holds one; ``QueueInfo.kind`` says which.
        """
        from .consumequeue import list_queues
        found = list_queues(self.path("consumequeue"), self)
        rocks = self.rocksdb_queues()
        return found + rocks.queues() if rocks is not None else found

    def rocksdb_queues(self) -> RocksDBQueues | None:
        """The RocksDB consume queue, or ``None``.

        In ``consumequeue_rocksdb/`` (5.5 ``useSeparateStorePathForRocksdbCQ``)
        or ``consumequeue/`` (``storeType=defaultRocksDB``, or beside the file
        queues with ``rocksdbCQDoubleWriteEnable``); see
        :data:`rmqformats.rocksdb.consumequeue.FOLDERS`.
        """
        if "rocksdb_queues" not in self._opened:
            from .rocksdb.consumequeue import RocksDBQueues, rocksdb_queues_path
            path = rocksdb_queues_path(self.path()) if self.root is not None else None
            self._opened["rocksdb_queues"] = RocksDBQueues(path, self) if path else None
        return self._opened["rocksdb_queues"]

    def consume_queue(self, topic: str, queue_id: int, *, kind: str | None = None) -> ConsumeQueue:
        """The consume queue of ``topic`` / ``queue_id``.

        ``kind`` ``"file"`` or ``"rocksdb"`` chooses where it is read from; by
        default the files when the queue has a folder (as a broker keeping both
        reads by default, ``combineCQPreferCQType=default``), else the RocksDB
        consume queue when the store has one.
        """
        from .consumequeue import ConsumeQueue
        folder = self.path("consumequeue", topic, str(queue_id))
        if kind == "rocksdb" or (kind is None and not os.path.isdir(folder)):
            rocks = self.rocksdb_queues()
            if rocks is not None:
                return rocks.consume_queue(topic, queue_id)
            if kind == "rocksdb":
                raise StoreNotFoundError(self.path("consumequeue"), None, "no RocksDB consume queue here")
        return ConsumeQueue(folder, topic, queue_id, store=self)

    def consume_queue_ext(self, topic: str, queue_id: int) -> ConsumeQueueExt:
        """The ``consumequeue_ext`` of ``topic`` / ``queue_id`` (``enableConsumeQueueExt``)."""
        from .consumequeue_ext import ConsumeQueueExt
        return ConsumeQueueExt(self.path("consumequeue_ext", topic, str(queue_id)))

    def batch_queues(self) -> list[QueueInfo]:
        """Every topic and queue id under ``batchconsumequeue/`` (5.x ``queue.type=BatchCQ``)."""
        from .batch_consumequeue import list_batch_queues
        return list_batch_queues(self.path("batchconsumequeue"))

    def batch_consume_queue(self, topic: str, queue_id: int) -> BatchConsumeQueue:
        """The batch consume queue of ``topic`` / ``queue_id``."""
        from .batch_consumequeue import BatchConsumeQueue
        return BatchConsumeQueue(self.path("batchconsumequeue", topic, str(queue_id)), topic, queue_id,
                                 store=self)

    def queue_batches(self, *, batch_queues: bool = False, topic: str | None = None, queue_id: int | None = None,
                      placeholders: bool = False, errors: str = "raise", batch_size: int = 1 << 18) -> Batches:
        """The units of every consume queue as one stream of :class:`pyarrow.RecordBatch` objects.

        Options: ``batch_queues=True`` adds the batch consume queues (and a
        ``batchSize`` column), ``topic``, ``queue_id``, ``placeholders``,
        ``errors="skip"``, ``batch_size``; see
        :func:`rmqformats.columnar.queues.store_queue_batches`.
        """
        from .columnar.queues import store_queue_batches
        return store_queue_batches(self, batch_queues=batch_queues, topic=topic, queue_id=queue_id, placeholders=placeholders, errors=errors, batch_size=batch_size)

    def queues_to_arrow(self, *, batch_queues: bool = False, topic: str | None = None, queue_id: int | None = None,
                      placeholders: bool = False, errors: str = "raise", batch_size: int = 1 << 18) -> pyarrow.Table:
        """The units of every consume queue as one :class:`pyarrow.Table`; the options of :meth:`queue_batches`."""
        return self.queue_batches(batch_queues=batch_queues, topic=topic, queue_id=queue_id, placeholders=placeholders, errors=errors, batch_size=batch_size).read_all()

    def queues_to_pandas(self, *, batch_queues: bool = False, topic: str | None = None, queue_id: int | None = None,
                      placeholders: bool = False, errors: str = "raise", batch_size: int = 1 << 18) -> pandas.DataFrame:
        """The units of every consume queue as a :class:`pandas.DataFrame`; the options of :meth:`queue_batches`."""
        require_pandas()
        return self.queues_to_arrow(batch_queues=batch_queues, topic=topic, queue_id=queue_id, placeholders=placeholders, errors=errors, batch_size=batch_size).to_pandas()

    def batch_queues_to_arrow(self, *, topic: str | None = None, queue_id: int | None = None, errors: str = "raise",
                              batch_size: int = 1 << 18) -> pyarrow.Table:
        """Every unit of every batch consume queue, all fields, as one :class:`pyarrow.Table`.

        Options: ``topic``, ``queue_id``, ``errors``, ``batch_size``; see
        :func:`rmqformats.columnar.queues.store_batch_queue_batches`.
        """
        from .columnar.queues import store_batch_queue_batches
        return store_batch_queue_batches(self, topic=topic, queue_id=queue_id, errors=errors,
                                         batch_size=batch_size).read_all()

    def check_consistency(self, *, topic: str | None = None, queue_id: int | None = None,
                          delay_levels_ms: tuple[int, ...] | None = None, max_problems: int = 1000,
                          verified: dict[tuple[str, int], int] | None = None,
                          queues: Iterable[QueueInfo] | None = None,
                          counted: dict[tuple[str, int], tuple[int, int]] | None = None) -> ConsistencyReport:
        """Check that every consume-queue unit points at a matching commit-log message.

        ``topic`` / ``queue_id`` check only those queues; ``delay_levels_ms``
        are the broker's delay levels (default: its ``messageDelayLevel``);
        at most ``max_problems`` are listed. See
        :func:`rmqformats.consumequeue.check_consistency`.
        """
        from .consumequeue import DEFAULT_DELAY_LEVELS_MS, check_consistency
        return check_consistency(self, topic=topic, queue_id=queue_id, max_problems=max_problems, verified=verified,
                                 queues=queues, counted=counted,
                                 delay_levels_ms=DEFAULT_DELAY_LEVELS_MS if delay_levels_ms is None
                                 else delay_levels_ms)

    # -- index files ------------------------------------------------------------------

    def index(self, *, num_hash_slots: int | None = None, num_index: int | None = None) -> IndexFiles:
        """The files under ``index/``; slot and entry counts are inferred unless given."""
        from .index import IndexFiles
        return IndexFiles(self.path("index"), num_hash_slots=num_hash_slots, num_index=num_index)

    def index_to_arrow(self, *, num_hash_slots: int | None = None, num_index: int | None = None,
                       strict: bool = True, batch_size: int = 1 << 18) -> pyarrow.Table:
        """Every written entry of every index file as one :class:`pyarrow.Table`.

        Options of :meth:`IndexFile.batches <rmqformats.index.IndexFile.batches>`
        (``strict``, ``batch_size``); ``store.index().batches()`` streams them
        and ``store.index().headers_to_arrow()`` gives the headers.
        """
        with self.index(num_hash_slots=num_hash_slots, num_index=num_index) as files:
            return files.to_arrow(strict=strict, batch_size=batch_size)

    def lookup(self, topic: str, key: str, *, begin: int | str | datetime | None = None,
               end: int | str | datetime | None = None, max_num: int = 64, check_keys: bool = True,
               num_hash_slots: int | None = None, num_index: int | None = None) -> list[IndexHit]:
        """Find messages by key or UNIQ_KEY through the index, as the broker's ``queryMessage`` does.

        ``begin`` and ``end``: store times (epoch ms, ISO 8601 text or a
        datetime); ``max_num`` hits at most; ``check_keys`` reads each hit's
        message and keeps it only if its topic and key match; the index
        geometry is inferred unless ``num_hash_slots`` and ``num_index`` are
        given. See :func:`rmqformats.index.lookup`.
        """
        from .index import lookup
        return lookup(self, topic, key, begin=begin, end=end, max_num=max_num, check_keys=check_keys,
                      num_hash_slots=num_hash_slots, num_index=num_index)

    def rocksdb_message_store(self) -> RocksDBMessageStore | None:
        """The RocksDB message store in ``rocksdbstore/`` (5.4.0+ timer, transaction and index records), or ``None``."""
        if "rocksdb_messages" not in self._opened:
            from .rocksdb.messagestore import RocksDBMessageStore, message_store_path
            path = message_store_path(self.path()) if self.root is not None else None
            self._opened["rocksdb_messages"] = RocksDBMessageStore(path) if path else None
        return self._opened["rocksdb_messages"]

    # -- timer (5.x) ------------------------------------------------------------------

    def timer(self) -> TimerStore:
        """The timer log, timer wheel and ``config/timercheck`` of a 5.x store."""
        from .timer import TimerStore
        return TimerStore(self.path())

    # -- other layouts ----------------------------------------------------------------

    def compaction(self) -> "Compaction":
        """The compaction logs and queues under ``compaction/`` (5.1.0+ compaction topics)."""
        from .compaction import Compaction
        return Compaction(self.path("compaction"))

    def tiered(self, path: str | None = None) -> "TieredStore":
        """The tiered-store plugin's files: ``path`` (``tieredStoreFilePath``), its index and metadata here."""
        from .tiered import TieredStore
        return TieredStore(path, root=self.root)

    # -- config/ ----------------------------------------------------------------------

    def config(self) -> StoreConfig:
        """The JSON files under ``config/``, read as the broker reads them."""
        from .config import load_config
        return load_config(self.path("config"))

    def rocksdb_configs(self, *, schemas: tuple[str, ...] | None = None) -> list[ConfigFile]:
        """The RocksDB config databases under ``config/`` (v1 tables, v2 ``rdb``), in the JSON files' models.

        ``schemas``: only those tables; see
        :func:`rmqformats.rocksdb.config.read_rocksdb_configs`.
        """
        from .rocksdb.config import read_rocksdb_configs
        return read_rocksdb_configs(self.path("config"), schemas=schemas)

    def consumer_lag(self, *, group: str | None = None, topic: str | None = None,
                     with_store_time: bool = True) -> LagRows:
        """Consumer lag per group, topic and queue, from ``consumerOffset.json`` and the consume queues.

        ``group`` / ``topic`` keep only those rows; ``with_store_time`` reads the
        next unconsumed message of each lagging queue for its store time.
        """
        from .lag import consumer_lag
        return consumer_lag(self, group=group, topic=topic, with_store_time=with_store_time)

    # -- the broker's own messages ----------------------------------------------------

    def system_messages(self, *, system: SystemDecoding | None = None, start: int | None = None,
                        verify_crc: bool = False, strict: bool = False, salvage: bool = False,
                        live: bool = False) -> SystemScan:
        """Each message of the commit log with what it is to the broker: ``(Message, SystemInfo)`` pairs.

        :class:`~rmqformats.systopics.SystemInfo` holds the decoded system
        columns of ``--decode-system`` (kind, real topic and queue, due time,
        transaction, retry and dead-letter origin), from the same decoder;
        ``system`` sets the broker's delay levels and custom trace topics
        (:class:`~rmqformats.systopics.SystemDecoding`). ``start``,
        ``verify_crc``, ``strict``, ``salvage`` and ``live`` are those of
        :meth:`CommitLog.scan <rmqformats.commitlog.CommitLog.scan>`; the
        result's ``end`` is the scan's.
        """
        from .systopics import SystemDecoding, SystemScan
        scan = self.commitlog.scan(start=start, verify_crc=verify_crc, strict=strict, salvage=salvage, live=live)
        return SystemScan(scan, decoding=system if system is not None else SystemDecoding())

    # -- SQL --------------------------------------------------------------------------

    def sql(self, query: str, *, jobs: int = 1, body_decoder: str | Callable[[bytes], Any] | None = None,
            body_fields: str | Sequence[str] | None = None, system: SystemDecoding | None = None) -> Result:
        """Run a SQL ``query`` over this store's tables with DuckDB (the ``sql`` extra); see
        :func:`rmqformats.sql.query` (``body_decoder`` adds ``bodyDecoded`` to ``messages``, or with
        ``body_fields`` a ``body.FIELD`` column per field; ``system``
        sets the delay levels and trace topics of its decoded system columns). The
        result streams :class:`pyarrow.RecordBatch` objects; ``.read_all()`` gives one table."""
        from .sql import query as run_query
        return run_query(self, query, jobs=jobs, body_decoder=body_decoder, body_fields=body_fields, system=system)


def open_store(path: str | os.PathLike[str], *, commitlog: str | None = None) -> Store:
    """Open a store root, a ``commitlog/`` folder, or a single commit-log segment.

    Several commit-log folders (``storePathCommitLog`` listing more than
    one, separated by ``;``) are read as one commit log in offset order:
    give them as ``path``, or give the store root as ``path`` and the
    folders as ``commitlog``. A DLedger store (``dledger-*/data`` under the
    root, or a folder of DLedger data files) opens with a DLedger commit
    log (:mod:`rmqformats.dledger`). Nothing is opened for writing. Raises
    :class:`StoreNotFoundError` when the path is none of these.
    """
    path = os.fspath(path)
    if commitlog is not None:
        if not os.path.isdir(path):
            raise StoreNotFoundError(path, None, "not a store root folder")
        return Store(path, _commit_log(commitlog))
    if len(split_folders(path)) > 1:
        return Store(None, _commit_log(path))
    if not os.path.exists(path):
        raise StoreNotFoundError(path, None, "no such file or folder")
    if os.path.isdir(path):
        from .dledger.detect import dledger_data_folder
        dledger = dledger_data_folder(path)
        if dledger is not None:
            if not _has_segments(os.path.join(path, "commitlog")):
                return Store(path, _commit_log(dledger))
            from .dledger.commitlog import MixedCommitLog  # a store switched to DLedger: old log, then DLedger
            return Store(path, MixedCommitLog(os.path.join(path, "commitlog"), dledger))
        if os.path.isdir(os.path.join(path, "commitlog")):
            return Store(path, _commit_log(os.path.join(path, "commitlog")))
        if any(SEGMENT_NAME.match(n) for n in os.listdir(path)):
            return Store(None, _commit_log(path))
        raise StoreNotFoundError(path, None, "neither a store root (no commitlog/ folder) "
                                             "nor a folder of commit-log segments" + _other_layout_hint(path))
    if os.path.isfile(path):
        check_segment_file(path)
        return Store(None, _commit_log(path))
    raise StoreNotFoundError(path, None, "not a regular file or folder")


def check_segment_file(path: str | os.PathLike[str]) -> None:
    """Refuse a file given as a commit-log segment that is none, with :class:`NotASegmentError`.

    A segment is named by its 20-digit start offset; a piece or copy under
    another name is taken when it starts with a message or BLANK record (or
    a DLedger entry). A file that another kind of store file claims by its
    place and name (a consume-queue file, the checkpoint, a config file) is
    refused naming that kind; so is a file with neither the name nor the
    content of a segment. A 20-digit file claimed by nothing stronger is a
    segment, damaged or zero-filled as it may be (the scan says where its
    data ends).
    """
    from .dledger.detect import is_dledger
    from .filekind import UnknownFileKindError, best_kind
    path = os.fspath(path)
    if is_dledger(path):
        return
    try:
        kind, score = best_kind(path)
    except UnknownFileKindError:
        kind, score = None, 0
    if kind is not None and kind.name == "commitlog":
        return
    numbered = bool(SEGMENT_NAME.match(os.path.basename(path)))
    if numbered and score < 8:
        return
    if kind is not None:
        raise NotASegmentError(path, None, f"not a commit-log segment: it is {kind.with_article} "
                                           f"(`rmqformats dump --kind {kind.name}` reads it)")
    raise NotASegmentError(path, None, "not a commit-log segment: its name is not a 20-digit commit-log offset "
                                       "and it does not start with a message or BLANK record")


def _other_layout_hint(path: str) -> str:
    """A pointer to the command that reads ``path`` when it is a tiered store or a compaction folder."""
    import glob
    if glob.glob(os.path.join(glob.escape(path), "*_*", "*", "*", "*", "COMMIT_LOG")):
        return "; it is a tiered store (tieredStoreFilePath): read it with `rmqformats tiered`"
    if os.path.isdir(os.path.join(path, "compactionLog")) or os.path.isdir(os.path.join(path, "compactionCq")):
        return "; it is a compaction folder: give its store root to `rmqformats compaction`"
    return ""


def _has_segments(folder: str) -> bool:
    return os.path.isdir(folder) and any(SEGMENT_NAME.match(n) for n in os.listdir(folder))


def _commit_log(path: str) -> CommitLog:
    """A plain commit log, or a DLedger one when the first segment holds DLedger entries."""
    from .dledger.detect import is_dledger
    if is_dledger(path):
        from .dledger import DLedgerCommitLog
        return DLedgerCommitLog(path)
    return CommitLog(path)
