"""Which store layouts a store uses: the commit log's framing and folders, compaction, the tiered store.

:func:`describe_layouts` summarises them for ``rmqformats inspect``; each
part is read by its own capability (:mod:`rmqformats.dledger`,
:mod:`rmqformats.compaction`, :mod:`rmqformats.tiered`).
"""

from __future__ import annotations

import os

from ..commitlog import split_folders
from ..errors import RmqFormatError
from ..queuefiles import list_queue_dirs
from ..store import Store

#: Bytes of the DLedger ``checkpoint`` properties file read at most.
_MAX_PROPERTIES = 1 << 16


def read_properties(path: str) -> dict[str, str]:
    """A small Java ``.properties`` file (``key=value`` lines, ``#`` comments), as the DLedger checkpoint is."""
    with open(path, "rb") as f:
        text = f.read(_MAX_PROPERTIES).decode("latin-1")
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _folders(store: Store) -> list[str]:
    return [os.path.abspath(f) for f in split_folders(store.commitlog.path)]


def describe_layouts(store: Store, *, scan=None, tiered: str | None = None) -> dict:
    """The layouts ``store`` uses; ``scan`` is a finished scan of its commit log (for the DLedger entry range).

    ``tiered`` is the tiered store's ``tieredStoreFilePath``, which a
    store root does not name.
    """
    from ..dledger import DLedgerCommitLog
    log = store.commitlog
    folders = _folders(store)
    out: dict = {
        "commitLog": "dledger" if isinstance(log, DLedgerCommitLog) else "file",
        "commitLogFolders": folders,
        "multiFolder": len(folders) > 1,
    }
    if isinstance(log, DLedgerCommitLog):
        from ..dledger.commitlog import MixedCommitLog
        if isinstance(log, MixedCommitLog):
            out["commitLog"] = "file, then dledger"
            out["dledgerFrom"] = log.divided_offset
            out["commitLogFolders"] = [os.path.abspath(log.old.path), os.path.abspath(log.new.path)]
            log = log.new
        out["dledger"] = _dledger(log, scan)
    if store.root is not None:
        from ..dledger import dledger_data_folder
        dl = dledger_data_folder(store.root)
        if dl is not None and not isinstance(log, DLedgerCommitLog):
            # A broker switched to DLedger keeps reading its old commit log before the DLedger data;
            # this reader reads the old commit log only.
            out["dledgerBesideCommitLog"] = dl
        out["consumeQueueFiles"] = bool(list_queue_dirs(store.path("consumequeue")))
        out["batchConsumeQueueFiles"] = bool(list_queue_dirs(store.path("batchconsumequeue")))
        comp = store.compaction()
        out["compaction"] = _compaction(comp) if comp.exists else None
        if os.path.isdir(store.path("tiered_index_file")) or \
                os.path.exists(store.path("config", "tieredStoreMetadata.json")) or tiered:
            out["tiered"] = _tiered(store, tiered)
    elif tiered:
        out["tiered"] = _tiered(store, tiered)
    return out


def _dledger(log, scan) -> dict:
    index = log.index_folder
    base = os.path.dirname(os.path.normpath(split_folders(log.path)[0]))
    info: dict = {"dataFolder": log.path, "indexFolder": index,
                  "lastIndex": getattr(scan, "last_index", None), "lastTerm": getattr(scan, "last_term", None)}
    cp = os.path.join(base, "checkpoint")
    if os.path.isfile(cp):
        props = read_properties(cp)
        info["checkpoint"] = {k: int(v) if v.lstrip("-").isdigit() else v for k, v in props.items()
                              if k in ("endIndex", "committedIndex")}
    if index is not None:
        # The index is 32 bytes per entry: count its units and compare its last with the data's last
        # entry (``check_index`` compares every unit, at the cost of a second pass over the data).
        try:
            idx = log.index()
            count, last = 0, None
            for unit in idx.units():
                count += 1
                last = unit
            info["indexFiles"] = len(idx.files)
            info["indexUnits"] = count
            info["indexLastIndex"] = None if last is None else last.index
            info["indexMatchesData"] = last is not None and last.index == info["lastIndex"]
        except RmqFormatError as exc:
            info["indexError"] = str(exc)
    return info


def _compaction(comp) -> dict:
    queues = []
    for q in comp.queues():
        row = {"topic": q.topic, "queueId": q.queue_id, "subFolder": q.sub_folder}
        try:
            log = q.commitlog()
            scan = log.batches(columns="commitLogOffset", decompress=False)
            row["messages"] = sum(b.num_rows for b in scan)
            row["segments"] = len(log.segments)
            row["dataEnd"] = {"offset": scan.end.offset, "reason": scan.end.reason.name, "clean": scan.end.reason.is_clean}
            info = q.consume_queue().info()
            row["minOffset"], row["maxOffset"] = info.min_offset, info.max_offset
        except RmqFormatError as exc:
            row["error"] = str(exc)
        queues.append(row)
    try:
        cp = comp.position_checkpoint()
    except RmqFormatError as exc:
        cp = {"error": str(exc)}
    return {"folder": comp.folder, "queues": queues, "positionCheckpoint": cp}


def _tiered(store: Store, path: str | None) -> dict:
    from ..tiered import TieredStore
    ts = TieredStore(path, root=store.root)
    out: dict = {"path": path, "queues": 0, "messages": 0}
    try:
        queues = ts.queues()
        out["queues"] = len(queues)
        ends = []
        for q in queues:
            scan = q.commitlog().batches(columns="commitLogOffset", decompress=False)
            out["messages"] += sum(b.num_rows for b in scan)
            if scan.end is not None and not scan.end.reason.is_clean:
                ends.append(str(scan.end))
        out["damagedQueues"] = ends
        files = ts.index_files()
        out["indexFiles"] = [{"file": f.path, "compacted": f.compacted, "items": f.header.num_items,
                              "sealed": f.header.is_sealed} for f in files]
        out["metadata"] = ts.metadata() is not None
    except RmqFormatError as exc:
        out["error"] = str(exc)
    return out
