"""Building commit-log records and stores through the generated construct schemas.

Tests and benchmarks use this to make the cases real stores lack (other
versions, hosts, compressions, the ``__CRC32#`` property, 5.4 priority and
5.5 lite-topic messages, damaged and large files). Records are built by ``generated/construct`` from field values, so
their bytes come from the spec, not from a second hand-written encoder. The
lengths, the body CRC and the IPv6 and compression flags are filled in from
the values given, as the broker's encoder does.
"""

from __future__ import annotations

import ipaddress
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import lz4.frame
import zstandard

from .. import properties as props
from ..consumequeue import INNER_MULTI_DISPATCH, INNER_MULTI_QUEUE_OFFSET
from ..errors import with_article
from ..generated.construct import rocketmq_commitlog as cs
from ..generated.construct import rocketmq_consumequeue as cs_cq
from ..generated.construct import rocketmq_message_batch as cs_batch
from ..generated.layouts import rocketmq_commitlog as layout
from ..message import crc32
from ..systopics.names import lite_queue

_BITS = layout.SYS_FLAG_BITS
#: Topics longer than this many UTF-16 units get a V2 record (5.1.0+ ``autoMessageVersionOnTopicLen``).
V1_MAX_TOPIC = 127
_COMPRESSORS = {
    "zlib": (zlib.compress, layout.COMPRESSION_TYPE["zlib"]),
    "zlib-legacy": (zlib.compress, layout.COMPRESSION_TYPE["unspecified"]),  # 4.x producers
    "lz4": (lz4.frame.compress, layout.COMPRESSION_TYPE["lz4"]),
    "zstd": (lambda b: zstandard.ZstdCompressor().compress(b), layout.COMPRESSION_TYPE["zstd"]),
}


@dataclass
class MessageSpec:
    """The values of one message to write; lengths, CRC and flags are derived."""

    topic: str
    body: bytes = b""
    properties: dict[str, str] | str = field(default_factory=dict)
    queue_id: int = 0
    flag: int = 0
    queue_offset: int = 0
    born_timestamp: int = 1_700_000_000_000
    store_timestamp: int = 1_700_000_000_123
    born_host: tuple[str, int] = ("192.0.2.10", 54321)
    store_host: tuple[str, int] = ("127.0.0.1", 10911)
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    #: Extra SYSFLAG bits (transaction type, multi-tags, inner batch …).
    sys_flag: int = 0
    #: ``zlib``, ``zlib-legacy`` (type bits 0), ``lz4`` or ``zstd`` to compress ``body``.
    compression: str | None = None
    #: 1 or 2; ``None`` picks V2 for topics over 127 characters, as 5.1+ brokers do.
    version: int | None = None
    #: Write the properties with a trailing U+0002 (4.0-4.9.0 and 5.2+ writers).
    trailing_separator: bool = False
    #: Append the 5.2+ ``__CRC32#`` record-CRC property.
    crc32_property: bool = False


def priority_message(topic: str, priority: int | str, *, write_queue_nums: int = 8, **fields) -> MessageSpec:
    """A 5.4+ priority message as the broker stores it: ``_SYS_MSG_PRIORITY_`` as sent, in queue
    ``min(priority, write_queue_nums - 1)`` (queue 0, or ``fields["queue_id"]``, for a value it cannot read
    or a negative one, which it leaves as they are)."""
    value = props.parse_java_int(str(priority))
    properties = dict(fields.pop("properties", {}))
    properties[props.PRIORITY] = str(priority)
    if value is not None and value >= 0:
        fields["queue_id"] = min(value, write_queue_nums - 1)
    return MessageSpec(topic, properties=properties, **fields)


def lite_message(parent_topic: str, lite_topic: str, *, lmq_offset: int = 0, **fields) -> MessageSpec:
    """A 5.5+ lite-topic message as the broker stores it: ``__LITE_TOPIC``, and the LMQ dispatch of
    ``%LMQ%$parent$lite`` (``INNER_MULTI_DISPATCH``) at queue offset ``lmq_offset`` (``INNER_MULTI_QUEUE_OFFSET``)."""
    properties = dict(fields.pop("properties", {}))
    properties[props.LITE_TOPIC] = lite_topic
    properties[INNER_MULTI_DISPATCH] = lite_queue(parent_topic, lite_topic)
    properties[INNER_MULTI_QUEUE_OFFSET] = str(lmq_offset)
    return MessageSpec(parent_topic, properties=properties, **fields)


def sys_flag_fields(value: int) -> dict:
    """The construct ``sys_flag`` dict of a SYSFLAG integer."""
    return {name: (bool if mask == 1 << shift else int)((value & mask) >> shift)
            for name, (mask, shift) in _BITS.items()}


def _host(text: str, port: int) -> tuple[dict, bool]:
    addr = ipaddress.ip_address(text)
    return {"address": addr.packed, "port": port}, addr.version == 6


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def encode_message(spec: MessageSpec, physical_offset: int) -> bytes:
    """The bytes of a message record at commit-log ``physical_offset``."""
    body = spec.body
    sys_flag = spec.sys_flag
    if spec.compression:
        pack, ctype = _COMPRESSORS[spec.compression]
        body = pack(body)
        sys_flag |= _BITS["is_compressed"][0] | (ctype << _BITS["compression_type"][1])
    born, born_v6 = _host(*spec.born_host)
    store, store_v6 = _host(*spec.store_host)
    if born_v6:
        sys_flag |= _BITS["is_born_host_v6"][0]
    if store_v6:
        sys_flag |= _BITS["is_store_host_v6"][0]
    version = spec.version or (2 if _utf16_len(spec.topic) > V1_MAX_TOPIC else 1)
    text = spec.properties if isinstance(spec.properties, str) else \
        props.format_properties(spec.properties, trailing_separator=spec.trailing_separator)
    if spec.crc32_property:
        if text and not text.endswith(props.PROPERTY_SEPARATOR):
            text += props.PROPERTY_SEPARATOR
        text += f"{props.CRC32}{props.NAME_VALUE_SEPARATOR}0000000000{props.PROPERTY_SEPARATOR}"
    topic_bytes = spec.topic.encode("utf-8")
    prop_bytes = text.encode("utf-8")
    fields = {
        "body_crc": crc32(body), "queue_id": spec.queue_id, "flag": spec.flag,
        "queue_offset": spec.queue_offset, "ofs_physical": physical_offset,
        "sys_flag": sys_flag_fields(sys_flag), "born_timestamp": spec.born_timestamp,
        "born_host": born, "store_timestamp": spec.store_timestamp, "store_host": store,
        "reconsume_times": spec.reconsume_times,
        "ofs_prepared_transaction": spec.prepared_transaction_offset,
        "len_body": len(body), "body": body, "len_topic": len(topic_bytes), "topic": spec.topic,
        "len_properties": len(prop_bytes), "properties": text,
    }
    size = 74 + (16 if born_v6 else 4) + (16 if store_v6 else 4) + 8 + (2 if version == 2 else 1) \
        + len(body) + len(topic_bytes) + len(prop_bytes)
    magic = "message_v2" if version == 2 else "message_v1"
    data = cs.record.build({"len_record": size, "magic": magic, "body": fields})
    if spec.crc32_property:
        # The broker writes the digits after the rest of the record is final.
        crc = crc32(data[: size - 20])
        digits = "".join(str(crc // 10 ** i % 10) for i in range(10))
        fields["properties"] = text[:-11] + digits + props.PROPERTY_SEPARATOR
        data = cs.record.build({"len_record": size, "magic": magic, "body": fields})
    return data


def encode_blank(length: int) -> bytes:
    """The 8 bytes the broker writes for a BLANK record covering ``length`` bytes."""
    return cs.record.build({"len_record": length, "magic": "blank", "body": None})


def encode_batch(messages: Iterable[tuple[int, bytes, dict[str, str] | str]]) -> bytes:
    """A batch body of ``(flag, body, properties)`` messages, as ``MessageDecoder.encodeMessages`` writes it."""
    items = []
    for flag, body, properties in messages:
        text = properties if isinstance(properties, str) else props.format_properties(properties)
        n = len(text.encode("utf-8"))
        items.append({"len_item": 22 + len(body) + n, "magic": 0, "body_crc": 0, "flag": flag,
                      "len_body": len(body), "body": body, "len_properties": n, "properties": text})
    return cs_batch.rocketmq_message_batch.build({"messages": items})


@dataclass(frozen=True)
class Placed:
    """Where :func:`write_commitlog` put a message."""

    commitlog_offset: int
    size: int


def layout_records(specs: Iterable[MessageSpec], segment_size: int,
                   start_offset: int = 0) -> Iterator[tuple[int, bytes]]:
    """Yield ``(commit-log offset, bytes)`` of each record as the broker places them.

    A message that does not leave 8 bytes free in its segment is preceded by
    a BLANK record filling the segment, and goes to the next segment.
    """
    offset = start_offset
    for spec in specs:
        data = encode_message(spec, offset)
        left = segment_size - offset % segment_size
        if len(data) + 8 > left:
            if len(data) + 8 > segment_size:
                raise ValueError(f"{with_article(len(data))}-byte record does not fit {with_article(segment_size)}-byte segment")
            yield offset, encode_blank(left)
            offset += left
            data = encode_message(spec, offset)
        yield offset, data
        offset += len(data)


def write_commitlog(folder: str | os.PathLike[str], specs: Iterable[MessageSpec],
                    segment_size: int = 1 << 30, start_offset: int = 0) -> list[Placed]:
    """Write ``specs`` as commit-log segments of ``segment_size`` into ``folder``.

    Segments are named by their start offset and zero-filled to full size
    (sparse where the file system allows), like the broker's pre-allocated
    files. Returns where each message went.
    """
    os.makedirs(folder, exist_ok=True)
    placed: list[Placed] = []
    current = None
    f = None
    try:
        for offset, data in layout_records(specs, segment_size, start_offset):
            seg = offset - offset % segment_size
            if seg != current:
                if f is not None:
                    f.close()
                f = open(os.path.join(folder, f"{seg:020d}"), "wb")
                f.truncate(segment_size)
                current = seg
            f.seek(offset - seg)
            f.write(data)
            if int.from_bytes(data[4:8], "big", signed=True) != layout.MAGIC_CODE["blank"]:
                placed.append(Placed(offset, len(data)))
    finally:
        if f is not None:
            f.close()
    return placed


def encode_cq_units(units: Iterable[tuple[int, int, int]]) -> bytes:
    """Consume-queue units ``(commit-log offset, size, tags code)`` as file bytes."""
    return cs_cq.rocketmq_consumequeue.build(
        {"units": [{"ofs_commitlog": o, "len_message": s, "tags_code": t} for o, s, t in units]})


#: The unit the broker writes before a queue's first message (``fillPreBlank``).
CQ_PLACEHOLDER = (0, 0x7FFFFFFF, 0)


def write_consume_queue(folder: str | os.PathLike[str], units: list[tuple[int, int, int]],
                        file_units: int, first_unit: int = 0) -> list[str]:
    """Write ``units`` as a consume queue starting at logical offset ``first_unit``.

    Files hold ``file_units`` units each and are zero-filled to full size,
    like the broker's mapped files; returns the file paths.
    """
    os.makedirs(folder, exist_ok=True)
    unit_size = len(encode_cq_units([CQ_PLACEHOLDER]))
    paths = []
    n = first_unit
    i = 0
    while i < len(units) or not paths:
        file_start = n - n % file_units
        take = min(len(units) - i, file_start + file_units - n)
        path = os.path.join(folder, f"{file_start * unit_size:020d}")
        with open(path, "wb") as f:
            f.truncate(file_units * unit_size)
            f.seek((n - file_start) * unit_size)
            f.write(encode_cq_units(units[i:i + take]))
        paths.append(path)
        i += take
        n += take
        if take == 0:
            break
    return paths
