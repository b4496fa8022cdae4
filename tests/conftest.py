"""Shared fixtures: the real RocketMQ stores in tests/fixtures and their ground truth."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

from rmqformats.codegen.dist import RUNTIMES_ENV, runtimes_dir

FIXTURES = Path(__file__).parent / "fixtures"
VERSIONS = ["rocketmq-4.9.7", "rocketmq-5.1.4", "rocketmq-5.3.3"]


def truth_records(version: str) -> list[dict]:
    """Every commit-log record of a vector store, as RocketMQ's MessageDecoder read it."""
    with open(FIXTURES / version / "truth" / "messages.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def store_path(version: str) -> Path:
    return FIXTURES / version / "store"


@pytest.fixture(autouse=True, scope="session")
def segment_times_cache(tmp_path_factory):
    """Every test (and each command it runs in a subprocess) keeps its store-time cache in a temporary folder,
    never in the home folder's cache."""
    from rmqformats.walk.timecache import CACHE_ENV
    folder = tmp_path_factory.mktemp("segment-times")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(folder))
        yield folder


@pytest.fixture(params=VERSIONS)
def version(request) -> str:
    return request.param


@pytest.fixture
def store_copy(tmp_path, version) -> Path:
    """A writable copy of a vector store root, for tests that damage files."""
    dst = tmp_path / "store"
    shutil.copytree(store_path(version), dst)
    return dst


#: The official Kaitai runtimes the cross-language tests build against (tests/test_targets.py,
#: tests/test_dist_parsers.py): ``$RMQFORMATS_KAITAI_RUNTIMES``, else ``../shared/kaitai/runtimes``.
RUNTIMES = runtimes_dir()


def runtimes_missing(lang: str | None = None) -> str | None:
    """Why the Kaitai runtime of ``lang`` (any, when None) cannot be used here, in one line; None when it can."""
    folder = RUNTIMES if lang is None else RUNTIMES / lang
    if folder.is_dir():
        return None
    return (f"the Kaitai runtimes are not at {folder} (set {RUNTIMES_ENV}, or KAITAI_RUNTIMES=... for make, "
            "to a folder holding the official runtimes, one folder per language)")


def skip_without_runtime(lang: str | None = None) -> None:
    """Skip the calling test, naming what is missing, when the runtime is absent; under CI, fail instead."""
    why = runtimes_missing(lang)
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


#: Free bytes of temporary space below which a run may fail for want of it: the session's store copies, fresh
#: clones, wheels and the largest test's files took up to 7 GiB at once (a passed test's folder is removed as
#: it ends).
_LOW_TEMPORARY_SPACE = 8 << 30


def _temporary_space() -> tuple[str, int]:
    import tempfile
    folder = tempfile.gettempdir()
    return folder, shutil.disk_usage(folder).free


def pytest_report_header(config):
    folder, free = _temporary_space()
    return [f"temporary space: {free / (1 << 30):.1f} GiB free in {folder} (a run takes up to about 7 GiB at once)"]


def pytest_terminal_summary(terminalreporter, config):
    """Say loudly, at the end of every run, when the Spark adapter's tests could not run; print the language
    table of tests/test_targets.py (spec x language) when it ran."""
    import sys

    folder, free = _temporary_space()
    if free < _LOW_TEMPORARY_SPACE:  # the errors a full disk causes look like any other
        terminalreporter.write_sep("!", f"LOW TEMPORARY SPACE: {free / (1 << 30):.1f} GiB free in {folder} at the "
                                        "end of the run", yellow=True, bold=True)
    if importlib.util.find_spec("pyspark") is None:
        terminalreporter.write_sep(
            "!", "SPARK TESTS SKIPPED: pyspark is not installed (make setup-spark installs the [spark] extra)",
            yellow=True, bold=True)
    why = runtimes_missing()
    if why is not None and any(m in sys.modules for m in ("test_targets", "test_dist_parsers")):
        terminalreporter.write_sep("!", f"CROSS-LANGUAGE TESTS SKIPPED: {why}", yellow=True, bold=True)
    table = sys.modules.get("table")
    if table is None or not getattr(table, "RESULTS", None):
        return
    names = [n for n in table.ORDER if n in table.RESULTS] + sorted(set(table.RESULTS) - set(table.ORDER))
    specs = sorted(p.stem for p in (Path(__file__).parents[1] / "formats").glob("*.ksy"))
    text = table.markdown(table.RESULTS, names, specs)
    terminalreporter.write_sep("=", "Kaitai targets: spec x language (tests/test_targets.py)")
    terminalreporter.write_line(text)
    complete = table.render(names, specs)
    if complete is not None and getattr(config, "cache", None) is not None:
        config.cache.set(table.CACHE_KEY, {"table": complete, "results": table.RESULTS})
