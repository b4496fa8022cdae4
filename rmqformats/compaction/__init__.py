"""Compaction topics (5.1.0+, ``cleanup.policy=COMPACTION``): ``compaction/`` under the store root.

For each compacted topic queue the broker keeps a compaction log,
``compactionLog/<topic>/<queueId>/``, whose segments hold copies of the
queue's latest record per key in the commit-log layout (PHYSICALOFFSET set
to the record's offset in the compaction log, so a ``__CRC32#`` property
no longer matches), and a compaction consume queue,
``compactionCq/<topic>/<queueId>/``, of 46-byte batch consume-queue units
(batch size 1, base offset = the record's original queue offset) pointing
into it. While a compaction runs, the new log and queue are built in a
``compacting/`` (or, on a slave, ``replicating/``) sub-folder.
``position-checkpoint`` records, per ``<topic>_<queueId>``, the queue offset
up to which the queue has been compacted.

Each compaction log reads with :class:`~rmqformats.commitlog.CommitLog` and
each queue with :class:`~rmqformats.batch_consumequeue.BatchConsumeQueue`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..batch_consumequeue import BatchConsumeQueue, QueueMessage
from ..commitlog import CommitLog
from ..config import read_config_file
from ..queuefiles import list_queue_dirs, queue_files

#: Sub-folders of a queue's folders while a compaction or a replication is under way.
SUB_FOLDERS = ("compacting", "replicating")


@dataclass(frozen=True)
class CompactionQueue:
    """The compaction log and consume queue of one topic queue (``sub_folder`` "" for the current pair)."""

    topic: str
    queue_id: int
    sub_folder: str
    log_folder: str
    cq_folder: str

    def commitlog(self) -> CommitLog:
        """The compaction log's segments, read as a commit log (offsets are compaction-log offsets)."""
        log = CommitLog(self.log_folder)
        log.record_crc = False  # compaction rewrites PHYSICALOFFSET, not __CRC32#
        return log

    def consume_queue(self) -> BatchConsumeQueue:
        """The compaction consume queue, resolving its units in the compaction log."""
        return BatchConsumeQueue(self.cq_folder, self.topic, self.queue_id, commitlog=self.commitlog())

    def messages(self) -> Iterator[QueueMessage]:
        """The queue's messages as a consumer of the compacted topic gets them."""
        return self.consume_queue().messages()


class Compaction:
    """The ``compaction/`` folder of a store root."""

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = os.fspath(folder)

    @property
    def exists(self) -> bool:
        return os.path.isdir(self.folder)

    def queues(self) -> list[CompactionQueue]:
        """Every topic queue with a compaction log or queue, and the sub-folders under way."""
        logs = os.path.join(self.folder, "compactionLog")
        cqs = os.path.join(self.folder, "compactionCq")
        found = {(t, q) for parent in (logs, cqs) for t, q, _ in list_queue_dirs(parent)}
        out = []
        for topic, qid in sorted(found):
            log = os.path.join(logs, topic, str(qid))
            cq = os.path.join(cqs, topic, str(qid))
            out.append(CompactionQueue(topic, qid, "", log, cq))
            for sub in SUB_FOLDERS:
                if queue_files(os.path.join(log, sub)) or queue_files(os.path.join(cq, sub)):
                    out.append(CompactionQueue(topic, qid, sub, os.path.join(log, sub), os.path.join(cq, sub)))
        return out

    def position_checkpoint(self) -> dict[str, int] | None:
        """``position-checkpoint``: compacted queue offset per ``<topic>_<queueId>``; ``None`` without the file."""
        path = os.path.join(self.folder, "position-checkpoint")
        if not os.path.exists(path):
            return None
        return read_position_checkpoint(path)


def read_position_checkpoint(path: str) -> dict[str, int]:
    """The ``queueOffsetMap`` of a ``position-checkpoint`` file, read as ``ConfigManager.load`` reads it.

    Through :func:`rmqformats.config.read_config_file` and the schema
    ``formats/config/position-checkpoint.schema.json`` (with the broker's
    fallback to ``position-checkpoint.bak``); raises :class:`ConfigError` subclasses.
    """
    cf = read_config_file(path, schema="position-checkpoint")
    data = cf.data if isinstance(cf.data, dict) else {}
    table = data.get("queueOffsetMap") or {}
    return {str(k): int(v) for k, v in table.items()}
