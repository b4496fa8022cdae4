"""Arrow helpers of ``rmqformats.frames`` against what pyarrow's own functions give."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rmqformats.frames import map_key_rows

KEYS = ["INNER_MULTI_DISPATCH", "INNER_MULTI_DISPATCX", "INNER_MULTI_QUEUE_OFFSET", "DELAY", "DELAX", "TAGS", "",
        "城市", "A"]


def random_maps(rng: random.Random, n: int) -> pa.MapArray:
    """``n`` maps of a few of :data:`KEYS` (a key repeated now and then), some null, some empty."""
    rows = []
    for _ in range(n):
        if rng.random() < 0.1:
            rows.append(None)
            continue
        rows.append([(rng.choice(KEYS), rng.choice(["v", "", "1,2", "значение"])) for _ in range(rng.randint(0, 4))])
    return pa.array(rows, pa.map_(pa.string(), pa.string()))


def test_map_key_rows_is_map_lookup():
    """For every key, slice and choice of rows: the rows ``map_lookup(..., "first")`` finds, with its values."""
    rng = random.Random(20261207)
    for _ in range(40):
        maps = random_maps(rng, rng.randint(0, 30))
        start = rng.randint(0, len(maps))
        for arr in (maps, maps.slice(start), maps.slice(start, rng.randint(0, len(maps) - start))):
            for key in KEYS + ["ABSENT"]:
                want = {r: v for r, v in enumerate(pc.map_lookup(arr, pa.scalar(key), "first").to_pylist())
                        if v is not None}
                assert map_key_rows(arr, key) == want
                rows = np.array(sorted(rng.sample(range(len(arr)), rng.randint(0, len(arr)))), np.int64)
                assert map_key_rows(arr, key, rows) == {r: v for r, v in want.items() if r in set(rows.tolist())}


def test_map_key_rows_of_a_null_map_over_pairs():
    """A null map whose offsets still cover pairs holds no key (as ``map_lookup`` reads it)."""
    maps = pa.MapArray.from_arrays(pa.array([0, 1, 2], pa.int32()), pa.array(["DELAY", "DELAY"]),
                                   pa.array(["1", "2"]), mask=pa.array([True, False]))
    assert pc.map_lookup(maps, pa.scalar("DELAY"), "first").to_pylist() == [None, "2"]
    assert map_key_rows(maps, "DELAY") == {1: "2"}


def test_map_key_rows_of_pairs_not_laid_out_as_the_walk_lays_them():
    """Pairs whose struct starts at an offset (no map the walk builds): ``map_lookup`` itself answers."""
    kind = pa.map_(pa.string(), pa.string())
    pairs = pa.StructArray.from_arrays([pa.array(["X", "DELAY", "A", "DELAY"]), pa.array(["0", "1", "2", "3"])],
                                       fields=[kind.key_field, kind.item_field]).slice(1)
    maps = pa.Array.from_buffers(kind, 2, [None, pa.py_buffer(np.array([0, 2, 3], np.int32))], children=[pairs])
    assert maps.values.offset == 1
    want = {r: v for r, v in enumerate(pc.map_lookup(maps, pa.scalar("DELAY"), "first").to_pylist()) if v is not None}
    assert want and map_key_rows(maps, "DELAY") == want
    assert map_key_rows(maps, "DELAY", np.array([1], np.int64)) == {r: v for r, v in want.items() if r == 1}
