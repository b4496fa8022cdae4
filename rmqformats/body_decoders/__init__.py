"""Message bodies decoded as what they are: JSON, text in an encoding, or what a Python function makes of them.

A decoder is named by a spec: ``json``, ``text:ENCODING`` (``text:utf-8``,
``text:gbk``), ``python:MODULE:FUNCTION`` (a function taking the body's
bytes and returning a ``str``, or a value written as JSON), or the name of an
entry point of the group ``rmqformats.body_decoders`` (``NAME`` or
``NAME:ARGUMENT``), whose object is called with the argument (or ``None``)
and returns such a function.

Decoding runs after decompression, one record batch at a time
(:func:`decode_batches`): the batch keeps ``body`` as stored bytes and gains
``bodyDecoded`` (text; JSON text for ``json`` and for values a function
returns) and ``bodyDecodeError`` (why a body did not decode, else null). A body
that does not decode is a row with its reason, never an error of the read.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Union

import pyarrow as pa

#: The entry-point group through which another package adds a decoder.
ENTRY_POINT_GROUP = "rmqformats.body_decoders"
#: The columns a decoded batch gains.
DECODED = pa.field("bodyDecoded", pa.string())
DECODE_ERROR = pa.field("bodyDecodeError", pa.string())

#: A decoder: the body's bytes to its text (or a value written as JSON); raises when it does not decode.
BodyFunction = Callable[[bytes], Any]
BodyDecoderSpec = Union[str, BodyFunction, None]


class BodyDecoderError(ValueError):
    """A decoder spec that names no decoder (an unknown kind, encoding, module or function)."""


def _json(body: bytes) -> str:
    value = json.loads(body)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _text(encoding: str) -> BodyFunction:
    import codecs
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise BodyDecoderError(f"text:{encoding}: no such encoding") from None
    return lambda body: body.decode(encoding)


def _python(target: str) -> BodyFunction:
    module, sep, name = target.rpartition(":")
    if not sep or not module or not name:
        raise BodyDecoderError(f"python:{target}: give python:MODULE:FUNCTION")
    try:
        function = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise BodyDecoderError(f"python:{target}: cannot import {module}: {exc}") from None
    except AttributeError:
        raise BodyDecoderError(f"python:{target}: {module} has no {name}") from None
    if not callable(function):
        raise BodyDecoderError(f"python:{target}: {module}.{name} is not callable")
    return function


def _entry_point(name: str, argument: str | None) -> BodyFunction | None:
    from importlib.metadata import entry_points
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()(argument)
    return None


def resolve(spec: BodyDecoderSpec) -> BodyFunction | None:
    """The function a decoder spec names; ``None`` for ``None``; a callable is taken as it is."""
    if spec is None or callable(spec):
        return spec
    kind, _, argument = str(spec).partition(":")
    if kind == "json" and not argument:
        return _json
    if kind == "text":
        return _text(argument or "utf-8")
    if kind == "python":
        return _python(argument)
    found = _entry_point(kind, argument or None)
    if found is None:
        raise BodyDecoderError(f"unknown body decoder {spec!r}: the decoders are json, text:ENCODING, "
                               f"python:MODULE:FUNCTION and the entry points of {ENTRY_POINT_GROUP}")
    return found


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def decode_body(function: BodyFunction, body: bytes | None) -> tuple[str | None, str | None]:
    """``(bodyDecoded, bodyDecodeError)`` of one body: the text, or ``None`` and why it did not decode."""
    if body is None:
        return None, None
    try:
        return _as_text(function(bytes(body))), None
    except Exception as exc:  # a body that does not decode is a row with its reason
        return None, (f"{type(exc).__name__}: {exc}".splitlines() or [type(exc).__name__])[0]


def decode_batch(batch: pa.RecordBatch, function: BodyFunction) -> pa.RecordBatch:
    """``batch`` with ``bodyDecoded`` and ``bodyDecodeError`` appended, from its ``body`` column."""
    decoded: list[str | None] = []
    errors: list[str | None] = []
    for body in batch.column("body").to_pylist():
        text, error = decode_body(function, body)
        decoded.append(text)
        errors.append(error)
    return pa.RecordBatch.from_arrays([*batch.columns, pa.array(decoded, pa.string()), pa.array(errors, pa.string())],
                                      schema=decoded_schema(batch.schema))


def decoded_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the decoded columns appended."""
    return schema.append(DECODED).append(DECODE_ERROR)


def decode_batches(batches: Iterable[pa.RecordBatch], decoder: BodyDecoderSpec) -> Iterator[pa.RecordBatch]:
    """Each batch (with a ``body`` column) with its bodies decoded by ``decoder`` (a spec or a function)."""
    function = resolve(decoder)
    for batch in batches:
        yield batch if function is None else decode_batch(batch, function)


__all__ = ["DECODED", "DECODE_ERROR", "ENTRY_POINT_GROUP", "BodyDecoderError", "decode_batch", "decode_batches",
           "decode_body",
           "decoded_schema", "resolve"]
