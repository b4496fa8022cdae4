"""The file sizes a rebuilt store is written with, and where each was found.

The broker sizes its mapped files from its store config (``MessageStoreConfig``):
``mappedFileSizeConsumeQueue`` (rounded up to whole 20-byte units by
``getMappedFileSizeConsumeQueue``), ``mapperFileSizeBatchConsumeQueue``,
``maxHashSlotNum`` and ``maxIndexNum`` (an index file is
``40 + 4 * maxHashSlotNum + 20 * maxIndexNum`` bytes). The config is not
kept in the store, so each size is taken, in this order, from:

1. a config file given with ``config=``: a broker ``.properties`` file
   (``key=value`` lines) or a JSON object with those keys at its top level
   or under ``fullMessageStoreConfig``;
2. the store's existing files of that kind (the size of the newest file of
   any queue, the counts the index reader infers from an index file's size);
   for the commit log, the step between segment names, or the length of the
   only segment file when it is whole (see :func:`commitlog_segment_size`);
3. the broker's defaults.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ..batch_consumequeue import UNIT_SIZE as BCQ_UNIT_SIZE
from ..consumequeue import UNIT_DTYPE as CQ_UNIT_DTYPE
from ..errors import RmqFormatError, display_path, place
from ..index import DEFAULT_NUM_HASH_SLOTS, DEFAULT_NUM_INDEX, infer_counts
from ..queuefiles import list_queue_dirs, queue_files

CQ_UNIT_SIZE = CQ_UNIT_DTYPE.itemsize
#: ``MessageStoreConfig`` defaults: 300,000 units per queue file.
DEFAULT_CQ_FILE = 300_000 * CQ_UNIT_SIZE
DEFAULT_BCQ_FILE = 300_000 * BCQ_UNIT_SIZE

_KEYS = {"cl_file": "mappedFileSizeCommitLog", "cq_file": "mappedFileSizeConsumeQueue",
         "bcq_file": "mapperFileSizeBatchConsumeQueue", "num_hash_slots": "maxHashSlotNum", "num_index": "maxIndexNum"}
#: ``MessageStoreConfig.mappedFileSizeCommitLog`` default: 1 GiB.
DEFAULT_CL_FILE = 1 << 30


class ConfigFileError(RmqFormatError):
    """A store config file that cannot be read or holds a value that is not a positive integer."""


@dataclass(frozen=True)
class StoreSizes:
    """The sizes to write, and for each where it came from (``config FILE``, ``existing FILE``, ``default``)."""

    cl_file: int
    cq_file: int
    bcq_file: int
    num_hash_slots: int
    num_index: int
    sources: dict

    def describe(self) -> list[str]:
        return [f"{_KEYS[k]}={getattr(self, k)} ({self.sources[k]})" for k in _KEYS]


#: Every size key read from a config file (the commit log's too, for ``preflight``).
CONFIG_KEYS = tuple(_KEYS.values())


def read_config_values(path: str) -> dict[str, int]:
    """The size keys (:data:`CONFIG_KEYS`) of a broker ``.properties`` file or a JSON store config."""
    path = os.path.abspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ConfigFileError(path, None, exc.strerror or str(exc)) from None
    raw: dict = {}
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigFileError(path, None, f"not valid JSON: {exc}") from None
        raw = dict(data.get("fullMessageStoreConfig") or {})
        raw.update({k: v for k, v in data.items() if k in CONFIG_KEYS})
    else:  # java.util.Properties: key=value or key: value, # and ! comments
        for line in text.splitlines():
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            for sep in ("=", ":"):
                if sep in line:
                    k, v = line.split(sep, 1)
                    raw[k.strip()] = v.strip()
                    break
    out = {}
    for key in CONFIG_KEYS:
        if key in raw:
            try:
                value = int(raw[key])
            except (TypeError, ValueError):
                value = 0
            if value <= 0:
                raise ConfigFileError(path, None, f"{key} is {raw[key]!r}, not a positive integer")
            out[key] = value
    return out


def _queue_file_size(parent: str) -> tuple[int, str] | None:
    for _topic, _qid, folder in list_queue_dirs(parent) if os.path.isdir(parent) else []:
        files = [f for f in queue_files(folder) if f.size > 0]
        if files:
            return files[-1].size, files[-1].path
    return None


def store_sizes(root: str, *, config: str | None = None) -> StoreSizes:
    """The sizes for the store at ``root`` (see the module docstring)."""
    given = read_config_values(config) if config else {}
    where = os.path.abspath(config) if config else ""
    values: dict[str, int] = {}
    sources: dict[str, str] = {}
    for attr, key in _KEYS.items():
        if key in given:
            values[attr], sources[attr] = given[key], f"config {where}"
    if "cl_file" not in values:
        values["cl_file"], sources["cl_file"] = commitlog_segment_size(os.path.join(root, "commitlog"))
    if "cq_file" not in values:
        found = _queue_file_size(os.path.join(root, "consumequeue"))
        values["cq_file"], sources["cq_file"] = (found[0], f"existing {found[1]}") if found else \
            (DEFAULT_CQ_FILE, "default")
    if "bcq_file" not in values:
        found = _queue_file_size(os.path.join(root, "batchconsumequeue"))
        values["bcq_file"], sources["bcq_file"] = (found[0], f"existing {found[1]}") if found else \
            (DEFAULT_BCQ_FILE, "default")
    if "num_hash_slots" not in values or "num_index" not in values:
        index_dir = os.path.join(root, "index")
        names = sorted(os.listdir(index_dir)) if os.path.isdir(index_dir) else []
        inferred: tuple[int, int, str] | None = None
        for name in names:
            path = os.path.join(index_dir, name)
            if os.path.isfile(path):
                try:
                    slots, entries = infer_counts(os.path.getsize(path), values.get("num_hash_slots"),
                                                  values.get("num_index"), path)
                    inferred = (slots, entries, path)
                    break
                except RmqFormatError:
                    continue
        for attr, i, default in (("num_hash_slots", 0, DEFAULT_NUM_HASH_SLOTS), ("num_index", 1, DEFAULT_NUM_INDEX)):
            if attr not in values:
                if inferred is not None:
                    values[attr], sources[attr] = int(inferred[i]), f"existing {inferred[2]}"
                else:
                    values[attr], sources[attr] = default, "default"
    # ``getMappedFileSizeConsumeQueue``: whole units.
    values["cq_file"] = -(-values["cq_file"] // CQ_UNIT_SIZE) * CQ_UNIT_SIZE
    return StoreSizes(sources=sources, **values)


def commitlog_segment_size(folder: str) -> tuple[int, str]:
    """The ``mappedFileSizeCommitLog`` the segment files in ``folder`` show, and where it was found.

    The step between consecutive segment names (the offsets they start at, which a file's length cannot
    change); with one segment file, its length when the file is whole, else the default (1 GiB). A segment
    the broker wrote is allocated at the configured size and filled from its start, and ``CommitLog``'s
    ``doAppend`` leaves at least ``END_FILE_MIN_BLANK_LENGTH`` (8) bytes after a message, where the BLANK
    record goes: its data ends at zero fill or a BLANK record, never in a record or at a record reaching the
    file's end. A file whose walk ends there (``record cut off by the end of the file``, ``end of the last
    segment file``) was cut, and its length says nothing of the size. A cut inside the zero fill cannot be
    told from a smaller configured size: ``--config`` names it then."""
    from collections import Counter
    if not os.path.isdir(folder):
        return DEFAULT_CL_FILE, "default"
    starts = sorted(int(n) for n in os.listdir(folder) if n.isdigit() and len(n) == 20)
    steps = Counter(b - a for a, b in zip(starts, starts[1:]) if b > a)
    if steps:
        step = min(s for s, n in steps.items() if n == max(steps.values()))
        return step, f"the step between segment names in {folder}"
    if not starts:
        return DEFAULT_CL_FILE, "default"
    path = os.path.join(folder, f"{starts[0]:020d}")
    length = os.path.getsize(path)
    if not length:
        return DEFAULT_CL_FILE, f"default: the only segment file {path} is empty"
    cut = _cut_reason(folder)
    if cut:
        return DEFAULT_CL_FILE, (f"default: the only segment file {path} is cut ({cut}), its length {length} "
                                 f"is no mapped file size")
    return length, f"existing {path}"


def _cut_reason(folder: str) -> str | None:
    """Why the data of a commit log of one segment shows its file cut (see :func:`commitlog_segment_size`),
    or ``None``: the walk's end."""
    from ..commitlog import CommitLog
    from ..segments import EndReason
    walk = CommitLog(folder).batches(columns=["commitLogOffset"], decompress=False)
    for _ in walk:
        pass
    end = walk.end
    if end is not None and end.reason in (EndReason.TRUNCATED, EndReason.END_OF_FILE):
        return f"the data ends at {place(display_path(end.segment), end.file_offset)}: {end.reason.value}"
    return None
