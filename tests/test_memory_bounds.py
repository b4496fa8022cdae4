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
    out = tmp_path / "parquet"
    code, peak = _peak("export", huge_store, "--to", "parquet", out)
    # The Parquet encoder holds a value twice (its page and the compression's output): a 250 MiB body costs
    # 500 MiB there, beside the batch that holds it.
    assert code == 0 and peak < 3 << 29, f"export --to parquet peaked at {peak >> 20} MiB"
    table = pq.read_table(out, columns=["queueOffset", "bodyError"])
    assert table.column("queueOffset").to_pylist() == list(range(COUNT))
    assert table.column("bodyError").null_count == COUNT
