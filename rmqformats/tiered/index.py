"""Tiered-store index files (``IndexStoreFile``, 5.2.0+): header, slot table, items, key lookups.

Both forms of ``formats/rocketmq_tiered_index.ksy`` are read: the writing
form (``<store>/tiered_index_file/<timestamp>``: 32-byte items chained from
the slots) and the compacted form (``tiered_index_file/compacting/<timestamp>``
and the uploaded INDEX segments: runs of 28-byte items). Every count and
position taken from the file is checked against the file's size before it
is used; a lookup follows at most 512 items of a chain, as the plugin does,
and a chain that comes back to an item it passed is an error.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import TieredIndexError, with_article
from ..generated.layouts import rocketmq_tiered_index as layout
from ..javahash import java_string_hash
from ..mapped import pread as _pread

_HEADER = struct.Struct(layout.INDEX_HEADER_RUNS[0][1])
_SLOT = struct.Struct(layout.SLOT_RUNS[0][1])
_ITEM = struct.Struct(layout.ITEM_RUNS[0][1])
_COMPACT = struct.Struct(layout.COMPACT_ITEM_RUNS[0][1])
HEADER_SIZE = _HEADER.size
SLOT_SIZE = _SLOT.size
ITEM_SIZE = _ITEM.size
COMPACT_ITEM_SIZE = _COMPACT.size
assert (HEADER_SIZE, SLOT_SIZE, ITEM_SIZE, COMPACT_ITEM_SIZE) == (28, 8, 32, 28)
BEGIN = layout.FILE_MAGIC["begin_marker"]
END = layout.FILE_MAGIC["end_marker"]
#: ``MAX_QUERY_COUNT``: items of a chain a lookup reads at most.
MAX_QUERY_COUNT = 512
#: ``tieredStoreIndexFileMaxHashSlotNum`` and ``...MaxIndexNum`` defaults.
DEFAULT_SLOTS = 5_000_000
DEFAULT_ITEMS = 20_000_000
#: A compacted slot's run is read at most this long (``COMPACT_INDEX_ITEM_SIZE * 1024``).
MAX_RUN = COMPACT_ITEM_SIZE * 1024


def key_hash(topic: str, key: str, *, legacy: bool = False) -> int:
    """``IndexStoreFile.hashCode(topic#key)``: ``String.hashCode``, negated when negative (MIN_VALUE stays).

    ``legacy``: the 5.1.x ``TieredIndexFile.indexKeyHashMethod``, ``Math.abs`` with 0 for MIN_VALUE.
    """
    h = java_string_hash(f"{topic}#{key}")
    if h == -(1 << 31):
        return 0 if legacy else h
    return -h if h < 0 else h


#: The 5.1.x file names (current, previous, compacted) and the size its writing form adds (``IndexHeader`` is 40 bytes).
LEGACY_NAMES = ("0000", "1111", "2222")
LEGACY_EXTRA = 12


@dataclass(frozen=True)
class TieredIndexHeader:
    magic: int
    begin_timestamp: int
    end_timestamp: int
    num_used_slots: int
    num_items: int

    @property
    def is_sealed(self) -> bool:
        """END magic: the file is full or compacted."""
        return self.magic == END


@dataclass(frozen=True)
class TieredIndexItem:
    """One item: where a message with a key is in its queue's tiered commit log."""

    key_hash: int
    topic_id: int
    queue_id: int
    commitlog_offset: int
    size: int
    time_diff: int
    #: The chain link (writing form), ``None`` for a compact item.
    prev_item: int | None
    #: The item's number (writing form) or byte position (compacted form), and its file.
    number: int
    file: str

    def store_timestamp(self, header: TieredIndexHeader, scale: int = 1000) -> int:
        """Store time in ms: ``begin_timestamp + time_diff * scale`` (1000: seconds; 1 in 5.1.x files)."""
        return header.begin_timestamp + self.time_diff * scale


class TieredIndexFile:
    """One index file in either form; ``compacted`` is told by the size unless given.

    The writing form's slot and item counts are not in the file: they are
    ``num_hash_slots`` and ``num_items`` when given, else inferred from the
    size for the default ratio (4 items per slot).
    """

    def __init__(self, path: str | os.PathLike[str], *, num_hash_slots: int | None = None,
                 num_items: int | None = None, compacted: bool | None = None, legacy: bool | None = None):
        self.path = os.fspath(path)

        self.size = os.path.getsize(self.path)
        with open(self.path, "rb") as f:
            head = f.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            raise TieredIndexError(self.path, 0, f"{len(head)} bytes, less than the {HEADER_SIZE}-byte header")
        self.header = TieredIndexHeader(*_HEADER.unpack(head))
        h = self.header
        if h.magic not in (BEGIN, END):
            raise TieredIndexError(self.path, 0, f"bad magic 0x{h.magic & 0xFFFFFFFF:08x} (expected 0x{BEGIN & 0xFFFFFFFF:08x} or 0x{END & 0xFFFFFFFF:08x})")
        if h.num_items < 0 or h.num_used_slots < 0:
            raise TieredIndexError(self.path, 20, f"negative counts: {h.num_used_slots} slots used, "
                                                  f"{h.num_items} items")
        if legacy is None:
            legacy = os.path.basename(self.path) in LEGACY_NAMES or (
                compacted is not False and self._looks_legacy_compacted())
        #: A 5.1.x ``TieredIndexFile`` (see the spec): other empty-slot, numbering and time conventions.
        self.legacy = legacy
        self.time_scale = 1 if legacy else 1000
        if legacy:
            self._init_legacy(compacted, num_hash_slots, num_items)
            return
        body = self.size - HEADER_SIZE
        if compacted is None:
            # Compacted: header + slots * 8 + items * 28 exactly, with the items counted in the header.
            rest = body - h.num_items * COMPACT_ITEM_SIZE
            compacted = h.magic == END and rest > 0 and rest % SLOT_SIZE == 0 and \
                (num_hash_slots is None or rest == num_hash_slots * SLOT_SIZE) and \
                not self._fits_writing(body, num_hash_slots, num_items)
        self.compacted = compacted
        if compacted:
            rest = body - h.num_items * COMPACT_ITEM_SIZE
            if rest <= 0 or rest % SLOT_SIZE:
                raise TieredIndexError(self.path, 24, f"{h.num_items} compact items do not fit {with_article(self.size)}-byte "
                                                      "file with a slot table")
            self.num_hash_slots = rest // SLOT_SIZE
            self.num_items = h.num_items
        else:
            slots, items = self._writing_counts(body, num_hash_slots, num_items)
            self.num_hash_slots, self.num_items = slots, items
            if h.num_items > items - 1:
                raise TieredIndexError(self.path, 24, f"item count {h.num_items} is more than the file holds "
                                                      f"({items - 1} items after item 0)")
        if self.num_hash_slots <= 0:
            raise TieredIndexError(self.path, None, "no slot table")
        self._items_at = HEADER_SIZE + self.num_hash_slots * SLOT_SIZE

    def _looks_legacy_compacted(self) -> bool:
        """END magic, the slot count in the header, and the BEGIN magic after the items (an uploaded 5.1.x file)."""
        h = self.header
        end = HEADER_SIZE + h.num_used_slots * SLOT_SIZE + h.num_items * COMPACT_ITEM_SIZE
        if h.magic != END or h.num_used_slots <= 0 or self.size != end + 4:
            return False
        with open(self.path, "rb") as f:
            f.seek(end)
            return f.read(4) == BEGIN.to_bytes(4, "big", signed=True)

    def _init_legacy(self, compacted: bool | None, slots: int | None, items: int | None) -> None:
        h = self.header
        if compacted is None:
            compacted = os.path.basename(self.path) == "2222" or (
                h.magic == END and h.num_used_slots > 0
                and self.size == HEADER_SIZE + h.num_used_slots * SLOT_SIZE + h.num_items * COMPACT_ITEM_SIZE + 4)
        self.compacted = compacted
        if compacted:
            s = h.num_used_slots
            if s <= 0 or self.size != HEADER_SIZE + s * SLOT_SIZE + h.num_items * COMPACT_ITEM_SIZE + 4:
                raise TieredIndexError(self.path, 20, f"slot count {s} and item count {h.num_items} do not give "
                                                      f"the file's {self.size} bytes")
            self.num_hash_slots, self.num_items = s, h.num_items
        else:
            body = self.size - HEADER_SIZE - LEGACY_EXTRA
            self.num_hash_slots, self.num_items = self._writing_counts(body, slots, items)
            if h.num_items > self.num_items:
                raise TieredIndexError(self.path, 24, f"item count {h.num_items} is more than the file holds "
                                                      f"({self.num_items})")
        self._items_at = HEADER_SIZE + self.num_hash_slots * SLOT_SIZE

    @staticmethod
    def _fits_writing(body: int, slots: int | None, items: int | None) -> bool:
        if slots is not None and items is not None:
            return body == slots * SLOT_SIZE + items * ITEM_SIZE
        return body > 0 and body % (SLOT_SIZE + 4 * ITEM_SIZE) == 0 and slots is None and items is None

    def _writing_counts(self, body: int, slots: int | None, items: int | None) -> tuple[int, int]:
        if slots is None and items is None:
            per = SLOT_SIZE + 4 * ITEM_SIZE
            if body <= 0 or body % per:
                raise TieredIndexError(self.path, None, f"size {self.size} is not 28 + slots * 8 + 4 * slots * 32; "
                                                        "give the slot and item counts")
            return body // per, 4 * (body // per)
        if slots is None:
            slots = (body - items * ITEM_SIZE) // SLOT_SIZE
        if items is None:
            items = (body - slots * SLOT_SIZE) // ITEM_SIZE
        if slots <= 0 or items <= 0 or slots * SLOT_SIZE + items * ITEM_SIZE != body:
            raise TieredIndexError(self.path, None, f"size {self.size} is not 28 + {slots} slots * 8 + "
                                                    f"{items} items * 32")
        return slots, items

    # -- reading ---------------------------------------------------------------------------

    def _read(self, fd: int, n: int, pos: int, what: str) -> bytes:
        if pos < 0 or pos + n > self.size:
            raise TieredIndexError(self.path, pos, f"{what} at {pos}..{pos + n} is outside the {self.size}-byte file")
        data = _pread(fd, n, pos)
        if len(data) < n:
            raise TieredIndexError(self.path, pos, f"the file shrank while it was read ({what})")
        return data

    def slot(self, fd: int, number: int) -> tuple[int, int]:
        pos = HEADER_SIZE + number * SLOT_SIZE
        return _SLOT.unpack(self._read(fd, SLOT_SIZE, pos, f"slot {number}"))

    def _item(self, fd: int, number: int) -> TieredIndexItem:
        if number > self.header.num_items or (self.legacy and number >= self.header.num_items):
            raise TieredIndexError(self.path, HEADER_SIZE + (number % self.num_hash_slots) * SLOT_SIZE,
                                   f"item {number} is past the item count {self.header.num_items}")
        pos = self._items_at + number * ITEM_SIZE
        v = _ITEM.unpack(self._read(fd, ITEM_SIZE, pos, f"item {number}"))
        return TieredIndexItem(v[0], v[1], v[2], v[3], v[4], v[5], v[6], number, self.path)

    def items_for_hash(self, h: int) -> Iterator[TieredIndexItem]:
        """The items in the slot of hash ``h`` (all, not only those whose hash is ``h``), newest first."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            # Java's remainder keeps the sign: the one negative hash (MIN_VALUE) names no slot.
            slot_no = h % self.num_hash_slots if h >= 0 else -((-h) % self.num_hash_slots)
            value, length = self.slot(fd, slot_no)
            if self.compacted:
                if value <= 0 or length <= 0:  # (0, 0) never written, (-1, …) none in 5.1.x
                    return
                length = min(length, MAX_RUN)
                if value < self._items_at or length % COMPACT_ITEM_SIZE:
                    raise TieredIndexError(self.path, HEADER_SIZE + slot_no * SLOT_SIZE,
                                           f"slot {slot_no} run at {value}, {length} bytes, is not a run of items")
                data = self._read(fd, length, value, f"items of slot {slot_no}")
                for k in range(0, length, COMPACT_ITEM_SIZE):
                    v = _COMPACT.unpack_from(data, k)
                    yield TieredIndexItem(*v, None, value + k, self.path)
                return
            seen = set()
            left = MAX_QUERY_COUNT
            number = value
            # Items are numbered 1..count (5.1.x: 0..count-1, and -1 ends a chain).
            lo, hi = (0, self.header.num_items - 1) if self.legacy else (1, self.header.num_items)
            while left > 0 and lo <= number <= hi:
                if number in seen:
                    raise TieredIndexError(self.path, self._items_at + number * ITEM_SIZE,
                                           f"the chain of slot {slot_no} comes back to item {number}")
                seen.add(number)
                item = self._item(fd, number)
                yield item
                number = item.prev_item
                left -= 1
        finally:
            os.close(fd)

    def lookup(self, topic: str, key: str, *, topic_id: int | None = None,
               begin: int = 0, end: int = 1 << 62) -> list[TieredIndexItem]:
        """Items of ``key`` in ``topic`` (and ``topic_id`` when given) stored in ``[begin, end]`` ms."""
        h = key_hash(topic, key, legacy=self.legacy)
        return [i for i in self.items_for_hash(h)
                if i.key_hash == h and (topic_id is None or i.topic_id == topic_id)
                and begin <= i.store_timestamp(self.header, self.time_scale) <= end]

    def items(self) -> Iterator[TieredIndexItem]:
        """Every item, in file order (item 1 on in the writing form)."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            if self.compacted:
                for k in range(self.header.num_items):
                    pos = self._items_at + k * COMPACT_ITEM_SIZE
                    v = _COMPACT.unpack(self._read(fd, COMPACT_ITEM_SIZE, pos, f"item {k}"))
                    yield TieredIndexItem(*v, None, pos, self.path)
            else:
                first = 0 if self.legacy else 1
                for n in range(first, self.header.num_items + first):
                    yield self._item(fd, n)
        finally:
            os.close(fd)
