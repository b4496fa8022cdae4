"""Damaged DLedger data files and tiered index files: only typed errors or a documented end, never another exception."""

from __future__ import annotations

import os
import random

import rmqformats
from rmqformats.errors import RmqFormatError
from rmqformats.tiered import TieredIndexFile

from layoutstores import dledger_store, tiered_store


def _flip(path, rng, n):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        for _ in range(n):
            at = rng.randrange(size)
            f.seek(at)
            f.write(bytes([rng.randrange(256)]) * rng.choice((1, 4, 8)))


def test_damaged_dledger_files(tmp_path):
    rng = random.Random(20261122)
    root, placed, _ = dledger_store("rocketmq-5.1.4", tmp_path / "store")
    data = sorted((root / "dledger-n0" / "data").iterdir())
    pristine = {p: p.read_bytes() for p in data}
    for trial in range(40):
        for p, b in pristine.items():
            p.write_bytes(b)
        target = rng.choice(data)
        if rng.random() < 0.2:
            os.truncate(target, rng.randrange(os.path.getsize(target)))
        else:
            _flip(target, rng, rng.randrange(1, 6))
        log = rmqformats.open_store(root).commitlog
        scan = log.scan(verify_crc=rng.random() < 0.5)
        msgs = list(scan)
        assert scan.end is not None
        # Everything handed out is a whole message whose offset is an entry's position + 48.
        assert {m.commitlog_offset for m in msgs} <= {e.message_offset for e in placed}
        for e in rng.sample(placed, 5):
            try:
                log.read(e.message_offset)
            except RmqFormatError:
                pass
        try:
            list(log.scan(strict=True))
        except RmqFormatError:
            pass


import pytest


@pytest.mark.parametrize("legacy", [False, True], ids=["5.2+", "5.1.x"])
def test_damaged_tiered_index_files(tmp_path, legacy):
    rng = random.Random(7)
    root, base, _ = tiered_store("rocketmq-4.9.7", tmp_path, legacy=legacy)
    files = [p for p in (root / "tiered_index_file").rglob("*") if p.is_file()]
    pristine = {p: p.read_bytes() for p in files}
    keys = [("TopicTest", f"key-{i}") for i in range(10)] + [("TopicTest", "order-0")]
    for trial in range(60):
        for p, b in pristine.items():
            p.write_bytes(b)
        target = rng.choice(files)
        _flip(target, rng, rng.randrange(1, 10))
        if rng.random() < 0.1:
            os.truncate(target, rng.randrange(os.path.getsize(target)))
        try:
            compacted = "compacting" in str(target) or target.name == "2222"
            f = TieredIndexFile(target, num_hash_slots=None if compacted else 256,
                                num_items=None if compacted else 1024, compacted=compacted)
            for topic, key in keys:
                f.lookup(topic, key)
            for _ in f.items():
                pass
        except RmqFormatError as exc:
            assert exc.path == str(target)
