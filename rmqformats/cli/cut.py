"""``cut``: a small piece of a commit-log segment, timer wheel or index file that the specs read to its end.

A production segment is 1 GiB, too large for the Kaitai Web IDE, and a piece
cut at an arbitrary byte count ends in half a record, which the generated
parsers reject. ``rmqformats cut SEGMENT --bytes N -o PIECE`` writes the
longest run of whole message records from the start of the segment that fits
in ``N`` bytes (``--records N``: the first ``N`` records), so every parser
generated from ``rocketmq_commitlog.ksy`` reads the piece to its end.

The segment is only read (``pread``, never mapped) and is copied in bounded
chunks. The piece keeps the segment's bytes unchanged, so its records still
carry their commit-log offsets (``ofs_physical``).

Timer wheels (38.7 MB, every one) and index files (420 MB at the broker's
defaults) are cut too, so that the unchanged specs read the piece to its end:

* a timer wheel (``rocketmq_timer_wheel.ksy``: 32-byte slots to the end of
  the file): ``--slots A:B`` writes slots ``A`` to ``B - 1`` (slot ``i`` of
  the piece is slot ``A + i`` of the wheel), ``--used`` the slots from the
  first used one to the last;
* an index file (``rocketmq_index_file.ksy``, which infers ``k`` hash slots
  and ``4k`` entries from a size of ``40 + 84k`` bytes): the 40-byte header,
  ``k`` consecutive hash slots and entries ``0`` to ``4k - 1``, so entry
  numbers (slot values, ``prev_index``) keep pointing at the same entries.
  ``--entries N`` takes slots from 0 and ``k = ceil(N / 4)``; ``--slots A:B``
  takes slots from ``A`` and makes ``k`` large enough for every entry the
  chains of slots ``A`` to ``B - 1`` reach. Entry numbers the file does not
  have (an index file whose broker kept fewer than four entries per slot)
  are zero-filled, as unwritten entries are.

The output is written by :func:`write_output` only, through
:mod:`rmqformats.output`: locked, under a temporary name renamed onto it when
complete, an existing file replaced only with ``--force``, never into the store
the file belongs to.
"""

from __future__ import annotations

import argparse
import os
import re
import struct
import sys
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from .. import filekind, output
from .. import index as index_reader
from ..errors import FileChangedError, RmqFormatError
from ..generated.layouts import rocketmq_commitlog as layout
from ..mapped import pread_exact
from ..timer import SLOT_DTYPE as WHEEL_SLOT_DTYPE
from . import status
from .bodies import positive
from .present import place
from .common import file_store_paths

_HEADER = struct.Struct(layout.RECORD_RUNS[0][1])  # TOTALSIZE, MAGICCODE
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
                return Cut(pos, count, "damage", f"{place(path, pos)}: bad magic {magic & 0xFFFFFFFF:#010x}")
            if total <= _HEADER.size or total > size - pos:
                return Cut(pos, count, "damage",
                           f"{place(path, pos)}: record size {total} runs past the end of the file ({size} bytes)")
            if max_bytes is not None and pos + total > max_bytes:
                return Cut(pos, count, "limit")
            pos += total
            count += 1
    finally:
        os.close(fd)


#: A part of a piece: ``(offset, length)`` of bytes of the file being cut, or ``(None, length)`` zero bytes.
Part = tuple[int | None, int]


class TablePiece(NamedTuple):
    """A piece of a timer wheel or index file: the parts to copy, and what they hold."""

    parts: list[Part]
    #: First slot of the file in the piece, and how many slots the piece holds.
    first_slot: int
    slots: int
    #: Entries in the piece (index files; 0 for a wheel).
    entries: int = 0
    #: A line for stderr (a range that was widened or clamped), or "".
    note: str = ""


def _slot_range(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", text)
    if not m or int(m.group(1)) >= int(m.group(2)):
        raise argparse.ArgumentTypeError(f"expected A:B with A < B (slots A to B - 1), not {text}")
    return int(m.group(1)), int(m.group(2))


def wheel_piece(path: str, *, slots: tuple[int, int] | None = None, used: bool = False) -> TablePiece:
    """The slots of a timer wheel to cut: ``slots`` (``A:B``, clamped to the wheel) or, with ``used``, the first
    to the last used slot (read in bounded chunks). Raises :class:`RmqFormatError` when there is none."""
    size = os.path.getsize(path)
    width = WHEEL_SLOT_DTYPE.itemsize
    count = size // width
    if used:
        first = last = -1
        fd = os.open(path, os.O_RDONLY)
        try:
            step = _COPY_CHUNK // width
            for start in range(0, count, step):
                n = min(step, count - start)
                chunk = np.frombuffer(pread_exact(fd, n * width, start * width, path, size), dtype=WHEEL_SLOT_DTYPE)
                hit = np.flatnonzero(chunk["time_units"] != 0)
                if hit.size:
                    first = start + int(hit[0]) if first < 0 else first
                    last = start + int(hit[-1])
        finally:
            os.close(fd)
        if first < 0:
            raise RmqFormatError(path, None, "no slot of the wheel is used")
        return TablePiece([(first * width, (last - first + 1) * width)], first, last - first + 1)
    assert slots is not None
    a, b = slots
    if a >= count:
        raise RmqFormatError(path, None, f"slot {a} is past the wheel's last slot {count - 1}")
    note = f"the wheel has {count} slots: the piece ends at slot {count - 1}" if b > count else ""
    b = min(b, count)
    return TablePiece([(a * width, (b - a) * width)], a, b - a, note=note)


def index_piece(path: str, *, slots: tuple[int, int] | None = None, entries: int | None = None,
                num_hash_slots: int | None = None, num_index: int | None = None) -> TablePiece:
    """The header, ``k`` hash slots and entries ``0 .. 4k - 1`` of an index file (see the module docstring)."""
    ratio = index_reader.DEFAULT_RATIO
    with index_reader.IndexFile(path, num_hash_slots=num_hash_slots, num_index=num_index) as f:
        n_slots, n_index = f.num_hash_slots, f.num_index
        note = ""
        if entries is not None:
            start, k = 0, -(-min(entries, n_index) // ratio)
        else:
            assert slots is not None
            start, stop = slots
            if start >= n_slots:
                raise RmqFormatError(path, None, f"slot {start} is past the file's last slot {n_slots - 1}")
            stop = min(stop, n_slots)
            # The highest entry number the chains of these slots reach; a chain is walked as a lookup walks
            # it (values from 1 to the header's next entry number). Each written entry is in one chain, so
            # the walks together take at most as many steps as there are entries; a chain that loops stops
            # there.
            limit = min(f.header.next_index, n_index)
            reach = steps = 0
            for i in range(start, stop):
                e = f.slot(i)
                while 0 < e < limit and steps < limit:
                    reach = max(reach, e)
                    e = f.entry(e).prev_index
                    steps += 1
            k = max(stop - start, -(-(reach + 1) // ratio))
            if k > stop - start:
                note = (f"slots {start}..{stop - 1} reach entry {reach}: the piece holds {k} slots and "
                        f"entries 0..{k * ratio - 1}")
        k = min(k, n_slots)
        if start + k > n_slots:  # widened past the last slot: start earlier instead
            start = n_slots - k
        width_slot, width_entry = index_reader.SLOT_SIZE, index_reader.ENTRY_SIZE
        header = index_reader.HEADER_SIZE
        entries_at = header + n_slots * width_slot
        have = min(k * ratio, n_index)
        parts: list[Part] = [(0, header), (header + start * width_slot, k * width_slot),
                             (entries_at, have * width_entry)]
        if have < k * ratio:
            parts.append((None, (k * ratio - have) * width_entry))
            note = (note + "; " if note else "") + (f"the file has {n_index} entries: entries {n_index}.."
                                                    f"{k * ratio - 1} of the piece are zero-filled")
        return TablePiece(parts, start, k, k * ratio, note)


def write_output(source: str, out: str, parts: list[Part], *, force: bool = False,
                 reads: Iterable[str] = ()) -> None:
    """Write the parts of ``source`` (byte ranges, or zero fill) to ``out``, in bounded chunks.

    ``out`` is written as :mod:`rmqformats.output` writes a file: locked, under a
    temporary name renamed onto it when complete, an existing file replaced only
    with ``force``, never ``source`` itself or into ``reads``. A copy that fails
    part way leaves nothing behind.
    """
    reads = [source, *reads]
    fd = os.open(source, os.O_RDONLY)
    try:
        with output.AtomicFile(out, force=force, reads=reads) as f:
            for offset, length in parts:
                pos = 0
                while pos < length:
                    n = min(_COPY_CHUNK, length - pos)
                    if offset is None:
                        chunk = bytes(n)
                    else:
                        chunk = os.pread(fd, n, offset + pos)
                        if not chunk:
                            raise FileChangedError(source, offset + pos,
                                                   f"file ended at {offset + pos} bytes while copying")
                    with output.write_errors(out):
                        f.stream.write(chunk)
                    pos += len(chunk)
    finally:
        os.close(fd)


def write_piece(path: str, out: str, length: int, *, force: bool = False, reads: Iterable[str] = ()) -> None:
    """Copy the first ``length`` bytes of ``path`` to ``out`` in bounded chunks."""
    write_output(path, out, [(0, length)], force=force, reads=reads)


#: The options of each kind of file cut.
_OPTIONS = {"commitlog": ("records", "bytes"), "timerwheel": ("slots", "used"), "index": ("slots", "entries")}
_NAMES = {"commitlog": "a commit-log segment", "timerwheel": "a timer wheel", "index": "an index file"}


def _kind(path: str, args: argparse.Namespace) -> str:
    """The kind of file to cut: ``--kind``, else the kind found from its name, place and first bytes, else the
    one the options cut."""
    if args.kind:
        return args.kind
    try:
        found = filekind.detect(path).name
    except RmqFormatError:
        found = None
    if found in _OPTIONS:
        return found
    if args.records is not None or args.bytes is not None:
        return "commitlog"
    if args.entries is not None:
        return "index"
    if args.used:
        return "timerwheel"
    raise RmqFormatError(path, None, "--slots cuts a timer wheel or an index file, and this file is "
                                     f"{'a ' + found + ' file' if found else 'of no known kind'}: "
                                     "give --kind timerwheel or --kind index")


def _cut_table(kind: str, path: str, out: str, args: argparse.Namespace) -> int:
    if kind == "timerwheel":
        piece = wheel_piece(path, slots=args.slots, used=args.used)
        what = f"slots {piece.first_slot}..{piece.first_slot + piece.slots - 1}"
        spec = "rocketmq_timer_wheel.ksy"
    else:
        piece = index_piece(path, slots=args.slots, entries=args.entries, num_hash_slots=args.hash_slots,
                            num_index=args.index_num)
        what = (f"header, hash slots {piece.first_slot}..{piece.first_slot + piece.slots - 1} as slots "
                f"0..{piece.slots - 1}, entries 0..{piece.entries - 1}")
        spec = "rocketmq_index_file.ksy"
    write_output(path, out, piece.parts, force=args.force, reads=file_store_paths(path))
    length = sum(n for _, n in piece.parts)
    sys.stdout.write(f"{out}: {length} bytes: {what} of {path} (open with {spec})\n")
    if piece.note:
        sys.stderr.write(f"rmqformats: {piece.note}\n")
    return status.OK


def cmd_cut(args: argparse.Namespace) -> int:
    segment, out = os.path.abspath(args.segment), os.path.abspath(args.output)
    err = sys.stderr
    if not os.path.isfile(segment):
        err.write(f"rmqformats: error: {segment}: no such file\n")
        return status.ERROR
    reads = file_store_paths(segment)
    output.check_target(out, folder=False, force=args.force, reads=reads)
    try:
        kind = _kind(segment, args)
        given = [o for o in ("records", "bytes", "slots", "used", "entries") if getattr(args, o) not in (None, False)]
        wrong = [o for o in given if o not in _OPTIONS[kind]]
        if wrong:
            err.write(f"rmqformats: error: {segment}: --{wrong[0]} does not cut {_NAMES[kind]} (it takes "
                      f"{' or '.join('--' + o for o in _OPTIONS[kind])})\n")
            return status.ERROR
        if kind != "commitlog":
            return _cut_table(kind, segment, out, args)
    except RmqFormatError as exc:
        err.write(f"rmqformats: error: {exc.whole()}\n")
        return status.ERROR
    except OSError as exc:
        err.write(f"rmqformats: error: {exc}\n")
        return status.ERROR
    from ..store import check_segment_file
    check_segment_file(segment)
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
    p = sub.add_parser("cut", help="write a small piece of a commit-log segment, timer wheel or index file",
                       description="Write a small piece of a big store file that the specs (and the Kaitai Web "
                                   "IDE) read to its end: the first whole message records of a commit-log "
                                   "segment, a slot range of a timer wheel, or an index file's header with a "
                                   "range of hash slots and the entries they reach. The file is only read.")
    p.add_argument("segment", metavar="FILE", help="a commit-log segment, timer wheel or index file")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--records", type=positive, metavar="N", help="segment: the first N message records")
    size.add_argument("--bytes", type=positive, metavar="N",
                      help="segment: as many whole records from the start as fit in N bytes")
    size.add_argument("--slots", type=_slot_range, metavar="A:B",
                      help="timer wheel: slots A to B-1; index file: hash slots from A on, with every entry "
                           "the chains of slots A to B-1 reach")
    size.add_argument("--used", action="store_true", help="timer wheel: the first to the last used slot")
    size.add_argument("--entries", type=positive, metavar="N",
                      help="index file: the header, entries 0 to N-1 (rounded up to 4 per slot) and as many "
                           "hash slots from 0")
    p.add_argument("--kind", choices=sorted(_OPTIONS), help="the file's kind (default: from the options, or "
                                                            "found from its name and place)")
    p.add_argument("--hash-slots", type=positive, metavar="N",
                   help="index file: the broker's maxHashSlotNum, when the file size does not tell it")
    p.add_argument("--index-num", type=positive, metavar="N",
                   help="index file: the broker's maxIndexNum, when the file size does not tell it")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    p.set_defaults(func=cmd_cut)
