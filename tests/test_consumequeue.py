"""Consume queues: units, offsets and messages equal RocketMQ's ground truth; consistency; bad input."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

import rmqformats
from rmqformats import synth
from rmqformats.consumequeue import (
    SCHEDULE_TOPIC, UNIT_DTYPE, CqUnit, UnitStatus, expected_tags_code, java_string_hash, tags_code)
from rmqformats.errors import QueueFileError, UnitNotFoundError
from rmqformats.generated.construct import rocketmq_consumequeue as cs_cq
from rmqformats.generated.kaitai.rocketmq_consumequeue import RocketmqConsumequeue

from conftest import FIXTURES, store_path, truth_records
from test_commitlog_api import api_row
from truthcmp import mismatches


def _truth(version: str, name: str):
    return json.loads((FIXTURES / version / "truth" / name).read_text(encoding="utf-8"))


def _truth_queues(version: str):
    for topic, queues in _truth(version, "consumequeue.json").items():
        for qid, data in queues.items():
            yield topic, int(qid), data


def _truth_units(data) -> list[dict]:
    return [{"cqOffset": u["cqIndex"], "commitLogOffset": u["commitlogOffset"], "size": u["size"],
             "tagsCode": u["tagsCode"]} for u in data["units"]]


def test_queues_found_match_truth(version):
    store = rmqformats.open_store(store_path(version))
    found = {(q.topic, q.queue_id): q for q in store.queues()}
    truth = {(t, q): d for t, q, d in _truth_queues(version)}
    assert set(found) == set(truth)
    api = _truth(version, "api_view.json")["getMessage"]
    for key, info in found.items():
        assert info.error is None
        assert info.num_files == len(truth[key]["files"])
        # RocketMQ's own getMinOffsetInQueue / getMaxOffsetInQueue after load().
        view = api[f"{key[0]}/{key[1]}"]
        assert (info.min_offset, info.max_offset) == (view["minOffset"], view["maxOffset"]), key


def test_units_equal_truth(version):
    store = rmqformats.open_store(store_path(version))
    n = 0
    for topic, qid, data in _truth_queues(version):
        cq = store.consume_queue(topic, qid)
        assert [f.name for f in cq.files.files] == data["files"]
        assert [u.to_json_dict() for u in cq.units()] == _truth_units(data), (topic, qid)
        n += len(data["units"])
    assert n > 300


def test_resolved_messages_equal_truth(version):
    store = rmqformats.open_store(store_path(version))
    by_offset = {r["commitlogOffset"]: r for r in truth_records(version) if r["kind"] == "MESSAGE"}
    api = _truth(version, "api_view.json")["getMessage"]
    checked = 0
    for topic, qid, data in _truth_queues(version):
        resolved = list(store.consume_queue(topic, qid).messages())
        assert all(r.status is UnitStatus.OK for r in resolved)
        for r in resolved:
            assert mismatches(api_row(r.message), by_offset[r.unit.commitlog_offset]) == []
            checked += 1
        # What RocketMQ's getMessage returned for this queue, in order.
        assert [(r.unit.cq_offset, r.message.physical_offset, r.message.store_size, r.message.msg_id)
                for r in resolved] == [(m["queueOffset"], m["physicalOffset"], m["storeSize"], m["msgId"])
                                       for m in api[f"{topic}/{qid}"]["messages"]]
    assert checked == sum(len(d["units"]) for _, _, d in _truth_queues(version))


def test_tags_code_is_what_the_broker_dispatched(version):
    store = rmqformats.open_store(store_path(version))
    seen = 0
    for r in truth_records(version):
        if r["kind"] != "MESSAGE" or not r["dispatch"]["success"] or r["topic"] == SCHEDULE_TOPIC:
            continue
        assert tags_code(r["tags"]) == r["dispatch"]["tagsCode"], r["tags"]
        seen += 1
    assert seen > 250
    assert java_string_hash("标签") == next(r["dispatch"]["tagsCode"] for r in truth_records(version)
                                           if r.get("tags") == "标签")
    # Delivery times of delayed messages: store time plus the level's delay.
    for r in truth_records(version):
        if r["kind"] == "MESSAGE" and r["topic"] == SCHEDULE_TOPIC:
            assert expected_tags_code(store.commitlog.read(r["commitlogOffset"])) == r["dispatch"]["tagsCode"]


def test_java_string_hash_edge_cases():
    assert java_string_hash("") == 0
    assert java_string_hash("TagA") == 2598919
    assert java_string_hash("polygenelubricants") == -(1 << 31)
    assert java_string_hash("🚀") == 31 * 0xD83D + 0xDE80  # two UTF-16 code units


def test_tag_filter(version):
    store = rmqformats.open_store(store_path(version))
    cq = store.consume_queue("TopicTest", 0)
    tagged = [r for r in cq.messages(tag="TagA")]
    assert tagged and all(r.message.tags == "TagA" for r in tagged)
    assert [r.unit.cq_offset for r in tagged] == [
        u.cq_offset for u in cq.units() if store.commitlog.read(u.commitlog_offset).tags == "TagA"]
    assert [u.cq_offset for u in cq.units(tag="TagA")] == [r.unit.cq_offset for r in tagged]
    delay = store.consume_queue(SCHEDULE_TOPIC, 0)
    with pytest.raises(ValueError):
        list(delay.units(tag="Delay"))
    assert [r.message.tags for r in delay.messages(tag="Delay")] == ["Delay"]


def test_unit_by_offset_and_ranges(version):
    store = rmqformats.open_store(store_path(version))
    cq = store.consume_queue("TopicCqRoll", 0)
    assert len(cq.files.files) == 3 and cq.max_offset == 150
    units = list(cq.units())
    assert cq.unit(64) == units[64]  # first unit of the second file
    assert list(cq.units(60, 70)) == units[60:70]
    assert len(cq.unit_array(0, 150)) == 150 and cq.unit_array().dtype.names == UNIT_DTYPE.names
    for bad in (-1, 150, 10**12):
        with pytest.raises(UnitNotFoundError) as exc:
            cq.unit(bad)
        assert "TopicCqRoll/0" in str(exc.value)
    missing = store.consume_queue("NoSuchTopic", 0)
    assert (missing.min_offset, missing.max_offset, list(missing.units())) == (0, 0, [])


def test_kaitai_and_construct_read_the_same_units(version):
    folder = store_path(version) / "consumequeue" / "TopicCqRoll" / "0"
    store = rmqformats.open_store(store_path(version))
    api = {(u.commitlog_offset, u.size, u.tags_code) for u in store.consume_queue("TopicCqRoll", 0).units()}
    for path in sorted(folder.iterdir()):
        data = path.read_bytes()
        k = [(u.ofs_commitlog, u.len_message, u.tags_code) for u in RocketmqConsumequeue.from_bytes(data).units
             if u.is_valid]
        c = [(u.ofs_commitlog, u.len_message, u.tags_code) for u in cs_cq.rocketmq_consumequeue.parse(data)["units"]
             if u.is_valid]
        assert k == c and set(k) <= api
        # Every unit, the zero tail included, rebuilds byte for byte through the construct schema.
        units = RocketmqConsumequeue.from_bytes(data).units
        assert synth.encode_cq_units((u.ofs_commitlog, u.len_message, u.tags_code) for u in units) == data


# -- consistency --------------------------------------------------------------------------


def test_vectors_are_consistent(version):
    store = rmqformats.open_store(store_path(version))
    report = store.check_consistency()
    assert report.ok, [str(p) for p in report.problems]
    batch = json.loads((FIXTURES / version / "truth" / "batchconsumequeue.json").read_text(encoding="utf-8")) \
        if (FIXTURES / version / "truth" / "batchconsumequeue.json").exists() else {}
    batch_units = sum(len(d["units"]) for qs in batch.values() for d in qs.values())
    assert report.queues == len(list(_truth_queues(version))) + sum(len(qs) for qs in batch.values())
    assert report.units == sum(len(d["units"]) for _, _, d in _truth_queues(version)) + batch_units
    assert report.deleted == 0


@pytest.mark.parametrize("field,pos,value,expected_field", [
    ("size", 8, (999).to_bytes(4, "big"), "size"),
    ("tagsCode", 12, (12345).to_bytes(8, "big"), "tagsCode"),
    ("commitLogOffset", 0, "other-topic", "topic"),
    ("commitLogOffset+1", 0, None, "message"),
])
def test_corrupted_unit_is_reported_exactly(store_copy, field, pos, value, expected_field):
    path = store_copy / "consumequeue" / "TopicTest" / "2" / "00000000000000000000"
    unit_no = 7
    data = bytearray(path.read_bytes())
    at = unit_no * 20 + pos
    if value is None:  # point one byte into the record
        value = (int.from_bytes(data[at:at + 8], "big") + 1).to_bytes(8, "big")
    elif value == "other-topic":  # point at the message of another topic
        value = rmqformats.open_store(store_copy).consume_queue("%DLQ%GroupA", 0).unit(0).commitlog_offset
        value = value.to_bytes(8, "big")
    data[at:at + len(value)] = value
    path.write_bytes(bytes(data))
    report = rmqformats.open_store(store_copy).check_consistency()
    assert not report.ok
    assert len(report.problems) >= 1
    p = report.problems[0]
    assert (p.topic, p.queue_id, p.cq_offset, p.field) == ("TopicTest", 2, unit_no, expected_field)
    assert p.where == f"{os.path.abspath(path)} @ 0x{unit_no * 20:x}"  # the whole path, as errors name files
    assert all(q.cq_offset == unit_no for q in report.problems)
    assert f"@ 0x{unit_no * 20:x}" in str(p)


def test_swapped_queue_offsets_are_reported(store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "1" / "00000000000000000000"
    data = bytearray(path.read_bytes())
    data[0:20], data[20:40] = data[20:40], data[0:20]
    path.write_bytes(bytes(data))
    report = rmqformats.open_store(store_copy).check_consistency(topic="TopicTest")
    assert [(p.cq_offset, p.field) for p in report.problems] == [(0, "queueOffset"), (1, "queueOffset")]
    assert report.queues == 4


# -- synthetic queues: placeholders, deleted heads, bad files -----------------------------------


def _synthetic_store(tmp_path: Path, version: str = "rocketmq-5.1.4") -> Path:
    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    return root


def test_placeholders_and_non_zero_first_file(tmp_path):
    root = _synthetic_store(tmp_path)
    store = rmqformats.open_store(root)
    real = [(u.commitlog_offset, u.size, u.tags_code) for u in store.consume_queue("TopicTest", 0).units()]
    folder = root / "consumequeue" / "Moved" / "0"
    # A queue created at logical offset 70: file 1 (units 64..127) starts with placeholders.
    synth.write_consume_queue(folder, [synth.CQ_PLACEHOLDER] * 6 + real[:5], file_units=64, first_unit=64)
    cq = rmqformats.open_store(root).consume_queue("Moved", 0)
    assert [f.name for f in cq.files.files] == [f"{64 * 20:020d}"]
    assert (cq.min_offset, cq.max_offset) == (70, 75)
    assert [u.cq_offset for u in cq.units()] == [70, 71, 72, 73, 74]
    assert cq.resolve(cq.unit(64)).status is UnitStatus.PLACEHOLDER
    assert cq.unit(64).is_placeholder and not cq.unit(70).is_placeholder
    with pytest.raises(UnitNotFoundError):
        cq.unit(10)  # its file was never written (or was deleted)


def test_units_of_a_deleted_commitlog_head(store_copy):
    store = rmqformats.open_store(store_copy)
    first = store.commitlog.segments[0]
    os.remove(first.path)
    store = rmqformats.open_store(store_copy)
    statuses, deleted = [], 0
    for q in store.queues():
        cq = store.consume_queue(q.topic, q.queue_id)
        statuses += [cq.resolve(u).status for u in cq.units()]
        deleted += sum(u.commitlog_offset < first.start_offset + first.size for u in cq.units())
    assert UnitStatus.DELETED in statuses and UnitStatus.OK in statuses
    assert statuses.count(UnitStatus.DELETED) == deleted
    assert set(statuses) == {UnitStatus.DELETED, UnitStatus.OK}
    report = store.check_consistency()
    assert report.ok and report.deleted == deleted > 0
    # getMinOffsetInQueue skips what is gone (correctMinOffset); the units stay listed.
    for q in store.queues():
        cq = store.consume_queue(q.topic, q.queue_id)
        gone = [u.cq_offset for u in cq.units() if u.commitlog_offset < first.start_offset + first.size]
        assert q.min_offset == cq.min_offset == (max(gone) + 1 if gone else 0)


def test_unit_past_the_commitlog_end(tmp_path):
    root = _synthetic_store(tmp_path)
    end = rmqformats.open_store(root).commitlog.segments[-1]
    folder = root / "consumequeue" / "Ahead" / "0"
    synth.write_consume_queue(folder, [(end.start_offset + end.size + 100, 200, 0)], file_units=64)
    store = rmqformats.open_store(root)
    resolved = store.consume_queue("Ahead", 0).resolve(store.consume_queue("Ahead", 0).unit(0))
    assert resolved.status is UnitStatus.BEYOND_END
    report = store.check_consistency(topic="Ahead")
    assert [(p.cq_offset, p.field) for p in report.problems] == [(0, "message")]


def test_truncated_file_is_a_typed_error(store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    with open(path, "r+b") as f:
        f.truncate(20 * 10 + 7)
    store = rmqformats.open_store(store_copy)
    with pytest.raises(QueueFileError) as exc:
        list(store.consume_queue("TopicTest", 0).units())
    assert str(exc.value) == ("0/00000000000000000000 @ 0xc8: file size 207 is not a multiple of the "
                              "20-byte unit (a unit is cut short)")
    info = {(q.topic, q.queue_id): q for q in store.queues()}[("TopicTest", 0)]
    assert info.error and "0xc8" in info.error
    report = store.check_consistency()
    assert not report.ok and report.unreadable[0][:2] == ("TopicTest", 0)


def test_zero_filled_and_empty_files(store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    size = path.stat().st_size
    path.write_bytes(bytes(size))
    cq = rmqformats.open_store(store_copy).consume_queue("TopicTest", 0)
    assert (cq.min_offset, cq.max_offset, list(cq.units())) == (0, 0, [])
    path.write_bytes(b"")
    cq = rmqformats.open_store(store_copy).consume_queue("TopicTest", 0)
    assert (cq.max_offset, list(cq.units())) == (0, [])


def test_zero_unit_in_the_middle_ends_the_queue_like_recovery(store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    data = bytearray(path.read_bytes())
    data[5 * 20:6 * 20] = bytes(20)
    path.write_bytes(bytes(data))
    cq = rmqformats.open_store(store_copy).consume_queue("TopicTest", 0)
    assert cq.max_offset == 5


def test_gap_between_files(store_copy):
    folder = store_copy / "consumequeue" / "TopicCqRoll" / "0"
    os.remove(folder / "00000000000000001280")
    with pytest.raises(QueueFileError) as exc:
        rmqformats.open_store(store_copy).consume_queue("TopicCqRoll", 0).max_offset
    assert "gap in the queue" in str(exc.value) and "00000000000000002560" in str(exc.value)


def test_reading_changes_nothing(version):
    root = store_path(version)
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "consumequeue").rglob("*") if p.is_file()}
    store = rmqformats.open_store(root)
    store.check_consistency()
    for q in store.queues():
        list(store.consume_queue(q.topic, q.queue_id).messages())
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in before}
    assert before == after


def test_cq_unit_json_names():
    u = CqUnit(3, 100, 200, -5)
    assert u.to_json_dict() == {"cqOffset": 3, "commitLogOffset": 100, "size": 200, "tagsCode": -5}
    assert not u.is_ext_address
    assert CqUnit(0, 0, 20, -(1 << 63) + 40).is_ext_address
