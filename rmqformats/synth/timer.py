"""Building timer files and checkpoints through the generated construct schemas.

The vector stores have no timer files (and only clean checkpoints), so tests
make them here: timer-log segments, timer wheels, ``config/timercheck`` and
``checkpoint`` files. Every unit, slot and file is built by
``generated/construct`` from field values, so the bytes come from the specs,
not from a second hand-written encoder. :class:`TimerLogWriter` places units
and blank markers in segments and links units into wheel slots the way the
broker's ``TimerLog.append`` and ``TimerMessageStore.doEnqueue`` do.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from ..consumequeue import java_string_hash
from ..generated.construct import rocketmq_checkpoint as cs_checkpoint
from ..generated.construct import rocketmq_timer_check as cs_check
from ..generated.construct import rocketmq_timer_log as cs_log
from ..generated.construct import rocketmq_timer_wheel as cs_wheel
from ..generated.layouts import rocketmq_timer_log as log_layout

#: Bytes of a unit (``TimerLog.UNIT_SIZE``) and of the blank marker (``MIN_BLANK_LEN``).
UNIT_SIZE = len(cs_log.unit.build({"len_unit": 0, "ofs_prev": 0, "magic": "enqueue", "body": {
    "curr_write_time_ms": 0, "delay_ms": 0, "ofs_commitlog": 0, "len_message": 0, "topic_hash": 0,
    "reserved": 0}}))
BLANK_SIZE = len(cs_log.unit.build({"len_unit": 0, "ofs_prev": 0, "magic": "blank"}))
_FLAG = log_layout.MAGIC_FLAG
_HEAD_NAMES, _HEAD_FORMAT = log_layout.UNIT_RUNS[0]
#: Byte position of the magic in a unit, from the header's field widths.
_MAGIC_AT = struct.calcsize(_HEAD_FORMAT[:1 + _HEAD_NAMES.index("magic")])
CHECKPOINT_FILE_SIZE = 4096


@dataclass(frozen=True)
class UnitSpec:
    """The values of one timer-log unit; ``magic`` is an int or a ``unit_magic`` name."""

    prev_pos: int
    magic: int | str
    curr_write_time_ms: int
    delay_ms: int
    commitlog_offset: int
    commitlog_size: int
    topic_hash: int = 0
    reserved: int = 0
    #: The size field; 52 for every unit a broker writes.
    size: int = UNIT_SIZE


def _magic(value: int | str):
    if isinstance(value, str):
        return value
    try:
        return cs_log.UnitMagic(value)
    except ValueError:  # a value the broker accepts but never writes: keep the raw int
        return value


def encode_unit(spec: UnitSpec) -> bytes:
    """The 52 bytes of a unit."""
    magic = _magic(spec.magic)
    data = {"len_unit": spec.size, "ofs_prev": spec.prev_pos, "magic": magic, "body": {
        "curr_write_time_ms": spec.curr_write_time_ms, "delay_ms": spec.delay_ms,
        "ofs_commitlog": spec.commitlog_offset, "len_message": spec.commitlog_size,
        "topic_hash": spec.topic_hash, "reserved": spec.reserved}}
    if isinstance(magic, int) and not isinstance(magic, cs_log.UnitMagic):
        # The schema only builds the written magic values; encode with a stand-in and patch the int.
        data["magic"] = cs_log.UnitMagic.enqueue
        raw = bytearray(cs_log.unit.build(data))
        raw[_MAGIC_AT:_MAGIC_AT + 4] = (magic & 0xFFFFFFFF).to_bytes(4, "big")  # signed or unsigned
        return bytes(raw)
    return cs_log.unit.build(data)


def encode_blank(remaining: int) -> bytes:
    """The 16-byte blank marker that ends a segment with ``remaining`` bytes left."""
    return cs_log.unit.build({"len_unit": remaining, "ofs_prev": 0, "magic": "blank"})


def magic_of(*, roll: bool = False, delete: bool = False) -> int:
    """The unit magic the broker writes: ``MAGIC_DEFAULT`` plus the roll and delete bits."""
    return _FLAG["enqueue_bit"] | (_FLAG["roll_bit"] if roll else 0) | (_FLAG["delete_bit"] if delete else 0)


@dataclass
class _Slot:
    time_units: int
    first: int
    last: int
    num: int
    reserved: int = 0


class TimerLogWriter:
    """Appends units to a timer log and links them into a wheel, as a broker does.

    ``segment_size`` is ``mappedFileSizeTimerLog``; ``slots_total`` and
    ``precision_ms`` describe the wheel (the broker's are 604800 and 1000;
    tests use small wheels). Call :meth:`enqueue` for each message, then
    :meth:`write` to create ``timerlog/`` and ``timerwheel`` under a root.
    """

    def __init__(self, *, segment_size: int = 100 << 20, slots_total: int = 7 * 86400,
                 precision_ms: int = 1000, start: int = 0):
        self.segment_size = segment_size
        self.slots_total = slots_total
        self.precision_ms = precision_ms
        self.start = start
        #: Segment start offset -> bytearray of the whole (pre-allocated) segment.
        self.segments: dict[int, bytearray] = {}
        self._write_pos = start  # timer-log offset of the next append
        self.slots: dict[int, _Slot] = {}
        #: (timer-log offset, spec) of every unit appended, in order.
        self.units: list[tuple[int, UnitSpec]] = []

    def _segment(self, offset: int) -> tuple[bytearray, int]:
        base = offset - offset % self.segment_size
        seg = self.segments.get(base)
        if seg is None:  # made when first written, not at every record
            seg = self.segments[base] = bytearray(self.segment_size)
        return seg, offset - base

    def append(self, data: bytes) -> int:
        """Append raw unit bytes as ``TimerLog.append`` does; returns their timer-log offset."""
        seg, pos = self._segment(self._write_pos)
        if len(data) + BLANK_SIZE > self.segment_size - pos:
            seg[pos:pos + BLANK_SIZE] = encode_blank(self.segment_size - pos)
            self._write_pos += self.segment_size - pos
            seg, pos = self._segment(self._write_pos)
        seg[pos:pos + len(data)] = data
        offset = self._write_pos
        self._write_pos += len(data)
        return offset

    def slot_index(self, time_ms: int) -> int:
        return time_ms // self.precision_ms % (2 * self.slots_total)

    def enqueue(self, *, write_time_ms: int, delayed_time_ms: int, commitlog_offset: int,
                commitlog_size: int, topic: str | None = None, roll: bool = False,
                delete: bool = False) -> int:
        """Append one unit for a message due at ``delayed_time_ms`` and link it into its slot.

        Mirrors ``doEnqueue``: the unit's ``prev_pos`` is the slot's last unit
        (-1 when the slot holds another time or nothing), and the slot's
        count goes up by one, or down by one for a cancellation.
        """
        index = self.slot_index(delayed_time_ms)
        units = delayed_time_ms // self.precision_ms
        slot = self.slots.get(index)
        if slot is None or slot.time_units != units:
            slot = _Slot(units, -1, -1, 0)
        spec = UnitSpec(prev_pos=slot.last, magic=magic_of(roll=roll, delete=delete),
                        curr_write_time_ms=write_time_ms, delay_ms=delayed_time_ms - write_time_ms,
                        commitlog_offset=commitlog_offset, commitlog_size=commitlog_size,
                        topic_hash=0 if topic is None else java_string_hash(topic))
        offset = self.append(encode_unit(spec))
        self.slots[index] = _Slot(units, offset if slot.first == -1 else slot.first, offset,
                                  slot.num - 1 if delete else slot.num + 1, slot.reserved)
        self.units.append((offset, spec))
        return offset

    def wheel_bytes(self) -> bytes:
        """The whole wheel file: ``2 * slots_total`` slots, unused ones zero."""
        return encode_wheel({i: (s.time_units, s.first, s.last, s.num, s.reserved)
                             for i, s in self.slots.items()}, 2 * self.slots_total)

    def write(self, root: str | os.PathLike[str], *, wheel: bool = True) -> list[str]:
        """Write ``timerlog/<segments>`` (and ``timerwheel``) under ``root``; returns the segment paths."""
        folder = os.path.join(root, "timerlog")
        os.makedirs(folder, exist_ok=True)
        paths = []
        for base in sorted(self.segments):
            path = os.path.join(folder, f"{base:020d}")
            with open(path, "wb") as f:
                f.write(self.segments[base])
            paths.append(path)
        if wheel:
            with open(os.path.join(root, "timerwheel"), "wb") as f:
                f.write(self.wheel_bytes())
        return paths


def encode_wheel(slots: dict[int, tuple[int, int, int, int, int]], num_slots: int) -> bytes:
    """A wheel of ``num_slots`` slots; ``slots`` maps an index to (time units, first, last, num, reserved)."""
    zero = (0, 0, 0, 0, 0)
    rows = [slots.get(i, zero) for i in range(num_slots)]
    return cs_wheel.rocketmq_timer_wheel.build({"slots": [
        {"time_units": t, "ofs_first": first, "ofs_last": last, "num_messages": num, "reserved": reserved}
        for t, first, last, num, reserved in rows]})


def encode_timer_check(*, last_read_time_ms: int, last_timer_log_flush_pos: int,
                       last_timer_queue_offset: int, master_timer_queue_offset: int,
                       state_version: int = 0, timestamp: int = 0, counter: int = 0,
                       size: int = CHECKPOINT_FILE_SIZE) -> bytes:
    """A ``config/timercheck`` file of ``size`` bytes (the broker's page is 4096)."""
    head = cs_check.rocketmq_timer_check.build({
        "last_read_time_ms": last_read_time_ms, "ofs_last_timer_log_flush": last_timer_log_flush_pos,
        "last_timer_queue_offset": last_timer_queue_offset,
        "master_timer_queue_offset": master_timer_queue_offset,
        "data_version": {"state_version": state_version, "timestamp": timestamp, "counter": counter},
        "reserved": b""})
    return head + bytes(max(0, size - len(head)))


def encode_checkpoint(*, physic_msg_timestamp: int, logics_msg_timestamp: int, index_msg_timestamp: int,
                      master_flushed_offset: int = 0, confirm_phy_offset: int = 0,
                      size: int = CHECKPOINT_FILE_SIZE) -> bytes:
    """A store ``checkpoint`` file of ``size`` bytes (the broker's page is 4096)."""
    head = cs_checkpoint.rocketmq_checkpoint.build({
        "physic_msg_timestamp": physic_msg_timestamp, "logics_msg_timestamp": logics_msg_timestamp,
        "index_msg_timestamp": index_msg_timestamp, "ofs_master_flushed": master_flushed_offset,
        "ofs_confirm_phy": confirm_phy_offset, "reserved": b""})
    return head + bytes(max(0, size - len(head)))
