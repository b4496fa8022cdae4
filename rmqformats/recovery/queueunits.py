"""The consume-queue units a batch of messages should have, grouped by queue in flat arrays.

The dispatch writes a unit per message into the message's queue (and one
per light message queue it names). A batch of the walk holds messages of
many queues; a broker with many queues has hundreds of them in every batch.
:class:`QueueUnits` keeps the batch's units as four flat columns sorted by
queue, each queue a run of consecutive rows, so that work on every queue
(comparing with the queue files, counting) is done once for the batch in
numpy, not once per queue in Python. It reads as the mapping
``(topic, queueId) -> (queue offsets, commit-log offsets, sizes, tags codes)``
(the runs, as views).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

#: A queue: its topic and queue id.
QueueKey = tuple[str, int]


class QueueUnits(Mapping):
    """Units by queue: ``keys[g]``'s units are rows ``bounds[g]`` to ``bounds[g + 1] - 1`` of ``eq`` (queue
    offsets), ``eo`` (commit-log offsets), ``es`` (sizes) and ``et`` (tags codes), in commit-log order."""

    __slots__ = ("keys_", "bounds", "eq", "eo", "es", "et", "_index")

    def __init__(self, keys: Sequence[QueueKey], bounds: np.ndarray, eq: np.ndarray, eo: np.ndarray,
                 es: np.ndarray, et: np.ndarray):
        self.keys_ = list(keys)
        self.bounds = bounds
        self.eq, self.eo, self.es, self.et = eq, eo, es, et
        self._index = {k: g for g, k in enumerate(self.keys_)}

    @classmethod
    def group(cls, keys: Sequence[QueueKey], gid: np.ndarray, eq: np.ndarray, eo: np.ndarray, es: np.ndarray,
              et: np.ndarray) -> QueueUnits:
        """Rows of queue ``keys[gid[i]]``, sorted by queue (a stable sort: each queue's rows keep their order)."""
        order = np.argsort(gid, kind="stable")
        bounds = np.zeros(len(keys) + 1, np.int64)
        np.cumsum(np.bincount(gid, minlength=len(keys)), out=bounds[1:])
        return cls(keys, bounds, eq[order], eo[order], es[order], et[order])

    def __getitem__(self, key: QueueKey) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.run(self._index[key])

    def __iter__(self) -> Iterator[QueueKey]:
        return iter(self.keys_)

    def __len__(self) -> int:
        return len(self.keys_)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def run(self, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Queue ``g``'s units: ``(queue offsets, commit-log offsets, sizes, tags codes)``."""
        s, e = int(self.bounds[g]), int(self.bounds[g + 1])
        return self.eq[s:e], self.eo[s:e], self.es[s:e], self.et[s:e]

    @property
    def sizes(self) -> np.ndarray:
        """Units of each queue."""
        return np.diff(self.bounds)

    def first_offsets(self) -> list[int]:
        """Each queue's smallest commit-log offset."""
        if not self.keys_:
            return []
        return np.minimum.reduceat(self.eo, self.bounds[:-1]).tolist()

    def by_first_message(self) -> list[int]:
        """The queues in the order of their first message (then by key): the order a walk meets them in,
        however it is cut into batches."""
        first = self.first_offsets()
        return sorted(range(len(self.keys_)), key=lambda g: (first[g], self.keys_[g]))

    def newest(self) -> tuple[np.ndarray, np.ndarray]:
        """Each queue's largest queue offset, and the commit-log offset of the first unit with it."""
        if not self.keys_:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        top = np.maximum.reduceat(self.eq, self.bounds[:-1])
        at = np.flatnonzero(self.eq == np.repeat(top, self.sizes))
        gid = np.searchsorted(self.bounds, at, side="right") - 1
        first = at[np.unique(gid, return_index=True)[1]]
        return top, self.eo[first]

    def select(self, groups: np.ndarray) -> QueueUnits:
        """The queues ``groups`` (a boolean per queue) alone."""
        if bool(groups.all()):
            return self
        rows = np.repeat(groups, self.sizes)
        bounds = np.zeros(int(groups.sum()) + 1, np.int64)
        np.cumsum(self.sizes[groups], out=bounds[1:])
        return QueueUnits([k for k, keep in zip(self.keys_, groups.tolist()) if keep], bounds,
                          self.eq[rows], self.eo[rows], self.es[rows], self.et[rows])
