"""Writers of the files the broker's dispatch fills: consume queues, batch consume queues, index files,
the RocksDB consume queue, and the checkpoint.

Each takes the units of one batch of the commit-log walk at a time and
writes them at once, so memory stays at one batch (plus the slot array of
the index file being filled). Unit bytes come from the dtypes of
``generated/layouts`` and the construct schemas of ``generated/construct``,
both generated from ``formats/``: no layout is written down here.

Placement follows the broker's writers:

- ``ConsumeQueue.putMessagePositionInfo``: a unit at byte ``queueOffset * 20``
  of the queue, in the file named by the byte position of its first unit
  (``mappedFileSizeConsumeQueue`` bytes each, zero-filled after the data as
  a pre-allocated mapped file); the first file of a queue whose first
  offset is not 0 gets placeholder units ``(0, Integer.MAX_VALUE, 0)`` from
  its start (``fillPreBlank``); a message whose offset is below the queue's
  end is skipped (``expectLogicOffset < currentLogicOffset``). Where the
  commit log holds no message for some queue offsets (a record lost in the
  middle), the broker would append the next unit where the last one ended
  ("[BUG]logic queue order maybe wrong") and shift every later unit off its
  offset; the rebuild keeps each unit at its offset and fills the hole with
  placeholder units, and reports it.
- ``BatchConsumeQueue.putBatchMessagePositionInfo``: 46-byte units one after
  the other from unit 0, ``compactedOffset`` -1 (``INVALID_POS``), reserved 0.
- ``IndexService.buildIndex`` / ``IndexFile.putKey``: :class:`IndexFileWriter`
  (the rules of :mod:`rmqformats.synth.index`, vectorised per batch).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable

import numpy as np

from ..batch_consumequeue import UNIT_DTYPE as BCQ_DTYPE
from ..consumequeue import UNIT_DTYPE as CQ_DTYPE
from ..generated.construct import rocketmq_checkpoint as cs_checkpoint
from ..generated.construct import rocketmq_index_file as cs_index
from ..index import ENTRY_DTYPE, ENTRY_SIZE, HEADER_SIZE, INT_MAX, SLOT_SIZE

FILE_NAME = "{:020d}"
#: ``fillPreBlank``'s placeholder unit: offset 0, size ``Integer.MAX_VALUE``, tags code 0.
PLACEHOLDER = (0, 0x7FFFFFFF, 0)
#: The checkpoint file is one 4096-byte page (``StoreCheckpoint``, ``OS_PAGE_SIZE``).
CHECKPOINT_SIZE = 4096


def _pwrite_at(path: str, file_size: int, pos: int, data: bytes) -> None:
    """Write ``data`` at ``pos`` of ``path``, creating it zero-filled to ``file_size`` (sparse) first."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size < file_size:
            os.ftruncate(fd, file_size)
        os.pwrite(fd, data, pos)
    finally:
        os.close(fd)


def _spread(folder: str, file_size: int, start_byte: int, data: bytes) -> list[str]:
    """Write ``data`` (whole units) starting at byte ``start_byte`` of a queue's stream of files."""
    written = []
    pos = 0
    while pos < len(data):
        at = start_byte + pos
        name = at - at % file_size
        take = min(len(data) - pos, name + file_size - at)
        path = os.path.join(folder, FILE_NAME.format(name))
        _pwrite_at(path, file_size, at - name, data[pos:pos + take])
        written.append(path)
        pos += take
    return written


class QueueFilesWriter:
    """The file consume queues under ``parent`` (``consumequeue/``), filled unit by unit."""

    def __init__(self, parent: str, file_size: int):
        self.parent = parent
        self.file_size = file_size
        self.unit = CQ_DTYPE.itemsize
        #: ``(topic, queueId) -> next queue offset`` (the queue's end so far).
        self.ends: dict[tuple[str, int], int] = {}
        self.units = 0
        self.files: set[str] = set()
        #: Queue offsets a queue skipped (a hole in the commit log's offsets): ``(topic, qid, from, to)``.
        self.holes: list[tuple[str, int, int, int]] = []

    def put(self, topic: str, queue_id: int, offsets: np.ndarray, phys: np.ndarray, sizes: np.ndarray,
            tags: np.ndarray) -> None:
        """Units of one queue for one batch, in commit-log order."""
        order = np.argsort(offsets, kind="stable")
        offsets, phys, sizes, tags = offsets[order], phys[order], sizes[order], tags[order]
        key = (topic, queue_id)
        end = self.ends.get(key)
        if end is not None:
            keep = offsets >= end
            offsets, phys, sizes, tags = offsets[keep], phys[keep], sizes[keep], tags[keep]
        if not len(offsets):
            return
        # Duplicates of a queue offset within the batch: the first is written (the later is below the end).
        first = np.concatenate([[True], offsets[1:] != offsets[:-1]])
        offsets, phys, sizes, tags = offsets[first], phys[first], sizes[first], tags[first]
        folder = os.path.join(self.parent, topic, str(queue_id))
        if end is None:
            os.makedirs(folder, exist_ok=True)
            start = int(offsets[0])
            file_start_unit = start - start % (self.file_size // self.unit)
            if start > file_start_unit:  # fillPreBlank
                self._placeholders(folder, file_start_unit, start)
            end = start
        # Runs of consecutive offsets, each written at its place.
        breaks = np.flatnonzero(np.diff(offsets) != 1) + 1
        for run in np.split(np.arange(len(offsets)), breaks):
            lo = int(offsets[run[0]])
            if lo != end:
                # No message for these queue offsets (a record lost in the middle of the log). The broker
                # would append the next unit at its write position, shifting every later unit off its
                # queue offset; zero units would end the queue at its next recovery. Placeholder units
                # keep every unit at its offset and the queue whole; consumers skip them.
                self.holes.append((topic, queue_id, end, lo))
                self._placeholders(folder, end, lo)
            units = np.zeros(len(run), CQ_DTYPE)
            units["ofs_commitlog"] = phys[run]
            units["len_message"] = sizes[run]
            units["tags_code"] = tags[run]
            self.files.update(_spread(folder, self.file_size, lo * self.unit, units.tobytes()))
            end = int(offsets[run[-1]]) + 1
            self.units += len(run)
        self.ends[key] = end


    def _placeholders(self, folder: str, start: int, stop: int) -> None:
        chunk = 1 << 16
        for a in range(start, stop, chunk):
            n = min(chunk, stop - a)
            pre = np.zeros(n, CQ_DTYPE)
            pre["ofs_commitlog"], pre["len_message"], pre["tags_code"] = PLACEHOLDER
            self.files.update(_spread(folder, self.file_size, a * self.unit, pre.tobytes()))


class BatchQueueFilesWriter:
    """The batch consume queues under ``parent`` (``batchconsumequeue/``)."""

    def __init__(self, parent: str, file_size: int):
        self.parent = parent
        self.file_size = file_size
        self.unit = BCQ_DTYPE.itemsize
        #: ``(topic, queueId) -> (units written, commit-log offset of the last message written)``.
        self.ends: dict[tuple[str, int], tuple[int, int]] = {}
        self.units = 0
        self.files: set[str] = set()

    def put(self, topic: str, queue_id: int, phys: np.ndarray, sizes: np.ndarray, tags: np.ndarray,
            store_times: np.ndarray, base_offsets: np.ndarray, batch_sizes: np.ndarray) -> None:
        """Units of one queue for one batch, in commit-log order."""
        key = (topic, queue_id)
        count, max_phy = self.ends.get(key, (0, -1))
        # ``putBatchMessagePositionInfo`` skips a message at or before the last one written (a replay).
        keep = phys > max_phy
        keep &= phys > np.maximum.accumulate(np.concatenate([[max_phy], phys[:-1]]))
        if not keep.any():
            return
        units = np.zeros(int(keep.sum()), BCQ_DTYPE)
        units["ofs_commitlog"] = phys[keep]
        units["len_message"] = sizes[keep]
        units["tags_code"] = tags[keep]
        units["store_timestamp"] = store_times[keep]
        units["msg_base_offset"] = base_offsets[keep]
        units["num_messages"] = batch_sizes[keep]
        units["compacted_offset"] = -1
        units["reserved"] = 0
        folder = os.path.join(self.parent, topic, str(queue_id))
        os.makedirs(folder, exist_ok=True)
        # Files hold whole units: a unit never straddles two files.
        per_file = self.file_size // self.unit
        data = units.tobytes()
        i = 0
        while i < len(units):
            n = count + i
            file_no, slot = divmod(n, per_file)
            take = min(len(units) - i, per_file - slot)
            path = os.path.join(folder, FILE_NAME.format(file_no * per_file * self.unit))
            _pwrite_at(path, per_file * self.unit, slot * self.unit, data[i * self.unit:(i + take) * self.unit])
            self.files.add(path)
            i += take
        self.ends[key] = (count + len(units), int(phys[keep].max()))
        self.units += len(units)


def index_file_name(millis: int, tz: datetime.tzinfo | None = None) -> str:
    """``UtilAll.timeMillisToHumanString``: ``yyyyMMddHHmmssSSS`` in ``tz`` (the broker's time zone;
    ``None``: this machine's)."""
    t = datetime.datetime.fromtimestamp(millis // 1000, tz)
    return f"{t:%Y%m%d%H%M%S}{millis % 1000:03d}"


class IndexFileWriter:
    """One index file filled as ``IndexFile.putKey`` fills it, a batch of keys at a time, with numpy.

    The same rules as :class:`rmqformats.synth.index.IndexFileBuilder` (which tests compare it
    with), vectorised: within a batch, each entry's link (``prevIndex``) is the entry before it
    with the same slot, or the slot's value before the batch; ``hashSlotCount`` counts the puts
    into an empty slot (every put with ``legacy_slot_count``, as 4.0.0 to 4.7.0 count); the time
    difference is in whole seconds from the file's begin time (0 before it is set, clamped to
    ``[0, Integer.MAX_VALUE]``). Entries are written as they come; slots and header at
    :meth:`finish`. The file is created sparse at full size, as the broker's mapping does.
    """

    def __init__(self, path: str, num_hash_slots: int, num_index: int, *, end_phy_offset: int = 0,
                 end_timestamp: int = 0, legacy_slot_count: bool = False):
        self.path = path
        self.num_hash_slots = num_hash_slots
        self.num_index = num_index
        self.legacy_slot_count = legacy_slot_count
        self.slots = np.zeros(num_hash_slots, np.int64)
        self.begin_timestamp = self.end_timestamp = max(end_timestamp, 0)
        self.begin_phy_offset = self.end_phy_offset = max(end_phy_offset, 0)
        self.hash_slot_count = 0
        self.index_count = 1
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        os.ftruncate(self._fd, HEADER_SIZE + num_hash_slots * SLOT_SIZE + num_index * ENTRY_SIZE)

    @property
    def is_full(self) -> bool:
        """``IndexFile.isWriteFull``."""
        return self.index_count >= self.num_index

    def put_keys(self, hashes: np.ndarray, phys: np.ndarray, stamps: np.ndarray) -> int:
        """Put as many of the keys as fit; returns how many were put."""
        n = min(len(hashes), self.num_index - self.index_count)
        if n <= 0:
            return 0
        h = hashes[:n].astype(np.int64)
        phy = phys[:n].astype(np.int64)
        ts = stamps[:n].astype(np.int64)
        numbers = self.index_count + np.arange(n, dtype=np.int64)
        slot = h % self.num_hash_slots
        order = np.argsort(slot, kind="stable")
        ss = slot[order]
        same = np.concatenate([[False], ss[1:] == ss[:-1]])
        prev_sorted = np.where(same, np.concatenate([[0], numbers[order][:-1]]), self.slots[ss])
        prev = np.empty(n, np.int64)
        prev[order] = prev_sorted
        # A slot value that is not an entry of this file reads as empty (invalidIndex).
        prev = np.where((prev <= 0) | (prev > numbers), 0, prev)
        begin = np.full(n, self.begin_timestamp, np.int64)
        if self.index_count <= 1:  # the first put sets the begin time, after computing its own difference
            begin[1:] = ts[0]
        diff = np.where(begin <= 0, 0, np.clip((ts - begin) // 1000, 0, INT_MAX))
        entries = np.zeros(n, ENTRY_DTYPE)
        entries["key_hash"] = h
        entries["ofs_physical"] = phy
        entries["time_diff"] = diff
        entries["prev_index"] = prev
        os.pwrite(self._fd, entries.tobytes(), HEADER_SIZE + self.num_hash_slots * SLOT_SIZE
                  + self.index_count * ENTRY_SIZE)
        last_of_slot = np.concatenate([ss[1:] != ss[:-1], [True]])
        self.slots[ss[last_of_slot]] = numbers[order][last_of_slot]
        self.hash_slot_count += n if self.legacy_slot_count else int((prev == 0).sum())
        if self.index_count <= 1:
            self.begin_phy_offset, self.begin_timestamp = int(phy[0]), int(ts[0])
        self.index_count += n
        self.end_phy_offset, self.end_timestamp = int(phy[-1]), int(ts[-1])
        return n

    def finish(self) -> None:
        """Write the slots and the header, close the file."""
        try:
            used = np.flatnonzero(self.slots)
            if len(used):  # the rest of the file is sparse: unwritten slots read as 0
                lo, hi = int(used[0]), int(used[-1]) + 1
                os.pwrite(self._fd, self.slots[lo:hi].astype(">i4").tobytes(), HEADER_SIZE + lo * SLOT_SIZE)
            os.pwrite(self._fd, cs_index.index_header.build({
                "begin_timestamp": self.begin_timestamp, "end_timestamp": self.end_timestamp,
                "ofs_begin_physical": self.begin_phy_offset, "ofs_end_physical": self.end_phy_offset,
                "num_hash_slots_used": self.hash_slot_count, "next_index": self.index_count}), 0)
        finally:
            os.close(self._fd)


class IndexFilesWriter:
    """Index files under ``folder``, filled as ``IndexService.buildIndex`` fills them.

    A file is named when it is created, as the broker names it from the
    clock: the names of the store's existing files are reused in order
    (``names``), then the name is the store time of the message whose key
    made the broker create the file (the moment its dispatch reached it,
    give or take the dispatch's delay), in ``tz``, made later than the name
    before it. A new file inherits the full file's end offset and end time
    (``getAndCreateLastIndexFile``).
    """

    def __init__(self, folder: str, num_hash_slots: int, num_index: int, *, names: Iterable[str] = (),
                 tz: datetime.tzinfo | None = None, legacy_slot_count: bool = False):
        self.folder = folder
        self.num_hash_slots = num_hash_slots
        self.num_index = num_index
        self.tz = tz
        self.legacy_slot_count = legacy_slot_count
        self.names = list(names)
        self.current: IndexFileWriter | None = None
        self.paths: list[str] = []
        self.entries = 0
        #: ``endTimestamp`` of the last full file (``IndexService.flush`` sets ``indexMsgTimestamp`` from it).
        self.last_full_end = 0

    def _next_name(self, millis: int) -> str:
        n = len(self.paths)
        if n < len(self.names):
            return self.names[n]
        name = index_file_name(millis, self.tz)
        previous = os.path.basename(self.paths[-1]) if self.paths else ""
        while name <= previous:  # two files named in the same millisecond would be one file
            millis += 1
            name = index_file_name(millis, self.tz)
        return name

    def _new_file(self, millis: int) -> IndexFileWriter:
        prev = self.current
        if prev is not None:
            if prev.is_full:
                self.last_full_end = prev.end_timestamp
            prev.finish()
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, self._next_name(millis))
        self.paths.append(path)
        self.current = IndexFileWriter(path, self.num_hash_slots, self.num_index,
                                       legacy_slot_count=self.legacy_slot_count,
                                       end_phy_offset=prev.end_phy_offset if prev else 0,
                                       end_timestamp=prev.end_timestamp if prev else 0)
        return self.current

    def start(self, millis: int) -> None:
        """The first message dispatched: the broker creates the first file then, keys or not."""
        if self.current is None:
            self._new_file(millis)

    def put_keys(self, hashes: np.ndarray, phys: np.ndarray, stamps: np.ndarray) -> None:
        """Keys in the broker's order (per message ``UNIQ_KEY``, then ``KEYS``), with their message's
        offset and store time; offsets never go back (the broker skips a replay below the newest file's
        end offset, which a walk from the start never meets)."""
        i = 0
        while i < len(hashes):
            f = self.current
            if f is None or f.is_full:
                f = self._new_file(int(stamps[i]))
            put = f.put_keys(hashes[i:], phys[i:], stamps[i:])
            i += put
            self.entries += put

    def finish(self) -> None:
        """Write the last file's slots and header."""
        if self.current is not None:
            if self.current.is_full:
                self.last_full_end = self.current.end_timestamp
            self.current.finish()
            self.current = None


def checkpoint_bytes(*, physic_msg_timestamp: int, logics_msg_timestamp: int, index_msg_timestamp: int,
                     master_flushed_offset: int = 0, confirm_phy_offset: int = 0) -> bytes:
    """The 4096-byte checkpoint file (``StoreCheckpoint.flush``): the fields, then zeros."""
    data = cs_checkpoint.rocketmq_checkpoint.build({
        "physic_msg_timestamp": physic_msg_timestamp, "logics_msg_timestamp": logics_msg_timestamp,
        "index_msg_timestamp": index_msg_timestamp, "ofs_master_flushed": master_flushed_offset,
        "ofs_confirm_phy": confirm_phy_offset, "reserved": b""})
    return data.ljust(CHECKPOINT_SIZE, b"\0")


class RocksDBQueuesWriter:
    """A RocksDB consume queue (``storeType=defaultRocksDB``) at ``path``, as ``RocksDBConsumeQueueStore``
    writes it: per unit a ``default`` column family entry (offset, size, tags code, store time), per
    queue its ``max`` entry in the ``offset`` column family, and the dispatch checkpoint (the end of the
    furthest message), one write batch per batch of the walk. Keys and values are built by the construct
    schemas of ``formats/rocketmq_rocksdb_cq_*.ksy`` (through :mod:`rmqformats.synth.rocksdb`).
    """

    def __init__(self, path: str):
        from rocksdict import Options, Rdict

        from ..rocksdb.consumequeue import CF_OFFSETS
        from ..rocksdb.db import background_threads_lost, note_open
        self.path = path
        # In a process forked from one that had opened a RocksDB database, RocksDB's background threads
        # are gone (see background_threads_lost): each batch is written as a table file here and ingested,
        # with no flush or compaction ever scheduled.
        self.foreground = background_threads_lost()
        opts = Options(raw_mode=True)
        opts.create_if_missing(True)
        opts.create_missing_column_families(True)
        if self.foreground:
            opts.set_disable_auto_compactions(True)
        self.db = Rdict(path, options=opts, column_families={CF_OFFSETS: Options(raw_mode=True)})
        note_open()
        self.offsets_cf = self.db.get_column_family_handle(CF_OFFSETS)
        self.checkpoint = 0
        self.units = 0
        self.ends: dict[tuple[str, int], int] = {}

    def _ingest(self, column_family: str, pairs: list[tuple[bytes, bytes]]) -> None:
        """Write ``pairs`` into one table file in key order and ingest it (no background work)."""
        from ..rocksdb.db import ingest_pairs
        ingest_pairs(self.db, column_family, pairs)

    def put_batch(self, queues: dict) -> None:
        """``(topic, queueId) -> (queue offsets, commit-log offsets, sizes, tags codes, store times)``.

        Unit values are built a batch at a time in the dtype of the unit layout, keys from the queue's
        key prefix and the big-endian logical offset its last 8 bytes hold (the key schema's layout).
        """
        from rocksdict import WriteBatch

        from ..rocksdb.consumequeue import UNIT_DTYPE, offset_key, queue_prefix
        from ..synth.rocksdb import offset_value
        ofs_name, len_name, tags_name, time_name = UNIT_DTYPE.names or ()
        wb = WriteBatch(raw_mode=True)
        units: list[tuple[bytes, bytes]] = []  # the same, as table-file pairs when written in the foreground
        maxes: list[tuple[bytes, bytes]] = []
        n = 0
        for (topic, qid), (eq, eo, es, et, ets) in queues.items():
            order = np.argsort(eq, kind="stable")
            eq, eo, es, et, ets = eq[order], eo[order], es[order], et[order], ets[order]
            keep = eq >= self.ends.get((topic, qid), -1)
            keep &= np.concatenate([[True], eq[1:] != eq[:-1]])
            if not keep.any():
                continue
            eq, eo, es, et, ets = eq[keep], eo[keep], es[keep], et[keep], ets[keep]
            values = np.zeros(len(eq), UNIT_DTYPE)
            values[ofs_name], values[len_name], values[tags_name], values[time_name] = eo, es, et, ets
            vbytes = values.tobytes()
            obytes = eq.astype(">i8").tobytes()
            prefix = queue_prefix(topic, qid)
            w = UNIT_DTYPE.itemsize
            if self.foreground:
                units.extend((prefix + obytes[i * 8:i * 8 + 8], vbytes[i * w:i * w + w]) for i in range(len(eq)))
                maxes.append((offset_key(topic, qid, "max"), offset_value(int(eo[-1]), int(eq[-1]))))
            else:
                for i in range(len(eq)):
                    wb.put(prefix + obytes[i * 8:i * 8 + 8], vbytes[i * w:i * w + w])
                wb.put(offset_key(topic, qid, "max"), offset_value(int(eo[-1]), int(eq[-1])), self.offsets_cf)
            self.ends[(topic, qid)] = int(eq[-1]) + 1
            self.checkpoint = max(self.checkpoint, int((eo + es).max()))
            n += len(eq)
        if n:
            if self.foreground:
                from ..rocksdb.consumequeue import CF_OFFSETS
                self._ingest("default", units)
                self._ingest(CF_OFFSETS, maxes)
            else:
                self.db.write(wb)
            self.units += n

    def finish(self) -> None:
        """Write the dispatch checkpoint, flush every column family into table files, close."""
        from rocksdict import Rdict, WriteBatch

        from ..generated.construct import rocketmq_rocksdb_cq_checkpoint as cs_cp
        from ..rocksdb.consumequeue import CF_OFFSETS, CHECKPOINT_TOPIC, offset_key
        key = offset_key(CHECKPOINT_TOPIC, 0, "max")
        value = cs_cp.rocketmq_rocksdb_cq_checkpoint.build({"checkpoint": {"ofs_max_phy": self.checkpoint}})
        if self.foreground:  # everything is in table files already
            self._ingest(CF_OFFSETS, [(key, value)])
            self.db.close()
        else:
            wb = WriteBatch(raw_mode=True)
            wb.put(key, value, self.offsets_cf)
            self.db.write(wb)
            for name in Rdict.list_cf(self.path):
                (self.db if name == "default" else self.db.get_column_family(name)).flush()
            self.db.close()
        try:  # the binding's own file; a broker's database has none
            os.remove(os.path.join(self.path, "rocksdict-config.json"))
        except FileNotFoundError:
            pass
