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
- a commit or rollback record's prepared-transaction offset follows its prepared record when that moved;
- the 5.2+ ``__CRC32#`` property is computed again over the rewritten record (``doAppend`` computes it
  after the offsets are written);
- a record that leaves fewer than 8 bytes free in its segment goes to the next, the rest of the segment
  filled by a BLANK record (``END_FILE_MIN_BLANK_LENGTH``), segments zero-filled to the configured size.

Records are parsed and built again through the construct schema of the commit-log record
(:mod:`rmqformats.generated.construct`), as :mod:`rmqformats.synth.commitlog` builds them; every other
field and byte stays as it was. A message id derived from the offset (``MessageDecoder.createMessageId``:
store host and commit-log offset) changes with it. Where each message went is written, one JSON object per
line, into :data:`OFFSETS_FILE` in the new store as it is walked (never held in memory).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

import numpy as np

from .. import properties as props
from ..generated.construct import rocketmq_commitlog as cs
from ..message import crc32
from ..synth.commitlog import encode_blank

#: The file of the new store that maps each old commit-log offset to the new one (JSON Lines).
OFFSETS_FILE = "salvage-offsets.jsonl"
#: ``MessageSysFlag.TRANSACTION_PREPARED_TYPE`` and ``TRANSACTION_ROLLBACK_TYPE`` (``transaction_type`` enum).
_NO_QUEUE_OFFSET = ("prepared", "rollback")
_COLUMNS = ["commitLogOffset", "storeSize", "msgId"]
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
    prepared_moved: dict[int, int] = {}
    seg_starts = np.array([s.start_offset for s in segments], np.int64)
    writer = _SegmentWriter(folder, segment_size, out)
    pos = base
    walk = commitlog.batches(columns=_COLUMNS, salvage=True, decompress=False, batch_size=batch_size)
    try:
        with open(offsets_path, "w", encoding="utf-8") as mapping:
            for batch in walk:
                if not batch.num_rows:
                    continue
                offs = batch.column("commitLogOffset").to_numpy()
                sizes = batch.column("storeSize").to_numpy()
                ids = batch.column("msgId").to_pylist()
                for i in range(batch.num_rows):
                    old, size = int(offs[i]), int(sizes[i])
                    seg = segments[int(np.searchsorted(seg_starts, old, side="right")) - 1]
                    raw = _read(seg.path, old - seg.start_offset, size)
                    left = segment_size - pos % segment_size
                    if size + 8 > left:  # doAppend: END_FILE_MIN_BLANK_LENGTH, a BLANK fills the segment
                        writer.put(pos, encode_blank(left))
                        pos += left
                    rec = cs.record.parse(raw)
                    data, key, old_qo, new_qo = _rewrite(rec, raw, pos, next_qo, prepared_moved)
                    if len(data) + 8 > segment_size - pos % segment_size:
                        raise SalvageWriteError(f"{seg.path}: the record at commit-log offset {old} "
                                                f"({len(data)} bytes rewritten) does not fit a {segment_size}-byte "
                                                f"segment")
                    if rec.body.sys_flag.transaction_type == "prepared" and pos != old:
                        prepared_moved[old] = pos
                    writer.put(pos, data)
                    changed = pos != old or new_qo != old_qo
                    if changed and out.first_changed is None:
                        out.first_changed = old
                    damage = [r.commitlog_offset for r in getattr(walk, "damaged", ()) or ()]
                    if damage and min(damage) <= old and out.first_changed is None:
                        out.first_changed = old  # past damage (even where it kept its place)
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
    out.data_end = pos
    out.damaged = list(getattr(walk, "damaged", ()) or ())
    if out.damaged:
        out.damage_start = min(r.commitlog_offset for r in out.damaged)
    return out


def _read(path: str, at: int, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(at)
        return f.read(size)


def _rewrite(rec, raw: bytes, pos: int, next_qo: dict, prepared_moved: dict) -> tuple[bytes, tuple, int, int]:
    """The record ``rec`` (parsed from ``raw``) as the broker appends it at ``pos``; its queue key, old and
    new queue offsets."""
    body = rec.body
    key = (body.topic, body.queue_id)
    old_qo = body.queue_offset
    text = body.properties
    if body.sys_flag.transaction_type in _NO_QUEUE_OFFSET:
        new_qo = old_qo
    else:
        new_qo = next_qo.get(key, old_qo)
        m = _INNER_NUM.search(text) if body.sys_flag.is_inner_batch or "INNER_NUM" in text else None
        next_qo[key] = new_qo + (int(m.group(1)) if m else 1)
        if new_qo != old_qo and "INNER_BASE\x01" in text:
            text = _INNER_BASE.sub(lambda g: f"{g.group(1)}{g.group(2)}{new_qo}", text, count=1)
    prepared = prepared_moved.get(body.ofs_prepared_transaction, body.ofs_prepared_transaction)
    if pos == body.ofs_physical and new_qo == old_qo and prepared == body.ofs_prepared_transaction \
            and text == body.properties:
        return raw, key, old_qo, new_qo
    body.ofs_physical, body.queue_offset, body.ofs_prepared_transaction = pos, new_qo, prepared
    if text != body.properties:
        grown = len(text.encode("utf-8")) - len(body.properties.encode("utf-8"))
        body.properties, body.len_properties, rec.len_record = text, body.len_properties + grown, len(raw) + grown
    data = cs.record.build(rec)
    if _has_crc_property(text):
        # doAppend writes the digits once the rest of the record is final (CRC32_RESERVED_LEN at the end).
        crc = crc32(data[: len(data) - props.CRC32_RESERVED])
        digits = "".join(str(crc // 10 ** i % 10) for i in range(10))
        body.properties = text[: -props.CRC32_RESERVED + len(props.CRC32) + 1] + digits + props.PROPERTY_SEPARATOR
        data = cs.record.build(rec)
    return data, key, old_qo, new_qo


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
