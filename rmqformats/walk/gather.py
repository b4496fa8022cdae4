"""Message records at given commit-log offsets, as the walk's columns: what a consume queue's units point at.

A record is read where a unit says it starts, not walked to: the offsets are
grouped into windows (records closer than :data:`GAP` bytes are read with one
``pread``, a window at most about :data:`WINDOW` bytes), the windows are read
into one buffer, and the walk's kernel (:func:`rmqformats.walk.kernels.records_at`)
decodes the record at each offset as :func:`rmqformats.walk.record.decode_message`
does one. A record whose size the caller does not give, or gives too short,
is read by itself, its size taken from its own header. The columns are those
of the walk (:func:`rmqformats.walk.arrow.build`); the messages are the walk's
too (:func:`rmqformats.walk.record.placed_messages`). An offset where no whole
message record lies is only marked; its caller says why (the reader's ``read``
gives the typed error).

Memory is bounded whatever the units say: the offsets are taken in parts
(:data:`CHUNK_BYTES` of windows, as many of records read by themselves, or one
record), and decompressed bodies a few at a time, as the walk bounds them
(:func:`rmqformats.walk.arrow.decompressed_runs`).

Files are opened read-only and never mapped; a file cut while it is read
gives short reads, and the offsets in the bytes that are missing are marked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..compression import DEFAULT_MAX_BODY_SIZE
from ..frames import from_numpy, from_strings
from ..message import Message
from ..segments import Segment
from . import arrow as A
from . import kernels as K
from . import layout as L
from .record import placed_messages

#: Records this close (bytes between one's end and the next one's start) are read with one ``pread``: a
#: ``pread`` costs about what copying a few KiB does (measured: 4 KiB beat 1 and 16 KiB on a queue whose
#: records are some 14 KiB apart).
GAP = 4 << 10
#: A window is closed once it spans this many bytes (the record it ends with may take it further).
WINDOW = 8 << 20
#: Bytes one :meth:`RecordGather.read` reads at most through windows (:meth:`RecordGather.chunks` bounds them).
CHUNK_BYTES = 64 << 20
#: Offsets one :meth:`RecordGather.read` takes at most.
CHUNK_ROWS = 8192
#: Segment files a :class:`RecordGather` keeps open.
OPEN_SEGMENTS = 8


class RecordGather:
    """Reads message records at commit-log offsets of ``segments`` (in offset order), a chunk at a time.

    Use as a context manager, or call :meth:`close`: it keeps read-only
    descriptors of the last segments it has read.
    """

    def __init__(self, segments: Sequence[Segment]):
        self.segments = list(segments)
        self.starts = np.array([s.start_offset for s in self.segments], np.int64)
        self.sizes = np.array([s.size for s in self.segments], np.int64)
        self._fds: dict[int, int] = {}

    def __enter__(self) -> "RecordGather":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the segments' descriptors."""
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            os.close(fd)

    def covered(self, offsets: np.ndarray) -> np.ndarray:
        """Whether each of ``offsets`` lies inside a segment's bytes."""
        seg = np.searchsorted(self.starts, offsets, side="right") - 1
        inside = seg >= 0
        at = np.where(inside, seg, 0)
        return inside & (offsets < self.starts[at] + self.sizes[at]) if len(self.segments) else inside

    def chunks(self, sizes: np.ndarray) -> Iterator[slice]:
        """Slices of offsets whose records :meth:`read` takes at a time: at most :data:`CHUNK_ROWS`, and
        records (as ``sizes``, the sizes the units give, say) and gaps of at most :data:`CHUNK_BYTES`."""
        n = len(sizes)
        cost = np.cumsum(np.clip(sizes.astype(np.int64), 0, WINDOW) + GAP)
        at = 0
        while at < n:
            base = int(cost[at - 1]) if at else 0
            stop = int(np.searchsorted(cost, base + CHUNK_BYTES, side="right"))
            stop = min(max(stop, at + 1), at + CHUNK_ROWS, n)
            yield slice(at, stop)
            at = stop

    def read(self, offsets: np.ndarray, sizes: np.ndarray, columns: tuple[str, ...], *,
             decompress_bodies: bool = True, max_body: int = DEFAULT_MAX_BODY_SIZE
             ) -> Iterator[tuple[slice, pa.RecordBatch, np.ndarray]]:
        """The records at ``offsets`` (each inside a segment, see :meth:`covered`; ``sizes``: the
        records' sizes as a unit gives them), a part of the offsets at a time (one part at least, empty
        for no offsets): the part's slice of ``offsets``, a batch of ``columns`` with one row per offset
        of it where a whole message record lies, in the order given, and whether one does at each."""
        offsets = np.asarray(offsets, np.int64)
        sizes = np.asarray(sizes, np.int64)
        wanted = tuple(c for c in columns if c not in ("commitLogOffset", "segment"))
        names = np.array([s.name for s in self.segments] or [""], object)
        schema = pa.schema([A.field(c) for c in columns])
        for part, (w, ok, n, seg, _) in self._parts(offsets, sizes):
            found = np.flatnonzero(ok)
            lo = 0  # the first offset of the part not yet handed on
            for start, stop, batch in _bounded(w, n, wanted, decompress_bodies, max_body):
                hi = len(ok) if stop >= n else int(found[stop])  # (the offsets before the next run's first)
                picked = found[start:stop]
                arrays = {name: batch.column(name) for name in wanted}
                if "commitLogOffset" in columns:
                    arrays["commitLogOffset"] = from_numpy(offsets[part][picked])
                if "segment" in columns:
                    arrays["segment"] = from_strings(names[seg[picked]].tolist())
                yield (slice(part.start + lo, part.start + hi),
                       pa.RecordBatch.from_arrays([arrays[c] for c in columns], schema=schema), ok[lo:hi])
                lo = hi

    def messages(self, offsets: np.ndarray, sizes: np.ndarray) -> Iterator[tuple[slice, list[Message], np.ndarray]]:
        """:meth:`read` as :class:`~rmqformats.message.Message` objects: for each part, one per offset
        where a whole message record lies, as :func:`rmqformats.walk.record.decode_message` makes it (its
        segment, and its position in that file)."""
        offsets = np.asarray(offsets, np.int64)
        sizes = np.asarray(sizes, np.int64)
        paths = np.array([s.path for s in self.segments] or [""], object)
        for part, (w, ok, n, seg, pos) in self._parts(offsets, sizes):
            found = np.flatnonzero(ok)
            # Made in the order of their bytes in the buffer (as a walk's rows are), then put in the order asked.
            order = np.argsort(w.i64[K.I64_POS][:n], kind="stable")
            at = found[order]
            made = placed_messages(w, order, offsets[part][at].tolist(), pos[at].tolist(), paths[seg[at]].tolist())
            ordered: list = [None] * n
            for k, m in zip(order.tolist(), made):
                ordered[k] = m
            yield part, ordered, ok

    def _parts(self, offsets: np.ndarray, sizes: np.ndarray):
        """:meth:`_decode` of the offsets from the first, then from where it stopped, and so on."""
        at = 0
        while True:
            decoded = self._decode(offsets[at:], sizes[at:])
            stop = at + len(decoded[1])
            yield slice(at, stop), decoded
            at = stop
            if at >= len(offsets):
                return

    def _decode(self, offsets: np.ndarray, sizes: np.ndarray):
        """The kernel's rows of the records at the first of ``offsets``, as many as its buffer holds: the
        window (their bytes in one buffer), whether a record was decoded at each of them (the length of
        this array says how many offsets were taken), how many, and each one's segment and position.

        The records read by themselves (not in a window) take at most
        :data:`CHUNK_BYTES` of the buffer, or one record: the offsets after
        the one that would pass that are left for the next call.
        """
        seg = np.searchsorted(self.starts, offsets, side="right") - 1
        pos = offsets - self.starts[np.maximum(seg, 0)]
        left = self.sizes[np.maximum(seg, 0)] - pos
        windowed = (sizes > 0) & (sizes <= WINDOW) & (sizes <= left)
        buf_pos = np.full(len(offsets), -1, np.int64)
        buf_end = np.zeros(len(offsets), np.int64)
        reads = self._windows(seg, offsets, sizes, windowed, buf_pos, buf_end)
        # The records read by themselves: those not windowed (their size from their own header).
        windows = reads[-1][2] + reads[-1][3] if reads else 0
        total, stop = self._alone(np.flatnonzero(~windowed), seg, pos, reads, buf_pos, buf_end, windows, windows,
                                  len(offsets))
        buf = self._fill(reads, total)
        ok, i32, i64, n = _decode(buf, buf_pos[:stop], buf_end[:stop])
        # A windowed record longer than its unit says: read by itself, and the offsets decoded again.
        longer = np.flatnonzero(windowed[:stop] & ~ok)
        if len(longer):
            more: list = []
            end, stop = self._alone(longer, seg, pos, more, buf_pos, buf_end, total, windows, stop)
            if more:
                buf = np.concatenate([buf[:total], self._fill([(i, p, at - total, size) for i, p, at, size in more],
                                                              end - total)])
            ok, i32, i64, n = _decode(buf, buf_pos[:stop], buf_end[:stop])
        return A.Window(buf, i32, i64, 0, 0, "", ""), ok, n, seg[:stop], pos[:stop]

    def _windows(self, seg: np.ndarray, offsets: np.ndarray, sizes: np.ndarray, windowed: np.ndarray,
                 buf_pos: np.ndarray, buf_end: np.ndarray) -> list[tuple[int, int, int, int]]:
        """The windows that hold the ``windowed`` records, as ``(segment, file position, buffer position,
        length)``; sets those records' places in the buffer."""
        which = np.flatnonzero(windowed)
        if not len(which):
            return []
        order = which[np.argsort(offsets[which], kind="stable")]
        start = offsets[order]
        end = start + sizes[order]
        reach = np.maximum.accumulate(end)
        s = seg[order]
        new = np.ones(len(order), bool)
        new[1:] = (s[1:] != s[:-1]) | (start[1:] > reach[:-1] + GAP)
        firsts = np.flatnonzero(new)
        # A run spanning WINDOW bytes or more is split where a record starts past it (few runs are).
        stops = np.append(firsts[1:], len(order))
        long = np.flatnonzero(start[stops - 1] - start[firsts] >= WINDOW)
        if len(long):
            cut: list[int] = []
            for a, b in zip(firsts[long].tolist(), stops[long].tolist()):
                while start[b - 1] - start[a] >= WINDOW:
                    a = int(np.searchsorted(start[a:b], start[a] + WINDOW)) + a
                    cut.append(a)
            firsts = np.union1d(firsts, np.array(cut, np.int64))
        ends = np.maximum.reduceat(end, firsts)
        w_start = start[firsts]
        lengths = ends - w_start
        w_buf = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        w_seg = s[firsts]
        run = np.repeat(np.arange(len(firsts)), np.diff(np.append(firsts, len(order))))
        reads = list(zip(w_seg.tolist(), (w_start - self.starts[w_seg]).tolist(), w_buf.tolist(), lengths.tolist()))
        buf_pos[order] = start - w_start[run] + w_buf[run]
        buf_end[order] = (ends - w_start + w_buf)[run]
        return reads

    def _alone(self, which: np.ndarray, seg: np.ndarray, pos: np.ndarray, reads: list, buf_pos: np.ndarray,
               buf_end: np.ndarray, total: int, base: int, stop: int) -> tuple[int, int]:
        """Plan a read of each record of ``which`` (offset numbers, ascending) before ``stop`` by itself,
        its size from its header (a record whose header is not a message's, or whose size runs past its
        file, is left unread), at the buffer's end ``total``. Past :data:`CHUNK_BYTES` of such reads
        (the buffer's bytes after ``base``) it stops before the offset whose record would pass them,
        unless that is the first offset. Returns the buffer's new length and the offsets taken."""
        for k in which.tolist():
            if k >= stop:
                break
            i = int(seg[k])
            p = int(pos[k])
            head = os.pread(self._fd(i), L.HEADER, p)
            if len(head) < L.HEADER:
                continue
            size = int.from_bytes(head[:4], "big", signed=True)
            magic = int.from_bytes(head[4:8], "big", signed=True)
            if magic not in (L.MAGIC_V1, L.MAGIC_V2) or size < L.HEADER or size > int(self.sizes[i]) - p:
                continue
            if k > 0 and total > base and total - base + size > CHUNK_BYTES:
                return total, k  # this one and those after it next time: the memory held stays bounded
            reads.append((i, p, total, size))
            buf_pos[k] = total
            buf_end[k] = total + size
            total += size
        return total, stop

    def _fill(self, reads: list, total: int) -> np.ndarray:
        """A buffer of ``total`` bytes with each of ``reads`` read into its place; a read the file cuts
        short leaves the rest of its place zero (its records do not decode)."""
        buf = np.zeros(total, np.uint8) if total else np.zeros(1, np.uint8)
        view = memoryview(buf)
        for i, p, at, length in reads:
            fd = self._fd(i)
            done = 0
            while done < length:
                got = os.preadv(fd, [view[at + done:at + length]], p + done)
                if got <= 0:
                    break
                done += got
        return buf

    def _fd(self, i: int) -> int:
        """A read-only descriptor of segment ``i``; the last :data:`OPEN_SEGMENTS` used are kept open."""
        fd = self._fds.pop(i, None)
        if fd is None:
            fd = os.open(self.segments[i].path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            if len(self._fds) >= OPEN_SEGMENTS:
                os.close(self._fds.pop(next(iter(self._fds))))
        self._fds[i] = fd  # (last: the most recently used)
        return fd


def _bounded(w: A.Window, n: int, columns: tuple[str, ...], decompress_bodies: bool, max_body: int
             ) -> Iterator[tuple[int, int, pa.RecordBatch]]:
    """The batches of ``columns`` of the window's ``n`` rows, as ``(start, stop, batch)`` for rows
    ``start`` to ``stop - 1`` (one at least, empty for no rows): where bodies are decompressed, a batch
    is closed once they reach :data:`CHUNK_BYTES` (:func:`rmqformats.walk.arrow.decompressed_runs`), so
    that bodies that decompress far are held a few at a time."""
    rows = np.arange(n)
    compressed = A.compressed_rows(w, rows) if decompress_bodies and n and (
        "body" in columns or "bodyError" in columns) else ()
    if not len(compressed):
        yield from _built(w, rows, 0, columns, decompress_bodies, max_body, None)
        return
    for start, stop, part in A.decompressed_runs(w, rows, compressed, max_body=max_body,
                                                 want_body="body" in columns, bound=CHUNK_BYTES):
        yield from _built(w, rows[start:stop], start, columns, decompress_bodies, max_body, part)


def _built(w: A.Window, rows: np.ndarray, first: int, columns: tuple[str, ...], decompress_bodies: bool,
           max_body: int, decoded: list | None) -> Iterator[tuple[int, int, pa.RecordBatch]]:
    """:func:`rmqformats.walk.arrow.build` of ``rows`` (the first numbered ``first``), halved where the
    bodies of one batch pass 2 GiB (Arrow's binary column)."""
    try:
        yield first, first + len(rows), A.build(w, rows, columns, decompress_bodies, max_body, decoded)
    except OverflowError:
        if len(rows) <= 1:
            raise
        half = len(rows) // 2
        yield from _built(w, rows[:half], first, columns, decompress_bodies, max_body,
                          None if decoded is None else decoded[:half])
        yield from _built(w, rows[half:], first + half, columns, decompress_bodies, max_body,
                          None if decoded is None else decoded[half:])


def _decode(buf: np.ndarray, buf_pos: np.ndarray, buf_end: np.ndarray):
    """The kernel's rows of the records at ``buf_pos`` (within ``buf_end``)."""
    m = len(buf_pos)
    i32 = np.empty((K.N_I32, max(m, 1)), np.int32)
    i64 = np.empty((K.N_I64, max(m, 1)), np.int64)
    ok = np.zeros(m, np.bool_)
    n = K.records_at(buf, buf_pos, buf_end, i32, i64, ok) if m else 0
    return ok, i32, i64, int(n)
