"""Seeded mutations of the real vector stores through every reader and every command.

Each example damages one file of a copy of the 5.3.3 vector store (flipped
bits, extreme values over 2-, 4- and 8-byte fields, zeroed runs, a cut end;
for config files also inserted and deleted JSON tokens) and runs every reader
of that file kind and every command that reads it. The only exceptions
allowed are the package's typed errors (:mod:`rmqformats.errors`); a command
must exit with a status of :mod:`rmqformats.cli.status` and, on status 2, say
why. Every example must end within :data:`HANG_SECONDS`, and the process's
resident memory must stay under :data:`RSS_LIMIT_MIB`.

Hypothesis runs derandomized (a fixed seed) with :data:`EXAMPLES` examples
per file kind, so CI sees the same cases every run; set
``RMQFORMATS_FUZZ_EXAMPLES`` for a longer run, and see ``tests/fuzz_atheris.py``
for coverage-guided fuzzing of the same targets.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_targets as targets  # noqa: E402

EXAMPLES = int(os.environ.get("RMQFORMATS_FUZZ_EXAMPLES", "30"))
HANG_SECONDS = 60
RSS_LIMIT_MIB = 3072
FUZZ_SEED = 20261122

EXTREMES = [0, -1, 1, 0x7F, 0x80, 0xFF, 0x7FFF, -0x8000, 0x7FFFFFFF, -0x80000000, 0x7FFFF000,
            (1 << 62), (1 << 63) - 1, -(1 << 63), 253402300800000, -62135596800001]
TOKENS = ["{", "}", "[", "]", ":", ",", '"', "\\", "-", "0", "9" * 30, "9" * 5000, "1e999", "-:", "\\ud800",
          "\\u", "true", "null", '"x@y":{0:1}', "1:{0:1}", '"a":', "\ufeff", "\x00", "é", "\ud800"]


class Hang(Exception):
    """An example that ran longer than HANG_SECONDS."""


@contextlib.contextmanager
def time_limit(seconds: int):
    def on_alarm(signum, frame):
        raise Hang(f"no result after {seconds} s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _rss_mib() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("fuzz") / "store"
    shutil.copytree(targets.VECTOR_STORE, dst)
    targets.warm_up(dst)  # the columnar kernels compile on first use: not inside an example's time limit
    return dst


def _byte_ops(n: int):
    pos = st.one_of(st.integers(0, max(0, min(n - 1, 600))), st.integers(0, max(0, n - 1)))
    return st.lists(st.one_of(
        st.tuples(st.just("xor"), pos, st.integers(1, 255)),
        st.tuples(st.just("set"), pos, st.sampled_from([2, 4, 8]), st.sampled_from(EXTREMES)),
        st.tuples(st.just("zero"), pos, st.integers(1, 64)),
        st.tuples(st.just("cut"), pos),
    ), min_size=1, max_size=4)


def _text_ops(n: int):
    pos = st.integers(0, max(0, n))
    return st.lists(st.one_of(
        st.tuples(st.just("insert"), pos, st.sampled_from(TOKENS)),
        st.tuples(st.just("delete"), pos, st.integers(1, 8)),
        st.tuples(st.just("xor"), st.integers(0, max(0, n - 1)), st.integers(1, 127)),
        st.tuples(st.just("cut"), pos),
    ), min_size=1, max_size=4)


def _run_kind(fuzz_store: Path, kind: str, data) -> None:
    rel = data.draw(st.sampled_from(targets.FILES[kind]), label="file")
    path = fuzz_store / rel
    pristine = path.read_bytes()
    ops = data.draw((_text_ops if kind == "config" else _byte_ops)(len(pristine)), label="mutations")
    path.write_bytes(targets.mutate(pristine, ops))
    try:
        with time_limit(HANG_SECONDS):
            targets.run(kind, fuzz_store, rel)
    finally:
        path.write_bytes(pristine)
    assert _rss_mib() < RSS_LIMIT_MIB


_SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, print_blob=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                            HealthCheck.data_too_large])


@pytest.mark.parametrize("kind", sorted(targets.FILES))
@seed(FUZZ_SEED)
@_SETTINGS
@given(data=st.data())
def test_mutated_files(fuzz_store, kind, data):
    _run_kind(fuzz_store, kind, data)


def test_the_mutations_reach_the_readers(fuzz_store):
    """The harness itself: a damaged first record ends the scan there, and the command says so."""
    rel = targets.FILES["commitlog"][0]
    path = fuzz_store / rel
    pristine = path.read_bytes()
    path.write_bytes(targets.mutate(pristine, [("set", 4, 4, 0x12345678)]))
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            import rmqformats.cli
            status = rmqformats.cli.main(["messages", str(fuzz_store), "--format", "jsonl"])
        assert out.getvalue() == "" and status in (0, 3)
        import rmqformats
        scan = rmqformats.open_store(fuzz_store).commitlog.scan()
        assert list(scan) == [] and scan.end.reason.name == "BAD_MAGIC"
    finally:
        path.write_bytes(pristine)
