"""Queue and timer files of the old store carried into a rebuilt one, cut at the new data end as the broker cuts them.

- A consume queue (or batch consume queue) the walk wrote no unit for is
  copied, then cut as ``ConsumeQueue.truncateDirtyLogicFiles(phyOffset)``
  (``BatchConsumeQueue.truncateDirtyLogicFiles``; called by
  ``DefaultMessageStore.truncateDirtyLogicFiles`` →
  ``ConsumeQueueStore.truncateDirty`` after ``CommitLog.recoverNormally`` /
  ``recoverAbnormally``, rocketmq-all-5.3.3) cuts it: from the last file
  back, a file whose first unit points at or past the data end is deleted;
  in the first file that is not, the units from the first one at or past
  the end (or the first invalid one) are removed. What is left are the units
  of messages in deleted head segments; a queue with nothing left is not
  written (the broker deletes all its files).
- The timer log is cut at its first unit that points past the data end: the
  broker's ``TimerMessageStore.recover`` then takes the queue offset to read
  the ``rmq_sys_wheel_timer`` queue from after the last unit kept
  (``reviseQueueOffset``), so nothing kept is enqueued twice and nothing
  past the end is delivered. The wheel's slots lose the units cut (their
  ``lastPos`` goes back along the ``prevPos`` chain, a slot with none left
  is cleared), and ``config/timercheck`` is lowered to match.
"""

from __future__ import annotations

import os
import shutil
import struct
from dataclasses import dataclass

import numpy as np

from ..generated.layouts import rocketmq_timer_check as check_layout
from ..queuefiles import queue_files
from ..timer import SLOT_DTYPE, SLOT_SIZE, TIMER_CHECK_FILE, TIMER_LOG_DIR, TIMER_WHEEL_FILE, UNIT_SIZE, TimerStore

_COPY_CHUNK = 8 << 20
_CHECK = struct.Struct(check_layout.ENDIAN + check_layout.ROCKETMQ_TIMER_CHECK_RUNS[0][1][1:])
_CHECK_NAMES = check_layout.ROCKETMQ_TIMER_CHECK_RUNS[0][0]


def copy_prefix(src: str, dst: str, length: int, size: int) -> None:
    """Copy the first ``length`` bytes of ``src`` into ``dst`` of ``size`` bytes (zero-filled after)."""
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        left = length
        while left > 0:
            chunk = fi.read(min(_COPY_CHUNK, left))
            if not chunk:
                break
            fo.write(chunk)
            left -= len(chunk)
        fo.truncate(size)


@dataclass
class CutQueue:
    """A queue copied from the old store and cut at the data end."""

    rel: str
    kept_units: int
    removed_units: int


def cut_queue_copy(src: str, dst: str, data_end: int, dtype: np.dtype) -> CutQueue | None:
    """Copy the queue folder ``src`` to ``dst`` cut at ``data_end`` (``truncateDirtyLogicFiles``).

    ``dtype``: the unit layout (its first field the commit-log offset, its
    second the size). Returns ``None`` when no unit is left (nothing written).
    """
    files = list(queue_files(src))
    ofs, size = (dtype.names or ())[:2]
    unit = dtype.itemsize
    removed = 0
    keep_upto = None  # (index of the last kept file, units kept in it)
    for i in range(len(files) - 1, -1, -1):
        f = files[i]
        with open(f.path, "rb") as fh:
            data = fh.read(f.size - f.size % unit)
        units = np.frombuffer(data, dtype)
        if not len(units):
            continue
        valid = (units[ofs] >= 0) & (units[size] > 0)
        nvalid = int(np.argmin(valid)) if not valid.all() else len(units)
        if int(units[ofs][0]) >= data_end:  # the first unit at or past the end: the file is deleted
            removed += nvalid
            continue
        past = np.flatnonzero((units[ofs][:nvalid] >= data_end))
        n = int(past[0]) if len(past) else nvalid
        removed += nvalid - n
        keep_upto = (i, max(n, 1))
        break
    if keep_upto is None:
        return None
    last, n = keep_upto
    os.makedirs(dst, exist_ok=True)
    kept_units = 0
    for f in files[:last]:
        shutil.copy2(f.path, os.path.join(dst, os.path.basename(f.path)))
        kept_units += f.size // unit
    f = files[last]
    copy_prefix(f.path, os.path.join(dst, os.path.basename(f.path)), n * unit, f.size)
    return CutQueue(dst, kept_units + n, removed)


@dataclass
class TimerCut:
    """What cutting the timer files at the data end removed."""

    #: Timer-log offset of the first unit removed (``None``: nothing removed).
    cut: int | None = None
    units_removed: int = 0
    slots_changed: int = 0
    slots_cleared: int = 0


def copy_timer(root: str, new: str, data_end: int | None, first_offset: int,
               timer_queue_end: int | None) -> TimerCut:
    """Copy ``timerlog/``, ``timerwheel`` and ``config/timercheck`` of ``root`` into ``new``, cut at ``data_end``.

    ``first_offset``: the commit-log offset of the first segment kept (units
    pointing before it point at deleted segments and are kept, as the broker
    keeps them); ``timer_queue_end``: the end of the rebuilt
    ``rmq_sys_wheel_timer`` queue 0 (the checkpoint's queue offsets are
    lowered to it).
    """
    ts = TimerStore(root)
    result = TimerCut()
    log_dst = os.path.join(new, TIMER_LOG_DIR)
    if not os.path.isdir(ts.log_folder):
        for rel in (TIMER_WHEEL_FILE, TIMER_CHECK_FILE):
            _copy_if_there(os.path.join(root, rel), os.path.join(new, rel))
        return result
    cut = None
    n_after = 0
    if data_end is not None:
        for u in ts.scan():
            if cut is None and u.commitlog_offset >= first_offset and u.commitlog_offset + u.commitlog_size > data_end:
                cut = u.offset
            if cut is not None:
                n_after += 1
    result.cut, result.units_removed = cut, n_after
    os.makedirs(log_dst, exist_ok=True)
    for seg in ts.log_segments:
        dst = os.path.join(log_dst, os.path.basename(seg.path))
        if cut is None or seg.start + seg.size <= cut:
            shutil.copy2(seg.path, dst)
        elif seg.start <= cut:
            copy_prefix(seg.path, dst, cut - seg.start, seg.size)
    wheel_src = os.path.join(root, TIMER_WHEEL_FILE)
    wheel_dst = os.path.join(new, TIMER_WHEEL_FILE)
    if os.path.isfile(wheel_src):
        shutil.copy2(wheel_src, wheel_dst)
        if cut is not None:
            _cut_wheel(ts, wheel_dst, cut, result)
    check_src = os.path.join(root, TIMER_CHECK_FILE)
    check_dst = os.path.join(new, TIMER_CHECK_FILE)
    if os.path.isfile(check_src):
        os.makedirs(os.path.dirname(check_dst), exist_ok=True)
        shutil.copy2(check_src, check_dst)
        if cut is not None or timer_queue_end is not None:
            _cut_check(check_dst, cut, timer_queue_end)
    return result


def _copy_if_there(src: str, dst: str) -> None:
    if os.path.isfile(src):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def _read_prev(segments, pos: int) -> int:
    """``prevPos`` of the timer-log unit at timer-log offset ``pos`` (-1 when no file holds it)."""
    for seg in segments:
        if seg.start <= pos and pos + UNIT_SIZE <= seg.start + seg.size:
            with open(seg.path, "rb") as f:
                f.seek(pos - seg.start + 4)
                return int.from_bytes(f.read(8), "big", signed=True)
    return -1


def _cut_wheel(ts: TimerStore, path: str, cut: int, result: TimerCut) -> None:
    """Slots whose units lie at or after ``cut``: ``lastPos`` moved back along ``prevPos``, or cleared."""
    fields = SLOT_DTYPE.names or ()
    _time, first_f, last_f, num_f = fields[:4]
    segments = ts.log_segments
    with open(path, "r+b") as f:
        size = os.fstat(f.fileno()).st_size
        step = (1 << 20) // SLOT_SIZE * SLOT_SIZE
        for base in range(0, size - size % SLOT_SIZE, step):
            f.seek(base)
            slots = np.frombuffer(f.read(min(step, size - base) // SLOT_SIZE * SLOT_SIZE), SLOT_DTYPE).copy()
            used = (slots[_time] != 0) | (slots[first_f] != 0) | (slots[last_f] != 0)
            hit = np.flatnonzero(used & ((slots[first_f] >= cut) | (slots[last_f] >= cut)))
            for i in hit.tolist():
                s = slots[i]
                pos, removed = int(s[last_f]), 0
                while pos >= cut:
                    pos = _read_prev(segments, pos)
                    removed += 1
                if pos < 0 or int(s[first_f]) >= cut:
                    slots[i] = np.zeros(1, SLOT_DTYPE)[0]
                    result.slots_cleared += 1
                else:
                    slots[i][last_f] = pos
                    slots[i][num_f] = max(0, int(s[num_f]) - removed)
                    result.slots_changed += 1
                f.seek(base + i * SLOT_SIZE)
                f.write(slots[i:i + 1].tobytes())


def _cut_check(path: str, cut: int | None, queue_end: int | None) -> None:
    """``lastTimerLogFlushPos`` lowered to the cut, the queue offsets to the timer queue's new end."""
    with open(path, "r+b") as f:
        data = f.read(_CHECK.size)
        if len(data) < _CHECK.size:
            return  # an unreadable checkpoint is copied as it is (check reports it)
        v = dict(zip(_CHECK_NAMES, _CHECK.unpack(data)))
        if cut is not None:
            v["ofs_last_timer_log_flush"] = min(v["ofs_last_timer_log_flush"], cut)
        if queue_end is not None:
            for name in ("last_timer_queue_offset", "master_timer_queue_offset"):
                v[name] = min(v[name], queue_end)
        f.seek(0)
        f.write(_CHECK.pack(*(v[n] for n in _CHECK_NAMES)))


@dataclass
class RocksDBMessagesCut:
    """Records of the RocksDB message store (``rocksdbstore/``) left out of the rebuilt one."""

    timer: int = 0
    trans: int = 0
    index: int = 0


def copy_rocksdb_message_store(src: str, dst: str, data_end: int, first_offset: int,
                               timer_queue_end: int | None) -> RocksDBMessagesCut:
    """Write the 5.4+ RocksDB message store ``src`` anew at ``dst`` without the records pointing past
    ``data_end``: timer and transaction records whose message does not end before it, index records of
    messages at or past it (records of deleted head segments are kept, as the broker keeps them). The
    progress marks follow: ``lastOffsetPy`` (and the index's ``lastStoreTimeStamp``) from the records
    kept, the timer's ``sys_topic_scan_offset_checkpoint`` lowered to the end of the rebuilt
    ``rmq_sys_wheel_timer`` queue, so the timer engine reads again what it had not stored a record for.
    """
    from ..rocksdb.messagestore import CF_TIMER, RocksDBMessageStore
    from ..synth.rocksdb import write_rocksdb_message_store
    cut = RocksDBMessagesCut()

    def keep(offset: int, end: int) -> bool:
        return offset < first_offset or end <= data_end

    with RocksDBMessageStore(src) as ms:
        marks = ms.marks(CF_TIMER)

        def timer():
            for e in ms.timer_entries():
                if keep(e.commitlog_offset, e.commitlog_offset + e.size):
                    yield e.delivery_time, e.uniq_key, e.commitlog_offset, e.size
                else:
                    cut.timer += 1

        def trans():
            for t in ms.trans_entries():
                if keep(t.commitlog_offset, t.commitlog_offset + t.size):
                    yield t.commitlog_offset, t.topic, t.uniq_key, t.check_times, t.size
                else:
                    cut.trans += 1

        def index():
            for x in ms.index_entries():
                if keep(x.commitlog_offset, x.commitlog_offset + 1):
                    yield x.store_timestamp, x.topic, x.index_type, x.key, x.uniq_key, x.commitlog_offset
                else:
                    cut.index += 1

        scan = marks.get("sys_topic_scan_offset_checkpoint")
        if scan is not None and timer_queue_end is not None:
            scan = min(scan, timer_queue_end)
        write_rocksdb_message_store(dst, timer=timer(), trans=trans(), index=index(), timer_scan_offset=scan,
                                    timeline=marks.get("timeline_checkpoint"))
    return cut
