"""Message-key index files (``index/``): headers, slots, entries and lookups by key.

An index file is a hash table of ``num_hash_slots`` slots chaining
``num_index`` 20-byte entries (see ``formats/rocketmq_index_file.ksy``).
The counts are broker settings (``maxHashSlotNum``, ``maxIndexNum``), not
stored in the file; :func:`infer_counts` derives them from the file size
unless they are given.

Lookups mirror the broker: :meth:`IndexFile.select_phy_offsets` is
``IndexFile.selectPhyOffset`` and :meth:`IndexFiles.query_offsets` is
``IndexService.queryOffset``, with the same stop rules, so they return the
same commit-log offsets in the same order, hash collisions included.
:func:`lookup` then reads each message and keeps those that really carry
the key, the check RocketMQ leaves to its clients.

Files are opened read-only and a lookup reads just the slot and the entries
it visits, each with one positioned read (``os.pread``) of 4 or 20 bytes, so
a lookup in a 420 MB file touches a few pages of the page cache and the
process's memory does not grow with the file. ``mapped=True`` keeps the
64 KiB blocks read in private memory instead (a
:class:`~rmqformats.mapped.FileImage`, filled by ``pread``; never a memory
map, which a file cut while it is read would turn into SIGBUS): slower
than ``pread`` while the blocks are first read, about twice as fast once most
are, and 20,000 random lookups make the resident set about the size of the
file (measured in ``benchmarks/RESULTS.md``). Nothing is ever written.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .errors import IndexChainLoopError, IndexRangeError, IndexSizeError, RmqFormatError, with_article
from .frames import require_pandas
from .generated.layouts import rocketmq_index_file as layout
from .javahash import java_string_hash
from .mapped import FileImage, pread as _pread
from .message import to_millis
from .queuearrow import Batches, index_batches, index_headers
from .storeview import StoreView
from .units import unit_dtype

if TYPE_CHECKING:
    import pandas
    import pyarrow

    from .message import Message

# The readers below unpack fields in the spec's order; fail at import, not
# with wrong values, if the spec changes.
assert layout.ROCKETMQ_INDEX_FILE_SEQ == ("header",)
assert layout.INDEX_HEADER_SEQ == ("begin_timestamp", "end_timestamp", "ofs_begin_physical", "ofs_end_physical",
                             "num_hash_slots_used", "next_index")
assert layout.INDEX_TABLES_SEQ == ("hash_slots", "entries")
assert layout.HASH_SLOT_SEQ == ("latest_index",)
assert layout.ENTRY_SEQ == ("key_hash", "ofs_physical", "time_diff", "prev_index")
assert len(layout.INDEX_HEADER_RUNS) == len(layout.HASH_SLOT_RUNS) == len(layout.ENTRY_RUNS) == 1

_HEADER = struct.Struct(layout.INDEX_HEADER_RUNS[0][1])
_SLOT = struct.Struct(layout.HASH_SLOT_RUNS[0][1])
_ENTRY = struct.Struct(layout.ENTRY_RUNS[0][1])
#: numpy record types of the header and of an entry, in the file's byte order.
HEADER_DTYPE = unit_dtype(layout.INDEX_HEADER_RUNS, layout.INDEX_HEADER_SEQ)
ENTRY_DTYPE = unit_dtype(layout.ENTRY_RUNS, layout.ENTRY_SEQ)
#: Byte position of ``indexCount`` in the header.
INDEX_COUNT_AT = HEADER_DTYPE.fields["next_index"][1]
#: ``IndexHeader.INDEX_HEADER_SIZE``: 40 bytes.
HEADER_SIZE = _HEADER.size
#: Bytes per hash slot (4).
SLOT_SIZE = _SLOT.size
#: Bytes per entry (``indexSize``, 20).
ENTRY_SIZE = _ENTRY.size

#: ``MessageStoreConfig.maxHashSlotNum`` default (4.0.0 to 5.3.x).
DEFAULT_NUM_HASH_SLOTS = 5_000_000
#: ``MessageStoreConfig.maxIndexNum`` default (4.0.0 to 5.3.x).
DEFAULT_NUM_INDEX = 20_000_000
#: Entries per slot with the defaults; the ratio assumed when the counts are inferred.
DEFAULT_RATIO = DEFAULT_NUM_INDEX // DEFAULT_NUM_HASH_SLOTS
#: ``MessageStoreConfig.maxMsgsNumBatch`` default: the broker's cap on hits per query.
DEFAULT_MAX_NUM = 64
#: Bytes an index file opened with ``mapped=True`` reads at a time.
_BLOCK = 64 << 10
#: Repeated hits a lookup adds for a chain that loops, as the broker's walk would, at most.
LOOP_REPEAT_LIMIT = 1 << 16
#: ``Long.MAX_VALUE``, the broker's "no upper time bound".
LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1
_INT_MIN = -(1 << 31)
def index_key_hash(key: str) -> int:
    """``IndexFile.indexKeyHashMethod``: Java ``String.hashCode`` made non-negative.

    ``Math.abs`` leaves ``Integer.MIN_VALUE`` negative, and the broker maps
    it to 0.
    """
    h = java_string_hash(key)
    if h == _INT_MIN:
        return 0
    return -h if h < 0 else h


def _wrap64(value: int) -> int:
    """Java ``long`` arithmetic: wrap a result to 64 bits (only hostile headers get here)."""
    if -(1 << 63) <= value < (1 << 63):
        return value
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


class IndexHeader(NamedTuple):
    """The 40-byte header of an index file, with the broker's Java names."""

    #: Store time (ms) of the first indexed message; entry times count from it.
    begin_timestamp: int
    #: Store time (ms) of the last indexed message.
    end_timestamp: int
    #: Commit-log offset of the first indexed message.
    begin_phy_offset: int
    #: Commit-log offset of the last indexed message.
    end_phy_offset: int
    #: Used slots (4.7.1+), or entries written (4.0.0-4.7.0).
    hash_slot_count: int
    #: ``indexCount`` as stored: the next entry number to write.
    index_count: int

    @property
    def next_index(self) -> int:
        """``indexCount`` as the broker loads it (a value of 0 or less reads as 1)."""
        return self.index_count if self.index_count > 0 else 1

    @property
    def num_entries(self) -> int:
        """Number of entries written (entry numbers 1 to ``num_entries``)."""
        return self.next_index - 1


class IndexEntry(NamedTuple):
    """One 20-byte index entry and its number in the file."""

    #: Entry number (1 is the first written; 0 is never used).
    number: int
    #: ``indexKeyHashMethod`` of ``topic#key``.
    key_hash: int
    #: Commit-log offset of the message.
    phy_offset: int
    #: Store time in seconds after the header's ``begin_timestamp``.
    time_diff: int
    #: Previous entry of the same slot; 0 ends the chain.
    prev_index: int

    def time_ms(self, begin_timestamp: int) -> int:
        """The entry's time as lookups compute it: ``begin_timestamp + time_diff * 1000`` (ms)."""
        return _wrap64(begin_timestamp + self.time_diff * 1000)


def _check_count(name: str, value, path: str | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= INT_MAX:
        raise IndexSizeError(path, None, f"{name} must be an int from 1 to {INT_MAX}, not {value!r}")
    return value


def infer_counts(size: int, num_hash_slots: int | None = None, num_index: int | None = None,
                 path: str | None = None) -> tuple[int, int]:
    """``(num_hash_slots, num_index)`` of an index file of ``size`` bytes.

    Given counts are checked against the size (``40 + 4*slots + 20*entries``);
    one given count gives the other. With none: the defaults (5,000,000 and
    20,000,000) when the size is theirs, else four entries per slot (the
    defaults' ratio, ``size == 40 + 84*slots``), else :class:`IndexSizeError`
    asking for the broker's ``maxHashSlotNum`` / ``maxIndexNum``.
    """
    if size < HEADER_SIZE:
        raise IndexSizeError(path, 0, f"file has {size} bytes, less than the {HEADER_SIZE}-byte header")
    body = size - HEADER_SIZE
    if num_hash_slots is not None:
        _check_count("num_hash_slots", num_hash_slots, path)
    if num_index is not None:
        _check_count("num_index", num_index, path)
    if num_hash_slots is not None and num_index is None:
        rest = body - num_hash_slots * SLOT_SIZE
        if rest < ENTRY_SIZE or rest % ENTRY_SIZE:
            raise IndexSizeError(path, None, f"file size {size} does not fit {num_hash_slots} hash slots "
                                             f"and a whole number of {ENTRY_SIZE}-byte entries")
        num_index = rest // ENTRY_SIZE
    elif num_index is not None and num_hash_slots is None:
        rest = body - num_index * ENTRY_SIZE
        if rest < SLOT_SIZE or rest % SLOT_SIZE:
            raise IndexSizeError(path, None, f"file size {size} does not fit {num_index} entries "
                                             f"and a whole number of {SLOT_SIZE}-byte hash slots")
        num_hash_slots = rest // SLOT_SIZE
    elif num_hash_slots is None and num_index is None:
        if body == DEFAULT_NUM_HASH_SLOTS * SLOT_SIZE + DEFAULT_NUM_INDEX * ENTRY_SIZE:
            return DEFAULT_NUM_HASH_SLOTS, DEFAULT_NUM_INDEX
        unit = SLOT_SIZE + DEFAULT_RATIO * ENTRY_SIZE
        if body <= 0 or body % unit:
            raise IndexSizeError(path, None, f"cannot infer the slot and entry counts from the file size "
                                             f"{size}: it fits neither the defaults ({DEFAULT_NUM_HASH_SLOTS:,} "
                                             f"hash slots, {DEFAULT_NUM_INDEX:,} entries) nor {DEFAULT_RATIO} "
                                             f"entries per slot; {_what_fits(size)}")
        return body // unit, body // unit * DEFAULT_RATIO
    expected = HEADER_SIZE + num_hash_slots * SLOT_SIZE + num_index * ENTRY_SIZE
    if expected != size:
        what = "shorter" if size < expected else "longer"
        raise IndexSizeError(path, min(size, expected),
                             f"file has {size} bytes, {what} than the {expected} that {num_hash_slots} hash "
                             f"slots and {num_index} entries take")
    return num_hash_slots, num_index


def fitting_counts(size: int, *, most: int = 4) -> list[tuple[int, int]]:
    """Some ``(num_hash_slots, num_index)`` pairs that give an index file of ``size`` bytes
    (``40 + 4*slots + 20*entries``): the pair nearest the defaults' 4 entries per slot, then the pairs
    of the roundest numbers (as brokers are configured), at most ``most``; all of them when there are
    no more than ``2 * most``; none when no pair fits."""
    body = size - HEADER_SIZE
    if body < SLOT_SIZE + ENTRY_SIZE or body % SLOT_SIZE:
        return []
    b = body // SLOT_SIZE  # slots + 5 * entries
    per = ENTRY_SIZE // SLOT_SIZE
    if (b - 1) // per <= 2 * most:  # few: all of them
        return [(b - per * n, n) for n in range(1, (b - 1) // per + 1)]
    out: list[tuple[int, int]] = []
    near = round(b / (1 + per * DEFAULT_RATIO))  # slots at 4 entries per slot
    for slots in sorted(range(max(1, near - per), near + per + 1), key=lambda s: abs(s - near)):
        if (b - slots) % per == 0 and b - slots >= per:
            out.append((slots, (b - slots) // per))
            break
    k = 7
    while k > 0 and len(out) < most:  # both counts multiples of 10**k, largest k first
        step = 10 ** k
        if b // step <= 100_000:
            for slots in range(step, b, step):
                entries, rest = divmod(b - slots, per)
                if not rest and entries and entries % step == 0 and (slots, entries) not in out:
                    out.append((slots, entries))
                    if len(out) == most:
                        break
        k -= 1
    return out


def _what_fits(size: int) -> str:
    """The counts that fit a file of ``size`` bytes, and how to pass them, in words."""
    how = ("pass the broker's maxHashSlotNum and maxIndexNum (num_hash_slots and num_index; --hash-slots "
           "and --index-num on the command line)")
    pairs = fitting_counts(size)
    if not pairs:
        unit = HEADER_SIZE
        step = SLOT_SIZE + DEFAULT_RATIO * ENTRY_SIZE
        below = max(1, (size - unit) // step)
        return (f"no counts give {size} bytes ({HEADER_SIZE} + {SLOT_SIZE} * slots + {ENTRY_SIZE} * entries): "
                f"the file is cut short or not an index file; index files of {DEFAULT_RATIO} entries per slot "
                f"nearest its size have {unit + below * step:,} bytes ({below:,} slot{'s' if below > 1 else ''}) "
                f"and {unit + (below + 1) * step:,} bytes ({below + 1:,} slots); one of the defaults has "
                f"{HEADER_SIZE + DEFAULT_NUM_HASH_SLOTS * SLOT_SIZE + DEFAULT_NUM_INDEX * ENTRY_SIZE:,} bytes")
    total = ((size - HEADER_SIZE) // SLOT_SIZE - 1) // (ENTRY_SIZE // SLOT_SIZE)
    shown = ", ".join(f"{s:,} slot{'s' if s > 1 else ''} and {n:,} entr{'ies' if n > 1 else 'y'}" for s, n in pairs)
    which = "these" if total == len(pairs) else f"{total:,} pairs of counts fit it, among them"
    return f"{which} {shown}{' fit it' if total == len(pairs) else ''}; {how}"


class IndexFile:
    """One index file, opened read-only.

    ``num_hash_slots`` and ``num_index`` are the broker's ``maxHashSlotNum``
    and ``maxIndexNum``; see :func:`infer_counts` for what happens when they
    are not given. ``mapped`` keeps the blocks read in memory (faster for
    many lookups, resident memory up to the file size; see the module
    docstring). Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str], *, num_hash_slots: int | None = None,
                 num_index: int | None = None, mapped: bool = False):
        self.path = os.fspath(path)
        self.name = os.path.basename(self.path)
        self._mm = None
        self._fd: int | None = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            #: File size in bytes.
            self.size = os.fstat(self._fd).st_size
            self.num_hash_slots, self.num_index = infer_counts(self.size, num_hash_slots, num_index, self.path)
            if hasattr(os, "posix_fadvise"):
                # Lookups jump around: no read-ahead around the few bytes each read wants.
                os.posix_fadvise(self._fd, 0, 0, os.POSIX_FADV_RANDOM)
            self._entries_at = HEADER_SIZE + self.num_hash_slots * SLOT_SIZE
            if mapped:
                # 64 KiB blocks: the first lookups pay for reading them, later ones find them read
                # (4 KiB blocks were slower: each first touch costs a read either way).
                self._mm = FileImage(self.path, sequential=False, block=_BLOCK)
            #: The header as stored.
            self.header = IndexHeader._make(_HEADER.unpack(self._read(HEADER_SIZE, 0)))
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return (f"IndexFile({self.path!r}, {self.num_hash_slots} slots, {self.num_index} entries, "
                f"{self.header.num_entries} written)")

    def close(self) -> None:
        """Close the file."""
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> IndexFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read(self, n: int, offset: int) -> bytes:
        """``n`` bytes at ``offset``; :class:`IndexSizeError` if the file has become shorter since it was opened."""
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        mm = self._mm
        if mm is None:
            data = _pread(self._fd, n, offset)
        else:
            end = offset + n
            blocks = mm.blocks
            if not (end <= mm.size and blocks[offset // _BLOCK] and blocks[(end - 1) // _BLOCK]):
                mm.ensure(offset, end)
            data = mm.buf[offset:end]
        if len(data) != n:
            raise IndexSizeError(self.path, offset, f"file ends {len(data)} bytes into {with_article(n)}-byte read; "
                                                    f"it was {self.size} bytes when opened")
        return data

    def slot(self, i: int) -> int:
        """The value of hash slot ``i``: the newest entry number of its chain (0 = empty)."""
        if not 0 <= i < self.num_hash_slots:
            raise IndexRangeError(self.path, None, f"slot {i} is outside 0..{self.num_hash_slots - 1}")
        return _SLOT.unpack(self._read(SLOT_SIZE, HEADER_SIZE + i * SLOT_SIZE))[0]

    def entry(self, n: int) -> IndexEntry:
        """Entry number ``n`` (0 to ``num_index - 1``; only 1 to ``header.num_entries`` are written)."""
        if not 0 <= n < self.num_index:
            raise IndexRangeError(self.path, None, f"entry {n} is outside 0..{self.num_index - 1}")
        return IndexEntry(n, *_ENTRY.unpack(self._read(ENTRY_SIZE, self._entries_at + n * ENTRY_SIZE)))

    def written_entries(self, *, strict: bool = True) -> int:
        """Number of entries written (numbers 1 to this), from the header's ``indexCount``.

        A header that claims more entries than the file holds (damaged or
        hostile) raises :class:`IndexRangeError` at the ``indexCount`` field,
        or with ``strict=False`` gives the entries the file holds.
        """
        n = self.header.num_entries
        if n > self.num_index - 1:
            if strict:
                raise IndexRangeError(self.path, INDEX_COUNT_AT,
                                      f"indexCount {self.header.index_count} says entries 1 to {n} are written, "
                                      f"past the last entry ({self.num_index - 1}) of the file")
            n = self.num_index - 1
        return n

    def entry_array(self, start: int = 1, stop: int | None = None) -> np.ndarray:
        """Entries ``start`` to ``stop - 1`` as a numpy structured array in native byte order.

        The fields are the spec's (``key_hash``, ``ofs_physical``,
        ``time_diff``, ``prev_index``). By default the written entries
        (1 to :meth:`written_entries`); read with one positioned read, so ask
        for ranges to keep memory bounded on a full-size file (420 MB).
        """
        if stop is None:
            stop = self.written_entries() + 1
        if not 0 <= start <= stop <= self.num_index:
            raise IndexRangeError(self.path, None, f"entries {start} to {stop - 1} are not all within "
                                                   f"0..{self.num_index - 1}")
        data = self._read((stop - start) * ENTRY_SIZE, self._entries_at + start * ENTRY_SIZE)
        return np.frombuffer(data, ENTRY_DTYPE).astype(ENTRY_DTYPE.newbyteorder("="))

    # The columnar readers are a capability above this reader; imported on first use only.
    def batches(self, *, strict: bool = True, batch_size: int = 1 << 18) -> Batches:
        """The written entries as :class:`pyarrow.RecordBatch` objects (see :mod:`rmqformats.queuearrow`).

        Columns ``file``, ``entry``, ``slot``, ``keyHash``, ``commitLogOffset``,
        ``timeDiff``, ``prevIndex``, ``storeTime``; read ``batch_size`` entries
        at a time. ``strict=False`` reads a header that claims too many entries
        as far as the file goes.
        """
        return index_batches(self, strict=strict, batch_size=batch_size)

    def to_arrow(self, *, strict: bool = True, batch_size: int = 1 << 18) -> pyarrow.Table:
        """The written entries as one :class:`pyarrow.Table`; the options of :meth:`batches`."""
        return self.batches(strict=strict, batch_size=batch_size).read_all()

    def to_pandas(self, *, strict: bool = True, batch_size: int = 1 << 18) -> pandas.DataFrame:
        """The written entries as a :class:`pandas.DataFrame`, through :meth:`to_arrow`."""
        require_pandas()
        return self.to_arrow(strict=strict, batch_size=batch_size).to_pandas()

    def headers_to_arrow(self) -> pyarrow.Table:
        """The header, size and counts as a one-row :class:`pyarrow.Table`."""
        return index_headers(self)

    def slot_of(self, key: str) -> int:
        """The hash slot of ``key`` (a full ``topic#key``)."""
        return index_key_hash(key) % self.num_hash_slots

    def is_time_matched(self, begin: int, end: int) -> bool:
        """``IndexFile.isTimeMatched``: whether ``[begin, end]`` (ms) overlaps the header's time range."""
        b, e = self.header.begin_timestamp, self.header.end_timestamp
        return (begin < b and end > e) or b <= begin <= e or b <= end <= e

    def select_phy_offsets(self, key: str, max_num: int = DEFAULT_MAX_NUM, begin: int = 0, end: int = LONG_MAX,
                           *, strict: bool = True) -> list[int]:
        """``IndexFile.selectPhyOffset``: commit-log offsets for ``key`` (a full ``topic#key``).

        Newest first, at most ``max_num``: the entries of the key's slot
        whose hash equals the key's (so other keys with the same hash are
        included) and whose time (the header's ``begin_timestamp`` plus
        ``time_diff`` seconds, see :meth:`IndexEntry.time_ms`) lies in
        ``[begin, end]`` ms. The walk stops where the broker's does: a negative
        ``time_diff``, a link of 0 or less, above ``indexCount`` or to
        itself, or an entry older than ``begin``.

        Two cases the broker does not stop cleanly: a slot or link that points
        past the last entry of the file (the broker's read fails and it keeps
        what it has) and a chain that loops (the broker never returns, or
        returns the loop's hits over and over up to ``max_num``, as this
        does when that means at most :data:`LOOP_REPEAT_LIMIT` repeats). Both
        raise a typed error, or with ``strict=False`` end the walk with the
        offsets found so far (each entry of a loop once).
        """
        hits: list = []
        self._select(hits, index_key_hash(key), max_num, begin, end, strict)
        return [hit[2] for hit in hits]

    def _select(self, hits: list, key_hash: int, max_num: int, begin: int, end: int, strict: bool) -> None:
        """Append ``(file, entry number, phy offset, time ms)`` for each hit, as ``selectPhyOffset`` does."""
        read = self._read
        next_index = self.header.next_index
        slot_at = HEADER_SIZE + (key_hash % self.num_hash_slots) * SLOT_SIZE
        (n,) = _SLOT.unpack(read(SLOT_SIZE, slot_at))
        if n <= 0 or n > next_index or next_index <= 1:
            return
        begin_ts = self.header.begin_timestamp
        entries_at = self._entries_at
        limit = self.num_index
        unpack = _ENTRY.unpack
        link_at = slot_at  # where the number n was read, for error messages
        # Brent's cycle detection: a walk that comes back to the marked entry
        # repeats forever (every step depends only on n). Without hits the
        # broker's lookup never returns; with hits it returns the loop's hits
        # over and over up to max_num, which are added here without walking,
        # as long as there are at most LOOP_REPEAT_LIMIT of them (time and
        # memory stay bounded whatever max_num is asked).
        mark, mark_hits, power, steps = n, len(hits), 1, 0
        while len(hits) < max_num:
            if n >= limit:
                if strict:
                    raise IndexRangeError(self.path, link_at, f"entry number {n} is past the last entry "
                                                              f"({limit - 1}) of the file")
                return
            at = entries_at + n * ENTRY_SIZE
            entry_hash, phy_offset, time_diff, prev = unpack(read(ENTRY_SIZE, at))
            if time_diff < 0:
                return
            time_read = _wrap64(begin_ts + time_diff * 1000)
            if entry_hash == key_hash and begin <= time_read <= end:
                hits.append((self, n, phy_offset, time_read))
            if prev <= 0 or prev > next_index or prev == n or time_read < begin:
                return
            link_at = at
            n = prev
            if n == mark:
                cycle = hits[mark_hits:]
                if cycle and max_num - len(hits) <= LOOP_REPEAT_LIMIT:
                    while len(hits) < max_num:  # what the broker's walk would add, in its order
                        hits.extend(cycle[:max_num - len(hits)])
                    return
                if strict:
                    raise IndexChainLoopError(
                        self.path, at, f"the chain of entries loops back to entry {n}; the broker's lookup "
                        + (f"would repeat {len(cycle)} hit(s) until {max_num} are found" if cycle
                           else "would not end"))
                return
            steps += 1
            if steps == power:
                mark, mark_hits, power, steps = n, len(hits), power * 2, 0


class IndexFiles:
    """The index files of a store (``<root>/index/``), in the broker's load order (file names, lexical).

    Every regular file in the folder is opened, as the broker does;
    ``num_hash_slots``, ``num_index`` and ``mapped`` as for :class:`IndexFile`.
    """

    def __init__(self, index_dir: str | os.PathLike[str], *, num_hash_slots: int | None = None,
                 num_index: int | None = None, mapped: bool = False):
        self.path = os.fspath(index_dir)
        names = sorted(os.listdir(self.path)) if os.path.isdir(self.path) else []
        files: list[IndexFile] = []
        try:
            for name in names:
                full = os.path.join(self.path, name)
                if os.path.isfile(full):
                    files.append(IndexFile(full, num_hash_slots=num_hash_slots, num_index=num_index,
                                           mapped=mapped))
        except BaseException:
            for f in files:
                f.close()
            raise
        self.files: tuple[IndexFile, ...] = tuple(files)

    def __repr__(self) -> str:
        return f"IndexFiles({self.path!r}, {len(self.files)} files)"

    def __iter__(self) -> Iterator[IndexFile]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def close(self) -> None:
        for f in self.files:
            f.close()

    def __enter__(self) -> IndexFiles:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # The columnar readers are a capability above this reader; imported on first use only.
    def batches(self, *, strict: bool = True, batch_size: int = 1 << 18) -> Batches:
        """The written entries of every file, in load order, as record batches; options of :meth:`IndexFile.batches`."""
        return index_batches(self, strict=strict, batch_size=batch_size)

    def to_arrow(self, *, strict: bool = True, batch_size: int = 1 << 18) -> pyarrow.Table:
        """The written entries of every file as one :class:`pyarrow.Table`."""
        return self.batches(strict=strict, batch_size=batch_size).read_all()

    def to_pandas(self, *, strict: bool = True, batch_size: int = 1 << 18) -> pandas.DataFrame:
        """The written entries of every file as a :class:`pandas.DataFrame`."""
        require_pandas()
        return self.to_arrow(strict=strict, batch_size=batch_size).to_pandas()

    def headers_to_arrow(self) -> pyarrow.Table:
        """One row per file: name, size, counts and header."""
        return index_headers(self)

    def query_offsets(self, topic: str, key: str, *, max_num: int = DEFAULT_MAX_NUM, begin: int = 0,
                      end: int = LONG_MAX, strict: bool = True) -> list[int]:
        """``IndexService.queryOffset``: commit-log offsets of index hits for ``topic#key``.

        Files are searched newest first (those whose time range meets
        ``[begin, end]`` ms); the search stops after a file whose
        ``begin_timestamp`` is before ``begin``, or with ``max_num`` hits.
        The broker caps ``max_num`` at ``maxMsgsNumBatch`` (default 64).
        Hash collisions are included, as the broker returns them; see
        :func:`lookup` for checked results. ``strict`` as in
        :meth:`IndexFile.select_phy_offsets`.
        """
        return [hit[2] for hit in self._query(topic, key, max_num, begin, end, strict)]

    def _query(self, topic: str, key: str, max_num: int, begin: int, end: int, strict: bool) -> list:
        hits: list = []
        key_hash = index_key_hash(f"{topic}#{key}")
        for f in reversed(self.files):
            if f.is_time_matched(begin, end):
                f._select(hits, key_hash, max_num, begin, end, strict)
            if f.header.begin_timestamp < begin or len(hits) >= max_num:
                break
        return hits


class IndexHit(NamedTuple):
    """One result of :func:`lookup`."""

    #: Commit-log offset from the index entry.
    commitlog_offset: int
    #: Name of the index file holding the entry.
    index_file: str
    #: Entry number in that file.
    entry: int
    #: Store time from the entry (ms): ``begin_timestamp + time_diff * 1000``, whole seconds only.
    store_time_approx: int
    #: The message read from the commit log; ``None`` when not read or unreadable.
    message: Message | None
    #: True when the message's topic is the one asked and it carries the key;
    #: ``None`` when not checked or the message could not be read.
    key_matches: bool | None
    #: Why the message could not be read (``None`` otherwise).
    error: str | None = None


def lookup(store: StoreView, topic: str, key: str, *, begin: int | str | datetime | None = None,
           end: int | str | datetime | None = None,
           max_num: int = DEFAULT_MAX_NUM, check_keys: bool = True, num_hash_slots: int | None = None,
           num_index: int | None = None) -> list[IndexHit]:
    """Messages of ``topic`` whose KEYS or UNIQ_KEY is ``key``, found through the index.

    ``begin`` and ``end`` are store times, as in the broker's ``queryMessage``
    (default: all time): epoch milliseconds, ISO 8601 text or a datetime
    (UTC when naive), as everywhere in the API (:func:`rmqformats.message.to_millis`). The index is searched as
    :meth:`IndexFiles.query_offsets` does, giving hits newest first.

    With ``check_keys`` (the default) each hit's message is read from the
    commit log and kept only if its topic is ``topic`` and ``key`` is one of
    its ``KEYS`` (split on spaces) or its ``UNIQ_KEY``: hash collisions and
    other topics' keys are dropped, as a RocketMQ client does. A hit whose
    message cannot be read (its commit-log segment was deleted, or the bytes
    there are not a message) is kept with ``message=None``,
    ``key_matches=None`` and the reason in ``error``, since the index did
    point there. With ``check_keys=False`` the hits are returned as the
    broker returns them, without reading the commit log.
    """
    if not isinstance(topic, str) or not isinstance(key, str):
        raise TypeError(f"topic and key must be str, not {type(topic).__name__} and {type(key).__name__}")
    begin = 0 if begin is None else to_millis(begin)
    end = LONG_MAX if end is None else to_millis(end)
    with IndexFiles(store.path("index"), num_hash_slots=num_hash_slots, num_index=num_index) as files:
        raw = files._query(topic, key, max_num, begin, end, True)
        found = [(f.name, n, phy, t) for f, n, phy, t in raw]
    if not check_keys:
        return [IndexHit(phy, name, n, t, None, None) for name, n, phy, t in found]
    hits = []
    for (name, n, phy, t), msg in zip(found, store.commitlog.read_each([phy for _, _, phy, _ in found])):
        if isinstance(msg, RmqFormatError):
            hits.append(IndexHit(phy, name, n, t, None, None, msg.whole()))
        elif msg.topic == topic and (msg.uniq_key == key or key in msg.keys):
            hits.append(IndexHit(phy, name, n, t, msg, True))
    return hits


def looks_like_uniq_key(text: str) -> bool:
    """Whether ``text`` has the shape of a producer's message id (``UNIQ_KEY``, what
    ``SendResult.getMsgId()`` returns): 32 hex characters (IPv4 client: address, pid, class-loader
    hash, time, counter) or 56 (IPv6 client). Offset message ids have the same lengths; the caller
    tries that reading first."""
    return len(text) in (32, 56) and all(c in "0123456789abcdefABCDEF" for c in text)


def describe_uniq_key(text: str) -> str:
    """The client address and pid a ``UNIQ_KEY`` starts with (``MessageClientIDSetter``), in words."""
    import ipaddress
    raw = bytes.fromhex(text)
    n = 4 if len(raw) == 16 else 16
    return f"client {ipaddress.ip_address(raw[:n])}, pid {int.from_bytes(raw[n:n + 2], 'big')}"


def find_uniq_key(store: StoreView, uniq_key: str) -> tuple[list, str]:
    """The messages whose ``UNIQ_KEY`` is ``uniq_key``, in commit-log order, and how they were found.

    Through the index files when the store has them (a lookup by key in
    every topic of the consume queues, as ``queryMessage`` by UNIQ_KEY does
    per topic); else, or when the index finds none (a store written with
    ``messageIndexEnable=false``, or index files deleted), by scanning the
    commit log's properties for it. A retried or resent message has several
    records with one ``UNIQ_KEY``: all are returned.
    """
    key = uniq_key.upper()
    if store.root is not None and os.path.isdir(store.path("index")) and os.listdir(store.path("index")):
        topics = sorted({q.topic for q in [*store.queues(), *store.batch_queues()]})
        found = {}
        for topic in topics:
            for hit in lookup(store, topic, key):
                if hit.message is not None and hit.message.uniq_key == key:
                    found[hit.message.commitlog_offset] = hit.message
        if found:
            return [found[k] for k in sorted(found)], "found by key in the index files"
    import pyarrow.compute as pc
    offsets = []
    for batch in store.commitlog.batches(["commitLogOffset", "uniqKey"], key=key):
        hit = pc.equal(batch.column("uniqKey"), key)
        offsets += batch.column("commitLogOffset").filter(pc.fill_null(hit, False)).to_pylist()
    messages = []
    for msg in store.commitlog.read_each(offsets):
        if isinstance(msg, RmqFormatError):  # (the walk just read it: the file changed since)
            raise msg
        messages.append(msg)
    return messages, "found by scanning the commit log's UNIQ_KEY properties"
