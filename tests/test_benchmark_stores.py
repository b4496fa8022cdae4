"""The benchmarks' store generator still builds stores the readers read as its manifest says.

``benchmarks/storegen.py`` takes every field position from the generated
layout tables; a renamed table breaks it, and no other test runs it. A small
log (a few MiB, in 1 MiB segments) is generated and read back: the message
count, the sum of the commit-log offsets and the data end must be the
manifest's, and its consume queues must hold one unit per message.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import rmqformats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
import storegen  # noqa: E402  (the benchmarks folder is no package)


def test_a_small_generated_store_reads_as_its_manifest(tmp_path):
    root, manifest = storegen.ensure_store(str(tmp_path), "mixed", 3, 1, 7, span_hours=1)
    store = rmqformats.open_store(root)
    scan = store.commitlog.batches(["commitLogOffset"])
    offsets = np.concatenate([b.column("commitLogOffset").to_numpy() for b in scan])
    assert len(offsets) == manifest["messages"] == manifest["checksum"]["messages"]
    assert int(offsets.sum()) == manifest["checksum"]["offsets"]
    assert scan.end.offset == manifest["data_end"]
    units = sum(q.count for q in store.queues())
    assert units == manifest["messages"]
