"""The store checkpoint and the shutdown state (``abort`` and ``lock`` files) of a store root.

``<root>/checkpoint`` holds the broker's flush marks (see
``formats/rocketmq_checkpoint.ksy``). ``<root>/abort`` exists while a broker
runs on the store and is deleted by a clean shutdown, so finding it means the
broker stopped without one and will run its abnormal recovery on the next
start. ``<root>/lock`` carries the OS file lock of a running broker; the file
itself stays after shutdown.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from datetime import datetime

from .errors import CheckpointError
from .generated.layouts import rocketmq_checkpoint as layout
from .message import millis_to_datetime_or_none

# The reader takes the fields in the spec's order; fail at import, not with
# wrong values, if the spec changes.
assert layout.ROCKETMQ_CHECKPOINT_SEQ == (
    "physic_msg_timestamp", "logics_msg_timestamp", "index_msg_timestamp",
    "ofs_master_flushed", "ofs_confirm_phy", "reserved",
)
_FIELDS = struct.Struct(layout.ROCKETMQ_CHECKPOINT_RUNS[0][1])
_NAMES = layout.ROCKETMQ_CHECKPOINT_RUNS[0][0]

#: Bytes the broker maps and the file's length (``OS_PAGE_SIZE``).
CHECKPOINT_FILE_SIZE = 4096
#: The first bytes of ``abort`` that are read; a PID needs at most 20 digits.
ABORT_READ_LIMIT = 64
#: The content a broker writes into ``lock``.
LOCK_CONTENT = b"lock"

#: ``StoreCheckpoint.getMinTimestamp`` takes this margin off the older timestamp.
_MIN_TIMESTAMP_MARGIN_MS = 3000


def _utc(ms: int) -> datetime | None:
    """``ms`` since the epoch as an aware UTC datetime; ``None`` for 0 (unset) or out of range."""
    return None if ms <= 0 else millis_to_datetime_or_none(ms)


@dataclass(frozen=True)
class Checkpoint:
    """The values of ``<root>/checkpoint`` (``StoreCheckpoint``).

    Timestamps are milliseconds since the Unix epoch, 0 when never set. They
    are flush marks, not the time of the newest message:
    ``physic_msg_timestamp`` is the store time of the message where the last
    commit-log flush *began*, so it is older than the newest messages even
    after a clean shutdown. ``master_flushed_offset`` is written by 5.0.0+
    and ``confirm_phy_offset`` by 5.1.1+; both read 0 in a file a 4.x broker
    created.
    """

    #: ``physicMsgTimestamp``: store time at the last commit-log flush position.
    physic_msg_timestamp: int
    #: ``logicsMsgTimestamp``: store time of the last message dispatched to a consume queue.
    logics_msg_timestamp: int
    #: ``indexMsgTimestamp``: end time of the last flushed index file.
    index_msg_timestamp: int
    #: ``masterFlushedOffset`` (5.0.0+): the master's flushed commit-log offset, on a slave.
    master_flushed_offset: int
    #: ``confirmPhyOffset`` (5.1.1+): the commit log's confirm offset.
    confirm_phy_offset: int

    @property
    def physic_msg_time(self) -> datetime | None:
        """``physic_msg_timestamp`` as an aware UTC datetime; ``None`` when unset."""
        return _utc(self.physic_msg_timestamp)

    @property
    def logics_msg_time(self) -> datetime | None:
        """``logics_msg_timestamp`` as an aware UTC datetime; ``None`` when unset."""
        return _utc(self.logics_msg_timestamp)

    @property
    def index_msg_time(self) -> datetime | None:
        """``index_msg_timestamp`` as an aware UTC datetime; ``None`` when unset."""
        return _utc(self.index_msg_timestamp)

    @property
    def min_timestamp(self) -> int:
        """``getMinTimestamp``: where abnormal recovery starts looking (older flush mark − 3 s, ≥ 0).

        After an unclean shutdown the broker recovers from the newest
        commit-log segment whose first message was stored at or before this.
        """
        return max(0, min(self.physic_msg_timestamp, self.logics_msg_timestamp) - _MIN_TIMESTAMP_MARGIN_MS)

    @property
    def min_timestamp_index(self) -> int:
        """``getMinTimestampIndex``: ``min_timestamp`` or the index mark if older (``messageIndexSafe``)."""
        return min(self.min_timestamp, self.index_msg_timestamp)


def read_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a ``checkpoint`` file.

    Only the 40 bytes of fields are needed; the rest of the 4096-byte page
    is not checked (the broker never reads it). Raises
    :class:`CheckpointError` when the file is shorter than the fields.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read(_FIELDS.size)
    if len(data) < _FIELDS.size:
        cut = _field_at(len(data))
        raise CheckpointError(path, len(data),
                              f"file ends inside {cut}: {len(data)} bytes, the fields need {_FIELDS.size} "
                              f"(a broker writes {CHECKPOINT_FILE_SIZE})")
    values = dict(zip(_NAMES, _FIELDS.unpack(data)))
    return Checkpoint(
        physic_msg_timestamp=values["physic_msg_timestamp"],
        logics_msg_timestamp=values["logics_msg_timestamp"],
        index_msg_timestamp=values["index_msg_timestamp"],
        master_flushed_offset=values["ofs_master_flushed"],
        confirm_phy_offset=values["ofs_confirm_phy"],
    )


def _field_at(offset: int) -> str:
    """The name of the field that contains byte ``offset``."""
    end = 0
    for name, code in zip(_NAMES, _FIELDS.format[1:]):
        end += struct.calcsize(_FIELDS.format[0] + code)
        if offset < end:
            return name
    return _NAMES[-1]


# -- shutdown state -----------------------------------------------------------------------


def _read_small(path: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``path``, or ``None`` when it is not a regular file."""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read(limit)


def _pid(content: bytes | None) -> int | None:
    """The decimal PID a 5.x broker writes, or ``None`` for empty or other content."""
    if not content:
        return None
    text = content.strip()
    return int(text) if text.isdigit() and len(text) <= 20 else None


@dataclass(frozen=True)
class StoreState:
    """What the ``abort`` and ``lock`` files of a store root say about the last shutdown.

    A broker creates ``abort`` when it starts and deletes it on a clean
    shutdown (and keeps it when the store was not writable or not fully
    dispatched at shutdown). A store with ``abort`` was left by a crash, a
    kill or such a shutdown: on the next start the broker runs its abnormal
    recovery, which re-checks the commit log from the segment the checkpoint
    points at and rebuilds consume queues and index entries past it. 4.x
    brokers leave ``abort`` empty; 5.0.0+ write their process id into it.

    ``abort.bak`` (5.0.0+) is a side effect of how 5.x writes ``abort``
    (``MixAll.string2File`` first copies the file's previous content to
    ``.bak``). It is made on every start and never removed, so it says
    nothing about the last shutdown. It is empty when the broker found no
    ``abort`` at start; when it holds a PID, the start *before* the latest
    one followed an unclean stop of that process.

    ``lock`` (4.2.0+) holds the 4 ASCII bytes ``lock``; a running broker
    keeps an OS lock on its first byte. The file stays after shutdown, so
    its presence does not mean a broker is running.
    """

    root: str
    #: ``abort`` exists: the broker did not shut down cleanly.
    abort_exists: bool
    #: The first bytes of ``abort`` (empty from 4.x), ``None`` without the file.
    abort_content: bytes | None
    #: ``abort.bak`` exists (5.0.0+ side effect, not a sign of an unclean shutdown).
    abort_bak_exists: bool
    #: The first bytes of ``abort.bak``, ``None`` without the file.
    abort_bak_content: bytes | None
    #: ``lock`` exists (4.2.0+; stays after shutdown).
    lock_exists: bool
    #: The first bytes of ``lock`` (``b"lock"``), ``None`` without the file.
    lock_content: bytes | None

    @property
    def clean_shutdown(self) -> bool:
        """True when no ``abort`` file is left: the last broker on this store shut down cleanly."""
        return not self.abort_exists

    @property
    def abort_pid(self) -> int | None:
        """The process id in ``abort`` (5.0.0+), ``None`` when empty (4.x) or absent."""
        return _pid(self.abort_content)

    @property
    def previous_unclean_pid(self) -> int | None:
        """The PID kept in ``abort.bak``: a start before the latest one followed this process's unclean stop."""
        return _pid(self.abort_bak_content)

    def summary(self) -> str:
        """One line for people: how the broker last stopped and what the next start will do."""
        if self.clean_shutdown:
            text = "clean shutdown (no abort file)"
        else:
            who = f"process {self.abort_pid}" if self.abort_pid is not None else "the broker"
            text = (f"unclean shutdown: abort file left by {who}; "
                    "the next start runs abnormal recovery")
        if self.lock_exists:
            text += "; lock file present"
        if self.previous_unclean_pid is not None:
            text += f"; abort.bak names an earlier unclean stop of process {self.previous_unclean_pid}"
        return text


def read_store_state(root: str | os.PathLike[str]) -> StoreState:
    """The shutdown state of the store at ``root``; reads at most a few bytes of each file."""
    root = os.fspath(root)
    abort = _read_small(os.path.join(root, "abort"), ABORT_READ_LIMIT)
    bak = _read_small(os.path.join(root, "abort.bak"), ABORT_READ_LIMIT)
    lock = _read_small(os.path.join(root, "lock"), len(LOCK_CONTENT))
    exists = os.path.exists  # the broker's own test (``File.exists``)
    return StoreState(
        root=root,
        abort_exists=exists(os.path.join(root, "abort")),
        abort_content=abort,
        abort_bak_exists=exists(os.path.join(root, "abort.bak")),
        abort_bak_content=bak,
        lock_exists=exists(os.path.join(root, "lock")),
        lock_content=lock,
    )
