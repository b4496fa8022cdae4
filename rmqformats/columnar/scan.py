"""The columnar commit-log scan: segments read in bounded windows, records walked by a compiled kernel.

Each segment is read with ``pread`` into a reused window buffer (32 MiB by
default, grown only for a record larger than that), never memory-mapped: a
file that shrinks while it is read gives a short read, which becomes a
:class:`~rmqformats.errors.FileChangedError`, where a mapping would kill the
process with SIGBUS. The walk follows the broker's recovery exactly as
:class:`rmqformats.commitlog.Scan` does (same records accepted, same end of
data and reason); the error texts are the object API's own, produced by
decoding the one record where the data ends.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..commitlog import Blank, CommitLog, DataEnd, EndReason, Segment, decode_message
from ..compression import DEFAULT_MAX_BODY_SIZE
from ..errors import (
    BadMagicError,
    CrcMismatchError,
    FileChangedError,
    RecordError,
    RmqFormatError,
    TruncatedRecordError,
)
from . import arrow as A
from . import kernels as K

#: Bytes read from a segment at a time.
DEFAULT_WINDOW = 32 << 20
#: Rows of one record batch at most.
DEFAULT_BATCH_SIZE = 65536
#: Bytes past a record's TOTALSIZE that the broker's field reads can touch (see ``_record_error``).
_ERROR_MARGIN = 256

_REASONS = {BadMagicError: EndReason.BAD_MAGIC, TruncatedRecordError: EndReason.TRUNCATED,
            CrcMismatchError: EndReason.CRC_MISMATCH}


def _millis(value: int | str | datetime | None) -> int | None:
    """Epoch milliseconds of a time given as epoch ms, an ISO 8601 text or a datetime (naive: UTC)."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return int(value.timestamp() * 1000)


class _Stop(Exception):
    """The data ended inside a segment (carries the :class:`DataEnd`)."""

    def __init__(self, end: DataEnd | None, error: RecordError | None = None):
        super().__init__()
        self.end = end
        self.error = error


class ColumnarScan:
    """An iterator of :class:`pyarrow.RecordBatch` over the messages of a commit log, in commit-log order.

    After it is exhausted, :attr:`end` tells where and why the data ended
    (the same :class:`~rmqformats.commitlog.DataEnd` as the object API's
    scan; ``None`` when ``to_offset`` or ``stop`` ended the scan first) and
    :attr:`blanks` lists the BLANK records passed. With ``strict=True`` a
    corrupt end raises its :class:`~rmqformats.errors.RecordError` instead.
    """

    def __init__(self, commitlog: CommitLog, *, columns=None, batch_size: int = DEFAULT_BATCH_SIZE,
                 decompress: bool = True, verify_crc: bool = False, strict: bool = False,
                 start: int | None = None, topic: str | None = None, queue_id: int | None = None,
                 tag: str | None = None, key: str | None = None, since: int | str | datetime | None = None,
                 until: int | str | datetime | None = None, from_offset: int | None = None,
                 to_offset: int | None = None, stop: int | None = None,
                 max_body_size: int = DEFAULT_MAX_BODY_SIZE, window_size: int = DEFAULT_WINDOW,
                 threads: int = 1):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self.columns = A.resolve_columns(columns)
        self.schema = pa.schema([A.SCHEMA.field(c) for c in self.columns])
        self.end: DataEnd | None = None
        self.blanks: list[Blank] = []
        #: Bytes of commit log covered so far (for progress reports).
        self.bytes_done = 0
        self._log = commitlog
        self._batch_size = batch_size
        self._decompress = decompress
        self._verify_crc = verify_crc
        self._strict = strict
        self._max_body = max_body_size
        self._window = max(window_size, 1 << 16)
        self._topic = None if topic is None else np.frombuffer(topic.encode("utf-8"), np.uint8).copy()
        self._queue_id = queue_id
        self._tag = tag
        self._key = key
        self._since = _millis(since)
        self._until = _millis(until)
        self._from = from_offset
        self._to = to_offset
        self._stop_at = stop
        #: Threads that build batches (the record walk itself stays in order in the calling thread).
        self._threads = max(1, int(threads))
        self._free_windows: list[np.ndarray] = []
        self._free_chunks: list[tuple[np.ndarray, np.ndarray]] = []
        if start is None and from_offset is not None and commitlog.segments:
            # Records are found from a segment start; earlier records are left out by the filter.
            try:
                start = commitlog.segments[commitlog.segment_index(from_offset)].start_offset
            except RmqFormatError:  # before the first segment or in a gap: scan from the start
                start = None
        self._start = start
        self._gen = self._run()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self._gen

    def __next__(self) -> pa.RecordBatch:
        return next(self._gen)

    def read_all(self) -> pa.Table:
        """Every remaining batch as one table."""
        return pa.Table.from_batches(list(self._gen), schema=self.schema)

    # -- the walk -------------------------------------------------------------------------

    def _run(self) -> Iterator[pa.RecordBatch]:
        segments = self._log.segments
        if not segments:
            self.end = DataEnd(0, EndReason.NO_SEGMENTS, None, 0)
            return
        first, pos = 0, 0
        if self._start is not None:
            first = self._log.segment_index(self._start)
            pos = self._start - segments[first].start_offset
        pool = ThreadPoolExecutor(self._threads, thread_name_prefix="rmqformats") if self._threads > 1 else None
        try:
            for i in range(first, len(segments)):
                try:
                    yield from self._segment(segments[i], pos, i == len(segments) - 1, pool)
                except _Stop as stop:
                    self.end = stop.end
                    if stop.error is not None and self._strict:
                        raise stop.error
                    return
                pos = 0
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    # Buffers are recycled: fresh memory costs a page fault per 4 KiB, more than decoding it.
    def _window_buffer(self, size: int) -> np.ndarray:
        for k, b in enumerate(self._free_windows):
            if len(b) >= size:
                return self._free_windows.pop(k)
        return np.empty(max(size, self._window), np.uint8)

    def _chunk_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._free_chunks:
            return self._free_chunks.pop()
        return (np.empty((K.N_I32, self._batch_size), np.int32), np.empty((K.N_I64, self._batch_size), np.int64))

    def _segment(self, seg: Segment, pos: int, last: bool, pool):
        """Yield the batches of one segment from ``pos``; raises :class:`_Stop` where the data ends."""
        fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        pending: deque = deque()   # (future or result, window buffer, chunk arrays), in record order
        users: dict[int, int] = {}  # window buffer id -> chunks still using it

        def finish(block: bool, keep: int):
            """Yield the batches of finished chunks in order, leaving at most ``keep`` pending."""
            while pending and (len(pending) > keep or (not block and _done(pending[0][0]))):
                job, wbuf, arrays = pending.popleft()
                batches, stop = job.result() if pool is not None else job
                self._free_chunks.append(arrays)
                users[id(wbuf)] -= 1
                if users[id(wbuf)] == 0 and wbuf is not buf:
                    del users[id(wbuf)]
                    self._free_windows.append(wbuf)
                yield from batches
                if stop is not None:
                    raise stop

        buf = self._window_buffer(self._window)
        try:
            size = os.fstat(fd).st_size
            name = os.path.basename(seg.path)
            while True:
                want = min(len(buf), size - pos)
                got = _read_into(fd, buf, want, pos)
                if got < want:
                    raise FileChangedError(seg.path, pos + got, f"the file shrank while it was read (it had {size} "
                                                                f"bytes; {pos + got} are left)")
                at_eof = pos + want == size
                wpos = 0
                # ``stop`` (a commit-log offset) ends the walk before the first record at or after it.
                limit = want + 1 if self._stop_at is None else min(want + 1, self._stop_at - seg.start_offset - pos)
                while True:
                    arrays = self._chunk_arrays()
                    n, stop, spos = K.walk_records(buf, wpos, want, at_eof, limit, self._batch_size, *arrays)
                    if n:
                        w = A.Window(buf, arrays[0], arrays[1], seg.start_offset, pos, seg.path, name)
                        job = pool.submit(self._chunk, w, n, fd, size) if pool is not None \
                            else self._chunk(w, n, fd, size)
                        pending.append((job, buf, arrays))
                        users[id(buf)] = users.get(id(buf), 0) + 1
                        yield from finish(False, self._threads)
                    else:
                        self._free_chunks.append(arrays)
                    if stop == K.STOP_FULL:
                        wpos = spos
                        continue
                    break
                here = pos + spos
                self.bytes_done += spos
                if stop == K.STOP_WINDOW:
                    if spos == 0:  # one record larger than the window: read it whole
                        head = os.pread(fd, 4, pos)
                        need = int.from_bytes(head, "big", signed=True) if len(head) == 4 else 0
                        grown = min(max(need, 2 * len(buf)), size - pos)
                    else:
                        grown = len(buf)
                    old = buf
                    buf = self._window_buffer(grown)
                    if users.get(id(old), 0) == 0:
                        users.pop(id(old), None)
                        self._free_windows.append(old)
                    pos = here
                    continue
                yield from finish(True, 0)  # the chunks before the end of this segment's data come first
                if stop == K.STOP_LIMIT:
                    raise _Stop(None)
                if stop == K.STOP_BLANK:
                    blank_size = int.from_bytes(bytes(buf[spos:spos + 4]), "big", signed=True)
                    self.blanks.append(Blank(seg.start_offset + here, blank_size, seg.path, here))
                    if last:
                        raise _Stop(self._end(seg, here, EndReason.BLANK_LAST))
                    self.bytes_done += size - here
                    return
                if stop == K.STOP_ZERO:
                    raise _Stop(self._end(seg, here, EndReason.ZERO_TAIL))
                if stop == K.STOP_EOF:
                    if last:
                        raise _Stop(self._end(seg, here, EndReason.END_OF_FILE))
                    err = TruncatedRecordError(seg.path, here, "segment file ends without a BLANK record")
                    raise _Stop(self._end(seg, here, EndReason.TRUNCATED, err.reason), err)
                if stop == K.STOP_HEADER_CUT:
                    err = TruncatedRecordError(seg.path, here, f"{size - here} bytes left, less than a record header")
                    raise _Stop(self._end(seg, here, EndReason.TRUNCATED, err.reason), err)
                err = _record_error(fd, seg, here, size)
                raise _Stop(self._end(seg, here, _REASONS.get(type(err), EndReason.BAD_SIZE), err.reason), err)
        finally:
            for job, _, _ in pending:  # an early stop: let running chunks finish before the file closes
                if pool is not None:
                    job.cancel()
                    try:
                        job.result()
                    except BaseException:  # noqa: BLE001 - their batches are dropped with the scan
                        pass
            self._free_windows.append(buf)
            os.close(fd)

    def _chunk(self, w: A.Window, n: int, fd: int, size: int) -> tuple[list[pa.RecordBatch], _Stop | None]:
        """The batches of ``n`` records a walk found, and the stop they contain (or ``None``); may run in a thread."""
        batches: list[pa.RecordBatch] = []
        try:
            for b in self._emit(w, n, fd, size):
                batches.append(b)
        except _Stop as stop:
            return batches, stop
        return batches, None

    def _end(self, seg: Segment, pos: int, reason: EndReason, detail: str = "") -> DataEnd:
        return DataEnd(seg.start_offset + pos, reason, seg.path, pos, detail)

    def _emit(self, w: A.Window, n: int, fd: int, size: int) -> Iterator[pa.RecordBatch]:
        """Check, filter and build the batch of the first ``n`` records the kernel found."""
        all_rows = np.arange(n)
        cut = n
        if self._verify_crc:
            cut = _first_crc_mismatch(w, all_rows)
        offsets = w.i64[K.I64_POS][:cut] + w.base
        finished = False
        if self._to is not None and cut and offsets[-1] >= self._to:
            cut = int(np.searchsorted(offsets >= self._to, True))
            finished = True
        rows = np.arange(cut)
        mask = None

        def narrow(cond):
            nonlocal mask
            mask = cond if mask is None else mask & cond
        if self._queue_id is not None:
            narrow(w.i32[K.I32_QUEUE_ID][:cut] == self._queue_id)
        if self._since is not None:
            narrow(w.i64[K.I64_STORE_TS][:cut] >= self._since)
        if self._until is not None:
            narrow(w.i64[K.I64_STORE_TS][:cut] < self._until)
        if self._from is not None:
            narrow(offsets[:cut] >= self._from)
        if mask is not None:
            rows = np.flatnonzero(mask)
        if self._topic is not None and len(rows):
            rows = rows[K.equals_each(w.buf, w.i64[K.I64_TOPIC_POS][rows], w.i64[K.I64_TOPIC_LEN][rows], self._topic)]
        if (self._tag is not None or self._key is not None) and len(rows):
            rows = rows[self._tag_key_mask(w, rows)]
        if len(rows):
            yield from self._build(w, rows)
        if cut < n:
            if finished:
                raise _Stop(None)
            # A CRC mismatch: the object API's own error for that record.
            here = w.file_pos + int(w.i64[K.I64_POS][cut])
            seg = Segment(w.path, w.seg_start, size)
            err = _record_error(fd, seg, here, size, verify_crc=True)
            raise _Stop(self._end(seg, here, _REASONS.get(type(err), EndReason.BAD_SIZE), err.reason), err)

    def _tag_key_mask(self, w: A.Window, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` carry the ``tag`` (TAGS) and the ``key`` (one of the KEYS, or the UNIQ_KEY)."""
        cols = A.build(w, rows, ("tags", "keys", "uniqKey"), None)
        keep = np.ones(len(rows), np.bool_)
        if self._tag is not None:
            keep &= np.asarray(pc.fill_null(pc.equal(cols.column("tags"), self._tag), False))
        if self._key is not None:
            keys = cols.column("keys")
            hit = np.asarray(pc.fill_null(pc.equal(cols.column("uniqKey"), self._key), False)).copy()
            parents = np.asarray(pc.list_parent_indices(keys))
            hit[parents[np.asarray(pc.equal(pc.list_flatten(keys), self._key))]] = True
            keep &= hit
        return keep

    def _build(self, w: A.Window, rows: np.ndarray) -> Iterator[pa.RecordBatch]:
        try:
            yield A.build(w, rows, self.columns, None, self._decompress, self._max_body)
        except OverflowError:  # bodies of one batch over 2 GiB after decompression: halve it
            if len(rows) == 1:
                raise
            half = len(rows) // 2
            yield from self._build(w, rows[:half])
            yield from self._build(w, rows[half:])


def _done(job) -> bool:
    return not isinstance(job, Future) or job.done()


def _first_crc_mismatch(w: A.Window, rows: np.ndarray) -> int:
    """How many of ``rows`` pass the CRC checks before the first that fails (all: ``len(rows)``)."""
    first = A.body_crc_mismatch(w, rows)
    limit = len(rows) if first < 0 else first
    if limit:
        second = A.record_crc_mismatch(w, rows[:limit], A.parse_properties(w, rows[:limit]))
        if second >= 0:
            limit = second
    return limit


def _read_into(fd: int, buf: np.ndarray, n: int, pos: int) -> int:
    """Read ``n`` bytes at ``pos`` into ``buf``; returns how many the file had."""
    view = memoryview(buf)[:n]
    done = 0
    while done < n:
        got = os.preadv(fd, [view[done:]], pos + done)
        if got <= 0:
            break
        done += got
    return done


def _record_error(fd: int, seg: Segment, pos: int, size: int, verify_crc: bool = False) -> RecordError:
    """The object API's error for the record at ``pos``: the same type and text as its scan gives."""
    head = os.pread(fd, 4, pos)
    total = int.from_bytes(head, "big", signed=True) if len(head) == 4 else 0
    # The broker's checks read at most a record header's fields past TOTALSIZE.
    data = os.pread(fd, min(size - pos, max(total, 0) + _ERROR_MARGIN), pos)
    try:
        msg = decode_message(data, 0, seg.path, seg.start_offset + pos)
        if verify_crc:
            msg.verify_crc()
    except RecordError as exc:
        return type(exc)(seg.path, pos + (exc.offset or 0), exc.reason)
    raise AssertionError(f"{seg.path} @ 0x{pos:x}: the record walk and the object API disagree")


def find_record_start(seg: Segment, begin: int, end: int, *, window_size: int = DEFAULT_WINDOW) -> int | None:
    """The file position of the first message record that starts in ``[begin, end)`` of a segment, or ``None``.

    For reading a segment in byte ranges: a range's reader starts at the
    first position whose magic code, stored PHYSICALOFFSET (equal to the
    position's own commit-log offset) and field lengths make a valid record,
    so bytes of a body that look like a record header are not taken for
    one. Reads ``pread`` windows; raises :class:`FileChangedError` when the
    file shrinks below the size it had.
    """
    fd = os.open(seg.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        size = os.fstat(fd).st_size
        end = min(end, size)
        pos = begin
        i32 = np.empty((K.N_I32, 1), np.int32)
        i64 = np.empty((K.N_I64, 1), np.int64)
        length = max(window_size, 1 << 16)
        while pos < end:
            want = min(length, size - pos)
            buf = np.empty(want, np.uint8)
            got = _read_into(fd, buf, want, pos)
            if got < want:
                raise FileChangedError(seg.path, pos + got, f"the file shrank while it was read (it had {size} bytes)")
            at_eof = pos + want == size
            found_at, found = K.find_record(buf, 0, want, at_eof, end - pos, seg.start_offset + pos, i32, i64)
            if found == 1:
                return pos + int(found_at)
            if found == 0:
                return None
            if found_at == 0:  # a candidate record longer than the window: read it whole
                length = 2 * length
            pos += int(found_at)
        return None
    finally:
        os.close(fd)
