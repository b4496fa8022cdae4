"""The start-up rules that releases after 5.3.3 add, each a function of its own.

The rules of :mod:`rmqformats.preflight` were read in the tagged source up to
5.3.3 (``NEWEST_READ``). The releases after it are not in the source mirror;
what they changed at start-up is known from their pull-request and issue
threads and from newer files in a code index, and ``formats/releases.yaml`` /
``formats/audit.yaml`` record how. Each function here applies one such rule
when the target release has it and returns its :class:`Rule` (``None`` when
the rule does not hold for the release), so the result can name every
release-specific rule it applied:

* 5.3.4 ``ConfigManager.load``: a config file that is empty or does not parse
  is deleted before its ``.bak`` is read (apache/rocketmq #9705, PR #9706);
* 5.3.4 ``enableAcceleratedRecovery``: recovery starts at the RocksDB consume
  queue's max physical offset (#9666, PR #9667);
* 5.4.0 ``isMappedFileMatchedRecover`` of the RocksDB index and transaction
  stores: the dispatch start is the lowest ``lastOffsetPy`` of every
  dispatch store (RIP-82, PR #9787);
* 5.5.0 ``CommitLog.recoverAbnormally`` with ``checkCommitLogOffsetOnRecover``:
  the data ends at a record whose PHYSICALOFFSET lies outside its segment
  (#10017, PR #10018; BLANK records exempt, PR #10039);
* 5.5.0 checkpoint: ``logicsMsgTimestamp`` is the store time of the last
  flushed consume-queue unit (#10073, PR #10074; #10079, PR #10080);
* 5.5.0 fastjson2: config JSON with names without quotes (fastjson 1's integer map keys) was refused
  when a 5.5.0 slave read a 5.4.0 master's offsets (#10284), noted with the key;
* 5.5.0 RocksDB consume-queue folder: a broker whose
  ``useSeparateStorePathForRocksdbCQ`` does not match the folder holding the
  database refuses to start (``IllegalStateException("incompatible
  config")``, PR #10174 / #10242).

A release newer than every release in ``formats/releases.yaml`` gets the
newest one's rules, and :func:`extrapolation` says so in the output.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ..errors import RmqFormatError
from ..versions import releases as known

_STORE = "store/src/main/java/org/apache/rocketmq/store/"
CONFIG_MANAGER = "common/src/main/java/org/apache/rocketmq/common/ConfigManager.java"


@dataclass(frozen=True)
class Rule:
    """A release-specific start-up rule that was applied: its name, the release that introduced it, the Java
    method and the threads it is known from."""

    name: str
    release: str
    method: str
    known_from: str

    def to_json_dict(self) -> dict:
        return {"name": self.name, "release": self.release, "method": self.method, "knownFrom": self.known_from}

    def __str__(self) -> str:
        return f"{self.name} (from {self.release}; {self.method}; {self.known_from})"


CONFIG_DELETION = Rule("corrupt config deleted before its .bak is read", "5.3.4", "ConfigManager.load",
                       "apache/rocketmq #9705, PR #9706")
ACCELERATED_RECOVERY = Rule("accelerated recovery from the RocksDB consume queue", "5.3.4",
                            "MessageStoreConfig.enableAcceleratedRecovery (commit-log recovery)",
                            "apache/rocketmq #9666, PR #9667")
DISPATCH_START = Rule("dispatch start over every dispatch store", "5.4.0",
                      "IndexRocksDBStore.isMappedFileMatchedRecover, TransMessageRocksDBStore.isMappedFileMatchedRecover",
                      "PR #9787 (RIP-82); IndexRocksDBStore / TransMessageRocksDBStore at 14d35e958d82")
PHYSICAL_OFFSET_CHECK = Rule("PHYSICALOFFSET outside its segment ends the data", "5.5.0",
                             "CommitLog.recoverAbnormally (checkCommitLogOffsetOnRecover)",
                             "apache/rocketmq #10017, PR #10018; #10038, PR #10039")
CHECKPOINT_FLUSHED = Rule("checkpoint logicsMsgTimestamp is the last flushed consume-queue unit", "5.5.0",
                          "StoreCheckpoint.setLogicsMsgTimestamp, FlushConsumeQueueService.doFlush",
                          "apache/rocketmq #10073, PR #10074; #10079, PR #10080")
CQ_FOLDER = Rule("RocksDB consume-queue folder must match useSeparateStorePathForRocksdbCQ", "5.5.0",
                 "RocksDBConsumeQueueStore (IllegalStateException \"incompatible config\")",
                 "apache/rocketmq PR #10174, PR #10242; StorePathConfigHelper")


def version_key(version: str) -> tuple[int, int, int]:
    """``(5, 5, 0)`` for ``--release 5.5.0``, as ``preflight`` and ``check`` read the option: the digits of
    each of the first three parts, a missing part 0; a release not in ``formats/releases.yaml`` is kept
    (its rules are the newest known release's, :func:`extrapolation`)."""
    parts = []
    for p in version.split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (3 - len(parts)))[:3]


def holds_for(version: str, rule: Rule) -> bool:
    """Whether ``rule`` holds for the broker release ``version`` (given as ``--release`` takes it)."""
    return _has(version_key(version), rule)


def _key(version: str) -> tuple[int, int, int]:
    return known.release(version).key


def _has(rel: tuple[int, ...], rule: Rule) -> bool:
    return tuple(rel) >= _key(rule.release)


def _cite(rule: Rule, path: str) -> str:
    return f"rocketmq-all-{rule.release}:{path}"


class StoreConfigError(RmqFormatError):
    """A ``--config`` file whose settings cannot be read."""


def read_settings(path: str | None) -> dict[str, str]:
    """Every ``key=value`` of a broker ``.properties`` file or a JSON store config (its
    ``fullMessageStoreConfig`` and top-level keys), as text; empty without ``path``."""
    if not path:
        return {}
    path = os.path.abspath(path)
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError as exc:
        raise StoreConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if head.lstrip().startswith(b"{"):
        try:
            data = json.loads(head.decode("utf-8"))
        except ValueError as exc:
            raise StoreConfigError(path, None, f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise StoreConfigError(path, 0, "not a JSON object")
        raw = dict(data.get("fullMessageStoreConfig") or {})
        raw.update({k: v for k, v in data.items() if not isinstance(v, (dict, list))})
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in raw.items()}
    from ..brokerconfig import read_broker_properties
    return dict(read_broker_properties(path).values)


def _flag(settings: dict[str, str], key: str) -> bool | None:
    value = settings.get(key)
    return None if value is None else value.strip().lower() == "true"


def extrapolation(rel: tuple[int, ...], version: str) -> str | None:
    """The note for a release newer than every known one: its rules are the newest known release's."""
    newest = known.newest()
    if tuple(rel) <= newest.key:
        return None
    return (f"release {version} is newer than every release known here (newest: {newest.version}, "
            f"formats/releases.yaml): the rules applied are those of {newest.version}, extrapolated; "
            f"what {version} changed at start-up is not known")


def config_deletion(rel: tuple[int, ...], items: list, item_type) -> Rule | None:
    """5.3.4: ``ConfigManager.load`` deletes a config file that is empty or does not parse, then reads its
    ``.bak``; with a good ``.bak`` the broker starts, the bad file is gone (``persist`` writes it again)."""
    if not _has(rel, CONFIG_DELETION):
        return None
    src = _cite(CONFIG_DELETION, CONFIG_MANAGER)
    for it in list(items):
        if not it.method.startswith("ConfigManager.") or not it.path:
            continue
        path = it.path[:-4] if it.path.endswith(".bak") else it.path
        name = os.path.basename(path)
        items.append(item_type("change", f"{name} is empty or does not parse: from {CONFIG_DELETION.release} "
                                         f"the broker deletes it before reading {name}.bak, so its bytes are "
                                         f"gone after the start (copy it first to keep them)",
                               CONFIG_DELETION.method, src, path, 0))
    return CONFIG_DELETION


def accelerated_recovery(root: str, rel: tuple[int, ...], settings: dict[str, str], items: list,
                         item_type) -> Rule | None:
    """5.3.4: with ``enableAcceleratedRecovery=true`` and a RocksDB consume queue, recovery starts at the
    largest commit-log offset the RocksDB consume queue records instead of scanning segments."""
    if not _has(rel, ACCELERATED_RECOVERY):
        return None
    if not _flag(settings, "enableAcceleratedRecovery"):
        return None
    folders = [f for f in ("consumequeue", "consumequeue_rocksdb") if os.path.isfile(os.path.join(root, f, "CURRENT"))]
    if not folders:
        items.append(item_type("note", "enableAcceleratedRecovery=true but there is no RocksDB consume queue: "
                                       "recovery scans the commit log as without it",
                               ACCELERATED_RECOVERY.method,
                               _cite(ACCELERATED_RECOVERY, _STORE + "config/MessageStoreConfig.java")))
        return ACCELERATED_RECOVERY
    items.append(item_type("note", f"enableAcceleratedRecovery=true: recovery starts at the largest commit-log "
                                   f"offset the RocksDB consume queue in {folders[0]}/ records, without scanning "
                                   f"the segments before it; messages after that offset that the database lacks "
                                   f"are dispatched again, but a database ahead of the commit log is not checked "
                                   f"(the rule assumes SYNC_FLUSH; known from PR #9667, the recovery code that "
                                   f"reads the flag was not read at a commit)",
                           ACCELERATED_RECOVERY.method,
                           _cite(ACCELERATED_RECOVERY, _STORE + "config/MessageStoreConfig.java"),
                           os.path.join(root, folders[0])))
    return ACCELERATED_RECOVERY


def dispatch_marks(store, rel: tuple[int, ...], settings: dict[str, str], queue_end: int | None,
                   items: list, item_type) -> Rule | None:
    """5.4.0: the RocksDB index (``default``) and transaction (``trans``) stores each say from which commit-log
    offset they need messages again (``lastOffsetPy``); recovery dispatches from the lowest."""
    if not _has(rel, DISPATCH_START):
        return None
    from ..rocksdb.messagestore import CF_INDEX, CF_TRANS, RocksDBMessageStore, message_store_path
    path = message_store_path(store.root)
    if path is None:
        return None
    enabled = {CF_INDEX: _flag(settings, "indexRocksDBEnable"), CF_TRANS: _flag(settings, "transRocksDBEnable")}
    marks: dict[str, int] = {}
    try:
        with RocksDBMessageStore(path) as db:
            for cf in (CF_INDEX, CF_TRANS):
                if enabled[cf] is False:
                    continue  # isMappedFileMatchedRecover answers true for a store that is off
                got = db.marks(cf).get("lastOffsetPy")
                if got is not None:
                    marks[cf] = got
    except (RmqFormatError, OSError) as exc:
        items.append(item_type("note", f"the RocksDB message store cannot be read ({exc}): the dispatch start "
                                       f"over its index and transaction marks is not known",
                               DISPATCH_START.method, _cite(DISPATCH_START, _STORE + "rocksdb/MessageRocksDBStorage.java"),
                               path))
        return DISPATCH_START
    names = {CF_INDEX: "index (default)", CF_TRANS: "trans"}
    listed = ", ".join(f"{names[cf]} lastOffsetPy {v}" for cf, v in marks.items()) or "no lastOffsetPy marks"
    if not settings:
        listed += " (without --config, indexRocksDBEnable / transRocksDBEnable are taken as on where a mark exists)"
    low = min(marks.values()) if marks else None
    src = _cite(DISPATCH_START, _STORE + "index/rocksdb/IndexRocksDBStore.java")
    # lastOffsetPy is the start of the last message a store took; it is behind when that message ends
    # before the consume queues do.
    low_end = low
    if low is not None:
        try:
            first = next(iter(store.commitlog.scan(start=low)), None)
        except (RmqFormatError, OSError):  # a mark that is no record start: take the mark itself
            first = None
        if first is not None and first.commitlog_offset == low:
            low_end = low + first.store_size
    if low is not None and low_end is not None and queue_end is not None and low_end < queue_end:
        items.append(item_type("change", f"the RocksDB message store is behind the consume queues ({listed}; the "
                                         f"queues end at {queue_end}): recovery starts from the segment holding "
                                         f"commit-log offset {low}, and every message from there is dispatched "
                                         f"again to each store (the stores skip what they already hold; the "
                                         f"caller that takes the lowest was not read at a commit, the rule rests "
                                         f"on each store's isMappedFileMatchedRecover and PR #9787)",
                               DISPATCH_START.method, src, path, low))
    else:
        items.append(item_type("note", f"dispatch start over every dispatch store: {listed}"
                                       f"{'' if queue_end is None else f'; consume queues end at {queue_end}'}",
                               DISPATCH_START.method, src, path))
    return DISPATCH_START


def physical_offset_check(store, rel: tuple[int, ...], settings: dict[str, str], abnormal: bool,
                          start: int | None, items: list, item_type) -> Rule | None:
    """5.5.0: abnormal recovery with ``checkCommitLogOffsetOnRecover=true`` ends the data at the first record
    (from the recovery's start segment) whose stored PHYSICALOFFSET lies outside the segment holding it.

    The setting is off by default; only when ``--config`` turns it on are the records of the recovery window
    read (one pass from the start segment, streaming)."""
    if not _has(rel, PHYSICAL_OFFSET_CHECK) or not abnormal:
        return None
    src = _cite(PHYSICAL_OFFSET_CHECK, _STORE + "CommitLog.java")
    if not _flag(settings, "checkCommitLogOffsetOnRecover"):
        items.append(item_type("note", "checkCommitLogOffsetOnRecover is "
                                       f"{'false' if 'checkCommitLogOffsetOnRecover' in settings else 'not set (default false)'}: "
                                       "abnormal recovery does not check that each record's PHYSICALOFFSET lies in "
                                       "its segment (give --config with it set to check)",
                               PHYSICAL_OFFSET_CHECK.method, src))
        return None
    segments = store.commitlog.segments
    if not segments:
        return PHYSICAL_OFFSET_CHECK
    bounds = [(s.start_offset, s.start_offset + s.size, s.path) for s in segments]
    seg = 0
    for msg in store.commitlog.scan(start=start):
        at = msg.commitlog_offset
        while seg + 1 < len(bounds) and at >= bounds[seg + 1][0]:
            seg += 1
        lo, hi, path = bounds[seg]
        if not lo <= msg.physical_offset <= hi:
            items.append(item_type("change", f"the record at commit-log offset {at} stores PHYSICALOFFSET "
                                             f"{msg.physical_offset}, outside its segment (old bytes of a reused "
                                             f"file): with checkCommitLogOffsetOnRecover=true abnormal recovery ends "
                                             f"the data there and truncates the commit log",
                                   PHYSICAL_OFFSET_CHECK.method, src, path, at - lo))
            break
    return PHYSICAL_OFFSET_CHECK


def checkpoint_meaning(root: str, rel: tuple[int, ...], items: list, item_type) -> Rule | None:
    """5.5.0: ``logicsMsgTimestamp`` is the store time of the last flushed consume-queue unit; a checkpoint
    written before 5.5.0 holds the last unit written in memory, so it can be later than the flushed queues."""
    if not _has(rel, CHECKPOINT_FLUSHED):
        return None
    path = os.path.join(root, "checkpoint")
    if not os.path.isfile(path):
        return None
    text = ("checkpoint logicsMsgTimestamp means the store time of the last consume-queue unit flushed to disk "
            "(from 5.5.0)")
    text += ("; one last written by a release before 5.5.0 holds the last unit written in memory, flushed or not, "
             "so an abnormal recovery that starts from it can start after units that were never flushed")
    items.append(item_type("note", text, CHECKPOINT_FLUSHED.method,
                           _cite(CHECKPOINT_FLUSHED, _STORE + "StoreCheckpoint.java"), path, 8))
    return CHECKPOINT_FLUSHED


def rocksdb_cq_folder(root: str, rel: tuple[int, ...], settings: dict[str, str], items: list,
                      item_type) -> Rule | None:
    """5.5.0: the RocksDB consume queue is in ``consumequeue_rocksdb/`` with
    ``useSeparateStorePathForRocksdbCQ=true`` and in ``consumequeue/`` without; a broker whose setting does not
    match the folder that holds the database refuses to start."""
    if not _has(rel, CQ_FOLDER):
        return None
    shared = os.path.isfile(os.path.join(root, "consumequeue", "CURRENT"))
    separate = os.path.isfile(os.path.join(root, "consumequeue_rocksdb", "CURRENT"))
    if not (shared or separate):
        return None
    want = _flag(settings, "useSeparateStorePathForRocksdbCQ")
    src = _cite(CQ_FOLDER, _STORE + "config/StorePathConfigHelper.java")
    if want is None:
        where = "consumequeue_rocksdb/" if separate else "consumequeue/"
        items.append(item_type("note", f"the RocksDB consume queue is in {where}: a broker must run with "
                                       f"useSeparateStorePathForRocksdbCQ={'true' if separate else 'false'} or it "
                                       f"refuses to start (give --config to check the setting)",
                               CQ_FOLDER.method, src, os.path.join(root, where)))
        return CQ_FOLDER
    if want and shared and not separate:
        items.append(item_type("refuse", "useSeparateStorePathForRocksdbCQ=true, but the RocksDB consume queue is "
                                         "in consumequeue/ (consumequeue_rocksdb/ holds none): the broker throws "
                                         "IllegalStateException(\"incompatible config\") and does not start; set "
                                         "it to false or move the database", CQ_FOLDER.method, src,
                               os.path.join(root, "consumequeue", "CURRENT"), 0))
    elif not want and separate and not shared:
        items.append(item_type("refuse", "useSeparateStorePathForRocksdbCQ is false, but the RocksDB consume queue "
                                         "is in consumequeue_rocksdb/: the broker throws IllegalStateException("
                                         "\"incompatible config\") and does not start; set it to true or move the "
                                         "database", CQ_FOLDER.method, src,
                               os.path.join(root, "consumequeue_rocksdb", "CURRENT"), 0))
    return CQ_FOLDER


FASTJSON2_UNQUOTED = Rule("config JSON parsed by fastjson2, which refuses unquoted names", "5.5.0",
                          "RemotingSerializable.fromJson (ConfigManager.decode)",
                          "apache/rocketmq #10284, PR #10283, PR #10287")
FASTJSON2_SOURCE = ("remoting/src/main/java/org/apache/rocketmq/remoting/protocol/"
                    "RemotingSerializable.java")


def fastjson2_source() -> str:
    """Where the fastjson2 rule was read: ``TAG:path`` of the release that introduced it."""
    return _cite(FASTJSON2_UNQUOTED, FASTJSON2_SOURCE)


def unquoted_text(found) -> str:
    """What an unquoted name found by :func:`rmqformats.config.unquoted.unquoted_names` means to fastjson2:
    the file name, the key and the object holding it, the thread, and what is not established."""
    where = f" in {found.owner!r}" if found.owner else ""
    return (f"{os.path.basename(found.path)} has the unquoted name {found.key}{where} (fastjson 1 writes integer "
            f"map keys so, to 5.4.0): fastjson2 refused such names with \"not support unquoted name\" when a "
            f"5.5.0 slave read a 5.4.0 master's consumer offsets (apache/rocketmq #10284, fixed by PR #10287 for "
            f"5.5.1); whether this broker's own load of the file fails the same way is not established")


def fastjson2_unquoted_keys(root: str, rel: tuple[int, ...], items: list, item_type) -> Rule | None:
    """5.5.0: a config file with names without quotes, as fastjson 1 brokers (to 5.4.0) write integer map keys.
    fastjson2 refused them when a 5.5.0 slave read a 5.4.0 master's consumer offsets (#10284); whether the
    broker's own load of the file fails the same way is not established, so this is a note naming the key."""
    if not _has(rel, FASTJSON2_UNQUOTED):
        return None
    from ..config.unquoted import unquoted_names
    src = fastjson2_source()
    for found in unquoted_names(os.path.join(root, "config")):
        items.append(item_type("note", unquoted_text(found), FASTJSON2_UNQUOTED.method, src, found.path,
                               found.offset))
    return FASTJSON2_UNQUOTED
