"""Record-by-record reading through the generated reference parsers.

The Kaitai Struct parser (``generated/kaitai``) and the construct schemas
(``generated/construct``) are generated from the same ``.ksy`` spec as the
fast path in :mod:`rmqformats.commitlog`. They are slower and keep whole
objects, but show every field as the spec names it, which makes them the
debugging view. Both readers here walk a segment one record at a time (never
the whole file at once) and turn parser exceptions into the project's typed
errors, naming the file and the record offset.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import construct
import kaitaistruct
from kaitaistruct import KaitaiStream

from .errors import BadMagicError, RecordError, RecordSizeError, TruncatedRecordError
from .mapped import RELEASE_EVERY, FileImage, release_pages
from .generated.construct import rocketmq_commitlog as cs
from .generated.kaitai.rocketmq_commitlog import RocketmqCommitlog
from .generated.layouts import rocketmq_commitlog as layout


def sys_flag_value(flags) -> int:
    """The SYSFLAG integer of a parsed ``sys_flag`` (Kaitai object or construct container)."""
    value = 0
    for name, (_mask, shift) in layout.SYS_FLAG_BITS.items():
        field = flags[name] if isinstance(flags, dict) else getattr(flags, name)
        field = getattr(field, "intvalue", field)  # construct enum strings carry their int
        value |= int(field) << shift
    return value


def _kaitai_error(path: str, pos: int, exc: Exception) -> RecordError:
    if isinstance(exc, kaitaistruct.ValidationNotInEnumError):
        return BadMagicError(path, pos, f"bad magic 0x{exc.actual & 0xFFFFFFFF:08x} (not in enum magic_code)")
    if isinstance(exc, EOFError):
        return TruncatedRecordError(path, pos, f"record runs past the end of the file: {exc}")
    return RecordSizeError(path, pos, f"{type(exc).__name__}: {exc}")


#: Read buffer of the construct parser: its field-by-field reads are served from it.
_BUFFER = 1 << 20
_HEADER_BYTES = 8
#: Bytes past a record read before it is parsed (a damaged length can make a parser look a little further).
_READ_AHEAD = 4096


def kaitai_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, RocketmqCommitlog.Record]]:
    """Yield ``(file offset, record)`` for each record of a segment, Kaitai-parsed.

    Stops after the first record that is not a message (BLANK or the zero
    tail), like the spec's ``records`` sequence. Raises :class:`RecordError`
    subclasses for records the parser rejects or that are cut by the end of
    the file.
    """
    path = os.fspath(path)
    # The file read with pread into a private image (a memory map of a file cut while it is
    # read would be SIGBUS), each record's bytes before it is parsed, the pages passed given back.
    with FileImage(path) as img:
        if img.size == 0:
            return
        io = KaitaiStream(img.buf)
        root = RocketmqCommitlog.__new__(RocketmqCommitlog)
        release_at = RELEASE_EVERY
        while True:
            pos = io.pos()
            img.fill_to(pos + _HEADER_BYTES)
            if io.is_eof():
                return
            if pos >= release_at:
                release_at = release_pages(img, pos)
            size = int.from_bytes(img.buf[pos:pos + 4], "big", signed=True)
            img.fill_to(pos + max(size, 0) + _READ_AHEAD)
            while True:
                try:
                    rec = RocketmqCommitlog.Record(io, root, root)
                    is_message = rec.is_message
                except (kaitaistruct.KaitaiStructError, EOFError, ValueError, UnicodeDecodeError) as exc:
                    if img.filled < img.size and io.pos() + 64 >= img.filled:  # it reached unread bytes
                        img.fill_to(img.filled + _READ_AHEAD)
                        io.seek(pos)
                        continue
                    raise _kaitai_error(path, pos, exc) from None
                if io.pos() <= img.filled:
                    break
                img.fill_to(io.pos() + _READ_AHEAD)  # the parse read bytes not yet read: again with them
                io.seek(pos)
            yield pos, rec
            if not is_message:
                return


def _construct_error(path: str, pos: int, exc: Exception) -> RecordError:
    text = str(exc)
    if "magic" in text and isinstance(exc, construct.ValidationError):
        return BadMagicError(path, pos, f"bad magic: {text}")
    if isinstance(exc, construct.StreamError):
        return TruncatedRecordError(path, pos, f"record runs past the end of the file: {text}")
    return RecordSizeError(path, pos, f"{type(exc).__name__}: {text}")


def construct_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, construct.Container]]:
    """Yield ``(file offset, record)`` for each record of a segment, parsed by the construct schema."""
    path = os.fspath(path)
    with open(path, "rb", buffering=_BUFFER) as mm:  # a buffered file, not a memory map (see kaitai_records)
        size = os.fstat(mm.fileno()).st_size
        pos = 0
        while pos < size:
            mm.seek(pos)
            try:
                rec = cs.record.parse_stream(mm)
            except (construct.ConstructError, UnicodeDecodeError) as exc:
                raise _construct_error(path, pos, exc) from None
            yield pos, rec
            if not rec.is_message:
                return
            pos = mm.tell()
