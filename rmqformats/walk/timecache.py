"""The store times of whole segments, kept outside the store, so that a store-time window reads only the
segments that can hold it.

A store-time window (``since``/``until``) passes a segment only after a walk
of all its records (:mod:`rmqformats.walk.timebounds`): store times are not
in order, so nothing else bounds them. That walk reads every byte, so on its
own a one-hour query of a 12-hour store still reads the whole store. This
cache keeps, per segment file, what the walk of *all* its records found (a
:class:`~rmqformats.walk.timebounds.SegmentTimes` with the empty window:
least and greatest store time, where and why the walk stopped, the BLANK
record's size, the ``SCHEDULE_TOPIC_XXXX`` records walked). A later window
that this range ``[low, high]`` does not meet holds none of the segment's
records, and the walk with that window would have walked every record to
the same stop and found the same times: the cached times *are* that walk's
result, so the segment is passed exactly as the walk would pass it. Where
the range meets the window the segment is walked as without cache (the
window may still fall between its records). An entry is written after a
walk that went through every record (none in the window); the walk of a
segment holding the window stops at its first record in it, as without
cache (the segment's decoding, below, then writes its entry).
A decoding walk of a whole segment (from its start to its BLANK record, the same records taken by the
same kernel) writes the entry too (:func:`remember`), from the store times and scheduled records it summed
(:func:`~rmqformats.walk.kernels.store_times`), in one process or from its workers' ranges in commit-log
order (:mod:`rmqformats.walk.parallel`). So no query reads more than it would without the cache (measured in
``benchmarks/bench_sql.py``: walking the window's segments through on the
first query read 12% more and took 14% longer than stopping).

Validity: an entry holds its key, the file's real path, device, inode,
size, modification and status-change times (``st_mtime_ns``,
``st_ctime_ns``, from ``fstat`` of the open file), and is used only when
the key matches exactly. It is written only when the key read before and
after the walk is the same and the file's status-change time lies at least
:data:`SETTLED_NS` before the walk ended: a write to the file after that
then sets a later status-change time even where the file system keeps times
in coarse steps, so a file changed after its entry was written never matches
it. The last segment is never looked up (its end is read as a live file's).

Location: ``$RMQFORMATS_CACHE_DIR`` when set (an empty value turns the
cache off), else ``$XDG_CACHE_HOME/rmqformats/segment-times``, else
``~/.cache/rmqformats/segment-times``. A folder inside the commit-log folder
or the folder holding it (the store root) is refused: the cache is off. One
small JSON file per segment, named by a hash of its key, written atomically
(a unique temporary file in the same folder, then ``os.replace``; writers at
once write the same content). A folder that cannot be made or written, and
an entry that cannot be read or parsed or belongs to another file, are
passed over silently: the segment is walked as without cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from .timebounds import I64_MAX, I64_MIN, SegmentTimes, walk_times

#: The environment variable naming the cache folder (empty: no cache).
CACHE_ENV = "RMQFORMATS_CACHE_DIR"
#: How long before the end of its walk a file's status-change time must lie for its entry to be written:
#: more than the coarsest step a file system keeps times in (2 s, FAT's).
SETTLED_NS = 2_000_000_000
_VERSION = 1
_TIMES = ("low", "high", "stop", "pos", "blank_size", "schedule")


@dataclass(frozen=True)
class TimeCache:
    """Where entries are kept, and how settled a file must be to get one (picklable: handed to workers)."""

    folder: str
    settled_ns: int = SETTLED_NS


def default_folder() -> str | None:
    """The cache folder the environment names (see the module text); ``None`` when the cache is off."""
    named = os.environ.get(CACHE_ENV)
    if named is not None:
        return named or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # not a path the XDG rules allow, nor "~" unresolved
        return None
    return os.path.join(base, "rmqformats", "segment-times")


def cache_for(commitlog_folder: str, *, folder: str | None = None) -> TimeCache | None:
    """The cache for a walk of the commit log in ``commitlog_folder`` (``folder``: the cache folder, else
    :func:`default_folder`); ``None`` when it is off or lies inside the commit-log folder or its parent."""
    folder = default_folder() if folder is None else folder
    if not folder:
        return None
    try:
        where = os.path.realpath(folder)
        log = os.path.realpath(commitlog_folder)
        for store in {log, os.path.dirname(log)}:
            if os.path.commonpath([where, store]) == store:
                return None
    except (OSError, ValueError):
        return None
    return TimeCache(where, SETTLED_NS)


def fd_key(fd: int, path: str) -> list | None:
    """The validity key of the open file ``fd`` at ``path`` now (``None`` where ``fstat`` fails)."""
    try:
        st = os.fstat(fd)
        return [os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    except (OSError, ValueError):
        return None


def _entry_path(cache: TimeCache, key: list) -> str:
    name = hashlib.sha256(json.dumps(key).encode("utf-8", "surrogatepass")).hexdigest()
    return os.path.join(cache.folder, name + ".json")


def _load(cache: TimeCache, key: list) -> SegmentTimes | None:
    """The entry of ``key``, or ``None`` (missing, unreadable, not an entry, another key)."""
    try:
        with open(_entry_path(cache, key), "rb") as f:
            data = json.loads(f.read(1 << 16))
        if data.get("version") != _VERSION or data.get("key") != key:
            return None
        values = [data["times"][name] for name in _TIMES]
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    if not all(type(v) is int and I64_MIN <= v <= I64_MAX for v in values):
        return None
    low, high, stop, pos, blank, schedule = values
    if not (0 <= pos <= key[3] and schedule >= 0):
        return None
    return SegmentTimes(low, high, stop, pos, blank, schedule, False, True)


def _save(cache: TimeCache, key: list, found: SegmentTimes) -> None:
    """Write the entry of ``key`` atomically; any failure leaves the cache as it was."""
    text = json.dumps({"version": _VERSION, "key": key,
                       "times": {name: getattr(found, name) for name in _TIMES}}).encode("utf-8", "surrogatepass")
    tmp = None
    try:
        os.makedirs(cache.folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry-", suffix=".tmp", dir=cache.folder)
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        os.replace(tmp, _entry_path(cache, key))
        tmp = None
    except (OSError, ValueError):
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _clamp(v: int) -> int:
    return min(max(v, I64_MIN), I64_MAX)


def meets(found: SegmentTimes, low: int, high: int) -> bool:
    """Whether the store times ``[found.low, found.high]`` meet the window ``[low, high)``."""
    return found.low <= found.high and max(found.low, _clamp(low)) < min(found.high + 1, _clamp(high))


def cached_times(fd: int, path: str, size: int, *, low: int, high: int,
                 cache: TimeCache | None) -> SegmentTimes | None:
    """The times of the open segment ``fd`` (``size`` bytes, at ``path``) from its valid entry when they do
    not meet ``[low, high)``: exactly what :func:`walk_times` with that window returns, unread. ``None``
    otherwise (no cache, no valid entry, or a range that meets the window)."""
    if cache is None:
        return None
    key = fd_key(fd, path)
    if key is None or key[3] != size:
        return None
    found = _load(cache, key)
    if found is None or meets(found, low, high):
        return None
    return found


def segment_times(fd: int, path: str, size: int, *, low: int, high: int, cache: TimeCache | None,
                  scratch: np.ndarray | None = None) -> SegmentTimes | None:
    """:func:`walk_times` of the open segment ``fd`` (``size`` bytes, at ``path``) in ``[low, high)``, from
    the cache where its valid entry's times do not meet the window; otherwise walked, and the entry
    written when there was none and the walk went through every record (no record in the window: the
    walk stops at the first one; a segment holding the window gets its entry from its decoding walk or
    a later window that it does not hold). A query thus never reads more than it would without the cache. ``None`` as
    :func:`walk_times` gives it."""
    before = None if cache is None else fd_key(fd, path)
    if cache is None or before is None or before[3] != size:
        return walk_times(fd, size, low=low, high=high, scratch=scratch)
    entry = _load(cache, before)
    if entry is not None and not meets(entry, low, high):
        return entry
    found = walk_times(fd, size, low=low, high=high, scratch=scratch)
    if entry is None and found is not None:
        remember(path, before, found, cache=cache, fd=fd)
    return found


def file_times(path: str, size: int, *, low: int = I64_MIN, high: int = I64_MIN,
               cache: TimeCache | None = None) -> SegmentTimes | None:
    """:func:`segment_times` of the file at ``path``, or ``None`` unless it has ``size`` bytes before and after
    the walk (or cannot be opened: the decoding walk meets that). What the workers of a parallel walk run."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size != size:
            return None
        found = segment_times(fd, path, size, low=low, high=high, cache=cache)
        return found if os.fstat(fd).st_size == size else None
    finally:
        os.close(fd)


def file_cached_times(path: str, size: int, *, low: int, high: int,
                      cache: TimeCache | None) -> SegmentTimes | None:
    """:func:`cached_times` of the file at ``path`` (``None`` where it cannot be opened or has not ``size``
    bytes)."""
    if cache is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        return cached_times(fd, path, size, low=low, high=high, cache=cache)
    finally:
        os.close(fd)


def file_key(path: str) -> list | None:
    """The validity key of the file at ``path`` now (``None`` where it cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        return fd_key(fd, path)
    finally:
        os.close(fd)


def remember(path: str, key: list | None, found: SegmentTimes, *, cache: TimeCache | None,
             fd: int | None = None) -> bool:
    """Write the entry of the segment at ``path`` (open as ``fd``, or opened here): ``found`` as a walk of all
    its records with an empty window finds it (none in the window: not ``hit``), by a walk that began when the
    file's key was ``key`` (:func:`file_key`). Written only when the key is the same now and settled (see the
    module). Returns whether it was."""
    if cache is None or key is None or found.hit or (file_key(path) if fd is None else fd_key(fd, path)) != key:
        return False
    if key[5] + cache.settled_ns > time.time_ns():
        return False
    _save(cache, key, found)
    return True


__all__ = ["CACHE_ENV", "SETTLED_NS", "TimeCache", "cache_for", "cached_times", "default_folder", "fd_key", "file_key",
           "file_times", "file_cached_times", "meets", "remember", "segment_times"]
