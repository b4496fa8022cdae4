"""Building tiered-store files (POSIX backend) through the generated construct schemas.

:func:`write_tiered_queue` uploads one topic queue as the plugin does: its
records, in queue order, appended to ``COMMIT_LOG`` files with
PHYSICALOFFSET rewritten to the tiered offset (``CommitLogInputStream``),
a coda closing each sealed file, and a 20-byte ``CONSUME_QUEUE`` unit per
message. :class:`TieredIndexBuilder` follows ``IndexStoreFile.putKey`` for
the writing form and ``compactToNewFile`` for the compacted form.
:func:`write_metadata` writes ``config/tieredStoreMetadata.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

from ..commitlog import decode_message
from ..generated.construct import rocketmq_tiered_commitlog as cs_log
from ..generated.construct import rocketmq_tiered_index as cs_index
from ..tiered.index import COMPACT_ITEM_SIZE, HEADER_SIZE, ITEM_SIZE, SLOT_SIZE, key_hash
from .commitlog import encode_cq_units
from .dledger import relocate_record


def offset_file_name(offset: int) -> str:
    """``MessageStoreUtil.offset2FileName``: 8 hex digits of MD5 of the decimal offset, then 20 digits."""
    return hashlib.md5(str(offset).encode()).hexdigest()[:8] + f"{offset:020d}"


def cluster_folder(cluster: str) -> str:
    """``<md5(cluster)[:8]>_<cluster>``."""
    return f"{hashlib.md5(cluster.encode()).hexdigest()[:8]}_{cluster}"


@dataclass(frozen=True)
class TieredPlaced:
    """Where a message went: its tiered commit-log offset, queue offset and record as written."""

    commitlog_offset: int
    queue_offset: int
    size: int
    record: bytes


def encode_coda(max_store_timestamp: int) -> bytes:
    return cs_log.coda.build({"len_coda": 16, "magic": 0xCBD43194, "max_store_timestamp": max_store_timestamp})


def write_tiered_queue(base: str | os.PathLike[str], cluster: str, broker: str, topic: str, queue_id: int,
                       records: Iterable[bytes], *, file_size: int, coda: bool = True,
                       first_queue_offset: int | None = None) -> list[TieredPlaced]:
    """Write one queue's records as tiered COMMIT_LOG and CONSUME_QUEUE files; returns where each went.

    A commit-log file takes records while they fit ``file_size`` (a
    record never spans files); a full file is sealed with a coda when
    ``coda``. The consume queue is one file starting at the first record's
    queue offset (or ``first_queue_offset``).
    """
    qdir = os.path.join(os.fspath(base), cluster_folder(cluster), broker, topic, str(queue_id))
    log_dir, cq_dir = os.path.join(qdir, "COMMIT_LOG"), os.path.join(qdir, "CONSUME_QUEUE")
    os.makedirs(log_dir, exist_ok=True)
    os.makedirs(cq_dir, exist_ok=True)
    placed: list[TieredPlaced] = []
    files: list[tuple[int, bytearray]] = []
    offset = 0
    newest = 0
    for record in records:
        if not files or len(files[-1][1]) + len(record) > file_size:
            if files and coda:
                files[-1][1].extend(encode_coda(newest))
                offset += 16
            files.append((offset, bytearray()))
        data = relocate_record(record, offset, recompute_crc=False)
        m = decode_message(data, 0)
        newest = max(newest, m.store_timestamp)
        files[-1][1].extend(data)
        placed.append(TieredPlaced(offset, m.queue_offset, len(data), data))
        offset += len(data)
    for start, buf in files:
        with open(os.path.join(log_dir, offset_file_name(start)), "wb") as f:
            f.write(buf)
    if placed:
        from ..consumequeue import tags_code
        first = placed[0].queue_offset if first_queue_offset is None else first_queue_offset
        units = [(p.commitlog_offset, p.size, tags_code(decode_message(p.record, 0).tags)) for p in placed]
        with open(os.path.join(cq_dir, offset_file_name(first * 20)), "wb") as f:
            f.write(encode_cq_units(units))
    return placed


class TieredIndexBuilder:
    """An index file in the writing form, filled by :meth:`put_key` as ``IndexStoreFile.putKey`` does.

    ``legacy`` follows the 5.1.x ``TieredIndexFile.putKey`` instead: slots
    start at -1, items are numbered from 0, time differences are in
    milliseconds, ``Math.abs`` hashes, and the file is 12 bytes longer with
    an end marker in its last 4 bytes.
    """

    def __init__(self, begin_timestamp: int, num_hash_slots: int, num_items: int, *, legacy: bool = False):
        self.legacy = legacy
        self.begin_timestamp = begin_timestamp
        self.end_timestamp = begin_timestamp
        self.num_hash_slots = num_hash_slots
        self.num_items = num_items
        self.slots = [-1 if legacy else 0] * num_hash_slots
        self.items: list[dict] = []  # item n is self.items[n - first]
        self.first = 0 if legacy else 1
        self.used_slots = 0

    @property
    def full(self) -> bool:
        return len(self.items) + self.first >= self.num_items

    def put_key(self, topic: str, topic_id: int, queue_id: int, keys: Iterable[str], offset: int, size: int,
                timestamp: int) -> bool:
        """Index ``offset`` under each key; ``False`` (nothing put) when the file cannot take them all."""
        keys = list(dict.fromkeys(keys))
        if len(self.items) + self.first - 1 + len(keys) >= self.num_items:
            return False
        for key in keys:
            h = key_hash(topic, key, legacy=self.legacy)
            slot = h % self.num_hash_slots
            old = self.slots[slot]
            diff = timestamp - self.begin_timestamp
            self.items.append({"key_hash": h, "topic_id": topic_id, "queue_id": queue_id, "ofs_commitlog": offset,
                               "len_message": size, "time_diff": diff if self.legacy else diff // 1000,
                               "prev_item": old})
            self.slots[slot] = len(self.items) - 1 + self.first
            if old <= 0 and not self.legacy or self.legacy and old < 0:
                self.used_slots += 1
            self.end_timestamp = max(self.end_timestamp, timestamp)
        return True

    def _item(self, n: int) -> dict:
        return self.items[n - self.first]

    def _header(self, sealed: bool, used_slots: int) -> bytes:
        return cs_index.index_header.build({"magic": "end_marker" if sealed else "begin_marker",
                                            "begin_timestamp": self.begin_timestamp,
                                            "end_timestamp": self.end_timestamp, "num_used_slots": used_slots,
                                            "num_items": len(self.items)})

    def build(self) -> bytes:
        """The writing form: header, slots (first 4 bytes used), items at their numbers, zero-filled to full size."""
        items_at = HEADER_SIZE + self.num_hash_slots * SLOT_SIZE
        extra = 12 if self.legacy else 0
        out = bytearray(items_at + self.num_items * ITEM_SIZE + extra)
        sealed = self.full
        out[:HEADER_SIZE] = self._header(sealed and not self.legacy, 0 if self.legacy else self.used_slots)
        for i, v in enumerate(self.slots):
            if v:
                p = HEADER_SIZE + i * SLOT_SIZE
                out[p:p + SLOT_SIZE] = cs_index.slot.build({"value": v, "len_run": 0})
        for k, item in enumerate(self.items):
            p = items_at + (k + self.first) * ITEM_SIZE
            out[p:p + ITEM_SIZE] = cs_index.item.build(item)
        if self.legacy:  # the last 4 bytes: -1, or the END magic once full
            out[-4:] = cs_index.slot.build({"value": -1, "len_run": 0})[:4] if not sealed else \
                cs_index.index_header.build({"magic": "end_marker", "begin_timestamp": 0, "end_timestamp": 0,
                                       "num_used_slots": 0, "num_items": 0})[:4]
        return bytes(out)

    def build_compacted(self) -> bytes:
        """The compacted form (``compactToNewFile``; 5.1.x ``buildCompactFile``): each slot's chain as one run of 28-byte items."""
        items_at = HEADER_SIZE + self.num_hash_slots * SLOT_SIZE
        out = bytearray(items_at)
        runs = bytearray()
        for i, v in enumerate(self.slots):
            if self.legacy and v < 0:
                continue  # 5.1.x leaves the slots without items unwritten
            begin = items_at + len(runs)
            n = v
            while n >= self.first and n - self.first < len(self.items):
                item = self._item(n)
                runs.extend(cs_index.compact_item.build({k: item[k] for k in (
                    "key_hash", "topic_id", "queue_id", "ofs_commitlog", "len_message", "time_diff")}))
                n = item["prev_item"]
            p = HEADER_SIZE + i * SLOT_SIZE
            out[p:p + SLOT_SIZE] = cs_index.slot.build({"value": begin, "len_run": items_at + len(runs) - begin})
        out[:HEADER_SIZE] = self._header(True, self.num_hash_slots if self.legacy else self.used_slots)
        assert len(runs) == COMPACT_ITEM_SIZE * len(self.items)
        tail = cs_index.index_header.build({"magic": "begin_marker", "begin_timestamp": 0, "end_timestamp": 0,
                                      "num_used_slots": 0, "num_items": 0})[:4] if self.legacy else b""
        return bytes(out + runs + tail)


def write_metadata(root: str | os.PathLike[str], topics: dict[str, int]) -> str:
    """``config/tieredStoreMetadata.json`` with a ``topicMetadataTable`` (topic -> id)."""
    path = os.path.join(os.fspath(root), "config", "tieredStoreMetadata.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    table = {t: {"reserveTime": -1, "status": 0, "topic": t, "topicId": i, "updateTimestamp": 0}
             for t, i in topics.items()}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"commitLogFileSegmentTable": {}, "consumeQueueFileSegmentTable": {},
                            "indexFileSegmentTable": {}, "queueMetadataTable": {}, "topicMetadataTable": table},
                           indent="\t"))
    return path
