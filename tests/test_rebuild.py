"""``rebuild`` against the files RocketMQ wrote: on a copy of every vector store with its consume queues,
batch consume queues and index files deleted, the rebuilt files equal the broker's byte for byte (index
files apart from their names, which the broker takes from the clock), the checkpoint has the fields the
broker sets, and the rebuilt store passes ``check`` and ``preflight``."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil

import pytest

from rmqformats import open_store
from rmqformats.cli import main, status
from rmqformats.index import IndexFile
from rmqformats.recovery import Severity, cross_check
from rmqformats.rebuild.writers import index_file_name

from conftest import FIXTURES, store_path

#: The vector stores' broker ran in UTC: their index file names are UTC times.
TZ = "UTC"
PARTS = ("consumequeue", "batchconsumequeue", "index")


def files_under(folder) -> dict[str, bytes]:
    out = {}
    for d, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, folder)] = f.read()
    return out


def tree_digest(folder) -> str:
    h = hashlib.sha256()
    for rel, data in sorted(files_under(folder).items()):
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def config_of(version: str) -> str:
    return str(FIXTURES / version / "store_config.json")


@pytest.fixture
def stripped(tmp_path, version):
    """A copy of the vector store without consume queues, batch consume queues and index files."""
    dst = tmp_path / "store"
    shutil.copytree(store_path(version), dst)
    for part in PARTS:
        shutil.rmtree(dst / part, ignore_errors=True)
    return dst


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def rebuild(capsys, store, out, version, *more) -> dict:
    code, text, err = run(capsys, "rebuild", store, "--out", out, "--config", config_of(version),
                          "--timezone", TZ, "--json", *more)
    assert code == status.OK, err
    return json.loads(text)


def test_queues_equal_the_brokers_bytes(capsys, stripped, tmp_path, version):
    new = tmp_path / "new"
    doc = rebuild(capsys, stripped, new, version)
    original = store_path(version)
    for part in ("consumequeue", "batchconsumequeue"):
        want = files_under(original / part)
        got = files_under(new / part)
        assert sorted(got) == sorted(want), part  # the same queues and file names (first offset * unit size)
        for rel, data in want.items():
            assert got[rel] == data, f"{part}/{rel}"
    units = sum(len(d) for d in files_under(original / "consumequeue").values())
    assert units and doc["queueUnits"] > 0
    if version != "rocketmq-4.9.7":  # 4.9.7 has no batch consume queue
        assert doc["batchQueueUnits"] == 3


def test_index_files_equal_the_brokers_bytes_but_their_names(capsys, stripped, tmp_path, version):
    """Every byte of every index file is the broker's: header (begin/end time and offset, slot and entry
    counts), slots and entries are set from the messages; only the file name is the broker's clock."""
    new = tmp_path / "new"
    doc = rebuild(capsys, stripped, new, version)
    want_names = sorted(os.listdir(store_path(version) / "index"))
    got_names = sorted(os.listdir(new / "index"))
    assert doc["indexFiles"] == got_names
    assert len(got_names) == len(want_names) == 3
    for got, want in zip(got_names, want_names):
        with open(new / "index" / got, "rb") as f1, open(store_path(version) / "index" / want, "rb") as f2:
            assert f1.read() == f2.read(), (got, want)
        # The clock field: the name is the time the broker's dispatch created the file; the rebuild names it
        # by the store time of the message that made the broker create it, which the dispatch reached
        # within milliseconds.
        lag = _millis(want) - _millis(got)
        assert 0 <= lag < 1000, (got, want)


def _millis(name: str) -> int:
    t = datetime.datetime.strptime(name[:14], "%Y%m%d%H%M%S").replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1000 + int(name[14:])


def test_existing_index_names_are_kept(capsys, tmp_path, version):
    """Where the store still has its index files, the rebuilt files take their names in order."""
    new = tmp_path / "new"
    rebuild(capsys, store_path(version), new, version)
    assert files_under(new / "index") == files_under(store_path(version) / "index")


def test_index_file_name_is_the_brokers_format():
    assert index_file_name(1795377022289, datetime.timezone.utc) == "20261122195022289"
    assert index_file_name(1795377022005, datetime.timezone.utc) == "20261122195022005"


def test_checkpoint_fields_as_the_broker_sets_them(capsys, stripped, tmp_path, version):
    new = tmp_path / "new"
    doc = rebuild(capsys, stripped, new, version)
    with open(FIXTURES / version / "truth" / "checkpoint.json", encoding="utf-8") as f:
        truth = json.load(f)
    cp = open_store(new).checkpoint()
    # The last message dispatched to a consume queue, and the end time of the last full index file.
    assert cp.logics_msg_timestamp == truth["logicsMsgTimestamp"]
    assert cp.index_msg_timestamp == truth["indexMsgTimestamp"]
    assert cp.master_flushed_offset == truth.get("masterFlushedOffset", 0)
    assert cp.confirm_phy_offset == truth.get("confirmPhyOffset", 0)
    # physicMsgTimestamp is the store time at the broker's last periodic flush (a clock-timed event): the
    # rebuilt store is flushed whole, so it is the last message's time, never before the broker's mark.
    last = [r["storeTimestamp"] for r in _records(version) if r["kind"] == "MESSAGE"][-1]
    assert cp.physic_msg_timestamp == last >= truth["physicMsgTimestamp"]
    assert doc["checkpoint"]["physicMsgTimestamp"] == last
    assert set(doc["checkpoint"]) == {"physicMsgTimestamp", "logicsMsgTimestamp", "indexMsgTimestamp",
                                      "masterFlushedOffset", "confirmPhyOffset"}
    assert os.path.getsize(new / "checkpoint") == 4096


def _records(version: str) -> list[dict]:
    with open(FIXTURES / version / "truth" / "messages.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_rebuilt_store_is_consistent(capsys, stripped, tmp_path, version):
    new = tmp_path / "new"
    rebuild(capsys, stripped, new, version)
    result = cross_check(open_store(new))
    assert result.ok and result.problems == 0
    assert all(f.severity is Severity.NOTE for f in result.findings)
    assert result.messages == sum(r["kind"] == "MESSAGE" for r in _records(version))
    code, _, err = run(capsys, "check", new)
    assert code == status.OK, err
    assert os.path.isfile(new / "_SUCCESS")
    assert not os.path.exists(new / "abort") and not os.path.exists(new / "lock")


def test_rebuilt_store_starts(capsys, stripped, tmp_path, version):
    new = tmp_path / "new"
    rebuild(capsys, stripped, new, version)
    code, out, err = run(capsys, "preflight", new)
    assert code == status.OK, out + err


def test_store_is_not_touched(capsys, stripped, tmp_path, version):
    before = tree_digest(stripped)
    rebuild(capsys, stripped, tmp_path / "new", version, "--link")
    assert tree_digest(stripped) == before


def test_commit_log_cut_at_the_data_end(capsys, tmp_path):
    """A torn tail past the data end is not carried over; later segment files are left out."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    segs = sorted(os.listdir(store / "commitlog"))
    last = store / "commitlog" / segs[-1]
    end = open_store(store).commitlog.batches(columns=["commitLogOffset"]).__iter__()
    walk = open_store(store).commitlog.batches(columns=["commitLogOffset"])
    for _ in walk:
        pass
    data_end = walk.end.offset
    del end
    pos = data_end - int(segs[-1])
    with open(last, "r+b") as f:  # a torn record: a length and garbage after the data end
        f.seek(pos)
        f.write(b"\x00\x00\x01\x00" + b"\xab" * 200)
    size = os.path.getsize(last)
    with open(store / "commitlog" / f"{int(segs[-1]) + size:020d}", "wb") as f:
        f.write(b"\x11" * size)
    new = tmp_path / "new"
    doc = rebuild(capsys, store, new, "rocketmq-5.3.3", "--link")
    assert doc["dataEnd"] == data_end
    assert sorted(os.listdir(new / "commitlog")) == segs
    with open(new / "commitlog" / segs[-1], "rb") as f:
        data = f.read()
    with open(store_path("rocketmq-5.3.3") / "commitlog" / segs[-1], "rb") as f:
        orig = f.read()
    assert len(data) == size and data[:pos] == orig[:pos] and data[pos:] == bytes(size - pos)
    assert doc["linkedSegments"] == len(segs) - 1
    assert os.stat(new / "commitlog" / segs[0]).st_ino == os.stat(store / "commitlog" / segs[0]).st_ino


def test_convert_to_rocksdb_equals_the_file_queues(capsys, tmp_path, version):
    pytest.importorskip("rocksdict")
    files = tmp_path / "files"
    rocks = tmp_path / "rocks"
    rebuild(capsys, store_path(version), files, version)
    doc = rebuild(capsys, store_path(version), rocks, version, "--convert-queues", "rocksdb")
    assert doc["queuesKind"] == "rocksdb"
    assert os.path.isfile(rocks / "consumequeue" / "CURRENT")
    a, b = open_store(files), open_store(rocks)
    rdb = b.rocksdb_queues()
    assert rdb is not None
    file_queues = {(q.topic, q.queue_id) for q in a.queues()}
    assert set(rdb.topic_queues()) == file_queues
    units = 0
    for topic, qid in sorted(file_queues):
        want = list(a.consume_queue(topic, qid, kind="file").units())
        got = list(rdb.consume_queue(topic, qid).units())
        assert got == want, (topic, qid)
        units += len(want)
    assert units == doc["queueUnits"]
    # And back: a RocksDB store converted to files gives the broker's file queues again.
    back = tmp_path / "back"
    rebuild(capsys, rocks, back, version, "--convert-queues", "file")
    assert files_under(back / "consumequeue") == files_under(store_path(version) / "consumequeue")


def test_only_index(capsys, stripped, tmp_path, version):
    new = tmp_path / "new"
    doc = rebuild(capsys, stripped, new, version, "--only", "index")
    assert doc["parts"] == ["index"]
    assert not os.path.exists(new / "consumequeue")  # not in the store copy, not rebuilt
    assert len(os.listdir(new / "index")) == 3
    with open(stripped / "checkpoint", "rb") as f1, open(new / "checkpoint", "rb") as f2:
        assert f1.read() == f2.read()


def test_refusals(capsys, stripped, tmp_path, version):
    new = tmp_path / "new"
    new.mkdir()
    (new / "keep").write_text("x")
    code, _, err = run(capsys, "rebuild", stripped, "--out", new)
    assert code == status.ERROR and "not empty" in err and str(new) in err
    assert (new / "keep").read_text() == "x"
    code, _, err = run(capsys, "rebuild", stripped, "--out", new, "--force")
    assert code == status.ERROR and "holds files this command does not write" in err
    code, _, err = run(capsys, "rebuild", stripped, "--out", stripped / "inner")
    assert code == status.ERROR and "never writes into a store it reads" in err
    code, _, err = run(capsys, "rebuild", stripped, "--out", tmp_path / "x", "--only", "queues,bogus")
    assert code == status.ERROR and "bogus" in err
    code, _, err = run(capsys, "rebuild", stripped, "--out", tmp_path / "x", "--timezone", "Nowhere/Else")
    assert code == status.ERROR and "time zone" in err
    bad = tmp_path / "broker.conf"
    bad.write_text("mappedFileSizeConsumeQueue=abc\n")
    code, _, err = run(capsys, "rebuild", stripped, "--out", tmp_path / "x", "--config", bad)
    assert code == status.ERROR and str(bad) in err and "mappedFileSizeConsumeQueue" in err
    assert not os.path.exists(tmp_path / "x")
    # An earlier rebuild's output is replaced with --force.
    rebuild(capsys, stripped, tmp_path / "y", version)
    rebuild(capsys, stripped, tmp_path / "y", version, "--force")


def test_sizes_from_a_properties_file(capsys, stripped, tmp_path, version):
    conf = tmp_path / "broker.conf"
    conf.write_text("# broker\nmappedFileSizeCommitLog=262144\nmappedFileSizeConsumeQueue = 1280\n"
                    "mapperFileSizeBatchConsumeQueue=2944\nmaxHashSlotNum=64\nmaxIndexNum=256\n")
    new = tmp_path / "new"
    code, text, err = run(capsys, "rebuild", stripped, "--out", new, "--config", conf, "--timezone", TZ, "--json")
    assert code == status.OK, err
    assert files_under(new / "consumequeue") == files_under(store_path(version) / "consumequeue")
    assert all(f"config {conf}" in line for line in json.loads(text)["sizes"])
    assert IndexFile(str(new / "index" / os.listdir(new / "index")[0])).num_hash_slots == 64


def test_head_segment_deleted(capsys, tmp_path):
    """The broker deleted the oldest segment: the queues whose messages all lay there are kept as they were
    (their end is what consumer offsets refer to); the others are rebuilt from the messages left."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    first = sorted(os.listdir(store / "commitlog"))[0]
    os.remove(store / "commitlog" / first)
    new = tmp_path / "new"
    doc = rebuild(capsys, store, new, "rocketmq-5.3.3")
    assert doc["segments"] == 4 and "consumequeue/TopicTest/0" in doc["keptQueues"]
    original = files_under(store_path("rocketmq-5.3.3") / "consumequeue")
    rebuilt = files_under(new / "consumequeue")
    assert sorted(rebuilt) == sorted(original)
    for rel in original:
        if os.path.dirname(os.path.join("consumequeue", rel)) in doc["keptQueues"]:
            assert rebuilt[rel] == original[rel]
    result = cross_check(open_store(new))
    assert result.ok, [str(f) for f in result.findings]


def test_placeholders_before_a_queue_that_starts_late(tmp_path):
    """fillPreBlank: the first file of a queue whose first offset is not 0 starts with placeholder units."""
    import numpy as np

    from rmqformats.rebuild.writers import QueueFilesWriter
    from rmqformats.synth.commitlog import CQ_PLACEHOLDER, encode_cq_units
    w = QueueFilesWriter(str(tmp_path), 1280)
    w.put("T", 0, np.array([70, 71]), np.array([1000, 1100]), np.array([100, 120]), np.array([5, 6]))
    w.put("T", 0, np.array([71, 72]), np.array([1100, 1220]), np.array([120, 90]), np.array([6, 7]))
    assert os.listdir(tmp_path / "T" / "0") == ["00000000000000001280"]
    data = (tmp_path / "T" / "0" / "00000000000000001280").read_bytes()
    want = encode_cq_units([CQ_PLACEHOLDER] * 6 + [(1000, 100, 5), (1100, 120, 6), (1220, 90, 7)])
    assert data == want.ljust(1280, b"\0")
    assert w.ends[("T", 0)] == 73 and w.units == 3


@pytest.mark.parametrize("legacy", [False, True])
def test_index_writer_follows_put_key(tmp_path, legacy):
    """The vectorised index writer gives the bytes of the one-key-at-a-time builder (IndexFile.putKey):
    colliding slots, a file filled up and the next one inheriting its end, the begin time, legacy counts."""
    import numpy as np

    from rmqformats.rebuild.writers import IndexFilesWriter
    from rmqformats.synth.index import IndexServiceBuilder
    rng = np.random.default_rng(7)
    n = 700
    hashes = rng.integers(0, 1 << 31, n)
    hashes[::7] = hashes[0]  # many keys of one slot
    phys = np.sort(rng.integers(0, 1 << 40, n))
    stamps = 1795377022289 + np.sort(rng.integers(0, 4_000_000, n))
    want = IndexServiceBuilder(16, 256, legacy_slot_count=legacy)
    for h, p, t in zip(hashes.tolist(), phys.tolist(), stamps.tolist()):
        f = want._last()
        while not f.put_key("", p, t, key_hash=h):
            f = want._last()
    got = IndexFilesWriter(str(tmp_path), 16, 256, names=["a", "b", "c"], legacy_slot_count=legacy)
    for lo in range(0, n, 97):  # in batches of the walk
        got.put_keys(hashes[lo:lo + 97], phys[lo:lo + 97], stamps[lo:lo + 97])
    got.finish()
    assert len(want.files) == 3
    for name, builder in zip("abc", want.files):
        assert (tmp_path / name).read_bytes() == builder.build(), name
    assert got.last_full_end == want.files[1].end_timestamp


def test_a_store_the_broker_refuses_is_rebuilt_into_one_it_starts_on(capsys, tmp_path):
    """The incident of apache/rocketmq #9728: an empty last consume-queue file and a torn commit-log tail.
    preflight says the broker refuses; the rebuilt store starts cleanly and checks consistent."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    folder = store / "consumequeue" / "TopicCqRoll" / "0"
    last = sorted(os.listdir(folder))[-1]
    (folder / f"{int(last) + 1280:020d}").write_bytes(bytes(1280))
    walk = open_store(store).commitlog.batches(columns=["commitLogOffset"])
    for _ in walk:
        pass
    with open(walk.end.segment, "r+b") as f:
        f.seek(walk.end.file_offset)
        f.write(b"\x00\x00\x01\x00\xda\xa3\x20\xa7" + b"\x55" * 64)
    code, _, _ = run(capsys, "preflight", store, "--release", "5.3.3")
    assert code == status.PREFLIGHT_REFUSES
    new = tmp_path / "new"
    rebuild(capsys, store, new, "rocketmq-5.3.3")
    code, out, err = run(capsys, "preflight", new, "--release", "5.3.3")
    assert code == status.OK, out + err
    assert files_under(new / "consumequeue") == files_under(store_path("rocketmq-5.3.3") / "consumequeue")
    assert cross_check(open_store(new)).ok


def test_queue_offset_hole_gets_placeholders(tmp_path):
    """Queue offsets with no message (a record lost mid-log) are filled with placeholder units, never zeros,
    which would end the queue at the broker's next recovery."""
    import numpy as np

    from rmqformats.rebuild.writers import QueueFilesWriter
    from rmqformats.synth.commitlog import CQ_PLACEHOLDER, encode_cq_units
    w = QueueFilesWriter(str(tmp_path), 1280)
    w.put("T", 0, np.array([0, 1]), np.array([0, 100]), np.array([100, 100]), np.array([1, 1]))
    w.put("T", 0, np.array([4, 5]), np.array([200, 300]), np.array([100, 100]), np.array([1, 1]))
    data = (tmp_path / "T" / "0" / "00000000000000000000").read_bytes()
    want = encode_cq_units([(0, 100, 1), (100, 100, 1), CQ_PLACEHOLDER, CQ_PLACEHOLDER, (200, 100, 1), (300, 100, 1)])
    assert data == want.ljust(1280, b"\0") and w.holes == [("T", 0, 2, 4)]


def test_only_commitlog_and_checkpoint(capsys, tmp_path, version):
    new = tmp_path / "new"
    doc = rebuild(capsys, store_path(version), new, version, "--only", "commitlog,checkpoint")
    assert doc["parts"] == ["commitlog", "checkpoint"] and doc["queueUnits"] == 0 and not doc["indexFiles"]
    for part in ("consumequeue", "index", "config"):  # copied as they are
        assert files_under(new / part) == files_under(store_path(version) / part)
    cp = open_store(new).checkpoint()
    assert cp.index_msg_timestamp == open_store(store_path(version)).checkpoint().index_msg_timestamp
    code, _, _ = run(capsys, "preflight", new)
    assert code == status.OK


def test_config_metadata_is_copied(capsys, tmp_path):
    """useSingleRocksDBForAllConfigs' config/metadata/ travels with the config folder: the new store reads the
    same tables from it."""
    from rmqformats.rocksdb.config import read_rocksdb_configs
    from rmqformats.synth.rocksdb import write_config_metadata
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    write_config_metadata(str(store / "config"), offsets={"TopicTest@GroupA": {0: 5}},
                          data_versions={"consumerOffset": {"counter": 7, "timestamp": 1, "stateVersion": 0}})
    new = tmp_path / "new"
    code, _, err = run(capsys, "rebuild", store, "--out", new)
    assert code in (status.OK, status.FINDINGS), err
    [got] = [f for f in read_rocksdb_configs(new / "config", schemas=("consumerOffset",))
             if f.source == "rocksdb-metadata"]
    assert got.model.offset_table == {"TopicTest@GroupA": {0: 5}} and got.model.data_version.counter == 7


def test_a_cut_only_segment_names_where_its_data_ends_file_at_hex(tmp_path):
    """One segment file cut inside a record (of the 4.9.7 ground truth): the size falls back to the
    default, and the reason names where the data ends as every notice does, ``FILE @ 0xHEX``."""
    from conftest import truth_records

    from rmqformats.rebuild.sizes import commitlog_segment_size
    src = store_path("rocketmq-4.9.7") / "commitlog"
    first = sorted(p.name for p in src.iterdir())[0]
    rec = [t for t in truth_records("rocketmq-4.9.7") if t["file"] == first][5]
    folder = tmp_path / "commitlog"
    folder.mkdir()
    (folder / first).write_bytes((src / first).read_bytes()[:rec["fileOffset"] + 10])
    size, why = commitlog_segment_size(str(folder))
    assert size == 1 << 30
    assert f"(the data ends at commitlog/{first} @ 0x{rec['fileOffset']:x}: record cut off by the end of the file)" \
        in why, why
