"""Batch consume queues (5.x): units and messages equal RocketMQ's ground truth; offsets; checks; bad input."""

from __future__ import annotations

import json
import os

import pytest

import rmqformats
from rmqformats.batch_consumequeue import (
    INNER_BASE, UNIT_SIZE, BatchConsumeQueue, BcqUnit, list_batch_queues)
from rmqformats.errors import QueueFileError, UnitMismatchError, UnitNotFoundError
from rmqformats.generated.construct import rocketmq_batch_consumequeue as cs_bcq
from rmqformats.generated.kaitai.rocketmq_batch_consumequeue import RocketmqBatchConsumequeue
from rmqformats.synth.queues import (
    BcqUnitSpec, encode_bcq_end_of_file, encode_bcq_unit, write_batch_consumequeue)

from conftest import FIXTURES, store_path, truth_records
from test_commitlog_api import api_row
from truthcmp import mismatches

V5 = "rocketmq-5.1.4"
TOPIC = "TopicBatchCQ"
FILE = "00000000000000000000"


def _truth(name: str):
    return json.loads((FIXTURES / V5 / "truth" / name).read_text(encoding="utf-8"))


def _bcq(root=None) -> BatchConsumeQueue:
    return rmqformats.open_store(root or store_path(V5)).batch_consume_queue(TOPIC, 0)


def _unit_from_spec(unit: dict, index: int) -> BcqUnit:
    """A parsed unit (Kaitai object or construct container) as a :class:`BcqUnit`."""
    get = unit.__getitem__ if isinstance(unit, dict) else unit.__getattribute__
    return BcqUnit(index, get("ofs_commitlog"), get("len_message"), get("tags_code"), get("store_timestamp"),
                   get("msg_base_offset"), get("num_messages"), get("compacted_offset"), get("reserved"))


# -- real 5.1.4 vector ---------------------------------------------------------------------


def test_units_equal_truth():
    truth = _truth("batchconsumequeue.json")
    assert list(truth) == [TOPIC] and list(truth[TOPIC]) == ["0"]
    data = truth[TOPIC]["0"]
    bcq = _bcq()
    assert UNIT_SIZE == data["unitSize"] == 46
    assert [f.name for f in bcq.files.files] == data["files"]
    units = list(bcq.units())
    assert len(units) == len(data["units"]) == 3
    for unit, t in zip(units, data["units"]):
        path, pos = bcq.location(unit.index)
        assert {"file": path.rsplit("/", 1)[1], "filePosition": pos, **unit.to_json_dict()} == t


def test_kaitai_construct_and_api_agree():
    path = store_path(V5) / "batchconsumequeue" / TOPIC / "0" / FILE
    data = path.read_bytes()
    ks = RocketmqBatchConsumequeue.from_bytes(data).units
    cs = cs_bcq.rocketmq_batch_consumequeue.parse(data)["units"]
    # Both stop at the first unit recovery rejects: here the zero-filled tail.
    assert [u.is_accepted for u in ks] == [c["is_accepted"] for c in cs] == [True, True, True, False]
    api = list(_bcq().units())
    assert [_unit_from_spec(u, i) for i, u in enumerate(ks[:-1])] == api
    assert [_unit_from_spec(u, i) for i, u in enumerate(cs[:-1])] == api
    assert [u.msg_end_offset for u in ks[:-1]] == [u.end_offset for u in api] == [1, 5, 9]


def test_synthetic_units_are_byte_identical():
    """The construct builder writes the same bytes as RocketMQ for the same values."""
    data = (store_path(V5) / "batchconsumequeue" / TOPIC / "0" / FILE).read_bytes()
    for u in _bcq().units():
        spec = BcqUnitSpec(*u[1:])
        assert encode_bcq_unit(spec) == data[u.index * UNIT_SIZE:(u.index + 1) * UNIT_SIZE]


def test_offsets_match_broker():
    """min/max as RocketMQ's getMinOffsetInQueue / getMaxOffsetInQueue after load() report them."""
    view = _truth("api_view.json")["getMessage"][f"{TOPIC}/0"]
    assert view["cqType"] == "BatchCQ"
    bcq = _bcq()
    assert (bcq.min_offset, bcq.max_offset) == (view["minOffset"], view["maxOffset"]) == (0, 9)
    infos = rmqformats.open_store(store_path(V5)).batch_queues()
    assert [(i.topic, i.queue_id, i.min_offset, i.max_offset, i.num_files, i.error) for i in infos] == \
        [(TOPIC, 0, 0, 9, 1, None)]
    assert list_batch_queues(store_path(V5) / "batchconsumequeue") == infos
    # getMessage hands out one entry per unit, at its base offset.
    assert [(m["queueOffset"], m["physicalOffset"], m["storeSize"]) for m in view["messages"]] == \
        [(u.msg_base_offset, u.commitlog_offset, u.size) for u in bcq.units()]
    assert rmqformats.open_store(store_path("rocketmq-4.9.7")).batch_queues() == []


def test_find_by_queue_offset():
    bcq = _bcq()
    units = list(bcq.units())
    for q in range(bcq.min_offset, bcq.max_offset):
        expected = [u for u in units if u.msg_base_offset <= q < u.end_offset]
        assert [bcq.find(q)] == expected
    for q in (bcq.max_offset, bcq.max_offset + 100, -1):
        with pytest.raises(UnitNotFoundError):
            bcq.find(q)


def test_messages_equal_truth():
    """Every queue offset gives the message RocketMQ's decoders give, inner batches unwrapped."""
    truth = {t["commitlogOffset"]: t for t in truth_records(V5) if t["kind"] == "MESSAGE"}
    got = list(_bcq().messages())
    assert [m.queue_offset for m in got] == list(range(9))
    for m in got:
        row = api_row(m.message)
        t = truth[m.unit.commitlog_offset]
        assert mismatches(row, t) == []
        assert t["dispatch"]["consumeQueueOffset"] == m.unit.msg_base_offset
        assert t["dispatch"]["tagsCode"] == m.unit.tags_code
        if m.unit.batch_size == 1:
            assert m.inner is None and m.message.queue_offset == m.queue_offset
            assert m.body == m.message.body and m.tags == t["tags"] == "BcqTag"
            assert "innerMessages_MessageDecoder.decodeMessages" not in t
        else:
            items = t["innerMessages_MessageDecoder.decodeMessages"]
            assert len(items) == m.unit.batch_size == int(t["properties"]["INNER_NUM"])
            assert int(m.message.properties[INNER_BASE]) == m.unit.msg_base_offset
            item = items[m.queue_offset - m.unit.msg_base_offset]
            assert m.inner.index == m.queue_offset - m.unit.msg_base_offset
            assert m.inner.properties == item["properties"] == m.properties
            assert m.inner.flag == item["flag"]
            assert row["innerMessages_MessageDecoder.decodeMessages"][m.inner.index] == \
                {"topic": None, "flag": item["flag"], "properties": item["properties"], "bodyBase64": item["bodyBase64"]}
    # Keys of the unwrapped messages, in queue order.
    assert [m.properties["KEYS"] for m in got] == ["bcq-single"] + [f"bcq-{b}-{i}" for b in (0, 1) for i in range(4)]


def test_messages_range():
    bcq = _bcq()
    got = [(m.queue_offset, m.unit.index, m.inner and m.inner.index) for m in bcq.messages(3, 7)]
    assert got == [(3, 1, 2), (4, 1, 3), (5, 2, 0), (6, 2, 1)]
    assert list(bcq.messages(9, 20)) == [] and list(bcq.messages(5, 5)) == []
    assert [m.queue_offset for m in bcq.messages(stop=2)] == [0, 1]


def test_check_clean_vector():
    assert _bcq().check() == []


# -- damaged copies of the vector ------------------------------------------------------------


def _rewrite_unit(root, index: int, **changes) -> None:
    """Rewrite unit ``index`` of the vector's queue with field values changed, through construct."""
    path = root / "batchconsumequeue" / TOPIC / "0" / FILE
    data = bytearray(path.read_bytes())
    at = index * UNIT_SIZE
    unit = dict(cs_bcq.unit.parse(bytes(data[at:at + UNIT_SIZE])))
    unit.update(changes)
    data[at:at + UNIT_SIZE] = cs_bcq.unit.build(unit)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("version", [V5])
def test_check_reports_changed_size(store_copy):
    _rewrite_unit(store_copy, 1, len_message=807)
    bcq = _bcq(store_copy)
    problems = bcq.check()
    assert [(p.unit.index, p.where, p.field, p.expected, p.found) for p in problems] == \
        [(1, f"{os.path.abspath(bcq.files.folder)}{os.sep}{FILE} @ 0x2e", "size", 807, 806)]  # the whole path, as errors name files
    assert str(problems[0]).startswith(f"{os.path.abspath(bcq.files.folder)}{os.sep}{FILE} @ 0x2e: {TOPIC}/0 unit 1: size")
    with pytest.raises(UnitMismatchError, match="size is 806") as exc:
        list(bcq.messages())
    assert exc.value.offset == 46 and exc.value.path.endswith(FILE)
    # Offsets before the damaged unit still resolve.
    assert [m.queue_offset for m in bcq.messages(0, 1)] == [0]


@pytest.mark.parametrize("version", [V5])
def test_check_reports_changed_base_offset(store_copy):
    _rewrite_unit(store_copy, 2, msg_base_offset=6)
    bcq = _bcq(store_copy)
    assert bcq.max_offset == 10
    problems = [(p.unit.index, p.where, p.field, p.expected) for p in bcq.check()]
    where = f"{os.path.abspath(bcq.files.folder)}{os.sep}{FILE} @ 0x5c"
    assert problems == [(2, where, "msgBaseOffset", 6),   # against unit 1's end (5)
                        (2, where, "msgBaseOffset", 6),   # against QUEUEOFFSET 5
                        (2, where, "innerBase", 6)]       # against INNER_BASE 5
    with pytest.raises(UnitNotFoundError, match="queue offset 5 is in no unit"):
        bcq.find(5)
    with pytest.raises(UnitMismatchError, match="@ 0x5c: unit 2: msgBaseOffset is 5"):
        list(bcq.messages())


@pytest.mark.parametrize("version", [V5])
def test_check_reports_wrong_pointer_and_batch(store_copy):
    _rewrite_unit(store_copy, 0, ofs_commitlog=1279741 + 4)            # not a record start
    _rewrite_unit(store_copy, 1, num_messages=32767, tags_code=99)     # hostile batch size
    bcq = _bcq(store_copy)
    problems = [(p.unit.index, p.field) for p in bcq.check()]
    assert problems == [(0, "message"), (1, "batchSize"), (1, "tagsCode"), (2, "msgBaseOffset")]
    # The queue's end comes from the last unit alone, as the broker computes it.
    assert bcq.max_offset == 9
    with pytest.raises(UnitMismatchError, match=r"@ 0x0: unit 0 points at commit-log offset 1279745"):
        list(bcq.messages())
    with pytest.raises(UnitMismatchError, match="batchSize is 4 .* the unit says 32767"):
        list(bcq.messages(1))


# -- synthetic queues and bad input ---------------------------------------------------------


def _specs(n: int, *, batch=lambda i: 1 + i % 3) -> list[BcqUnitSpec]:
    out, base = [], 100
    for i in range(n):
        out.append(BcqUnitSpec(10_000 + 500 * i, 300, 0, 1_700_000_000_000 + i, base, batch(i)))
        base += batch(i)
    return out


def test_several_files_with_deleted_head(tmp_path):
    folder = tmp_path / "batchconsumequeue" / "T" / "0"
    specs = _specs(10)
    paths = write_batch_consumequeue(folder, specs, units_per_file=4, first_file=2)
    assert [p.rsplit("/", 1)[1] for p in paths] == [f"{n * 4 * 46:020d}" for n in (2, 3, 4)]
    bcq = BatchConsumeQueue(folder, "T", 0)
    units = list(bcq.units())
    assert [BcqUnitSpec(*u[1:]) for u in units] == specs
    assert [u.index for u in units] == list(range(8, 18))
    # Kaitai reads each file up to the zero tail of the last one.
    parsed = [u for p in paths for u in RocketmqBatchConsumequeue.from_file(p).units if u.is_accepted]
    assert [_unit_from_spec(u, 8 + i) for i, u in enumerate(parsed)] == units
    assert (bcq.min_offset, bcq.max_offset) == (100, specs[-1].msg_base_offset + specs[-1].batch_size)
    for q in range(bcq.min_offset - 2, bcq.max_offset + 2):
        expected = [u for u in units if u.msg_base_offset <= q < u.end_offset]
        if expected:
            assert bcq.find(q) == expected[0]
        else:
            with pytest.raises(UnitNotFoundError):
                bcq.find(q)
    info = list_batch_queues(tmp_path / "batchconsumequeue")
    assert [(i.topic, i.queue_id, i.min_offset, i.max_offset, i.num_files) for i in info] == \
        [("T", 0, 100, bcq.max_offset, 3)]


@pytest.mark.parametrize("version", [V5])
def test_min_offset_skips_units_of_deleted_commitlog(store_copy):
    """``correctMinOffset``: units whose record is before the first commit-log segment do not count."""
    (store_copy / "commitlog" / "00000000000000000000").unlink()
    segment = 262144
    specs = [BcqUnitSpec(o, 100, 0, 0, base, n) for o, base, n in
             ((1000, 0, 1), (200_000, 1, 3), (segment, 4, 1), (segment + 100, 5, 2))]
    write_batch_consumequeue(store_copy / "batchconsumequeue" / "T" / "0", specs, units_per_file=8)
    store = rmqformats.open_store(store_copy)
    bcq = store.batch_consume_queue("T", 0)
    assert (bcq.min_offset, bcq.max_offset) == (4, 7)
    by_topic = {i.topic: i for i in store.batch_queues()}
    assert (by_topic["T"].min_offset, by_topic["T"].max_offset) == (4, 7)


def test_recovery_stops_at_first_rejected_unit(tmp_path):
    """Zero units, a negative batch size and the compaction end-of-file unit all end the queue."""
    folder = tmp_path / "q"
    specs = _specs(6)
    bad = specs[3]._replace(batch_size=-5)
    write_batch_consumequeue(folder, specs[:3] + [bad] + specs[4:], units_per_file=8)
    bcq = BatchConsumeQueue(folder, "T", 0)
    assert [u.index for u in bcq.units()] == [0, 1, 2]
    assert bcq.max_offset == specs[2].msg_base_offset + specs[2].batch_size

    path = folder / f"{0:020d}"
    data = bytearray(path.read_bytes())
    data[3 * UNIT_SIZE:4 * UNIT_SIZE] = encode_bcq_end_of_file()
    path.write_bytes(bytes(data))
    parsed = RocketmqBatchConsumequeue.from_file(str(path)).units
    assert [(u.is_accepted, u.is_end_of_file) for u in parsed] == [(True, False)] * 3 + [(False, True)]
    assert [u.index for u in BatchConsumeQueue(folder, "T", 0).units()] == [0, 1, 2]


def test_zero_filled_and_empty_queue(tmp_path):
    folder = tmp_path / "q"
    folder.mkdir()
    (folder / f"{0:020d}").write_bytes(bytes(46 * 8))
    bcq = BatchConsumeQueue(folder, "T", 0)
    assert list(bcq.units()) == [] and (bcq.min_offset, bcq.max_offset) == (0, 0)
    assert list(bcq.messages()) == []
    with pytest.raises(UnitNotFoundError):
        bcq.find(0)
    missing = BatchConsumeQueue(tmp_path / "none", "T", 0)
    assert list(missing.units()) == [] and (missing.min_offset, missing.max_offset) == (0, 0)


def test_truncated_file(tmp_path):
    folder = tmp_path / "batchconsumequeue" / "T" / "0"
    write_batch_consumequeue(folder, _specs(3), units_per_file=4)
    path = folder / f"{0:020d}"
    with open(path, "r+b") as f:
        f.truncate(2 * UNIT_SIZE + 10)
    bcq = BatchConsumeQueue(folder, "T", 0)
    with pytest.raises(QueueFileError, match="not a multiple of the 46-byte unit") as exc:
        list(bcq.units())
    assert (exc.value.path, exc.value.offset) == (str(path), 2 * UNIT_SIZE)
    info = list_batch_queues(tmp_path / "batchconsumequeue")
    assert info[0].error and "0/00000000000000000000 @ 0x5c" in info[0].error


def test_messages_without_store_argument():
    """A queue opened from its folder alone finds its store three levels up."""
    bcq = BatchConsumeQueue(store_path(V5) / "batchconsumequeue" / TOPIC / "0", TOPIC, 0)
    assert [m.queue_offset for m in bcq.messages()] == list(range(9))
    assert bcq.check() == []
