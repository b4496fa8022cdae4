"""Reading the commit log: the record scan, reading one record, and where the data ends.

The scan mirrors the broker's recovery (``CommitLog.checkMessageAndReturnSize``
in a loop): records are read one after the other; a BLANK record sends the
scan to the next segment; anything else that is not a valid message (the
zero-filled tail, an unknown magic code, a record cut by the end of the file,
a size that disagrees with the fields, a CRC mismatch when CRCs are checked)
ends the data of the whole commit log. Segments are read with ``pread`` into a
:class:`~rmqformats.mapped.FileImage` (never memory-mapped, so a file cut while
it is read gives :class:`~rmqformats.errors.FileChangedError`, not SIGBUS) and
decoded in place; the pages passed are given back, so a 1 GiB segment costs
address space, not memory.

Segments, record decoding, boundaries and the end classification live in
:mod:`rmqformats.segments` (their names are importable from here too); the
record walk (:mod:`rmqformats.walk`) and salvage stand on that module,
below this one.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from .compression import DEFAULT_MAX_BODY_SIZE
from .errors import (InvalidMessageIdError, MessageNotFoundError, RecordError, RecordSizeError, RmqFormatError,
                     TruncatedRecordError)
from .frames import require_pandas
from .mapped import pread as _pread, pread_exact
from .message import Message
from .segments import (
    FOLDER_SEPARATOR,
    MAGIC_BLANK,
    MAGIC_V1,
    MAGIC_V2,
    SCHEDULE_TOPIC,
    SEGMENT_NAME,
    Blank,
    DataEnd,
    EndReason,
    Segment,
    SegmentWindow,
    _HEAD,
    _HEADER,
    check_record,
    classify_end,
    count_records,
    discover_segments,
    is_record_start,
    java_parse_int,
    next_record_start,
    nonzero_span,
    segment_index,
    split_folders,
    unfinished_reason,
)

if TYPE_CHECKING:
    import pandas
    import pyarrow

    from .walk.parallel import Fold
    from .walk.scan import ColumnarScan

T = TypeVar("T")

#: Segment files :meth:`CommitLog.read` keeps open between reads.
_OPEN_SEGMENTS = 8
#: Items :meth:`CommitLog.read_along` takes at a time (their records read together).
READ_ALONG = 4096
#: Bytes :meth:`CommitLog.read_each` reads at an offset whose record size it is not told (a longer record
#: is read again by itself, its size taken from its header).
_GUESSED_SIZE = 1024


class Scan:
    """An iterator of the messages of a commit log, in commit-log order.

    A view over the columnar walk (:class:`rmqformats.walk.messages.MessageWalk`): each message is
    made from a row the walk's kernel found, so the records, the end, the BLANK records and the errors
    are the walk's. After it is exhausted, :attr:`end` tells where and why the data ended and
    :attr:`blanks` lists the BLANK records passed. With ``strict=True`` a corrupt end raises its
    :class:`RecordError` instead of ending quietly.
    """

    def __init__(self, commitlog: "CommitLog", start: int | None, verify_crc: bool, strict: bool,
                 live: bool = False, force_verify_prop_crc: bool = False):
        # The columnar walk below this reader compiles its kernels with numba: loaded on first use only.
        from .walk.messages import ROWS, MessageWalk
        self._walk = MessageWalk(commitlog, columns=("commitLogOffset",), batch_size=ROWS, decompress=False,
                                 verify_crc=verify_crc, strict=strict, start=start, live=live,
                                 force_verify_prop_crc=force_verify_prop_crc)
        self._gen = self._run()

    @property
    def end(self) -> DataEnd | None:
        """Where and why the data ended (``None`` until the iteration is over)."""
        return self._walk.end

    @property
    def blanks(self) -> list[Blank]:
        """The BLANK records passed so far."""
        return self._walk.blanks

    @property
    def bytes_done(self) -> int:
        """Bytes of commit log covered so far (for progress reports)."""
        return self._walk.bytes_done

    def __iter__(self) -> Iterator[Message]:
        # The generator itself: a for loop then skips a Python-level __next__ per message.
        return self._gen

    def __next__(self) -> Message:
        return next(self._gen)

    def _run(self) -> Iterator[Message]:
        for block in self._walk:
            yield from block


class CommitLog:
    """The commit log of a store: its segment files, in offset order."""

    #: Whether a record's ``__CRC32#`` covers its bytes as stored. Files whose PHYSICALOFFSET was
    #: rewritten without recomputing it (tiered uploads, compaction logs) set this to False.
    record_crc = True
    #: Worker processes of :meth:`batches` (and the walks built on it) when it is given no ``jobs``;
    #: the command line sets it from ``--jobs``.
    jobs = 1

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.segments: tuple[Segment, ...] = tuple(discover_segments(self.path))
        self._fds: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"CommitLog({self.path!r}, {len(self.segments)} segments)"

    @property
    def total_size(self) -> int:
        """Sum of the segment file sizes."""
        return sum(s.size for s in self.segments)

    def segment_index(self, offset: int) -> int:
        """Index of the segment holding commit-log ``offset``; raises :class:`MessageNotFoundError`."""
        return segment_index(self.path, self.segments, offset)

    def scan(self, *, start: int | None = None, verify_crc: bool = False, strict: bool = False,
             salvage: bool = False, live: bool = False, force_verify_prop_crc: bool = False):
        """Iterate the messages from ``start`` (default: the first segment's start).

        ``verify_crc`` checks what the broker's recovery with its default
        ``checkCRCOnRecover=true`` checks, each body CRC, and ends the data at
        the first mismatch. ``force_verify_prop_crc`` makes it check what the
        broker does with ``forceVerifyPropCRC=true`` (5.2.0 on): each record's
        bytes against its ``__CRC32#`` property (written with
        ``enabledAppendPropCRC``), a record without one failing, and no body CRC.

        ``salvage`` goes on after damage: it resyncs at the next valid record
        and returns every intact message; the iterator's ``damaged`` lists the
        :class:`rmqformats.walk.salvage.DamagedRange` skipped.

        ``live`` is for a store whose broker is writing: a record at the end
        of the last segment that is not completely written ends the data as
        ``WRITING`` (clean) rather than as damage. In every mode the last
        record before zero fill is checked more strictly and never returned
        half-written.
        """
        if salvage:  # the columnar walk (numba) below this reader is loaded on first use only
            from .walk.salvage import SalvageScan
            return SalvageScan(self, lambda at: Scan(self, at, verify_crc, False, live, force_verify_prop_crc), start)
        return Scan(self, start, verify_crc, strict, live, force_verify_prop_crc)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.scan())

    def batches(self, columns: str | Iterable[str] | None = None, *, topic: str | Iterable[str] | None = None,
                queue_id: int | None = None, tag: str | None = None, key: str | None = None,
                since: int | str | datetime | None = None, until: int | str | datetime | None = None,
                from_offset: int | None = None, to_offset: int | None = None, start: int | None = None,
                decompress: bool = True, verify_crc: bool = False, force_verify_prop_crc: bool = False,
                strict: bool = False, salvage: bool = False, live: bool = False,
                stop_at_corrupt_body: bool = False, batch_size: int = 65536, max_batch_bytes: int = 64 << 20,
                threads: int = 1, max_body_size: int = DEFAULT_MAX_BODY_SIZE, stop: int | None = None,
                window_size: int = 4 << 20, range_size: int = 8 << 20, jobs: int | None = None,
                fold: "Fold | None" = None) -> "ColumnarScan":
        """Stream the messages as :class:`pyarrow.RecordBatch` objects (see :mod:`rmqformats.columnar`).

        ``columns``: a column name or names (default: all of
        :data:`rmqformats.columnar.COLUMNS`; the batches hold them in that
        order, :meth:`to_arrow` and :meth:`to_pandas` in the order asked).
        Filters: ``topic`` (a topic, or several), ``queue_id``, ``tag`` (the
        TAGS value), ``key`` (one of the KEYS, or the UNIQ_KEY), ``since`` and
        ``until`` (store time: epoch ms, ISO 8601 text or a datetime; UTC when
        naive), ``from_offset`` and ``to_offset`` (commit-log offsets),
        ``start`` (the offset of a record to start at), ``stop`` (the walk
        ends before the first record at or past this offset). ``decompress`` bodies
        by SYSFLAG (at most ``max_body_size`` bytes each; a body that does not
        decompress keeps its stored bytes, with the reason in ``bodyError``,
        unless ``stop_at_corrupt_body``); ``verify_crc``,
        ``force_verify_prop_crc``, ``strict``, ``salvage`` and ``live`` as in
        :meth:`scan`. A batch holds at most ``batch_size`` rows and closes when
        its bodies reach ``max_batch_bytes``; ``threads`` decode byte ranges
        of ``range_size`` bytes of a segment at once; segments are read
        ``window_size`` bytes at a time. ``jobs`` worker processes (default:
        the commit log's :attr:`jobs`, 1 unless set) decode byte ranges of the
        segments ahead of the reader, with the same batches' rows, order and
        end as one (:mod:`rmqformats.walk.parallel`; ``threads`` and
        ``range_size`` then have no effect, and ``salvage`` and ``live`` walk
        serially). The returned iterator's ``end`` is the same
        :class:`DataEnd` as :meth:`scan` gives. ``fold`` (a
        :class:`rmqformats.walk.parallel.Fold`, which the caller adds every
        batch it is given to) lets the workers add their ranges' batches to
        copies of it, merged into it in order in place of those batches.

        With ``since`` or ``until``, a segment none of whose records has a
        store time in the window is passed after a walk of its record headers
        (:meth:`rmqformats.walk.scan.ColumnarScan._skip`), no column of it
        built; the rows, end, BLANK records and errors are those of the walk
        that decodes it. The iterator's ``segments_skipped``,
        ``bytes_skipped``, ``bytes_hopped`` and ``bytes_decoded`` count them.
        """
        options = dict(topic=topic, queue_id=queue_id, tag=tag, key=key, since=since, until=until,
                       from_offset=from_offset, to_offset=to_offset, decompress=decompress, verify_crc=verify_crc,
                       force_verify_prop_crc=force_verify_prop_crc, live=live,
                       stop_at_corrupt_body=stop_at_corrupt_body, batch_size=batch_size,
                       max_batch_bytes=max_batch_bytes, threads=threads, max_body_size=max_body_size, stop=stop,
                       window_size=window_size, range_size=range_size)
        # The columnar walk below this reader compiles its kernels with numba: loaded on first use only.
        if salvage:
            from .walk.salvage import salvage_batches
            return salvage_batches(self, columns, start=start, **options)
        jobs = self._walk_jobs(jobs)
        if jobs > 1 and not live:
            from .walk.parallel import ParallelScan
            options.pop("range_size")
            return ParallelScan(self, columns=columns, start=start, strict=strict, jobs=jobs, fold=fold, **options)
        from .walk.scan import ColumnarScan
        return ColumnarScan(self, columns=columns, start=start, strict=strict, **options)

    def _walk_jobs(self, jobs: int | None) -> int:
        """The worker processes of a walk given ``jobs`` (``None``: :attr:`jobs`); ``ValueError`` unless a whole
        number of 1 or more."""
        jobs = self.jobs if jobs is None else jobs
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs must be a whole number of 1 or more, not {jobs!r}")
        return jobs

    def to_arrow(self, columns: str | Iterable[str] | None = None, *, topic: str | Iterable[str] | None = None,
                 queue_id: int | None = None, tag: str | None = None, key: str | None = None,
                 since: int | str | datetime | None = None, until: int | str | datetime | None = None,
                 from_offset: int | None = None, to_offset: int | None = None, start: int | None = None,
                 stop: int | None = None, decompress: bool = True, verify_crc: bool = False,
                 force_verify_prop_crc: bool = False, strict: bool = False, salvage: bool = False,
                 live: bool = False, stop_at_corrupt_body: bool = False,
                 max_body_size: int = DEFAULT_MAX_BODY_SIZE, threads: int = 1, batch_size: int = 65536,
                 max_batch_bytes: int = 64 << 20, window_size: int = 4 << 20,
                 range_size: int = 8 << 20, jobs: int | None = None) -> "pyarrow.Table":
        """The messages as one :class:`pyarrow.Table`, its columns in the order asked; the filters and
        options are those of :meth:`batches`."""
        table = self.batches(columns, topic=topic, queue_id=queue_id, tag=tag, key=key, since=since, until=until,
                             from_offset=from_offset, to_offset=to_offset, start=start, stop=stop,
                             decompress=decompress, verify_crc=verify_crc,
                             force_verify_prop_crc=force_verify_prop_crc, strict=strict, salvage=salvage,
                             live=live, stop_at_corrupt_body=stop_at_corrupt_body, max_body_size=max_body_size,
                             threads=threads, batch_size=batch_size, max_batch_bytes=max_batch_bytes,
                             window_size=window_size, range_size=range_size, jobs=jobs).read_all()
        if columns is not None and not isinstance(columns, str):
            table = table.select(list(dict.fromkeys(columns)))
        return table

    def to_pandas(self, columns: str | Iterable[str] | None = None, *, topic: str | Iterable[str] | None = None,
                  queue_id: int | None = None, tag: str | None = None, key: str | None = None,
                  since: int | str | datetime | None = None, until: int | str | datetime | None = None,
                  from_offset: int | None = None, to_offset: int | None = None, start: int | None = None,
                  stop: int | None = None, decompress: bool = True, verify_crc: bool = False,
                  force_verify_prop_crc: bool = False, strict: bool = False, salvage: bool = False,
                  live: bool = False, stop_at_corrupt_body: bool = False,
                  max_body_size: int = DEFAULT_MAX_BODY_SIZE, threads: int = 1, batch_size: int = 65536,
                  max_batch_bytes: int = 64 << 20, window_size: int = 4 << 20,
                  range_size: int = 8 << 20, jobs: int | None = None) -> "pandas.DataFrame":
        """The messages as a :class:`pandas.DataFrame`, its columns in the order asked; the filters and
        options are those of :meth:`batches` (needs the ``[pandas]`` extra)."""
        require_pandas()
        return self.to_arrow(columns, topic=topic, queue_id=queue_id, tag=tag, key=key, since=since, until=until,
                             from_offset=from_offset, to_offset=to_offset, start=start, stop=stop,
                             decompress=decompress, verify_crc=verify_crc,
                             force_verify_prop_crc=force_verify_prop_crc, strict=strict, salvage=salvage,
                             live=live, stop_at_corrupt_body=stop_at_corrupt_body, max_body_size=max_body_size,
                             threads=threads, batch_size=batch_size, max_batch_bytes=max_batch_bytes,
                             window_size=window_size, range_size=range_size, jobs=jobs).to_pandas()

    def read(self, offset: int) -> Message:
        """The message whose record starts at commit-log ``offset``.

        Reads only the record's bytes (two ``pread`` calls, more for a
        record over 2 GiB), so reading messages at scattered offsets, as
        consume-queue and index lookups do, neither maps segments nor grows
        the resident set. A segment cut shorter since the store was opened
        raises :class:`~rmqformats.errors.FileChangedError`.
        """
        seg = self.segments[self.segment_index(offset)]
        pos = offset - seg.start_offset
        fd = self._fd(seg.path)
        head = _pread(fd, _HEADER, pos)
        if len(head) < _HEADER:
            raise TruncatedRecordError(seg.path, pos, f"{len(head)} bytes left, less than a record header")
        size, magic = _HEAD.unpack(head)
        if magic == MAGIC_BLANK:
            raise MessageNotFoundError(seg.path, pos, "no message starts here (a BLANK record: "
                                                      "the rest of the segment is padding)")
        if magic == 0 and size == 0:
            raise MessageNotFoundError(seg.path, pos, "no message starts here (zero-filled tail)")
        if magic != MAGIC_V1 and magic != MAGIC_V2:
            raise MessageNotFoundError(seg.path, pos,
                                       f"no message starts here ({_record().bad_magic_error(None, pos, magic).reason})")
        if size < _HEADER:
            raise RecordSizeError(seg.path, pos, f"TOTALSIZE {size} is smaller than a record header")
        left = seg.size - pos
        if size > left:  # checked before reading, so a corrupt size never allocates more than the file
            raise TruncatedRecordError(seg.path, pos, f"TOTALSIZE {size} runs past the end of the file "
                                                      f"({left} bytes left)")
        data = pread_exact(fd, size, pos, seg.path, seg.size)
        try:  # the walk's kernel; a record it rejects raises with where and why its fields disagree with its size
            return _record().decode_message(data, 0, seg.path, seg.start_offset + pos)._replace(file_offset=pos)
        except RecordError as exc:  # positions in ``data`` are relative to the record
            raise type(exc)(exc.path, pos + (exc.offset or 0), exc.reason) from None

    @property
    def plain_records(self) -> bool:
        """Whether each record lies at its offset's position in its segment file, where :meth:`read` reads it
        (and :meth:`read_each` reads many at once); a log whose records sit in entries (DLedger) reads its
        own way."""
        return type(self).read is CommitLog.read

    def read_each(self, offsets: Iterable[int], sizes: Iterable[int] | None = None
                  ) -> Iterator[Message | RmqFormatError]:
        """What :meth:`read` gives for each of ``offsets``, in order: the message, or the error it would
        raise (returned, not raised).

        ``sizes``: the records' sizes where the caller knows them (a queue
        unit's). A file commit log reads the records a chunk at a time, those
        close together with one ``pread``, and decodes them with the walk's
        kernel (:class:`rmqformats.walk.gather.RecordGather`): far cheaper than
        a :meth:`read` each. An offset where no message is read gets
        :meth:`read`'s own error.
        """
        if not self.plain_records:
            yield from map(self._read_or_error, offsets)
            return
        import numpy as np

        from .walk.gather import CHUNK_ROWS, RecordGather
        offsets = iter(offsets)
        sizes = iter(sizes) if sizes is not None else None
        with RecordGather(self.segments) as gather:
            while chunk := list(itertools.islice(offsets, CHUNK_ROWS)):
                at = np.array(chunk, np.int64)
                size = (np.full(len(at), _GUESSED_SIZE, np.int64) if sizes is None else
                        np.array(list(itertools.islice(sizes, len(at))), np.int64))
                inside = np.flatnonzero(gather.covered(at))
                done = 0  # the offsets of the chunk answered
                for part in gather.chunks(size[inside]):
                    where = inside[part]
                    for got, messages, ok in gather.messages(at[where], size[where]):
                        # Up to this part's last offset read, or to the next part's first, or to the end.
                        more = where[got.stop] if got.stop < len(where) else (
                            inside[part.stop] if part.stop < len(inside) else len(at))
                        read = np.zeros(len(at), bool)
                        read[where[got][ok]] = True
                        found = iter(messages)
                        for k in range(done, int(more)):
                            yield next(found) if read[k] else self._read_or_error(chunk[k])
                        done = int(more)
                for k in range(done, len(at)):  # (offsets in no segment)
                    yield self._read_or_error(chunk[k])

    def _read_or_error(self, offset: int) -> Message | RmqFormatError:
        """:meth:`read`'s message, or the error it raises (the typed error of an offset where no message is
        read, nearly always)."""
        try:
            return self.read(offset)
        except RmqFormatError as exc:
            return exc

    def read_along(self, items: Iterable[T], *, offset: Callable[[T], int], size: Callable[[T], int] | None = None,
                   wanted: Callable[[T], bool] | None = None) -> Iterator[tuple[T, Message | RmqFormatError | None]]:
        """Each of ``items`` (queue units, say) with what :meth:`read_each` gives for the record at its
        ``offset`` (``None`` for an item not ``wanted``); ``size``: the record's size as the item says.

        The records of :data:`READ_ALONG` items are read together. An error
        that ``items`` raises comes after the items before it, as it would
        if they were taken one at a time.
        """
        it = iter(items)
        while True:
            chunk: list = []
            failed = None
            try:
                chunk.extend(itertools.islice(it, READ_ALONG))
            except Exception as exc:  # noqa: BLE001 - raised again below, after the items before it
                failed = exc
            if wanted is None:
                found = self.read_each([offset(x) for x in chunk], None if size is None else [size(x) for x in chunk])
                yield from zip(chunk, found)
            else:
                asked = [wanted(x) for x in chunk]
                picked = [x for x, w in zip(chunk, asked) if w]
                found = self.read_each([offset(x) for x in picked],
                                       None if size is None else [size(x) for x in picked])
                for x, w in zip(chunk, asked):
                    yield x, (next(found) if w else None)
            if failed is not None:
                raise failed
            if len(chunk) < READ_ALONG:
                return

    def _fd(self, path: str) -> int:
        """A read-only descriptor of a segment, kept open for the next reads (a few at a time)."""
        fd = self._fds.pop(path, None)
        if fd is None:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            while len(self._fds) >= _OPEN_SEGMENTS:
                os.close(self._fds.pop(next(iter(self._fds))))
        self._fds[path] = fd  # most recently used last
        return fd

    def close(self) -> None:
        """Close the descriptors :meth:`read` keeps open (the object stays usable)."""
        while self._fds:
            os.close(self._fds.popitem()[1])

    def __enter__(self) -> "CommitLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except (AttributeError, OSError):
            pass

    def read_msg_id(self, msg_id: str) -> Message:
        """The message of an offset message id (32 or 56 hex characters)."""
        address, port, offset = parse_msg_id(msg_id)
        msg = self.read(offset)
        if (msg.store_address, msg.store_port) != (address, port) or msg.physical_offset != offset:
            raise MessageNotFoundError(msg.segment, msg.file_offset,
                                       f"message id {msg_id} names another store host or offset than "
                                       f"the record here ({msg.msg_id})")
        return msg


def parse_msg_id(msg_id: str) -> tuple[bytes, int, int]:
    """Split an offset message id into (store address, store port, commit-log offset)."""
    try:
        raw = bytes.fromhex(msg_id)
    except ValueError:
        raise InvalidMessageIdError(f"message id {msg_id!r} is not hexadecimal") from None
    if len(raw) not in (16, 28):
        raise InvalidMessageIdError(f"message id {msg_id!r} has {len(msg_id)} characters, expected 32 or 56")
    n = len(raw) - 12
    return raw[:n], int.from_bytes(raw[n:n + 4], "big", signed=True), int.from_bytes(raw[n + 4:], "big", signed=True)


def _record():
    """The walk's one record decoder (:mod:`rmqformats.walk.record`): loaded with its compiled kernels on
    first use, so that opening a store for its other files does not load numba."""
    from .walk import record
    return record


def __getattr__(name: str):
    if name in ("decode_message", "record_end"):  # this module's names since before the walk decoded records
        return getattr(_record(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: This module's names, with those of :mod:`rmqformats.segments` that were always importable from here.
__all__ = [
    "FOLDER_SEPARATOR", "MAGIC_BLANK", "MAGIC_V1", "MAGIC_V2", "SCHEDULE_TOPIC", "SEGMENT_NAME", "Blank", "CommitLog",
    "DataEnd", "EndReason", "Scan", "Segment", "SegmentWindow", "check_record", "classify_end", "count_records",
    "decode_message", "is_record_start", "java_parse_int", "next_record_start", "nonzero_span", "parse_msg_id",
    "record_end", "split_folders", "unfinished_reason",
]
