"""RocksDB consume queues and RocksDB configs (5.2+), on RocksDB twins of the vector stores.

No RocketMQ RocksDB build is available, so each twin is written here with the
same binding the reader uses, following the Java classes' key and value
layouts (:mod:`rmqformats.synth.rocksdb`): the units of every file consume
queue of a vector store go into a RocksDB consume queue, and its JSON
configs into the v1 and v2 RocksDB config databases.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

import rmqformats
from rmqformats.cli import main, status
from rmqformats.config import read_config_file
from rmqformats.errors import RocksDBError
from rmqformats.rocksdb import ReadOnlyDB, RocksDBConsumeQueue
from rmqformats.rocksdb.config import read_rocksdb_configs, read_v1, read_v2
from rmqformats.rocksdb.consumequeue import CF_OFFSETS, CF_UNITS, offset_key, unit_key
from rmqformats.synth.rocksdb import (rocksdb_twin, v2_key, write_config_metadata, write_config_v1, write_config_v2,
                                      write_rocksdb_queues)

from conftest import FIXTURES, VERSIONS, store_path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _snapshot(root) -> dict:
    """Size, mtime, mode and digest of every file and folder under ``root`` (folders' mtimes too)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files + ["."]:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns, st.st_mode, digest)
    return out


def _json_configs(root):
    """(topics, groups, offsets, data versions) of a store's JSON config files, as the v1/v2 writers take them."""
    topics = read_config_file(os.path.join(root, "config", "topics.json"))
    groups_path = os.path.join(root, "config", "subscriptionGroup.json")
    groups = read_config_file(groups_path) if os.path.exists(groups_path) else None
    offsets = read_config_file(os.path.join(root, "config", "consumerOffset.json"))
    return topics, groups, offsets


def _write_configs(root, layout: str) -> None:
    topics, groups, offsets = _json_configs(root)
    config = os.path.join(root, "config")
    tdata, odata = topics.data, offsets.data
    gdata = groups.data if groups is not None else {"subscriptionGroupTable": {}}
    if layout == "v1":
        write_config_v1(config, topics=tdata["topicConfigTable"], groups=gdata["subscriptionGroupTable"],
                        offsets=odata["offsetTable"],
                        data_versions={name: d["dataVersion"] for name, d in (
                            ("topics", tdata), ("subscriptionGroups", gdata), ("consumerOffsets", odata))
                            if "dataVersion" in d},
                        forbidden=gdata.get("forbiddenTable"))
    elif layout == "metadata":
        write_config_metadata(config, topics=tdata["topicConfigTable"], groups=gdata["subscriptionGroupTable"],
                              offsets=odata["offsetTable"],
                              data_versions={name: d["dataVersion"] for name, d in (
                                  ("topic", tdata), ("subscriptionGroup", gdata), ("consumerOffset", odata))
                                  if "dataVersion" in d},
                              forbidden=gdata.get("forbiddenTable"))
    else:
        write_config_v2(config, topics=tdata["topicConfigTable"], groups=gdata["subscriptionGroupTable"],
                        offsets={(k.split("@")[0], k.split("@")[1], q): o
                                 for k, qs in odata["offsetTable"].items() for q, o in qs.items()},
                        data_versions={name: d["dataVersion"] for name, d in (
                            ("topic", tdata), ("subscription_group", gdata), ("consumer_offset", odata))
                            if "dataVersion" in d})


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Per vector store: (file store, RocksDB twin with v1 configs) — the twin's JSON offsets removed."""
    out = {}
    for i, version in enumerate(VERSIONS):
        root = tmp_path_factory.mktemp(version) / "store"
        shutil.copytree(store_path(version), root)
        rocksdb_twin(str(root), write_min=(i % 2 == 1))
        _write_configs(str(root), "v1")
        os.remove(root / "config" / "consumerOffset.json")  # the offsets now live in config/consumerOffsets
        out[version] = (store_path(version), root)
    return out


# -- the twins read exactly as the file stores -----------------------------------------------------


def test_twin_queue_check_lag_output_equals_file_store(capsys, twins, version):
    files, twin = twins[version]
    _, listing, _ = run(capsys, "queue", files, "--format", "jsonl")
    code, twin_listing, _ = run(capsys, "queue", twin, "--format", "jsonl")
    assert code == 0
    plain = [json.loads(line) for line in listing.splitlines()]
    rocks = [json.loads(line) for line in twin_listing.splitlines()]
    simple = [r for r in plain if r["type"] == "ConsumeQueue"]
    assert len(simple) > 5
    assert [r for r in rocks if r["type"] == "BatchConsumeQueue"] == [r for r in plain if r["type"] != "ConsumeQueue"]
    mine = [r for r in rocks if r["type"] == "RocksDBConsumeQueue"]
    strip = lambda r: {k: v for k, v in r.items() if k not in ("type", "files")}  # noqa: E731
    assert [strip(r) for r in mine] == [strip(r) for r in simple]
    assert all(r["files"] == 0 for r in mine)
    for r in simple:
        for extra in ([], ["--resolve"], ["--from", "2", "--limit", "3"]):
            argv = [r["topic"], r["queueId"], "--format", "jsonl", *extra]
            assert run(capsys, "queue", twin, *argv)[1] == run(capsys, "queue", files, *argv)[1]
        table_f = run(capsys, "queue", files, r["topic"], r["queueId"], "--resolve")[1].splitlines()
        table_r = run(capsys, "queue", twin, r["topic"], r["queueId"], "--resolve")[1].splitlines()
        assert table_r[0].endswith("RocksDB consume queue") and table_r[1:] == table_f[1:]
    for fmt in ("jsonl", "table"):
        code_f, out_f, _ = run(capsys, "lag", files, "--format", fmt)
        code_r, out_r, _ = run(capsys, "lag", twin, "--format", fmt)
        assert (code_r, out_r) == (code_f, out_f)
    # check: both sides the same; the two-way check reads the RocksDB consume queue unit by unit as it
    # reads the files, so it finds what it finds in the file store, with RocksDB places.
    check_f = json.loads(run(capsys, "check", files, "--format", "json")[1])
    check_r = json.loads(run(capsys, "check", twin, "--format", "json")[1])
    # configFindings name the config files, which the twin holds at its own path (written again, quoted)
    side = ("findings", "recovery", "configFindings")
    assert {k: v for k, v in check_r.items() if k not in side} == {k: v for k, v in check_f.items() if k not in side}
    assert "not-checked" not in check_r["counts"]
    assert [f["kind"] for f in check_r["findings"]] == [f["kind"] for f in check_f["findings"]]
    assert json.loads(run(capsys, "check", twin, "--format", "json")[1])["units"] > 200


def test_twin_units_equal_ground_truth_and_store_times(twins, version):
    _, twin = twins[version]
    truth = json.loads((FIXTURES / version / "truth" / "consumequeue.json").read_text(encoding="utf-8"))
    store = rmqformats.open_store(twin)
    for topic, queues in truth.items():
        for qid, data in queues.items():
            cq = store.consume_queue(topic, int(qid))
            assert isinstance(cq, RocksDBConsumeQueue)
            entries = list(cq.entries())
            assert [(e.cq_offset, e.commitlog_offset, e.size, e.tags_code) for e in entries] == [
                (u["cqIndex"], u["commitlogOffset"], u["size"], u["tagsCode"]) for u in data["units"]]
            for e in entries[:3]:
                assert e.store_timestamp == store.commitlog.read(e.commitlog_offset).store_timestamp
    rocks = store.rocksdb_queues()
    end = max(u["commitlogOffset"] + u["size"] for qs in truth.values() for d in qs.values() for u in d["units"])
    assert rocks.dispatch_checkpoint() == end


def test_inspect_says_which_kind(capsys, twins, version):
    files, twin = twins[version]
    code, out, _ = run(capsys, "inspect", twin, "--format", "json")
    info = json.loads(out)
    assert code == 0
    rq = info["rocksdbConsumeQueue"]
    assert rq["columnFamilies"] == ["default", "offset"] and rq["queues"] == info["consumeQueues"]["queues"]
    assert info["consumeQueues"]["fileQueues"] == 0
    assert rq["units"] == json.loads(run(capsys, "inspect", files, "--format", "json")[1])["consumeQueues"]["units"]
    assert "rocksdb    consume queue database" in run(capsys, "inspect", twin)[1]
    assert "rocksdbConsumeQueue" not in json.loads(run(capsys, "inspect", files, "--format", "json")[1])


def test_combined_store_shows_both_kinds(tmp_path, capsys):
    """A store keeping file and RocksDB consume queues (5.3 combined/double-write) lists both, labelled."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    twin = tmp_path / "twin"
    shutil.copytree(store_path("rocketmq-5.3.3"), twin)
    rocksdb_twin(str(twin))
    for name in os.listdir(twin / "consumequeue"):  # the database beside the topic folders
        shutil.copy(twin / "consumequeue" / name, root / "consumequeue" / name)
    store = rmqformats.open_store(root)
    infos = store.queues()
    kinds = {q.kind for q in infos}
    assert kinds == {"file", "rocksdb"}
    by_kind = {k: [(q.topic, q.queue_id, q.min_offset, q.max_offset) for q in infos if q.kind == k] for k in kinds}
    assert by_kind["file"] == by_kind["rocksdb"]
    assert store.consume_queue("TopicTest", 0).kind == "file"
    assert store.consume_queue("TopicTest", 0, kind="rocksdb").kind == "rocksdb"
    _, out, _ = run(capsys, "queue", root, "--format", "jsonl")
    types = [json.loads(line)["type"] for line in out.splitlines()]
    assert types.count("ConsumeQueue") == types.count("RocksDBConsumeQueue") > 5
    a = run(capsys, "queue", root, "TopicTest", "1", "--format", "jsonl")[1]
    b = run(capsys, "queue", root, "TopicTest", "1", "--format", "jsonl", "--kind", "rocksdb")[1]
    assert a == b and a
    report = store.check_consistency()
    assert report.ok and report.queues == len(infos) + len(store.batch_queues())
    info = json.loads(run(capsys, "inspect", root, "--format", "json")[1])
    assert info["consumeQueues"]["fileQueues"] == info["rocksdbConsumeQueue"]["queues"] > 5
    code_f, lag_f, _ = run(capsys, "lag", store_path("rocketmq-5.3.3"), "--format", "jsonl")
    assert run(capsys, "lag", root, "--format", "jsonl")[1] == lag_f


# -- minimum offsets as the broker corrects them -------------------------------------------------


def test_min_offset_follows_deleted_commitlog_segments(tmp_path):
    """With the first commit-log segment gone, both kinds give the same getMinOffsetInQueue."""
    files = tmp_path / "files"
    shutil.copytree(store_path("rocketmq-5.1.4"), files)
    twin = tmp_path / "twin"
    shutil.copytree(files, twin)
    rocksdb_twin(str(twin), write_min=True)  # min values point at the deleted segment: corrected
    for root in (files, twin):
        os.remove(root / "commitlog" / "00000000000000000000")
    f = {(q.topic, q.queue_id): (q.min_offset, q.max_offset) for q in rmqformats.open_store(files).queues()}
    r = {(q.topic, q.queue_id): (q.min_offset, q.max_offset) for q in rmqformats.open_store(twin).queues()}
    assert r == f
    assert any(lo == hi and hi > 0 for lo, hi in r.values())  # queues wholly in the deleted segment
    assert any(0 < lo < hi for lo, hi in r.values()) or all(lo in (0, hi) for lo, hi in r.values())


def test_min_value_is_used_when_still_on_disk(tmp_path):
    path = str(tmp_path / "consumequeue")
    units = [(cq, 1000 + cq * 100, 100, 7, 1_700_000_000_000 + cq) for cq in range(5, 12)]
    write_rocksdb_queues(path, {("T", 0): units}, write_min=True)
    with rmqformats.rocksdb.RocksDBQueues(path) as rocks:
        cq = rocks.consume_queue("T", 0)
        assert (cq.min_offset, cq.max_offset, cq.first_offset()) == (5, 12, 5)
        assert [u.cq_offset for u in cq.units()] == list(range(5, 12))
        assert [u.cq_offset for u in cq.units(7, 9)] == [7, 8]
        assert cq.unit(11).commitlog_offset == 2100
        with pytest.raises(rmqformats.errors.UnitNotFoundError):
            cq.unit(12)
        assert rocks.consume_queue("T", 1).max_offset == 0 and not rocks.consume_queue("T", 1).files.files


# -- configs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["v1", "v2", "metadata"])
def test_rocksdb_configs_equal_json(tmp_path, version, layout, capsys):
    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    _write_configs(str(root), layout)
    topics, groups, offsets = _json_configs(str(root))
    found = {f.schema: f for f in read_rocksdb_configs(root / "config")}
    assert {f.source for f in found.values()} == {f"rocksdb-{layout}"}
    assert found["topics"].model.topic_config_table == topics.model.topic_config_table
    assert found["consumerOffset"].model.offset_table == offsets.model.offset_table
    for name, model in (("topics", topics.model), ("consumerOffset", offsets.model)):
        dv, want = found[name].model.data_version, model.data_version
        if layout != "v2" or want is None:
            assert dv == want  # v1 keeps the JSON DataVersion; a 4.x file's has no stateVersion
        else:
            assert (dv.counter, dv.timestamp, dv.state_version or 0) == (want.counter, want.timestamp,
                                                                         want.state_version or 0)
    if layout != "v2":
        assert found["topics"].model == topics.model
    if groups is not None:
        assert found["subscriptionGroup"].model.subscription_group_table == groups.model.subscription_group_table
        if layout != "v2":
            model = found["subscriptionGroup"].model
            if groups.model.forbidden_table is None:  # a 4.x file has none; the 5.3.1+ database an empty one
                assert model.forbidden_table == {}
                model = dataclasses.replace(model, forbidden_table=None)
            assert model == groups.model
    else:
        assert "subscriptionGroup" not in found or not found["subscriptionGroup"].model.subscription_group_table
    code, out, _ = run(capsys, "config", root, "--format", "json")
    info = json.loads(out)
    assert code == 0
    sources = {f["source"] for f in info["files"]}
    assert {"file", f"rocksdb-{layout}"} <= sources
    json_topics = {t["topic"] for t in info["topics"]}
    assert len(info["topics"]) == 2 * len(json_topics)  # each topic once from JSON, once from RocksDB


def test_lag_reads_rocksdb_offsets_v2_and_v1_merge_rule(tmp_path, capsys):
    version = "rocketmq-5.1.4"
    expected = run(capsys, "lag", store_path(version), "--format", "jsonl")[1]
    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    _write_configs(str(root), "v2")
    os.remove(root / "config" / "consumerOffset.json")
    assert run(capsys, "lag", root, "--format", "jsonl")[1] == expected
    # v1: the JSON file wins only when its data-version counter is larger (RocksDBConsumerOffsetManager.merge)
    root1 = tmp_path / "store1"
    shutil.copytree(store_path(version), root1)
    write_config_v1(str(root1 / "config"), offsets={"TopicTest@GroupA": {0: 5}},
                    data_versions={"consumerOffsets": {"counter": 99, "timestamp": 1, "stateVersion": 0}})
    rows = [json.loads(line) for line in run(capsys, "lag", root1, "--format", "jsonl")[1].splitlines()]
    assert {r["committedOffset"] for r in rows if r["topic"] == "TopicTest" and r["queueId"] == 0} == {5}
    shutil.rmtree(root1 / "config" / "consumerOffsets")
    write_config_v1(str(root1 / "config"), offsets={"TopicTest@GroupA": {0: 5}},
                    data_versions={"consumerOffsets": {"counter": 0, "timestamp": 1, "stateVersion": 0}})
    assert run(capsys, "lag", root1, "--format", "jsonl")[1] == expected


# -- bad input -------------------------------------------------------------------------------------


def _rewrite(path: str, cf: str, key: bytes, value: bytes | None) -> None:
    """Put (or with ``None`` delete) one record, as a damaged or foreign writer would."""
    from rocksdict import Options, Rdict
    db = Rdict(path, options=Options(raw_mode=True),
               column_families={n: Options(raw_mode=True) for n in Rdict.list_cf(path) if n != "default"})
    target = db if cf == "default" else db.get_column_family(cf)
    if value is None:
        del target[key]
    else:
        target[key] = value
    db.close()
    os.remove(os.path.join(path, "rocksdict-config.json"))


@pytest.fixture
def twin_copy(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), root)
    rocksdb_twin(str(root))
    return root


def test_truncated_unit_value_is_a_typed_error(twin_copy, capsys):
    db = str(twin_copy / "consumequeue")
    key = unit_key("TopicTest", 1, 4)
    with ReadOnlyDB(db) as r:
        good = r.get(CF_UNITS, key)
    _rewrite(db, CF_UNITS, key, good[:-1])
    store = rmqformats.open_store(twin_copy)
    with pytest.raises(RocksDBError) as info:
        list(store.consume_queue("TopicTest", 1).units())
    e = info.value
    assert (e.path, e.column_family, e.key) == (db, "default", key)
    assert "value is 27 bytes, expected 28" in str(e) and "TopicTest/1/4" in str(e) and key.hex() in str(e)
    with pytest.raises(RocksDBError, match="TopicTest/1/4.*27 bytes") as info:
        store.consume_queue("TopicTest", 1).unit(4)
    assert info.value.key == key
    code, out, err = run(capsys, "queue", twin_copy, "TopicTest", "1")
    assert code == 2 and "column family 'default'" in err and key.hex() in err
    code, out, _ = run(capsys, "check", twin_copy, "--format", "json")
    report = json.loads(out)
    assert code == 1 and [(u["topic"], u["queueId"]) for u in report["unreadable"]] == [("TopicTest", 1)]
    assert "value is 27 bytes" in report["unreadable"][0]["error"]


def test_corrupt_offset_value_and_key(twin_copy, capsys):
    db = str(twin_copy / "consumequeue")
    _rewrite(db, CF_OFFSETS, offset_key("TopicTest", 2, "max"), b"\x00" * 15)
    code, _, err = run(capsys, "queue", twin_copy)
    assert code == 2 and "column family 'offset'" in err and "TopicTest/2 max" in err and "15 bytes" in err
    _rewrite(db, CF_OFFSETS, offset_key("TopicTest", 2, "max"), b"\x00" * 16)
    _rewrite(db, CF_OFFSETS, b"\x00\x00\x00\x09\x01TopicTest\x01mid\x01\x00\x00\x00\x02", b"\x00" * 16)
    code, _, err = run(capsys, "lag", twin_copy)
    assert code == 2 and "not an offset key" in err and "column family 'offset'" in err
    _rewrite(db, CF_OFFSETS, b"\x00\x00\x00\x09\x01TopicTest\x01mid\x01\x00\x00\x00\x02", None)
    hostile = b"\x7f\xff\xff\xff\x01TopicTest\x01max\x01\x00\x00\x00\x02"  # a 2 GiB topic length
    _rewrite(db, CF_OFFSETS, hostile, b"\x00" * 16)
    code, _, err = run(capsys, "queue", twin_copy)
    assert code == 2 and "not an offset key" in err and hostile.hex() in err


def test_max_offset_value_at_the_extreme(twin_copy, capsys):
    """A ``max`` value of 2^63-1: the queue reads its units, and check names the offsets without a key."""
    from rmqformats.synth.rocksdb import offset_value
    top = (1 << 63) - 1
    expected = run(capsys, "queue", twin_copy, "TopicTest", "1", "--format", "jsonl")[1]
    units = len(expected.splitlines())
    _rewrite(str(twin_copy / "consumequeue"), CF_OFFSETS, offset_key("TopicTest", 1, "max"), offset_value(100, top))
    cq = rmqformats.open_store(twin_copy).consume_queue("TopicTest", 1)
    assert cq.max_offset == 1 << 63
    assert len(list(cq.units())) == units and len(list(cq.units(start=top - 1))) == 0
    code, out, err = run(capsys, "queue", twin_copy, "TopicTest", "1", "--format", "jsonl")
    assert code == 0 and out == expected, err
    code, out, err = run(capsys, "check", twin_copy, "--format", "json")
    assert code == 1, err
    report = json.loads(out)
    assert [p["unitValue"] for p in report["problems"] if p["topic"] == "TopicTest"] == [f"units {units}..{top}"]


def test_lag_of_a_queue_whose_max_offset_is_past_long_max(twin_copy, capsys):
    """A ``max`` record at Long.MAX_VALUE: the broker's max offset (that plus 1) wraps; lag shows Long.MAX_VALUE,
    counts no lag and flags the row, in every format, instead of printing 2^63 and a lag past a long."""
    from rmqformats.synth.rocksdb import offset_value
    top = (1 << 63) - 1
    before = json.loads(run(capsys, "lag", twin_copy, "--json", "--no-behind")[1])
    _rewrite(str(twin_copy / "consumequeue"), CF_OFFSETS, offset_key("TopicTest", 1, "max"), offset_value(100, top))
    code, out, err = run(capsys, "lag", twin_copy, "--format", "json", "--no-behind")
    doc = json.loads(out)
    hit = [r for r in doc["rows"] if (r["topic"], r["queueId"]) == ("TopicTest", 1)]
    assert code == 1 and hit, err
    assert all(r["maxOffset"] == top and r["lag"] == 0 and r["available"] == 0 and r["maxOverflow"]
               and "Long.MAX_VALUE" in r["note"] for r in hit)
    rest = [r for r in doc["rows"] if (r["topic"], r["queueId"]) != ("TopicTest", 1)]
    assert rest == [r for r in before["rows"] if (r["topic"], r["queueId"]) != ("TopicTest", 1)]
    assert doc["flaggedRows"] == len(hit) + before["flaggedRows"]
    for fmt, flag in (("table", "max-overflow"), ("jsonl", '"maxOverflow": true')):
        code, out, _ = run(capsys, "lag", twin_copy, "--format", fmt, "--no-behind")
        assert code == 1 and flag in out and str(top) in out
        assert not re.search(rf"(?<![-\d]){1 << 63}", out)  # 2^63 only as the wrapped Long.MIN_VALUE


def test_corrupt_table_file_and_missing_database(twin_copy, capsys, tmp_path):
    db = twin_copy / "consumequeue"
    for name in os.listdir(db):
        if name.endswith(".sst"):
            data = bytearray((db / name).read_bytes())
            for i in range(64, min(len(data), 4000), 7):
                data[i] ^= 0x5A
            (db / name).write_bytes(bytes(data))
    for name in os.listdir(db):  # no WAL: everything must come from the damaged table files
        if name.endswith(".log"):
            os.remove(db / name)
    code, _, err = run(capsys, "check", twin_copy)
    assert code in (1, 2)
    assert "Traceback" not in err
    if code == 2:
        assert str(db) in err and "rmqformats-rocksdb-" not in err  # the database's path, not the links
        code, out, _ = run(capsys, "inspect", twin_copy, "--format", "json")
        info = json.loads(out)  # the commit log and the rest are still shown, with the database's error
        assert code == 0 and info["messages"] > 200 and str(db) in info["rocksdbConsumeQueue"]["error"]
    with pytest.raises(RocksDBError, match="not a RocksDB database"):
        ReadOnlyDB(tmp_path)
    with pytest.raises(RocksDBError, match="no such folder"):
        ReadOnlyDB(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()


def test_corrupt_config_values_name_database_and_key(tmp_path):
    config = tmp_path / "config"
    write_config_v1(str(config), topics={"T": {"topicName": "T", "perm": 6, "readQueueNums": 4,
                                               "writeQueueNums": 4}})
    _rewrite(str(config / "topics"), "default", b"Bad", b'{"topicName":"Bad","perm":')
    with pytest.raises(RocksDBError) as info:
        read_v1(config / "topics")
    assert (info.value.column_family, info.value.key) == ("default", b"Bad") and "not JSON" in str(info.value)
    _rewrite(str(config / "topics"), "default", b"Bad", b'{"topicName":"Bad","perm":"rw"}')
    with pytest.raises(RocksDBError) as info:
        read_v1(config / "topics")
    assert info.value.key == b"Bad" and "perm" in str(info.value)
    write_config_v2(str(config), offsets={("T", "G", 0): 3})
    _rewrite(str(config / "rdb"), "default", v2_key("consumer_offset", group="G", topic="T", queue_id=1), b"\x01")
    with pytest.raises(RocksDBError) as info:
        read_v2(config / "rdb")
    assert "value is 1 bytes, expected 8" in str(info.value) and "T@G/1" in str(info.value)
    _rewrite(str(config / "rdb"), "default", v2_key("consumer_offset", group="G", topic="T", queue_id=1), b"\0" * 8)
    _rewrite(str(config / "rdb"), "default", b"\x01\x00\x09\x02", b"x")
    with pytest.raises(RocksDBError, match="unknown table id 9"):
        read_v2(config / "rdb")


# -- read-only -------------------------------------------------------------------------------------


def test_every_command_leaves_the_databases_unchanged(tmp_path, capsys):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    rocksdb_twin(str(root), write_min=True)
    _write_configs(str(root), "v1")
    _write_configs(str(root), "v2")
    for folder, dirs, files in os.walk(root):  # read-only, as a store under investigation should be
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
    for db in ("consumequeue", "config/topics", "config/subscriptionGroups", "config/consumerOffsets", "config/rdb"):
        os.chmod(root / db, 0o555)  # nothing can be created in the database folders either
    before = _snapshot(root)
    try:
        store = rmqformats.open_store(root)
        for q in store.queues():
            list(store.consume_queue(q.topic, q.queue_id).messages())
        assert store.check_consistency().ok
        store.rocksdb_configs(), store.consumer_lag()
        info = json.loads(run(capsys, "inspect", root, "--format", "json")[1])
        assert [(d["folder"], d["layout"]) for d in info["rocksdbConfig"]] == [
            ("topics", "v1"), ("subscriptionGroups", "v1"), ("consumerOffsets", "v1"), ("rdb", "v2")]
        for argv in (["inspect"], ["queue"], ["queue", "TopicTest", "1", "--resolve"], ["check"], ["config"],
                     ["lag"], ["messages", "--limit", "5"], ["lookup", "--topic", "TopicTest", "--key", "key-1"]):
            # lag finds the committed offset past the queue's end in this store (status 1, findings)
            assert main([argv[0], str(root), *argv[1:]]) in (status.OK, status.FINDINGS), argv
        capsys.readouterr()
        assert _snapshot(root) == before
    finally:
        for db in ("consumequeue", "config/topics", "config/subscriptionGroups", "config/consumerOffsets",
                   "config/rdb"):
            os.chmod(root / db, 0o755)


_WRITER = textwrap.dedent("""
    import sys, time
    from rmqformats.synth.rocksdb import unit_value
    from rmqformats.rocksdb.consumequeue import unit_key, offset_key
    from rocksdict import Rdict, Options
    from rmqformats.synth.rocksdb import offset_value
    o = Options(raw_mode=True); o.create_if_missing(True); o.create_missing_column_families(True)
    db = Rdict(sys.argv[1], options=o, column_families={"offset": Options(raw_mode=True)})
    off = db.get_column_family("offset")
    i = 0
    while True:
        db[unit_key("Live", 0, i)] = unit_value(i * 100, 100, 0, 1)
        off[offset_key("Live", 0, "max")] = offset_value(i * 100, i)
        if i == 50:
            print("ready", flush=True)
        if i % 400 == 399:
            db.flush()
        i += 1
        time.sleep(0.0005)
""")


def test_reads_a_database_a_running_broker_holds(tmp_path):
    """A writer holds the database (its LOCK) and keeps writing; read-only opens still work and see a prefix."""
    path = tmp_path / "consumequeue"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        seen = []
        for _ in range(4):
            with rmqformats.rocksdb.RocksDBQueues(str(path)) as rocks:
                cq = rocks.consume_queue("Live", 0)
                units = list(cq.units())
                assert [u.cq_offset for u in units] == list(range(len(units)))
                assert len(units) == cq.max_offset >= 51
                seen.append(cq.max_offset)
        assert seen == sorted(seen) and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_damaged_data_block_stops_with_a_typed_error(tmp_path):
    """A flipped byte inside a table file's data block: the read that reaches it fails naming the database."""
    path = tmp_path / "consumequeue"
    units = [(cq, cq * 100, 100, cq % 7, 1_700_000_000_000 + cq) for cq in range(30000)]
    write_rocksdb_queues(str(path), {("Big", 0): units})
    ssts = sorted((p for p in path.iterdir() if p.suffix == ".sst"), key=lambda p: p.stat().st_size)
    assert ssts[-1].stat().st_size > 100_000
    data = bytearray(ssts[-1].read_bytes())
    data[len(data) // 3] ^= 0xFF
    ssts[-1].write_bytes(bytes(data))
    with rmqformats.rocksdb.RocksDBQueues(str(path)) as rocks:
        cq = rocks.consume_queue("Big", 0)
        assert cq.max_offset == 30000
        with pytest.raises(RocksDBError) as info:
            sum(1 for _ in cq.units())
    assert info.value.path == str(path) and info.value.column_family == "default"
    assert "Corruption" in str(info.value)


def test_twin_columnar_queue_units_equal_file_store(twins, version):
    files, twin = twins[version]
    for options in ({}, {"batch_queues": True}, {"topic": "TopicTest", "queue_id": 1}):
        expected = rmqformats.open_store(files).queues_to_arrow(**options)
        got = rmqformats.open_store(twin).queues_to_arrow(**options)
        assert got.num_rows > 0 and got.equals(expected), options


def test_check_names_the_unit_key_of_a_mismatch(twin_copy, capsys):
    db = str(twin_copy / "consumequeue")
    key = unit_key("TopicTest", 1, 4)
    with ReadOnlyDB(db) as r:
        value = bytearray(r.get(CF_UNITS, key))
    value[12:20] = (12345).to_bytes(8, "big")  # tagsCode
    _rewrite(db, CF_UNITS, key, bytes(value))
    code, out, _ = run(capsys, "check", twin_copy, "--format", "json")
    report = json.loads(out)
    assert code == 1 and [(p["field"], p["unitValue"], p["cqOffset"]) for p in report["problems"]] == [
        ("tagsCode", 12345, 4)]
    assert report["problems"][0]["where"] == f"{db} [default] TopicTest/1/4"
    _, text, _ = run(capsys, "inspect", twin_copy)
    assert "dispatched" in text


def test_check_reports_units_missing_from_the_database(twin_copy, capsys):
    """A key missing inside a queue (the broker's range reads stop there) and at its end are problems."""
    db = str(twin_copy / "consumequeue")
    max_offset = rmqformats.open_store(twin_copy).consume_queue("TopicTest", 2).max_offset
    for off in (5, 6, max_offset - 1):
        _rewrite(db, CF_UNITS, unit_key("TopicTest", 2, off), None)
    code, out, _ = run(capsys, "check", twin_copy, "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert [(p["topic"], p["queueId"], p["cqOffset"], p["field"], p["unitValue"]) for p in report["problems"]] == [
        ("TopicTest", 2, 5, "unit", "units 5..6"),
        ("TopicTest", 2, max_offset - 1, "unit", f"units {max_offset - 1}..{max_offset - 1}")]


def test_kaitai_parsers_read_every_record_of_a_twin(twins):
    """The Kaitai parsers generated from the same specs read every key and value the reader reads."""
    from rmqformats.generated.kaitai.rocketmq_rocksdb_config_key import RocketmqRocksdbConfigKey
    from rmqformats.generated.kaitai.rocketmq_rocksdb_cq_checkpoint import RocketmqRocksdbCqCheckpoint
    from rmqformats.generated.kaitai.rocketmq_rocksdb_cq_key import RocketmqRocksdbCqKey
    from rmqformats.generated.kaitai.rocketmq_rocksdb_cq_offset import RocketmqRocksdbCqOffset
    from rmqformats.generated.kaitai.rocketmq_rocksdb_cq_offset_key import RocketmqRocksdbCqOffsetKey
    from rmqformats.generated.kaitai.rocketmq_rocksdb_cq_unit import RocketmqRocksdbCqUnit
    _, twin = twins["rocketmq-5.3.3"]
    store = rmqformats.open_store(twin)
    units = {(q.topic, q.queue_id): {u.cq_offset: u for u in store.consume_queue(q.topic, q.queue_id).units()}
             for q in store.queues()}
    seen = 0
    with ReadOnlyDB(twin / "consumequeue") as db:
        for key, value in db.iterate(CF_UNITS):
            k, v = RocketmqRocksdbCqKey.from_bytes(key), RocketmqRocksdbCqUnit.from_bytes(value).unit
            u = units[(k.topic, k.queue_id)][k.cq_offset]
            assert (v.ofs_commitlog, v.len_message, v.tags_code) == (u.commitlog_offset, u.size, u.tags_code)
            seen += 1
        for key, value in db.iterate(CF_OFFSETS):
            k = RocketmqRocksdbCqOffsetKey.from_bytes(key)
            if k.is_checkpoint:
                assert RocketmqRocksdbCqCheckpoint.from_bytes(value).checkpoint.ofs_max_phy == \
                    store.rocksdb_queues().dispatch_checkpoint()
            else:
                assert k.is_max and RocketmqRocksdbCqOffset.from_bytes(value).offset.cq_offset + 1 == \
                    store.consume_queue(k.topic, k.queue_id).max_offset
    assert seen == sum(len(u) for u in units.values()) > 200
    root = twin.parent / "v2"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    _write_configs(str(root), "v2")
    with ReadOnlyDB(root / "config" / "rdb") as db:
        tables = [RocketmqRocksdbConfigKey.from_bytes(key).table_id.name for key, _ in db.iterate("default")]
    assert {"topic", "consumer_offset"} <= set(tables)


def test_a_5_4_store_with_its_configs_in_config_metadata(tmp_path, capsys):
    """useSingleRocksDBForAllConfigs (PR #9774): inspect, config and lag read config/metadata; dump's rows of the
    tables are those of the database."""
    from rmqformats.synth.rocksdb import write_rocksdb_store
    root = tmp_path / "store"
    write_rocksdb_store(str(root), queue_folder="consumequeue")
    topic = {"topicName": "TopicTest", "readQueueNums": 1, "writeQueueNums": 1, "perm": 6}
    group = {"groupName": "GroupA", "consumeEnable": True, "retryQueueNums": 1}
    path = write_config_metadata(str(root / "config"), topics={"TopicTest": topic}, groups={"GroupA": group},
                                 offsets={"TopicTest@GroupA": {0: 4}},
                                 data_versions={"consumerOffset": {"counter": 3, "timestamp": 1, "stateVersion": 0}},
                                 forbidden={"GroupA": {"TopicTest": 1}})
    found = {f.schema: f for f in read_rocksdb_configs(root / "config")}
    assert {f.source for f in found.values()} == {"rocksdb-metadata"}
    assert found["consumerOffset"].model.offset_table == {"TopicTest@GroupA": {0: 4}}
    assert found["consumerOffset"].model.data_version.counter == 3
    assert found["subscriptionGroup"].model.forbidden_table == {"GroupA": {"TopicTest": 1}}
    code, out, _ = run(capsys, "config", root, "--format", "json")
    info = json.loads(out)
    assert code == 0 and {f["source"] for f in info["files"]} == {"rocksdb-metadata"}
    assert [t["topic"] for t in info["topics"]] == ["TopicTest"]
    rows = [json.loads(line) for line in run(capsys, "lag", root, "--format", "jsonl")[1].splitlines()]
    [row] = [r for r in rows if r["group"] == "GroupA"]
    assert (row["topic"], row["queueId"], row["committedOffset"], row["maxOffset"]) == ("TopicTest", 0, 4, 6)
    code, out, _ = run(capsys, "inspect", root)
    assert code == 0 and "config     RocksDB metadata (single)" in out and path.endswith("config/metadata")
    code, out, _ = run(capsys, "dump", path, "--format", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and {r["kind"] for r in records} == {"configmetadata"}
    assert {(r["columnFamily"], r["key"]) for r in records} == {
        ("topic", "TopicTest"), ("subscriptionGroup", "GroupA"), ("consumerOffset", "TopicTest@GroupA"),
        ("consumerOffsetVersion", "kvDataVersionKey"), ("forbidden", "GroupA")}
    assert next(r for r in records if r["columnFamily"] == "topic")["value"] == topic


def test_selective_double_write_leaves_topics_out_by_design(tmp_path, capsys):
    """5.5.1 rocksdbCQSelectiveDoubleWriteEnable (#10450): a combined store whose RocksDB consume queue holds
    only some topics. The topics left out are a note, not missing units; a unit missing from a topic the
    database holds is still a problem."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    twin = tmp_path / "twin"
    shutil.copytree(store_path("rocketmq-5.3.3"), twin)
    rocksdb_twin(str(twin))
    for name in os.listdir(twin / "consumequeue"):
        shutil.copy(twin / "consumequeue" / name, root / "consumequeue" / name)
    db = str(root / "consumequeue")
    left_out = "TopicCqRoll"
    queues = [q.queue_id for q in rmqformats.open_store(root).queues() if q.topic == left_out and q.kind == "rocksdb"]
    for q in queues:
        end = rmqformats.open_store(root).consume_queue(left_out, q, kind="rocksdb").max_offset
        for off in range(end):
            _rewrite(db, CF_UNITS, unit_key(left_out, q, off), None)
        for bound in ("max", "min"):
            _rewrite(db, CF_OFFSETS, offset_key(left_out, q, bound), None)
    assert queues and left_out not in {q.topic for q in rmqformats.open_store(root).queues() if q.kind == "rocksdb"}
    code, out, _ = run(capsys, "check", root, "--format", "json")
    report = json.loads(out)
    kinds = [f["kind"] for f in report["findings"]]
    assert "missing-unit" not in kinds and report["ok"] and not report["problems"]
    [note] = [f for f in report["findings"] if f["kind"] == "not-double-written"]
    assert left_out in note["text"] and note["severity"] == "note"
    # A unit really missing from a topic the database holds is still reported.
    _rewrite(db, CF_UNITS, unit_key("TopicTest", 1, 3), None)
    code, out, _ = run(capsys, "check", root, "--format", "json")
    missing = [f for f in json.loads(out)["findings"] if f["kind"] == "missing-unit"]
    assert [(f["topic"], f["queueId"], f["queueOffset"]) for f in missing] == [("TopicTest", 1, 3)]
