"""Reading the timer message store of a 5.x broker: timer log, timer wheel, ``config/timercheck``.

Messages sent with a delivery time are kept in the commit log under
``rmq_sys_wheel_timer`` and indexed by three files (see
``formats/rocketmq_timer_log.ksy``, ``rocketmq_timer_wheel.ksy`` and
``rocketmq_timer_check.ksy``):

* ``timerlog/<20-digit offset>``: segments of 52-byte units, one per
  enqueued message, each pointing at its commit-log record and back at the
  previous unit of the same wheel slot;
* ``timerwheel``: one 32-byte slot per tick of ``timerPrecisionMs``, holding
  the first and last unit of the messages due at that tick;
* ``config/timercheck``: the timer store's progress.

4.x stores, and 5.x stores whose broker never ran the timer store, have none
of these: :attr:`TimerStore.exists` is then false and the readers return
nothing. The wheel (38.7 MB at the broker's size) is read as a numpy array
over a read-only memory map; the timer log is scanned unit by unit, with the
validity test done by numpy per chunk.
"""

from __future__ import annotations

import enum
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import NamedTuple

import numpy as np

from .errors import (
    CheckpointError,
    TimerLogError,
    TimerWheelError,
    TruncatedTimerUnitError,
)
from .generated.layouts import rocketmq_timer_check as check_layout
from .generated.layouts import rocketmq_timer_log as log_layout
from .generated.layouts import rocketmq_timer_wheel as wheel_layout
from .mapped import RELEASE_EVERY, FileImage, pread_exact, release_pages
from .message import millis_to_datetime_or_none
from .queuefiles import QueueFile, queue_files
from .units import unit_dtype

# The readers take fields in the specs' order; fail at import, not with
# wrong values, if a spec changes.
assert log_layout.UNIT_SEQ == ("len_unit", "ofs_prev", "magic", "body")
assert log_layout.UNIT_BODY_SEQ == (
    "curr_write_time_ms", "delay_ms", "ofs_commitlog", "len_message", "topic_hash", "reserved")
assert wheel_layout.SLOT_SEQ == ("time_units", "ofs_first", "ofs_last", "num_messages", "reserved")
assert check_layout.ROCKETMQ_TIMER_CHECK_SEQ == (
    "last_read_time_ms", "ofs_last_timer_log_flush", "last_timer_queue_offset",
    "master_timer_queue_offset", "data_version", "reserved")
assert check_layout.TIMER_DATA_VERSION_SEQ == ("state_version", "timestamp", "counter")

TIMER_LOG_DIR = "timerlog"
TIMER_WHEEL_FILE = "timerwheel"
TIMER_CHECK_FILE = os.path.join("config", "timercheck")

#: ``TIMER_WHEEL_TTL_DAY * DAY_SECS``: a broker's wheel has twice this many slots.
SLOTS_TOTAL = 7 * 86400
#: ``timerPrecisionMs`` default (a broker accepts 100, 200, 500 or 1000).
DEFAULT_PRECISION_MS = 1000
#: ``mappedFileSizeTimerLog`` default.
DEFAULT_SEGMENT_SIZE = 100 << 20

_HEAD_NAMES, _HEAD_FORMAT = log_layout.UNIT_RUNS[0]
_BODY_NAMES, _BODY_FORMAT = log_layout.UNIT_BODY_RUNS[0]
_E = log_layout.ENDIAN
#: The 16-byte header every timer-log entry starts with (units, blank marker, zero tail).
_HEAD = struct.Struct(_HEAD_FORMAT)
#: A whole unit: header and body.
_UNIT = struct.Struct(_E + _HEAD_FORMAT[1:] + _BODY_FORMAT[1:])
UNIT_SIZE = _UNIT.size
HEADER_SIZE = _HEAD.size
#: numpy record of a unit, for the vectorised validity test.
UNIT_DTYPE = np.dtype(unit_dtype(log_layout.UNIT_RUNS, _HEAD_NAMES).descr
                      + unit_dtype(log_layout.UNIT_BODY_RUNS, log_layout.UNIT_BODY_SEQ).descr)
assert UNIT_DTYPE.itemsize == UNIT_SIZE
BLANK_MAGIC = log_layout.UNIT_MAGIC["blank"]
_ROLL = log_layout.MAGIC_FLAG["roll_bit"]
_DELETE = log_layout.MAGIC_FLAG["delete_bit"]
#: The broker accepts a unit magic with no bit above these (``isMagicOK``).
_MAGIC_BITS = 0xF
_MAGIC_NAMES = {v: k for k, v in log_layout.UNIT_MAGIC.items()}
#: Units checked per numpy step of a scan (about 1 MiB).
_CHUNK_UNITS = 20_000

SLOT_DTYPE = unit_dtype(wheel_layout.SLOT_RUNS, wheel_layout.SLOT_SEQ)
SLOT_SIZE = SLOT_DTYPE.itemsize

_CHECK = struct.Struct(check_layout.ENDIAN + check_layout.ROCKETMQ_TIMER_CHECK_RUNS[0][1][1:]
                       + check_layout.TIMER_DATA_VERSION_RUNS[0][1][1:])


# -- timer log ----------------------------------------------------------------------------


#: One file of ``timerlog/``: its path, the timer-log offset of its first byte, its length.
TimerLogSegment = QueueFile


class TimerLogUnit(NamedTuple):
    """One 52-byte timer-log unit (``TimerLog.UNIT_SIZE``)."""

    #: Timer-log offset of the unit (segment start + position); wheel slots and ``prev_pos`` use these.
    offset: int
    #: Byte position of the unit in its segment file.
    position: int
    #: ``size``: 52.
    size: int
    #: ``prevPos``: the previous unit of the same wheel slot, -1 for the slot's first.
    prev_pos: int
    #: ``magic``: ``MAGIC_DEFAULT`` (1) plus ``MAGIC_ROLL`` (2) and ``MAGIC_DELETE`` (4) bits.
    magic: int
    #: ``currWriteTimeMs``: the timer store's write clock when the unit was appended.
    curr_write_time_ms: int
    #: ``delayedTime``: due time minus ``curr_write_time_ms``, in ms.
    delay_ms: int
    #: ``offsetPy``: commit-log offset of the message's ``rmq_sys_wheel_timer`` record.
    commitlog_offset: int
    #: ``sizePy``: that record's size.
    commitlog_size: int
    #: Java ``hashCode`` of the message's real topic, 0 without one.
    topic_hash: int
    #: Reserved, written as 0.
    reserved: int

    @property
    def segment_name(self) -> str:
        """The name of the segment file holding the unit (its start offset, 20 digits)."""
        return f"{self.offset - self.position:020d}"

    @property
    def delayed_time_ms(self) -> int:
        """The due time (ms since the epoch): the wheel slot the unit is linked into is this time's."""
        return self.curr_write_time_ms + self.delay_ms

    @property
    def delayed_time(self) -> datetime | None:
        """``delayed_time_ms`` as an aware UTC datetime."""
        return millis_to_datetime_or_none(self.delayed_time_ms)

    @property
    def is_roll(self) -> bool:
        """The message is due beyond the roll window: at this time it is enqueued again, not delivered."""
        return bool(self.magic & _ROLL)

    @property
    def is_delete(self) -> bool:
        """The unit cancels the timer message with the same unique key."""
        return bool(self.magic & _DELETE)

    @property
    def kind(self) -> str:
        """The ``unit_magic`` name of the magic (``enqueue``, ``roll``, ``delete``, ``roll_delete``), or ``0x..``."""
        return _MAGIC_NAMES.get(self.magic, f"0x{self.magic & 0xFFFFFFFF:x}")


class TimerLogBlank(NamedTuple):
    """The blank marker that ends a timer-log segment (``TimerLog.append`` when a unit no longer fits):
    its 16-byte header, as the broker's recovery reads it."""

    #: Timer-log offset of the marker.
    offset: int
    #: Byte position of the marker in its segment file.
    position: int
    #: ``size``: the bytes from the marker to the end of its segment.
    size: int
    #: ``prevPos``: written as 0.
    prev_pos: int
    #: ``magic``: ``BLANK_MAGIC_CODE`` (the Java int, negative).
    magic: int


def _unit_ok(size: int, magic: int) -> bool:
    """``recoverAndRevise``'s test: size 52 and a magic with no bit above the low four."""
    return size == UNIT_SIZE and (magic | _MAGIC_BITS) == _MAGIC_BITS


class TimerLogEndReason(enum.Enum):
    """Why the timer log's valid data ends where it does."""

    ZERO_TAIL = "zero-filled tail"
    BLANK_LAST = "blank marker in the last segment"
    END_OF_FILE = "end of the last segment file"
    NO_SEGMENTS = "no segment files"
    BAD_UNIT = "entry that is neither a unit nor a blank marker"

    @property
    def is_clean(self) -> bool:
        """True where a broker leaves the data after a clean write; false where its recovery truncates."""
        return self is not TimerLogEndReason.BAD_UNIT


@dataclass(frozen=True)
class TimerLogEnd:
    """Where and why a timer-log scan stopped: the broker's recovery would truncate here."""

    #: Timer-log offset of the first byte after the valid data.
    offset: int
    reason: TimerLogEndReason
    #: The segment file in which the data ends (``None`` without segments).
    segment: str | None
    #: What was found there, for ``BAD_UNIT``.
    detail: str = ""


def list_segments(folder: str) -> list[TimerLogSegment]:
    """The 20-digit files of a ``timerlog/`` folder, in offset order; none when it is missing."""
    out = list(queue_files(folder))
    # 5.1.3+ brokers delete an empty last segment on load; it holds nothing either way.
    if out and out[-1].size == 0:
        out.pop()
    return out


class TimerLogScan:
    """An iterator over the units of the timer log; :attr:`end` tells where and why it stopped.

    The scan mirrors the broker's recovery (``recoverAndRevise`` with its
    check on): units are taken in 52-byte steps; a blank marker sends the scan
    to the next segment; the zero-filled tail or any entry that is not a unit
    (size other than 52, or a magic with bits above the low four) ends the
    whole timer log. A unit or header cut off by the end of its file raises
    :class:`TruncatedTimerUnitError`; with ``strict`` an entry that is not a
    unit raises :class:`TimerLogError` instead of ending the scan. The blank
    markers passed are in :attr:`blanks`.
    """

    def __init__(self, segments: list[TimerLogSegment], *, strict: bool = False):
        self._segments = segments
        self._strict = strict
        self.end: TimerLogEnd | None = None
        #: The blank markers passed so far, one per segment that ends with one.
        self.blanks: list[TimerLogBlank] = []
        self._it = self._run()

    def __iter__(self) -> TimerLogScan:
        return self

    def __next__(self) -> TimerLogUnit:
        return next(self._it)

    def _stop(self, offset: int, reason: TimerLogEndReason, segment: str | None, detail: str = "") -> None:
        self.end = TimerLogEnd(offset, reason, segment, detail)

    def _run(self) -> Iterator[TimerLogUnit]:
        if not self._segments:
            self._stop(0, TimerLogEndReason.NO_SEGMENTS, None)
            return
        for i, seg in enumerate(self._segments):
            mm = FileImage(seg.path)  # pread, not a memory map: a file cut while read raises FileChangedError
            if mm.size == 0:
                mm.close()
                pos, reason, detail, stop = 0, TimerLogEndReason.END_OF_FILE, "", False
            else:
                try:
                    pos, reason, detail, stop = yield from self._segment(seg, mm)
                finally:
                    mm.close()
            if stop or i == len(self._segments) - 1:
                self._stop(seg.start + pos, reason, seg.path, detail)
                return

    def _segment(self, seg: TimerLogSegment, mm):
        """Yield the units of one segment, then return (position, reason, detail, whole log ends here).

        The numpy test runs on a copy of each chunk, so no array keeps the
        map exported when the scan is closed early.
        """
        size = len(mm)
        pos = 0
        release_at = RELEASE_EVERY
        step = _CHUNK_UNITS * UNIT_SIZE
        while size - pos >= UNIT_SIZE:
            length = min(step, size - pos)
            mm.fill_to(pos + length)
            buf = mm.buf[pos:pos + length - length % UNIT_SIZE]
            chunk = np.frombuffer(buf, dtype=UNIT_DTYPE)
            ok = (chunk["len_unit"] == UNIT_SIZE) & ((chunk["magic"] | _MAGIC_BITS) == _MAGIC_BITS)
            n = len(chunk) if ok.all() else int(np.argmin(ok))
            del chunk, ok
            for k, values in enumerate(_UNIT.iter_unpack(memoryview(buf)[:n * UNIT_SIZE])):
                yield TimerLogUnit(seg.start + pos + k * UNIT_SIZE, pos + k * UNIT_SIZE, *values)
            pos += n * UNIT_SIZE
            if n * UNIT_SIZE < len(buf):
                break
            if pos >= release_at:
                release_at = release_pages(mm, pos)
        return self._entry_at(seg, mm, pos, size)

    def _entry_at(self, seg: TimerLogSegment, mm, pos: int, size: int) -> tuple:
        """What is at the first position of a segment that holds no whole unit."""
        left = size - pos
        if left == 0:
            return pos, TimerLogEndReason.END_OF_FILE, "", False
        mm.fill_to(size)
        mm = mm.buf
        if left < HEADER_SIZE:
            if any(mm[pos:size]):
                raise TruncatedTimerUnitError(seg.path, pos, f"{left} bytes left, an entry header needs {HEADER_SIZE}")
            return pos, TimerLogEndReason.ZERO_TAIL, "", True
        head = dict(zip(_HEAD_NAMES, _HEAD.unpack_from(mm, pos)))
        length, magic = head["len_unit"], head["magic"]
        if magic == BLANK_MAGIC:
            self.blanks.append(TimerLogBlank(seg.start + pos, pos, length, head["ofs_prev"], magic))
            return size, TimerLogEndReason.BLANK_LAST, "", False
        if _unit_ok(length, magic):  # only possible when fewer than 52 bytes are left
            raise TruncatedTimerUnitError(seg.path, pos, f"unit of {UNIT_SIZE} bytes cut off: {left} bytes left")
        if length == 0 and magic == 0 and head["ofs_prev"] == 0:
            return pos, TimerLogEndReason.ZERO_TAIL, "", True
        detail = f"size {length}, magic 0x{magic & 0xFFFFFFFF:08x}"
        if self._strict:
            raise TimerLogError(seg.path, pos, f"not a timer-log unit: {detail}")
        return pos, TimerLogEndReason.BAD_UNIT, detail, True


# -- timer wheel --------------------------------------------------------------------------


class TimerSlot(NamedTuple):
    """One wheel slot (``Slot``)."""

    #: Position of the slot in the wheel.
    index: int
    #: ``timeMs / timerPrecisionMs`` as stored: the tick this slot holds.
    time_units: int
    #: ``time_units`` in ms since the epoch (``Slot.timeMs``).
    time_ms: int
    #: ``firstPos``: timer-log offset of the first unit put into the slot.
    first_pos: int
    #: ``lastPos``: timer-log offset of the last unit, the head of the ``prev_pos`` chain.
    last_pos: int
    #: ``num``: messages in the slot (may be stale after a timer-log recovery).
    num: int
    #: ``magic``: unused, 0.
    reserved: int

    @property
    def time(self) -> datetime | None:
        """``time_ms`` as an aware UTC datetime."""
        return millis_to_datetime_or_none(self.time_ms)


class TimerWheel:
    """The ``timerwheel`` file as a numpy array of slots, read whole when opened.

    ``slots_total`` is the broker's ``slotsTotal`` (the wheel has twice as
    many slots); by default it is taken from the file's size, and when given
    the size must match, as the broker requires. ``precision_ms`` is
    ``timerPrecisionMs`` and is not stored in any file. An empty file (a
    broker creates the wheel at its full size on start) has no slots.
    """

    def __init__(self, path: str | os.PathLike[str], *, precision_ms: int = DEFAULT_PRECISION_MS,
                 slots_total: int | None = None):
        self.path = os.fspath(path)
        if precision_ms <= 0:
            raise ValueError(f"precision_ms must be positive, not {precision_ms}")
        self.precision_ms = precision_ms
        size = os.path.getsize(self.path)
        if size % SLOT_SIZE:
            raise TimerWheelError(self.path, size - size % SLOT_SIZE,
                                  f"file is {size} bytes, not a whole number of {SLOT_SIZE}-byte slots")
        count = size // SLOT_SIZE
        if slots_total is None:
            if count % 2:
                raise TimerWheelError(self.path, None, f"{count} slots: a wheel has an even number (2 × slotsTotal)")
            slots_total = count // 2 if count else SLOTS_TOTAL
        elif count and count != 2 * slots_total:
            raise TimerWheelError(self.path, None, f"wheel is {size} bytes, {2 * slots_total * SLOT_SIZE} expected "
                                                   f"for slotsTotal {slots_total}")
        if slots_total <= 0:
            raise ValueError(f"slots_total must be positive, not {slots_total}")
        self.slots_total = slots_total
        # Read whole (a wheel is 38.7 MB at the broker's settings) with pread, not mapped: a
        # file cut while it is read raises FileChangedError instead of killing the process.
        data = b""
        if count:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                data = pread_exact(fd, count * SLOT_SIZE, 0, self.path, size)
            finally:
                os.close(fd)
        #: The slots as a read-only structured array (fields as in the spec's ``slot`` type).
        self.slots: np.ndarray = np.frombuffer(data, dtype=SLOT_DTYPE)

    def close(self) -> None:
        """Drop the array of slots."""
        self.slots = np.zeros(0, dtype=SLOT_DTYPE)

    def __enter__(self) -> TimerWheel:  # noqa: PYI034 (typing.Self needs Python 3.11)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def num_slots(self) -> int:
        """Slots in the wheel: ``2 * slots_total`` (0 for an empty file)."""
        return len(self.slots)

    def slot_index(self, time_ms: int) -> int:
        """``TimerWheel.getSlotIndex``: ``(time_ms / precision) % (2 * slotsTotal)``."""
        if time_ms < 0:
            raise ValueError(f"time_ms must not be negative, not {time_ms}")
        return time_ms // self.precision_ms % (2 * self.slots_total)

    def raw_slot(self, index: int) -> TimerSlot:
        """The slot at ``index`` as stored, whatever time it holds."""
        row = self.slots[index]
        units = int(row["time_units"])
        return TimerSlot(int(index), units, units * self.precision_ms, int(row["ofs_first"]),
                         int(row["ofs_last"]), int(row["num_messages"]), int(row["reserved"]))

    def slot(self, time_ms: int) -> TimerSlot | None:
        """The slot holding delivery time ``time_ms``, as ``TimerWheel.getSlot`` finds it.

        ``None`` when the slot at that index holds another time (the wheel has
        wrapped) or was never written: the broker reads that as an empty slot.
        """
        index = self.slot_index(time_ms)
        if index >= len(self.slots):
            return None
        slot = self.raw_slot(index)
        return slot if slot.time_units == time_ms // self.precision_ms and slot.time_units != 0 else None

    def used_indexes(self) -> np.ndarray:
        """Indexes of the slots ever written (a time other than 0), in index order."""
        return np.flatnonzero(self.slots["time_units"] != 0)

    def slots_between(self, start_ms: int, end_ms: int) -> list[TimerSlot]:
        """The slots that hold delivery times in ``[start_ms, end_ms)``, in time order.

        At most one turn of the wheel is looked at, as ``getAllNum`` does.
        """
        if not len(self.slots) or end_ms <= start_ms:
            return []
        first = start_ms // self.precision_ms
        last = min((end_ms - 1) // self.precision_ms, first + len(self.slots) - 1)
        units = np.arange(first, last + 1, dtype=np.int64)
        indexes = units % len(self.slots)
        hits = indexes[self.slots["time_units"][indexes] == units]
        return [self.raw_slot(int(i)) for i in hits]


# -- config/timercheck --------------------------------------------------------------------


@dataclass(frozen=True)
class TimerCheckpoint:
    """The values of ``config/timercheck`` (``TimerCheckpoint``)."""

    #: ``lastReadTimeMs``: delivery time up to which the wheel has been read.
    last_read_time_ms: int
    #: ``lastTimerLogFlushPos``: timer-log offset flushed to disk.
    last_timer_log_flush_pos: int
    #: ``lastTimerQueueOffset``: consume offset in ``rmq_sys_wheel_timer`` queue 0.
    last_timer_queue_offset: int
    #: ``masterTimerQueueOffset``: the master's (or own) committed queue offset.
    master_timer_queue_offset: int
    #: ``dataVersion.stateVersion``.
    data_version_state_version: int
    #: ``dataVersion.timestamp`` (ms since the epoch).
    data_version_timestamp: int
    #: ``dataVersion.counter``.
    data_version_counter: int

    @property
    def last_read_time(self) -> datetime | None:
        """``last_read_time_ms`` as an aware UTC datetime."""
        return millis_to_datetime_or_none(self.last_read_time_ms)


def read_timer_checkpoint(path: str | os.PathLike[str]) -> TimerCheckpoint:
    """Read ``config/timercheck``; raises :class:`CheckpointError` when it is shorter than its fields."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read(_CHECK.size)
    if len(data) < _CHECK.size:
        raise CheckpointError(path, len(data), f"file ends after {len(data)} bytes, the timer checkpoint fields "
                                               f"need {_CHECK.size} (a broker writes 4096)")
    names = check_layout.ROCKETMQ_TIMER_CHECK_RUNS[0][0] + tuple(
        f"data_version_{n}" for n in check_layout.TIMER_DATA_VERSION_RUNS[0][0])
    v = dict(zip(names, _CHECK.unpack(data)))
    return TimerCheckpoint(
        last_read_time_ms=v["last_read_time_ms"],
        last_timer_log_flush_pos=v["ofs_last_timer_log_flush"],
        last_timer_queue_offset=v["last_timer_queue_offset"],
        master_timer_queue_offset=v["master_timer_queue_offset"],
        data_version_state_version=v["data_version_state_version"],
        data_version_timestamp=v["data_version_timestamp"],
        data_version_counter=v["data_version_counter"],
    )


# -- the three together -------------------------------------------------------------------


class TimerStore:
    """The timer files of a store root; every reader returns nothing when the store has none.

    ``precision_ms`` (``timerPrecisionMs``) and ``slots_total`` describe the
    wheel, see :class:`TimerWheel`.
    """

    def __init__(self, root: str | os.PathLike[str], *, precision_ms: int = DEFAULT_PRECISION_MS,
                 slots_total: int | None = None):
        self.root = os.fspath(root)
        self.precision_ms = precision_ms
        self.slots_total = slots_total
        self.log_folder = os.path.join(self.root, TIMER_LOG_DIR)
        self.wheel_path = os.path.join(self.root, TIMER_WHEEL_FILE)
        self.check_path = os.path.join(self.root, TIMER_CHECK_FILE)

    def __repr__(self) -> str:
        if not self.exists:
            return f"TimerStore({self.root!r}, no timer files)"
        return (f"TimerStore({self.root!r}, {len(self.log_segments)} timer-log segments, "
                f"wheel {'present' if os.path.isfile(self.wheel_path) else 'absent'})")

    @property
    def exists(self) -> bool:
        """True when the store has any timer file (timer-log segments, wheel or ``timercheck``)."""
        return bool(self.log_segments) or os.path.isfile(self.wheel_path) or os.path.isfile(self.check_path)

    @property
    def log_segments(self) -> list[TimerLogSegment]:
        """The timer-log segments in offset order (empty without ``timerlog/``)."""
        return list_segments(self.log_folder)

    def scan(self, *, strict: bool = False) -> TimerLogScan:
        """Iterate over every unit of the timer log; the scan's ``end`` says where the data ends."""
        return TimerLogScan(self.log_segments, strict=strict)

    def units(self) -> Iterator[TimerLogUnit]:
        """Every unit of the timer log, in offset order (see :meth:`scan`)."""
        return iter(self.scan())

    def unit(self, offset: int) -> TimerLogUnit:
        """The unit at timer-log ``offset``.

        Raises :class:`TimerLogError` when no segment holds the offset or no
        unit is there, and :class:`TruncatedTimerUnitError` when the unit is
        cut off by its file's end.
        """
        return self._unit(offset, self.log_segments)

    def _unit(self, offset: int, segments: list[TimerLogSegment]) -> TimerLogUnit:
        seg = next((s for s in segments if s.start <= offset < s.start + s.size), None)
        if seg is None:
            raise TimerLogError(self.log_folder, None, f"no timer-log segment holds offset {offset}")
        pos = offset - seg.start
        with open(seg.path, "rb") as f:
            f.seek(pos)
            data = f.read(UNIT_SIZE)
        if len(data) < HEADER_SIZE:
            raise TruncatedTimerUnitError(seg.path, pos, f"{len(data)} bytes left, an entry header needs {HEADER_SIZE}")
        head = dict(zip(_HEAD_NAMES, _HEAD.unpack_from(data)))
        if not _unit_ok(head["len_unit"], head["magic"]):
            raise TimerLogError(seg.path, pos, f"not a timer-log unit: size {head['len_unit']}, "
                                              f"magic 0x{head['magic'] & 0xFFFFFFFF:08x}")
        if len(data) < UNIT_SIZE:
            raise TruncatedTimerUnitError(seg.path, pos, f"unit of {UNIT_SIZE} bytes cut off: {len(data)} bytes left")
        return TimerLogUnit(offset, pos, *_UNIT.unpack(data))

    def slot_units(self, slot: TimerSlot) -> list[TimerLogUnit]:
        """The units linked into ``slot``, oldest first (the order the broker handles them).

        Walks back from ``last_pos`` through ``prev_pos`` as the broker's
        dequeue does, and stops, like it, at -1 or at an offset whose segment
        has been deleted from the head. Each step must go back in the log, so
        a damaged chain raises :class:`TimerLogError` instead of looping.
        """
        segments = self.log_segments
        floor = segments[0].start if segments else 0
        chain: list[TimerLogUnit] = []
        offset = slot.last_pos
        while offset >= floor and offset != -1:
            unit = self._unit(offset, segments)
            chain.append(unit)
            if unit.prev_pos >= offset:
                seg = next(s for s in segments if s.start <= offset < s.start + s.size)
                raise TimerLogError(seg.path, offset - seg.start,
                                    f"unit's prev_pos {unit.prev_pos} does not point back in the timer log")
            offset = unit.prev_pos
        chain.reverse()
        return chain

    @cached_property
    def wheel(self) -> TimerWheel | None:
        """The timer wheel, ``None`` when the store has no ``timerwheel`` file."""
        if not os.path.isfile(self.wheel_path):
            return None
        return TimerWheel(self.wheel_path, precision_ms=self.precision_ms, slots_total=self.slots_total)

    def slot(self, time_ms: int) -> TimerSlot | None:
        """The wheel slot holding delivery time ``time_ms`` (``None``: empty, or no wheel)."""
        wheel = self.wheel
        return None if wheel is None else wheel.slot(time_ms)

    def checkpoint(self) -> TimerCheckpoint | None:
        """The values of ``config/timercheck``, ``None`` when the store has none."""
        return read_timer_checkpoint(self.check_path) if os.path.isfile(self.check_path) else None
