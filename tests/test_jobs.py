"""Walking the commit log with several worker processes gives the serial walk's answer, byte for byte.

Ranges are made 4 KiB here (``RMQFORMATS_JOB_RANGE``) and the serial
threshold 0 (``RMQFORMATS_JOBS_MIN_BYTES``), so that even the vector stores
(five 256 KiB segments) are cut into many ranges, decoded by the workers.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rmqformats
from rmqformats.cli import main
from rmqformats.walk.parallel import ParallelScan

from conftest import VERSIONS, store_path

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("RMQFORMATS_JOBS_EXAMPLES", "8"))
JOBS = 3


@pytest.fixture(autouse=True)
def small_ranges(monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")


def run(capfdbinary, *argv) -> tuple[int, bytes, bytes]:
    code = main([str(a) for a in argv])
    out, err = capfdbinary.readouterr()
    return code, out, err


def walk(root, jobs: int, **options):
    scan = rmqformats.open_store(root).commitlog.batches(jobs=jobs, batch_size=37, **options)
    try:
        table = scan.read_all()
    except rmqformats.RmqFormatError as exc:
        return scan, None, (type(exc), str(exc))
    return scan, table, None


def assert_walks_equal(root, **options) -> ParallelScan:
    """Every column, the data end, the BLANKs and a strict walk's error: one job and several the same."""
    one, table1, error1 = walk(root, 1, **options)
    many, table2, error2 = walk(root, JOBS, **options)
    assert isinstance(many, ParallelScan)
    assert error2 == error1
    if table1 is not None:
        assert table2.equals(table1)
    assert many.end == one.end
    assert many.blanks == one.blanks
    return many


@pytest.mark.parametrize("options", [{}, {"verify_crc": True}, {"topic": "TopicTest", "from_offset": 300_000},
                                     {"stop": 700_000}, {"start": 262144, "to_offset": 900_000}])
def test_batches_equal_one_job(version, options):
    scan = assert_walks_equal(store_path(version), **options)
    assert scan.ranges_used >= 3  # ranges decoded by the workers were used, not walked again here


def test_a_small_store_is_walked_serially(monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", str(1 << 30))
    scan = assert_walks_equal(store_path(VERSIONS[-1]))
    assert scan.ranges_used == 0


def test_jobs_must_be_positive():
    log = rmqformats.open_store(store_path(VERSIONS[-1])).commitlog
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="jobs"):
            log.batches(jobs=bad)


def cli_outputs(capfdbinary, root: Path, out: Path, jobs: int) -> dict[str, object]:
    """What each command that walks the commit log writes, with ``--jobs jobs``."""
    got: dict[str, object] = {}
    for name, argv in (("messages", ["messages", root, "--format", "jsonl"]),
                       ("inspect", ["inspect", root, "--format", "jsonl"]),
                       ("check", ["check", root, "--format", "jsonl"]),
                       ("dump", ["dump", *sorted(Path(root, "commitlog").iterdir()), "--format", "jsonl"]),
                       ("dump summary", ["dump", *sorted(Path(root, "commitlog").iterdir()), "--summary"])):
        got[name] = run(capfdbinary, *argv, "--jobs", jobs)
    for fmt in ("jsonl", "csv"):
        target = out / f"export-{jobs}.{fmt}"
        code, _, err = run(capfdbinary, "export", root, "--to", fmt, target, "--jobs", jobs)
        got[fmt] = (code, target.read_bytes() if target.exists() else None, err)
    folder = out / f"export-{jobs}"
    code, _, err = run(capfdbinary, "export", root, "--to", "parquet", folder, "--jobs", jobs)
    # Files are named after their segments: read in that order, the rows are in commit-log order.
    got["parquet"] = (code, pq.read_table(folder) if code in (0, 3) else None, err)
    return got


def assert_cli_equal(capfdbinary, root: Path, tmp: Path) -> None:
    one = cli_outputs(capfdbinary, root, tmp, 1)
    many = cli_outputs(capfdbinary, root, tmp, JOBS)
    for name in one:
        code1, out1, err1 = one[name]
        code2, out2, err2 = many[name]
        assert code2 == code1, name
        if isinstance(out1, pa.Table):
            assert out2.equals(out1), name
        else:
            assert out2 == out1, name
        # stderr names the output file, which differs by the jobs in its name
        assert err2.replace(f"export-{JOBS}".encode(), b"export-1") == err1, name


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_cli_output_equals_one_job(capfdbinary, tmp_path, version):
    assert_cli_equal(capfdbinary, store_path(version), tmp_path)
    # The workers write each segment's Parquet files as the reader would: the same files, byte for byte.
    for jobs in (1, JOBS):
        for extra in ([], ["--partition-by", "topic"]):
            out = tmp_path / f"p{jobs}{len(extra)}"
            assert run(capfdbinary, "export", store_path(version), "--to", "parquet", out, "--jobs", jobs,
                       *extra)[0] == 0
    assert folder_bytes(tmp_path / f"p{JOBS}0") == folder_bytes(tmp_path / "p10")
    assert folder_bytes(tmp_path / f"p{JOBS}2") == folder_bytes(tmp_path / "p12")
    assert len(folder_bytes(tmp_path / "p12")) > 2
    code, out, _ = run(capfdbinary, "messages", store_path(version), "--format", "jsonl", "--threads", JOBS)
    assert code == 0 and out == run(capfdbinary, "messages", store_path(version), "--format", "jsonl",
                                    "--jobs", 1)[1]


# -- damaged copies ------------------------------------------------------------------------------

_SEGMENTS = sorted(os.listdir(store_path(VERSIONS[-1]) / "commitlog"))
_SEGMENT_SIZE = 256 << 10

damage = st.lists(st.tuples(st.sampled_from(["cut", "zero", "flip"]), st.integers(0, len(_SEGMENTS) - 1),
                            st.integers(0, _SEGMENT_SIZE - 1), st.integers(1, 5000)), min_size=1, max_size=3)


def damaged_copy(tmp: Path, version: str, edits) -> Path:
    root = tmp / "store"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(store_path(version), root)
    for how, seg, pos, length in edits:
        damage_file(root / "commitlog" / _SEGMENTS[seg], how, pos, length)
    return root


def damage_file(path: Path, how: str, pos: int, length: int) -> None:
    """Cut the file at ``pos``, zero ``length`` bytes there, or flip bit ``length % 8`` of its byte there
    (``pos`` past the end: at the end)."""
    size = path.stat().st_size
    pos = min(pos, size)
    with open(path, "r+b") as f:
        if how == "cut":
            f.truncate(pos)
        elif how == "zero":
            f.seek(pos)
            f.write(bytes(min(length, size - pos)))
        elif pos < size:
            f.seek(pos)
            byte = f.read(1)[0]
            f.seek(pos)
            f.write(bytes([byte ^ (1 << (length % 8))]))


# Not shrunk: an example takes seconds, and the failing one is printed as it was found.
@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from(VERSIONS), edits=damage)
def test_damaged_store_equals_one_job(tmp_path_factory, version, edits):
    root = damaged_copy(tmp_path_factory.mktemp("damaged"), version, edits)
    for options in ({}, {"verify_crc": True}, {"strict": True}):
        assert_walks_equal(root, **options)


@settings(max_examples=max(1, EXAMPLES // 4), deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from(VERSIONS), edits=damage)
def test_damaged_store_cli_equals_one_job(capfdbinary, tmp_path_factory, version, edits):
    tmp = tmp_path_factory.mktemp("damaged")
    assert_cli_equal(capfdbinary, damaged_copy(tmp, version, edits), tmp)


@pytest.mark.parametrize("edits", [[("zero", 2, 0x1234, 4)], [("cut", 1, 100_000, 1)], [("flip", 0, 0x2000, 3)],
                                   [("flip", 3, 50_000, 0), ("zero", 4, 10, 200_000)]])
def test_damage_in_the_middle_of_a_range(tmp_path, capfdbinary, edits):
    """Fixed examples: damage inside a segment, a cut segment, a flipped header byte, a zeroed tail."""
    root = damaged_copy(tmp_path, VERSIONS[-1], edits)
    for options in ({}, {"verify_crc": True}, {"strict": True}):
        assert_walks_equal(root, **options)
    assert_cli_equal(capfdbinary, root, tmp_path)


def test_other_walking_commands_equal_one_job(capfdbinary, tmp_path):
    """lag, preflight, pending, rebuild and report walk the commit log too: the same output with workers."""
    import re

    root = store_path(VERSIONS[-1])
    got = {}
    for jobs in (1, JOBS):
        out = {"lag": run(capfdbinary, "lag", root, "--format", "jsonl", "--jobs", jobs),
               "preflight": run(capfdbinary, "preflight", root, "--format", "json", "--jobs", jobs),
               "pending": run(capfdbinary, "pending", root, "--format", "json", "--jobs", jobs)}
        code, text, _ = run(capfdbinary, "rebuild", root, "--out", tmp_path / f"rebuilt{jobs}", "--format", "json",
                            "--jobs", jobs)
        out["rebuild"] = (code, re.sub(rb'"seconds": [0-9.]+', b"", text.replace(f"rebuilt{jobs}".encode(), b"R")),
                          folder_bytes(tmp_path / f"rebuilt{jobs}"))
        code, _, _ = run(capfdbinary, "report", root, "-o", tmp_path / f"report{jobs}.html", "--jobs", jobs)
        page = (tmp_path / f"report{jobs}.html").read_bytes()
        out["report"] = (code, re.sub(rb"Made by rmqformats [^ ]+ at [0-9T:+-]+", b"", page))
        got[jobs] = out
    assert got[JOBS] == got[1]
    assert got[1]["rebuild"][0] == 0 and len(got[1]["rebuild"][2]) > 10
    pending = json.loads(got[1]["pending"][1])
    assert got[1]["pending"][0] == 0 and pending["counts"] and pending["lastStoreTime"]


def test_a_stop_handed_back_by_a_worker_is_the_walk_s_own():
    """A worker hands its stop back as plain values; the reader's stop has the same end and the same error."""
    from rmqformats.walk.scan import _Stop
    from rmqformats.errors import BadMagicError
    from rmqformats.segments import DataEnd, EndReason
    end = DataEnd(4096, EndReason.BAD_MAGIC, "/store/commitlog/00000000000000000000", 4096, "bad magic 0x00000007")
    stop = _Stop(end, BadMagicError(end.segment, 4096, "bad magic 0x00000007"))
    back = _Stop.from_outcome(stop.outcome())
    assert back.end == end and type(back.error) is BadMagicError
    assert (back.error.path, back.error.offset, back.error.reason) == (end.segment, 4096, "bad magic 0x00000007")
    clean = _Stop.from_outcome(_Stop(DataEnd(0, EndReason.ZERO_TAIL, None, 0)).outcome())
    assert clean.error is None and clean.end.reason is EndReason.ZERO_TAIL


def test_inspect_sums_in_the_workers(capfdbinary, monkeypatch):
    """``inspect`` with workers has them sum their ranges (the reader merges what they hand back) and
    prints what one job prints."""
    from rmqformats.cli import inspect as command

    merged = []
    original = command.LogTally.merge
    monkeypatch.setattr(command.LogTally, "merge", lambda self, later: (merged.append(1), original(self, later)))
    root = store_path(VERSIONS[-1])
    one = run(capfdbinary, "inspect", root, "--format", "jsonl", "--jobs", 1)
    assert not merged
    many = run(capfdbinary, "inspect", root, "--format", "jsonl", "--jobs", JOBS)
    assert many == one and len(merged) > 10


def test_check_with_workers_keeps_the_findings_limit(store_copy, monkeypatch):
    """The check's batch work in the workers: findings, counts and their limit as with one job.

    Units zeroed in every file queue and an index file removed give findings from many ranges; each
    limit must keep the same first findings, in the same order, and count the rest, whichever process
    compared the units and wherever the batches end.
    """
    from rmqformats.recovery import crosscheck

    for folder in sorted((store_copy / "consumequeue").glob("*/*")):
        for path in sorted(folder.iterdir())[:1]:
            with open(path, "r+b") as f:
                for unit in range(1, path.stat().st_size // 20, 2):
                    f.seek(unit * 20)
                    f.write(bytes(20))
    index = sorted((store_copy / "index").iterdir())
    if index:
        os.remove(index[0])
    merged = []
    real_merge = crosscheck._CheckFold.merge
    monkeypatch.setattr(crosscheck._CheckFold, "merge",
                        lambda self, later: (merged.append(len(later.digests)), real_merge(self, later))[1])

    def check(jobs: int, limit: int, **options):
        store = rmqformats.open_store(store_copy)
        store.commitlog.jobs = jobs
        r = crosscheck.cross_check(store, max_findings=limit, **options)
        return r, list(r.counts.items()), list(r.verified), list(r.behind)

    import glob
    import tempfile
    left = os.path.join(tempfile.gettempdir(), "rmqformats-check-*")
    before = set(glob.glob(left))
    for limit in (1, 5, 40, 10_000):
        one = check(1, limit)
        assert check(1, limit, batch_size=37) == one
        assert not merged
        assert check(JOBS, limit) == one
        assert sum(merged) >= 3  # digests made by the workers were applied
        merged.clear()
        assert len(one[0].findings) == min(limit, sum(one[0].counts.values()))
        assert one[0].counts[crosscheck.Kind.MISSING_UNIT] > 40
    assert set(glob.glob(left)) == before  # the constants the workers read are removed with the walk


_QUEUE_FILES = sorted(str(p.relative_to(store_path(VERSIONS[-1])))
                      for p in (store_path(VERSIONS[-1]) / "consumequeue").glob("*/*/*"))
# (file, first unit, units) zeroed
queue_damage = st.lists(st.tuples(st.integers(0, len(_QUEUE_FILES) - 1), st.integers(0, 200), st.integers(1, 20)),
                        min_size=1, max_size=4)


@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=queue_damage, limit=st.sampled_from([1, 3, 1000]), drop_index=st.booleans())
def test_damaged_queues_check_equals_one_job(capfdbinary, tmp_path_factory, edits, limit, drop_index):
    """Consume-queue units zeroed (and an index file gone): ``check`` prints the same with workers."""
    root = tmp_path_factory.mktemp("queues") / "store"
    shutil.copytree(store_path(VERSIONS[-1]), root)
    for which, unit, units in edits:
        path = root / _QUEUE_FILES[which]
        size = path.stat().st_size
        pos = min(unit * 20, size)
        with open(path, "r+b") as f:
            f.seek(pos)
            f.write(bytes(min(units * 20, size - pos)))
    if drop_index:
        os.remove(sorted((root / "index").iterdir())[0])
    argv = ["check", root, "--format", "jsonl", "--max-problems", limit]
    one = run(capfdbinary, *argv, "--jobs", 1)
    assert run(capfdbinary, *argv, "--jobs", JOBS) == one
    assert b'"record": "check"' in one[1]
