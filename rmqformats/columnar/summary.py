"""What a commit log holds, summed from the columns of its record batches.

:class:`LogSummary` takes the batches of a walk (:meth:`CommitLog.batches
<rmqformats.commitlog.CommitLog.batches>` with :data:`SUMMARY_COLUMNS`) and
adds them up with numpy and Arrow compute, never a Python step per message:
messages and bytes (the records' TOTALSIZE) per topic and queue, messages
per segment file, record versions and the store-time range.

The record version (the magic code) is no column of the batches. The
broker's check makes a record's TOTALSIZE exactly the sum of its fields, so
the version follows from the columns: the V2 magic code widens TOPICLENGTH
(by ``LEN_TOPIC_V2 - LEN_TOPIC_V1`` bytes), nothing else. The widths come
from :mod:`rmqformats.walk.layout` (derived from the spec). Where a
topic or properties string holds U+FFFD (bytes that are not UTF-8 are
decoded to it, which changes their length) or the sum does not come out,
the magic code is read from the segment file instead, for those records
only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..frames import buffer_values, to_numpy
from ..segments import Segment
from ..walk import layout as L

#: The columns :meth:`LogSummary.add` reads (``body`` as stored: ask for ``decompress=False``).
SUMMARY_COLUMNS = ("commitLogOffset", "storeSize", "queueId", "sysFlag", "storeTimestamp", "topic",
                   "propertiesString", "body")

#: Bytes of a V1 record besides its body, topic, properties and host addresses.
_V1_FIXED = (L.POS_BORN_HOST + 2 * L.PORT_WIDTH + L.STORE_TS_WIDTH + L.TAIL_WIDTH + L.LEN_TOPIC_V1
             + L.LEN_PROPERTIES)
#: Bytes a V2 record has more than a V1 record with the same fields.
_V2_EXTRA = L.LEN_TOPIC_V2 - L.LEN_TOPIC_V1
_REPLACEMENT = "\ufffd".encode()
_MAGIC_VERSION = {L.MAGIC_V1: 1, L.MAGIC_V2: 2}
#: Largest table of (topic, queue id) counters a batch is counted in directly (else the keys are sorted).
_DENSE_GROUPS = 1 << 16


def int_values(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of an integer or timestamp column without nulls, as numpy integers (timestamps: epoch ms).

    A view of the column's buffer (``to_numpy`` would import pandas for a
    timestamp column, a quarter of a second in a fresh process).
    """
    return buffer_values(column, np.dtype(f"int{column.type.bit_width}"))


def string_buffers(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, data)`` of a string or binary array: value ``i`` is ``data[offsets[i]:offsets[i + 1]]``.

    Null values are empty. ``offsets`` are relative to ``data``, which is
    the part of the data buffer the array covers.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    n = len(column)
    bufs = column.buffers()
    width = np.int64 if pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type) \
        else np.int32
    offsets = np.frombuffer(bufs[1], width)[column.offset:column.offset + n + 1].astype(np.int64) \
        if bufs[1] is not None else np.zeros(n + 1, np.int64)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    data = data[offsets[0]:offsets[-1]] if n else data[:0]
    offsets = offsets - offsets[0] if n else offsets
    if column.null_count:
        valid = to_numpy(column.is_valid())
        lengths = np.where(valid, np.diff(offsets), 0)
        keep = np.repeat(valid, np.diff(offsets))
        data = data[keep]
        offsets = np.concatenate(([0], np.cumsum(lengths)))
    return offsets, data


def truth(column: pa.Array) -> np.ndarray:
    """A boolean column as a numpy mask, null as false (without ``fill_null``, whose scalar imports pandas)."""
    values = to_numpy(column)
    if column.null_count:
        values = np.where(to_numpy(column.is_valid()), values, False)
    return values.astype(np.bool_)


def _has_replacement(column: pa.Array) -> np.ndarray | None:
    """Which values hold U+FFFD; ``None`` when none can (no byte 0xEF, its UTF-8 lead: the usual case)."""
    if not np.any(string_buffers(column)[1] == _REPLACEMENT[0]):
        return None
    return truth(pc.match_substring(column, "\ufffd"))


def record_versions(batch: pa.RecordBatch, segments: Sequence[Segment]) -> np.ndarray:
    """The record version (1 or 2) of each row of ``batch`` (columns :data:`SUMMARY_COLUMNS`, bodies as stored)."""
    n = batch.num_rows
    sys_flag = int_values(batch.column("sysFlag"))
    hosts = np.where(sys_flag & L.BORN_V6, L.ADDRESS_V6, L.ADDRESS_V4) \
        + np.where(sys_flag & L.STORE_V6, L.ADDRESS_V6, L.ADDRESS_V4)
    topic, props = batch.column("topic"), batch.column("propertiesString")
    v1 = (_V1_FIXED + hosts + np.diff(string_buffers(batch.column("body"))[0])
          + np.diff(string_buffers(topic)[0]) + np.diff(string_buffers(props)[0]))
    extra = int_values(batch.column("storeSize")).astype(np.int64) - v1
    versions = np.where(extra == _V2_EXTRA, 2, 1).astype(np.int8)
    unsure = (extra != 0) & (extra != _V2_EXTRA)
    for column in (topic, props):
        replaced = _has_replacement(column)
        if replaced is not None:
            unsure |= replaced
    if n and unsure.any():
        rows = np.flatnonzero(unsure)
        offsets = int_values(batch.column("commitLogOffset"))[rows]
        versions[rows] = _read_versions(segments, offsets)
    return versions


def _read_versions(segments: Sequence[Segment], offsets: np.ndarray) -> np.ndarray:
    """The version of the records at commit-log ``offsets``, from their magic codes in the segment files."""
    starts = np.array([s.start_offset for s in segments], np.int64)
    out = np.ones(len(offsets), np.int8)
    fds: dict[str, int] = {}
    try:
        for i, (offset, k) in enumerate(zip(offsets.tolist(),
                                            (np.searchsorted(starts, offsets, side="right") - 1).tolist())):
            seg = segments[k]
            fd = fds.get(seg.path)
            if fd is None:
                fd = fds[seg.path] = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            magic = int.from_bytes(os.pread(fd, 4, offset - seg.start_offset + 4), "big", signed=True)
            out[i] = _MAGIC_VERSION.get(magic, 1)
    finally:
        for fd in fds.values():
            os.close(fd)
    return out


def _signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


class LogSummary:
    """Counts and bytes of the messages of a walk, added a record batch at a time (see the module doc)."""

    def __init__(self, segments: Sequence[Segment]):
        self._segments = tuple(segments)
        self._starts = np.array([s.start_offset for s in self._segments], np.int64)
        self._per_segment = np.zeros(len(self._segments), np.int64)
        #: ``(topic, queue id) -> [messages, bytes]``.
        self._queues: dict[tuple[str, int], list[int]] = {}
        self._versions = np.zeros(3, np.int64)
        #: Messages added.
        self.messages = 0
        #: Smallest and largest store timestamp (epoch ms), ``None`` before the first message.
        self.first_timestamp: int | None = None
        self.last_timestamp: int | None = None

    def add(self, batch: pa.RecordBatch) -> np.ndarray:
        """Add the messages of ``batch``; returns their record versions (for release detection)."""
        n = batch.num_rows
        if not n:
            return np.zeros(0, np.int8)
        self.messages += n
        offsets = int_values(batch.column("commitLogOffset"))
        segment = np.searchsorted(self._starts, offsets, side="right") - 1
        self._per_segment += np.bincount(segment, minlength=len(self._starts))
        versions = record_versions(batch, self._segments)
        self._versions += np.bincount(versions, minlength=3)
        stamps = int_values(batch.column("storeTimestamp"))
        lo, hi = int(stamps.min()), int(stamps.max())
        self.first_timestamp = lo if self.first_timestamp is None else min(lo, self.first_timestamp)
        self.last_timestamp = hi if self.last_timestamp is None else max(hi, self.last_timestamp)
        # Groups of (topic, queue id): the topic's number in the batch's dictionary and the queue id in one key.
        topics = pc.dictionary_encode(batch.column("topic"))
        names = topics.dictionary.to_pylist()
        qids = int_values(batch.column("queueId")).astype(np.int64)
        low, high = int(qids.min()), int(qids.max())
        if 0 <= low and (high + 1) * len(names) <= _DENSE_GROUPS:  # the usual case: counted in a dense table
            keys = int_values(topics.indices).astype(np.int64) * (high + 1) + qids
            counts = np.bincount(keys, minlength=(high + 1) * len(names))
            uniq = np.flatnonzero(counts)
            sizes = np.bincount(keys, weights=int_values(batch.column("storeSize")), minlength=len(counts))[uniq]
            counts = counts[uniq]
            groups = [(names[k // (high + 1)], k % (high + 1)) for k in uniq.tolist()]
        else:
            keys = (int_values(topics.indices).astype(np.int64) << 32) | qids & 0xFFFFFFFF
            uniq, inverse = np.unique(keys, return_inverse=True)
            counts = np.bincount(inverse, minlength=len(uniq))
            sizes = np.bincount(inverse, weights=int_values(batch.column("storeSize")), minlength=len(uniq))
            groups = [(names[k >> 32], _signed32(k & 0xFFFFFFFF)) for k in uniq.tolist()]
        queues = self._queues
        for name, count, size in zip(groups, counts.tolist(), sizes.astype(np.int64).tolist()):
            entry = queues.get(name)
            if entry is None:
                queues[name] = [count, size]
            else:
                entry[0] += count
                entry[1] += size
        return versions

    def empty(self) -> "LogSummary":
        """A summary of the same segments with nothing added (for another part of the same walk)."""
        return LogSummary(self._segments)

    def merge(self, later: "LogSummary") -> None:
        """Add the counts of ``later``, a summary of the same segments (the messages of another part of the walk)."""
        self.messages += later.messages
        self._per_segment += later._per_segment
        self._versions += later._versions
        for name, (count, size) in later._queues.items():
            entry = self._queues.get(name)
            if entry is None:
                self._queues[name] = [count, size]
            else:
                entry[0] += count
                entry[1] += size
        for stamp in (later.first_timestamp, later.last_timestamp):
            if stamp is not None:
                self.first_timestamp = stamp if self.first_timestamp is None else min(stamp, self.first_timestamp)
                self.last_timestamp = stamp if self.last_timestamp is None else max(stamp, self.last_timestamp)

    def per_segment(self) -> dict[str, int]:
        """Messages per segment file (by path), for the segments that hold any."""
        return {s.path: int(n) for s, n in zip(self._segments, self._per_segment.tolist()) if n}

    def per_queue(self) -> dict[tuple[str, int], tuple[int, int]]:
        """``(topic, queue id) -> (messages, bytes)``, sorted by topic and queue id."""
        return {k: (v[0], v[1]) for k, v in sorted(self._queues.items())}

    def versions(self) -> dict[str, int]:
        """Messages per record version (``{"V1": n, "V2": m}``, the versions seen only)."""
        return {f"V{v}": int(n) for v, n in enumerate(self._versions.tolist()) if n}
