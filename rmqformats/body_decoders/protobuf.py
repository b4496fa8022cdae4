"""``protobuf:DESCRIPTOR_SET:MESSAGE``: bodies parsed as one protobuf message type, written as JSON.

``DESCRIPTOR_SET`` is a compiled ``FileDescriptorSet`` (``protoc
--include_imports --descriptor_set_out=shop.desc shop.proto``), ``MESSAGE``
the message's full name (``shop.Order``). A body is parsed with the
``protobuf`` package and written with ``google.protobuf.json_format``: field
names as in the ``.proto`` file, fields without presence (proto3 scalars)
written even when they hold their default, the proto3 JSON mapping for the
rest (64-bit integers and bytes as strings). Imports the set does not hold
are taken from the well-known types the package ships (``timestamp.proto``,
``struct.proto``, …).
"""

from __future__ import annotations

import os
from .decoder import BodyDecoder, BodyDecoderError
from .values import as_json

#: The extra that installs the package.
EXTRA = "protobuf"


def _missing(spec: str) -> str:
    return (f"{spec}: the protobuf package is not installed: pip install 'rmqformats[{EXTRA}]' "
            "(or pip install protobuf)")


def _well_known(name: str):
    """The descriptor of a well-known ``google/protobuf/*.proto`` file the package ships, else ``None``."""
    import importlib

    from google.protobuf import descriptor_pool
    if not name.startswith("google/protobuf/") or not name.endswith(".proto"):
        return None
    try:
        importlib.import_module("google.protobuf." + name[len("google/protobuf/"):-len(".proto")] + "_pb2")
        return descriptor_pool.Default().FindFileByName(name)
    except (ImportError, KeyError):
        return None


def load_message_class(spec: str, path: str, message: str) -> type:
    """The message class of ``message`` in the descriptor set at ``path``; raises :class:`BodyDecoderError` (one line)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.message import DecodeError
    where = os.path.abspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise BodyDecoderError(f"{spec}: cannot read {where}: {exc.strerror or exc}") from None
    files = descriptor_pb2.FileDescriptorSet()
    try:
        files.ParseFromString(data)
    except DecodeError:
        files.Clear()
    if not files.file:
        raise BodyDecoderError(f"{spec}: {where} is not a compiled FileDescriptorSet (protoc --include_imports "
                         "--descriptor_set_out=FILE.desc FILE.proto)")
    by_name = {f.name: f for f in files.file}
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(name: str, importer: str) -> None:
        if name in added:
            return
        added.add(name)
        proto = by_name.get(name)
        if proto is None:
            known = _well_known(name)
            if known is None:
                raise BodyDecoderError(f"{spec}: {where} lacks {name}, imported by {importer} (compile it with "
                                 "protoc --include_imports)")
            proto = descriptor_pb2.FileDescriptorProto()
            known.CopyToProto(proto)
        for dependency in proto.dependency:
            add(dependency, name)
        try:
            pool.AddSerializedFile(proto.SerializeToString())
        except (TypeError, ValueError) as exc:
            raise BodyDecoderError(f"{spec}: {where}: {name} does not build: {exc}".splitlines()[0]) from None

    for name in by_name:
        add(name, name)
    try:
        descriptor = pool.FindMessageTypeByName(message)
    except KeyError:
        names = sorted(m.full_name for f in by_name for m in _messages(pool.FindFileByName(f)))
        shown = ", ".join(names[:12]) + (f", … ({len(names)} in all)" if len(names) > 12 else "")
        raise BodyDecoderError(f"{spec}: {where} has no message {message!r}; its messages: {shown or 'none'}") from None
    return message_factory.GetMessageClass(descriptor)


def _messages(file) -> list:
    """Every message type of a file descriptor, nested ones included."""
    out: list = []
    stack = list(file.message_types_by_name.values())
    while stack:
        m = stack.pop()
        out.append(m)
        stack.extend(m.nested_types)
    return out


def protobuf_decoder(argument: str) -> BodyDecoder:
    """The decoder of ``protobuf:ARGUMENT``; raises :class:`BodyDecoderError` (one line)."""
    spec = f"protobuf:{argument}"
    path, sep, message = argument.rpartition(":")
    if not sep or not path or not message:
        raise BodyDecoderError(f"{spec}: give protobuf:DESCRIPTOR_SET:MESSAGE (a compiled .desc file and the message's "
                         "full name, such as protobuf:shop.desc:shop.Order)")
    try:
        from google.protobuf import json_format
    except ImportError:
        raise BodyDecoderError(_missing(spec)) from None
    cls = load_message_class(spec, path, message)

    def value(body: bytes) -> dict:
        parsed = cls()
        parsed.ParseFromString(body)
        return json_format.MessageToDict(parsed, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)
    return BodyDecoder(spec, value, as_json)
