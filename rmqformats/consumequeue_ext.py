"""Consume queue extensions (``consumequeue_ext/<topic>/<queueId>/``): ext addresses and units.

With ``enableConsumeQueueExt`` the broker writes, per message, a
variable-length unit (tags hash, store time, SQL92 filter bitmap) to the
queue's extension files and stores the unit's *ext address* in the
consume-queue unit's tags-code field instead of the tags hash. The unit
layout is ``formats/rocketmq_consumequeue_ext.ksy``; the address encoding
follows ``ConsumeQueueExt.decorate`` / ``unDecorate``: an address is the
unit's offset in the extension's byte stream plus ``Long.MIN_VALUE``.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from .errors import ExtUnitError, ExtUnitNotFoundError
from .generated.layouts import rocketmq_consumequeue_ext as layout
from .mapped import FileImage
from .queuefiles import QueueFile, queue_files

assert layout.UNIT_SEQ == ("len_unit", "body")
assert layout.UNIT_BODY_SEQ == ("tags_code", "msg_store_time", "len_filter_bit_map", "filter_bit_map")
_LEN = struct.Struct(layout.UNIT_RUNS[0][1])
_BODY = struct.Struct(layout.UNIT_BODY_RUNS[0][1])
_IS_UNIT = layout.UNIT_VALUES["is_unit"]
_IS_END_MARKER = layout.UNIT_VALUES["is_end_marker"]
_LEN_COMPUTED = layout.UNIT_BODY_VALUES["len_unit_computed"]

#: Size of a unit without bitmap (``CqExtUnit.MIN_EXT_UNIT_SIZE``): the size field and the fixed fields.
MIN_EXT_UNIT_SIZE = _LEN.size + _BODY.size
#: Largest unit the writer accepts (``CqExtUnit.MAX_EXT_UNIT_SIZE = Short.MAX_VALUE``).
MAX_EXT_UNIT_SIZE = (1 << (8 * _LEN.size - 1)) - 1
#: Bytes the writer keeps free at the end of a file for the end marker (``END_BLANK_DATA_LENGTH``).
END_BLANK_DATA_LENGTH = 4
#: Default file size (``mappedFileSizeConsumeQueueExt``, 48 MiB).
DEFAULT_FILE_SIZE = 48 << 20

#: Java ``Long.MIN_VALUE``, added to a stream offset to make an address.
_LONG_MIN = -(1 << 63)
#: Largest ext address (``ConsumeQueueExt.MAX_ADDR = Integer.MIN_VALUE - 1``); tags hashes are above it.
MAX_ADDR = -(1 << 31) - 1
#: Largest stream offset an address can encode (``MAX_REAL_OFFSET``).
MAX_REAL_OFFSET = MAX_ADDR - _LONG_MIN


def is_ext_address(tags_code: int) -> bool:
    """Whether a consume-queue tags code is an ext address (``ConsumeQueueExt.isExtAddr``).

    Tags hashes are sign-extended 32-bit ints and delay delivery times are
    positive, so only an address is at most ``MAX_ADDR``.
    """
    return tags_code <= MAX_ADDR


def ext_offset(tags_code: int) -> int:
    """The stream offset an ext address encodes (``unDecorate``); ``ValueError`` for a tags hash."""
    if not is_ext_address(tags_code):
        raise ValueError(f"tags code {tags_code} is not an ext address (addresses are <= {MAX_ADDR})")
    return tags_code - _LONG_MIN


def ext_address(offset: int) -> int:
    """The ext address of stream ``offset`` (``decorate``), as the broker stores it in a consume queue."""
    if not 0 <= offset <= MAX_REAL_OFFSET:
        raise ValueError(f"stream offset {offset} is outside [0, {MAX_REAL_OFFSET}]")
    return offset + _LONG_MIN


class ExtUnit(NamedTuple):
    """One ``CqExtUnit``: the values a consume-queue unit's ext address leads to."""

    #: Offset of the unit in the extension's byte stream (file start + position).
    ext_offset: int
    #: Size of the unit in bytes (20 + bitmap length).
    size: int
    #: The message's real tags hash.
    tags_code: int
    #: STORETIMESTAMP of the message, in milliseconds since the Unix epoch.
    msg_store_time: int
    #: The SQL92 filter bloom bitmap (empty when the message has none).
    filter_bitmap: bytes

    @property
    def address(self) -> int:
        """The ext address a consume-queue unit holds for this unit."""
        return ext_address(self.ext_offset)


def _decode(buf, pos: int, end: int, path: str, file_pos: int, offset: int) -> ExtUnit | None:
    """The unit at ``pos`` of ``buf`` (data up to ``end``); ``None`` at the end of the file's data.

    ``file_pos`` and ``offset`` are the file position and stream offset of
    ``buf[pos]``, for errors and the result. The end is a size below 1 (the
    -1 end marker or the zero-filled tail), or fewer than two bytes left.
    Sizes and bitmap lengths are checked before anything past the size
    field is read.
    """
    if pos + _LEN.size > end:
        return None
    (size,) = _LEN.unpack_from(buf, pos)
    if not _IS_UNIT({"len_unit": size}):
        return None
    if size < MIN_EXT_UNIT_SIZE:
        raise ExtUnitError(path, file_pos, f"unit size {size} is below the {MIN_EXT_UNIT_SIZE}-byte minimum")
    if size > MAX_EXT_UNIT_SIZE:  # cannot happen with a 2-byte size; kept as the writer's bound
        raise ExtUnitError(path, file_pos, f"unit size {size} is above {MAX_EXT_UNIT_SIZE}")
    if pos + size > end:
        raise ExtUnitError(path, file_pos, f"{size}-byte unit runs past the end of the file "
                                           f"({end - pos} bytes left)")
    tags, store_time, len_bitmap = _BODY.unpack_from(buf, pos + _LEN.size)
    if len_bitmap < 0 or _LEN_COMPUTED({"len_filter_bit_map": len_bitmap}) != size:
        raise ExtUnitError(path, file_pos, f"bitmap length {len_bitmap} does not match unit size {size} "
                                           f"(expected {size - MIN_EXT_UNIT_SIZE})")
    start = pos + MIN_EXT_UNIT_SIZE
    return ExtUnit(offset, size, tags, store_time, bytes(buf[start:start + len_bitmap]))


class ConsumeQueueExt:
    """The extension files of one topic queue, read as ``ConsumeQueueExt`` reads them.

    ``min_offset`` and ``max_offset`` are stream offsets: the first file's
    start, and where recovery leaves the write position (after the last
    unit of the last file). Iterating gives every unit of every file, each
    file up to its end marker or zero-filled tail, as recovery walks them.
    """

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = os.fspath(folder)
        self.files: tuple[QueueFile, ...] = queue_files(self.folder)

    def __repr__(self) -> str:
        return f"ConsumeQueueExt({self.folder!r}, {len(self.files)} files)"

    @property
    def min_offset(self) -> int:
        """Stream offset of the first file's first byte (``getMinAddress`` undecorated); 0 without files."""
        return self.files[0].start if self.files else 0

    @property
    def max_offset(self) -> int:
        """Stream offset after the last unit (``getMaxAddress`` after recovery, undecorated)."""
        if not self.files:
            return 0
        last = self.files[-1]
        end = 0
        for unit in self._file_units(last):
            end = unit.ext_offset - last.start + unit.size
        return last.start + end

    def __iter__(self) -> Iterator[ExtUnit]:
        return self.units()

    def units(self) -> Iterator[ExtUnit]:
        """Every unit, file by file, each file up to its end marker or zero-filled tail."""
        for f in self.files:
            yield from self._file_units(f)

    def _file_units(self, f: QueueFile) -> Iterator[ExtUnit]:
        # pread into a private image, not a memory map: a file cut while read raises FileChangedError.
        mm = FileImage(f.path)
        try:
            pos, end = 0, len(mm)
            while pos < end:
                mm.fill_to(pos + MAX_EXT_UNIT_SIZE)
                unit = _decode(mm.buf, pos, end, f.path, pos, f.start + pos)
                if unit is None:
                    return
                yield unit
                pos += unit.size
        finally:
            mm.close()

    def file_of(self, offset: int) -> tuple[QueueFile, int]:
        """The file holding stream ``offset`` and the position in it; raises :class:`ExtUnitNotFoundError`."""
        lo, hi = 0, len(self.files)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.files[mid].start <= offset:
                lo = mid + 1
            else:
                hi = mid
        if lo and offset < self.files[lo - 1].start + self.files[lo - 1].size:
            f = self.files[lo - 1]
            return f, offset - f.start
        span = f"[{self.files[0].start}, {self.files[-1].start + self.files[-1].size})" if self.files else "none"
        raise ExtUnitNotFoundError(self.folder, None, f"stream offset {offset} is in no file (files cover {span})")

    def get(self, address_or_offset: int) -> ExtUnit:
        """The unit at an ext address (as a consume-queue unit holds it) or at a stream offset.

        Like ``ConsumeQueueExt.get``: the address is decoded, the file found
        by offset, and the unit read there. Raises
        :class:`ExtUnitNotFoundError` when no file holds the offset or it
        points at the end marker or the unwritten tail, and
        :class:`ExtUnitError` for a unit whose size is below 20, whose
        bitmap length disagrees with its size, or that runs past the file's
        end. A 2-byte size cannot exceed ``Short.MAX_VALUE``, so reads are
        bounded to 32 767 bytes.
        """
        if is_ext_address(address_or_offset):
            offset = ext_offset(address_or_offset)
        elif address_or_offset >= 0:
            offset = address_or_offset
        else:
            raise ValueError(f"{address_or_offset} is neither an ext address nor a stream offset")
        f, pos = self.file_of(offset)
        with open(f.path, "rb") as fh:
            fh.seek(pos)
            data = fh.read(MAX_EXT_UNIT_SIZE)
        # The file's remaining bytes, at most one largest unit: the checks need no more.
        unit = _decode(data, 0, len(data), f.path, pos, offset)
        if unit is None:
            size = _LEN.unpack_from(data)[0] if len(data) >= _LEN.size else None
            if size is None:
                what = "the end of the file"
            elif _IS_END_MARKER({"len_unit": size}):
                what = "the end-of-file marker"
            elif size == 0:
                what = "unwritten space"
            else:
                what = f"size {size}, which readers take as the end of the file's data"
            raise ExtUnitNotFoundError(f.path, pos, f"no unit at stream offset {offset}: {what}")
        return unit
