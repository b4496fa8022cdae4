"""Consumer offsets held in arrays: large ``consumerOffset.json`` files read in memory bounded by their size.

A parsed document holds a Python dict and two ints per committed offset
(30 to 50 times the file's size). Here the offsets of ``offsetTable`` are
two numpy arrays (queue ids as ``int32``, offsets as ``int64``: 12 bytes
per offset, where the file spends 12 to 20 characters on it) and each
``topic@group`` key is one string pointing at its slice of them. The file is
read in one pass by :func:`rmqformats.config.stream._walk_tables`, which
checks every entry as the schema says while it goes; the other top-level
members (``dataVersion``, ``groupTopicMap``, unknown keys) are small and
are validated with the schema as in the whole-document reader.

:class:`OffsetTable` and :class:`LmqOffsetTable` are read-only mappings
with the same keys and values as the dicts of the whole-document model, and
:class:`CompactConsumerOffsetsFile` is a :class:`ConsumerOffsetsFile` whose
``entries()`` and ``offsets`` are views over the arrays, not copies.
"""

from __future__ import annotations

import array
import codecs
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigSchemaError, ConfigSyntaxError
from .fastjson import FastjsonSyntaxError, _Parser, format_path, parse
from .models import ConsumerOffset, ConsumerOffsetsFile, DataVersion, split_topic_group
from .schema import check
from .stream import _LONG_MAX, _LONG_MIN, OFFSET_TABLES, _byte_offset, _walk_tables, _Walker

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def _key_of(topic: str, group: str) -> list[str]:
    """The ``topic@group`` keys :func:`split_topic_group` maps to (topic, group), most likely first."""
    keys = [f"{topic}@{group}"]
    if group == "" and "@" not in topic:
        keys.append(topic)
    return keys


class TopicGroupKeys(Sequence):
    """``topic@group`` keys held as two numbers each: the topic's and the group's place in their name lists.

    A broker's keys repeat a few thousand topics and groups in millions of
    combinations; a Python string per key would cost more than the file
    spends on it. Key ``i`` is ``topics[topic_ids[i]] + "@" + groups[group_ids[i]]``,
    or ``topics[topic_ids[i]]`` alone where ``group_ids[i]`` is -1 (a key
    without ``@``). The split is :func:`split_topic_group`'s (the first ``@``).
    """

    def __init__(self, topics: list[str], groups: list[str], topic_ids: np.ndarray, group_ids: np.ndarray):
        self.topics, self.groups = topics, groups
        self.topic_ids, self.group_ids = topic_ids, group_ids
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.topic_ids)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        g = int(self.group_ids[index])
        t = self.topics[int(self.topic_ids[index])]
        return t if g < 0 else f"{t}@{self.groups[g]}"

    def __iter__(self) -> Iterator[str]:
        topics, groups = self.topics, self.groups
        for t, g in zip(self.topic_ids.tolist(), self.group_ids.tolist()):
            yield topics[t] if g < 0 else f"{topics[t]}@{groups[g]}"

    def codes(self) -> np.ndarray:
        """One number per key, equal for equal keys."""
        codes = self.topic_ids.astype(np.int64)
        codes *= len(self.groups) + 1
        codes += self.group_ids
        codes += 1
        return codes

    def index_of(self, key: object) -> int | None:
        """The place of ``key`` (the first, if written twice), or ``None``."""
        if not isinstance(key, str):
            return None
        if self._sorted is None:  # made on the first lookup: iteration does not need it
            codes = self.codes()
            order = np.argsort(codes, kind="stable")
            self._sorted = (codes[order], order)
        topic, sep, group = key.partition("@")
        topic_names, group_names = self._names()
        t = topic_names.get(topic)
        g = group_names.get(group) if sep else -1
        if t is None or g is None:
            return None
        code = t * (len(self.groups) + 1) + g + 1
        codes, order = self._sorted
        at = int(np.searchsorted(codes, code))
        return int(order[at]) if at < len(codes) and int(codes[at]) == code else None

    def _names(self) -> tuple[dict[str, int], dict[str, int]]:
        names = getattr(self, "_name_ids", None)
        if names is None:
            names = self._name_ids = ({n: i for i, n in enumerate(self.topics)},
                                      {n: i for i, n in enumerate(self.groups)})
        return names

    def take(self, places: np.ndarray) -> "TopicGroupKeys":
        return TopicGroupKeys(self.topics, self.groups, self.topic_ids[places], self.group_ids[places])


class _KeyBuilder:
    """Collects keys as :class:`TopicGroupKeys` numbers, each topic and group name held once."""

    def __init__(self) -> None:
        self.topic_names: dict[str, int] = {}
        self.group_names: dict[str, int] = {}
        self.topic_ids = array.array("i")
        self.group_ids = array.array("i")

    def add(self, key: str) -> None:
        topic, sep, group = key.partition("@")
        t = self.topic_names.get(topic)
        if t is None:
            t = self.topic_names[topic] = len(self.topic_names)
        if sep:
            g = self.group_names.get(group)
            if g is None:
                g = self.group_names[group] = len(self.group_names)
        else:
            g = -1
        self.topic_ids.append(t)
        self.group_ids.append(g)

    def __len__(self) -> int:
        return len(self.topic_ids)

    def build(self) -> tuple[TopicGroupKeys, np.ndarray | None, np.ndarray | None]:
        """The keys, and for keys written twice: the places kept (each key's first) and of their values (its last)."""
        keys = TopicGroupKeys(list(self.topic_names), list(self.group_names),
                              _arr(self.topic_ids, np.int32), _arr(self.group_ids, np.int32))
        self.topic_names = self.group_names = {}
        codes = keys.codes()
        ordered = np.sort(codes)
        if not len(codes) or not (ordered[1:] == ordered[:-1]).any():  # no key written twice
            return keys, None, None
        del ordered
        uniq, first = np.unique(codes, return_index=True)
        _, rev_first = np.unique(codes[::-1], return_index=True)
        last = len(codes) - 1 - rev_first  # aligned with ``first``: both in the order of ``uniq``
        order = np.argsort(first, kind="stable")
        kept = first[order]
        return keys.take(kept), kept, last[order]


def _arr(a: array.array, dtype) -> np.ndarray:
    return np.frombuffer(a, dtype=dtype) if len(a) else np.zeros(0, dtype)


class OffsetTable(Mapping):
    """``offsetTable`` as arrays: ``"topic@group"`` → {queue id → offset}, in file order.

    Each key's queue ids and offsets are one slice of :attr:`queue_ids` and
    :attr:`offsets` (``starts[i]:ends[i]`` for the ``i``-th key); the keys are
    a :class:`TopicGroupKeys`. A key written twice keeps its first place and
    its last value, as a dict does.
    """

    def __init__(self, keys: TopicGroupKeys, starts: np.ndarray, ends: np.ndarray,
                 queue_ids: np.ndarray, offsets: np.ndarray):
        self.keys_list = keys
        self.starts, self.ends, self.queue_ids, self.offsets = starts, ends, queue_ids, offsets

    def index_of(self, key: object) -> int | None:
        return self.keys_list.index_of(key)

    def __getitem__(self, key: str) -> dict[int, int]:
        i = self.index_of(key)
        if i is None:
            raise KeyError(key)
        a, b = int(self.starts[i]), int(self.ends[i])
        return dict(zip(self.queue_ids[a:b].tolist(), self.offsets[a:b].tolist()))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_list)

    def __len__(self) -> int:
        return len(self.keys_list)

    def __contains__(self, key: object) -> bool:
        return self.index_of(key) is not None

    def slice_of(self, i: int) -> tuple[list[int], list[int]]:
        """Queue ids and offsets of the ``i``-th key, as lists."""
        a, b = int(self.starts[i]), int(self.ends[i])
        return self.queue_ids[a:b].tolist(), self.offsets[a:b].tolist()

    def count(self) -> int:
        """Number of committed offsets (queues) in the table."""
        return int((self.ends - self.starts).sum()) if len(self.keys_list) else 0

    @property
    def nbytes(self) -> int:
        k = self.keys_list
        return (self.starts.nbytes + self.ends.nbytes + self.queue_ids.nbytes + self.offsets.nbytes
                + k.topic_ids.nbytes + k.group_ids.nbytes)


class LmqOffsetTable(Mapping):
    """``lmqOffsetTable`` as an array: ``"topic@group"`` → offset of queue 0, in file order."""

    def __init__(self, keys: TopicGroupKeys, offsets: np.ndarray):
        self.keys_list, self.offsets = keys, offsets

    def index_of(self, key: object) -> int | None:
        return self.keys_list.index_of(key)

    def __getitem__(self, key: str) -> int:
        i = self.index_of(key)
        if i is None:
            raise KeyError(key)
        return int(self.offsets[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_list)

    def __len__(self) -> int:
        return len(self.keys_list)

    def __contains__(self, key: object) -> bool:
        return self.index_of(key) is not None


class OffsetTableBuilder:
    """Collects ``offsetTable`` entries into growing typed arrays (no Python object per offset or key)."""

    def __init__(self) -> None:
        self.keys = _KeyBuilder()
        self.starts = array.array("q")
        self.ends = array.array("q")
        self.queue_ids = array.array("i")
        self.offsets = array.array("q")

    def add(self, key: str, pairs: list[tuple[int, int]], error) -> None:
        start = len(self.offsets)
        try:
            self.queue_ids.extend([q for q, _ in pairs])
        except OverflowError:
            bad = next(q for q, _ in pairs if not _INT32_MIN <= q <= _INT32_MAX)
            error(f"queue id {bad} is out of range for int32 (a Java Integer)")
        self.offsets.extend([o for _, o in pairs])  # checked as int64 by the walk
        self.keys.add(key)
        self.starts.append(start)
        self.ends.append(len(self.offsets))

    def build(self) -> OffsetTable:
        keys, _, values = self.keys.build()
        starts, ends = _arr(self.starts, np.int64), _arr(self.ends, np.int64)
        if values is not None:  # a key written twice: its last value, in its first place (as a dict keeps it)
            starts, ends = starts[values], ends[values]
        return OffsetTable(keys, starts, ends, _arr(self.queue_ids, np.int32), _arr(self.offsets, np.int64))


class _LmqBuilder:
    def __init__(self) -> None:
        self.keys = _KeyBuilder()
        self.offsets = array.array("q")

    def add(self, key: str, offset: int) -> None:
        self.keys.add(key)
        self.offsets.append(offset)

    def build(self) -> LmqOffsetTable:
        keys, _, values = self.keys.build()
        offsets = _arr(self.offsets, np.int64)
        if values is not None:
            offsets = offsets[values]
        return LmqOffsetTable(keys, offsets)


class OffsetEntries(Sequence):
    """``entries()`` of a :class:`CompactConsumerOffsetsFile`: each :class:`ConsumerOffset`, made when asked."""

    def __init__(self, table: OffsetTable, lmq: LmqOffsetTable | None):
        self.table, self.lmq = table, lmq
        self._n = table.count()

    def __len__(self) -> int:
        return self._n + (len(self.lmq) if self.lmq is not None else 0)

    def __iter__(self) -> Iterator[ConsumerOffset]:
        t = self.table
        for i, key in enumerate(t.keys_list):
            topic, group = split_topic_group(key)
            qs, offs = t.slice_of(i)
            for q, o in zip(qs, offs):
                yield ConsumerOffset(topic, group, q, o)
        if self.lmq is not None:
            for key, o in zip(self.lmq.keys_list, self.lmq.offsets.tolist()):
                yield ConsumerOffset(*split_topic_group(key), 0, o)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("entry index out of range")
        t = self.table
        if index >= self._n:
            key = self.lmq.keys_list[index - self._n]
            return ConsumerOffset(*split_topic_group(key), 0, int(self.lmq.offsets[index - self._n]))
        # The keys' slices, in key order, as cumulative counts.
        cum = getattr(self, "_cum", None)
        if cum is None:
            cum = self._cum = np.cumsum(t.ends - t.starts)
        i = int(np.searchsorted(cum, index, side="right"))
        j = int(t.starts[i]) + index - (int(cum[i - 1]) if i else 0)
        return ConsumerOffset(*split_topic_group(t.keys_list[i]), int(t.queue_ids[j]), int(t.offsets[j]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, OffsetEntries)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class OffsetLookup(Mapping):
    """``offsets`` of a :class:`CompactConsumerOffsetsFile`: (topic, group, queue id) → committed offset."""

    def __init__(self, table: OffsetTable, lmq: LmqOffsetTable | None):
        self.table, self.lmq = table, lmq

    def __getitem__(self, k: tuple[str, str, int]) -> int:
        topic, group, queue_id = k
        if self.lmq is not None and queue_id == 0:  # LMQ entries come last, so they win
            for key in _key_of(topic, group):
                if key in self.lmq:
                    return self.lmq[key]
        t = self.table
        for key in _key_of(topic, group):
            i = t.index_of(key)
            if i is None:
                continue
            a, b = int(t.starts[i]), int(t.ends[i])
            hits = np.flatnonzero(t.queue_ids[a:b] == queue_id) if _INT32_MIN <= queue_id <= _INT32_MAX else []
            if len(hits):
                return int(t.offsets[a + int(hits[-1])])
        raise KeyError(k)

    def __iter__(self) -> Iterator[tuple[str, str, int]]:
        lmq = [(*split_topic_group(k), 0) for k in (self.lmq.keys_list if self.lmq is not None else ())]
        in_lmq = set(lmq)
        for e in OffsetEntries(self.table, None):
            if (e.topic, e.group, e.queue_id) not in in_lmq:
                yield e.topic, e.group, e.queue_id
        yield from lmq

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class CompactConsumerOffsetsFile(ConsumerOffsetsFile):
    """A :class:`ConsumerOffsetsFile` whose tables are :class:`OffsetTable` / :class:`LmqOffsetTable` arrays.

    ``entries()`` is a sequence made as it is read (not a list) and
    ``offsets`` a mapping looked up in the arrays; ``to_json()`` gives the
    tables as those read-only mappings.
    """

    def entries(self) -> OffsetEntries:  # type: ignore[override]
        return OffsetEntries(self.offset_table, self.lmq_offset_table)  # type: ignore[arg-type]

    @property
    def offsets(self) -> OffsetLookup:  # type: ignore[override]
        return OffsetLookup(self.offset_table, self.lmq_offset_table)  # type: ignore[arg-type]


@dataclass(frozen=True)
class OffsetTables:
    """What a consumer offsets file's walk collected: its tables and the other top-level members."""

    offset_table: OffsetTable | None
    lmq_offset_table: LmqOffsetTable | None
    #: Other top-level members: name → (value, start, end) in the text.
    others: dict[str, tuple[Any, int, int]]
    #: Top-level member names in file order.
    order: list[str]


def _default_builder(name: str):
    return OffsetTableBuilder() if name == "offsetTable" else _LmqBuilder()


def walk_text(text: str, where: str, encoding: str, *, keep_others: bool = True,
              builders: Callable[[str], Any] | None = None) -> OffsetTables:
    """Read a consumer offsets document's text into :class:`OffsetTables`; typed errors name file, offset, path.

    ``builders`` (see :func:`read_offset_tables`) makes what each table's entries are given to.
    """
    builders = builders or _default_builder
    w = _Walker(text)
    tables: dict[str, Any] = {}
    others: dict[str, tuple[Any, int, int]] = {}
    order: list[str] = []
    current = None
    try:
        for kind, key, payload in _walk_tables(w, where, encoding, keep_others=keep_others):
            if kind == "queues":
                def error(reason: str, key=key) -> None:
                    raise ConfigSchemaError(where, None, reason, format_path(("offsetTable", key)))
                current.add(key, payload, error)
            elif kind == "lmq":
                current.add(key, payload)
            elif kind == "table":
                # A table written twice: the last one, as a dict keeps it.
                current = tables[key] = builders(key)
                order.append(key)
            else:
                others[key] = payload
                order.append(key)
    except FastjsonSyntaxError as exc:
        raise ConfigSyntaxError(where, _byte_offset(text, exc.pos, encoding), exc.reason,
                                format_path(exc.path)) from None
    finally:
        w.text = ""
    ot = tables.get("offsetTable")
    lt = tables.get("lmqOffsetTable")
    return OffsetTables(ot.build() if ot is not None else None, lt.build() if lt is not None else None,
                        others, list(dict.fromkeys(order)))


def _model_from_text(text: str, schema: str, path: str, encoding: str, encodings: Sequence[str],
                     warnings: list[str]) -> tuple[Any, Any, str, list[str], list[str]]:
    if encoding != encodings[0]:
        warnings.append(f"not {encodings[0].upper()}; decoded as {encoding.upper()} "
                        "(a 4.x broker writes with the JVM default charset)")
    found = walk_text(text, path, encoding)
    # The small members are validated as the whole-document reader does, with empty tables in
    # place of the ones already checked entry by entry.
    small = {name: (found.others[name][0] if name in found.others else {}) for name in found.order}
    problems, unknown_paths = check(schema, small)
    if problems:
        first = problems[0]
        offset = None
        if first.path and first.path[0] in found.others:
            _, start, end = found.others[first.path[0]]
            try:
                pos = parse(text[start:end]).positions.get(first.path[1:])
            except FastjsonSyntaxError:
                pos = None
            offset = _byte_offset(text, start + (pos or 0), encoding)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigSchemaError(path, offset, first.reason + more, format_path(first.path))
    unknown = [format_path(p) for p in unknown_paths]
    if unknown:
        warnings.append(f"{len(unknown)} key(s) unknown to the {schema} schema kept: {', '.join(unknown[:5])}"
                        + (" …" if len(unknown) > 5 else ""))
    data: dict[str, Any] = {}
    for name in found.order:
        if name == "offsetTable":
            data[name] = found.offset_table
        elif name == "lmqOffsetTable":
            data[name] = found.lmq_offset_table
        else:
            data[name] = found.others[name][0]
    extra = {k: v for k, v in data.items()
             if k not in ("offsetTable", "lmqOffsetTable", "dataVersion", "groupTopicMap")}
    dv = data.get("dataVersion")
    model = CompactConsumerOffsetsFile(
        offset_table=found.offset_table,  # type: ignore[arg-type]
        data_version=DataVersion.from_json(dv) if dv is not None else None,
        group_topic_map=data.get("groupTopicMap"),
        lmq_offset_table=found.lmq_offset_table,
        extra=extra)
    return data, model, encoding, unknown, warnings


def read_compact(path: str, schema: str, encodings: Sequence[str]) -> tuple[Any, Any, str, list[str], list[str]] | None:
    """Read and decode ``path`` into arrays, its bytes dropped once decoded; ``None`` when missing or empty."""
    from .text import _decode_text, _read_bytes
    raw = _read_bytes(path)
    if not raw:
        return None
    try:
        text, encoding = _decode_text(raw, encodings)
    except UnicodeDecodeError as exc:
        raise ConfigSyntaxError(path, exc.start, f"cannot decode: {exc.reason}") from None
    del raw  # the text alone from here: the bytes are not kept (ConfigFile.raw is empty)
    return _model_from_text(text, schema, path, encoding, encodings, [])


#: Bytes read at a time by :func:`_stream_tables`.
CHUNK_BYTES = 4 << 20
#: Longest single entry (or other top-level member) :func:`_stream_tables` reads; longer ones go to the text walk.
_MAX_PIECE = 4 << 20
# Byte patterns of the entries as brokers write them. Between members: fastjson's white space
# (_Parser.skip_ws); inside a queue map: what the text walk's map pattern (``\s``, ASCII part) allows.
_BWS = rb"[ \t\r\n\f\x08]*"
_MS = rb"[\t\n\x0b\x0c\r\x1c-\x1f ]*"
_BNUM = rb"-?[0-9]{1,19}"
_BMAP = (rb"\{" + _MS + rb"(?:" + _BNUM + _MS + rb":" + _MS + _BNUM + _MS + rb"(?:," + _MS + _BNUM + _MS + rb":"
         + _MS + _BNUM + _MS + rb")*)?\}")
_BKEY = rb'"((?:[^"\\]|\\.)*)"'
_QUEUES_ENTRY = re.compile(_BWS + _BKEY + _BWS + rb":" + _BWS + rb"(" + _BMAP + rb")" + _BWS + rb"([,}])", re.S)
_LMQ_ENTRY = re.compile(_BWS + _BKEY + _BWS + rb":" + _BWS + rb"(-?(?:0|[1-9][0-9]{0,18}))" + _BWS + rb"([,}])",
                        re.S)
_BPAIR = re.compile(rb"(" + _BNUM + rb")" + _MS + rb":" + _MS + rb"(" + _BNUM + rb")")
_MEMBER = re.compile(_BWS + _BKEY + _BWS + rb":" + _BWS, re.S)
_VALUE_START = re.compile(_BWS + rb"([^ \t\r\n\f\x08])", re.S)
_AFTER = re.compile(_BWS + rb"([,}])")


class _NotPlain(Exception):
    """The bytes are not as brokers write them: the text walk reads the file (and gives its exact error)."""


class _ByteWindow:
    """A window over a file's first ``size`` bytes, read in chunks; what is behind ``pos`` is dropped."""

    def __init__(self, f, size: int):
        self.f, self.left = f, size
        self.buf, self.pos = b"", 0

    @property
    def at_end(self) -> bool:
        return self.left == 0

    def more(self) -> bool:
        """Read one more chunk (dropping what was read); ``False`` at the end or past an entry's limit."""
        if self.left == 0 or len(self.buf) - self.pos > _MAX_PIECE:
            return False
        data = self.f.read(min(CHUNK_BYTES, self.left))
        if not data:  # shorter than its size when looked at: as read(size) would, read what is there
            self.left = 0
            return False
        self.left -= len(data)
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def match(self, pattern: re.Pattern) -> re.Match | None:
        """``pattern`` at ``pos``, reading more until it matches or cannot."""
        while True:
            m = pattern.match(self.buf, self.pos)
            if m is not None:
                return m
            if not self.more():
                return None


def _key_text(raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotPlain from None
    if "\\" in text:  # escapes as fastjson reads them
        try:
            text, _ = _Parser(f'"{text}"').string(0, ())
        except FastjsonSyntaxError:
            raise _NotPlain from None
    return text


def _stream_tables(f, size: int, builders: Callable[[str], Any] | None = None) -> OffsetTables:
    """The tables of a consumer offsets file read from ``f`` in chunks, never holding its text.

    Reads what brokers write (UTF-8, quoted keys, queue maps of integers);
    anything else raises :class:`_NotPlain`, and the text walk reads the file.
    Other top-level members are parsed (each at most ``_MAX_PIECE`` bytes) and dropped.
    """
    w = _ByteWindow(f, size)
    w.more()
    if w.buf.startswith(b"\xef\xbb\xbf"):
        w.pos = 3
    m = w.match(re.compile(_BWS + rb"\{", re.S))
    if m is None:
        raise _NotPlain
    w.pos = m.end()
    tables: dict[str, Any] = {}
    order: list[str] = []
    m = w.match(re.compile(_BWS + rb"\}", re.S))
    members = m is None
    if m is not None:
        w.pos = m.end()
    while members:
        m = w.match(_MEMBER)
        if m is None:
            raise _NotPlain
        name = _key_text(m.group(1))
        w.pos = m.end()
        m = w.match(_VALUE_START)  # the value's first byte read, not only white space before it
        if m is None:
            raise _NotPlain
        w.pos = m.end() - 1
        if name in OFFSET_TABLES:
            if m.group(1) != b"{":
                raise _NotPlain
            w.pos += 1
            builder = tables[name] = (builders or _default_builder)(name)
            order.append(name)
            _stream_entries(w, builder, name == "offsetTable")
        else:
            _skip_value(w)
            order.append(name)
        m = w.match(_AFTER)
        if m is None:
            raise _NotPlain
        w.pos = m.end()
        members = m.group(1) == b","
    m = w.match(re.compile(_BWS + rb"\Z", re.S))
    while m is not None and not w.at_end:  # white space up to the end of the file
        w.pos = m.end()
        if not w.more():
            break
        m = w.match(re.compile(_BWS + rb"\Z", re.S))
    if m is None or not w.at_end:
        raise _NotPlain
    ot, lt = tables.get("offsetTable"), tables.get("lmqOffsetTable")
    return OffsetTables(ot.build() if ot is not None else None, lt.build() if lt is not None else None,
                        {}, list(dict.fromkeys(order)))


def _stream_entries(w: _ByteWindow, builder, queues: bool) -> None:
    m = w.match(re.compile(_BWS + rb"\}", re.S))
    if m is not None:
        w.pos = m.end()
        return
    pattern = _QUEUES_ENTRY if queues else _LMQ_ENTRY
    while True:
        m = w.match(pattern)
        if m is None:
            raise _NotPlain
        key = _key_text(m.group(1))
        if queues:
            pairs = [(int(q), int(o)) for q, o in _BPAIR.findall(m.group(2))]
            for q, o in pairs:
                if not (_INT32_MIN <= q <= _INT32_MAX and _LONG_MIN <= o <= _LONG_MAX):
                    raise _NotPlain
            builder.add(key, pairs, None)
        else:
            o = int(m.group(2))
            if not _LONG_MIN <= o <= _LONG_MAX:
                raise _NotPlain
            builder.add(key, o)
        w.pos = m.end()
        if m.group(3) == b"}":
            return


def _skip_value(w: _ByteWindow) -> None:
    """Parse the member value at ``pos`` (one piece of at most ``_MAX_PIECE`` bytes) and move past it."""
    while True:
        piece = w.buf[w.pos:]
        try:
            text = piece.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(piece) - 4 or w.at_end:
                raise _NotPlain from None
            text = None
        if text is not None:
            p = _Walker(text)
            try:
                _, end = p.value(0, ("?",), 1)
                if end < len(text) or w.at_end:
                    w.pos += len(text[:end].encode("utf-8"))
                    return
            except FastjsonSyntaxError:
                if w.at_end:
                    raise _NotPlain from None
        if not w.more():
            raise _NotPlain


def read_offset_tables(path: str | os.PathLike[str], *, encodings: Sequence[str] = (),
                       builders: Callable[[str], Any] | None = None) -> OffsetTables | None:
    """The tables of a consumer offsets file (its ``.bak`` when missing, empty or damaged), as arrays.

    ``None`` when neither the file nor its ``.bak`` has content. When the
    ``.bak`` cannot help, the file's error is raised (as
    :func:`rmqformats.config.stream.read_committed_offsets` does).

    ``builders(name)``, when given, makes the object each table's entries
    are given to in file order instead of the arrays: ``add(key, pairs,
    error)`` for ``offsetTable`` (``pairs`` a list of (queue id, offset)),
    ``add(key, offset)`` for ``lmqOffsetTable``; its ``build()`` is the
    table in the result. A table's builder is built only when its whole
    file was read (a damaged file's, or a table written twice but for its
    last copy, never is).
    """
    from .text import DEFAULT_ENCODINGS, MAX_CONFIG_BYTES, _decode_text, _read_bytes
    from ..errors import ConfigError
    encodings = encodings or DEFAULT_ENCODINGS
    path = os.fspath(path)

    def one(candidate: str) -> OffsetTables | None:
        if codecs.lookup(encodings[0]).name == "utf-8":
            try:
                size = os.path.getsize(candidate)
            except FileNotFoundError:
                return None
            except OSError:
                size = -1  # the text walk's reader says why
            if size == 0:
                return None
            if 0 < size <= MAX_CONFIG_BYTES:
                try:
                    with open(candidate, "rb") as f:
                        return _stream_tables(f, size, builders)
                except (_NotPlain, OSError):
                    pass  # read as text below: the same tables, or the error the text walk gives
        raw = _read_bytes(candidate)
        if not raw:
            return None
        try:
            text, encoding = _decode_text(raw, encodings)
        except UnicodeDecodeError as exc:
            raise ConfigSyntaxError(candidate, exc.start, f"cannot decode: {exc.reason}") from None
        del raw
        return walk_text(text, candidate, encoding, keep_others=False, builders=builders)

    try:
        found = one(path)
    except ConfigError as exc:
        if not os.path.exists(path + ".bak"):
            raise
        try:
            return one(path + ".bak")
        except ConfigError as bak_exc:
            raise ConfigError(exc.path, exc.offset, f"{exc.reason}; the .bak copy fails too: {bak_exc}",
                              exc.json_path) from None
    if found is None:
        return one(path + ".bak")
    return found


__all__ = ["CompactConsumerOffsetsFile", "LmqOffsetTable", "OffsetEntries", "OffsetLookup", "OffsetTable",
           "OffsetTables", "OFFSET_TABLES", "read_compact", "read_offset_tables", "walk_text"]
