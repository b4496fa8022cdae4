"""Memory bounded by bytes, not counts: batches close at a size of decompressed bodies as well as at their rows.

The large case is twenty zlib bodies of 250 MiB in one segment (each under the
per-body limit; zeros, so the segment stays a few MiB), read by
``messages --format jsonl`` and ``export --to parquet`` in a child process
whose peak resident set is measured once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rmqformats
from rmqformats import synth
from rmqformats.generated.layouts import rocketmq_commitlog as layout

_ZLIB = layout.SYS_FLAG_BITS["is_compressed"][0] | \
    (layout.COMPRESSION_TYPE["zlib"] << layout.SYS_FLAG_BITS["compression_type"][1])
HUGE = 250 << 20
COUNT = 20


def _store(root, bodies: list[bytes]) -> None:
    """A segment of zlib bodies (compressed here once each distinct body, written through the builders)."""
    packed = {}
    specs = []
    for i, body in enumerate(bodies):
        if id(body) not in packed:
            packed[id(body)] = zlib.compress(body)
        specs.append(synth.MessageSpec(topic="TopicHuge", body=packed[id(body)], sys_flag=_ZLIB, queue_offset=i,
                                       properties={"KEYS": f"k{i}"}))
    synth.write_commitlog(root / "commitlog", specs, segment_size=64 << 20)


def test_batches_close_at_their_body_bytes(tmp_path):
    bodies = [bytes([i]) * ((i % 4 + 1) << 20) for i in range(12)]  # 1 to 4 MiB each
    _store(tmp_path, bodies)
    log = rmqformats.open_store(tmp_path).commitlog
    bound = 5 << 20
    batches = list(log.batches(["queueOffset", "body"], max_batch_bytes=bound))
    got = [b for batch in batches for b in batch.column("body").to_pylist()]
    assert got == bodies
    assert len(batches) > 3
    for batch in batches:
        sizes = [len(b) for b in batch.column("body").to_pylist()]
        assert sum(sizes[:-1]) < bound  # it closed at the first body that reached the bound
    assert [b.num_rows for b in log.batches(["body"], max_batch_bytes=1)] == [1] * len(bodies)
    with pytest.raises(ValueError, match="max_batch_bytes"):
        log.batches(max_batch_bytes=0)


_PEAK = textwrap.dedent("""
    import resource, subprocess, sys
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sys.stderr.write(done.stderr.decode())
    print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
""")


def _peak(*argv) -> tuple[int, int]:
    """Exit status and peak resident bytes of the ``rmqformats`` command ``argv`` in a fresh process."""
    run = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-m", "rmqformats", *map(str, argv)],
                         capture_output=True, text=True, timeout=1800)
    code, peak = run.stdout.split()
    assert "Traceback" not in run.stderr, run.stderr
    return int(code), int(peak)


@pytest.fixture(scope="module")
def huge_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("huge-bodies")
    body = bytes(HUGE)
    _store(root, [body] * COUNT)
    assert os.path.getsize(root / "commitlog" / "00000000000000000000") == 64 << 20
    return root


def test_twenty_huge_bodies(huge_store, tmp_path):
    code, peak = _peak("messages", huge_store, "--format", "jsonl")
    assert code == 0 and peak < 1 << 30, f"messages --format jsonl peaked at {peak >> 20} MiB"
    # The table decompresses each body for its bodyBytes (the length as shown): a batch of them at a time.
    code, peak = _peak("messages", huge_store)
    assert code == 0 and peak < 1 << 30, f"messages (table) peaked at {peak >> 20} MiB"
    out = tmp_path / "parquet"
    code, peak = _peak("export", huge_store, "--to", "parquet", out)
    # A body this long goes into a file of version-2 data pages, which the encoder holds once, not twice: the
    # body as read and decompressed, its Arrow array and the encoder's page are about four bodies, with the
    # interpreter and its compiled code beside them (measured 1.02-1.06 GiB); twenty bodies held would be 5 GiB.
    assert code == 0 and peak < 5 << 28, f"export --to parquet peaked at {peak >> 20} MiB"
    code, peak = _peak("export", huge_store, "--to", "csv", tmp_path / "out.csv")
    assert code == 0 and peak < 1 << 30, f"export --to csv peaked at {peak >> 20} MiB"
    assert (tmp_path / "out.csv").stat().st_size > COUNT * HUGE * 4 // 3
    (tmp_path / "out.csv").unlink()
    table = pq.read_table(out, columns=["queueOffset", "bodyError"])
    assert table.column("queueOffset").to_pylist() == list(range(COUNT))
    assert table.column("bodyError").null_count == COUNT


def test_long_rows_are_written_as_the_others(tmp_path, monkeypatch):
    """Rows whose bodies pass the text bound (written a piece at a time) and the Parquet files rolled for a
    body too long for version-1 pages read back exactly as the ordinary export does."""
    from rmqformats import export
    from rmqformats.cli import main
    bodies = [b"short", bytes(range(256)) * 40, b"", b"x" * 70_000, b"tail"]
    specs = [synth.MessageSpec(topic="TopicLong", body=zlib.compress(b) if i % 2 else b,
                               sys_flag=_ZLIB if i % 2 else 0, queue_offset=i, properties={"KEYS": f"k{i}"})
             for i, b in enumerate(bodies)]
    synth.write_commitlog(tmp_path / "store" / "commitlog", specs, segment_size=1 << 20)
    store = tmp_path / "store"

    def run(name: str) -> dict:
        got = {}
        for fmt in ("jsonl", "csv"):
            assert main(["export", str(store), "--to", fmt, str(tmp_path / f"{name}.{fmt}")]) == 0
            got[fmt] = (tmp_path / f"{name}.{fmt}").read_bytes()
        assert main(["export", str(store), "--to", "parquet", str(tmp_path / name)]) == 0
        files = sorted(p.name for p in (tmp_path / name).glob("*.parquet"))
        got["parquet"] = pq.read_table(tmp_path / name).to_pylist()
        return got, files

    plain, plain_files = run("plain")
    monkeypatch.setattr(export, "TEXT_BYTES", 1000)
    monkeypatch.setattr(export, "_B64_PIECE", 300)
    monkeypatch.setattr(export, "PAGE_V1_MAX_VALUE", 1000)
    long, long_files = run("long")
    assert long["jsonl"] == plain["jsonl"] and long["csv"] == plain["csv"]
    assert long["parquet"] == plain["parquet"]
    assert [r["body"] for r in long["parquet"]] == bodies
    assert plain_files == long_files == ["00000000000000000000.parquet"]
    # Row by row into the sink: the first file takes the short bodies with version-1 pages, and the first
    # body over the bound goes on in a second file (with version-2 pages, as does all that follows).
    # (A file's page version is fixed at its first row group: one row a row group here.)
    monkeypatch.setattr(export, "ROW_GROUP_ROWS", 1)
    log = rmqformats.open_store(store).commitlog
    scan = log.batches(["queueOffset", "body", "segment"], max_batch_bytes=1)
    sink = export.ParquetSink(str(tmp_path / "rows"), scan.schema)
    for batch in scan:
        sink.write(batch)
    sink.close()
    assert [os.path.basename(f) for f in sink.files] == ["00000000000000000000.parquet",
                                                         "00000000000000000000-1.parquet"]
    first, second = (pq.read_table(f).column("body").to_pylist() for f in sink.files)
    assert first == bodies[:1] and second == bodies[1:]


def test_config_file_of_many_offsets(tmp_path):
    """``config --file`` on a large ``consumerOffset.json`` writes its model a piece at a time, equal to
    ``json.dumps`` of it, within a few times the file's size above the command's own footprint."""
    import shutil

    from conftest import store_path
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    path = root / "config" / "consumerOffset.json"
    _, small = _peak("config", root, "--file", "consumerOffset.json")
    table = {f"Topic{t}@Group{g}": {str(q): q * 1000 + g for q in range(16)} for g in range(1500) for t in range(50)}
    path.write_text(json.dumps({"offsetTable": table}), encoding="utf-8")
    size = path.stat().st_size
    assert size > 12 << 20
    for fmt in ("table", "jsonl"):
        code, peak = _peak("config", root, "--file", "consumerOffset.json", "--format", fmt)
        assert code == 0 and peak - small < 4 * size, f"config --file ({fmt}) took {(peak - small) >> 20} MiB"
    run = subprocess.run([sys.executable, "-m", "rmqformats", "config", str(root), "--file", "consumerOffset.json"],
                         capture_output=True, text=True, timeout=600)
    assert json.loads(run.stdout)["model"]["offsetTable"] == table


@pytest.mark.parametrize("range_size", [1 << 12, 1 << 16, 1 << 20])
def test_threads_hold_a_budget_each(tmp_path, range_size):
    """Range jobs stop at their bodies' byte budget and the scan goes on from the next record in order:
    the rows equal the serial scan's, with filters too, and no batch passes the bound by more than a body."""
    bodies = [bytes([i % 251]) * ((i % 7 + 1) * 60_000) for i in range(90)]
    specs = [synth.MessageSpec(topic=f"Topic{i % 3}", body=zlib.compress(b), sys_flag=_ZLIB, queue_offset=i,
                               properties={"KEYS": f"k{i}"}) for i, b in enumerate(bodies)]
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 14)
    log = rmqformats.open_store(tmp_path).commitlog
    assert len(log.segments) > 1
    bound = 200_000
    for filters in ({}, {"topic": "Topic1"}):
        serial = log.to_arrow(["commitLogOffset", "body"], **filters)
        got = []
        for batch in log.batches(["commitLogOffset", "body"], threads=3, range_size=range_size,
                                 max_batch_bytes=bound, **filters):
            sizes = [len(b) for b in batch.column("body").to_pylist()]
            assert sum(sizes[:-1]) < bound
            got.append(batch)
        assert pa.Table.from_batches(got).equals(serial)
        assert len(serial) == (90 if not filters else 30)


_LAG_SMALL_RUNS = textwrap.dedent("""
    import sys
    import rmqformats.config.offsetorder as offsetorder
    offsetorder.RUN_BYTES = 4 << 20  # runs written out from a few MiB on, so both files below spill
    from rmqformats.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_lag_memory_does_not_grow_with_the_keys(tmp_path):
    """``lag --format jsonl`` over a ``consumerOffset.json`` of 40,000 and of 320,000 keys, each of its own
    topic (a name per key, the case where names cost most): the peak resident set of the larger stays within
    40 MiB of the smaller's (rows held in memory made it 88 MiB more; the runs, written out and merged, about
    14 MiB, allocator pages that level off), not growing with the keys."""
    peaks = {}
    for keys in (40_000, 320_000):
        root = tmp_path / f"store-{keys}"
        (root / "config").mkdir(parents=True)
        (root / "commitlog").mkdir()
        order = list(range(keys))
        order.reverse()  # not in the order of the rows
        (root / "config" / "consumerOffset.json").write_text(
            '{"offsetTable":{' + ",".join(f'"Topic_{k:09d}@Group_{k % 7}":{{0:{k}}}' for k in order) + "}}",
            encoding="utf-8")
        run = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-c", _LAG_SMALL_RUNS, "lag", str(root),
                              "--format", "jsonl", "--no-store-time", "--no-behind"],
                             capture_output=True, text=True, timeout=1800)
        code, peak = map(int, run.stdout.split())
        assert code == 1 and "Traceback" not in run.stderr, run.stderr  # 1: no queue on disk, every row flagged
        peaks[keys] = peak
    assert peaks[320_000] - peaks[40_000] < 40 << 20, {k: v >> 20 for k, v in peaks.items()}
