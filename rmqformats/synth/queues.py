"""Building queue files through the generated construct schemas.

Tests use this for what the real stores lack: consume queue extensions
(``enableConsumeQueueExt`` is off in the vectors), batch consume queues with
several files or deleted head files, and units to damage. Bytes come from ``generated/construct``
built from field values, never from a second hand-written encoder; the
placement rules (which file a unit goes to, the end marker, the zero-filled
pre-allocated tail) follow the broker's writers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

from ..consumequeue_ext import DEFAULT_FILE_SIZE, END_BLANK_DATA_LENGTH, MIN_EXT_UNIT_SIZE, ext_address
from ..generated.construct import rocketmq_batch_consumequeue as cs_bcq
from ..generated.construct import rocketmq_consumequeue_ext as cs_ext
from ..generated.layouts import rocketmq_batch_consumequeue as bcq_layout
from ..units import unit_dtype

QUEUE_FILE_NAME = "{:020d}"

# -- consume queue extension ---------------------------------------------------------------


class ExtUnitSpec(NamedTuple):
    """The values of one ``CqExtUnit`` to write."""

    tags_code: int
    msg_store_time: int
    filter_bitmap: bytes = b""


def _ext_unit_fields(spec: ExtUnitSpec) -> dict:
    return {"len_unit": MIN_EXT_UNIT_SIZE + len(spec.filter_bitmap),
            "body": {"tags_code": spec.tags_code, "msg_store_time": spec.msg_store_time,
                     "len_filter_bit_map": len(spec.filter_bitmap), "filter_bit_map": spec.filter_bitmap}}


def encode_ext_unit(spec: ExtUnitSpec) -> bytes:
    """The bytes of one extension unit (``CqExtUnit.write``)."""
    return cs_ext.unit.build(_ext_unit_fields(spec))


def encode_ext_end_marker() -> bytes:
    """The 2-byte end-of-file marker ``fullFillToEnd`` writes (size -1)."""
    return cs_ext.unit.build({"len_unit": -1, "body": None})


def write_consumequeue_ext(folder: str | os.PathLike[str], units: Iterable[ExtUnitSpec], *,
                           file_size: int = DEFAULT_FILE_SIZE, first_file: int = 0) -> list[int]:
    """Write ``units`` as ``ConsumeQueueExt.put`` would; returns the address of each.

    Writing starts at file number ``first_file`` (a later one stands for
    head files already deleted). A unit that does not fit in the space left
    minus ``END_BLANK_DATA_LENGTH`` closes the file with the end marker and
    goes to the next file. Every file is ``file_size`` bytes, zero-filled
    after its data like a pre-allocated mapped file.
    """
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    addresses: list[int] = []
    files: list[tuple[int, list[dict], dict]] = []  # (file start, units, what ends the data)
    file_start, wrote, current = first_file * file_size, 0, []
    for spec in units:
        fields = _ext_unit_fields(spec)
        if fields["len_unit"] > file_size - wrote - END_BLANK_DATA_LENGTH:
            files.append((file_start, current, {"len_unit": -1, "body": None}))
            file_start, wrote, current = file_start + file_size, 0, []
        addresses.append(ext_address(file_start + wrote))
        current.append(fields)
        wrote += fields["len_unit"]
    files.append((file_start, current, {"len_unit": 0, "body": None}))
    for start, fields, end in files:
        data = cs_ext.rocketmq_consumequeue_ext.build({"units": fields + [end]})
        with open(os.path.join(folder, QUEUE_FILE_NAME.format(start)), "wb") as f:
            f.write(data.ljust(file_size, b"\0"))
    return addresses


# -- batch consume queue ---------------------------------------------------------------------

#: Size of a batch consume-queue unit (``CQ_STORE_UNIT_SIZE``).
BCQ_UNIT_SIZE = unit_dtype(bcq_layout.UNIT_RUNS, bcq_layout.UNIT_SEQ).itemsize


class BcqUnitSpec(NamedTuple):
    """The values of one batch consume-queue unit, as ``putBatchMessagePositionInfo`` writes them."""

    commitlog_offset: int
    size: int
    tags_code: int
    store_time: int
    msg_base_offset: int
    batch_size: int = 1
    compacted_offset: int = -1
    reserved: int = 0


def _bcq_fields(spec: BcqUnitSpec) -> dict:
    return dict(zip(bcq_layout.UNIT_SEQ, spec))


def encode_bcq_unit(spec: BcqUnitSpec) -> bytes:
    """The 46 bytes of one batch consume-queue unit."""
    return cs_bcq.unit.build(_bcq_fields(spec))


def encode_bcq_end_of_file() -> bytes:
    """The end-of-file unit of a compaction consume queue (``SparseConsumeQueue.putEndPositionInfo``)."""
    return encode_bcq_unit(BcqUnitSpec(-1, 0, 0, 0, 0, 0, -1, 0))


def write_batch_consumequeue(folder: str | os.PathLike[str], units: Iterable[BcqUnitSpec], *,
                             units_per_file: int = 300_000, first_file: int = 0) -> list[str]:
    """Write ``units`` into files of ``units_per_file`` units, the first being file number ``first_file``.

    As in the broker, units fill each file from its start (a later
    ``first_file`` stands for head files already deleted). Files are named
    by the stream position of their first byte and zero-filled after the
    last unit, like pre-allocated mapped files. Returns the paths written.
    """
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    encoded = [encode_bcq_unit(spec) for spec in units]
    file_bytes = units_per_file * BCQ_UNIT_SIZE
    paths = []
    for i in range(0, max(len(encoded), 1), units_per_file):
        start = (first_file * units_per_file + i) * BCQ_UNIT_SIZE
        path = os.path.join(folder, QUEUE_FILE_NAME.format(start))
        with open(path, "wb") as f:
            f.write(b"".join(encoded[i:i + units_per_file]).ljust(file_bytes, b"\0"))
        paths.append(path)
    return paths
