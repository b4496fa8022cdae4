"""Committed offsets in (group, topic) order, sorted in runs bounded in bytes and merged from temporary files.

``rmqformats lag`` lists its rows by group, topic and queue id, while a
``consumerOffset.json`` holds its ``topic@group`` keys in the order of the
broker's hash map. :class:`OffsetSorter` takes the entries of the offset
tables as they are read (it is the ``builders`` of
:func:`rmqformats.config.compact.read_offset_tables`), holds them in a run
of at most ``run_bytes`` (an estimate of the Python objects they take),
and writes each full run, sorted, to a file of a private temporary folder
(``tempfile.gettempdir()``, about the offsets file's size in all); the
runs are then merged. A file whose entries fit in one run is sorted in
memory and writes nothing. Memory is one run and a block per run file,
whatever the number of keys or of distinct names in the file.

The values are those of the arrays of :mod:`rmqformats.config.compact`: a
key written twice keeps its last value (its whole queue map), a table
written twice its last copy, a damaged file's entries none (its ``.bak``
is read instead); the keys of one (topic, group) (``topic`` and
``topic@``) are merged table by table, each table's in the order of their
first place in it, later ones overriding earlier ones queue by queue.
"""

from __future__ import annotations

import heapq
import marshal
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from itertools import chain

#: Estimated bytes of the entries held before they are written out as one sorted run.
RUN_BYTES = 48 << 20
#: Entries per block of a run file (a merge holds one block of each run it reads).
BLOCK_ENTRIES = 256
#: Most run files merged at once; more are merged into longer runs first.
MAX_FANIN = 64
# Estimated bytes of one held entry (its tuple, number, queue list) and of each (queue id, offset) pair.
_ENTRY_BYTES = 240
_PAIR_BYTES = 100
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


class OffsetSorter:
    """Offset table entries collected from one or more tables, given back in (group, topic) order.

    Each table is a numbered *source*; :meth:`table` makes what a table's
    entries are added to (the ``builders`` of ``read_offset_tables``), and
    only the entries of a source's last built table count. ``group`` and
    ``topic`` keep only those keys. Call :meth:`finish` once every table is
    read, then :meth:`committed` as often as needed.
    """

    def __init__(self, *, group: str | None = None, topic: str | None = None, run_bytes: int | None = None):
        self.group, self.topic = group, topic
        self._limit = RUN_BYTES if run_bytes is None else run_bytes
        self._run: list[tuple] = []
        self._held = 0
        self._names: dict[str, str] = {}
        self._runs: list[str] = []
        self._dir: str | None = None
        self._seq = 0
        self._tables = 0
        self._built: dict[int, int] = {}  # source → number of its last built table
        self._finished = False

    def table(self, source: int, *, lmq: bool = False) -> "TableEntries":
        """What the entries of one copy of ``source``'s table are added to (``lmq``: ``lmqOffsetTable`` entries)."""
        self._tables += 1
        return TableEntries(self, source, self._tables, lmq)

    def drop(self, source: int) -> None:
        """Leave ``source``'s entries out (a table the broker does not load)."""
        self._built.pop(source, None)

    @property
    def spilled_runs(self) -> int:
        """Number of sorted runs written to files (0 when every entry fitted in memory)."""
        return len(self._runs)

    def _add(self, source: int, table: int, key: str, pairs: tuple) -> None:
        topic, sep, group = key.partition("@")  # split_topic_group's split: the first '@'
        if (self.group is not None and group != self.group) or (self.topic is not None and topic != self.topic):
            return
        names = self._names
        held = self._held + _ENTRY_BYTES + _PAIR_BYTES // 2 * len(pairs)
        for name in (topic, group):  # each name held once per run
            if name not in names:
                names[name] = name
                held += 2 * len(name) + 100
        self._seq += 1
        self._run.append((names[group], names[topic], source, table, bool(sep), self._seq, pairs))
        self._held = held
        if held >= self._limit:
            self._spill()

    def _spill(self) -> None:
        if not self._run:
            return
        self._run.sort()
        try:
            if self._dir is None:
                self._dir = tempfile.mkdtemp(prefix="rmqformats-offsets-")
                weakref.finalize(self, _remove, self._dir, os.getpid())
            path = os.path.join(self._dir, f"run{len(self._runs)}")
            _write_run(path, self._run)
        except OSError as exc:
            raise _where(exc, self._dir or tempfile.gettempdir()) from None
        self._runs.append(path)
        self._run, self._names, self._held = [], {}, 0

    def finish(self) -> None:
        """Sort what is held (writing it out when runs were written) and merge run files down to ``MAX_FANIN``."""
        if self._finished:
            return
        self._finished = True
        if not self._runs:
            self._run.sort()
            self._names = {}
            return
        self._spill()
        while len(self._runs) > MAX_FANIN:
            first, self._runs = self._runs[:MAX_FANIN], self._runs[MAX_FANIN:]
            path = first[0] + "m"
            try:
                _write_run(path, heapq.merge(*map(_read_run, first)))
                for p in first:
                    os.unlink(p)
            except OSError as exc:
                raise _where(exc, path) from None
            self._runs.append(path)

    def _entries(self) -> Iterator[tuple]:
        if not self._runs:
            return iter(self._run)
        return heapq.merge(*map(_read_run, self._runs))

    def committed(self) -> Iterator[tuple[str, str, dict[int, int]]]:
        """(group, topic, {queue id: committed offset}) of every (topic, group) with an entry, sorted by
        group then topic (code point order)."""
        self.finish()
        built = self._built
        current: tuple[str, str] | None = None
        keys: list[list] = []  # per key of the pair: [source, first place, last queue ids and offsets]
        last = None
        for group, topic, source, table, has_at, seq, pairs in self._entries():
            if built.get(source) != table:
                continue
            if current is None or group != current[0] or topic != current[1]:
                if current is not None:
                    yield current[0], current[1], _merged(keys)
                current, keys, last = (group, topic), [], None
            if last == (source, has_at):  # the same key again: its last value, in its first place
                keys[-1][2] = pairs
            else:
                keys.append([source, seq, pairs])
                last = (source, has_at)
        if current is not None:
            yield current[0], current[1], _merged(keys)


def _merged(keys: list[list]) -> dict[int, int]:
    if len(keys) > 1:
        keys.sort(key=lambda k: (k[0], k[1]))
    committed: dict[int, int] = {}
    for _, _, pairs in keys:
        committed.update(zip(pairs[::2], pairs[1::2]))
    return committed


class TableEntries:
    """One copy of one offset table as it is read: entries go to its :class:`OffsetSorter`."""

    def __init__(self, sorter: OffsetSorter, source: int, table: int, lmq: bool):
        self.sorter, self.source, self.number, self.lmq = sorter, source, table, lmq
        self.keys = 0

    def add(self, key: str, value, error=None) -> None:
        """``offsetTable``: ``value`` the (queue id, offset) pairs; ``lmqOffsetTable``: the offset of queue 0."""
        if self.lmq:
            flat: tuple = (0, value)
        else:
            for q, _ in value:
                if not _INT32_MIN <= q <= _INT32_MAX:
                    error(f"queue id {q} is out of range for int32 (a Java Integer)")
            # One flat tuple of ints: the garbage collector stops tracking it (and the entry holding it), so
            # a run of many entries costs its collections nothing.
            flat = tuple(chain.from_iterable(value))
        self.keys += 1
        self.sorter._add(self.source, self.number, key, flat)

    def build(self) -> "TableEntries":
        """Mark this copy the one its source's entries come from (its file was read whole)."""
        self.sorter._built[self.source] = self.number
        return self

    def __len__(self) -> int:
        return self.keys


def _remove(folder: str, pid: int) -> None:
    """Remove the run files, from the process that made them only (a forked child's exit leaves them)."""
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def _where(exc: OSError, path: str) -> OSError:
    """``exc`` naming the run files' place (a full or read-only temporary directory: ``TMPDIR`` moves it)."""
    return OSError(exc.errno, f"{exc.strerror or exc} (writing the consumer offsets sorted by group and topic; "
                              f"TMPDIR chooses where)", exc.filename or path)


def _write_run(path: str, entries) -> None:
    """Blocks of entries, each its length (8 bytes, little-endian) and its ``marshal`` bytes."""
    with open(path, "wb") as f:
        block: list = []
        for e in entries:
            block.append(e)
            if len(block) == BLOCK_ENTRIES:
                _write_block(f, block)
                block = []
        if block:
            _write_block(f, block)


def _write_block(f, block: list) -> None:
    data = marshal.dumps(block)
    f.write(len(data).to_bytes(8, "little"))
    f.write(data)


def _read_run(path: str) -> Iterator[tuple]:
    # Whole blocks read and decoded from bytes: marshal.load on a file reads it a few bytes at a time.
    with open(path, "rb") as f:
        while True:
            head = f.read(8)
            if not head:
                return
            yield from marshal.loads(f.read(int.from_bytes(head, "little")))


__all__ = ["OffsetSorter", "TableEntries"]
