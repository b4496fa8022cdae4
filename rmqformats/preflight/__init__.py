"""What the broker will do when it starts on a store: refuse, start after changing it, or start cleanly.

:func:`preflight` follows the broker's start-up code (``BrokerController.initialize``
→ the config managers' ``load``, ``DefaultMessageStore.load`` → the mapped
file queues' ``load``, ``recover``) for one release and lists what each step
will do with the files on disk. Every item names the file (and offset where
there is one), the Java method, and the source it was read in
(``TAG:path``). The rules, with the releases they hold for:

Refusals (``BrokerController.initialize`` returns false; ``BrokerStartup``
exits):

* A mapped file (commit-log segment, consume-queue or batch consume-queue
  file) whose size is not the configured one: ``MappedFileQueue.load``
  (``doLoad`` from 4.9.2) returns false ("length not matched message store
  config value"). A file of 0 bytes that is the last of its queue is
  deleted instead from 5.1.3 on (``doLoad``: "size is 0, auto delete"),
  which the broker survives.
* The last file of a consume queue holds no unit (its first unit is zero, as
  a file allocated but never flushed after an asynchronous flush was lost)
  while the queue's files start after offset 0 or has files before it: from
  5.0.0 ``ConsumeQueue.correctMinOffset`` asks the last file for the unit
  before its read position 0 (``selectMappedBuffer(-20, 20)``), the buffer's
  ``position(-20)`` throws ``IllegalArgumentException``, and
  ``DefaultMessageStore.load`` catches it and returns false (apache/rocketmq
  #9728 on 5.3.3; #10108 reports the same stack on a 4.9.3 build). 4.x reads
  the first file from position 0 there and starts.
* A config file (``topics.json``, ``consumerOffset.json``, …) that is empty
  or does not parse, whose ``.bak`` is there but does not parse either:
  ``ConfigManager.loadBak`` returns false.

Changes (the broker starts, but not on the store as it is):

* a config file read from its ``.bak`` (``ConfigManager.load`` →
  ``loadBak``), or with neither usable: started with empty tables;
* a missing commit-log segment between two others: ``CommitLog.load`` →
  ``MappedFileQueue.checkSelf`` only logs "[BUG]"; the messages there cannot
  be read;
* after an unclean shutdown, the index files that end after the checkpoint's
  ``indexMsgTimestamp``, which ``IndexService.load`` deletes (keys of messages
  before the abnormal recovery's start are then not indexed again:
  apache/rocketmq #8007, #3868);
* recovery: normal (no ``abort`` file) or abnormal, where it cuts the commit
  log (``MappedFileQueue.truncateDirtyFiles``) when the data ends at damage,
  the consume-queue units it removes past the data end
  (``truncateDirtyLogicFiles``), the messages it dispatches again;
* timer-log units pointing past the data end (apache/rocketmq #10668);
* a confirm offset in the checkpoint past the data end, which recovery
  lowers;
* what the two-way check finds missing (queue units, index entries): the
  broker does not rebuild them on its own when they lie before the queues'
  end.

What the broker does and what our own check finds are kept apart: the items
(refusals and changes) each cite a Java method of the release followed;
:attr:`Preflight.findings` holds what ``rmqformats check`` finds that is no
broker action (index entries pointing at nothing, timer-log units past the
data end, a queue ahead of the commit log, …). Where the data ends at damage,
:attr:`Preflight.past_end` counts the intact messages past it (the salvage
walk's), which the broker's truncation destroys, and :func:`keep_command`
says how to keep them.

The rules were read in the tagged source up to 5.3.3 (``NEWEST_READ``) and
are taken as unchanged after it. The rules that 5.3.4 to 5.5.1 add are in
:mod:`.release_rules`, one function each; the result names those it applied
(``Preflight.rules``) and, for a release newer than every known one, says
that its rules are extrapolated (``Preflight.extrapolated``).

The release followed is, unless given, the newest the store's evidence
allows (:func:`rmqformats.versions.detect.detect`): a broker starting on a
store is the release that wrote it or a later one; the range allowed is
carried with it.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import RmqFormatError, place
from ..queuefiles import list_queue_dirs, queue_files

if TYPE_CHECKING:
    from ..recovery.salvage import PastEnd

REFUSE = "refuse"
CHANGE = "change"
NOTE = "note"
#: What our own check finds that is no broker action (in :attr:`Preflight.findings`).
FINDING = "finding"

_STORE = "store/src/main/java/org/apache/rocketmq/store/"
MAPPED_FILE_QUEUE = _STORE + "MappedFileQueue.java"
CONSUME_QUEUE = _STORE + "ConsumeQueue.java"
COMMIT_LOG = _STORE + "CommitLog.java"
MESSAGE_STORE = _STORE + "DefaultMessageStore.java"
CONFIG_MANAGER = "common/src/main/java/org/apache/rocketmq/common/ConfigManager.java"
#: The newest tag the rules were read in; newer releases are taken to behave as it does.
NEWEST_READ = (5, 3, 3)


@dataclass(frozen=True)
class Item:
    """One thing the broker will do."""

    verdict: str  # REFUSE, CHANGE or NOTE
    text: str
    method: str
    source: str
    path: str | None = None
    offset: int | None = None

    def to_json_dict(self) -> dict:
        return {"verdict": self.verdict, "text": self.text, "method": self.method, "source": self.source,
                "path": self.path, "offset": self.offset}

    def __str__(self) -> str:
        where = "" if self.path is None else place(self.path, self.offset)
        return f"{self.verdict}: {where + ': ' if where else ''}{self.text} [{self.method}; {self.source}]"


@dataclass
class Preflight:
    """The result of :func:`preflight`."""

    release: str
    release_source: str
    recovery: str  # "normal" or "abnormal"
    data_end: int | None
    #: What the broker does: refusals, changes and notes, each citing a Java method of the release followed.
    items: list[Item] = field(default_factory=list)
    #: The releases the store's evidence allows (``5.2.0 or later``), the one followed among them.
    release_range: str = "unknown"
    #: What our own check finds that is no broker action (verdict ``finding``); not in the exit status.
    findings: list[Item] = field(default_factory=list)
    #: The intact messages past a data end at damage, which recovery destroys (a
    #: :class:`~rmqformats.recovery.salvage.PastEnd`); ``None`` when the data ends cleanly.
    past_end: PastEnd | None = None
    #: The command that keeps them (``None`` when there are none).
    keep: str | None = None
    #: The rules of releases after 5.3.3 that were applied (:mod:`.release_rules`).
    rules: list = field(default_factory=list)
    #: Set when the release is newer than every known one: the note saying its rules are extrapolated.
    extrapolated: str | None = None

    @property
    def exit_code(self) -> int:
        """0 clean start, 1 starts but changes the store, 2 refuses to start."""
        if any(i.verdict == REFUSE for i in self.items):
            return 2
        return 1 if any(i.verdict == CHANGE for i in self.items) else 0

    @property
    def lost_messages(self) -> int:
        """Intact messages past the data end that the broker's recovery destroys."""
        return self.past_end.messages if self.past_end is not None else 0

    def to_json_dict(self) -> dict:
        return {"release": self.release, "releaseSource": self.release_source, "releaseRange": self.release_range,
                "recovery": self.recovery, "dataEnd": self.data_end, "exit": self.exit_code,
                "items": [i.to_json_dict() for i in self.items],
                "findings": [i.to_json_dict() for i in self.findings],
                "lostMessages": self.lost_messages,
                "intactPastDataEnd": self.past_end.to_json_dict() if self.past_end is not None else None,
                "keep": self.keep,
                "releaseRules": [r.to_json_dict() for r in self.rules], "extrapolated": self.extrapolated}


def keep_command(store: str, data_end: int) -> str:
    """The commands that keep the intact messages past ``data_end``: the salvage export from there on, and a
    salvage rebuild (a new store holding every intact message, re-placed as the broker appends)."""
    return (f"'rmqformats export {store} --salvage --from-offset {data_end} --to parquet DIR' keeps them (every "
            f"intact message past the data end, damaged ranges skipped), and 'rmqformats rebuild {store} --out NEW "
            f"--salvage' writes a new store that holds them")


def _tag(release: tuple[int, ...]) -> str:
    r = min(release, NEWEST_READ)
    return f"rocketmq-all-{r[0]}.{r[1]}.{r[2]}"


def preflight(store, *, release: str | None = None, config: str | None = None,
              index_safe: bool = False) -> Preflight:
    """What the broker of ``release`` (default: the oldest the store's contents allow) does on start.

    ``config``: a broker properties or JSON store config for the configured
    file sizes (default: the sizes most files of each kind have).
    """
    from ..rebuild.sizes import read_config_values
    from ..versions import releases as known
    from ..versions.detect import detect
    from . import release_rules as later
    if release is None:
        written = detect(store)
        allowed = written.summary()
        if written.min is not None:
            newest = written.ranges[-1][1] if written.ranges else (written.max or known.newest())
            version = newest.version
            source = "the newest the store allows: a broker starts on what its own release or an older one " \
                     "wrote; --release names another"
        else:
            version, source = "5.3.3", "not detected; taken as 5.3.3"
    else:
        version, source = known.broker_release(release), "given"
        allowed = "not read (--release given)"
    rel = later.version_key(version)
    tag = _tag(rel)
    if rel > NEWEST_READ:
        source += f"; its rules as read in {tag}, the newest tag read, which it is taken to follow"
    given = read_config_values(config) if config else {}
    settings = later.read_settings(config)
    root = store.root
    result = Preflight(release=version, release_source=source,
                       recovery="abnormal" if store.has_abort_file else "normal", data_end=None,
                       release_range=allowed)
    items = result.items
    result.extrapolated = later.extrapolation(rel, version)
    if result.extrapolated:
        items.append(Item(NOTE, result.extrapolated, "rmqformats preflight", "formats/releases.yaml"))
    elif rel > NEWEST_READ:
        items.append(Item(NOTE, f"release {version} is newer than the tagged source read here (up to "
                                f"{_tag(NEWEST_READ)}): the rules read there are taken as unchanged, and the rules "
                                f"of later releases known from their threads are applied (release rules)",
                          "rmqformats preflight", "formats/releases.yaml"))
    rules = result.rules
    if root is not None:
        _config_files(os.path.join(root, "config"), tag, items)
        rules.append(later.config_deletion(rel, items, Item))
        rules.append(later.rocksdb_cq_folder(root, rel, settings, items, Item))
        rules.append(later.fastjson2_unquoted_keys(root, rel, items, Item))
    # Mapped files: commit log, consume queues, batch consume queues.
    segs = [(s.path, s.start_offset, s.size) for s in store.commitlog.segments]
    cl_size, cl_source = _commitlog_size(store, given, config)
    _mapped_files("commit log", segs, cl_size, rel, tag, items, cl_source)
    _gaps(segs, cl_size, tag, items)
    if root is not None:
        for parent, key in (("consumequeue", "mappedFileSizeConsumeQueue"),
                            ("batchconsumequeue", "mapperFileSizeBatchConsumeQueue")):
            folder = os.path.join(root, parent)
            if os.path.isfile(os.path.join(folder, "CURRENT")):
                continue  # a RocksDB consume queue: no mapped files
            queues = [(t, q, [(f.path, f.start, f.size) for f in queue_files(d)])
                      for t, q, d in list_queue_dirs(folder)]
            size = given.get(key) or _mode([s for _, _, fs in queues for _, _, s in fs if s])
            if key == "mappedFileSizeConsumeQueue" and size:
                size = -(-size // 20) * 20  # getMappedFileSizeConsumeQueue: whole units
            for _t, _q, files in queues:
                _mapped_files(f"{parent} queue", files, size, rel, tag, items)
                if parent == "consumequeue":
                    _empty_last_file(files, size, rel, tag, items)
    if root is not None:
        _short_checkpoint(os.path.join(root, "checkpoint"), tag, items)
    refused = any(i.verdict == REFUSE for i in items)
    if not refused:
        plan = _recovery(store, rel, tag, index_safe, result)
        if root is not None:
            rules.append(later.accelerated_recovery(root, rel, settings, items, Item))
            rules.append(later.dispatch_marks(store, rel, settings, plan.max_queue_end, items, Item))
            rules.append(later.checkpoint_meaning(root, rel, items, Item))
        rules.append(later.physical_offset_check(store, rel, settings, result.recovery == "abnormal",
                                                 plan.abnormal_start, items, Item))
    result.rules = [r for r in rules if r is not None]
    return result


def _commitlog_size(store, given: dict, config: str | None) -> tuple[int | None, str]:
    """``mappedFileSizeCommitLog``: the config's, else what the segment files show (the step between their
    names, the only segment's length when it is whole, else the broker's default: see
    :func:`rmqformats.rebuild.sizes.commitlog_segment_size`), and where it was found."""
    from ..rebuild.sizes import commitlog_segment_size
    if "mappedFileSizeCommitLog" in given:
        return given["mappedFileSizeCommitLog"], f"config {os.path.abspath(config or '')}"
    if store.root is not None and type(store.commitlog).__name__ == "CommitLog":
        return commitlog_segment_size(store.commitlog.path)
    return _mode([s.size for s in store.commitlog.segments if s.size]), "the size most segment files have"


#: Bytes of the checkpoint the broker maps (``OS_PAGE_SIZE``), and its fields' names by position.
_CHECKPOINT_MAPPED = 4096
_CHECKPOINT_FIELDS = ("physicMsgTimestamp", "logicsMsgTimestamp", "indexMsgTimestamp", "masterFlushedOffset",
                      "confirmPhyOffset")


def _short_checkpoint(path: str, tag: str, items: list[Item]) -> None:
    """A checkpoint shorter than the page the broker maps: mapping it read-write extends the file with zeros,
    and a field past the old end is read as 0 (``StoreCheckpoint``'s constructor, every release)."""
    if not os.path.isfile(path):
        return
    size = os.path.getsize(path)
    if size >= _CHECKPOINT_MAPPED:
        return
    zeroed = [name for k, name in enumerate(_CHECKPOINT_FIELDS) if 8 * k >= size]
    cut = [name for k, name in enumerate(_CHECKPOINT_FIELDS) if 8 * k < size < 8 * k + 8]
    read = (f"reads {', '.join(zeroed)} as 0" if zeroed else "reads every field as written") + \
        (f" and {cut[0]} with its bytes past the old end as zeros" if cut else "")
    items.append(Item(CHANGE, f"the checkpoint is {size} bytes, not {_CHECKPOINT_MAPPED}: the broker maps "
                              f"{_CHECKPOINT_MAPPED} bytes read-write, which extends the file with zeros, and "
                              f"{read}",
                      "StoreCheckpoint.<init>", f"{tag}:{_STORE}StoreCheckpoint.java", path, size))


def _mode(values: list[int]) -> int | None:
    return Counter(values).most_common(1)[0][0] if values else None


def _config_files(folder: str, tag: str, items: list[Item]) -> None:
    from ..config import ConfigError, read_config_file
    from ..config.schema import schema_for_file
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".bak") or not os.path.isfile(path) or schema_for_file(name) is None:
            continue
        bak = path + ".bak"
        src = f"{tag}:{CONFIG_MANAGER}"
        try:
            got = read_config_file(path)
        except ConfigError as exc:
            if os.path.isfile(bak) and os.path.getsize(bak) > 0:
                items.append(Item(REFUSE, f"{name} cannot be read and neither can {name}.bak ({exc.reason}): "
                                          f"the broker's config load fails and it does not start",
                                  "ConfigManager.loadBak", src, exc.path or path, exc.offset))
            else:
                items.append(Item(CHANGE, f"{name} cannot be read ({exc.reason}) and there is no {name}.bak: the "
                                          f"broker starts with empty tables for it",
                                  "ConfigManager.load", src, path, exc.offset))
            continue
        except (RmqFormatError, OSError) as exc:
            items.append(Item(CHANGE, f"{name}: {exc}", "ConfigManager.load", src, path))
            continue
        if got.source == "bak":
            items.append(Item(CHANGE, f"{name} is empty or does not parse: the broker reads {name}.bak instead "
                                      f"(and writes {name} from it on its next persist)",
                              "ConfigManager.loadBak", src, path, 0))
        elif got.model is None:
            items.append(Item(CHANGE, f"{name} is empty and there is no usable {name}.bak: the broker starts with "
                                      f"empty tables for it", "ConfigManager.load", src, path, 0))


def _mapped_files(what: str, files: list[tuple[str, int, int]], size: int | None, rel, tag: str,
                  items: list[Item], size_source: str | None = None) -> None:
    src = f"{tag}:{MAPPED_FILE_QUEUE}"
    method = "MappedFileQueue.doLoad" if rel >= (4, 9, 2) else "MappedFileQueue.load"
    for i, (path, _start, length) in enumerate(files):
        if length == 0 and i == len(files) - 1:
            if rel >= (5, 1, 3):
                items.append(Item(CHANGE, f"the last {what} file is empty (0 bytes): the broker deletes it on load",
                                  method, f"rocketmq-all-5.1.3:{MAPPED_FILE_QUEUE}" if rel < NEWEST_READ else src,
                                  path, 0))
            else:
                items.append(Item(REFUSE, f"the last {what} file is empty (0 bytes), not the configured {size} bytes: "
                                          f"the file queue does not load and the broker does not start",
                                  method, src, path, 0))
            continue
        if size is not None and length != size:
            whence = f" ({size_source})" if size_source else ""
            items.append(Item(REFUSE, f"{what} file of {length} bytes, not the configured {size}{whence}: the file "
                                      f"queue does not load and the broker does not start", method, src, path, 0))


def _gaps(segs: list[tuple[str, int, int]], size: int | None, tag: str, items: list[Item]) -> None:
    for (p0, s0, _l0), (p1, s1, _l1) in zip(segs, segs[1:]):
        step = size or (s1 - s0)
        if 0 <= s1 - s0 < step or (s1 - s0 != step and not any(range(s0 + step, s1, step))):
            # The names are not a step apart and no name would fit between: the later file's name is off.
            items.append(Item(CHANGE, f"commit-log segment {os.path.basename(p1)} is named {s1 - s0:,} bytes after "
                                      f"{os.path.basename(p0)}, not the step of {step:,}: the broker only logs "
                                      f"'[BUG]' and starts, and reads that file's records at offsets from its name, "
                                      f"where consume-queue units and index entries do not point",
                              "MappedFileQueue.checkSelf", f"{tag}:{MAPPED_FILE_QUEUE}", p1, 0))
        elif s1 - s0 != step:
            missing = [f"{o:020d}" for o in range(s0 + step, s1, step)] if step > 0 else []
            items.append(Item(CHANGE, f"commit-log segment(s) {', '.join(missing[:3]) or '?'}"
                                      f"{' …' if len(missing) > 3 else ''} missing between "
                                      f"{os.path.basename(p0)} and {os.path.basename(p1)}: the broker only logs "
                                      f"'[BUG]' and starts; the messages there cannot be read, and consume-queue "
                                      f"units pointing there return nothing",
                              "MappedFileQueue.checkSelf", f"{tag}:{MAPPED_FILE_QUEUE}",
                              os.path.join(os.path.dirname(p0), missing[0]) if missing else p1, s0 + step))


def _empty_last_file(files: list[tuple[str, int, int]], size: int | None, rel, tag: str,
                     items: list[Item]) -> None:
    """The last consume-queue file of full size whose first unit is zero (read position 0)."""
    if not files:
        return
    live = [f for f in files if f[2] > 0] if rel >= (5, 1, 3) else files
    if not live:
        return
    path, start, length = live[-1]
    if length == 0 or (size is not None and length != size):
        return  # refused or deleted on load, reported there
    with open(path, "rb") as f:
        first = f.read(20)
    # ConsumeQueue.recover: a unit is valid while offset >= 0 and size > 0.
    offset = int.from_bytes(first[:8], "big", signed=True) if len(first) == 20 else -1
    usize = int.from_bytes(first[8:12], "big", signed=True) if len(first) == 20 else 0
    if offset >= 0 and usize > 0:
        return
    if start == 0:
        return  # minLogicOffset 0 is not below the queue's max offset 0: correctMinOffset returns first
    if rel >= (5, 0, 0):
        items.append(Item(REFUSE, f"the last consume-queue file holds no unit (its read position is 0): "
                                  f"correctMinOffset reads the unit before position 0 (selectMappedBuffer(-20, 20)), "
                                  f"ByteBuffer.position(-20) throws IllegalArgumentException, DefaultMessageStore.load "
                                  f"fails (DefaultMessageStore.recover → recoverTopicQueueTable → "
                                  f"ConsumeQueueStore.recoverOffsetTable) and the broker does not start "
                                  f"(apache/rocketmq #9728); deleting this file "
                                  f"(or rebuild) lets it start",
                          "ConsumeQueue.correctMinOffset", f"{tag}:{CONSUME_QUEUE}", path, 0))
    else:
        items.append(Item(NOTE, "the last consume-queue file holds no unit; this release's correctMinOffset reads "
                                "the first file from position 0 and starts",
                          "ConsumeQueue.correctMinOffset", f"{tag}:{CONSUME_QUEUE}", path, 0))


def _abnormal_index(store, plan, tag: str, items: list[Item]) -> None:
    """``IndexService.load(lastExitOK=false)`` deletes every index file whose end time is after the
    checkpoint's ``indexMsgTimestamp``; the re-dispatch rebuilds only the keys of the messages from the
    abnormal recovery's start segment on."""
    from ..index import IndexFile
    folder = store.path("index")
    if not os.path.isdir(folder):
        return
    mark = plan.checkpoint.index_msg_timestamp
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        try:
            header = IndexFile(path).header
        except (RmqFormatError, OSError):
            continue
        if header.end_timestamp <= mark:
            continue
        lost = ""
        if header.begin_phy_offset < plan.abnormal_start:
            lost = (f"; the keys of messages from commit-log offset {header.begin_phy_offset} to "
                    f"{plan.abnormal_start} are not indexed again (the dispatch starts at {plan.abnormal_start}), so "
                    f"key queries miss them")
        items.append(Item(CHANGE, f"index file {name} ends at {header.end_timestamp}, after the checkpoint's "
                                  f"indexMsgTimestamp {mark}: abnormal recovery deletes it{lost}",
                          "IndexService.load", f"{tag}:{_STORE}index/IndexService.java", path, 0))


def _recovery(store, rel, tag: str, index_safe: bool, result: Preflight):
    from ..recovery import Kind, Severity, cross_check
    items = result.items
    cross = cross_check(store, index=True, timer=True, index_safe=index_safe, max_findings=200)
    plan = cross.recovery
    end = plan.data_end
    result.data_end = end.offset if end is not None else None
    cl_src = f"{tag}:{COMMIT_LOG}"
    if result.recovery == "abnormal":
        items.append(Item(CHANGE, f"there is an abort file: abnormal recovery starts at segment "
                                  f"{os.path.basename(plan.abnormal_segment or '?')} (the newest whose first message "
                                  f"was stored at or before the checkpoint's minTimestamp) and dispatches its "
                                  f"{plan.abnormal_dispatch} message(s) from there again",
                          "CommitLog.recoverAbnormally", cl_src, plan.abnormal_segment, plan.abnormal_start))
    cp = plan.checkpoint
    if result.recovery == "abnormal" and plan.checkpoint is not None:
        _abnormal_index(store, plan, tag, items)
    if end is not None and not end.reason.is_clean:
        confirm = ""
        if cp is not None and cp.confirm_phy_offset:
            confirm = (f"; the checkpoint's confirmPhyOffset is {cp.confirm_phy_offset}, "
                       f"{end.offset - cp.confirm_phy_offset:+d} bytes from the data end")
        recover = "CommitLog.recoverAbnormally" if result.recovery == "abnormal" else "CommitLog.recoverNormally"
        items.append(Item(CHANGE, f"the data ends at commit-log offset {end.offset} ({end.reason.value}"
                                  f"{': ' + end.detail if end.detail else ''}): recovery truncates the commit log "
                                  f"there (the bytes after it are overwritten by new messages) and deletes later "
                                  f"segment files{confirm}",
                          f"{recover} → MappedFileQueue.truncateDirtyFiles",
                          f"{tag}:{COMMIT_LOG}", end.segment, end.file_offset))
    if end is not None and not end.reason.is_clean:
        _past_end(store, end, rel, tag, result)
    if plan.truncated_units:
        items.append(Item(CHANGE, f"{plan.truncated_units} consume-queue unit(s) point at or past the data end "
                                  f"{result.data_end}: recovery removes them",
                          "DefaultMessageStore.truncateDirtyLogicFiles", f"{tag}:{MESSAGE_STORE}"))
    if plan.restart_dispatch and result.recovery == "normal":
        method = "CommitLog.recoverNormally" if rel >= (5, 0, 0) else "DefaultMessageStore.start"
        items.append(Item(CHANGE, f"{plan.restart_dispatch} message(s) at or after the end of every consume queue "
                                  f"(maxPhyOffsetOfConsumeQueue {plan.max_queue_end}) are dispatched again, the first "
                                  f"at commit-log offset {plan.restart_first}",
                          method, cl_src if rel >= (5, 0, 0) else f"{tag}:{MESSAGE_STORE}",
                          None, plan.restart_first))
    if cp is not None and result.data_end is not None and cp.confirm_phy_offset > result.data_end:
        items.append(Item(CHANGE, f"the checkpoint's confirmPhyOffset {cp.confirm_phy_offset} is past the data end "
                                  f"{result.data_end}: recovery lowers the confirm offset to the data end (in "
                                  f"controller mode; otherwise it is set to the last valid message)",
                          "CommitLog.recoverNormally", cl_src, store.path("checkpoint"), 32))
    by_kind: dict = {}
    for f in cross.findings:
        if f.severity is Severity.PROBLEM:
            by_kind.setdefault(f.kind, []).append(f)
    for kind, found in by_kind.items():
        if kind is Kind.UNIT_PAST_END:
            continue  # the truncation above
        n = cross.counts.get(kind, len(found))
        first = found[0]
        where = first.other if first.other is not None else first.commitlog
        text = f"{n} × {kind.value}: {first.text}"
        path, offset = getattr(where, "path", None), getattr(where, "offset", None)
        if kind in (Kind.MISSING_UNIT, Kind.QUEUE_BEHIND):
            text += (" (the dispatch starts at the end of the consume queues and never goes back: these messages "
                     "stay without a unit; rmqformats rebuild writes them)")
            items.append(Item(CHANGE, text, "ReputMessageService.doReput", f"{tag}:{MESSAGE_STORE}", path, offset))
            continue
        if kind is Kind.QUEUE_AHEAD and end is not None and not end.reason.is_clean:
            continue  # units past the data end: the truncation above says what recovery does with them
        if kind is Kind.TIMER_PAST_END:
            text += (" (timer-log units point past the data end: the timer store finds no message there when they "
                     "fall due, apache/rocketmq #10668)")
        result.findings.append(Item(FINDING, text, kind.value, "rmqformats check", path, offset))
    return plan


def _past_end(store, end, rel, tag: str, result: Preflight) -> None:
    """The intact messages past a data end at damage: recovery's truncation destroys them."""
    from ..recovery.salvage import intact_past
    past = intact_past(store.commitlog, end.offset)
    result.past_end = past
    if not past.messages:
        return
    result.keep = keep_command(store.root or "STORE", end.offset)
    ranges = len(past.damaged)
    recover = "CommitLog.recoverAbnormally" if result.recovery == "abnormal" else "CommitLog.recoverNormally"
    result.items.append(Item(CHANGE, f"{past.describe()}, after {ranges} damaged range(s): the truncation at the data "
                                     f"end destroys them (new messages overwrite them, later segment files are "
                                     f"deleted); {result.keep}",
                             f"{recover} → MappedFileQueue.truncateDirtyFiles", f"{tag}:{COMMIT_LOG}",
                             end.segment, end.file_offset))
