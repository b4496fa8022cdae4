"""A store whose bodies are JSON, protobuf and Avro, with the schema files that decode them.

The protobuf descriptor set is built here from a ``FileDescriptorProto``
(what ``protoc --descriptor_set_out`` writes), so no compiler is needed; the
bodies are written with the ``protobuf`` and ``fastavro`` packages, the
store through the construct schemas (:mod:`rmqformats.synth`).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rmqformats import synth

#: What each body holds: the fields every decoder gives back.
ORDERS = [
    {"order": 1, "sku": "a-1", "customer": {"id": "c1", "name": "\u4e2d\u6587"}, "tags": ["x", "y"]},
    {"order": 2, "sku": "b-2", "customer": {"id": "c2", "name": "Bo"}, "tags": []},
]
#: A body no decoder of these schemas reads.
BAD = b"\xff\xfe not a message"
#: The fields the tests ask for, and their text for each of :data:`ORDERS` (``nope`` is no field).
FIELDS = "order,customer.id,tags.1,nope"
EXPECTED = [{"body.order": "1", "body.customer.id": "c1", "body.tags.1": "y", "body.nope": None},
            {"body.order": "2", "body.customer.id": "c2", "body.tags.1": None, "body.nope": None}]

AVRO_SCHEMA = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "order", "type": "long"},
        {"name": "sku", "type": "string"},
        {"name": "customer", "type": {"type": "record", "name": "Customer",
                                      "fields": [{"name": "id", "type": "string"},
                                                 {"name": "name", "type": "string"}]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}


def need_packages() -> None:
    """Skip the test, with one reason, unless protobuf and fastavro are installed (the dev extra has both)."""
    for module, extra in (("google.protobuf", "protobuf"), ("fastavro", "avro")):
        pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[dev]' or '.[{extra}]')")


def descriptor_set() -> bytes:
    """A ``FileDescriptorSet`` of ``shop.proto``: ``shop.Customer`` and ``shop.Order`` (order is an int32 so
    its proto3 JSON is a number, as JSON's and Avro's are)."""
    from google.protobuf import descriptor_pb2
    F = descriptor_pb2.FieldDescriptorProto
    files = descriptor_pb2.FileDescriptorSet()
    proto = files.file.add(name="shop.proto", package="shop", syntax="proto3")
    customer = proto.message_type.add(name="Customer")
    customer.field.add(name="id", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    customer.field.add(name="name", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    order = proto.message_type.add(name="Order")
    order.field.add(name="order", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    order.field.add(name="sku", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    order.field.add(name="customer", number=3, type=F.TYPE_MESSAGE, type_name=".shop.Customer",
                    label=F.LABEL_OPTIONAL)
    order.field.add(name="tags", number=4, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    return files.SerializeToString()


def protobuf_bodies() -> list[bytes]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.AddSerializedFile(f.SerializeToString())
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))
    out = []
    for o in ORDERS:
        m = cls(order=o["order"], sku=o["sku"], tags=o["tags"])
        m.customer.id, m.customer.name = o["customer"]["id"], o["customer"]["name"]
        out.append(m.SerializeToString())
    return out


def avro_bodies() -> list[bytes]:
    import fastavro
    schema = fastavro.parse_schema(AVRO_SCHEMA)
    out = []
    for o in ORDERS:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, o)
        out.append(buf.getvalue())
    return out


def write_store(root: Path) -> dict[str, str]:
    """A store at ``root`` (its schema files beside it, in ``schemas/``) with topics ``Json``, ``Proto`` and ``Avro`` (two orders then :data:`BAD` each,
    one protobuf body zstd-compressed); returns the decoder spec of each topic."""
    schemas = root.parent / "schemas"
    schemas.mkdir(parents=True, exist_ok=True)
    desc = schemas / "shop.desc"
    desc.write_bytes(descriptor_set())
    avsc = schemas / "order.avsc"
    avsc.write_text(json.dumps(AVRO_SCHEMA))
    bodies = {"Json": [json.dumps(o, ensure_ascii=False).encode() for o in ORDERS],
              "Proto": protobuf_bodies(), "Avro": avro_bodies()}
    specs = [synth.MessageSpec(topic=topic, body=body, queue_offset=i, properties={"TAGS": "t"},
                               compression="zstd" if (topic, i) == ("Proto", 1) else None)
             for topic, some in bodies.items() for i, body in enumerate([*some, BAD])]
    synth.write_commitlog(root / "commitlog", specs, segment_size=1 << 16)
    return {"Json": "json", "Proto": f"protobuf:{desc}:shop.Order", "Avro": f"avro:{avsc}"}
