"""The rules every command presents its output by, in one place.

- **Keys and column names**: camelCase (``commitLogOffset``, ``queueId``,
  ``storeTimestamp``), the columnar names (:data:`rmqformats.columnar.COLUMNS`)
  where a column is one of them; a table's header uses the same names as the
  JSON keys of the same values (``queueId``, never ``queue``;
  ``committedOffset``, ``minOffset``, ``maxOffset`` in ``lag`` as in its
  JSON; a consumer offset is ``committedOffset`` in ``config`` too), so
  ``--columns`` takes what the header shows. Only a table's own summaries
  have a name of their own (``share`` of the bytes, a lag row's ``flags``);
  ``messages``' ``bodyBytes`` (the body's length as ``body`` shows it) is
  JSON's key with ``--body-limit`` and a ``--columns`` name. :func:`camel`
  turns the API's snake_case names into them.
- **Times**: ISO 8601 UTC with milliseconds (``2026-11-21T09:53:22.457Z``,
  :func:`iso`) wherever a time is shown for people: tables and notes. JSON
  keeps the epoch milliseconds the files hold under the field's own name and,
  where a record is a raw field (``dump checkpoint``), adds the ISO ``time``.
- **Offsets and sizes**: decimal in tables and JSON (commit-log offsets, file
  offsets, a BLANK record's position), as the broker logs them; hexadecimal
  only for what is an id or a hash (``msgId``, magic codes). A place in a
  file named in text (an error, a finding, a notice such as where the data
  ends) is ``FILE @ 0xHEX`` (:func:`place`, the notation of every typed
  error), so it reads one way on stderr, in ``check`` and in ``inspect``.
- **Text that is not printable** (a body shown with ``--body text``, a
  marker file's content): :func:`escape_text`, the same in a table cell and in
  JSON. A byte that is not UTF-8 is ``\\xNN``; a control character is
  ``\\t``, ``\\n``, ``\\r`` or ``\\xNN`` (``\\uNNNN`` above U+00FF); a backslash is
  ``\\\\``, so every escape reads one way back.
- **Widths**: display cells by ``wcwidth`` (:mod:`rmqformats.cells`), used
  by :mod:`rmqformats.cli.tables` and the streamed message table.
- **JSON Lines**: one JSON value per line, and every line one value. For a
  command that lists records (``messages``, ``queue``, ``lag``, ``dump``,
  ``lookup``, ``pending``) a line is a record (``pending``'s with ``"record"``
  naming its part). A command whose report mixes
  several tables (``config``, ``inspect``, ``check``) writes its own line
  first (what concerns the store as a whole), then a line per row of each
  table, each line with a ``"record"`` key naming its kind:
  ``config``: ``config``, ``file``, ``topic``, ``group``, ``consumerOffset``,
  ``delayOffset``; ``inspect``: ``inspect``, ``segment``, ``segmentGap``,
  ``damagedRange``, ``topic``, ``largestTopic``, ``largestQueue``; ``check``:
  ``check``, ``unreadable``, ``problem``, ``finding``, ``recovery``.
  ``--format json`` is the same report as one document.
"""

from __future__ import annotations

import os
import re

from ..errors import display_path, place
from ..message import format_millis

_CAMEL_BREAK = re.compile(r"_([a-z0-9])")


def camel(name: str) -> str:
    """``physic_msg_timestamp`` → ``physicMsgTimestamp``: a snake_case name in the JSON key style."""
    return _CAMEL_BREAK.sub(lambda m: m.group(1).upper(), name)


def camel_keys(d: dict) -> dict:
    """``d`` with its keys in the JSON key style (one level)."""
    return {camel(k): v for k, v in d.items()}


def iso(ms: int) -> str:
    """ISO 8601 UTC text of epoch ms; the raw number, flagged, for a value no date can show."""
    return format_millis(ms)


_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"}


def _escape_char(c: str) -> str:
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:  # a byte that is not UTF-8 (decoded with surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    if c in _SHORT:
        return _SHORT[c]
    if c.isprintable() or c == " ":
        return c
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def escape_text(data: bytes) -> str:
    """``data`` as UTF-8 text with every byte that is not text escaped, the same in tables and JSON.

    ``b"a\\x00b\\x92\\\\"`` is ``a\\x00b\\x92\\\\`` (the backslash doubled), so an escape
    is never confused with the characters ``\\x`` in a body.
    """
    text = data.decode("utf-8", "surrogateescape")
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(map(_escape_char, text))


def whole(where: object) -> str:
    """``str(where)`` of a place in a segment (a data end, a damaged range: ``segment`` and
    ``file_offset``) with the segment's whole path, as every line on stderr names a file."""
    text = str(where)
    segment = getattr(where, "segment", None)
    if segment:
        short = place(display_path(segment), where.file_offset)  # type: ignore[attr-defined]
        if text.startswith(short):
            return place(os.path.abspath(segment), where.file_offset) + text[len(short):]  # type: ignore[attr-defined]
    return text


__all__ = ["camel", "camel_keys", "escape_text", "iso", "place", "whole"]
