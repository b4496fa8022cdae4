"""``rebuild`` over damaged copies of every store layout: what ``preflight`` finds on the new store is beyond it.

Layouts: the three vector stores (file consume queues; 5.1.4 and 5.3.3 also batch consume queues, 5.3.3
timer files), the 5.3.3 vector with its queues in RocksDB (``rebuild --convert-queues rocksdb``) and the
5.5 synthetic store (``consumequeue_rocksdb/`` and ``rocksdbstore/``). Each example cuts, zero-fills or
flips bytes of the commit log, the queue files and the timer files of a copy, runs ``rebuild`` and then
``preflight NEW`` and ``check NEW``: ``rebuild`` ends with a status of the README's table (never a
traceback), ``preflight NEW`` exits 0 or lists only items in :data:`BEYOND_REBUILD`, and ``check NEW``
says the store is consistent. ``RMQFORMATS_FUZZ_EXAMPLES`` raises the number of examples.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqformats.cli import main, status

from conftest import store_path, truth_records

EXAMPLES = int(os.environ.get("RMQFORMATS_FUZZ_EXAMPLES", "30"))
#: Examples per layout by default: each runs rebuild, preflight and check on a copy of the store.
PER_LAYOUT = max(1, EXAMPLES // 15)
LAYOUTS = ("rocketmq-4.9.7", "rocketmq-5.1.4", "rocketmq-5.3.3", "rocketmq-5.3.3-rocksdb-queues", "synthetic-5.5")
#: What ``preflight NEW`` may still say after ``rebuild``, each with why ``rebuild`` cannot change it
#: (a text of a preflight item and the damage it is accepted after): nothing.
BEYOND_REBUILD: dict[str, str] = {}


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> dict[str, str]:
    from rmqformats.synth.rocksdb import write_rocksdb_store
    base = tmp_path_factory.mktemp("layouts")
    out = {v: str(store_path(v)) for v in LAYOUTS[:3]}
    rocks = base / "rocksdb-queues"
    assert main(["rebuild", str(store_path("rocketmq-5.3.3")), "--out", str(rocks), "--convert-queues", "rocksdb"]) \
        == status.OK
    os.remove(rocks / "_SUCCESS")
    out["rocketmq-5.3.3-rocksdb-queues"] = str(rocks)
    synth = base / "synthetic"
    write_rocksdb_store(str(synth))
    out["synthetic-5.5"] = str(synth)
    return out


def _targets(store: str) -> dict[str, list[str]]:
    """Files that may be damaged, by kind (RocksDB databases are left whole: their own checksums guard them)."""
    found: dict[str, list[str]] = {"commitlog": [], "queue": [], "timer": []}
    for dirpath, dirnames, filenames in os.walk(store):
        rel = os.path.relpath(dirpath, store).split(os.sep)
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if not os.path.getsize(path):
                continue
            if rel[0] == "commitlog":
                found["commitlog"].append(path)
            elif rel[0] in ("consumequeue", "batchconsumequeue") and len(rel) == 3:
                found["queue"].append(path)
            elif rel[0] == "timerlog" or (rel == ["."] and name == "timerwheel"):
                found["timer"].append(path)
    return {k: sorted(v) for k, v in found.items() if v}


_DAMAGE = st.tuples(st.sampled_from(["commitlog", "commitlog", "queue", "timer"]), st.integers(0, 1 << 30),
                    st.sampled_from(["cut", "zero", "flip"]), st.integers(0, 1 << 30), st.integers(1, 4096))


def damage(store: str, ops) -> list[str]:
    done = []
    targets = _targets(store)
    for kind, which, how, where, length in ops:
        files = targets.get(kind) or targets["commitlog"]
        path = files[which % len(files)]
        size = os.path.getsize(path)
        if not size:
            continue
        at = where % size
        with open(path, "r+b") as f:
            if how == "cut":
                f.truncate(at)
            elif how == "zero":
                f.seek(at)
                f.write(bytes(min(length, size - at)))
            else:
                f.seek(at)
                b = f.read(1)[0]
                f.seek(at)
                f.write(bytes([b ^ (1 << (length % 8))]))
        done.append(f"{how} {os.path.relpath(path, store)} at {at}" + (f" ({length} bytes)" if how == "zero" else ""))
    return done


def _fuzz(capsys, tmp_path, source: str, ops) -> None:
    store = tmp_path / "store"
    if store.exists():
        shutil.rmtree(store)
    shutil.copytree(source, store)
    what = damage(str(store), ops)
    new = tmp_path / "new"
    if new.exists():
        shutil.rmtree(new)
    code, out, err = run(capsys, "rebuild", store, "--out", new, "--json")
    assert "Traceback" not in err, (what, err)
    assert code in (status.OK, status.DAMAGED), (what, code, err)
    code, out, err = run(capsys, "preflight", new, "--json")
    doc = json.loads(out)
    left = [i for i in doc["items"] if i["verdict"] != "note" and not any(t in i["text"] for t in BEYOND_REBUILD)]
    assert code == status.OK or not left, (what, code, doc["items"])
    code, out, err = run(capsys, "check", new)
    assert code == status.OK and out.rstrip().endswith("consistent"), (what, out, err)


_SETTINGS = settings(max_examples=PER_LAYOUT, derandomize=True, deadline=None, database=None, print_blob=True,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.parametrize("layout", LAYOUTS)
@_SETTINGS
@given(ops=st.lists(_DAMAGE, min_size=1, max_size=3))
def test_rebuild_leaves_nothing_it_could_fix(capsys, tmp_path, layouts, layout, ops):
    _fuzz(capsys, tmp_path, layouts[layout], ops)


def test_first_segment_cut_to_nothing(capsys, tmp_path):
    """The first of five segments cut to 0 bytes: the broker refuses the store (``MappedFileQueue.doLoad``);
    the new store starts at the second segment with every message after it, the lost ones counted."""
    _fuzz(capsys, tmp_path, str(store_path("rocketmq-4.9.7")), [("commitlog", 0, "cut", 0, 1)])
    code, out, err = run(capsys, "preflight", tmp_path / "store", "--json")
    assert code == status.ERROR
    [item] = [i for i in json.loads(out)["items"] if i["verdict"] == "refuse"]
    assert item["path"].endswith(f"commitlog{os.sep}{0:020d}") and item["offset"] == 0
    assert "0 bytes, not the configured 262144" in item["text"] and item["method"] == "MappedFileQueue.doLoad"
    code, out, err = run(capsys, "rebuild", tmp_path / "store", "--out", tmp_path / "again", "--json")
    assert code == status.DAMAGED
    doc = json.loads(out)
    assert doc["emptyHeadSegments"] == [str(tmp_path / "store" / "commitlog" / f"{0:020d}")]
    kept = [m for m in truth_records("rocketmq-4.9.7") if m["kind"] == "MESSAGE" and m["commitlogOffset"] >= 262144]
    assert doc["messages"] == len(kept) > 0
    new_segments = sorted(os.listdir(tmp_path / "again" / "commitlog"))
    assert new_segments == [f"{o:020d}" for o in range(262144, 5 * 262144, 262144)]
    assert doc["dataEnd"] == 1275942 and doc["lostMessages"] == 0 and doc["emptyHeadUnits"] > 0
    assert f"{doc['emptyHeadUnits']} consume-queue unit(s)" in err and len(err.splitlines()) == 1



def test_only_segment_cut(capsys, tmp_path):
    """The only segment cut to 1 byte: its length is no mapped file size, so the default 1 GiB is taken
    (preflight: the broker refuses the file); the new store's segment has that size and the broker starts."""
    from rmqformats.synth.rocksdb import write_rocksdb_store
    write_rocksdb_store(str(tmp_path / "synthetic"))
    segment = tmp_path / "synthetic" / "commitlog" / f"{0:020d}"
    os.truncate(segment, 1)
    code, out, _ = run(capsys, "preflight", tmp_path / "synthetic", "--json")
    assert code == status.ERROR
    [item] = [i for i in json.loads(out)["items"] if i["verdict"] == "refuse"]
    assert item["path"] == str(segment) and item["method"] == "MappedFileQueue.doLoad"
    assert "file of 1 bytes, not the configured 1073741824 (default: the only segment file" in item["text"]
    code, out, err = run(capsys, "rebuild", tmp_path / "synthetic", "--out", tmp_path / "new", "--json")
    assert code == status.OK, err
    doc = json.loads(out)
    assert doc["dataEnd"] == 0 and doc["messages"] == 0 and doc["lostMessages"] == 0
    assert doc["resizedSegments"] == [{"path": str(segment), "size": 1, "written": 1 << 30, "nonZeroBytesDropped": 0}]
    assert os.path.getsize(tmp_path / "new" / "commitlog" / f"{0:020d}") == 1 << 30
    code, out, _ = run(capsys, "preflight", tmp_path / "new")
    assert code == status.OK, out
    code, out, _ = run(capsys, "check", tmp_path / "new")
    assert code == status.OK and out.rstrip().endswith("consistent"), out


def test_only_segment_cut_with_config(capsys, tmp_path):
    """With ``--config`` the configured size is taken, for preflight and rebuild alike."""
    from rmqformats.synth.rocksdb import write_rocksdb_store
    write_rocksdb_store(str(tmp_path / "synthetic"))
    os.truncate(tmp_path / "synthetic" / "commitlog" / f"{0:020d}", 100)
    config = tmp_path / "broker.properties"
    config.write_text("mappedFileSizeCommitLog=1048576\n")
    code, out, _ = run(capsys, "preflight", tmp_path / "synthetic", "--config", config, "--json")
    [item] = [i for i in json.loads(out)["items"] if i["verdict"] == "refuse"]
    assert f"file of 100 bytes, not the configured 1048576 (config {config})" in item["text"]
    code, out, err = run(capsys, "rebuild", tmp_path / "synthetic", "--out", tmp_path / "new", "--config", config)
    assert code == status.OK, err
    assert os.path.getsize(tmp_path / "new" / "commitlog" / f"{0:020d}") == 1 << 20
    code, out, _ = run(capsys, "preflight", tmp_path / "new", "--config", config)
    assert code == status.OK, out


def test_only_segment_cut_to_nothing(capsys, tmp_path):
    """The only segment cut to 0 bytes: a 5.x broker deletes it on load (``doLoad``: "size is 0, auto
    delete") and starts with an empty commit log; preflight and check say so in lines naming the file."""
    from rmqformats.synth.rocksdb import write_rocksdb_store
    write_rocksdb_store(str(tmp_path / "synthetic"))
    segment = tmp_path / "synthetic" / "commitlog" / f"{0:020d}"
    os.truncate(segment, 0)
    code, out, err = run(capsys, "preflight", tmp_path / "synthetic", "--json")
    assert code == status.FINDINGS and "Traceback" not in err
    doc = json.loads(out)
    assert doc["dataEnd"] == 0
    [item] = [i for i in doc["items"] if i["path"] == str(segment)]
    assert item["verdict"] == "change" and "deletes it on load" in item["text"]
    code, out, err = run(capsys, "check", tmp_path / "synthetic")
    assert code == status.FINDINGS and out.rstrip().endswith("INCONSISTENT") and "Traceback" not in err
    code, out, err = run(capsys, "rebuild", tmp_path / "synthetic", "--out", tmp_path / "new", "--json")
    assert code == status.OK, err
    assert json.loads(out)["sizes"][0].startswith("mappedFileSizeCommitLog=1073741824 (default: the only segment")
    code, out, _ = run(capsys, "preflight", tmp_path / "new")
    assert code == status.OK, out


def test_first_segment_cut_to_nothing_with_rocksdb_queues(capsys, tmp_path, layouts):
    """The same cut on the 5.3.3 vector with file queues and with its queues in RocksDB: the units pointing
    into the left-out segment are counted alike, from the files and from the database."""
    counted = {}
    for layout in ("rocketmq-5.3.3", "rocketmq-5.3.3-rocksdb-queues"):
        store = tmp_path / layout
        shutil.copytree(layouts[layout], store)
        os.truncate(store / "commitlog" / f"{0:020d}", 0)
        code, out, err = run(capsys, "rebuild", store, "--out", tmp_path / f"{layout}-new", "--json")
        assert code == status.DAMAGED, err
        doc = json.loads(out)
        assert doc["emptyHeadSegments"] == [str(store / "commitlog" / f"{0:020d}")]
        assert f"{doc['emptyHeadUnits']} consume-queue unit(s)" in err and len(err.splitlines()) == 1
        counted[layout] = doc["emptyHeadUnits"]
    in_head = [m for m in truth_records("rocketmq-5.3.3") if m["kind"] == "MESSAGE" and m["commitlogOffset"] < 262144
               and m["topic"] in {p.name for p in (tmp_path / "rocketmq-5.3.3" / "consumequeue").iterdir()}]
    assert counted["rocketmq-5.3.3-rocksdb-queues"] == counted["rocketmq-5.3.3"] == len(in_head) > 0
