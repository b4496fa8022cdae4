"""The Python API's arguments: times in any of the three forms, lists where a list makes sense,
clear type errors otherwise, and columns in the order asked."""

from __future__ import annotations

import inspect
from datetime import datetime, timedelta, timezone

import pytest

import rmqformats
from rmqformats.message import to_millis

from conftest import store_path, truth_records

VERSION = "rocketmq-5.1.4"


@pytest.fixture(scope="module")
def store():
    return rmqformats.open_store(store_path(VERSION))


def test_one_time_parser():
    ms = 1795254822750
    dt = datetime(2026, 11, 21, 9, 53, 42, 750000, tzinfo=timezone.utc)
    assert to_millis(ms) == to_millis(dt) == to_millis(dt.replace(tzinfo=None)) == ms
    assert to_millis("2026-11-21T09:53:42.750Z") == to_millis("2026-11-21T09:53:42.750+00:00") == ms
    with pytest.raises(TypeError, match="epoch milliseconds"):
        to_millis(1.5)
    with pytest.raises(TypeError, match="epoch milliseconds"):
        to_millis(True)
    with pytest.raises(ValueError, match="not an ISO 8601 time"):
        to_millis("yesterday")


def test_lookup_takes_times_like_messages(store):
    t = next(r for r in truth_records(VERSION) if r["kind"] == "MESSAGE" and r["keys"])
    key, stamp = t["keys"].split()[0], t["storeTimestamp"]
    as_dt = datetime.fromtimestamp(stamp / 1000, timezone.utc)
    iso = as_dt.isoformat().replace("+00:00", "Z")
    expected = store.lookup(t["topic"], key, begin=stamp, end=stamp + 1)
    assert expected and all(h.message.store_timestamp == stamp for h in expected)
    for begin, end in ((as_dt, stamp + 1), (iso, (as_dt + timedelta(milliseconds=1)).replace(tzinfo=None).isoformat(timespec="milliseconds")),
                       (as_dt.replace(tzinfo=None), stamp + 1)):
        assert store.lookup(t["topic"], key, begin=begin, end=end) == expected
    assert store.lookup(t["topic"], key, begin=stamp + 1) == [h for h in store.lookup(t["topic"], key)
                                                              if h.message.store_timestamp >= stamp + 1]
    with pytest.raises(TypeError, match="topic and key must be str"):
        store.lookup(t["topic"], [key])


def test_explicit_keyword_parameters():
    from rmqformats.recovery.report import write_report
    for fn in (rmqformats.CommitLog.batches, rmqformats.CommitLog.to_arrow, rmqformats.CommitLog.to_pandas,
               rmqformats.Store.lookup, rmqformats.Store.consumer_lag,
               rmqformats.Store.check_consistency, rmqformats.Store.rocksdb_configs, write_report):
        params = inspect.signature(fn).parameters.values()
        assert not any(p.kind is p.VAR_KEYWORD for p in params), fn
    # The tables take every parameter of the batches they are read from, with the same defaults; but for
    # ``fold``, which sums rows in place of handing them on (a table holds every row).
    batches = inspect.signature(rmqformats.CommitLog.batches).parameters
    for fn in (rmqformats.CommitLog.to_arrow, rmqformats.CommitLog.to_pandas):
        params = inspect.signature(fn).parameters
        assert set(params) == set(batches) - {"fold"}, fn
        assert all(params[n].default == batches[n].default for n in params), fn
    doc = rmqformats.CommitLog.batches.__doc__
    for name in inspect.signature(rmqformats.CommitLog.batches).parameters:
        if name != "self":
            assert f"``{name}``" in doc, name


def test_topics_and_columns(store):
    log = store.commitlog
    rows = log.to_arrow(["topic", "commitLogOffset"]).to_pylist()
    topics = sorted({r["topic"] for r in rows})
    a, b = topics[0], topics[-1]
    both = log.to_arrow(["commitLogOffset"], topic=[a, b]).column(0).to_pylist()
    assert both == [r["commitLogOffset"] for r in rows if r["topic"] in (a, b)] and len(both) > 1
    assert log.to_arrow(["commitLogOffset"], topic=(t for t in [a])).column(0).to_pylist() == \
        [r["commitLogOffset"] for r in rows if r["topic"] == a]
    assert log.to_arrow(["commitLogOffset"], topic=[]).num_rows == 0
    with pytest.raises(TypeError, match="topic must be"):
        log.batches(topic=7)
    with pytest.raises(TypeError, match="topic must be names"):
        log.batches(topic=["A", 7])
    # A column name is one column, never its letters.
    assert log.to_arrow("topic").column_names == ["topic"]
    assert list(log.to_pandas("topic").columns) == ["topic"]
    with pytest.raises(TypeError, match="columns must be"):
        log.batches(7)
    with pytest.raises(ValueError, match="unknown column"):
        log.batches(["topik"])
    with pytest.raises(TypeError, match="queue_id must be an int"):
        log.batches(queue_id="0")
    with pytest.raises(TypeError, match="tag must be a str"):
        log.batches(tag=["a"])


def test_pandas_keeps_the_column_order(store):
    order = ["topic", "commitLogOffset", "queueId", "body"]
    assert list(store.commitlog.to_pandas(order).columns) == order
    assert store.commitlog.to_arrow(order).column_names == order
    assert list(store.commitlog.to_pandas(order[::-1], topic="TopicTest").columns) == order[::-1]
