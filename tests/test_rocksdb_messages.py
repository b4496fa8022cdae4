"""The 5.4/5.5 RocksDB layouts: the message store (rocksdbstore/: timer, transaction, index records) and the
RocksDB consume queue in its own folder (consumequeue_rocksdb/), on synthetic stores written through the specs.

No RocketMQ 5.4/5.5 build is at hand, so the stores are written by
:mod:`rmqformats.synth.rocksdb` with ``rocksdict``; the encodings are checked
against the byte layouts of ``TimerRocksDBRecord``, ``TransRocksDBRecord`` and
``IndexRocksDBRecord`` (apache/rocketmq, RIP-82), which the independent Rust
implementation (mxsm/rocketmq-rust ``rocketmq-store-rocksdb``) writes alike.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap

import pytest

import rmqformats
from rmqformats.cli import main
from rmqformats.errors import RocksDBError
from rmqformats.recovery import Kind, cross_check
from rmqformats.rocksdb import RocksDBMessageStore, held_lock
from rmqformats.rocksdb.consumequeue import offset_key
from rmqformats.synth.rocksdb import (index_key, index_value, mark_value, offset_value, timer_key, timer_value,
                                      trans_key, trans_value, write_rocksdb_message_store, write_rocksdb_queues,
                                      write_rocksdb_store)

from test_rocksdb import _snapshot, run

T0 = 1_700_000_000_000


# -- encodings ------------------------------------------------------------------------------------

def test_timer_record_bytes():
    """Key: big-endian delivery time, then the UNIQ_KEY in UTF-8; value: size (int), then offset (long)."""
    assert timer_key(T0, "7F00000100002A9F0000") == struct.pack(">q", T0) + b"7F00000100002A9F0000"
    assert timer_value(commitlog_offset=0x0102030405, size=321) == struct.pack(">iq", 321, 0x0102030405)
    assert len(timer_value(0, 1)) == 12


def test_transaction_record_bytes():
    """Key: big-endian commit-log offset, ``@topic@uniqKey``; value: check times, then size (two ints)."""
    assert trans_key(4096, "TopicTest", "AC1100") == struct.pack(">q", 4096) + b"@TopicTest@AC1100"
    assert trans_value(check_times=3, size=250) == struct.pack(">ii", 3, 250)


def test_index_record_bytes():
    """Key: hour, ``@topic@type@key@uniqKey@`` (``@topic@U@uniqKey@``), offset; value: the store time."""
    stamp = T0 + 1234
    hour = stamp // 3_600_000 * 3_600_000
    assert index_key(stamp, "TopicTest", "K", "order-1", "U1", 77) == \
        struct.pack(">q", hour) + b"@TopicTest@K@order-1@U1@" + struct.pack(">q", 77)
    assert index_key(stamp, "TopicTest", "U", "U1", "U1", 77) == \
        struct.pack(">q", hour) + b"@TopicTest@U@U1@" + struct.pack(">q", 77)
    assert index_value(stamp) == struct.pack(">q", stamp)
    assert mark_value(-1) == struct.pack(">q", -1)


def test_kaitai_parsers_read_the_built_records():
    """The Kaitai Python parsers generated from the same specs read what the construct schemas built."""
    from rmqformats.generated.kaitai.rocketmq_rocksdb_index_key import RocketmqRocksdbIndexKey
    from rmqformats.generated.kaitai.rocketmq_rocksdb_timer_key import RocketmqRocksdbTimerKey
    from rmqformats.generated.kaitai.rocketmq_rocksdb_timer_value import RocketmqRocksdbTimerValue
    from rmqformats.generated.kaitai.rocketmq_rocksdb_trans_key import RocketmqRocksdbTransKey
    from rmqformats.generated.kaitai.rocketmq_rocksdb_trans_value import RocketmqRocksdbTransValue
    k = RocketmqRocksdbTimerKey.from_bytes(timer_key(T0, "UK"))
    assert (k.delivery_time, k.uniq_key) == (T0, "UK")
    v = RocketmqRocksdbTimerValue.from_bytes(timer_value(99, 7)).timer
    assert (v.ofs_commitlog, v.len_message) == (99, 7)
    t = RocketmqRocksdbTransKey.from_bytes(trans_key(5, "T", "U"))
    assert (t.ofs_commitlog, t.topic_and_uniq_key) == (5, "T@U")
    tv = RocketmqRocksdbTransValue.from_bytes(trans_value(2, 9)).trans
    assert (tv.check_times, tv.len_message) == (2, 9)
    x = RocketmqRocksdbIndexKey.from_bytes(index_key(T0, "T", "T", "TagA", "U", 11))
    assert (x.store_hour, x.middle, x.ofs_commitlog) == (T0 // 3_600_000 * 3_600_000, "T@T@TagA@U@", 11)


# -- reading --------------------------------------------------------------------------------------

@pytest.fixture
def store55(tmp_path):
    root = tmp_path / "store"
    info = write_rocksdb_store(str(root))
    return root, info


def test_reader_gives_every_record_and_mark(store55):
    root, info = store55
    with RocksDBMessageStore(root / "rocksdbstore") as ms:
        assert [(t.delivery_time, t.uniq_key, t.commitlog_offset, t.size) for t in ms.timer_entries()] == info["timer"]
        assert [(t.commitlog_offset, t.topic, t.uniq_key, t.check_times, t.size) for t in ms.trans_entries()] == \
            info["trans"]
        got = [(e.store_timestamp, e.topic, e.index_type, e.key, e.uniq_key, e.commitlog_offset)
               for e in ms.index_entries()]
        assert got == info["index"]
        assert ms.marks("timer") == {"sys_topic_scan_offset_checkpoint": 3, "timeline_checkpoint": T0}
        assert ms.marks("trans") == {"lastOffsetPy": max(t[0] for t in info["trans"])}
        first, second = info["timer"][1][0], info["timer"][2][0]
        assert [t.delivery_time for t in ms.timer_entries(start_time=first, stop_time=second)] == [first]
        assert not ms.copied and ms.locked_by is None


@pytest.mark.parametrize("folder", ["consumequeue_rocksdb", "consumequeue_r"])
def test_inspect_lists_the_rocksdb_timer_transaction_and_queue_data(capsys, tmp_path, folder):
    root = tmp_path / "store"
    info = write_rocksdb_store(str(root), queue_folder=folder)
    code, out, _ = run(capsys, "inspect", root, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    rq = doc["rocksdbConsumeQueue"]
    assert rq["path"] == str(root / folder) and rq["queues"] == 3 and rq["units"] == 11
    assert rq["dispatchedTo"] == info["dataEnd"]
    ms = doc["rocksdbMessageStore"]
    assert ms["path"] == str(root / "rocksdbstore") and sorted(ms["columnFamilies"]) == ["default", "timer", "trans"]
    assert ms["timer"] == {"records": 3, "sys_topic_scan_offset_checkpoint": 3, "timeline_checkpoint": T0}
    assert ms["trans"]["records"] == 2 and ms["index"]["records"] == 6
    assert ms["readFromCopy"] is False
    code, text, _ = run(capsys, "inspect", root)
    assert f"consume queue database {root / folder}: 3 queues, 11 units" in text
    assert f"message store {root / 'rocksdbstore'}" in text
    assert "3 timer records (RocksDB timer engine)" in text and "2 open transactions" in text
    assert "6 index entries" in text


def test_queue_and_lag_read_the_separate_folder(capsys, store55):
    root, info = store55
    code, out, _ = run(capsys, "queue", root, "TopicTest", "0", "--format", "jsonl")
    assert code == 0
    units = [json.loads(line) for line in out.splitlines()]
    want = [(qo, phy, size) for qo, phy, size, _, _ in info["queues"][("TopicTest", 0)]]
    assert [(u["cqOffset"], u["commitLogOffset"], u["size"]) for u in units] == want
    (root / "config").mkdir()
    (root / "config" / "consumerOffset.json").write_text('{"offsetTable":{"TopicTest@G":{0:2}}}')
    code, out, _ = run(capsys, "lag", root, "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["group"], r["topic"], r["queueId"], r["committedOffset"], r["maxOffset"], r["lag"], r["queueFound"])
            for r in rows] == [("G", "TopicTest", 0, 2, 6, 4, True)]
    assert rows[0]["nextMessageStoreTime"] == info["queues"][("TopicTest", 0)][2][4]


def test_dump_lists_the_records_of_the_message_store(capsys, store55):
    root, info = store55
    code, out, _ = run(capsys, "dump", root / "rocksdbstore", "--format", "jsonl")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    kinds = [r["record"] for r in records]
    assert kinds.count("timer") == 3 and kinds.count("transaction") == 2 and kinds.count("index") == 6
    assert kinds.count("mark") == 5
    timers = [r for r in records if r["record"] == "timer"]
    assert [(r["deliveryTimeMs"], r["commitLogOffset"], r["size"]) for r in timers] == \
        [(t[0], t[2], t[3]) for t in info["timer"]]


# -- the two-way check ----------------------------------------------------------------------------

def test_clean_store_checks_clean(capsys, store55):
    root, _ = store55
    result = cross_check(rmqformats.open_store(root))
    assert result.problems == 0, [str(f) for f in result.findings]
    assert result.queues == 3 and result.timer_units == 3
    assert sum(result.verified.values()) == 11
    code, out, _ = run(capsys, "check", root, "--format", "json")
    assert code == 0 and json.loads(out)["ok"] is True


def _rewrite_queues(root, queues, folder="consumequeue_rocksdb", **options):
    shutil.rmtree(root / folder)
    write_rocksdb_queues(str(root / folder), queues, **options)


def _rewrite_messages(root, info, **changes):
    shutil.rmtree(root / "rocksdbstore")
    args = {"timer": info["timer"], "trans": info["trans"], "index": info["index"],
            "timer_scan_offset": info["timerScanOffset"], "timeline": info["timeline"], **changes}
    write_rocksdb_message_store(str(root / "rocksdbstore"), **args)


def test_check_finds_a_rocksdb_queue_unit_past_the_end_of_data(capsys, store55):
    root, info = store55
    queues = dict(info["queues"])
    end = info["dataEnd"]
    queues[("TopicTest", 0)] = [*queues[("TopicTest", 0)], (6, end + 512, 120, 0, T0 + 9)]
    _rewrite_queues(root, queues)
    result = cross_check(rmqformats.open_store(root))
    past = [f for f in result.findings if f.kind is Kind.UNIT_PAST_END]
    assert len(past) == 1 and past[0].commitlog_offset == end + 512 and past[0].queue_offset == 6
    assert past[0].other.path == str(root / "consumequeue_rocksdb") and past[0].other.key == "[default] TopicTest/0/6"
    bound = [f for f in result.findings if f.kind is Kind.QUEUE_BOUND]
    assert len(bound) == 1 and "max value" in bound[0].text and bound[0].other.key == "[offset] TopicTest/0 max"
    assert Kind.QUEUE_AHEAD in result.counts
    code, out, _ = run(capsys, "check", root, "--format", "json")
    doc = json.loads(out)
    assert code != 0 and doc["counts"]["unit-past-end"] == 1 and doc["counts"]["queue-bound-disagrees"] == 1


def test_check_finds_a_rocksdb_min_ahead_of_the_commit_log(store55):
    """The broker's min offset (its ``min`` value while on disk) past messages the commit log still holds."""
    root, info = store55
    from rocksdict import Options, Rdict
    path = str(root / "consumequeue_rocksdb")
    db = Rdict(path, options=Options(raw_mode=True), column_families={"offset": Options(raw_mode=True)})
    qo, phy, *_ = info["queues"][("TopicTest", 0)][2]
    db.get_column_family("offset")[offset_key("TopicTest", 0, "min")] = offset_value(phy, qo)
    db.close()
    os.remove(os.path.join(path, "rocksdict-config.json"))
    result = cross_check(rmqformats.open_store(root))
    bound = [f for f in result.findings if f.kind is Kind.QUEUE_BOUND]
    assert len(bound) == 1 and "skips 2 message(s)" in bound[0].text


def test_check_finds_a_missing_rocksdb_unit(store55):
    root, info = store55
    queues = dict(info["queues"])
    queues[("TopicTest", 0)] = [u for u in queues[("TopicTest", 0)] if u[0] != 3]
    _rewrite_queues(root, queues)
    result = cross_check(rmqformats.open_store(root))
    missing = [f for f in result.findings if f.kind is Kind.MISSING_UNIT]
    assert [(f.topic, f.queue_offset) for f in missing] == [("TopicTest", 3)]
    assert missing[0].other.key == "[default] TopicTest/0/3"


def test_check_finds_a_timer_record_past_the_end_of_data(capsys, store55):
    root, info = store55
    end = info["dataEnd"]
    _rewrite_messages(root, info, timer=[*info["timer"], (T0 + 999_000, "LATE", end + 64, 200)])
    result = cross_check(rmqformats.open_store(root))
    late = [f for f in result.findings if f.kind is Kind.TIMER_PAST_END]
    assert len(late) == 1 and late[0].commitlog_offset == end + 64
    assert late[0].other.path == str(root / "rocksdbstore") and late[0].other.key.startswith("[timer] ")
    assert late[0].other_label() == "timer store"
    assert result.timer_units == 4
    code, out, _ = run(capsys, "check", root)
    assert code != 0 and "timer-unit-past-end" in out and "timer store" in out
    code, out, _ = run(capsys, "check", root, "--no-timer", "--format", "json")
    assert "timer-unit-past-end" not in json.loads(out)["counts"]


def test_check_finds_a_timer_record_at_a_message_that_is_no_timer_message(store55):
    root, info = store55
    phy, size = info["offsets"]["TopicTest"][0]
    _rewrite_messages(root, info, timer=[*info["timer"], (T0 + 5, "WRONG", phy, size)])
    found = [f for f in cross_check(rmqformats.open_store(root)).findings if f.kind is Kind.TIMER_NOT_TIMER]
    assert len(found) == 1 and "'TopicTest'" in found[0].text


def test_check_finds_a_transaction_record_past_the_end_of_data(store55):
    root, info = store55
    end = info["dataEnd"]
    _rewrite_messages(root, info, trans=[*info["trans"], (end + 8, "TopicTest", "GONE", 1, 180)])
    found = [f for f in cross_check(rmqformats.open_store(root)).findings if f.kind is Kind.TRANS_PAST_END]
    assert len(found) == 1 and found[0].commitlog_offset == end + 8
    assert found[0].other.key == f"[trans] {end + 8}@TopicTest@GONE"


def test_check_notes_a_tail_past_the_confirm_offset(capsys, tmp_path):
    root = tmp_path / "store"
    probe = write_rocksdb_store(str(tmp_path / "probe"))
    confirm = probe["offsets"]["TopicTest"][3][0]  # the 4th message: 7 messages start after it
    write_rocksdb_store(str(root), confirm_offset=confirm)
    result = cross_check(rmqformats.open_store(root))
    notes = [f for f in result.findings if f.kind is Kind.AFTER_CONFIRM]
    assert len(notes) == 1 and notes[0].text.startswith(f"7 message(s) start past the checkpoint's confirmPhyOffset "
                                                        f"{confirm}")
    assert notes[0].other.path == str(root / "checkpoint") and notes[0].other.offset == 32
    assert result.recovery.after_confirm == (7, probe["offsets"]["TopicTest"][4][0])
    code, out, _ = run(capsys, "check", root, "--format", "json")
    assert json.loads(out)["counts"]["after-confirm-offset"] == 1


def test_a_damaged_record_is_reported_with_database_column_family_and_key(capsys, store55):
    root, info = store55
    from rocksdict import Options, Rdict
    path = str(root / "rocksdbstore")
    db = Rdict(path, options=Options(raw_mode=True), column_families={n: Options(raw_mode=True)
                                                                       for n in ("timer", "trans")})
    db.get_column_family("timer")[timer_key(T0 + 7, "BAD")] = b"\x00" * 10
    db.close()
    os.remove(os.path.join(path, "rocksdict-config.json"))
    with RocksDBMessageStore(path) as ms, pytest.raises(RocksDBError) as exc:
        list(ms.timer_entries())
    assert exc.value.path == path and exc.value.column_family == "timer" and "value is 10 bytes" in str(exc.value)
    result = cross_check(rmqformats.open_store(root))
    assert [f.other.path for f in result.findings if f.kind is Kind.UNREADABLE] == [path]
    code, out, _ = run(capsys, "inspect", root, "--format", "json")
    assert "value is 10 bytes, expected 12" in json.loads(out)["rocksdbMessageStore"]["error"]


# -- a live database --------------------------------------------------------------------------------

def test_a_database_whose_lock_a_broker_holds_is_read_from_a_copy(capsys, store55):
    """Another process holds rocksdbstore/LOCK (as RocksDB does, with fcntl): read from a copy, and say so."""
    root, info = store55
    path = root / "rocksdbstore"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, sys, time
        f = open({str(path / 'LOCK')!r}, "r+b")
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("locked", flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = _snapshot(path)
        assert held_lock(path) == holder.pid
        with RocksDBMessageStore(path) as ms:
            assert len(list(ms.timer_entries())) == 3
            assert ms.copied and ms.locked_by == holder.pid
        code, text, _ = run(capsys, "inspect", root)
        assert code == 0 and f"read from a copy: process {holder.pid} (a running broker) holds the database's LOCK" \
            in text
        assert _snapshot(path) == before  # nothing written, renamed or locked in the database's folder
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert held_lock(path) is None


# -- release knowledge ------------------------------------------------------------------------------

def test_schema_diff_lists_the_54_and_55_layouts(capsys):
    code, out, _ = run(capsys, "schema-diff", "5.3.3", "5.5.0", "--format", "json")
    changes = {c["location"]: c for c in json.loads(out)["changes"]}
    for spec in ("timer_key", "timer_value", "trans_key", "trans_value", "index_key", "index_value",
                 "message_mark"):
        c = changes[f"formats/rocketmq_rocksdb_{spec}.ksy"]
        assert (c["rule"], c["release"]) == ("FILE_ADDED", "5.4.0")
        assert c["citation"].startswith("rocketmq-all-5.4.0:store/src/main/java/org/apache/rocketmq/store/")
    c = changes["formats/releases.yaml:files/rocksdb_consumequeue_separate"]
    assert (c["rule"], c["release"]) == ("FILE_ADDED", "5.5.0")
    assert c["citation"].endswith("StorePathConfigHelper.java")
    code, out, _ = run(capsys, "schema-diff", "5.3.3", "5.4.0", "--format", "json")
    assert "formats/releases.yaml:files/rocksdb_consumequeue_separate" not in \
        {c["location"] for c in json.loads(out)["changes"]}


def test_report_shows_the_message_store_and_the_rocksdb_findings(store55):
    root, info = store55
    _rewrite_messages(root, info, timer=[*info["timer"], (T0 + 999_000, "LATE", info["dataEnd"] + 64, 200)])
    from rmqformats.recovery.report import build_report, render_html
    report = build_report(rmqformats.open_store(root))
    assert report.rocksdb_messages["timer"]["records"] == 4
    assert {k for _, _, k, *_ in report.queues} == {"RocksDBConsumeQueue"}
    page = render_html(report)
    assert "RocksDB message store" in page and "4 timer record(s), 2 open transaction(s), 6 index entries" in page
    assert "timer-unit-past-end" in page and "[timer] " in page


# -- the broker's persisted settings ---------------------------------------------------------------

def test_broker_properties_are_read_as_java_properties(tmp_path):
    from rmqformats.brokerconfig import read_broker_properties
    path = tmp_path / "broker.properties"
    path.write_bytes(b"# comment\n! other comment\nbrokerName=broker-a\n  storeType : defaultRocksDB\n"
                     b"timerRocksDBEnable true\nlong=one \\\n    two\nesc=a\\tb\\u00e9\\\\\nlatin=\xe9\n")
    props = read_broker_properties(path)
    assert props.values == {"brokerName": "broker-a", "storeType": "defaultRocksDB", "timerRocksDBEnable": "true",
                            "long": "one two", "esc": "a\tb\u00e9\\", "latin": "\u00e9"}
    assert props.timer_engine() == "rocksdb" and props.notes() == []


def test_inspect_shows_the_timer_engine_and_the_key_written_before_the_fix(capsys, store55):
    """switchTimerEngine persisted timerUseRocksDB before apache/rocketmq#10086: the broker reads timerRocksDBEnable."""
    root, _ = store55
    (root / "config").mkdir()
    # What MixAll.properties2String writes: key=value lines, in no order.
    (root / "config" / "broker.properties").write_text(
        "brokerName=broker-a\ntransRocksDBEnable=true\ntimerUseRocksDB=true\nuseSeparateStorePathForRocksdbCQ=true\n")
    code, out, _ = run(capsys, "inspect", root, "--format", "json")
    bp = json.loads(out)["brokerProperties"]
    assert bp["timerEngine"] == "file"
    assert bp["settings"] == {"transRocksDBEnable": "true", "useSeparateStorePathForRocksdbCQ": "true",
                              "timerUseRocksDB": "true"}
    assert len(bp["notes"]) == 1 and "apache/rocketmq#10086" in bp["notes"][0]
    assert "file time wheel" in bp["notes"][0]
    code, text, _ = run(capsys, "inspect", root)
    assert "timer engine file time wheel" in text and "timerUseRocksDB=true" in text


@pytest.mark.parametrize("column_family, key, value, reason", [
    ("timer", struct.pack(">q", 0) + b"UK", timer_value(1, 2), "not a record key"),
    ("timer", struct.pack(">q", T0) + b"\xff\xfe", timer_value(1, 2), "not a record key"),
    ("trans", struct.pack(">q", 9) + b"#T#U", trans_value(0, 2), "not a record key"),
    ("trans", struct.pack(">q", 9) + b"@TopicOnly", trans_value(0, 2), "not topic@uniqKey"),
    ("default", struct.pack(">q", T0) + b"@T@X@k@U@" + struct.pack(">q", 5), index_value(T0), "neither"),
    ("default", struct.pack(">q", T0) + b"@T@", index_value(T0), "not a record key"),
])
def test_keys_the_broker_does_not_write_are_typed_errors(tmp_path, column_family, key, value, reason):
    """A key the spec rejects (a time of 0, bad UTF-8, no separator, a wrong index type) names database, family, key."""
    path = str(tmp_path / "rocksdbstore")
    write_rocksdb_message_store(path)
    from rocksdict import Options, Rdict
    db = Rdict(path, options=Options(raw_mode=True), column_families={n: Options(raw_mode=True)
                                                                       for n in ("timer", "trans")})
    (db if column_family == "default" else db.get_column_family(column_family))[key] = value
    db.close()
    os.remove(os.path.join(path, "rocksdict-config.json"))
    read = {"timer": "timer_entries", "trans": "trans_entries", "default": "index_entries"}[column_family]
    with RocksDBMessageStore(path) as ms, pytest.raises(RocksDBError) as exc:
        list(getattr(ms, read)())
    assert exc.value.path == path and exc.value.column_family == column_family and exc.value.key == key
    assert reason in str(exc.value)
