"""``avro:SCHEMA_FILE``: bodies read as one Avro datum of a schema (``.avsc``), written as JSON.

A body is the datum alone, as a producer's ``schemaless_writer`` (or Java's
``BinaryEncoder``) writes it: no container file header, no schema
fingerprint. It is read with ``fastavro.schemaless_reader``; a body with
bytes left after the datum does not decode. The record is written as compact
JSON: bytes and fixed in base64, times and dates in ISO 8601, decimals as
their digits, a union as its value.

A schema with an array of items that take no bytes (``null``, a ``fixed``
of size 0, a record of such fields) is refused: a few bytes of its count
would make a list of any length, with nothing in the body to bound it.
"""

from __future__ import annotations

import io
import json
import os

from .decoder import BodyDecoder, BodyDecoderError
from .values import as_json

#: The extra that installs the package.
EXTRA = "avro"


def avro_decoder(argument: str) -> BodyDecoder:
    """The decoder of ``avro:ARGUMENT``; raises :class:`BodyDecoderError` (one line)."""
    spec = f"avro:{argument}"
    if not argument:
        raise BodyDecoderError(f"{spec}: give avro:SCHEMA_FILE (the writer's schema, a .avsc JSON file)")
    try:
        import fastavro
    except ImportError:
        raise BodyDecoderError(f"{spec}: the fastavro package is not installed: pip install 'rmqformats[{EXTRA}]' "
                               "(or pip install fastavro)") from None
    where = os.path.abspath(argument)
    try:
        with open(argument, encoding="utf-8") as f:
            schema = json.load(f)
    except OSError as exc:
        raise BodyDecoderError(f"{spec}: cannot read {where}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BodyDecoderError(f"{spec}: {where} is not JSON: {exc}") from None
    try:
        parsed = fastavro.parse_schema(schema)
    except Exception as exc:  # fastavro raises several types for a schema it does not accept
        raise BodyDecoderError(f"{spec}: {where} is not an Avro schema: {exc}".splitlines()[0]) from None

    unbounded = _unbounded_array(parsed)
    if unbounded is not None:
        raise BodyDecoderError(f"{spec}: {where} has an array of items that take no bytes ({unbounded}): a body "
                               "could make it of any length; give its items a type that takes bytes")

    def value(body: bytes):
        stream = io.BytesIO(body)
        datum = fastavro.schemaless_reader(stream, parsed, None)
        left = len(body) - stream.tell()
        if left:
            raise ValueError(f"{left} byte{'s' if left != 1 else ''} left after the Avro datum "
                             f"({stream.tell()} bytes)")
        return datum
    return BodyDecoder(spec, value, as_json)


def _named(schema, names: dict) -> None:
    """Every named type of ``schema`` (records, enums, fixed), by its full name."""
    if isinstance(schema, list):
        for branch in schema:
            _named(branch, names)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "error", "enum", "fixed") and "name" in schema:
            names[schema["name"]] = schema
        for f in schema.get("fields", ()):
            _named(f.get("type"), names)
        for key in ("items", "values"):
            if key in schema:
                _named(schema[key], names)
        if isinstance(schema.get("type"), (dict, list)):
            _named(schema["type"], names)


def _zero_width(schema, names: dict, seen: frozenset = frozenset()) -> bool:
    """Whether a value of ``schema`` takes no bytes (``null``, ``fixed`` of size 0, records of those)."""
    if isinstance(schema, str):
        if schema in names and schema not in seen:
            return _zero_width(names[schema], names, seen | {schema})
        return schema == "null"
    if not isinstance(schema, dict):
        return False  # a union reads its branch's index
    kind = schema.get("type")
    if kind == "fixed":
        return schema.get("size") == 0
    if kind in ("record", "error"):
        name = schema.get("name")
        if name in seen:
            return False
        return all(_zero_width(f.get("type"), names, seen | {name}) for f in schema.get("fields", ()))
    if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind in names):
        return _zero_width(kind, names, seen)
    return kind == "null"


def _unbounded_array(schema) -> str | None:
    """The items' type of an array of ``schema`` whose items take no bytes, else ``None``."""
    names: dict = {}
    _named(schema, names)
    stack, seen = [schema], set()
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.get("type") == "array" and _zero_width(node.get("items"), names):
                items = node["items"]
                return items if isinstance(items, str) else str(items.get("name", items.get("type")))
            stack.extend(f.get("type") for f in node.get("fields", ()))
            stack.extend(node[k] for k in ("items", "values") if k in node)
            if isinstance(node.get("type"), (dict, list)):
                stack.append(node["type"])
    return None
