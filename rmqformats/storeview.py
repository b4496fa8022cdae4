"""What the readers of one file kind and the capabilities use of a store, which they take as it is given.

:class:`rmqformats.store.Store` is one. The readers and capabilities import this protocol, never the
store facade, which stands above them and imports them.
"""

from __future__ import annotations

from typing import Any, Protocol

from .commitlog import CommitLog
from .queuefiles import QueueInfo


class StoreView(Protocol):
    """A store: its root, its commit log, and its queues found by the facade."""

    @property
    def root(self) -> str | None: ...

    @property
    def commitlog(self) -> CommitLog: ...

    def path(self, *parts: str) -> str: ...

    def queues(self) -> list[QueueInfo]: ...

    def batch_queues(self) -> list[QueueInfo]: ...

    # The queues' readers import this module: their classes are named in the facade's signatures only.
    def consume_queue(self, topic: str, queue_id: int, *, kind: str | None = None) -> Any: ...

    def batch_consume_queue(self, topic: str, queue_id: int) -> Any: ...

    def rocksdb_queues(self) -> Any: ...
