"""``preflight`` on the vector stores and on copies damaged as incidents leave them: the exit status and each
reason with the file, offset and Java method the broker's start-up code gives."""

from __future__ import annotations

import json
import os
import shutil
import struct

import pytest

from rmqformats import open_store
from rmqformats.cli import main, status
from rmqformats.preflight import CHANGE, REFUSE, preflight

from conftest import store_path

CQ_FILE = 1280  # mappedFileSizeConsumeQueue of the vector stores


def run(capsys, *argv) -> tuple[int, dict, str]:
    code = main(["preflight", *[str(a) for a in argv], "--format", "json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def items(doc: dict, verdict: str) -> list[dict]:
    return [i for i in doc["items"] if i["verdict"] == verdict]


def roll_queue(store) -> tuple[str, str]:
    """The queue of the vectors with several files, and its last file."""
    folder = os.path.join(store, "consumequeue", "TopicCqRoll", "0")
    return folder, sorted(os.listdir(folder))[-1]


def data_end(store) -> tuple[int, str, int]:
    walk = open_store(store).commitlog.batches(columns=["commitLogOffset"])
    for _ in walk:
        pass
    return walk.end.offset, walk.end.segment, walk.end.file_offset


def test_vector_stores_start_cleanly(capsys, version):
    code, doc, err = run(capsys, store_path(version))
    assert code == status.OK, doc
    assert doc["exit"] == 0 and doc["recovery"] == "normal" and not [i for i in doc["items"] if i["verdict"] != "note"]


@pytest.mark.parametrize("release, code", [("5.3.3", status.PREFLIGHT_REFUSES), ("5.0.0", status.PREFLIGHT_REFUSES),
                                           ("4.9.7", status.OK)])
def test_empty_last_consume_queue_file(capsys, tmp_path, release, code):
    """A full-size last file with no unit (allocated, never flushed): 5.x correctMinOffset throws (#9728)."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    folder, last = roll_queue(store)
    empty = os.path.join(folder, f"{int(last) + CQ_FILE:020d}")
    with open(empty, "wb") as f:
        f.write(bytes(CQ_FILE))
    got, doc, _ = run(capsys, store, "--release", release)
    assert got == code
    if code == status.PREFLIGHT_REFUSES:
        [item] = items(doc, REFUSE)
        assert item["path"] == empty and item["offset"] == 0
        assert item["method"] == "ConsumeQueue.correctMinOffset"
        assert item["source"] == f"rocketmq-all-{release}:store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java"
        assert "IllegalArgumentException" in item["text"]


@pytest.mark.parametrize("release, code, verdict", [("4.9.7", status.PREFLIGHT_REFUSES, REFUSE),
                                                    ("5.1.2", status.PREFLIGHT_REFUSES, REFUSE),
                                                    ("5.1.3", status.PREFLIGHT_CHANGES, CHANGE),
                                                    ("5.3.3", status.PREFLIGHT_CHANGES, CHANGE)])
def test_zero_byte_last_consume_queue_file(capsys, tmp_path, release, code, verdict):
    """A last file of 0 bytes: refused by MappedFileQueue.load before 5.1.3, deleted on load from 5.1.3."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-4.9.7"), store)
    folder, last = roll_queue(store)
    empty = os.path.join(folder, f"{int(last) + CQ_FILE:020d}")
    open(empty, "wb").close()
    got, doc, _ = run(capsys, store, "--release", release)
    assert got == code
    [item] = [i for i in doc["items"] if i["path"] == empty]
    assert item["verdict"] == verdict and item["offset"] == 0
    assert item["method"].startswith("MappedFileQueue.")
    assert item["source"].endswith(":store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java")


def test_wrong_size_segment_is_refused(capsys, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), store)
    seg = store / "commitlog" / sorted(os.listdir(store / "commitlog"))[1]
    with open(seg, "r+b") as f:
        f.truncate(1000)
    code, doc, _ = run(capsys, store, "--release", "5.1.4")
    assert code == status.PREFLIGHT_REFUSES
    [item] = items(doc, REFUSE)
    assert item["path"] == str(seg) and "1000 bytes" in item["text"] and item["method"] == "MappedFileQueue.doLoad"


def test_missing_middle_segment(capsys, tmp_path, version):
    """The broker only logs [BUG] (MappedFileQueue.checkSelf) and starts; the messages there are gone."""
    store = tmp_path / "store"
    shutil.copytree(store_path(version), store)
    segs = sorted(os.listdir(store / "commitlog"))
    os.remove(store / "commitlog" / segs[2])
    code, doc, _ = run(capsys, store)
    assert code == status.PREFLIGHT_CHANGES
    gap = [i for i in doc["items"] if i["method"] == "MappedFileQueue.checkSelf"]
    assert len(gap) == 1 and gap[0]["verdict"] == CHANGE
    assert gap[0]["path"] == str(store / "commitlog" / segs[2]) and gap[0]["offset"] == int(segs[2])
    assert not items(doc, REFUSE)


def test_torn_tail_past_the_confirm_offset(capsys, tmp_path):
    """A record torn after the data end (and after the checkpoint's confirm offset): recovery truncates there."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    end, segment, pos = data_end(store)
    with open(store / "checkpoint", "r+b") as f:  # confirmPhyOffset (bytes 32 to 39) at the data end
        f.seek(32)
        f.write(struct.pack(">q", end))
    with open(segment, "r+b") as f:
        f.seek(pos)
        f.write(struct.pack(">i", 256) + bytes.fromhex("daa320a7") + b"\x55" * 100)
    code, doc, _ = run(capsys, store, "--release", "5.3.3")
    assert code == status.PREFLIGHT_CHANGES
    [item] = [i for i in doc["items"] if "truncateDirtyFiles" in i["method"]]
    assert item["method"] == "CommitLog.recoverNormally → MappedFileQueue.truncateDirtyFiles"
    assert item["path"] == segment and item["offset"] == pos
    assert f"commit-log offset {end}" in item["text"] and f"confirmPhyOffset is {end}" in item["text"]
    assert doc["dataEnd"] == end


def test_config_emptied_with_its_bak(capsys, tmp_path, version):
    """topics.json emptied, topics.json.bak intact: ConfigManager.load falls back to the .bak and starts."""
    store = tmp_path / "store"
    shutil.copytree(store_path(version), store)
    topics = store / "config" / "topics.json"
    shutil.copy(topics, str(topics) + ".bak")
    open(topics, "w").close()
    code, doc, _ = run(capsys, store)
    assert code == status.PREFLIGHT_CHANGES
    [item] = [i for i in doc["items"] if i["path"] == str(topics) and i["method"] == "ConfigManager.loadBak"]
    assert item["verdict"] == CHANGE and item["offset"] == 0
    # From 5.3.4 (the newest release the store allows is followed) the broker deletes the file first.
    deleted = [i for i in doc["items"] if i["path"] == str(topics) and i["method"] == "ConfigManager.load"]
    if tuple(map(int, doc["release"].split("."))) >= (5, 3, 4):
        assert [d["source"].split(":")[0] for d in deleted] == ["rocketmq-all-5.3.4"]
    else:
        assert deleted == []
    assert item["source"].endswith(":common/src/main/java/org/apache/rocketmq/common/ConfigManager.java")
    # The same with a .bak that does not parse: loadBak returns false and the broker does not start.
    with open(str(topics) + ".bak", "w") as f:
        f.write("{not json")
    code, doc, _ = run(capsys, store)
    assert code == status.PREFLIGHT_REFUSES
    [item] = items(doc, REFUSE)
    assert item["path"] == str(topics) + ".bak" and item["method"] == "ConfigManager.loadBak"
    assert item["offset"] is not None


def test_abnormal_recovery_is_listed(capsys, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), store)
    open(store / "abort", "w").close()
    code, doc, _ = run(capsys, store)
    assert code == status.PREFLIGHT_CHANGES and doc["recovery"] == "abnormal"
    [item] = [i for i in doc["items"] if i["method"] == "CommitLog.recoverAbnormally"]
    assert item["path"].startswith(str(store / "commitlog")) and "dispatches" in item["text"]
    # The index file written after the checkpoint's index mark is deleted (IndexService.load).
    last_index = sorted(os.listdir(store / "index"))[-1]
    [index] = [i for i in doc["items"] if i["method"] == "IndexService.load"]
    assert index["path"] == str(store / "index" / last_index) and "deletes it" in index["text"]
    assert index["source"].endswith(":store/src/main/java/org/apache/rocketmq/store/index/IndexService.java")


def test_text_output_and_api(capsys, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    folder, last = roll_queue(store)
    with open(os.path.join(folder, f"{int(last) + CQ_FILE:020d}"), "wb") as f:
        f.write(bytes(CQ_FILE))
    assert main(["preflight", str(store), "--release", "5.3.3"]) == status.PREFLIGHT_REFUSES
    out = capsys.readouterr().out
    assert "the broker refuses to start" in out and "ConsumeQueue.correctMinOffset" in out
    result = preflight(open_store(store), release="5.3.3")
    assert result.exit_code == 2 and result.items[0].verdict == REFUSE


def test_timer_units_and_queue_units_past_a_cut_commit_log(capsys, tmp_path):
    """The commit log lost its tail (a slave truncated, apache/rocketmq #10666/#10668): the timer-log units and
    the consume-queue units pointing past the new end are listed, with the method that removes the latter."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    cut = 1280997  # the commit-log offset of the last timer message the timer log points at
    seg = store / "commitlog" / f"{1048576:020d}"
    with open(seg, "r+b") as f:
        f.seek(cut - 1048576)
        f.write(bytes(os.path.getsize(seg) - (cut - 1048576)))
    code, doc, _ = run(capsys, store, "--release", "5.3.3")
    assert code == status.PREFLIGHT_CHANGES and doc["dataEnd"] == cut
    # What our own check finds is listed apart from what the broker does.
    assert not [i for i in doc["items"] if "timer-unit-past-end" in i["text"] or i["method"] == "rmqformats check"]
    [timer] = [i for i in doc["findings"] if i["method"] == "timer-unit-past-end"]
    assert timer["verdict"] == "finding" and timer["source"] == "rmqformats check"
    assert timer["path"].startswith(str(store / "timerlog")) and timer["offset"] is not None
    [units] = [i for i in doc["items"] if i["method"] == "DefaultMessageStore.truncateDirtyLogicFiles"]
    assert f"data end {cut}" in units["text"]
    assert units["source"] == "rocketmq-all-5.3.3:store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java"


def test_sizes_from_the_config(capsys, tmp_path):
    """With --config, a segment of another size than the configured one is refused, even when all agree."""
    conf = tmp_path / "broker.conf"
    conf.write_text("mappedFileSizeCommitLog=1048576\nmappedFileSizeConsumeQueue=1280\n")
    code, doc, _ = run(capsys, store_path("rocketmq-5.3.3"), "--config", conf, "--release", "5.3.3")
    assert code == status.PREFLIGHT_REFUSES
    refused = items(doc, REFUSE)
    assert refused and all("not the configured 1048576" in i["text"] for i in refused)
    conf.write_text("mappedFileSizeCommitLog=262144\nmappedFileSizeConsumeQueue=1280\n")
    code, doc, _ = run(capsys, store_path("rocketmq-5.3.3"), "--config", conf, "--release", "5.3.3")
    assert code == status.OK


# -- the rules of releases after 5.3.3 (rmqformats/preflight/release_rules.py) --------------------------


def rocksdb_store(tmp_path, folder: str = "consumequeue_rocksdb") -> tuple[str, dict]:
    """A synthetic 5.5 store: commit log, RocksDB consume queue in ``folder``, rocksdbstore/."""
    from rmqformats.synth.rocksdb import write_rocksdb_store
    root = str(tmp_path / "store")
    return root, write_rocksdb_store(root, queue_folder=folder)


def properties(tmp_path, **values) -> str:
    path = tmp_path / "broker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return str(path)


@pytest.mark.parametrize("folder, separate", [("consumequeue_rocksdb", "false"), ("consumequeue", "true")])
def test_5_5_0_refuses_a_rocksdb_consume_queue_in_the_other_folder(capsys, tmp_path, folder, separate):
    root, _ = rocksdb_store(tmp_path, folder)
    conf = properties(tmp_path, useSeparateStorePathForRocksdbCQ=separate)
    code, doc, _ = run(capsys, root, "--release", "5.5.0", "--config", conf)
    assert code == status.PREFLIGHT_REFUSES and doc["exit"] == 2
    [item] = items(doc, REFUSE)
    assert item["path"] == os.path.join(root, folder, "CURRENT") and "incompatible config" in item["text"]
    assert item["source"].startswith("rocketmq-all-5.5.0:")
    assert "RocksDB consume-queue folder must match useSeparateStorePathForRocksdbCQ" in [
        r["name"] for r in doc["releaseRules"]]
    # The matching setting starts; 5.4.0 has no such check.
    right = properties(tmp_path, useSeparateStorePathForRocksdbCQ="true" if separate == "false" else "false")
    code, doc, _ = run(capsys, root, "--release", "5.5.0", "--config", right)
    assert not items(doc, REFUSE)
    code, doc, _ = run(capsys, root, "--release", "5.4.0", "--config", conf)
    assert not items(doc, REFUSE) and all(r["release"] <= "5.4.0" for r in doc["releaseRules"])


def test_5_5_1_names_the_release_rules_it_applied(capsys, tmp_path):
    root, placed = rocksdb_store(tmp_path)
    code, doc, _ = run(capsys, root, "--release", "5.5.1")
    rules = {r["name"]: r for r in doc["releaseRules"]}
    assert {r["release"] for r in rules.values()} == {"5.3.4", "5.4.0", "5.5.0"}
    assert rules["dispatch start over every dispatch store"]["method"].startswith(
        "IndexRocksDBStore.isMappedFileMatchedRecover")
    assert doc["extrapolated"] is None
    # The synthetic index covers TopicTest only: its lastOffsetPy is the last TopicTest message, behind the
    # queues, so the dispatch starts there again; the trans mark is the last half message, not behind.
    last_topic_test = placed["offsets"]["TopicTest"][-1][0]
    [behind] = [i for i in items(doc, CHANGE) if i["method"].startswith("IndexRocksDBStore")]
    assert behind["offset"] == last_topic_test and f"queues end at {placed['dataEnd']}" in behind["text"]
    assert main(["preflight", root, "--release", "5.5.1"]) == status.PREFLIGHT_CHANGES
    out = capsys.readouterr().out
    assert out.count("release rule applied:") == len(rules) and "(from 5.4.0;" in out
    # 5.3.3 knows none of them.
    code, doc, _ = run(capsys, root, "--release", "5.3.3")
    assert doc["releaseRules"] == [] and not [i for i in doc["items"] if i["method"].startswith("IndexRocksDB")]


def test_a_release_past_the_newest_known_is_extrapolated(capsys, tmp_path):
    root, _ = rocksdb_store(tmp_path)
    code, doc, _ = run(capsys, root, "--release", "5.6.0")
    assert "extrapolated" in doc["extrapolated"] and "5.5.1" in doc["extrapolated"]
    assert any("extrapolated" in i["text"] for i in items(doc, "note"))
    assert len(doc["releaseRules"]) == len(run(capsys, root, "--release", "5.5.1")[1]["releaseRules"])
    main(["preflight", root, "--release", "5.6.0"])
    assert "extrapolated: release 5.6.0 is newer than every release known here" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["preflight", "check"])
@pytest.mark.parametrize("release, why", [("banana", "is no RocketMQ release"), ("5.x", "is no RocketMQ release"),
                                          ("3.9.9", "older than every release rmqformats reads")])
def test_a_release_that_is_none_is_a_usage_error(capsys, command, release, why):
    with pytest.raises(SystemExit) as stop:  # a usage error, as argparse ends one
        main([command, str(store_path("rocketmq-5.3.3")), "--release", release])
    assert stop.value.code == status.ERROR
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and why in err and "Traceback" not in err
    with pytest.raises(ValueError, match=why):
        preflight(open_store(store_path("rocketmq-5.3.3")), release=release)


def test_a_release_given_says_so_and_takes_a_tag_or_two_numbers(capsys):
    for given in ("5.3", "rocketmq-all-5.3.0"):
        assert main(["preflight", str(store_path("rocketmq-5.3.3")), "--release", given]) == 0
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith("release 5.3.0 followed (given); ") and "allows" not in first


def test_5_5_0_ends_abnormal_recovery_at_a_stale_physical_offset(capsys, tmp_path):
    """A record whose PHYSICALOFFSET (byte 28) points outside its segment, as old bytes of a reused file."""
    root, placed = rocksdb_store(tmp_path)
    at = placed["offsets"]["TopicTest"][4][0]
    with open(os.path.join(root, "commitlog", f"{0:020d}"), "r+b") as f:
        f.seek(at + 28)
        f.write(struct.pack(">q", at + (64 << 20)))
    open(os.path.join(root, "abort"), "w").close()
    on = properties(tmp_path, checkCommitLogOffsetOnRecover="true", useSeparateStorePathForRocksdbCQ="true")
    code, doc, _ = run(capsys, root, "--release", "5.5.0", "--config", on)
    [item] = [i for i in doc["items"] if i["method"].startswith("CommitLog.recoverAbnormally (check")]
    assert item["verdict"] == CHANGE and item["offset"] == at and str(at + (64 << 20)) in item["text"]
    assert item["source"] == "rocketmq-all-5.5.0:store/src/main/java/org/apache/rocketmq/store/CommitLog.java"
    # Off (the default) the records are not read: a note says the check is not in force; 5.4.0 has none.
    code, doc, _ = run(capsys, root, "--release", "5.5.0", "--config", properties(
        tmp_path, useSeparateStorePathForRocksdbCQ="true"))
    [item] = [i for i in doc["items"] if i["method"].startswith("CommitLog.recoverAbnormally (check")]
    assert item["verdict"] == "note" and "default false" in item["text"] and item["offset"] is None
    assert "PHYSICALOFFSET outside its segment ends the data" not in [r["name"] for r in doc["releaseRules"]]
    code, doc, _ = run(capsys, root, "--release", "5.4.0", "--config", on)
    assert not [i for i in doc["items"] if i["method"].startswith("CommitLog.recoverAbnormally (check")]


def test_5_3_4_deletes_a_corrupt_config_before_reading_its_bak(capsys, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    topics = store / "config" / "topics.json"
    shutil.copy(topics, str(topics) + ".bak")
    topics.write_text("{not json")
    code, doc, _ = run(capsys, store, "--release", "5.3.4")
    assert code == status.PREFLIGHT_CHANGES
    [deleted] = [i for i in doc["items"] if i["method"] == "ConfigManager.load" and i["path"] == str(topics)]
    assert "deletes it" in deleted["text"] and deleted["source"].startswith("rocketmq-all-5.3.4:")
    code, doc, _ = run(capsys, store, "--release", "5.3.3")
    assert not [i for i in doc["items"] if "deletes it" in i["text"]]


def test_5_5_0_notes_the_unquoted_keys_of_fastjson_1(capsys):
    """The 5.3.3 vector's consumerOffset.json has integer queue ids without quotes, as fastjson 1 writes them;
    5.5.0's fastjson2 refused such names (#10284): the note names the key, the object and its offset."""
    store = store_path("rocketmq-5.3.3")
    path = os.path.join(store, "config", "consumerOffset.json")
    code, doc, _ = run(capsys, store, "--release", "5.5.0")
    [note] = [i for i in doc["items"] if i["path"] == path and "unquoted" in i["text"]]
    assert note["verdict"] == "note" and "'TopicTest@GroupA'" in note["text"] and "#10284" in note["text"]
    with open(path, "rb") as f:
        data = f.read()
    assert data[note["offset"]:note["offset"] + 2] == b"0:" and data[:note["offset"]].endswith(b"{")
    assert "config JSON parsed by fastjson2, which refuses unquoted names" in [r["name"] for r in doc["releaseRules"]]
    code, doc, _ = run(capsys, store, "--release", "5.4.0")
    assert not [i for i in doc["items"] if "unquoted" in i["text"]]
