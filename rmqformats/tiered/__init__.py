"""The tiered-store plugin (5.1.0+): its POSIX backend's segments, its index files and its metadata.

:class:`TieredStore` finds, under ``tieredStoreFilePath``, each topic
queue's tiered commit log and consume queue (:mod:`.files`), the uploaded
INDEX segments, and under the store root the index files being written
(``tiered_index_file/``) and ``config/tieredStoreMetadata.json``. Lookups
by key follow the index files as the plugin's ``IndexStoreService`` does
and read the messages from the tiered commit logs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..config.fastjson import FastjsonSyntaxError, parse
from ..errors import ConfigSchemaError, ConfigSyntaxError, RmqFormatError, StoreNotFoundError
from ..message import Message
from .files import (INDEX_TOPIC, TYPES, TieredCommitLog, TieredConsumeQueue, TieredUnit, segment_files)
from .index import TieredIndexFile, TieredIndexItem, key_hash

__all__ = ["TieredStore", "TieredQueue", "TieredCommitLog", "TieredConsumeQueue", "TieredUnit", "TieredIndexFile",
           "TieredIndexItem", "TieredHit", "key_hash", "read_metadata"]

#: ``IndexStoreService.FILE_DIRECTORY_NAME`` and its compacted sub-folder, under the store root.
INDEX_FOLDER = "tiered_index_file"
COMPACTED_FOLDER = "compacting"
METADATA_FILE = os.path.join("config", "tieredStoreMetadata.json")
MAX_METADATA_BYTES = 256 << 20


@dataclass(frozen=True)
class TieredQueue:
    """One topic queue in the tiered store."""

    cluster: str
    broker: str
    topic: str
    queue_id: int
    folder: str

    def commitlog(self) -> TieredCommitLog:
        return TieredCommitLog(os.path.join(self.folder, "COMMIT_LOG"))

    def consume_queue(self) -> TieredConsumeQueue:
        return TieredConsumeQueue(os.path.join(self.folder, "CONSUME_QUEUE"), self.commitlog())


@dataclass(frozen=True)
class TieredHit:
    """A key lookup's result: the index item and the message it leads to."""

    item: TieredIndexItem
    topic: str
    message: Message


def read_metadata(path: str) -> dict:
    """``tieredStoreMetadata.json`` (``TieredMetadataSerializeWrapper``) as a mapping; typed errors when unreadable."""
    with open(path, "rb") as f:
        data = f.read(MAX_METADATA_BYTES + 1)
    if len(data) > MAX_METADATA_BYTES:
        raise ConfigSyntaxError(path, MAX_METADATA_BYTES, f"larger than {MAX_METADATA_BYTES} bytes")
    text = data.decode("utf-8", "replace")
    try:
        value = parse(text).value
    except FastjsonSyntaxError as exc:
        raise ConfigSyntaxError(path, len(text[:exc.pos].encode("utf-8")), exc.reason) from None
    if not isinstance(value, dict):
        raise ConfigSchemaError(path, None, "not an object", json_path="$")
    return value


class TieredStore:
    """The tiered store's files: ``base`` (``tieredStoreFilePath``) and, under ``root``, the index and metadata."""

    def __init__(self, base: str | os.PathLike[str] | None = None, *, root: str | os.PathLike[str] | None = None):
        self.base = None if base is None else os.fspath(base)
        self.root = None if root is None else os.fspath(root)
        if self.base is not None and not os.path.isdir(self.base):
            raise StoreNotFoundError(self.base, None, "a file, not a tiered store folder (tieredStoreFilePath)"
                                     if os.path.exists(self.base) else "tiered store folder not found")

    # -- what is there ------------------------------------------------------------------

    def queues(self) -> list[TieredQueue]:
        """Every ``<hash>_<cluster>/<broker>/<topic>/<queueId>`` folder with tiered files (the index topic apart)."""
        if self.base is None:
            return []
        out = []
        for cdir in sorted(os.listdir(self.base)):
            cpath = os.path.join(self.base, cdir)
            if "_" not in cdir or not os.path.isdir(cpath):
                continue
            cluster = cdir.split("_", 1)[1]
            for broker in sorted(os.listdir(cpath)):
                bpath = os.path.join(cpath, broker)
                if not os.path.isdir(bpath):
                    continue
                for topic in sorted(os.listdir(bpath)):
                    tpath = os.path.join(bpath, topic)
                    if topic == INDEX_TOPIC or not os.path.isdir(tpath):
                        continue
                    for q in sorted(os.listdir(tpath), key=lambda n: (len(n), n)):
                        qpath = os.path.join(tpath, q)
                        if q.lstrip("-").isdigit() and any(os.path.isdir(os.path.join(qpath, t)) for t in TYPES):
                            out.append(TieredQueue(cluster, broker, topic, int(q), qpath))
        return out

    def queue(self, topic: str, queue_id: int) -> TieredQueue:
        for q in self.queues():
            if (q.topic, q.queue_id) == (topic, queue_id):
                return q
        raise StoreNotFoundError(self.base, None, f"no tiered files for {topic}/{queue_id}")

    def index_files(self, *, num_hash_slots: int | None = None, num_items: int | None = None) -> list[TieredIndexFile]:
        """The index files being written or compacted (``<root>/tiered_index_file``) and the uploaded INDEX segments.

        ``num_hash_slots`` and ``num_items`` are the plugin's
        ``tieredStoreIndexFileMaxHashSlotNum`` and ``...MaxIndexNum`` when
        not the defaults (the writing form's size does not tell them apart
        otherwise).
        """
        out = []
        if self.root is not None:
            folder = os.path.join(self.root, INDEX_FOLDER)
            for sub in (folder, os.path.join(folder, COMPACTED_FOLDER)):
                if os.path.isdir(sub):
                    for name in sorted(os.listdir(sub)):
                        path = os.path.join(sub, name)
                        if name.isdigit() and os.path.isfile(path):
                            out.append(TieredIndexFile(path, compacted=True if sub != folder else None,
                                                   num_hash_slots=num_hash_slots,
                                                   num_items=None if sub != folder else num_items))
        if self.base is not None:
            for cdir in sorted(os.listdir(self.base)):
                cpath = os.path.join(self.base, cdir)
                if not os.path.isdir(cpath):
                    continue
                for broker in sorted(os.listdir(cpath)):
                    for seg in segment_files(os.path.join(cpath, broker, INDEX_TOPIC, "0", "INDEX")):
                        out.append(TieredIndexFile(seg.path, compacted=True))
        return out

    def query_files(self, *, num_hash_slots: int | None = None,
                    num_items: int | None = None) -> list[TieredIndexFile]:
        """The index files a lookup searches, newest first: one per begin timestamp, as the plugin's
        ``IndexStoreService.recover`` fills its ``timeStoreTable``. An uploaded INDEX segment replaces the
        local file of its timestamp (which ``recover`` destroys), and a compacted copy in ``compacting/``
        (a folder ``recover`` deletes: a compaction that had not finished) counts only where no other file
        has its timestamp; the same messages are in both forms."""
        rank: dict[int, tuple[int, TieredIndexFile]] = {}
        for f in self.index_files(num_hash_slots=num_hash_slots, num_items=num_items):
            folder = os.path.basename(os.path.dirname(f.path))
            where = 0 if folder == COMPACTED_FOLDER else 2 if folder == "INDEX" else 1
            held = rank.get(f.header.begin_timestamp)
            if held is None or where > held[0]:
                rank[f.header.begin_timestamp] = (where, f)
        return [rank[t][1] for t in sorted(rank, reverse=True)]

    def metadata(self) -> dict | None:
        """``config/tieredStoreMetadata.json`` under the root; ``None`` without it."""
        if self.root is None:
            return None
        path = os.path.join(self.root, METADATA_FILE)
        return read_metadata(path) if os.path.exists(path) else None

    def topic_ids(self) -> dict[int, str]:
        """Topic id -> topic, from the metadata's ``topicMetadataTable``."""
        meta = self.metadata() or {}
        table = meta.get("topicMetadataTable") or {}
        out = {}
        if isinstance(table, dict):
            for name, t in table.items():
                if isinstance(t, dict) and isinstance(t.get("topicId"), int):
                    out[t["topicId"]] = t.get("topic", name)
        return out

    # -- lookups --------------------------------------------------------------------------

    def lookup(self, topic: str, key: str, *, begin: int = 0, end: int = 1 << 62,
               num_hash_slots: int | None = None, num_items: int | None = None) -> list[TieredHit]:
        """Messages of ``topic`` whose KEYS or UNIQ_KEY is ``key``, through every index file.

        Items whose hash matches but whose message has not the key (hash
        collisions) are left out, as the broker's client filters them. The
        files searched are those the plugin's ``timeStoreTable`` holds (see
        :meth:`query_files`), and each message is listed once, as
        ``IndexStoreService.queryAsync`` keys its results by queue id and
        offset.
        """
        ids = {v: k for k, v in self.topic_ids().items()}
        topic_id = ids.get(topic)
        logs: dict[int, TieredCommitLog] = {}
        hits = []
        seen: set[tuple[int, int]] = set()
        for f in self.query_files(num_hash_slots=num_hash_slots, num_items=num_items):
            for item in f.lookup(topic, key, topic_id=topic_id, begin=begin, end=end):
                if (item.queue_id, item.commitlog_offset) in seen:
                    continue
                seen.add((item.queue_id, item.commitlog_offset))
                log = logs.get(item.queue_id)
                if log is None:
                    try:
                        log = logs[item.queue_id] = self.queue(topic, item.queue_id).commitlog()
                    except RmqFormatError:
                        continue
                msg = log.read(item.commitlog_offset)
                if msg.topic == topic and (key in msg.keys or msg.uniq_key == key):
                    hits.append(TieredHit(item, topic, msg))
        return hits
