"""Opening a broker store: a store root, a ``commitlog/`` folder or one segment file."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .commitlog import SEGMENT_NAME, CommitLog
from .errors import StoreNotFoundError


@dataclass(frozen=True)
class Store:
    """A broker store as found on disk.

    ``root`` is the store root (``storePathRootDir``) when the path given
    was one, else ``None``; ``commitlog`` reads its commit log.
    """

    root: str | None
    commitlog: CommitLog

    @property
    def has_abort_file(self) -> bool:
        """An ``abort`` file in the root: the broker did not shut down cleanly."""
        return self.root is not None and os.path.exists(os.path.join(self.root, "abort"))


def open_store(path: str | os.PathLike[str]) -> Store:
    """Open a store root, a ``commitlog/`` folder, or a single commit-log segment.

    Nothing is opened for writing. Raises :class:`StoreNotFoundError` when
    the path is none of these.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise StoreNotFoundError(path, None, "no such file or folder")
    if os.path.isdir(path):
        if os.path.isdir(os.path.join(path, "commitlog")):
            return Store(path, CommitLog(os.path.join(path, "commitlog")))
        if any(SEGMENT_NAME.match(n) for n in os.listdir(path)):
            return Store(None, CommitLog(path))
        raise StoreNotFoundError(path, None, "neither a store root (no commitlog/ folder) "
                                             "nor a folder of commit-log segments")
    if os.path.isfile(path):
        return Store(None, CommitLog(path))
    raise StoreNotFoundError(path, None, "not a regular file or folder")
