"""How many worker processes a walk uses, when it uses them, and starting their fork server early.

Nothing here imports numpy, pyarrow or numba: the command line calls
:func:`prestart` before it imports them, so that the fork server the
workers come from (:mod:`rmqformats.walk.parallel`) loads those modules and
the compiled kernels on another core while the command loads its own.
Measured on a 2-core machine: the command's imports take about 1.2 s and
the fork server's about 1.0 s, which a walk with workers otherwise paid one
after the other.
"""

from __future__ import annotations

import glob
import multiprocessing
import os
import re
import signal
from collections.abc import Iterable

#: Bytes of commit log to walk, at least, before workers are used (below it the walk is serial).
MIN_PARALLEL_BYTES = 1 << 30
#: Environment variables overriding the bytes of one worker's range and :data:`MIN_PARALLEL_BYTES`.
RANGE_ENV = "RMQFORMATS_JOB_RANGE"
MIN_ENV = "RMQFORMATS_JOBS_MIN_BYTES"
#: ``rmqformats.queuefiles.QUEUE_FILE_NAME``, which this module cannot import (its module loads numpy).
_SEGMENT_NAME = re.compile(r"\d{20}")
#: The modules the fork server imports before it forks a worker (the kernels are loaded by the second).
WORKER_PRELOAD = ("rmqformats.walk.parallel", "rmqformats.walk.preload")


def default_jobs() -> int:
    """The CPUs this process may run on (``os.sched_getaffinity``; the CPU count where that is missing)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def env_bytes(name: str, default: int) -> int:
    """A number of bytes from the environment variable ``name`` (``default`` when unset or empty)."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be a number of bytes, not {text!r}") from None
    if value < 0:
        raise ValueError(f"{name} must be 0 or more, not {value}")
    return value


def min_parallel_bytes() -> int:
    """:data:`MIN_PARALLEL_BYTES`, or :data:`MIN_ENV`'s value."""
    return env_bytes(MIN_ENV, MIN_PARALLEL_BYTES)


def start_fork_server(preload: Iterable[str] = ()) -> None:
    """Start the workers' fork server now (it imports :data:`WORKER_PRELOAD` and ``preload``), where the
    platform has one and it is not running yet."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([*WORKER_PRELOAD, *preload])
    from multiprocessing import forkserver, resource_tracker
    # The resource tracker first: starting it unblocks SIGINT and SIGTERM in this thread, whatever had them blocked.
    resource_tracker.ensure_running()
    # The server starts with SIGINT blocked, and ignores it once it serves: Ctrl-C in a terminal reaches the
    # whole process group, and the server would otherwise die of it with a traceback while it imports (this
    # process handles it). Blocked here rather than ignored: a SIGINT meanwhile is this process's, taken when
    # the block is lifted, not lost.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _commitlog_bytes(path: str, limit: int) -> int:
    """Bytes of the commit-log segments at ``path`` (a store root, its ``commitlog/`` or DLedger
    ``dledger-*/data/``, or a segment), counted until ``limit``; 0 where there are none."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    dledger = sorted(glob.glob(os.path.join(glob.escape(path), "dledger-*", "data")))
    for folder in (os.path.join(path, "commitlog"), *dledger, path):
        total = 0
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if _SEGMENT_NAME.fullmatch(entry.name) and entry.is_file():
                        total += entry.stat().st_size
                        if total >= limit:
                            return total
        except OSError:
            continue
        if total:
            return total
    return 0


def prestart(argv: list[str], *, preload: Iterable[str] = ()) -> bool:
    """Start the fork server when the words ``argv`` of a command that walks a commit log say it will use
    workers: ``--jobs`` (or ``--threads``) above 1, or not given on a machine with more than one CPU, and a
    path among them holding at least :func:`min_parallel_bytes` of segments. Returns whether it started it.

    A guess from the words alone (the command's parser is not built yet): where it guesses wrong, the
    server is started when the walk needs it, or is an idle process that ends with this one.
    """
    jobs = None
    for i, word in enumerate(argv):
        for flag in ("--jobs", "--threads"):
            if word == flag and i + 1 < len(argv):
                jobs = argv[i + 1]
            elif word.startswith(flag + "="):
                jobs = word[len(flag) + 1:]
    try:
        jobs = default_jobs() if jobs is None else int(jobs)
    except ValueError:
        return False
    if jobs < 2:
        return False
    try:
        limit = min_parallel_bytes()
    except ValueError:
        return False
    if not any(_commitlog_bytes(word, limit) >= limit
               for word in argv if word and not word.startswith("-") and os.path.exists(word)):
        return False
    try:
        start_fork_server(preload)
    except Exception:  # noqa: BLE001 - started when the walk needs it, which then reports what is wrong
        return False
    return True
