"""Copies of the vector stores in the other layouts a broker can write, built through the construct schemas.

No DLedger build is available here, so the DLedger copies are made by
:func:`rmqformats.synth.dledger.write_dledger` from the vector commit logs'
own record bytes (the files in ``tests/fixtures/<version>/store/commitlog``,
written by RocketMQ's store code), placed as ``DLedgerMmapFileStore`` and
RocketMQ's append hook place them. The multi-folder copies are the vector
segment files themselves, spread over several folders.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

import rmqformats
from rmqformats.generated.layouts import rocketmq_consumequeue as cq_layout
from rmqformats.synth.dledger import PlacedEntry, write_dledger
from rmqformats.units import unit_dtype

from conftest import store_path

SEGMENT_SIZE = 262144
_CQ = unit_dtype(cq_layout.UNIT_RUNS, cq_layout.UNIT_SEQ)


def vector_records(version: str) -> list[tuple[int, bytes]]:
    """``(commit-log offset, record bytes)`` of every message of a vector commit log."""
    out = []
    for m in rmqformats.open_store(store_path(version)).commitlog.scan():
        with open(m.segment, "rb") as f:
            f.seek(m.file_offset)
            out.append((m.commitlog_offset, f.read(m.store_size)))
    return out


def dledger_store(version: str, dst: Path, **options) -> tuple[Path, list[PlacedEntry], dict[int, int]]:
    """A store root whose commit log is a DLedger copy of the vector's; returns it, the entries and the offset map.

    The consume queues are the vector's with each unit's commit-log offset
    moved to the message's DLedger offset, and the index files are rebuilt
    by ``IndexService.buildIndex`` (:class:`rmqformats.synth.index.IndexServiceBuilder`)
    over the moved offsets, under the vector's file names; the batch
    consume queues and timer files (which hold offsets too) are left out.
    """
    from rmqformats.synth.dledger import write_checkpoint
    from rmqformats.synth.index import IndexServiceBuilder
    from conftest import truth_records

    shutil.copytree(store_path(version), dst,
                    ignore=shutil.ignore_patterns("commitlog", "batchconsumequeue", "index", "timerlog", "timerwheel"))
    records = vector_records(version)
    placed = write_dledger(dst, [r for _, r in records], SEGMENT_SIZE, **options)
    write_checkpoint(dst, placed[-1].index, placed[-1].index)
    moved = {old: e.message_offset for (old, _), e in zip(records, placed)}
    for folder, _, files in os.walk(dst / "consumequeue"):
        for name in files:
            path = os.path.join(folder, name)
            units = np.fromfile(path, _CQ)
            for u in units:
                if u["len_message"] > 0 and int(u["ofs_commitlog"]) in moved and u["len_message"] != 0x7FFFFFFF:
                    u["ofs_commitlog"] = moved[int(u["ofs_commitlog"])]
            units.tofile(path)
    service = IndexServiceBuilder(64, 256)
    for r in truth_records(version):
        if r["kind"] == "MESSAGE":
            d = r["dispatch"]
            service.put_message(d["topic"], moved[r["commitlogOffset"]], r["storeTimestamp"],
                                keys=(d.get("keys") or "").split(" "), uniq_key=d.get("uniqKey"),
                                is_rollback=(d["sysFlag"] >> 2) & 3 == 3)
    (dst / "index").mkdir()
    for built, name in zip(service.files, sorted(os.listdir(store_path(version) / "index"))):
        built.write(dst / "index" / name)
    return dst, placed, moved


def multi_folder_copy(version: str, dst: Path, folders: int = 3) -> list[Path]:
    """The vector's segment files spread round-robin over ``folders`` folders under ``dst``."""
    paths = [dst / f"disk{i}" / "commitlog" for i in range(folders)]
    for p in paths:
        p.mkdir(parents=True)
    segs = sorted(os.listdir(store_path(version) / "commitlog"))
    for i, name in enumerate(segs):
        shutil.copy2(store_path(version) / "commitlog" / name, paths[i % folders] / name)
    return paths


def tiered_store(version: str, dst: Path, *, file_size: int = 8192, slots: int = 256, items: int = 1024,
                 legacy: bool = False):
    """A tiered store (POSIX backend) holding every consume queue of a vector store, and its index files.

    Each queue's messages are the records its vector consume queue points
    at, uploaded in queue order by :func:`rmqformats.synth.tiered.write_tiered_queue`;
    every KEYS and UNIQ_KEY is indexed by a :class:`TieredIndexBuilder`
    (written in its writing form under ``root/tiered_index_file/`` and,
    compacted, under ``compacting/``). Returns ``(root, base, moved)`` where
    ``moved`` maps ``(topic, queue, tiered offset)`` to the vector's commit-log offset.
    With ``legacy`` the index follows the 5.1.x ``TieredIndexFile``: ``0000``
    (writing form) and ``2222`` (compacted) under ``tiered_index_file/``, and
    the compacted file uploaded as the INDEX segment of the POSIX backend.
    """
    from rmqformats.synth.tiered import (TieredIndexBuilder, cluster_folder, offset_file_name, write_metadata,
                                         write_tiered_queue)

    store = rmqformats.open_store(store_path(version))
    root, base = dst / "root", dst / "tiered"
    (root / "tiered_index_file" / "compacting").mkdir(parents=True)
    topics: dict[str, int] = {}
    moved: dict[tuple[str, int, int], int] = {}
    messages = []
    for q in store.queues():
        cq = store.consume_queue(q.topic, q.queue_id)
        units = [u for u in cq.units() if not u.is_placeholder]
        if not units:
            continue
        records = []
        for u in units:
            m = store.commitlog.read(u.commitlog_offset)
            with open(m.segment, "rb") as f:
                f.seek(m.file_offset)
                records.append(f.read(m.store_size))
        placed = write_tiered_queue(base, "DefaultCluster", "broker-a", q.topic, q.queue_id, records,
                                    file_size=file_size, first_queue_offset=units[0].cq_offset)
        topic_id = topics.setdefault(q.topic, len(topics) + 1)
        for u, p in zip(units, placed):
            moved[(q.topic, q.queue_id, p.commitlog_offset)] = u.commitlog_offset
            messages.append((q.topic, topic_id, q.queue_id, p, rmqformats.decode_message(p.record, 0)))
    write_metadata(root, topics)
    begin = min(m.store_timestamp for *_, m in messages)
    index = TieredIndexBuilder(begin, slots, items, legacy=legacy)
    for topic, topic_id, qid, p, m in sorted(messages, key=lambda x: x[4].store_timestamp):
        keys = [*m.keys, *([m.uniq_key] if m.uniq_key else [])]
        assert index.put_key(topic, topic_id, qid, keys, p.commitlog_offset, p.size, m.store_timestamp)
    if legacy:
        (root / "tiered_index_file" / "0000").write_bytes(index.build())
        (root / "tiered_index_file" / "2222").write_bytes(index.build_compacted())
        segment = base / cluster_folder("DefaultCluster") / "broker-a" / "rmq_sys_INDEX" / "0" / "INDEX"
        segment.mkdir(parents=True)
        (segment / offset_file_name(0)).write_bytes(index.build_compacted())
    else:
        (root / "tiered_index_file" / str(begin)).write_bytes(index.build())
        (root / "tiered_index_file" / "compacting" / str(begin)).write_bytes(index.build_compacted())
    return root, base, moved


def compaction_store(version: str, dst: Path, topic: str = "TopicTest", queue_id: int = 0, *,
                     log_file_size: int = 2048, cq_units_per_file: int = 64) -> tuple[Path, list, list]:
    """A copy of a vector store root with a compaction log and queue for ``topic``/``queue_id``.

    As ``CompactionLog`` does, the newest record of each key (the KEYS
    property; records without keys are kept) is kept, in queue order, and
    copied through :func:`rmqformats.synth.compaction.write_compaction`.
    Returns the root, the kept messages of the vector and where they went.
    """
    from rmqformats.synth.compaction import write_compaction, write_position_checkpoint

    shutil.copytree(store_path(version), dst, ignore=shutil.ignore_patterns("compaction"))
    store = rmqformats.open_store(dst)
    cq = store.consume_queue(topic, queue_id)
    msgs = [r.message for r in cq.messages() if r.message is not None]
    newest: dict[str, int] = {}
    for i, m in enumerate(msgs):
        newest[" ".join(m.keys) or f"#{i}"] = i
    kept = [msgs[i] for i in sorted(newest.values())]
    records = []
    for m in kept:
        with open(m.segment, "rb") as f:
            f.seek(m.file_offset)
            records.append(f.read(m.store_size))
    placed = write_compaction(dst, topic, queue_id, records, log_file_size=log_file_size,
                              cq_units_per_file=cq_units_per_file)
    write_position_checkpoint(dst, {(topic, queue_id): cq.max_offset})
    return dst, kept, placed


def mixed_dledger_store(version: str, dst: Path, old_segments: int = 3):
    """A store switched to DLedger: the vector's first ``old_segments`` commit-log files, then DLedger entries.

    The old files end in a BLANK record (as ``setRecoverPosition`` leaves
    the last one); the later records go into DLedger files starting at the
    old log's end (``dividedCommitlogOffset``), with the next entry indices.
    """
    shutil.copytree(store_path(version), dst,
                    ignore=shutil.ignore_patterns("batchconsumequeue", "index", "timerlog", "timerwheel"))
    names = sorted(os.listdir(dst / "commitlog"))
    divided = (int(names[old_segments - 1]) + SEGMENT_SIZE)
    for name in names[old_segments:]:
        os.remove(dst / "commitlog" / name)
    records = [(o, r) for o, r in vector_records(version) if o >= divided]
    placed = write_dledger(dst, [r for _, r in records], SEGMENT_SIZE, start_position=divided)
    moved = {old: e.message_offset for (old, _), e in zip(records, placed)}
    return dst, placed, moved, divided
