"""The benchmark baseline: a commit-log reader in the style of the script people copy today.

``/work/shared/baselines/rocketmq_parser.published.txt`` (see the README next
to it) reads each record field by field from a buffered file with ``f.read``
and ``struct.unpack``. This module re-implements that approach, with the
same reads and unpacks per record and the same assumptions:

* every record is V1 (1-byte topic length) and both hosts are IPv4;
* the body is zlib-decompressed only when SYSFLAG == 1 exactly;
* each segment is read until the first zero TOTALSIZE or the first magic
  code that is not the V1 message magic (a BLANK record, the zero tail, or
  anything else), then the next file is read.

It differs from the script only where the benchmark needs comparable output:
files are read in offset order (the script takes ``os.listdir`` order),
properties are parsed into a dict, and the per-record description string and
``ip:port`` texts the script formats for printing are not built, so the
baseline does no more work than the other decoders.

``read_commitlog(path, any_record=True)`` is the same reader with the three
changes it needs to read what brokers write since 4.6 (and what the columnar
benchmark's logs hold): IPv6 hosts (SYSFLAG bits 4 and 5 widen a host from 8
to 20 bytes), V2 records (magic 0xdaa320ab, 2-byte topic length) and the
compression type in SYSFLAG bits 8-10 (LZ4, ZSTD, ZLIB). Records with two
IPv4 hosts still take one ``f.read`` and one unpack for the fixed fields; a
record with an IPv6 host reads the 12 or 24 extra bytes and unpacks again.
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

import lz4.frame
import zstandard

#: ``org.apache.rocketmq.store.CommitLog.MESSAGE_MAGIC_CODE`` (V1), as a signed int.
MESSAGE_MAGIC_CODE = -626843481
#: ``MessageSysFlag.COMPRESSED_FLAG``; the script compares SYSFLAG to it with ``==``.
COMPRESSED_FLAG = 1

_SEGMENT_NAME = re.compile(r"^\d{20}$")
# BODYCRC .. PREPARED TRANSACTION OFFSET, with both hosts as 4 address bytes + port.
_FIXED = ">IIiQQiQBBBBIQBBBBIIQ"
_FIXED_SIZE = 4 * 5 + 8 * 7

#: V2 message magic (5.1+ records of topics over 127 characters), as a signed int.
MESSAGE_V2_MAGIC_CODE = -626843477
BORN_HOST_V6 = 0x10
STORE_HOST_V6 = 0x20
# The fixed fields per combination of IPv6 hosts; the address bytes are kept together.
_FIXED_BY_HOSTS = {
    flags: struct.Struct(f">IIiQQiQ{16 if flags & BORN_HOST_V6 else 4}sIQ{16 if flags & STORE_HOST_V6 else 4}sIIQ")
    for flags in (0, BORN_HOST_V6, STORE_HOST_V6, BORN_HOST_V6 | STORE_HOST_V6)
}
_DECOMPRESS = {0: zlib.decompress, 1: lz4.frame.decompress, 2: zstandard.ZstdDecompressor().decompress,
               3: zlib.decompress}


class Message(NamedTuple):
    """One message record as the baseline decodes it."""

    file_offset: int
    store_size: int
    body_crc: int
    queue_id: int
    flag: int
    queue_offset: int
    physical_offset: int
    sys_flag: int
    born_timestamp: int
    #: ``(a, b, c, d, port)`` of the IPv4 producer address.
    born_host: tuple
    store_timestamp: int
    #: ``(a, b, c, d, port)`` of the IPv4 broker address.
    store_host: tuple
    reconsume_times: int
    prepared_transaction_offset: int
    #: The body, decompressed when SYSFLAG == 1.
    body: bytes
    topic: str
    properties: dict


def parse_properties(text: str) -> dict:
    """Split a properties string on U+0002, then each pair on its first U+0001."""
    out = {}
    for pair in text.split("\x02"):
        if pair:
            name, _, value = pair.partition("\x01")
            out[name] = value
    return out


def parse_message(f: BinaryIO, file_offset: int) -> Message | None:
    """Read the message record at ``file_offset``, the position of ``f``; ``None`` where the data ends."""
    head = f.read(4)
    if len(head) < 4:  # end of file; the script would fail in struct.unpack here
        return None
    (msg_length,) = struct.unpack(">I", head)
    if msg_length == 0:
        return None
    (magic_code,) = struct.unpack(">i", f.read(4))
    if magic_code != MESSAGE_MAGIC_CODE:
        return None
    fields = struct.unpack(_FIXED, f.read(_FIXED_SIZE))
    (body_length,) = struct.unpack(">I", f.read(4))
    body = f.read(body_length)
    if fields[5] == COMPRESSED_FLAG:
        body = zlib.decompress(body)
    (topic_length,) = struct.unpack(">B", f.read(1))
    topic = f.read(topic_length).decode("ascii")
    (properties_length,) = struct.unpack(">H", f.read(2))
    properties = parse_properties(f.read(properties_length).decode("utf8"))
    return Message(file_offset, msg_length, *fields[:7], fields[7:12], fields[12], fields[13:18],
                   fields[18], fields[19], body, topic, properties)


def parse_any_message(f: BinaryIO, file_offset: int) -> Message | None:
    """:func:`parse_message` for V1 and V2 records, IPv4 and IPv6 hosts and every compression type.

    Hosts are ``(address bytes, port)`` here.
    """
    head = f.read(4)
    if len(head) < 4:
        return None
    (msg_length,) = struct.unpack(">I", head)
    if msg_length == 0:
        return None
    (magic_code,) = struct.unpack(">i", f.read(4))
    if magic_code != MESSAGE_MAGIC_CODE and magic_code != MESSAGE_V2_MAGIC_CODE:
        return None
    block = f.read(_FIXED_SIZE)
    sys_flag = struct.unpack_from(">i", block, 28)[0]
    hosts = sys_flag & (BORN_HOST_V6 | STORE_HOST_V6)
    if hosts:
        # An IPv6 address is 12 bytes longer than the IPv4 one the block assumed.
        block += f.read(_FIXED_BY_HOSTS[hosts].size - _FIXED_SIZE)
    fields = _FIXED_BY_HOSTS[hosts].unpack(block)
    (body_length,) = struct.unpack(">I", f.read(4))
    body = f.read(body_length)
    if sys_flag & COMPRESSED_FLAG:
        body = _DECOMPRESS[(sys_flag >> 8) & 7](body)
    if magic_code == MESSAGE_V2_MAGIC_CODE:
        (topic_length,) = struct.unpack(">H", f.read(2))
    else:
        (topic_length,) = struct.unpack(">B", f.read(1))
    topic = f.read(topic_length).decode("ascii")
    (properties_length,) = struct.unpack(">H", f.read(2))
    properties = parse_properties(f.read(properties_length).decode("utf8"))
    return Message(file_offset, msg_length, *fields[:7], fields[7:9], fields[9], fields[10:12],
                   fields[12], fields[13], body, topic, properties)


def read_segment(path: str, any_record: bool = False) -> Iterator[Message]:
    """Yield the messages of one segment file, up to the first zero length or non-message magic."""
    parse = parse_any_message if any_record else parse_message
    with open(path, "rb") as f:
        pos = 0
        while True:
            msg = parse(f, pos)
            if msg is None:
                return
            yield msg
            pos += msg.store_size


def segment_files(commitlog_dir: str) -> list[tuple[int, str]]:
    """``(start offset, path)`` of the segment files of a commit-log folder, in offset order."""
    names = sorted(n for n in os.listdir(commitlog_dir) if _SEGMENT_NAME.match(n))
    return [(int(n), os.path.join(commitlog_dir, n)) for n in names]


def read_commitlog(commitlog_dir: str, any_record: bool = False) -> Iterator[tuple[int, Message]]:
    """Yield ``(commit-log offset, message)`` for every segment of ``commitlog_dir``.

    ``any_record`` reads with :func:`parse_any_message` (V2, IPv6, every compression).
    """
    for start, path in segment_files(commitlog_dir):
        for msg in read_segment(path, any_record):
            yield start + msg.file_offset, msg
