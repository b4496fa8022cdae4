"""``rebuild`` and ``preflight`` after damage in the middle of the commit log, on copies of every vector store.

Four kinds of damage (a magic code zeroed, a TOTALSIZE field with a bit flipped, a record torn in the
middle segment, the middle segment zero-filled): the rebuilt store keeps every queue, index and timer
true to the new data end (``check NEW`` consistent, ``preflight NEW`` a clean start), and the intact
messages left out past the data end are counted as the salvage walk (``messages --salvage``) reads them.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from rmqformats.cli import main, status

from conftest import FIXTURES, store_path

VERSIONS = ("rocketmq-4.9.7", "rocketmq-5.1.4", "rocketmq-5.3.3")
MIDDLE = f"{524288:020d}"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _messages(version: str) -> list[dict]:
    with open(FIXTURES / version / "truth" / "messages.jsonl") as f:
        return [r for r in map(json.loads, f) if r["kind"] == "MESSAGE"]


def damage(store, version: str, kind: str) -> int:
    """Damage a copy of the store; returns the commit-log offset of the damaged record (or segment)."""
    rows = _messages(version)
    if kind in ("torn", "zero"):
        rows = [r for r in rows if r["file"] == MIDDLE] or rows
    else:
        rows = rows[len(rows) // 4:len(rows) * 3 // 4]
    r = rows[len(rows) // 2]
    path = store / "commitlog" / r["file"]
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        if kind == "magic":
            f.seek(r["fileOffset"] + 4)
            f.write(bytes(4))
        elif kind == "size":  # TOTALSIZE 4 KiB larger: its fields no longer add up to it
            f.seek(r["fileOffset"])
            b = bytearray(f.read(4))
            b[2] ^= 0x10
            f.seek(r["fileOffset"])
            f.write(bytes(b))
        elif kind == "torn":  # written up to half the record; the rest of the segment never reached the disk
            at = r["fileOffset"] + r["totalSize"] // 2
            f.seek(at)
            f.write(bytes(size - at))
        else:
            f.write(bytes(size))
            return int(MIDDLE)
    return r["commitlogOffset"]


def salvaged_past(capsys, store, data_end: int) -> int:
    code, out, _ = run(capsys, "messages", store, "--salvage", "--format", "jsonl")
    assert code in (status.OK, status.DAMAGED)
    return sum(1 for line in out.splitlines() if json.loads(line)["commitLogOffset"] >= data_end)


@pytest.mark.parametrize("kind", ["magic", "size", "torn", "zero"])
@pytest.mark.parametrize("version", VERSIONS)
def test_rebuilt_store_is_true_to_the_new_data_end(capsys, tmp_path, version, kind):
    store = tmp_path / "store"
    shutil.copytree(store_path(version), store)
    at = damage(store, version, kind)
    code, pre, _ = run(capsys, "preflight", store, "--json")
    pre = json.loads(pre)
    assert code == status.PREFLIGHT_CHANGES and pre["dataEnd"] <= at + (0 if kind != "zero" else 0)
    new = tmp_path / "new"
    code, text, err = run(capsys, "rebuild", store, "--out", new, "--json")
    doc = json.loads(text)
    assert doc["dataEnd"] == pre["dataEnd"]
    lost = salvaged_past(capsys, store, doc["dataEnd"])
    assert lost > 0 and doc["lostMessages"] == lost == pre["lostMessages"]
    assert sum(t["messages"] for t in doc["intactPastDataEnd"]["topics"].values()) == lost
    assert code == status.DAMAGED and f"{lost} intact message(s)" in err and "--salvage" in err
    assert "--salvage" in doc["keep"] and "--salvage" in pre["keep"]
    code, out, _ = run(capsys, "check", new)
    assert code == status.OK and out.rstrip().endswith("consistent"), out
    code, out, _ = run(capsys, "preflight", new, "--json")
    after = json.loads(out)
    assert code == status.OK, after["items"]
    assert after["lostMessages"] == 0 and after["dataEnd"] == doc["dataEnd"]


def test_preflight_names_the_messages_recovery_destroys(capsys, tmp_path):
    """The 5.3.3 vector with the magic code of its 61st record (commit-log offset 15340) zeroed: preflight
    says how many intact messages lie past the damage, in which topics, and the export that keeps them;
    rebuild's JSON carries the same count; broker actions and our own findings are apart."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    with open(store / "commitlog" / f"{0:020d}", "r+b") as f:
        f.seek(15340 + 4)
        f.write(bytes(4))
    lost = salvaged_past(capsys, store, 15340)
    assert lost == 261  # 321 intact messages, 60 before the damage
    code, out, _ = run(capsys, "preflight", store)
    first = out.splitlines()[0]
    assert first.startswith("release 5.5.1 followed (the store allows 5.2.0 or later;")
    assert code == status.PREFLIGHT_CHANGES
    assert f"{lost} intact message(s) in 16 topic(s) lie past the data end 15340" in out
    assert f"export {store} --salvage --from-offset 15340" in out
    broker, _, ours = out.partition("what rmqformats check finds besides")
    assert "[rmqformats check" not in broker and "index-entry-points-at-nothing" in ours
    code, text, _ = run(capsys, "preflight", store, "--json")
    pre = json.loads(text)
    assert pre["lostMessages"] == lost and pre["intactPastDataEnd"]["topics"]["TopicTest"] == {
        "messages": 59, "firstOffset": 15596, "lastOffset": 30501}
    assert all(i["verdict"] in ("refuse", "change", "note") for i in pre["items"])
    assert all(i["verdict"] == "finding" for i in pre["findings"])
    code, text, _ = run(capsys, "rebuild", store, "--out", tmp_path / "new", "--json")
    doc = json.loads(text)
    assert code == status.DAMAGED and doc["lostMessages"] == lost and doc["messages"] == 60
    # No queue of messages past the end is kept: each is cut (or removed) as truncateDirtyLogicFiles does.
    assert doc["keptQueues"] == [] and "consumequeue/TopicMisc/0" in doc["removedQueues"]
    assert doc["timerLog"]["cut"] == 0 and doc["timerLog"]["unitsRemoved"] > 0
    from rmqformats.timer import read_timer_checkpoint
    check = read_timer_checkpoint(str(tmp_path / "new" / "config" / "timercheck"))
    assert (check.last_timer_log_flush_pos, check.last_timer_queue_offset, check.master_timer_queue_offset) == \
        (0, 0, 0)  # the timer queue lost every unit


def test_write_error_names_the_path_written(capsys, tmp_path, monkeypatch):
    """A full disk while the timer wheel is copied: the error names the new store's file, not the store's."""
    import errno

    import rmqformats.rebuild.truncate as truncate
    real = truncate.shutil.copy2

    def full(src, dst, *a, **k):
        if str(dst).endswith("timerwheel"):  # as shutil's sendfile copy raises it: source and destination
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(src), None, str(dst))
        return real(src, dst, *a, **k)
    monkeypatch.setattr(truncate.shutil, "copy2", full)
    new = tmp_path / "new"
    code, _, err = run(capsys, "rebuild", store_path("rocketmq-5.3.3"), "--out", new)
    assert code == status.ERROR
    assert err.startswith(f"rmqformats: error: {new / 'timerwheel'}: cannot write: No space left on device"), err
    assert not new.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".new")]

    def full_segment(src, dst, length, size):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr("rmqformats.rebuild.build._copy_file", full_segment)
    code, _, err = run(capsys, "rebuild", store_path("rocketmq-5.3.3"), "--out", new)
    assert code == status.ERROR and f"{new / 'commitlog' / (20 * '0')}: cannot write: No space" in err, err


@pytest.mark.parametrize("segment", [524288, 1048576], ids=["middle", "holding-the-data-end"])
def test_segment_of_the_wrong_size(capsys, tmp_path, segment):
    """100 zero bytes appended to a segment: preflight refuses it (MappedFileQueue.doLoad); rebuild writes it at
    the configured size, says so, and the broker starts on the new store."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), store)
    path = store / "commitlog" / f"{segment:020d}"
    with open(path, "ab") as f:
        f.write(bytes(100))
    code, _, _ = run(capsys, "preflight", store)
    assert code == status.PREFLIGHT_REFUSES
    new = tmp_path / "new"
    code, text, _ = run(capsys, "rebuild", store, "--out", new, "--json")
    doc = json.loads(text)
    assert code == status.OK
    assert doc["resizedSegments"] == [{"path": str(path), "size": 262244, "written": 262144,
                                       "nonZeroBytesDropped": 0}]
    assert {os.path.getsize(p) for p in (new / "commitlog").iterdir()} == {262144}
    with open(path, "rb") as f, open(new / "commitlog" / path.name, "rb") as g:
        assert f.read(262144) == g.read()
    code, out, _ = run(capsys, "check", new)
    assert code == status.OK and out.rstrip().endswith("consistent"), out
    code, out, _ = run(capsys, "preflight", new)
    assert code == status.OK, out


def test_rocksdb_store_with_a_torn_tail(capsys, tmp_path):
    """A 5.5 store keeping its queues in consumequeue_rocksdb/ and timer, transaction and index records in
    rocksdbstore/, its commit log torn in the fifth message: the rebuilt store keeps its queue in the store's
    own folder and kind, no record of either database points past the new data end, and no stale database of
    the queues is left beside the one written (also with --convert-queues)."""
    from rmqformats.rocksdb.consumequeue import rocksdb_queues_paths
    from rmqformats.synth.rocksdb import write_rocksdb_store
    store = tmp_path / "store"
    info = write_rocksdb_store(str(store))
    torn = info["offsets"]["TopicTest"][4][0]
    with open(store / "commitlog" / f"{0:020d}", "r+b") as f:
        f.seek(torn + 70)
        f.write(bytes(info["dataEnd"] - torn - 70))
    for convert, folder, kind in ((None, "consumequeue_rocksdb", "rocksdb"), ("rocksdb", "consumequeue_rocksdb", "rocksdb"),
                                  ("file", "consumequeue", "file")):
        new = tmp_path / f"new-{convert}"
        code, text, err = run(capsys, "rebuild", store, "--out", new, "--json",
                              *(("--convert-queues", convert) if convert else ()))
        doc = json.loads(text)
        assert code == status.OK, err
        assert (doc["dataEnd"], doc["queuesKind"], doc["queuesFolder"]) == (torn, kind, folder)
        assert doc["rocksdbMessagesRemoved"] == {"timer": 3, "trans": 2, "index": 2}
        assert doc["indexFiles"] == [] and not (new / "index").exists()  # the store indexes in RocksDB
        assert [os.path.basename(p) for p in rocksdb_queues_paths(str(new))] == (
            ["consumequeue_rocksdb"] if kind == "rocksdb" else [])
        code, out, _ = run(capsys, "check", new)
        assert code == status.OK and out.rstrip().endswith("consistent"), out
        code, out, _ = run(capsys, "preflight", new)
        assert code == status.OK, out


def test_damaged_key_in_the_rocksdb_consume_queue(capsys, tmp_path):
    """A key in consumequeue_rocksdb/ that is no unit of any queue: check and preflight report it, rebuild says
    it is not carried over and the new database passes check."""
    from rocksdict import Options, Rdict

    from rmqformats.synth.rocksdb import write_rocksdb_store
    store = tmp_path / "store"
    write_rocksdb_store(str(store))
    bad = b"\x00\x00\x00\x09TopicTest@" + bytes(6)  # a unit key whose separators were overwritten
    db = Rdict(str(store / "consumequeue_rocksdb"), options=Options(raw_mode=True))
    db[bad] = bytes(28)
    db.close()
    code, out, _ = run(capsys, "check", store)
    assert code == status.FINDINGS and bad.hex() in out
    code, text, _ = run(capsys, "preflight", store, "--json")
    assert [f for f in json.loads(text)["findings"] if bad.hex() in f["text"]]
    code, text, _ = run(capsys, "rebuild", store, "--out", tmp_path / "new", "--json")
    assert code == status.OK and json.loads(text)["damagedQueueKeys"] == {"count": 1, "first": [bad.hex()]}
    code, out, _ = run(capsys, "check", tmp_path / "new")
    assert code == status.OK and out.rstrip().endswith("consistent"), out


def test_timer_files_cut_at_the_data_end(capsys, tmp_path):
    """The 5.3.3 commit log cut at its last timer message (1280997): the timer log loses its last unit (468),
    the wheel slot whose chain it headed goes back to the unit before it (prevPos 260, one message fewer),
    config/timercheck's flush position and queue offsets are lowered, and check finds nothing."""
    from rmqformats.timer import TimerStore, TimerWheel, read_timer_checkpoint
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    cut = 1280997
    seg = store / "commitlog" / f"{1048576:020d}"
    with open(seg, "r+b") as f:
        f.seek(cut - 1048576)
        f.write(bytes(os.path.getsize(seg) - (cut - 1048576)))
    new = tmp_path / "new"
    code, text, _ = run(capsys, "rebuild", store, "--out", new, "--json")
    doc = json.loads(text)
    assert code == status.OK and doc["dataEnd"] == cut
    assert doc["timerLog"] == {"cut": 468, "unitsRemoved": 1, "slotsChanged": 1, "slotsCleared": 0}
    units = list(TimerStore(str(new)).scan())
    assert [u.offset for u in units][-1] == 416 and all(u.commitlog_offset + u.commitlog_size <= cut for u in units)
    old, rebuilt = TimerWheel(str(store / "timerwheel")), TimerWheel(str(new / "timerwheel"))
    changed = [i for i in old.used_indexes().tolist() if old.slots[i].tobytes() != rebuilt.slots[i].tobytes()]
    assert len(changed) == 1
    first, last, num = (rebuilt.slots[changed[0]][n] for n in ("ofs_first", "ofs_last", "num_messages"))
    assert (int(first), int(last), int(num)) == (156, 260, int(old.slots[changed[0]]["num_messages"]) - 1)
    check = read_timer_checkpoint(str(new / "config" / "timercheck"))
    assert (check.last_timer_log_flush_pos, check.last_timer_queue_offset, check.master_timer_queue_offset) == \
        (468, 8, 8)
    code, out, _ = run(capsys, "check", new)
    assert code == status.OK and out.rstrip().endswith("consistent"), out
    code, out, _ = run(capsys, "preflight", new)
    assert code == status.OK, out


@pytest.mark.parametrize("kind", ["magic", "torn"])
def test_rocksdb_queue_store_damaged(capsys, tmp_path, kind):
    """The 5.3.3 vector with its queues in a RocksDB database in consumequeue/ (storeType=defaultRocksDB, written
    by rebuild --convert-queues), then damaged: the rebuilt store keeps that kind and folder, and is true to the
    new data end."""
    store = tmp_path / "store"
    code, _, err = run(capsys, "rebuild", store_path("rocketmq-5.3.3"), "--out", store, "--convert-queues", "rocksdb")
    assert code == status.OK, err
    os.remove(store / "_SUCCESS")
    damage(store, "rocketmq-5.3.3", kind)
    code, text, _ = run(capsys, "preflight", store, "--json")
    pre = json.loads(text)
    new = tmp_path / "new"
    code, text, _ = run(capsys, "rebuild", store, "--out", new, "--json")
    doc = json.loads(text)
    assert (doc["queuesKind"], doc["queuesFolder"]) == ("rocksdb", "consumequeue")
    lost = salvaged_past(capsys, store, doc["dataEnd"])
    assert doc["dataEnd"] == pre["dataEnd"] and doc["lostMessages"] == pre["lostMessages"] == lost > 0
    code, out, _ = run(capsys, "check", new)
    assert code == status.OK and out.rstrip().endswith("consistent"), out
    code, out, _ = run(capsys, "preflight", new)
    assert code == status.OK, out
