"""``avro:SCHEMA_FILE``: bodies read as one Avro datum of a schema (``.avsc``), written as JSON.

A body is the datum alone, as a producer's ``schemaless_writer`` (or Java's
``BinaryEncoder``) writes it: no container file header, no schema
fingerprint. It is read with ``fastavro.schemaless_reader``; a body with
bytes left after the datum does not decode. The record is written as compact
JSON: bytes and fixed in base64, times and dates in ISO 8601, decimals as
their digits, a union as its value.
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

    def value(body: bytes):
        stream = io.BytesIO(body)
        datum = fastavro.schemaless_reader(stream, parsed, None)
        left = len(body) - stream.tell()
        if left:
            raise ValueError(f"{left} byte{'s' if left != 1 else ''} left after the Avro datum "
                             f"({stream.tell()} bytes)")
        return datum
    return BodyDecoder(spec, value, as_json)
