"""Message bodies decoded as what they are: JSON, text, protobuf, Avro, or what a Python function makes of them.

A decoder is named by a spec: ``json``, ``text:ENCODING`` (``text:utf-8``,
``text:gbk``), ``protobuf:DESCRIPTOR_SET:MESSAGE`` (a compiled
``FileDescriptorSet`` and a message's full name, :mod:`.protobuf`; the
``protobuf`` extra), ``avro:SCHEMA_FILE`` (an ``.avsc`` schema, :mod:`.avro`;
the ``avro`` extra), ``python:MODULE:FUNCTION`` (a function taking the body's
bytes and returning a ``str``, or a value written as JSON), or the name of an
entry point of the group ``rmqformats.body_decoders`` (``NAME`` or
``NAME:ARGUMENT``), whose object is called with the argument (or ``None``)
and returns such a function.

Decoding runs after decompression, one record batch at a time
(:func:`decode_batches`): the batch keeps ``body`` as stored bytes and gains
``bodyDecoded`` (text; compact JSON for ``json``, ``protobuf``, ``avro`` and
for values a function returns) and ``bodyDecodeError`` (why a body did not
decode, else null). With body fields (``order,customer.id``) the batch gains
one string column per field, ``body.order`` and ``body.customer.id``
(:mod:`.values`: a string as it is, other values as compact JSON, null where
the body has no such field), in place of ``bodyDecoded``. A body that does
not decode is a row with its reason, never an error of the read.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Union

import pyarrow as pa

from ..frames import from_strings
from .decoder import BodyDecoder, BodyDecoderError
from .values import FIELD_PREFIX, FieldPath, as_json, parse_fields, pick

#: The entry-point group through which another package adds a decoder.
ENTRY_POINT_GROUP = "rmqformats.body_decoders"
#: The columns a decoded batch gains.
DECODED = pa.field("bodyDecoded", pa.string())
DECODE_ERROR = pa.field("bodyDecodeError", pa.string())

#: A decoder: the body's bytes to its text (or a value written as JSON); raises when it does not decode.
BodyFunction = Callable[[bytes], Any]
BodyDecoderSpec = Union[str, BodyFunction, None]
#: Body fields: ``"a,b.c"`` or a list of field paths.
BodyFieldsSpec = Union[str, Iterable[str], None]

#: The decoders named by a spec, for messages that list them.
KINDS = "json, text:ENCODING, protobuf:DESCRIPTOR_SET:MESSAGE, avro:SCHEMA_FILE, python:MODULE:FUNCTION"


def _json() -> BodyDecoder:
    return BodyDecoder("json", json.loads, as_json)


def _text(encoding: str) -> BodyDecoder:
    import codecs
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise BodyDecoderError(f"text:{encoding}: no such encoding") from None
    return BodyDecoder(f"text:{encoding}", lambda body: body.decode(encoding), str, fields=False)


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


def resolve(spec: BodyDecoderSpec) -> BodyDecoder | None:
    """The decoder a spec names; ``None`` for ``None``; a function is taken as a Python decoder.

    Raises :class:`BodyDecoderError` (one line) for a spec that names no
    decoder, a file it cannot read, or a decoder whose package is missing
    (naming the extra that installs it).
    """
    if spec is None or isinstance(spec, BodyDecoder):
        return spec
    if callable(spec):
        return BodyDecoder(getattr(spec, "__qualname__", repr(spec)), spec)
    kind, _, argument = str(spec).partition(":")
    if kind == "json" and not argument:
        return _json()
    if kind == "text":
        return _text(argument or "utf-8")
    if kind == "protobuf":
        from .protobuf import protobuf_decoder
        return protobuf_decoder(argument)
    if kind == "avro":
        from .avro import avro_decoder
        return avro_decoder(argument)
    if kind == "python":
        return BodyDecoder(str(spec), _python(argument))
    found = _entry_point(kind, argument or None)
    if found is None:
        raise BodyDecoderError(f"unknown body decoder {spec!r}: the decoders are {KINDS} and the entry points of "
                               f"{ENTRY_POINT_GROUP}")
    return BodyDecoder(str(spec), found)


def _reason(exc: BaseException) -> str:
    return (f"{type(exc).__name__}: {exc}".splitlines() or [type(exc).__name__])[0]


@dataclass(frozen=True)
class BodyDecoding:
    """A decoder and the body fields to pick out of its values: the columns a decoded batch gains."""

    decoder: BodyDecoder
    #: The named fields; none: the whole value in ``bodyDecoded``.
    fields: tuple[FieldPath, ...] = ()

    @property
    def columns(self) -> list[pa.Field]:
        """The columns appended to a batch: ``bodyDecoded`` (or the fields' columns), then ``bodyDecodeError``."""
        if self.fields:
            return [pa.field(f.column, pa.string()) for f in self.fields] + [DECODE_ERROR]
        return [DECODED, DECODE_ERROR]

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.columns]

    def decode(self, body: bytes | None) -> list[str | None]:
        """The values of :attr:`columns` for one body (all null for a null body)."""
        width = len(self.fields) or 1
        if body is None:
            return [None] * (width + 1)
        try:
            value = self.decoder.value(bytes(body))
            if not self.fields:
                return [self.decoder.text(value), None]
            return [pick(value, f) for f in self.fields] + [None]
        except Exception as exc:  # a body that does not decode is a row with its reason
            return [None] * width + [_reason(exc)]

    def schema(self, schema: pa.Schema) -> pa.Schema:
        """``schema`` with :attr:`columns` appended."""
        for f in self.columns:
            schema = schema.append(f)
        return schema

    def batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` with :attr:`columns` appended, decoded from its ``body`` column."""
        rows = [self.decode(body) for body in batch.column("body").to_pylist()]
        # (from_strings: pa.array of Python texts imports pandas the first time)
        arrays = [from_strings([row[i] for row in rows]) for i in range(len(self.columns))]
        return pa.RecordBatch.from_arrays([*batch.columns, *arrays], schema=self.schema(batch.schema))

    def nulls(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` with :attr:`columns` appended, all null (for a read that names none of them)."""
        n = batch.num_rows
        return pa.RecordBatch.from_arrays([*batch.columns, *(pa.nulls(n, pa.string()) for _ in self.columns)],
                                          schema=self.schema(batch.schema))

    def batches(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield self.batch(batch)


def decoding(decoder: BodyDecoderSpec | BodyDecoding, fields: BodyFieldsSpec = None) -> BodyDecoding | None:
    """The decoding a decoder spec (or function) and body fields name; ``None`` when neither is given.

    Raises :class:`BodyDecoderError` (one line) for a spec that names no
    decoder, fields without a decoder or with a text decoder, or a field
    that is not a path.
    """
    if isinstance(decoder, BodyDecoding):
        return decoder if fields is None else decoding(decoder.decoder, fields)
    function = resolve(decoder)
    if function is None:
        if fields is not None:
            raise BodyDecoderError(f"body fields need a body decoder that gives values with fields: "
                                   f"{KINDS.replace('text:ENCODING, ', '')}")
        return None
    paths: tuple[FieldPath, ...] = ()
    if fields is not None:
        if not function.fields:
            raise BodyDecoderError(f"{function.spec} gives text, which has no fields: body fields need json, "
                                   "protobuf, avro or a Python decoder")
        try:
            paths = parse_fields(fields)
        except ValueError as exc:
            raise BodyDecoderError(str(exc)) from None
    return BodyDecoding(function, paths)


def decode_body(function: BodyDecoderSpec, body: bytes | None) -> tuple[str | None, str | None]:
    """``(bodyDecoded, bodyDecodeError)`` of one body: the text, or ``None`` and why it did not decode."""
    text, error = BodyDecoding(resolve(function)).decode(body)  # type: ignore[arg-type]
    return text, error


def decode_batch(batch: pa.RecordBatch, function: BodyDecoderSpec, fields: BodyFieldsSpec = None) -> pa.RecordBatch:
    """``batch`` with ``bodyDecoded`` (or the fields' columns) and ``bodyDecodeError`` appended, from its
    ``body`` column."""
    found = decoding(function, fields)
    return batch if found is None else found.batch(batch)


def decoded_schema(schema: pa.Schema, decoding: BodyDecoding | None = None) -> pa.Schema:
    """``schema`` with the decoded columns of ``decoding`` appended (``bodyDecoded`` and ``bodyDecodeError``
    when ``None``)."""
    if decoding is not None:
        return decoding.schema(schema)
    return schema.append(DECODED).append(DECODE_ERROR)


def decode_batches(batches: Iterable[pa.RecordBatch], decoder: BodyDecoderSpec | BodyDecoding,
                   fields: BodyFieldsSpec = None) -> Iterator[pa.RecordBatch]:
    """Each batch (with a ``body`` column) with its bodies decoded by ``decoder`` (a spec or a function),
    and ``fields`` (``"a,b.c"`` or a list of paths) picked out of each body's value."""
    found = decoding(decoder, fields)
    for batch in batches:
        yield batch if found is None else found.batch(batch)


__all__ = ["DECODED", "DECODE_ERROR", "ENTRY_POINT_GROUP", "FIELD_PREFIX", "BodyDecoder", "BodyDecoderError",
           "BodyDecoding", "FieldPath", "decode_batch", "decode_batches", "decode_body", "decoded_schema",
           "decoding", "resolve"]
