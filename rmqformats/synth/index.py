"""Building index files through the generated construct schema, filled the way the broker fills them.

:class:`IndexFileBuilder` follows ``IndexFile.putKey``: the key's slot, the
chain link to the slot's previous entry, the time difference in seconds,
the header updates. :class:`IndexServiceBuilder` follows
``IndexService.buildIndex`` for whole messages over a series of files. The bytes come from ``generated/construct`` (the ``header``
type, and the ``tables(num_hash_slots, num_index)`` type for slots and
entries), not from a second encoder. (The top-level type cannot build a
file: it infers its counts from the size of the stream, which is empty
while building.) Tests build small files in memory with
:meth:`IndexFileBuilder.build`; a full-size file is written to disk in
chunks with a ``sink`` (entries as they are made, then slots and header),
so memory stays at the slot array.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable
from typing import BinaryIO

from ..generated.construct import rocketmq_index_file as cs
from ..index import ENTRY_SIZE, HEADER_SIZE, INT_MAX, SLOT_SIZE, index_key_hash

#: Entries or slots built per construct call when writing to a sink.
CHUNK = 1 << 16


class IndexFileBuilder:
    """An index file being filled by ``putKey``; see the module docstring.

    ``end_phy_offset`` and ``end_timestamp`` are what a new broker file
    inherits from the previous full one. ``legacy_slot_count`` counts
    ``hashSlotCount`` on every put, as brokers 4.0.0 to 4.7.0 did.
    With ``sink`` (a file opened ``r+b``), entries are written there as
    they fill a chunk and :meth:`finish` writes the rest.
    """

    def __init__(self, num_hash_slots: int, num_index: int, *, end_phy_offset: int = 0, end_timestamp: int = 0,
                 legacy_slot_count: bool = False, sink: BinaryIO | None = None):
        self.num_hash_slots = num_hash_slots
        self.num_index = num_index
        self.legacy_slot_count = legacy_slot_count
        self.slots = array("i", bytes(SLOT_SIZE * num_hash_slots))
        self.begin_timestamp = self.end_timestamp = 0
        self.begin_phy_offset = self.end_phy_offset = 0
        if end_phy_offset > 0:
            self.begin_phy_offset = self.end_phy_offset = end_phy_offset
        if end_timestamp > 0:
            self.begin_timestamp = self.end_timestamp = end_timestamp
        self.hash_slot_count = 0
        self.index_count = 1
        self.sink = sink
        #: Entry dicts not yet written to the sink (all of them without a sink), from entry 1.
        self.entries: list[dict] = []
        self._flushed = 1  # number of the first entry in self.entries

    @property
    def is_full(self) -> bool:
        """``IndexFile.isWriteFull``."""
        return self.index_count >= self.num_index

    def put_key(self, key: str, phy_offset: int, store_timestamp: int, *, key_hash: int | None = None) -> bool:
        """``IndexFile.putKey``; ``False`` when the file is full. ``key_hash`` overrides the key's hash."""
        if self.index_count >= self.num_index:
            return False
        h = index_key_hash(key) if key_hash is None else key_hash
        slot = h % self.num_hash_slots
        slot_value = self.slots[slot]
        if slot_value <= 0 or slot_value > self.index_count:
            slot_value = 0
        time_diff = _java_div(store_timestamp - self.begin_timestamp, 1000)
        if self.begin_timestamp <= 0:
            time_diff = 0
        elif time_diff > INT_MAX:
            time_diff = INT_MAX
        elif time_diff < 0:
            time_diff = 0
        self.entries.append({"key_hash": h, "ofs_physical": phy_offset, "time_diff": time_diff,
                             "prev_index": slot_value})
        self.slots[slot] = self.index_count
        if self.index_count <= 1:
            self.begin_phy_offset = phy_offset
            self.begin_timestamp = store_timestamp
        if slot_value == 0 or self.legacy_slot_count:
            self.hash_slot_count += 1
        self.index_count += 1
        self.end_phy_offset = phy_offset
        self.end_timestamp = store_timestamp
        if self.sink is not None and len(self.entries) >= CHUNK:
            self._flush_entries()
        return True

    def header_fields(self) -> dict:
        """The header as the construct ``index_header`` type takes it."""
        return {"begin_timestamp": self.begin_timestamp, "end_timestamp": self.end_timestamp,
                "ofs_begin_physical": self.begin_phy_offset, "ofs_end_physical": self.end_phy_offset,
                "num_hash_slots_used": self.hash_slot_count, "next_index": self.index_count}

    def build(self) -> bytes:
        """The whole file (for small counts; without a sink)."""
        if self.sink is not None:
            raise ValueError("this builder writes to its sink; call finish()")
        zero = {"key_hash": 0, "ofs_physical": 0, "time_diff": 0, "prev_index": 0}
        entries = [zero] + self.entries + [zero] * (self.num_index - 1 - len(self.entries))
        tables = cs.index_tables(self.num_hash_slots, self.num_index).build(
            {"hash_slots": [{"latest_index": v} for v in self.slots], "entries": entries})
        return cs.index_header.build(self.header_fields()) + tables

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`build` to ``path``."""
        with open(path, "wb") as f:
            f.write(self.build())

    def _flush_entries(self) -> None:
        if not self.entries:
            return
        data = cs.index_tables(0, len(self.entries)).build({"hash_slots": [], "entries": self.entries})
        self.sink.seek(HEADER_SIZE + self.num_hash_slots * SLOT_SIZE + self._flushed * ENTRY_SIZE)
        self.sink.write(data)
        self._flushed += len(self.entries)
        self.entries = []

    def finish(self) -> None:
        """Write the remaining entries, the non-empty slots and the header to the sink."""
        self._flush_entries()
        slots = self.slots
        for start in range(0, self.num_hash_slots, CHUNK):
            chunk = slots[start:start + CHUNK]
            if not any(chunk):
                continue  # the file is sparse: unwritten slots already read as 0
            data = cs.index_tables(len(chunk), 0).build({"hash_slots": [{"latest_index": v} for v in chunk],
                                                   "entries": []})
            self.sink.seek(HEADER_SIZE + start * SLOT_SIZE)
            self.sink.write(data)
        self.sink.seek(0)
        self.sink.write(cs.index_header.build(self.header_fields()))
        self.sink.flush()


class IndexServiceBuilder:
    """A series of index files filled as ``IndexService.buildIndex`` fills them, in memory.

    When a file is full, the key that did not fit goes into a new file that
    inherits the full file's end offset and end time.
    """

    def __init__(self, num_hash_slots: int, num_index: int, *, legacy_slot_count: bool = False):
        self.num_hash_slots = num_hash_slots
        self.num_index = num_index
        self.legacy_slot_count = legacy_slot_count
        self.files: list[IndexFileBuilder] = []

    def _last(self) -> IndexFileBuilder:
        """``getAndCreateLastIndexFile``."""
        if self.files and not self.files[-1].is_full:
            return self.files[-1]
        prev = self.files[-1] if self.files else None
        f = IndexFileBuilder(self.num_hash_slots, self.num_index, legacy_slot_count=self.legacy_slot_count,
                             end_phy_offset=prev.end_phy_offset if prev else 0,
                             end_timestamp=prev.end_timestamp if prev else 0)
        self.files.append(f)
        return f

    def put_message(self, topic: str, phy_offset: int, store_timestamp: int, *, keys: Iterable[str] = (),
                    uniq_key: str | None = None, is_rollback: bool = False) -> None:
        """``buildIndex`` for one message: ``topic#UNIQ_KEY``, then ``topic#key`` per non-empty key.

        Offsets below the current file's end offset (a replay) and ROLLBACK
        records are skipped, as the broker does.
        """
        f = self._last()
        if phy_offset < f.end_phy_offset or is_rollback:
            return
        for key in ([uniq_key] if uniq_key is not None else []) + [k for k in keys if k]:
            while not f.put_key(f"{topic}#{key}", phy_offset, store_timestamp):
                f = self._last()


def _java_div(a: int, b: int) -> int:
    """Java integer division (rounds toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def create_sparse(path: str | os.PathLike[str], num_hash_slots: int, num_index: int) -> BinaryIO:
    """Create a zero-filled (sparse) index file of full size, as the broker's mapping does; open ``r+b``."""
    with open(path, "wb") as f:
        f.truncate(HEADER_SIZE + num_hash_slots * SLOT_SIZE + num_index * ENTRY_SIZE)
    return open(path, "r+b")
