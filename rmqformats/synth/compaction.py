"""Building compaction logs and compaction consume queues through the generated construct schemas.

:func:`write_compaction` follows ``CompactionLog`` (5.1.0+) for one topic
queue: each kept record is copied into ``compaction/compactionLog/<topic>/<queueId>/``
with PHYSICALOFFSET replaced by its position in the compaction log (the
``__CRC32#`` property, if any, is not recomputed, as in the broker), a BLANK
record ends a log file when the next record does not leave 8 bytes, and a
46-byte unit per record (batch size 1, base offset = the record's queue
offset) goes to ``compaction/compactionCq/<topic>/<queueId>/``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from ..commitlog import decode_message
from ..consumequeue import tags_code
from .commitlog import encode_blank
from .dledger import relocate_record
from .queues import BcqUnitSpec, write_batch_consumequeue

#: ``END_FILE_MIN_BLANK_LENGTH``.
MIN_BLANK = 8


def _file(files: dict[int, bytearray], start: int, size: int) -> bytearray:
    """The log file starting at ``start``, made zeroed when first written (not at every record)."""
    if start not in files:
        files[start] = bytearray(size)
    return files[start]


def write_compaction(root: str | os.PathLike[str], topic: str, queue_id: int, records: Iterable[bytes], *,
                     log_file_size: int, cq_units_per_file: int, sub_folder: str = "") -> list[tuple[int, int]]:
    """Write the compaction log and queue of ``topic``/``queue_id`` under ``<root>/compaction``.

    Returns ``(compaction-log offset, queue offset)`` of each record.
    """
    base = os.path.join(os.fspath(root), "compaction")
    log_dir = os.path.join(base, "compactionLog", topic, str(queue_id), sub_folder)
    cq_dir = os.path.join(base, "compactionCq", topic, str(queue_id), sub_folder)
    os.makedirs(log_dir, exist_ok=True)
    files: dict[int, bytearray] = {}
    units: list[BcqUnitSpec] = []
    placed = []
    offset = 0
    for record in records:
        left = log_file_size - offset % log_file_size
        if len(record) + MIN_BLANK > left:
            start = offset - offset % log_file_size
            _file(files, start, log_file_size)[log_file_size - left:log_file_size - left + 8] = \
                encode_blank(left)
            offset += left
        data = relocate_record(record, offset, recompute_crc=False)
        m = decode_message(data, 0)
        start = offset - offset % log_file_size
        _file(files, start, log_file_size)[offset - start:offset - start + len(data)] = data
        units.append(BcqUnitSpec(offset, len(data), tags_code(m.tags), m.store_timestamp, m.queue_offset))
        placed.append((offset, m.queue_offset))
        offset += len(data)
    for start, buf in files.items():
        with open(os.path.join(log_dir, f"{start:020d}"), "wb") as f:
            f.write(buf)
    write_batch_consumequeue(cq_dir, units, units_per_file=cq_units_per_file)
    return placed


def write_position_checkpoint(root: str | os.PathLike[str], offsets: dict[tuple[str, int], int]) -> str:
    """``compaction/position-checkpoint`` as ``CompactionPositionMgr`` persists it (fastjson, pretty)."""
    path = os.path.join(os.fspath(root), "compaction", "position-checkpoint")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    table = {f"{t}_{q}": v for (t, q), v in offsets.items()}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"empty": not table, "queueOffsetMap": table}, indent="\t"))
    return path
