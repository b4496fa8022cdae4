"""Decoded body values as text: the whole value as compact JSON, and named fields picked out of it.

A decoder gives a Python value (what ``json.loads``, protobuf's
``MessageToDict``, fastavro or a Python function returns). :func:`as_json`
writes it as compact JSON, with the values JSON has no type for written as
text: bytes in base64, times and dates in ISO 8601, decimals and UUIDs as
their digits. A field path (``order``, ``customer.id``, ``items.0.sku``)
names a member of nested objects, a list item by its index; :func:`pick`
returns the field's text: a string as it is, any other value as compact
JSON, ``None`` where the path names nothing (or JSON null).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: The prefix of a field's column name: field ``customer.id`` is column ``body.customer.id``.
FIELD_PREFIX = "body."


class FieldPath:
    """One named field: its path in the decoded value and its column name."""

    __slots__ = ("path", "parts", "column")

    def __init__(self, path: str):
        self.path = path
        self.parts = tuple(path.split("."))
        self.column = FIELD_PREFIX + path

    def __repr__(self) -> str:
        return f"FieldPath({self.path!r})"


def parse_fields(fields: str | Iterable[str]) -> tuple[FieldPath, ...]:
    """The field paths of ``"a,b.c"`` (or of a list of paths), each once, in the order given.

    Raises :class:`ValueError` for an empty list or a path with an empty part (``a..b``, ``.a``).
    """
    names = fields.split(",") if isinstance(fields, str) else list(fields)
    paths: dict[str, FieldPath] = {}
    for name in names:
        name = str(name).strip()
        if not name or any(not part for part in name.split(".")):
            raise ValueError(f"body field {name!r} is not a field path (names joined by dots: order, customer.id, "
                             "items.0.sku)")
        paths.setdefault(name, FieldPath(name))
    if not paths:
        raise ValueError("give at least one body field (comma-separated: order,customer.id)")
    return tuple(paths.values())


def _jsonable(value: Any) -> Any:
    """A value JSON has no type for, as text (``default`` of :func:`json.dumps`)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def as_json(value: Any) -> str:
    """``value`` as compact JSON text (non-ASCII characters as they are)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_jsonable)


def as_text(value: Any) -> str:
    """What a Python decoder's value shows as: a ``str`` as it is, any other value as compact JSON."""
    return value if isinstance(value, str) else as_json(value)


def pick(value: Any, field: FieldPath) -> str | None:
    """The text of ``field`` in ``value``: a string as it is, other values as compact JSON, ``None`` when
    the path names nothing or JSON null."""
    for part in field.parts:
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)) and part.isdigit():
            index = int(part)
            value = value[index] if index < len(value) else None
        else:
            return None
        if value is None:
            return None
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview, datetime.date, datetime.time, decimal.Decimal, uuid.UUID)):
        return _jsonable(value)
    return as_json(value)
