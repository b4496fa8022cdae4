"""Timer log, timer wheel and config/timercheck: built through the construct schemas, read back three ways."""

from __future__ import annotations

import json
import os

import kaitaistruct
import numpy as np
import pytest
from conftest import FIXTURES, VERSIONS, store_path
from rmqformats.generated.construct.rocketmq_timer_check import rocketmq_timer_check
from rmqformats.generated.construct.rocketmq_timer_log import rocketmq_timer_log
from rmqformats.generated.construct.rocketmq_timer_wheel import rocketmq_timer_wheel
from rmqformats.generated.construct.rocketmq_timer_wheel import slot as cs_slot
from rmqformats.generated.kaitai.rocketmq_timer_check import RocketmqTimerCheck
from rmqformats.generated.kaitai.rocketmq_timer_log import RocketmqTimerLog
from rmqformats.generated.kaitai.rocketmq_timer_wheel import RocketmqTimerWheel

import rmqformats
from rmqformats.config import load_config
from rmqformats.errors import (
    CheckpointError,
    TimerLogError,
    TimerWheelError,
    TruncatedTimerUnitError,
)
from rmqformats.synth.timer import (
    BLANK_SIZE,
    UNIT_SIZE,
    TimerLogWriter,
    UnitSpec,
    encode_timer_check,
    encode_unit,
    java_string_hash,
)
from rmqformats.timer import (
    SLOT_SIZE,
    SLOTS_TOTAL,
    TimerLogEndReason,
    TimerSlot,
    TimerStore,
    TimerWheel,
)

T0 = 1_700_000_000_000
#: ``BLANK_MAGIC_CODE``, signed as RocketMQ's Java and the spec hold it.
BLANK = -875286124


def _fill(writer: TimerLogWriter, count: int, *, spread: int = 3, precision: int = 1000) -> None:
    """``count`` messages over ``spread`` ticks, with roll and delete units among them."""
    for i in range(count):
        writer.enqueue(write_time_ms=T0 + i, delayed_time_ms=T0 + (i % spread) * precision + 7,
                       commitlog_offset=1000 + i * 300, commitlog_size=250 + i,
                       topic=None if i % 5 == 4 else f"Topic{i % 2}", roll=i % 7 == 3, delete=i % 11 == 6)


@pytest.fixture
def timer_root(tmp_path):
    """A store root with three timer-log segments (blank markers at the ends), a 16-slot wheel and timercheck."""
    writer = TimerLogWriter(segment_size=52 * 6 + 16 + 20, slots_total=8)
    _fill(writer, 15)
    writer.write(tmp_path)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "timercheck").write_bytes(encode_timer_check(
        last_read_time_ms=T0, last_timer_log_flush_pos=312, last_timer_queue_offset=14,
        master_timer_queue_offset=15, state_version=2, timestamp=T0 + 5, counter=9))
    return tmp_path, writer


def _expected(writer: TimerLogWriter) -> list[tuple]:
    return [(off, off % writer.segment_size, s.size, s.prev_pos, s.magic, s.curr_write_time_ms, s.delay_ms, s.commitlog_offset,
             s.commitlog_size, s.topic_hash, s.reserved) for off, s in writer.units]


# -- the vector stores ----------------------------------------------------------------------


def _timer_truth(version: str) -> dict | None:
    """``truth/timer.json``: what RocketMQ's TimerLog, TimerWheel and TimerCheckpoint read (5.3.3)."""
    path = FIXTURES / version / "truth" / "timer.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


#: The vectors whose broker ran the timer store.
TIMER_VERSIONS = [v for v in VERSIONS if _timer_truth(v) is not None]


def _store_config(version: str) -> dict:
    return json.loads((FIXTURES / version / "store_config.json").read_text(encoding="utf-8"))


def test_vector_stores_have_timer_data_only_where_the_timer_store_ran(version):
    truth = _timer_truth(version)
    timer = rmqformats.open_store(store_path(version)).timer()
    if truth is not None:
        assert _store_config(version)["timerWheelEnable"] is True
        assert timer.exists and timer.wheel is not None and timer.checkpoint() is not None
        assert [os.path.basename(s.path) for s in timer.log_segments] == sorted(
            {u["file"] for u in truth["timerLogUnits"]})
        return
    assert not timer.exists
    assert timer.log_segments == []
    assert list(timer.units()) == []
    scan = timer.scan()
    assert list(scan) == [] and scan.end.reason is TimerLogEndReason.NO_SEGMENTS
    assert timer.wheel is None and timer.slot(T0) is None and timer.checkpoint() is None


def test_timer_vectors_exist():
    assert "rocketmq-5.3.3" in TIMER_VERSIONS


@pytest.mark.parametrize("version", TIMER_VERSIONS)
def test_vector_timer_log_units_equal_truth(version):
    """Every timer-log unit as TimerLog.getTimerMessage read it, field by field, and the record it points at."""
    truth = _timer_truth(version)
    cfg = _store_config(version)
    store = rmqformats.open_store(store_path(version))
    timer = store.timer()
    segments = timer.log_segments
    assert {s.size for s in segments} == {truth["timerLogFileSize"], cfg["mappedFileSizeTimerLog"]}
    assert truth["timerLogUnitSize"] == UNIT_SIZE
    scan = timer.scan()
    units = list(scan)
    expected = [t for t in truth["timerLogUnits"] if t["kind"] == "UNIT"]
    blanks = [t for t in truth["timerLogUnits"] if t["kind"] == "BLANK"]
    assert len(expected) + len(blanks) == len(truth["timerLogUnits"]) and blanks
    assert [u.offset for u in units] == [t["timerLogOffset"] for t in expected]
    for u, t in zip(units, expected):
        assert (u.segment_name, u.size, u.prev_pos, u.magic, u.curr_write_time_ms, u.delay_ms, u.delayed_time_ms,
                u.commitlog_offset, u.commitlog_size, u.topic_hash, u.reserved) == (
            t["file"], t["size"], t["prevPos"], t["magic"], t["currWriteTimeMs"], t["delayTime"], t["delayedTimeMs"],
            t["offsetPy"], t["sizePy"], t["hashCodeOfRealTopic"], t["reserved"]), t["timerLogOffset"]
        assert (u.is_roll, u.is_delete) == (t["magicRoll"], t["magicDelete"])
        assert timer.unit(u.offset) == u
        # The unit points at its rmq_sys_wheel_timer record.
        msg = store.commitlog.read(u.commitlog_offset)
        assert (msg.topic, msg.properties.get("REAL_TOPIC"), msg.uniq_key, msg.properties.get("TIMER_OUT_MS"),
                msg.store_size) == (t["msg_topic"], t["msg_REAL_TOPIC"], t["msg_uniqKey"], t["msg_TIMER_OUT_MS"],
                                    t["msg_storeSize"])
        assert u.topic_hash == java_string_hash(msg.properties["REAL_TOPIC"])
    assert {u.kind for u in units} == {"enqueue", "roll", "delete"}
    # Blank markers (TimerLog.BLANK_MAGIC_CODE) end the segments that are full; the scan steps over them.
    by_name = {os.path.basename(s.path): s for s in segments}
    for b in blanks:
        seg = by_name[b["file"]]
        *_, last = _kaitai_units(seg.path)
        assert last[:3] == (b["size"], b["prevPos"], b["magic"]) == (seg.start + seg.size
                                                                                   - b["timerLogOffset"], 0, BLANK)
    # Clean shutdown: the data ends in the zero-filled tail of the last segment, at the flushed position.
    assert scan.end.reason is TimerLogEndReason.ZERO_TAIL
    assert scan.end.offset == truth["timerCheckpoint"]["lastTimerLogFlushPos"]


@pytest.mark.parametrize("version", TIMER_VERSIONS)
def test_vector_timer_log_three_readers_agree(version):
    timer = rmqformats.open_store(store_path(version)).timer()
    by_offset = {u.offset: u for u in timer.units()}
    segments = timer.log_segments
    for seg in segments:
        k, c = _kaitai_units(seg.path), _construct_units(seg.path)
        assert k == c
        *rows, last = k
        assert rows == [(u.size, u.prev_pos, u.magic, (u.curr_write_time_ms, u.delay_ms, u.commitlog_offset,
                                                       u.commitlog_size, u.topic_hash, u.reserved,
                                                       u.delayed_time_ms), 0)
                        for u in by_offset.values() if u.segment_name == os.path.basename(seg.path)]
        if seg == segments[-1]:
            assert last == (0, 0, 0, None, 0)  # the zero-filled tail
        else:
            left = seg.size - len(rows) * UNIT_SIZE
            assert last == (left, 0, BLANK, None, left - BLANK_SIZE)


@pytest.mark.parametrize("version", TIMER_VERSIONS)
def test_vector_timer_wheel_slots_equal_truth(version):
    """Every non-empty wheel slot as TimerWheel.getRawSlot read it, field by field, and its prevPos chain."""
    truth = _timer_truth(version)
    cfg = _store_config(version)
    timer = rmqformats.open_store(store_path(version)).timer()
    wheel = timer.wheel
    assert wheel.slots_total == truth["wheelSlotsTotal"] == cfg["timerWheelSlotsTotal"]
    assert wheel.precision_ms == cfg["timerPrecisionMs"]
    assert os.path.getsize(wheel.path) == truth["wheelFileSize"] == wheel.num_slots * SLOT_SIZE
    assert SLOT_SIZE == truth["slotSize"]
    slots = truth["nonEmptySlots"]
    assert [int(i) for i in wheel.used_indexes()] == [t["slotIndex"] for t in slots]
    with open(wheel.path, "rb") as f:
        for t in slots:
            slot = wheel.raw_slot(t["slotIndex"])
            assert (slot.index, slot.time_ms, slot.first_pos, slot.last_pos, slot.num, slot.reserved) == (
                t["slotIndex"], t["timeMs"], t["firstPos"], t["lastPos"], t["num"], t["magic"])
            assert slot.time_units * cfg["timerPrecisionMs"] == t["timeMs"]  # stored as timeMs / precisionMs
            assert t["fileOffset"] == t["slotIndex"] * SLOT_SIZE
            assert wheel.slot_index(t["timeMs"]) == t["getSlotIndex(timeMs)"] == t["slotIndex"]
            assert timer.slot(t["timeMs"]) == slot
            f.seek(t["fileOffset"])
            c = cs_slot.parse(f.read(SLOT_SIZE))
            assert (c.time_units, c.ofs_first, c.ofs_last, c.num_messages, c.reserved) == (
                slot.time_units, slot.first_pos, slot.last_pos, slot.num, slot.reserved)
            chain = timer.slot_units(slot)
            assert [u.offset for u in reversed(chain)] == t["chain_lastPos_to_firstPos_via_prevPos"]
            assert chain[0].offset == slot.first_pos and chain[-1].offset == slot.last_pos
            assert all(u.delayed_time_ms // cfg["timerPrecisionMs"] == slot.time_units for u in chain)
            # A delete unit takes its message out of the slot's count.
            assert slot.num == sum(-1 if u.is_delete else 1 for u in chain)
    first, last = slots[0]["timeMs"], slots[-1]["timeMs"]
    assert [s.index for s in wheel.slots_between(first, last + 1)] == [t["slotIndex"] for t in slots]


@pytest.mark.parametrize("version", TIMER_VERSIONS)
def test_vector_timer_checkpoint_and_metrics_equal_truth(version):
    truth = _timer_truth(version)
    root = store_path(version)
    t = truth["timerCheckpoint"]
    cp = rmqformats.open_store(root).timer().checkpoint()
    assert (cp.last_read_time_ms, cp.last_timer_log_flush_pos, cp.last_timer_queue_offset,
            cp.master_timer_queue_offset, cp.data_version_state_version, cp.data_version_timestamp,
            cp.data_version_counter) == (t["lastReadTimeMs"], t["lastTimerLogFlushPos"], t["lastTimerQueueOffset"],
                                         t["masterTimerQueueOffset"], t["dataVersion_stateVersion"],
                                         t["dataVersion_timestamp"], t["dataVersion_counter"])
    path = root / "config" / "timercheck"
    assert path.stat().st_size == t["fileSize"]
    with RocketmqTimerCheck.from_file(str(path)) as k:
        kv = (k.last_read_time_ms, k.ofs_last_timer_log_flush, k.last_timer_queue_offset,
              k.master_timer_queue_offset, k.data_version.state_version, k.data_version.timestamp,
              k.data_version.counter)
    c = rocketmq_timer_check.parse_file(str(path))
    cv = (c.last_read_time_ms, c.ofs_last_timer_log_flush, c.last_timer_queue_offset, c.master_timer_queue_offset,
          c.data_version.state_version, c.data_version.timestamp, c.data_version.counter)
    assert kv == cv == (cp.last_read_time_ms, cp.last_timer_log_flush_pos, cp.last_timer_queue_offset,
                        cp.master_timer_queue_offset, cp.data_version_state_version, cp.data_version_timestamp,
                        cp.data_version_counter)
    # The queue offset consumed by the timer store is the end of the rmq_sys_wheel_timer queue.
    queue = {(q.topic, q.queue_id): q for q in rmqformats.open_store(root).queues()}[("rmq_sys_wheel_timer", 0)]
    assert queue.max_offset == cp.last_timer_queue_offset
    # config/timermetrics, read as TimerMetrics reads it.
    metrics = load_config(root / "config").files["timermetrics"]
    m = truth["timerMetrics"]
    assert metrics.source == "file" and metrics.data["dataVersion"]["counter"] == m["dataVersion_counter"]
    assert metrics.data["timingCount"] == m["timingCount"]


# -- timer log ----------------------------------------------------------------------------


def test_units_read_back_with_every_field(timer_root):
    root, writer = timer_root
    timer = TimerStore(root, slots_total=8)
    assert timer.exists
    segments = timer.log_segments
    assert [s.start for s in segments] == [0, 348, 696] and {s.size for s in segments} == {348}
    scan = timer.scan()
    units = list(scan)
    assert [tuple(u) for u in units] == _expected(writer)
    assert scan.end.reason is TimerLogEndReason.ZERO_TAIL and scan.end.reason.is_clean
    assert scan.end.offset == units[-1].offset + UNIT_SIZE and scan.end.segment == segments[-1].path
    kinds = {u.kind for u in units}
    assert kinds == {"enqueue", "roll", "delete"}
    for u, (_, spec) in zip(units, writer.units):
        assert u.is_roll == (u.kind in ("roll", "roll_delete")) and u.is_delete == (u.kind == "delete")
        assert u.delayed_time_ms == spec.curr_write_time_ms + spec.delay_ms
        assert u.delayed_time.timestamp() * 1000 == pytest.approx(u.delayed_time_ms)
    assert units[0].topic_hash == java_string_hash("Topic0") and units[4].topic_hash == 0
    assert units[-1].segment_name == os.path.basename(segments[-1].path)
    assert [timer.unit(u.offset) for u in units] == units


def _kaitai_units(path):
    with RocketmqTimerLog.from_file(str(path)) as k:
        return [(u.len_unit, u.ofs_prev, int(u.magic),
                 None if not u.is_unit else (u.body.curr_write_time_ms, u.body.delay_ms, u.body.ofs_commitlog,
                                             u.body.len_message, u.body.topic_hash, u.body.reserved,
                                             u.body.delayed_time_ms), u.len_padding)
                for u in k.units]


def _construct_units(path):
    parsed = rocketmq_timer_log.parse_file(str(path))
    return [(u.len_unit, u.ofs_prev, int(u.magic),
             None if not u.is_unit else (u.body.curr_write_time_ms, u.body.delay_ms, u.body.ofs_commitlog,
                                         u.body.len_message, u.body.topic_hash, u.body.reserved,
                                         u.body.delayed_time_ms), u.len_padding)
            for u in parsed.units]


def test_kaitai_and_construct_read_the_same_units(timer_root):
    root, _ = timer_root
    timer = TimerStore(root)
    by_offset = {u.offset: u for u in timer.units()}
    segments = timer.log_segments
    for seg in segments:
        k, c = _kaitai_units(seg.path), _construct_units(seg.path)
        assert k == c
        *units, last = k
        for pos, row in zip(range(0, seg.size, UNIT_SIZE), units):
            u = by_offset[seg.start + pos]
            assert row == (u.size, u.prev_pos, u.magic, (u.curr_write_time_ms, u.delay_ms, u.commitlog_offset,
                                                         u.commitlog_size, u.topic_hash, u.reserved,
                                                         u.delayed_time_ms), 0)
        if seg == segments[-1]:
            assert last == (0, 0, 0, None, 0)  # the zero-filled tail
        else:  # the blank marker: size = bytes left in the segment, then 8 zero bytes and the BLANK magic
            left = seg.size - len(units) * UNIT_SIZE
            assert last == (left, 0, BLANK, None, left - BLANK_SIZE)


@pytest.mark.parametrize("segment_size", [52 * 4 + 16, 52 * 4 + 16 + 51, 52 * 4 + 68, 1000])
def test_blank_marker_placement_follows_timer_log_append(tmp_path, segment_size):
    writer = TimerLogWriter(segment_size=segment_size, slots_total=8)
    _fill(writer, 40)
    writer.write(tmp_path)
    timer = TimerStore(tmp_path)
    per_segment = (segment_size - BLANK_SIZE) // UNIT_SIZE  # a unit goes in only when 16 bytes stay free after it
    first = [u.offset for u in timer.units() if u.offset < segment_size]
    assert len(first) == per_segment
    blank_at = per_segment * UNIT_SIZE
    assert segment_size - blank_at == BLANK_SIZE + (segment_size - BLANK_SIZE) % UNIT_SIZE
    seg0 = timer.log_segments[0].path
    assert _kaitai_units(seg0)[-1][:3] == (segment_size - blank_at, 0, BLANK)
    assert [tuple(u) for u in timer.units()] == _expected(writer)


def test_default_segment_ends_in_a_16_byte_blank():
    size = 100 << 20
    last_unit = size - (size - BLANK_SIZE) % UNIT_SIZE - BLANK_SIZE - UNIT_SIZE  # TimerLog.getOffsetForLastUnit
    assert last_unit % UNIT_SIZE == 0 and size - (last_unit + UNIT_SIZE) == BLANK_SIZE


def test_truncated_unit_is_a_typed_error(timer_root):
    root, _ = timer_root
    timer = TimerStore(root)
    last = timer.log_segments[-1]
    with open(last.path, "r+b") as f:
        f.truncate(UNIT_SIZE + 30)  # second unit of the last segment cut after 30 bytes
    with pytest.raises(TruncatedTimerUnitError) as err:
        list(timer.units())
    assert err.value.path == last.path and err.value.offset == UNIT_SIZE
    assert str(err.value).startswith(f"timerlog/{os.path.basename(last.path)} @ 0x34: unit of 52 bytes cut off")
    with pytest.raises(TruncatedTimerUnitError):
        timer.unit(last.start + UNIT_SIZE)


def test_truncated_header_is_a_typed_error(timer_root):
    root, _ = timer_root
    timer = TimerStore(root)
    last = timer.log_segments[-1]
    with open(last.path, "r+b") as f:
        f.truncate(UNIT_SIZE + 10)
    with pytest.raises(TruncatedTimerUnitError) as err:
        list(timer.units())
    assert err.value.offset == UNIT_SIZE and "entry header needs 16" in err.value.reason


def test_bad_unit_ends_the_timer_log_as_recovery_does(timer_root):
    root, _ = timer_root
    timer = TimerStore(root)
    first = timer.log_segments[0]
    with open(first.path, "r+b") as f:  # third unit: size 40, as a torn or foreign write
        f.seek(2 * UNIT_SIZE)
        f.write((40).to_bytes(4, "big"))
    scan = timer.scan()
    units = list(scan)
    # Recovery truncates the timer log there: nothing after it counts, not even later segments.
    assert [u.offset for u in units] == [0, UNIT_SIZE]
    assert scan.end.reason is TimerLogEndReason.BAD_UNIT and not scan.end.reason.is_clean
    assert scan.end.offset == 2 * UNIT_SIZE and scan.end.segment == first.path and "size 40" in scan.end.detail
    with pytest.raises(TimerLogError) as err:
        list(timer.scan(strict=True))
    assert err.value.offset == 2 * UNIT_SIZE and "not a timer-log unit" in str(err.value)
    with pytest.raises(TimerLogError):
        timer.unit(2 * UNIT_SIZE)


def test_magic_accepted_by_the_broker_but_never_written(tmp_path):
    """isMagicOK takes any value up to 0xf; the spec's enum lists only what brokers write."""
    folder = tmp_path / "timerlog"
    folder.mkdir()
    unit = encode_unit(UnitSpec(prev_pos=-1, magic=9, curr_write_time_ms=T0, delay_ms=5, commitlog_offset=1,
                                commitlog_size=2))
    (folder / ("0" * 20)).write_bytes(unit + bytes(100))
    [u] = TimerStore(tmp_path).units()
    assert u.magic == 9 and u.kind == "0x9" and not u.is_roll and not u.is_delete
    with pytest.raises(kaitaistruct.ValidationNotInEnumError):
        _kaitai_units(folder / ("0" * 20))


def test_end_of_file_and_empty_last_segment(tmp_path):
    writer = TimerLogWriter(segment_size=52 * 3, slots_total=8)
    _fill(writer, 2)
    writer.write(tmp_path)
    seg = tmp_path / "timerlog" / ("0" * 20)
    seg.write_bytes(seg.read_bytes()[:2 * UNIT_SIZE])  # file ends right after the last unit
    (tmp_path / "timerlog" / f"{2 * UNIT_SIZE:020d}").write_bytes(b"")  # empty newest file: ignored
    scan = TimerStore(tmp_path).scan()
    assert len(list(scan)) == 2
    assert scan.end.reason is TimerLogEndReason.END_OF_FILE and scan.end.offset == 2 * UNIT_SIZE


def test_unit_lookup_outside_the_log(timer_root):
    root, _ = timer_root
    timer = TimerStore(root)
    with pytest.raises(TimerLogError) as err:
        timer.unit(10 ** 9)
    assert "no timer-log segment holds offset" in str(err.value)


# -- wheel --------------------------------------------------------------------------------


def test_wheel_slots_read_back_three_ways(timer_root):
    root, writer = timer_root
    timer = TimerStore(root, slots_total=8)
    wheel = timer.wheel
    assert wheel.num_slots == 16 and wheel.slots_total == 8
    assert os.path.getsize(root / "timerwheel") == 16 * SLOT_SIZE
    expected = {i: (s.time_units, s.first, s.last, s.num, s.reserved) for i, s in writer.slots.items()}
    got = {int(i): tuple(int(v) for v in wheel.slots[i]) for i in wheel.used_indexes()}
    assert got == expected
    with RocketmqTimerWheel.from_file(str(root / "timerwheel")) as k:
        kslots = [(s.time_units, s.ofs_first, s.ofs_last, s.num_messages, s.reserved) for s in k.slots]
        assert [s.is_used for s in k.slots] == [i in expected for i in range(16)]
    cslots = [(s.time_units, s.ofs_first, s.ofs_last, s.num_messages, s.reserved)
              for s in rocketmq_timer_wheel.parse_file(str(root / "timerwheel")).slots]
    npslots = [tuple(int(v) for v in row) for row in wheel.slots]
    assert kslots == cslots == npslots
    assert all(npslots[i] == (0, 0, 0, 0, 0) for i in range(16) if i not in expected)


def test_slot_lookup_by_delivery_time(timer_root):
    root, writer = timer_root
    timer = TimerStore(root)
    wheel = timer.wheel
    for tick in range(3):
        due = T0 + tick * 1000 + 7
        index = (due // 1000) % 16
        assert wheel.slot_index(due) == index
        slot = timer.slot(due)
        assert slot.index == index and slot.time_units == due // 1000 and slot.time_ms == due // 1000 * 1000
        chain = timer.slot_units(slot)
        mine = [(off, s) for off, s in writer.units if (s.curr_write_time_ms + s.delay_ms) // 1000 == due // 1000]
        assert [u.offset for u in chain] == [off for off, _ in mine]
        assert chain[0].prev_pos == -1 and chain[0].offset == slot.first_pos and chain[-1].offset == slot.last_pos
        added = sum(-1 if s.magic & 4 else 1 for _, s in mine)
        assert slot.num == added
    # A time that maps to a used slot index but another turn of the wheel: the broker sees an empty slot.
    assert timer.slot(T0 + 7 + 16 * 1000) is None
    assert timer.slot(T0 + 3 * 1000) is None  # never written
    between = timer.wheel.slots_between(T0 - 10_000, T0 + 10_000)
    assert [s.time_units for s in between] == [T0 // 1000 + k for k in range(3)]
    assert timer.wheel.slots_between(T0 + 16_000, T0 + 20_000) == []


def test_slot_chain_stops_at_deleted_head_segment(timer_root):
    root, _ = timer_root
    timer = TimerStore(root, slots_total=8)
    slot = timer.slot(T0 + 7)
    full = timer.slot_units(slot)
    os.remove(timer.log_segments[0].path)  # expired head segment
    kept = timer.slot_units(slot)
    assert kept == [u for u in full if u.offset >= 348] and kept


def test_damaged_slot_chain_is_a_typed_error(tmp_path):
    writer = TimerLogWriter(segment_size=1000, slots_total=8)
    writer.append(encode_unit(UnitSpec(prev_pos=-1, magic=1, curr_write_time_ms=T0, delay_ms=0,
                                       commitlog_offset=0, commitlog_size=1)))
    writer.append(encode_unit(UnitSpec(prev_pos=UNIT_SIZE, magic=1, curr_write_time_ms=T0, delay_ms=0,
                                       commitlog_offset=0, commitlog_size=1)))  # points at itself
    writer.write(tmp_path, wheel=False)
    timer = TimerStore(tmp_path)
    with pytest.raises(TimerLogError) as err:
        timer.slot_units(TimerSlot(0, T0 // 1000, T0, 0, UNIT_SIZE, 2, 0))
    assert err.value.offset == UNIT_SIZE and "does not point back" in err.value.reason


def test_precision_changes_the_slot_index(tmp_path):
    writer = TimerLogWriter(segment_size=1000, slots_total=8, precision_ms=100)
    _fill(writer, 6, precision=100)
    writer.write(tmp_path)
    timer = TimerStore(tmp_path, precision_ms=100)
    due = T0 + 100 + 7
    slot = timer.slot(due)
    assert slot.index == (due // 100) % 16 and slot.time_units == due // 100 and slot.time_ms == due // 100 * 100
    assert [u.offset for u in timer.slot_units(slot)] == [
        off for off, s in writer.units if (s.curr_write_time_ms + s.delay_ms) // 100 == due // 100]


def test_wheel_size_not_a_multiple_of_32_is_a_typed_error(timer_root):
    root, _ = timer_root
    path = root / "timerwheel"
    with open(path, "ab") as f:
        f.write(b"\0" * 5)
    with pytest.raises(TimerWheelError) as err:
        _ = TimerStore(root).wheel
    assert err.value.path == str(path) and err.value.offset == 16 * SLOT_SIZE
    assert str(err.value) == f"{root.name}/timerwheel @ 0x{16 * SLOT_SIZE:x}: file is {16 * SLOT_SIZE + 5} " \
                             f"bytes, not a whole number of 32-byte slots"


def test_wheel_of_another_size_than_expected_is_a_typed_error(timer_root):
    root, _ = timer_root
    with pytest.raises(TimerWheelError) as err:
        _ = TimerStore(root, slots_total=SLOTS_TOTAL).wheel
    assert "38707200 expected" in err.value.reason


def test_empty_wheel_file_has_no_slots(tmp_path):
    (tmp_path / "timerwheel").write_bytes(b"")
    timer = TimerStore(tmp_path)
    assert timer.exists and timer.wheel.num_slots == 0 and timer.slot(T0) is None
    assert timer.wheel.slots_between(T0, T0 + 5000) == []


def test_full_size_wheel_is_memory_mapped(tmp_path):
    """The broker's wheel: 1,209,600 slots; a sparse file with one slot written."""
    path = tmp_path / "timerwheel"
    due = T0 + 123_456
    index = (due // 1000) % (2 * SLOTS_TOTAL)
    with open(path, "wb") as f:
        f.truncate(2 * SLOTS_TOTAL * SLOT_SIZE)
        f.seek(index * SLOT_SIZE)
        f.write(cs_slot.build({"time_units": due // 1000, "ofs_first": 52, "ofs_last": 520,
                               "num_messages": 3, "reserved": 0}))
    assert path.stat().st_size == 38_707_200
    with TimerWheel(path) as wheel:
        assert wheel.slots_total == SLOTS_TOTAL and wheel.num_slots == 1_209_600
        assert not wheel.slots.flags.writeable
        assert list(wheel.used_indexes()) == [index]
        assert wheel.slot(due) == (index, due // 1000, due // 1000 * 1000, 52, 520, 3, 0)
        assert wheel.slot(due + 2 * SLOTS_TOTAL * 1000) is None  # 14 days later, same index
        assert int(np.count_nonzero(wheel.slots["num_messages"])) == 1


# -- config/timercheck --------------------------------------------------------------------


def test_timercheck_reads_back_three_ways(timer_root):
    root, _ = timer_root
    path = root / "config" / "timercheck"
    assert path.stat().st_size == 4096
    cp = TimerStore(root).checkpoint()
    assert (cp.last_read_time_ms, cp.last_timer_log_flush_pos, cp.last_timer_queue_offset,
            cp.master_timer_queue_offset, cp.data_version_state_version, cp.data_version_timestamp,
            cp.data_version_counter) == (T0, 312, 14, 15, 2, T0 + 5, 9)
    assert cp.last_read_time.timestamp() * 1000 == T0
    with RocketmqTimerCheck.from_file(str(path)) as k:
        kv = (k.last_read_time_ms, k.ofs_last_timer_log_flush, k.last_timer_queue_offset,
              k.master_timer_queue_offset, k.data_version.state_version, k.data_version.timestamp,
              k.data_version.counter)
        assert k.reserved == bytes(4096 - 56)
    c = rocketmq_timer_check.parse_file(str(path))
    cv = (c.last_read_time_ms, c.ofs_last_timer_log_flush, c.last_timer_queue_offset, c.master_timer_queue_offset,
          c.data_version.state_version, c.data_version.timestamp, c.data_version.counter)
    assert kv == cv == (T0, 312, 14, 15, 2, T0 + 5, 9)


def test_truncated_timercheck_is_a_typed_error(timer_root):
    root, _ = timer_root
    path = root / "config" / "timercheck"
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(CheckpointError) as err:
        TimerStore(root).checkpoint()
    assert err.value.offset == 40 and str(err.value).startswith("config/timercheck @ 0x28: file ends after 40 bytes")
