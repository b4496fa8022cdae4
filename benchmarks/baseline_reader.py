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
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

#: ``org.apache.rocketmq.store.CommitLog.MESSAGE_MAGIC_CODE`` (V1), as a signed int.
MESSAGE_MAGIC_CODE = -626843481
#: ``MessageSysFlag.COMPRESSED_FLAG``; the script compares SYSFLAG to it with ``==``.
COMPRESSED_FLAG = 1

_SEGMENT_NAME = re.compile(r"^\d{20}$")
# BODYCRC .. PREPARED TRANSACTION OFFSET, with both hosts as 4 address bytes + port.
_FIXED = ">IIiQQiQBBBBIQBBBBIIQ"
_FIXED_SIZE = 4 * 5 + 8 * 7


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


def read_segment(path: str) -> Iterator[Message]:
    """Yield the messages of one segment file, up to the first zero length or non-message magic."""
    with open(path, "rb") as f:
        pos = 0
        while True:
            msg = parse_message(f, pos)
            if msg is None:
                return
            yield msg
            pos += msg.store_size


def segment_files(commitlog_dir: str) -> list[tuple[int, str]]:
    """``(start offset, path)`` of the segment files of a commit-log folder, in offset order."""
    names = sorted(n for n in os.listdir(commitlog_dir) if _SEGMENT_NAME.match(n))
    return [(int(n), os.path.join(commitlog_dir, n)) for n in names]


def read_commitlog(commitlog_dir: str) -> Iterator[tuple[int, Message]]:
    """Yield ``(commit-log offset, message)`` for every segment of ``commitlog_dir``."""
    for start, path in segment_files(commitlog_dir):
        for msg in read_segment(path):
            yield start + msg.file_offset, msg
