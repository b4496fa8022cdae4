"""Hostile bytes: random damage never gives an untyped exception, a hang or a runaway read."""

from __future__ import annotations

import os
import random

import pytest

import rmqformats
from rmqformats import reference

from conftest import truth_records

ROUNDS = 60


def _damage(rng: random.Random, data: bytearray, records: list[dict]) -> None:
    """Overwrite 1-8 bytes, mostly inside record headers and length fields."""
    rec = rng.choice(records)
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.6:
            at = rec["fileOffset"] + rng.randrange(min(rec["totalSize"], 100))
        else:
            at = rng.randrange(len(data))
        data[at] = rng.randrange(256)


@pytest.mark.parametrize("seed", range(3))
def test_random_damage(tmp_path, version, seed):
    rng = random.Random(f"{version}-{seed}")
    records = [t for t in truth_records(version) if t["file"] == "00000000000000000000"]
    src = os.path.join(os.path.dirname(__file__), "fixtures", version, "store", "commitlog",
                       "00000000000000000000")
    pristine = open(src, "rb").read()
    seg = tmp_path / "commitlog" / "00000000000000000000"
    seg.parent.mkdir()
    for _ in range(ROUNDS):
        data = bytearray(pristine)
        _damage(rng, data, records)
        if rng.random() < 0.3:
            data = data[: rng.randrange(len(data))]
        seg.write_bytes(bytes(data))
        log = rmqformats.open_store(seg).commitlog
        scan = log.scan(verify_crc=rng.random() < 0.5)
        for msg in scan:
            assert msg.store_size <= len(data)
            try:
                msg.body
            except rmqformats.DecompressionError:
                pass
        assert scan.end is not None and 0 <= scan.end.file_offset <= len(data)
        for pos in (0, rng.randrange(max(1, len(data)))):
            try:
                log.read(pos)
            except rmqformats.RmqFormatError:
                pass
        for reader in (reference.kaitai_records, reference.construct_records):
            try:
                for _pos, _rec in reader(seg):
                    pass
            except rmqformats.RecordError:
                pass
