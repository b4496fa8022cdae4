"""Committed consumer offsets read one table entry at a time, in memory bounded by the file's size.

A broker with tens of thousands of groups and topics writes a
``consumerOffset.json`` of hundreds of MB. Parsed into one Python document
(dicts of ints, and the positions kept for error messages) it takes 30 to 50
times its size; :func:`iter_consumer_offsets` instead walks the text once and
yields each committed offset as it is read, so memory stays at the text
(about twice the file while it is decoded, once after) plus one entry.

The walk reads fastjson's dialect as :mod:`rmqformats.config.fastjson` does
(unquoted integer keys) and checks each entry as the schema says (queue ids
are integers, offsets integers that fit a Java ``long``). Damage gives
a :class:`~rmqformats.errors.ConfigSyntaxError` or
:class:`~rmqformats.errors.ConfigSchemaError` naming file, byte offset and
JSON path, raised where it is met: entries before it were already yielded.
Like the broker, a missing or empty file is replaced by its ``.bak``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence

from ..errors import ConfigError, ConfigSchemaError, ConfigSyntaxError
from .fastjson import FastjsonSyntaxError, _NoPositions, _Parser, format_path
from .models import ConsumerOffset, split_topic_group

#: Consumer offsets files larger than this are streamed by the commands instead of parsed whole.
STREAM_BYTES = 16 << 20
#: The tables of ``consumerOffset.json`` / ``lmqConsumerOffset.json`` that hold committed offsets.
OFFSET_TABLES = ("offsetTable", "lmqOffsetTable")
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
# One queue map as brokers write it ({0:29,1:31}), matched whole so its pairs are read by the regex engine.
_NUM = r"-?[0-9]{1,19}"
_QUEUE_MAP = re.compile(rf"\{{\s*(?:{_NUM}\s*:\s*{_NUM}\s*(?:,\s*{_NUM}\s*:\s*{_NUM}\s*)*)?\}}")
_PAIR = re.compile(rf"({_NUM})\s*:\s*({_NUM})")


class _Walker(_Parser):
    def __init__(self, text: str):
        super().__init__(text)
        self.positions = _NoPositions()

    def expect(self, i: int, ch: str, path: tuple, what: str) -> int:
        i = self.skip_ws(i)
        if i >= self.n or self.text[i] != ch:
            raise self.fail(i, path, f"unexpected {self.what(i)}, expected {what}")
        return i + 1

    def key(self, i: int, path: tuple) -> tuple[str | int, int]:
        c = self.text[i] if i < self.n else ""
        if c == '"':
            return self.string(i, path)
        if c == "-" or c.isdigit():
            m = re.compile(r"-?[0-9]+").match(self.text, i)
            if m is not None:
                return self.integer(m, path), m.end()
        if i >= self.n:
            raise self.fail(i, path, "unexpected end of text (truncated file?) in an object")
        raise self.fail(i, path, f"unexpected {self.what(i)}, expected a key")

    def members(self, i: int, path: tuple) -> Iterator[tuple[str | int, int]]:
        """After the ``{`` at ``i - 1``: yield (key, position of its value); the caller moves ``self.pos`` past the value."""
        j = self.skip_ws(i)
        if j < self.n and self.text[j] == "}":
            self.pos = j + 1
            return
        self.pos = j
        while True:
            j = self.skip_ws(self.pos)
            key, j = self.key(j, path)
            j = self.expect(j, ":", path + (key,), "':' after the key")
            yield key, j
            j = self.skip_ws(self.pos)
            if j >= self.n:
                raise self.fail(j, path, "unexpected end of text (truncated file?) in an object")
            if self.text[j] == ",":
                self.pos = j + 1
                continue
            if self.text[j] == "}":
                self.pos = j + 1
                return
            raise self.fail(j, path, f"unexpected {self.what(j)}, expected ',' or '}}'")


def _file_text(path: str, encodings: Sequence[str]) -> tuple[str, str, str] | None:
    """(path read, text, charset) of the file or, when it is missing or empty, its ``.bak``; ``None`` if neither."""
    from .text import DEFAULT_ENCODINGS, _decode_text, _read_bytes
    encodings = encodings or DEFAULT_ENCODINGS
    for candidate in (path, path + ".bak"):
        raw = _read_bytes(candidate)
        if raw:
            try:
                text, encoding = _decode_text(raw, encodings)
            except UnicodeDecodeError as exc:
                raise ConfigSyntaxError(candidate, exc.start, f"cannot decode: {exc.reason}") from None
            return candidate, text, encoding
    return None


def _byte_offset(text: str, pos: int, encoding: str) -> int:
    try:
        return len(text[:pos].encode(encoding))
    except UnicodeEncodeError:
        return pos


def iter_consumer_offsets(path: str | os.PathLike[str], *,
                          encodings: Sequence[str] = ()) -> Iterator[ConsumerOffset]:
    """Each committed offset of a ``consumerOffset.json`` (or ``lmqConsumerOffset.json``), in file order.

    ``offsetTable`` entries give one :class:`ConsumerOffset` per queue,
    ``lmqOffsetTable`` entries one for queue 0 (as
    :meth:`ConsumerOffsetsFile.entries` does). Other members are parsed and
    dropped. Memory: the decoded text and one entry (see the module docstring).
    """
    path = os.fspath(path)
    found = _file_text(path, encodings)
    if found is None:
        if not os.path.exists(path) and not os.path.exists(path + ".bak"):
            raise ConfigError(path, None, "no such file (and no .bak)")
        return
    where, text, encoding = found
    del found
    w = _Walker(text)
    try:
        yield from _walk(w, where, encoding)
    except FastjsonSyntaxError as exc:
        raise ConfigSyntaxError(where, _byte_offset(text, exc.pos, encoding), exc.reason,
                                format_path(exc.path)) from None


def _walk(w: _Walker, where: str, encoding: str) -> Iterator[ConsumerOffset]:
    for kind, key, payload in _walk_tables(w, where, encoding):
        if kind == "lmq":
            yield ConsumerOffset(*split_topic_group(key), 0, payload)
        elif kind == "queues":
            topic, group = split_topic_group(key)
            for q, o in payload:
                yield ConsumerOffset(topic, group, q, o)


def _walk_tables(w: _Walker, where: str, encoding: str, *,
                 keep_others: bool = False) -> Iterator[tuple[str, object, object]]:
    """The document's table entries as they are read, checked as the schema says.

    Yields ``("queues", "topic@group", [(queue id, offset), ...])`` for each
    ``offsetTable`` entry, ``("lmq", "topic@group", offset)`` for each
    ``lmqOffsetTable`` entry, ``("table", name, position)`` when a table
    starts and, with ``keep_others``, ``("other", name, (value, start, end))``
    for every other top-level member (text positions of its value).
    """
    text = w.text
    i = w.skip_ws(1 if text.startswith("\ufeff") else 0)
    if i < w.n and text[i] != "{" and text[i] in '["-0123456789tfn':
        # Another JSON value: well-formed, it fails the schema (as the whole-document reader says).
        value, w.pos = w.value(i, (), 0)
        j = w.skip_ws(w.pos)
        if j < w.n:
            raise w.fail(j, (), f"unexpected {w.what(j)} after the end of the document")
        _schema_error(where, text, i, encoding, (), f"{_short_repr(value)} is not of type 'object'")
    i = w.expect(i, "{", (), "'{' (a consumer offsets file is an object)")
    for name, at in w.members(i, ()):
        at = w.skip_ws(at)
        if name not in OFFSET_TABLES or at >= w.n or text[at] != "{":
            if name in OFFSET_TABLES and at < w.n and text[at] in '["-0123456789tfn':
                value, w.pos = w.value(at, (name,), 1)
                _schema_error(where, text, at, encoding, (name,), f"{_short_repr(value)} is not of type 'object'")
            value, w.pos = w.value(at, (name,), 1)
            if keep_others:
                yield "other", name, (value, at, w.pos)
            continue
        table = (name,)
        yield "table", name, at
        for key, vat in w.members(at + 1, table):
            if not isinstance(key, str):  # an unquoted integer key: fastjson reads a String key's text
                key = str(key)
            vat = w.skip_ws(vat)
            path = table + (key,)
            if name == "lmqOffsetTable":
                value, w.pos = w.value(vat, path, 2)
                _check_int(where, text, vat, encoding, path, value, _LONG_MIN, _LONG_MAX, "int64")
                yield "lmq", key, value
                continue
            m = _QUEUE_MAP.match(text, vat)
            if m is not None:
                pairs = [(int(q), int(o)) for q, o in _PAIR.findall(text, vat, m.end())]
                w.pos = m.end()
            else:  # not as brokers write it: the general parser, for its exact error or odd but valid text
                value, w.pos = w.value(vat, path, 2)
                if not isinstance(value, dict):
                    _schema_error(where, text, vat, encoding, path, f"{type(value).__name__} is not an object")
                pairs = []
                for q, o in value.items():
                    if isinstance(q, str) and re.fullmatch(r"-?[0-9]{1,10}", q):  # a Java Integer key
                        q = int(q)
                    if not isinstance(q, int):
                        _schema_error(where, text, vat, encoding, path, f"queue id {_short_repr(q)} is not an integer "
                                                                        f"that a Java int holds")
                    pairs.append((q, o))
            for q, o in pairs:
                if isinstance(o, bool) or not isinstance(o, int) or not _LONG_MIN <= o <= _LONG_MAX:
                    _check_int(where, text, vat, encoding, path + (q,), o, _LONG_MIN, _LONG_MAX, "int64")
            yield "queues", key, pairs
    j = w.skip_ws(w.pos)
    if j < w.n:
        raise w.fail(j, (), f"unexpected {w.what(j)} after the end of the document")


def _short_repr(value) -> str:
    r = repr(value)
    return r if len(r) <= 80 else f"{r[:60]}… ({len(r):,} characters)"


def _schema_error(where: str, text: str, pos: int, encoding: str, path: tuple, reason: str):
    raise ConfigSchemaError(where, _byte_offset(text, pos, encoding), reason, format_path(path))


def _check_int(where: str, text: str, pos: int, encoding: str, path: tuple, value, lo: int, hi: int,
               what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        _schema_error(where, text, pos, encoding, path, f"{value!r} is not an integer ({what})")
    if not lo <= value <= hi:
        _schema_error(where, text, pos, encoding, path, f"{value} is out of range for {what}")


def read_committed_offsets(path: str | os.PathLike[str], *,
                           encodings: Sequence[str] = ()) -> dict[tuple[str, str, int], int]:
    """(topic, group, queue id) → committed offset of a consumer offsets file, read with :func:`iter_consumer_offsets`.

    When the file is damaged, its ``.bak`` is read instead, as the broker's
    ``ConfigManager.loadBak`` does; the file's error is raised when that
    fails too. Empty when neither exists. Costs the text plus the result,
    not the parsed document.
    """
    path = os.fspath(path)
    if not os.path.exists(path) and not os.path.exists(path + ".bak"):
        return {}
    try:
        return {(e.topic, e.group, e.queue_id): e.offset for e in iter_consumer_offsets(path, encodings=encodings)}
    except ConfigError as exc:
        if not os.path.exists(path + ".bak"):
            raise
        try:
            return {(e.topic, e.group, e.queue_id): e.offset
                    for e in iter_consumer_offsets(path + ".bak", encodings=encodings)}
        except ConfigError as bak_exc:
            raise ConfigError(exc.path, exc.offset, f"{exc.reason}; the .bak copy fails too: {bak_exc}",
                              exc.json_path) from None
