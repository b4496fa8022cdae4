"""Which kind of store file a path is, from its place in the store, its name and its first bytes.

A broker store names its files by what they hold: 20-digit offsets under
``commitlog/``, ``consumequeue/<topic>/<queueId>/``,
``batchconsumequeue/…``, ``consumequeue_ext/…`` and ``timerlog/``;
17-digit creation times under ``index/``; ``checkpoint``, ``timerwheel``,
``config/timercheck`` and JSON files by name. A file moved out of its
store is recognised by its content where the content allows (a commit-log
record's magic code, JSON text, the size of an index file).

:data:`KINDS` is a registry: each :class:`FileKind` has a test returning a
score (0: not this kind); the highest score wins. Readers of new file
kinds add theirs with :func:`register`.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

from .errors import RmqFormatError, with_article
from .generated.layouts import rocketmq_commitlog as _commitlog_layout

#: Bytes of a file read to recognise it.
HEAD_SIZE = 64

_OFFSET_NAME = re.compile(r"^\d{20}$")
_INDEX_NAME = re.compile(r"^\d{17}$")
#: Commit-log record magic codes (V1, V2) and the BLANK magic, at byte 4 of a record.
_RECORD_MAGICS = tuple(_commitlog_layout.MAGIC_CODE[k] for k in ("message_v1", "message_v2", "blank"))
_RECORD_HEAD = struct.Struct(_commitlog_layout.RECORD_RUNS[0][1])


class UnknownFileKindError(RmqFormatError):
    """A file that is none of the store file kinds this package reads."""


@dataclass(frozen=True)
class FileFacts:
    """What detection looks at: the path, its last folders, the name, the size and the first bytes."""

    path: str
    name: str
    parents: tuple[str, ...]  # nearest first: (parent, grandparent, great-grandparent)
    size: int
    head: bytes

    def under(self, folder: str, depth: int) -> bool:
        """The file is ``depth`` folders below a folder named ``folder``."""
        return len(self.parents) >= depth and self.parents[depth - 1] == folder


@dataclass(frozen=True)
class FileKind:
    """A kind of store file: its name, a description and a test giving a score (0: not this kind)."""

    name: str
    description: str
    score: Callable[[FileFacts], int]

    @property
    def with_article(self) -> str:
        """The description after "a" or "an" ("an index file", "a timer wheel"), for messages."""
        return with_article(self.description)


def facts(path: str | os.PathLike[str]) -> FileFacts:
    """The facts of the file at ``path`` (raises :class:`UnknownFileKindError` for a folder or missing file)."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise UnknownFileKindError(path, None, "not a regular file" if os.path.exists(path) else
                                   "no such file")
    with open(path, "rb") as f:
        head = f.read(HEAD_SIZE)
    parts = path.split(os.sep)
    return FileFacts(path, parts[-1], tuple(reversed(parts[-4:-1])), os.path.getsize(path), head)


def _is_json(f: FileFacts) -> bool:
    text = f.head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text[:1] in (b"{", b"[")


def _record_magic(f: FileFacts) -> bool:
    return len(f.head) >= 8 and _RECORD_HEAD.unpack_from(f.head, 0)[1] in _RECORD_MAGICS


def _commitlog(f: FileFacts) -> int:
    if not _OFFSET_NAME.match(f.name):
        # Any name (a piece written by ``rmqformats cut``, a copy): a first record's magic code.
        return 3 if _record_magic(f) else 0
    if f.under("commitlog", 1):
        return 10
    return 5 if _record_magic(f) else 0


def _queue_under(folder: str, unit: int, fallback: int = 0) -> Callable[[FileFacts], int]:
    def score(f: FileFacts) -> int:
        if not _OFFSET_NAME.match(f.name):
            return 0
        if f.under(folder, 3) and f.parents[0].isdigit():
            return 10
        return fallback if fallback and f.size % unit == 0 and not _record_magic(f) else 0
    return score


def _index(f: FileFacts) -> int:
    if not _INDEX_NAME.match(f.name):
        return 0
    if f.under("index", 1):
        return 10
    return 5 if f.size > 40 and (f.size - 40) % 4 == 0 else 0


def _named(name: str, folder: str | None = None, json: bool | None = None) -> Callable[[FileFacts], int]:
    def score(f: FileFacts) -> int:
        if f.name != name or (json is not None and _is_json(f) != json):
            return 0
        return 10 if folder is None or f.under(folder, 1) else 8
    return score


def _timerlog(f: FileFacts) -> int:
    return 10 if _OFFSET_NAME.match(f.name) and f.under("timerlog", 1) else 0


def _config_json(f: FileFacts) -> int:
    if not _is_json(f) and not (f.size == 0 and f.under("config", 1)):
        return 0
    return 9 if f.name.endswith((".json", ".json.bak")) or f.under("config", 1) else 6


def _marker(f: FileFacts) -> int:
    return 10 if f.name in ("lock", "abort", "abort.bak") else 0


#: The registry, in no particular order: the highest score wins.
KINDS: list[FileKind] = [
    FileKind("commitlog", "commit-log segment", _commitlog),
    FileKind("consumequeue", "consume-queue file", _queue_under("consumequeue", 20, 1)),
    FileKind("batchconsumequeue", "batch consume-queue file", _queue_under("batchconsumequeue", 46)),
    FileKind("consumequeue_ext", "consume-queue extension file", _queue_under("consumequeue_ext", 1)),
    FileKind("index", "index file", _index),
    FileKind("checkpoint", "store checkpoint", _named("checkpoint", json=False)),
    FileKind("timerlog", "timer-log segment", _timerlog),
    FileKind("timerwheel", "timer wheel", _named("timerwheel")),
    FileKind("timercheck", "timer checkpoint", _named("timercheck", "config", json=False)),
    FileKind("config", "config JSON file", _config_json),
    FileKind("marker", "lock or abort file", _marker),
]


def register(kind: FileKind) -> None:
    """Add a file kind (or replace the one of the same name)."""
    KINDS[:] = [k for k in KINDS if k.name != kind.name] + [kind]


def best_kind(path: str | os.PathLike[str]) -> tuple[FileKind | None, int]:
    """The likeliest kind of the file at ``path`` and its score (``None`` and 0 when no kind matches)."""
    f = facts(path)
    best, best_score = None, 0
    for kind in KINDS:
        s = kind.score(f)
        if s > best_score:
            best, best_score = kind, s
    return best, best_score


def detect(path: str | os.PathLike[str]) -> FileKind:
    """The kind of the file at ``path``; raises :class:`UnknownFileKindError` when no kind matches."""
    f = facts(path)
    best, _ = best_kind(path)
    if best is None:
        raise UnknownFileKindError(f.path, None, "not a store file this package reads (kinds: "
                                   + ", ".join(k.name for k in KINDS) + ")")
    return best
