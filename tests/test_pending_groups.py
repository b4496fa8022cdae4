"""The groupings of ``pending`` (latest timer copies, open transactions, dead letters, delay levels) against
Arrow's own group-by and joins, on random tables with repeats, ties and nulls.

``pending`` groups with numpy so that no command loads Arrow's query engine (and pandas with it); the
references below are the group-bys and joins it used before, which this test may load.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rmqformats.systopics import bodies
from rmqformats.systopics import pending as P

TS = P.TIMESTAMP


def _column(rng: random.Random, n: int, values, nulls: float = 0.1) -> list:
    return [None if rng.random() < nulls else rng.choice(values) for _ in range(n)]


def _reference_timers(parts):
    t = pa.concat_tables(parts)
    cancels = t.filter(pc.equal(t["kind"], "timerCancel"))
    msgs = t.filter(pc.equal(t["kind"], "timer"))
    key = pc.binary_join_element_wise(msgs["realTopic"], msgs["uniqKey"], "+")
    cancelled = pc.is_in(key, cancels["timerCancelsKey"])
    msgs = msgs.append_column("state", pc.if_else(pc.fill_null(cancelled, False), "cancelled", "waiting"))
    latest = msgs.group_by("uniqKey", use_threads=False).aggregate([("queueOffset", "max")])
    msgs = msgs.join(latest.rename_columns(["uniqKey", "queueOffset"]), ["uniqKey", "queueOffset"],
                     join_type="left semi")
    return msgs.select(P.TIMER_SCHEMA.names).cast(P.TIMER_SCHEMA).sort_by([("queueOffset", "ascending"),
                                                                           ("commitLogOffset", "ascending")])


def _reference_transactions(halves, ops, prepared, closing, last_store):
    rows = []
    h = pa.concat_tables(halves)
    h = h.append_column("halfQueueId", pc.cast(h["queueId"], pa.int32()))
    closed_ops = pa.concat_tables(ops)
    closed = h.join(closed_ops.select(["opQueueId", "halfQueueOffset"]), ["halfQueueId", "queueOffset"],
                    ["opQueueId", "halfQueueOffset"], join_type="left semi")
    h = h.join(closed.select(["transactionId"]), "transactionId", join_type="left anti")
    if h.num_rows:
        agg = h.group_by(["transactionId"], use_threads=False).aggregate(
            [("queueOffset", "max"), ("storeTimestamp", "min"), ("transactionCheckTimes", "max")])
        agg = agg.rename_columns(["transactionId", "halfQueueOffset", "firstStoreTime", "checkTimes"])
        joined = h.join(agg, ["transactionId"], use_threads=False)
        latest = joined.filter(pc.equal(joined["queueOffset"], joined["halfQueueOffset"]))
        rows.append(pa.table({
            "transactionId": latest["transactionId"], "source": pa.array(["half"] * latest.num_rows),
            "realTopic": latest["realTopic"], "realQueueId": latest["realQueueId"],
            "halfQueueId": latest["halfQueueId"], "halfQueueOffset": latest["halfQueueOffset"],
            "commitLogOffset": latest["commitLogOffset"], "firstStoreTime": latest["firstStoreTime"],
            "checkTimes": latest["checkTimes"], "producerGroup": latest["producerGroup"]}))
    p = pa.concat_tables(prepared)
    ends = pa.concat_tables(closing).rename_columns(["commitLogOffset"])
    p = p.join(ends, "commitLogOffset", join_type="left anti")
    if p.num_rows:
        n = p.num_rows
        rows.append(pa.table({
            "transactionId": p["transactionId"], "source": pa.array(["prepared"] * n),
            "realTopic": p["topic"], "realQueueId": pc.cast(p["queueId"], pa.int32()),
            "halfQueueId": pa.nulls(n, pa.int32()), "halfQueueOffset": pa.nulls(n, pa.int64()),
            "commitLogOffset": p["commitLogOffset"], "firstStoreTime": p["storeTimestamp"],
            "checkTimes": pa.nulls(n, pa.int32()), "producerGroup": p["producerGroup"]}))
    if not rows:
        return P.TRANSACTION_SCHEMA.empty_table()
    t = pa.concat_tables([r.cast(pa.schema([f for f in P.TRANSACTION_SCHEMA if f.name != "ageMs"])) for r in rows])
    t = t.append_column("ageMs", pc.subtract(pa.scalar(last_store, pa.int64()), pc.cast(t["firstStoreTime"],
                                                                                       pa.int64())))
    return t.select(P.TRANSACTION_SCHEMA.names).cast(P.TRANSACTION_SCHEMA).sort_by("commitLogOffset")


def _reference_dead_letters(parts):
    agg = pa.concat_tables(parts).group_by(["originTopic", "group"], use_threads=False).aggregate(
        [("queueOffset", "count"), ("retryCount", "max"), ("storeTimestamp", "min"), ("storeTimestamp", "max")])
    agg = agg.select(["originTopic", "group", "queueOffset_count", "retryCount_max", "storeTimestamp_min",
                      "storeTimestamp_max"])
    return agg.rename_columns(P.DEAD_LETTER_SCHEMA.names).cast(P.DEAD_LETTER_SCHEMA).sort_by(
        [("messages", "descending"), ("originTopic", "ascending"), ("group", "ascending")])


def _split(rng: random.Random, table: pa.Table) -> list[pa.Table]:
    """``table`` as the batches of a walk give it: in a few parts."""
    cuts = sorted(rng.sample(range(table.num_rows + 1), min(3, table.num_rows + 1)))
    bounds = [0, *cuts, table.num_rows]
    return [table.slice(a, b - a) for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("seed", range(40))
def test_timers_keep_each_uniq_key_s_latest_copy(seed):
    rng = random.Random(seed)
    n = rng.randrange(1, 120)
    keys = [f"K{i}" for i in range(rng.randrange(1, 30))]
    # commit-log offsets are unique in a walk; queue offsets repeat to make ties
    t = pa.table({
        "queueOffset": pa.array(_column(rng, n, range(40), 0.02), pa.int64()),
        "realTopic": pa.array(_column(rng, n, ["A", "B"], 0.05), pa.string()),
        "realQueueId": pa.array(_column(rng, n, range(4)), pa.int32()),
        "dueTime": pa.array(_column(rng, n, range(10**12, 10**12 + 50)), pa.int64()).cast(TS),
        "uniqKey": pa.array(_column(rng, n, keys, 0.15), pa.string()),
        "kind": pa.array([rng.choice(["timer", "timer", "timerCancel"]) for _ in range(n)], pa.string()),
        "timerCancelsKey": pa.array(_column(rng, n, [f"A+{k}" for k in keys] + ["B+K0"], 0.3), pa.string()),
        "commitLogOffset": pa.array(rng.sample(range(10 * n), n), pa.int64())})
    parts = _split(rng, t)
    got = P._timers(parts)
    assert got.schema == P.TIMER_SCHEMA
    assert got.sort_by([("queueOffset", "ascending"), ("commitLogOffset", "ascending")]).equals(
        _reference_timers(parts))


@pytest.mark.parametrize("seed", range(40))
def test_open_transactions_as_the_joins_found_them(seed):
    rng = random.Random(seed)
    n = rng.randrange(1, 150)
    ids = [f"T{i}" for i in range(rng.randrange(1, 40))]
    halves = pa.table({
        "transactionId": pa.array(_column(rng, n, ids, 0.1), pa.string()),
        "realTopic": pa.array(_column(rng, n, ["A", "B"]), pa.string()),
        "realQueueId": pa.array(_column(rng, n, range(3)), pa.int32()),
        "queueId": pa.array(_column(rng, n, range(3), 0.02), pa.int32()),
        "queueOffset": pa.array(_column(rng, n, range(60), 0.02), pa.int64()),
        "commitLogOffset": pa.array(rng.sample(range(10 * n), n), pa.int64()),
        "storeTimestamp": pa.array(_column(rng, n, range(10**12, 10**12 + 500), 0.05), pa.int64()).cast(TS),
        "transactionCheckTimes": pa.array(_column(rng, n, range(6), 0.4), pa.int32()),
        "producerGroup": pa.array(_column(rng, n, ["G1", "G2"]), pa.string())})
    m = rng.randrange(0, 60)
    ops = pa.table({"opQueueId": pa.array(_column(rng, m, range(3), 0.05), pa.int32()),
                    "halfQueueOffset": pa.array(_column(rng, m, range(60), 0.05), pa.int64()),
                    "opCommitLogOffset": pa.array(range(m), pa.int64())}, schema=bodies.OP_SCHEMA)
    k = rng.randrange(0, 40)
    prepared = pa.table({
        "transactionId": pa.array(_column(rng, k, ids), pa.string()),
        "topic": pa.array(_column(rng, k, ["A", "B"]), pa.string()),
        "queueId": pa.array(_column(rng, k, range(3)), pa.int32()),
        "commitLogOffset": pa.array(rng.sample(range(10 * n, 20 * n), k), pa.int64()),
        "storeTimestamp": pa.array(_column(rng, k, range(10**12, 10**12 + 500)), pa.int64()).cast(TS),
        "producerGroup": pa.array(_column(rng, k, ["G1", "G2"]), pa.string())})
    closing = pa.table({"preparedTransactionOffset": pa.array(
        _column(rng, rng.randrange(0, 30), prepared["commitLogOffset"].to_pylist() + [1, 2], 0.1), pa.int64())})
    parts = [_split(rng, x) for x in (halves, ops, prepared, closing)]
    got = P._transactions(*parts, 10**12 + 1000)
    assert got.equals(_reference_transactions(*parts, 10**12 + 1000))


@pytest.mark.parametrize("seed", range(30))
def test_dead_letters_and_delay_levels_counted_as_the_group_by_counted_them(seed):
    rng = random.Random(seed)
    n = rng.randrange(1, 200)
    dl = pa.table({
        "originTopic": pa.array(_column(rng, n, ["A", "B", "C"]), pa.string()),
        "group": pa.array(_column(rng, n, ["G1", "G2"]), pa.string()),
        "retryCount": pa.array(_column(rng, n, range(17), 0.3), pa.int32()),
        "storeTimestamp": pa.array(rng.sample(range(10**12, 10**12 + 10 * n), n), pa.int64()).cast(TS),
        "queueOffset": pa.array(range(n), pa.int64())})
    parts = _split(rng, dl)
    walked = [P._dead_letter_counts(p) for p in parts if p.num_rows]
    got = P._dead_letters(walked).sort_by([("messages", "descending"), ("originTopic", "ascending"),
                                           ("group", "ascending")])
    assert got.equals(_reference_dead_letters(parts))
    sched = pa.table({"delayLevel": pa.array(_column(rng, n, range(1, 6)), pa.int32()),
                      "queueOffset": pa.array(_column(rng, n, range(50), 0.05), pa.int64()),
                      "dueTime": pa.array(_column(rng, n, range(10**12, 10**12 + 99), 0.1), pa.int64()).cast(TS)})
    result = P.Pending(last_store_time_ms=None, delay_offsets={}, has_delay_offsets=False, timer_checkpoint=None,
                       rocksdb_timer_checkpoint=None, rocksdb_transactions=False, transaction_check_offsets={},
                       scheduled=sched, timers=P.TIMER_SCHEMA.empty_table(),
                       transactions=P.TRANSACTION_SCHEMA.empty_table(), pop_checkpoints=P.POP_SCHEMA.empty_table(),
                       dead_letters=P.DEAD_LETTER_SCHEMA.empty_table())
    reference = (sched.group_by("delayLevel").aggregate([("queueOffset", "count"), ("dueTime", "min"),
                                                         ("dueTime", "max")])
                 .rename_columns(["delayLevel", "messages", "firstDue", "lastDue"]).sort_by("delayLevel"))
    assert result.scheduled_by_level().equals(reference)
