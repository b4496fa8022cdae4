"""From the paths given to ``load()`` to the stores and the files of each that a read covers.

A path may be a store root (the folder holding ``commitlog/``,
``consumequeue/``, ``index/``), a folder or file inside one (``commitlog/``,
a segment, ``consumequeue/TopicTest/0``, ...), a bare folder of commit-log
segments or a single segment, a folder holding several stores (with
``recursiveFileLookup``; symbolic links to folders are followed), a glob
(Hadoop's syntax: ``*``, ``?``, ``[ab]``, ``[^ab]``, ``{a,b}``) or a ``file:`` URI. Each path is resolved on the driver
to absolute local paths, so executors (which read the same paths through a
shared or mounted file system) never depend on the driver's working folder.

``pathGlobFilter`` keeps the data files whose *name* matches, and
``modifiedBefore``/``modifiedAfter`` those modified strictly before or after a
time, as in Spark's file sources; the files left out are treated as absent
(a commit log of the segments kept, a queue of the files kept).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from rmqformats.queuefiles import QUEUE_FILE_NAME, list_queue_dirs

from .options import ReadOptions

#: What a source reads: commit-log segments, consume-queue files or index files.
COMMITLOG, QUEUES, INDEX = "commitlog", "queues", "index"
#: Folders whose presence makes a folder a store root.
_STORE_PARTS = ("commitlog", "consumequeue", "batchconsumequeue", "index")
#: Queue folders of a store and the queue type each holds (the names ``rmqformats lag`` uses).
QUEUE_PARENTS = {"consumequeue": "SimpleCQ", "batchconsumequeue": "BatchCQ"}
#: The folders of a store root that hold each kind of file.
_KIND_FOLDERS = {COMMITLOG: ("commitlog",), QUEUES: tuple(QUEUE_PARENTS), INDEX: ("index",)}
#: How far up from a given path a store root is looked for (a queue file is four levels down).
_MAX_UP = 4


class PathError(ValueError):
    """A path that does not exist, cannot be read by these sources, or holds nothing to read."""


@dataclass(frozen=True)
class DataFile:
    """One file a read covers."""

    path: str
    size: int
    mtime: float
    #: For queue files: the queue type (``SimpleCQ``/``BatchCQ``), topic and queue id.
    queue_type: str | None = None
    topic: str | None = None
    queue_id: int | None = None


@dataclass(frozen=True)
class StoreFiles:
    """A store and the files of it that a read covers.

    ``store`` is what the ``store`` column holds: the store root, or for a
    bare folder of segments (or a segment) outside any root, that folder.
    """

    store: str
    root: str | None
    files: tuple[DataFile, ...]


# -- globs (Hadoop's syntax) --------------------------------------------------------------------


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` -> ``abd``, ``acd`` (nested braces too; ``\\{`` is a literal brace)."""
    depth, start = 0, -1
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                inner, parts, level, last = pattern[start + 1:i], [], 0, 0
                for j, ch in enumerate(inner):
                    if ch == "{":
                        level += 1
                    elif ch == "}":
                        level -= 1
                    elif ch == "," and level == 0 and (j == 0 or inner[j - 1] != "\\"):
                        parts.append(inner[last:j])
                        last = j + 1
                parts.append(inner[last:])
                head, tail = pattern[:start], pattern[i + 1:]
                return [x for p in parts for x in _expand_braces(head + p + tail)]
        i += 1
    return [pattern]


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regular expression for one path component matched by a Hadoop glob (``pathGlobFilter``)."""
    alternatives = []
    for p in _expand_braces(pattern):
        out, i = [], 0
        while i < len(p):
            c = p[i]
            if c == "\\" and i + 1 < len(p):
                out.append(re.escape(p[i + 1]))
                i += 2
                continue
            if c == "*":
                out.append("[^/]*")
            elif c == "?":
                out.append("[^/]")
            elif c == "[":
                j = p.find("]", i + 2)
                if j < 0:
                    out.append(re.escape(c))
                else:
                    body = p[i + 1:j]
                    if body[:1] in ("^", "!"):
                        body = "^" + body[1:]
                    out.append("[" + body.replace("\\", "\\\\") + "]")
                    i = j
            else:
                out.append(re.escape(c))
            i += 1
        alternatives.append("".join(out))
    return re.compile("(?:" + "|".join(alternatives) + r")\Z")


def _is_glob(path: str) -> bool:
    return any(c in path for c in "*?[{")


def _expand_glob(pattern: str) -> list[str]:
    found: list[str] = []
    for p in _expand_braces(pattern):
        found += glob.glob(re.sub(r"\[\^", "[!", p))
    return sorted(set(found))


def local_path(path: str) -> str:
    """The local path of ``path``: ``file:`` URIs decoded, other schemes refused, made absolute."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path) and not re.match(r"^[A-Za-z]:[\\/]", path):
        uri = urlparse(path)
        if uri.scheme.lower() != "file":
            raise PathError(f"{path}: the rocketmq sources read local or mounted paths (file:), not {uri.scheme}: "
                            "mount the store at the same path on the driver and every executor")
        if uri.netloc not in ("", "localhost"):
            raise PathError(f"{path}: a file: URI names a host ({uri.netloc}); only local paths can be read")
        path = unquote(uri.path)
    return os.path.abspath(os.path.expanduser(path))


def expand(path: str) -> list[str]:
    """The existing local paths ``path`` stands for: itself, or a glob's matches."""
    local = local_path(path)
    if os.path.exists(local):
        return [local]
    if _is_glob(local):
        found = _expand_glob(local)
        if found:
            return found
    raise PathError(f"path does not exist: {path}")


# -- stores and their files ---------------------------------------------------------------------


def is_store_root(folder: str) -> bool:
    """A folder holding at least one of ``commitlog/``, ``consumequeue/``, ``batchconsumequeue/``, ``index/``."""
    return any(os.path.isdir(os.path.join(folder, part)) for part in _STORE_PARTS)


def find_root(path: str) -> str | None:
    """The store root that is ``path`` or holds it (looked for a few levels up), else ``None``."""
    here = path if os.path.isdir(path) else os.path.dirname(path)
    for _ in range(_MAX_UP + 1):
        if is_store_root(here):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return None


def _file(path: str, **extra) -> DataFile:
    st = os.stat(path)
    return DataFile(path, st.st_size, st.st_mtime, **extra)


def _is_segment_folder(folder: str) -> bool:
    try:
        return any(QUEUE_FILE_NAME.match(n) for n in os.listdir(folder))
    except OSError:
        return False


def store_files(root: str, kind: str) -> list[DataFile]:
    """Every data file of ``kind`` in the store at ``root``."""
    if kind == COMMITLOG:
        folder = os.path.join(root, "commitlog")
        names = sorted(n for n in os.listdir(folder) if QUEUE_FILE_NAME.match(n)) if os.path.isdir(folder) else []
        return [_file(os.path.join(folder, n)) for n in names if os.path.isfile(os.path.join(folder, n))]
    if kind == QUEUES:
        out = []
        for parent, queue_type in QUEUE_PARENTS.items():
            for topic, qid, folder in list_queue_dirs(os.path.join(root, parent)):
                for name in sorted(os.listdir(folder)):
                    full = os.path.join(folder, name)
                    if QUEUE_FILE_NAME.match(name) and os.path.isfile(full):
                        out.append(_file(full, queue_type=queue_type, topic=topic, queue_id=qid))
        return out
    folder = os.path.join(root, "index")
    # Every regular file of index/, in name order, as the broker loads them.
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    return [_file(os.path.join(folder, n)) for n in names if os.path.isfile(os.path.join(folder, n))]


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _stores_below(folder: str) -> list[str]:
    """Store roots under ``folder`` (itself included); a store's own folders are not searched.

    Symbolic links to folders are followed, as Spark's file sources follow
    them; a folder reached again (a link back up the tree) is not searched twice.
    """
    roots = []
    seen: set[str] = set()
    for here, dirs, _files in os.walk(folder, followlinks=True):
        real = os.path.realpath(here)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        if is_store_root(here):
            roots.append(here)
            dirs[:] = []
        else:
            dirs.sort()
    return roots


def _selection(path: str, kind: str, recursive: bool) -> list[tuple[str, str | None, list[DataFile]]]:
    """``(store, root, files)`` for one existing local path."""
    root = find_root(path)
    if root is not None:
        folders = [os.path.join(root, part) for part in _KIND_FOLDERS[kind]]
        if path != root and not any(_under(path, folder) for folder in folders):
            raise PathError(f"{path} is in the store {root} but outside {' and '.join(_KIND_FOLDERS[kind])}/: "
                            f"it holds no {kind} files")
        files = [f for f in store_files(root, kind) if _under(f.path, path)]
        if not files and os.path.isfile(path) and kind == COMMITLOG and _under(path, os.path.join(root, "commitlog")):
            files = [_file(path)]  # a segment whose name is not 20 digits, as open_store reads one
        return [(root, root, files)]
    if kind == COMMITLOG:
        if os.path.isfile(path):
            return [(os.path.dirname(path), None, [_file(path)])]
        if _is_segment_folder(path):
            names = sorted(n for n in os.listdir(path) if QUEUE_FILE_NAME.match(n))
            return [(path, None, [_file(os.path.join(path, n)) for n in names
                                  if os.path.isfile(os.path.join(path, n))])]
    if recursive and os.path.isdir(path):
        return [(r, r, store_files(r, kind)) for r in _stores_below(path)]
    if os.path.isdir(path) and _stores_below(path):
        raise PathError(f"{path} is a folder holding stores, not a store: set recursiveFileLookup=true to read "
                        "every store under it")
    what = {COMMITLOG: "a store root, a commitlog/ folder or a segment",
            QUEUES: "a store root or a consume-queue folder or file in one",
            INDEX: "a store root or its index/ folder or an index file"}[kind]
    raise PathError(f"{path} is not {what} (a store root holds commitlog/, consumequeue/ or index/)")


def _keep(f: DataFile, options: ReadOptions, name_filter: re.Pattern[str] | None) -> bool:
    if name_filter is not None and not name_filter.match(os.path.basename(f.path)):
        return False
    if options.modified_before is not None and not f.mtime < options.modified_before:
        return False
    if options.modified_after is not None and not f.mtime > options.modified_after:
        return False
    return True


def resolve(options: ReadOptions, kind: str) -> list[StoreFiles]:
    """The stores the paths of ``options`` cover and the files of each to read, after the filters.

    Raises :class:`PathError` for a missing path or one that holds no store
    (naming it). A file reached through several paths is read once.
    """
    if not options.paths:
        raise PathError(f"{options.source}: give the store path(s) to load()")
    name_filter = glob_regex(options.path_glob_filter) if options.path_glob_filter else None
    by_store: dict[str, tuple[str | None, dict[str, DataFile]]] = {}
    for given in options.paths:
        for path in expand(given):
            for store, root, files in _selection(os.path.normpath(path), kind, options.recursive):
                entry = by_store.setdefault(store, (root, {}))
                for f in files:
                    if _keep(f, options, name_filter):
                        entry[1].setdefault(os.path.realpath(f.path), f)
    return [StoreFiles(store, root, tuple(sorted(files.values(), key=lambda f: f.path)))
            for store, (root, files) in sorted(by_store.items())]
