"""``cut``: the first records of a commit-log segment as a small file, cut at a record boundary.

A production segment is 1 GiB, too large for the Kaitai Web IDE, and a piece
cut at an arbitrary byte count ends in half a record, which the generated
parsers reject. ``rmqformats cut SEGMENT --bytes N -o PIECE`` writes the
longest run of whole message records from the start of the segment that fits
in ``N`` bytes (``--records N``: the first ``N`` records), so every parser
generated from ``rocketmq_commitlog.ksy`` reads the piece to its end.

The segment is only read (``pread``, never mapped) and is copied in bounded
chunks. The piece keeps the segment's bytes unchanged, so its records still
carry their commit-log offsets (``ofs_physical``).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from collections.abc import Iterable
from typing import NamedTuple

from .. import output
from ..errors import FileChangedError
from ..generated.layouts import rocketmq_commitlog as layout
from . import status
from .common import file_store_paths

_HEADER = struct.Struct(layout.ENDIAN + "iI")  # TOTALSIZE, MAGICCODE
_MESSAGE_MAGICS = {layout.MAGIC_CODE["message_v1"], layout.MAGIC_CODE["message_v2"]}
_COPY_CHUNK = 4 << 20


class Cut(NamedTuple):
    """Where a piece of a segment ends, and why there."""

    #: Bytes of the piece: the end of its last whole record.
    length: int
    #: Message records in the piece.
    records: int
    #: Why the walk stopped: ``limit`` (the requested count or size was reached), ``blank``,
    #: ``zero-tail`` or ``end-of-file`` (the segment's data ended), or ``damage``.
    stop: str
    #: For ``damage``: the file offset and reason.
    detail: str = ""


def find_cut(path: str, *, records: int | None = None, max_bytes: int | None = None) -> Cut:
    """Walk the record headers of a segment and find the end of the piece to cut.

    Exactly one of ``records`` (the number of message records) and
    ``max_bytes`` (the largest piece size) is given. Only whole message
    records go into the piece; the walk stops early at the end of the
    segment's data (BLANK record, zero-filled tail, end of file) or at a
    record that is not a sound message (bad magic, a size that runs past the
    end of the file).
    """
    if (records is None) == (max_bytes is None):
        raise ValueError("give exactly one of records and max_bytes")
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pos = count = 0
        while True:
            if records is not None and count >= records:
                return Cut(pos, count, "limit")
            if size - pos < _HEADER.size:
                return Cut(pos, count, "end-of-file")
            total, magic = _HEADER.unpack(os.pread(fd, _HEADER.size, pos))
            if magic == layout.MAGIC_CODE["blank"]:
                return Cut(pos, count, "blank")
            if magic == layout.MAGIC_CODE["zero_fill"] and total == 0:
                return Cut(pos, count, "zero-tail")
            if magic not in _MESSAGE_MAGICS:
                return Cut(pos, count, "damage", f"{path} @ {pos:#x}: bad magic {magic:#010x}")
            if total <= _HEADER.size or total > size - pos:
                return Cut(pos, count, "damage",
                           f"{path} @ {pos:#x}: record size {total} runs past the end of the file ({size} bytes)")
            if max_bytes is not None and pos + total > max_bytes:
                return Cut(pos, count, "limit")
            pos += total
            count += 1
    finally:
        os.close(fd)


def write_piece(path: str, out: str, length: int, *, force: bool = False, reads: Iterable[str] = ()) -> None:
    """Copy the first ``length`` bytes of ``path`` to ``out`` in bounded chunks.

    ``out`` is written as :mod:`rmqformats.output` writes a file: locked,
    under a temporary name renamed onto it when complete, an existing file
    replaced only with ``force``, never ``path`` itself or into ``reads``.
    """
    reads = [path, *reads]
    fd = os.open(path, os.O_RDONLY)
    try:
        with output.AtomicFile(out, force=force, reads=reads) as f:
            pos = 0
            while pos < length:
                chunk = os.pread(fd, min(_COPY_CHUNK, length - pos), pos)
                if not chunk:
                    raise FileChangedError(path, pos, f"file ended at {pos} bytes while copying {length}")
                with output.write_errors(out):
                    f.stream.write(chunk)
                pos += len(chunk)
    finally:
        os.close(fd)


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, not {text}")
    return value


def cmd_cut(args: argparse.Namespace) -> int:
    segment, out = os.path.abspath(args.segment), os.path.abspath(args.output)
    err = sys.stderr
    if not os.path.isfile(segment):
        err.write(f"rmqformats: error: {segment}: no such file\n")
        return status.ERROR
    from ..store import check_segment_file
    check_segment_file(segment)
    reads = file_store_paths(segment)
    output.check_target(out, folder=False, force=args.force, reads=reads)
    cut = find_cut(segment, records=args.records, max_bytes=args.bytes)
    if cut.records == 0:
        why = cut.detail or {"limit": f"the first record is larger than {args.bytes} bytes",
                             "blank": "the segment starts with a BLANK record",
                             "zero-tail": "the segment holds no record (zero-filled)",
                             "end-of-file": "the segment is shorter than a record header"}[cut.stop]
        err.write(f"rmqformats: error: {segment}: no whole message record to cut: {why}\n")
        return status.ERROR
    write_piece(segment, out, cut.length, force=args.force, reads=reads)
    sys.stdout.write(f"{out}: {cut.records} records, {cut.length} bytes (bytes 0..{cut.length} of {segment})\n")
    if cut.stop == "damage":
        err.write(f"rmqformats: the data ended at damage: {cut.detail}; the piece holds the records before it\n")
        return status.DAMAGED
    if cut.stop != "limit":
        err.write(f"rmqformats: the segment's data ends after {cut.records} records ({cut.stop})\n")
    return status.OK


def add_commands(sub) -> None:
    p = sub.add_parser("cut", help="write the first records of a commit-log segment to a small file",
                       description="Write the first whole message records of a commit-log segment to a "
                                   "small file, cut at a record boundary, for the Kaitai Web IDE or any "
                                   "parser generated from rocketmq_commitlog.ksy. The segment is only read.")
    p.add_argument("segment", metavar="SEGMENT", help="a commit-log segment file")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--records", type=_positive, metavar="N", help="the first N message records")
    size.add_argument("--bytes", type=_positive, metavar="N",
                      help="as many whole records from the start as fit in N bytes")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    p.add_argument("--force", action="store_true",
                   help="overwrite a non-empty OUT (a symbolic link is replaced, never followed)")
    p.set_defaults(func=cmd_cut)
