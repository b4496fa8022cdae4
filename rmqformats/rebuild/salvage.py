"""``rebuild --salvage``: a commit log of every intact message the salvage walk reads, re-placed as the broker
appends it.

The broker's recovery (``CommitLog.recoverNormally`` / ``recoverAbnormally`` with
``checkMessageAndReturnSize``) stops at the first record that does not read, so the intact messages past
damage can only be kept in a new store by writing them again, at new positions, as
``CommitLog.DefaultAppendMessageCallback.doAppend`` writes a message:

- ``PHYSICALOFFSET`` is the record's new commit-log offset (recovery and the dispatch read the record at
  the offset the consume queue gives; a record elsewhere is not found);
- ``QUEUEOFFSET`` is assigned anew per topic and queue, in commit-log order, from the queue's first
  offset on (``ConsumeQueue.assignQueueOffset``): the hole a lost record leaves in a queue closes
  (``ConsumeQueue.putMessagePositionInfo`` expects each unit at the queue's end). Prepared and rolled-back
  transaction messages keep theirs (the broker assigns none to them); an inner-batch record advances its
  queue by ``INNER_NUM`` and its ``INNER_BASE`` is rewritten to match;
- a commit or rollback record's prepared-transaction offset (the half message's commit-log offset, which
  ``EndTransactionProcessor`` puts there) follows that record when it moved;
- the 5.2+ ``__CRC32#`` property is computed again over the rewritten record (``doAppend`` computes it
  after the offsets are written);
- a record that leaves fewer than 8 bytes free in its segment goes to the next, the rest of the segment
  filled by a BLANK record (``END_FILE_MIN_BLANK_LENGTH``), segments zero-filled to the configured size.

A record that stays where it was, with its queue offset, is copied as it is. Otherwise its offsets are
packed into the fixed-width runs of the generated layout (``MESSAGE_RUNS``); a record whose
``INNER_BASE`` changes is parsed and built again through the construct schema of the commit-log record
(:mod:`rmqformats.generated.construct`), as :mod:`rmqformats.synth.commitlog` builds records (the tests
check that both give the same bytes). Every other field and byte stays as it was. A message id derived from the offset (``MessageDecoder.createMessageId``:
store host and commit-log offset) changes with it. Where each message went is written, one JSON object per
line, into :data:`OFFSETS_FILE` in the new store as it is walked (never held in memory).
"""

from __future__ import annotations

import bisect
import json
import os
import re
import struct
from dataclasses import dataclass, field

import numpy as np

from .. import properties as props
from ..frames import to_numpy
from ..generated.construct import rocketmq_commitlog as cs
from ..generated.layouts import rocketmq_commitlog as layout
from ..message import crc32
from ..recovery.crosscheck import TRAN_PREPARED, TRAN_ROLLBACK, transaction_types
from ..synth.commitlog import encode_blank

#: The file of the new store that maps each old commit-log offset to the new one (JSON Lines).
OFFSETS_FILE = "salvage-offsets.jsonl"
_COLUMNS = ["commitLogOffset", "storeSize", "queueId", "queueOffset", "sysFlag", "preparedTransactionOffset",
            "topic", "propertiesString", "msgId"]
# The fixed-width runs of a message record, from the layout: the header (TOTALSIZE, MAGICCODE), the run
# holding QUEUEOFFSET and PHYSICALOFFSET, STORETIMESTAMP, and the run holding PREPAREDTRANSACTIONOFFSET.
_HEAD = struct.Struct(layout.RECORD_RUNS[0][1])
_RUN0 = struct.Struct(layout.MESSAGE_RUNS[0][1])
_STORE_TS = struct.Struct(layout.MESSAGE_RUNS[1][1])
_RUN2 = struct.Struct(layout.MESSAGE_RUNS[2][1])
_QO, _PHYS = layout.MESSAGE_RUNS[0][0].index("queue_offset"), layout.MESSAGE_RUNS[0][0].index("ofs_physical")
_SYS = layout.MESSAGE_RUNS[0][0].index("sys_flag")
_PREP = layout.MESSAGE_RUNS[2][0].index("ofs_prepared_transaction")
_PORT = struct.calcsize(layout.HOST_V4_RUNS[0][1])
_HOST = {False: layout.HOST_V4_VALUES["len_address"](None) + _PORT,
         True: layout.HOST_V6_VALUES["len_address"](None) + _PORT}
_BORN_V6, _STORE_V6 = layout.SYS_FLAG_BITS["is_born_host_v6"][0], layout.SYS_FLAG_BITS["is_store_host_v6"][0]
_INNER_BASE = re.compile("(^|\x02)(INNER_BASE\x01)(-?[0-9]+)")
_INNER_NUM = re.compile("(?:^|\x02)INNER_NUM\x01([0-9]+)")


class SalvageWriteError(Exception):
    """A salvaged record that cannot be placed in a segment of the configured size."""


@dataclass
class SalvagedLog:
    """What :func:`write_salvaged_commitlog` wrote."""

    #: Messages written.
    messages: int = 0
    #: Messages written at another commit-log offset than they had.
    moved: int = 0
    #: Messages given another queue offset than they had.
    requeued: int = 0
    #: The old commit-log offset of the first message moved or given another queue offset (``None``:
    #: none was; the new commit log holds the old one's records where they were).
    first_changed: int | None = None
    #: Where the broker's recovery of the old commit log stops: the first damaged byte (``None``: none).
    damage_start: int | None = None
    #: The end of the new commit log's data.
    data_end: int = 0
    #: Segment files written.
    segments: list = field(default_factory=list)
    #: The damaged ranges the salvage walk skipped.
    damaged: list = field(default_factory=list)
    #: The new queue offset of the first ``topic``/queue-0 message at or past :attr:`first_changed`
    #: per topic asked for (see ``follow``).
    first_queue_offset: dict = field(default_factory=dict)


def write_salvaged_commitlog(commitlog, folder: str, offsets_path: str, *, segment_size: int,
                             batch_size: int = 65536, follow: tuple[str, ...] = ()) -> SalvagedLog:
    """Write every message the salvage walk of ``commitlog`` reads into new segments of ``segment_size``
    bytes in ``folder`` (see the module docstring), and the offset map into ``offsets_path``.

    ``follow``: topics whose queue 0's new queue offset at the first changed message is recorded
    (the timer topic, whose checkpoint must go back to it).
    """
    segments = commitlog.segments
    base = segments[0].start_offset if segments else 0
    out = SalvagedLog(data_end=base)
    os.makedirs(folder, exist_ok=True)
    next_qo: dict[tuple[str, int], int] = {}
    # Where records moved, as runs of one shift (old offset the run starts at, new - old): a run ends
    # only at damage or a segment's end, so this stays small; a commit record's prepared offset is
    # looked up in it.
    run_starts: list[int] = []
    run_shifts: list[int] = []
    seg_starts = np.array([s.start_offset for s in segments], np.int64)
    writer = _SegmentWriter(folder, segment_size, out)
    pos = base
    walk = commitlog.batches(columns=_COLUMNS, salvage=True, decompress=False, batch_size=batch_size)
    reader = _SegmentReader(segments)
    try:
        with open(offsets_path, "w", encoding="utf-8") as mapping:
            for batch in walk:
                if not batch.num_rows:
                    continue
                offs = to_numpy(batch.column("commitLogOffset"))
                sizes = to_numpy(batch.column("storeSize"))
                qids = to_numpy(batch.column("queueId"))
                qoffs = to_numpy(batch.column("queueOffset"))
                trans = transaction_types(batch)
                prep = to_numpy(batch.column("preparedTransactionOffset"))
                topics = batch.column("topic").to_pylist()
                texts = batch.column("propertiesString").to_pylist()
                ids = batch.column("msgId").to_pylist()
                damage = [r.commitlog_offset for r in getattr(walk, "damaged", ()) or ()]
                first_damage = min(damage) if damage else None
                for i in range(batch.num_rows):
                    old, size = int(offs[i]), int(sizes[i])
                    seg = segments[int(np.searchsorted(seg_starts, old, side="right")) - 1]
                    raw = reader.read(seg, old - seg.start_offset, size)
                    left = segment_size - pos % segment_size
                    if size + 8 > left:  # doAppend: END_FILE_MIN_BLANK_LENGTH, a BLANK fills the segment
                        writer.put(pos, encode_blank(left))
                        pos += left
                    key, old_qo, tran = (topics[i], int(qids[i])), int(qoffs[i]), int(trans[i])
                    new_qo = _queue_offset(key, old_qo, tran, texts[i] or "", next_qo)
                    prepared = _moved(int(prep[i]), run_starts, run_shifts)
                    if pos == old and new_qo == old_qo and prepared == int(prep[i]):
                        data = raw  # where it was and as it was: the bytes copied
                    elif new_qo != old_qo and "INNER_BASE\x01" in (texts[i] or ""):
                        data = _rewrite(cs.record.parse(raw), len(raw), pos, new_qo, prepared)
                    else:
                        data = _patch(raw, pos, new_qo, prepared)
                    if len(data) + 8 > segment_size - pos % segment_size:
                        raise SalvageWriteError(f"{seg.path}: the record at commit-log offset {old} "
                                                f"({len(data)} bytes rewritten) does not fit a {segment_size}-byte "
                                                f"segment")
                    if not run_shifts or run_shifts[-1] != pos - old:
                        run_starts.append(old)
                        run_shifts.append(pos - old)
                    writer.put(pos, data)
                    changed = pos != old or new_qo != old_qo
                    if out.first_changed is None and (changed or (first_damage is not None and first_damage <= old)):
                        out.first_changed = old  # moved, requeued, or past damage (even where it kept its place)
                    if out.first_changed is not None and key[0] in follow and key[1] == 0 \
                            and key[0] not in out.first_queue_offset:
                        out.first_queue_offset[key[0]] = new_qo
                    out.moved += pos != old
                    out.requeued += new_qo != old_qo
                    old_id = ids[i] or ""
                    mapping.write(json.dumps({
                        "oldOffset": old, "newOffset": pos, "size": size, "topic": key[0], "queueId": key[1],
                        "oldQueueOffset": old_qo, "newQueueOffset": new_qo, "oldMsgId": old_id,
                        "newMsgId": old_id[:-16] + f"{pos:016X}" if len(old_id) > 16 else old_id}) + "\n")
                    out.messages += 1
                    pos += len(data)
    finally:
        writer.close()
        reader.close()
    out.data_end = pos
    out.damaged = list(getattr(walk, "damaged", ()) or ())
    if out.damaged:
        out.damage_start = min(r.commitlog_offset for r in out.damaged)
    return out


def _moved(offset: int, run_starts: list[int], run_shifts: list[int]) -> int:
    """The new offset of the record written before at old ``offset`` (0: none, kept)."""
    if offset <= 0:
        return offset
    i = bisect.bisect_right(run_starts, offset) - 1
    return offset + run_shifts[i] if i >= 0 else offset


class _SegmentReader:
    """Reads records of the old commit log, one segment file open at a time (read-only)."""

    def __init__(self, segments) -> None:
        self.path: str | None = None
        self.f = None

    def read(self, seg, at: int, size: int) -> bytes:
        if seg.path != self.path:
            self.close()
            self.f = open(seg.path, "rb")
            self.path = seg.path
        self.f.seek(at)
        return self.f.read(size)

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f, self.path = None, None


def _queue_offset(key: tuple, old_qo: int, tran: int, text: str, next_qo: dict) -> int:
    """The queue offset the broker assigns a record of queue ``key`` with properties ``text``
    (``ConsumeQueue.assignQueueOffset``, in commit-log order; an inner batch takes ``INNER_NUM``)."""
    # Prepared, rollback: doAppend sets no queue offset (0), nor advances the queue.
    if tran in (TRAN_PREPARED, TRAN_ROLLBACK):
        return old_qo
    new_qo = next_qo.get(key, old_qo)
    m = _INNER_NUM.search(text) if "INNER_NUM\x01" in text else None
    next_qo[key] = new_qo + (int(m.group(1)) if m else 1)
    return new_qo


def _rewrite(rec, size: int, pos: int, new_qo: int, prepared: int) -> bytes:
    """The record ``rec`` (``size`` bytes as it was) as the broker appends it at ``pos``, with queue offset
    ``new_qo`` (an inner batch's ``INNER_BASE`` following it) and prepared-transaction offset ``prepared``."""
    body = rec.body
    text = body.properties
    if new_qo != body.queue_offset and "INNER_BASE\x01" in text:
        text = _INNER_BASE.sub(lambda g: f"{g.group(1)}{g.group(2)}{new_qo}", text, count=1)
    body.ofs_physical, body.queue_offset, body.ofs_prepared_transaction = pos, new_qo, prepared
    if text != body.properties:
        grown = len(text.encode("utf-8")) - len(body.properties.encode("utf-8"))
        body.properties, body.len_properties, rec.len_record = text, body.len_properties + grown, size + grown
    data = cs.record.build(rec)
    if _has_crc_property(text):
        # doAppend writes the digits once the rest of the record is final (CRC32_RESERVED_LEN at the end).
        crc = crc32(data[: len(data) - props.CRC32_RESERVED])
        digits = "".join(str(crc // 10 ** i % 10) for i in range(10))
        body.properties = text[: -props.CRC32_RESERVED + len(props.CRC32) + 1] + digits + props.PROPERTY_SEPARATOR
        data = cs.record.build(rec)
    return data


def _patch(raw: bytes, pos: int, new_qo: int, prepared: int) -> bytes:
    """:func:`_rewrite` where the length stays (no ``INNER_BASE`` to rewrite): the three offsets packed
    into the record's fixed-width runs of the layout, and the ``__CRC32#`` digits computed again, without
    parsing the variable fields (the same bytes, checked against :func:`_rewrite` in the tests)."""
    b = bytearray(raw)
    at = _HEAD.size
    run = list(_RUN0.unpack_from(b, at))
    run[_QO], run[_PHYS] = new_qo, pos
    _RUN0.pack_into(b, at, *run)
    sys_flag = run[_SYS]
    at += _RUN0.size + _HOST[bool(sys_flag & _BORN_V6)] + _STORE_TS.size + _HOST[bool(sys_flag & _STORE_V6)]
    run = list(_RUN2.unpack_from(b, at))
    run[_PREP] = prepared
    _RUN2.pack_into(b, at, *run)
    tail = bytes(b[-props.CRC32_RESERVED:])
    if _has_crc_property(tail.decode("latin-1")):
        crc = crc32(bytes(b[: len(b) - props.CRC32_RESERVED]))
        b[-11:-1] = "".join(str(crc // 10 ** i % 10) for i in range(10)).encode("ascii")
    return bytes(b)


def _has_crc_property(text: str) -> bool:
    tail = text[-props.CRC32_RESERVED:]
    return len(tail) == props.CRC32_RESERVED and tail.startswith(props.CRC32 + props.NAME_VALUE_SEPARATOR) \
        and tail.endswith(props.PROPERTY_SEPARATOR)


class _SegmentWriter:
    """Segment files of the new commit log, each zero-filled to the segment size as a mapped file is."""

    def __init__(self, folder: str, segment_size: int, out: SalvagedLog) -> None:
        self.folder, self.size, self.out = folder, segment_size, out
        self.start: int | None = None
        self.f = None

    def put(self, pos: int, data: bytes) -> None:
        start = pos - pos % self.size
        if start != self.start:
            self.close()
            path = os.path.join(self.folder, f"{start:020d}")
            self.f = open(path, "xb")
            self.f.truncate(self.size)
            self.start = start
            self.out.segments.append(path)
        self.f.seek(pos - start)
        self.f.write(data)

    def close(self) -> None:
        if self.f is not None:
            self.f.flush()
            os.fsync(self.f.fileno())
            self.f.close()
            self.f = None
