"""Consume queues, batch consume queues and index files as Arrow: RocketMQ's ground truth, the object readers, bad input."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pytest

import rmqformats
from rmqformats import synth
from rmqformats.batch_consumequeue import UNIT_SIZE as BCQ_UNIT_SIZE, BatchConsumeQueue
from rmqformats.columnar.queues import (
    BCQ_SCHEMA, CQ_SCHEMA, INDEX_HEADER_SCHEMA, INDEX_SCHEMA, QUEUE_UNITS_SCHEMA, index_batches)
from rmqformats.consumequeue import SCHEDULE_TOPIC
from rmqformats.errors import FileChangedError, IndexRangeError, IndexSizeError, QueueFileError
from rmqformats.index import INDEX_COUNT_AT, IndexFile, IndexFiles, index_key_hash
from rmqformats.synth.index import IndexFileBuilder
from rmqformats.synth.queues import BcqUnitSpec, write_batch_consumequeue

from conftest import FIXTURES, store_path

T0 = 1_795_000_000_000


def _truth(version: str, name: str):
    path = FIXTURES / version / "truth" / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _truth_cq(version: str) -> list[tuple[str, int, dict]]:
    """The consume queues of the truth in the store's listing order (topic, then queue id)."""
    return sorted(((t, int(q), d) for t, qs in _truth(version, "consumequeue.json").items() for q, d in qs.items()),
                  key=lambda x: (x[0], x[1]))


def _truth_bcq(version: str) -> list[tuple[str, int, dict]]:
    return sorted(((t, int(q), d) for t, qs in _truth(version, "batchconsumequeue.json").items()
                   for q, d in qs.items()), key=lambda x: (x[0], x[1]))


def _cq_rows(topic: str, qid: int, data: dict) -> list[dict]:
    return [{"topic": topic, "queueId": qid, "cqOffset": u["cqIndex"], "commitLogOffset": u["commitlogOffset"],
             "size": u["size"], "tagsCode": u["tagsCode"]} for u in data["units"]]


def _api_cq_rows(cq, **kw) -> list[dict]:
    """What the object reader yields, as rows of the Arrow table."""
    return [{"topic": cq.topic, "queueId": cq.queue_id, **u.to_json_dict()} for u in cq.units(**kw)]


def _rows(table: pa.Table) -> list[dict]:
    """Rows with timestamps as epoch milliseconds, for comparing with the truth's numbers."""
    cast = [c.cast(pa.int64()) if pa.types.is_timestamp(c.type) else c for c in table.columns]
    return pa.Table.from_arrays(cast, names=table.column_names).to_pylist()


def _error(call) -> tuple:
    """(type, path, offset, message) of the error ``call`` raises."""
    with pytest.raises(rmqformats.RmqFormatError) as info:
        call()
    e = info.value
    return type(e), e.path, e.offset, str(e)


# -- consume queues -------------------------------------------------------------------------------


def test_consume_queue_tables_equal_truth_and_the_object_reader(version):
    store = rmqformats.open_store(store_path(version))
    total = 0
    for topic, qid, data in _truth_cq(version):
        cq = store.consume_queue(topic, qid)
        table = cq.to_arrow()
        assert table.schema == CQ_SCHEMA
        assert table.to_pylist() == _cq_rows(topic, qid, data) == _api_cq_rows(cq), (topic, qid)
        # The numpy reader gives the same columns (no placeholders in the vectors).
        array = cq.unit_array()
        assert table.column("commitLogOffset").to_numpy().tolist() == array["ofs_commitlog"].tolist()
        assert cq.to_arrow(placeholders=True).equals(table)
        total += table.num_rows
    assert total > 300


def test_store_queue_table_equals_truth(version):
    store = rmqformats.open_store(store_path(version))
    want = [row for t, q, d in _truth_cq(version) for row in _cq_rows(t, q, d)]
    table = store.queues_to_arrow()
    assert table.schema == CQ_SCHEMA and table.to_pylist() == want
    # Batches span queues and never exceed batch_size.
    batches = list(store.queue_batches(batch_size=64))
    assert max(b.num_rows for b in batches) <= 64 and len(batches) < len(want) / 16
    assert pa.Table.from_batches(batches).to_pylist() == want
    # With the batch consume queues: one unit per row, batchSize offsets from cqOffset (msgBaseOffset).
    both = store.queues_to_arrow(batch_queues=True)
    assert both.schema == QUEUE_UNITS_SCHEMA
    bcq_rows = [{"topic": t, "queueId": q, "cqOffset": u["msgBaseOffset"], "commitLogOffset": u["commitlogOffset"],
                 "size": u["size"], "tagsCode": u["tagsCode"], "batchSize": u["batchSize"]}
                for t, q, d in _truth_bcq(version) for u in d["units"]]
    assert both.to_pylist() == [{**r, "batchSize": 1} for r in want] + bcq_rows
    assert store.queues_to_arrow(topic="TopicTest", queue_id=2).to_pylist() == \
        _cq_rows("TopicTest", 2, dict(_truth(version, "consumequeue.json")["TopicTest"]["2"]))
    # pandas: one row per unit, the same values.
    frame = store.queues_to_pandas()
    assert len(frame) == len(want) and frame["cqOffset"].tolist() == [r["cqOffset"] for r in want]


def test_ranges_tags_and_batch_sizes(version):
    store = rmqformats.open_store(store_path(version))
    cq = store.consume_queue("TopicCqRoll", 0)
    assert len(cq.files.files) == 3 and cq.max_offset == 150
    for start, stop in ((60, 70), (None, 64), (64, None), (149, 10**9), (-5, 3), (70, 60), (150, 151)):
        assert cq.to_arrow(start, stop).to_pylist() == _api_cq_rows(cq, start=start, stop=stop), (start, stop)
    small = list(cq.batches(batch_size=7))
    # Reads are cut into equal blocks that never cross a file (64 units each), and a batch
    # is never pieced together from two of them here, so no column is copied twice.
    sizes = [b.num_rows for b in small]
    assert max(sizes) == 7 and sum(sizes) == 150 and {64, 128} <= set(itertools.accumulate(sizes))
    assert sizes[:10] == [7, 7, 7, 7, 6, 6, 6, 6, 6, 6]
    assert pa.Table.from_batches(small).equals(cq.to_arrow())
    tagged = store.consume_queue("TopicTest", 0)
    assert tagged.to_arrow(tag="TagA").to_pylist() == _api_cq_rows(tagged, tag="TagA") != []
    with pytest.raises(ValueError, match="delivery times"):
        store.consume_queue(SCHEDULE_TOPIC, 0).to_arrow(tag="Delay")
    with pytest.raises(ValueError, match="batch_size"):
        cq.batches(batch_size=0)
    missing = store.consume_queue("NoSuchTopic", 0)
    assert missing.to_arrow().num_rows == 0 and missing.to_arrow().schema == CQ_SCHEMA


def test_pandas_frames(version):
    store = rmqformats.open_store(store_path(version))
    frame = store.consume_queue("TopicCqRoll", 0).to_pandas()
    assert list(frame.columns) == CQ_SCHEMA.names and len(frame) == 150
    assert str(frame["cqOffset"].dtype) == "int64" and str(frame["size"].dtype) == "int32"
    with store.index() as files:
        entries = files.to_pandas()
    assert str(entries["storeTime"].dtype) == "datetime64[ms, UTC]"


def _placeholder_store(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), root)
    store = rmqformats.open_store(root)
    real = [(u.commitlog_offset, u.size, u.tags_code) for u in store.consume_queue("TopicTest", 0).units()]
    # A queue created at logical offset 70: its first file (units 64..127) starts with placeholders.
    synth.write_consume_queue(root / "consumequeue" / "Moved" / "0", [synth.CQ_PLACEHOLDER] * 6 + real[:5],
                              file_units=64, first_unit=64)
    return rmqformats.open_store(root)


def test_placeholders_left_out_like_units_or_kept_like_unit_array(tmp_path):
    cq = _placeholder_store(tmp_path).consume_queue("Moved", 0)
    table = cq.to_arrow()
    assert table.to_pylist() == _api_cq_rows(cq)
    assert table.column("cqOffset").to_pylist() == [70, 71, 72, 73, 74]
    kept = cq.to_arrow(placeholders=True)
    array = cq.unit_array()
    assert kept.column("cqOffset").to_pylist() == list(range(64, 75))
    assert [kept.column(c).to_pylist() for c in ("commitLogOffset", "size", "tagsCode")] == \
        [array[n].tolist() for n in ("ofs_commitlog", "len_message", "tags_code")]
    assert kept.column("size").to_pylist()[:6] == [0x7FFFFFFF] * 6


# -- batch consume queues -------------------------------------------------------------------------


def test_batch_consume_queue_tables_equal_truth_and_the_object_reader(version):
    store = rmqformats.open_store(store_path(version))
    truth = _truth_bcq(version)
    everything = store.batch_queues_to_arrow()
    assert everything.schema == BCQ_SCHEMA
    if not truth:  # 4.9.7 has no batch consume queues
        assert everything.num_rows == 0 and store.batch_queues() == []
        return
    want = []
    for topic, qid, data in truth:
        bcq = store.batch_consume_queue(topic, qid)
        table = bcq.to_arrow()
        assert table.schema == BCQ_SCHEMA
        rows = _rows(table)
        assert len(rows) == len(data["units"]) == 3
        for row, unit in zip(rows, data["units"]):
            assert row["unitIndex"] * BCQ_UNIT_SIZE == unit["filePosition"]
            assert {"topic": topic, "queueId": qid, "unitIndex": row["unitIndex"],
                    **{("commitLogOffset" if k == "commitlogOffset" else k): v for k, v in unit.items()
                       if k not in ("file", "filePosition")}} == row
        api = [{"topic": topic, "queueId": qid, "unitIndex": u.index,
                **{("commitLogOffset" if k == "commitlogOffset" else k): v for k, v in u.to_json_dict().items()}}
               for u in bcq.units()]
        assert rows == api
        assert _rows(bcq.to_arrow(1, 3)) == api[1:3]
        assert str(bcq.to_pandas()["storeTime"].dtype) == "datetime64[ms, UTC]"
        want += rows
    assert _rows(everything) == want


def _bcq_specs(n: int) -> list[BcqUnitSpec]:
    return [BcqUnitSpec(1000 + 300 * i, 300, 7 * i, T0 + i, 2 * i, 2) for i in range(n)]


def test_batch_queue_recovery_end_and_several_files(tmp_path):
    folder = tmp_path / "q"
    specs = _bcq_specs(10)
    bad = specs[7]._replace(batch_size=-5)  # the first unit recovery rejects
    write_batch_consumequeue(folder, specs[:7] + [bad] + specs[8:], units_per_file=4, first_file=2)
    bcq = BatchConsumeQueue(folder, "T", 0)
    table = bcq.to_arrow(batch_size=3)
    assert table.column("unitIndex").to_pylist() == [u.index for u in bcq.units()] == list(range(8, 15))
    assert table.column("msgBaseOffset").to_pylist() == [s.msg_base_offset for s in specs[:7]]
    assert _rows(table)[0]["storeTime"] == T0


# -- index files ----------------------------------------------------------------------------------


def test_index_headers_equal_truth(version):
    truth = _truth(version, "index.json")["files"]
    with IndexFiles(store_path(version) / "index") as files:
        headers = _rows(files.headers_to_arrow())
        assert files.headers_to_arrow().schema == INDEX_HEADER_SCHEMA
        assert _rows(files.files[0].headers_to_arrow()) == headers[:1]
    assert [{k: h[k] for k in ("file", "fileSize", "beginTimestamp", "endTimestamp", "endPhyOffset")}
            for h in headers] == [{k: t[k] for k in ("file", "fileSize", "beginTimestamp", "endTimestamp",
                                                      "endPhyOffset")} for t in truth]
    assert [(h["beginPhyOffset"], h["hashSlotCount"], h["indexCount"], h["entries"]) for h in headers] == \
        [(t["header_beginPhyOffset"], t["header_hashSlotCount"], t["header_indexCount"],
          t["header_indexCount"] - 1) for t in truth]


def test_index_entries_equal_the_object_reader(version):
    store = rmqformats.open_store(store_path(version))
    table = store.index_to_arrow()
    assert table.schema == INDEX_SCHEMA
    rows = _rows(table)
    want = []
    with store.index() as files:
        for f in files:
            for n in range(1, f.header.num_entries + 1):
                e = f.entry(n)
                want.append({"file": f.name, "entry": n, "slot": e.key_hash % f.num_hash_slots,
                             "keyHash": e.key_hash, "commitLogOffset": e.phy_offset, "timeDiff": e.time_diff,
                             "prevIndex": e.prev_index, "storeTime": e.time_ms(f.header.begin_timestamp)})
        assert _rows(files.to_arrow(batch_size=50)) == want
        assert [b.num_rows for b in files.batches(batch_size=100)][:3] == [100, 100, 55]
    assert rows == want and len(rows) > 700


def test_index_entries_answer_every_query_rocketmq_answered(version):
    """Filtering the entries by a key's hash, newest first, gives what the broker's queryOffset gave."""
    queries = _truth(version, "index.json")["queries_topic#key_to_phyOffsets"]
    rows = rmqformats.open_store(store_path(version)).index_to_arrow().to_pylist()
    reached = set()
    for query, offsets in queries.items():
        hits = sorted((r for r in rows if r["keyHash"] == index_key_hash(query)),
                      key=lambda r: (r["file"], r["entry"]), reverse=True)
        assert [r["commitLogOffset"] for r in hits] == offsets, query
        reached |= {(r["file"], r["entry"]) for r in hits}
    assert len(reached) == len(rows)  # every entry is some recorded query's answer


def test_index_reads_in_bounded_blocks(tmp_path, monkeypatch):
    b = IndexFileBuilder(64, 256)
    for i in range(200):
        b.put_key(f"T#k{i}", 100 * i, T0 + 1000 * i)
    path = tmp_path / "index" / "f"
    path.parent.mkdir()
    path.write_bytes(b.build())
    reads = []
    real = IndexFile._read

    def spy(self, n, offset):
        reads.append(n)
        return real(self, n, offset)

    monkeypatch.setattr(IndexFile, "_read", spy)
    with IndexFile(path) as f:
        reads.clear()
        table = f.to_arrow(batch_size=32)
    assert table.num_rows == 200 and max(reads) == 32 * 20 and len(reads) == 7
    assert table.column("timeDiff").to_pylist() == list(range(200))


# -- bad input: the object readers' errors --------------------------------------------------------


def test_truncated_queue_file(store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    with open(path, "r+b") as f:
        f.truncate(20 * 10 + 7)
    store = rmqformats.open_store(store_copy)
    cq = store.consume_queue("TopicTest", 0)
    expected = _error(lambda: list(cq.units()))
    assert expected[:3] == (QueueFileError, str(path), 200)
    assert _error(lambda: store.consume_queue("TopicTest", 0).to_arrow()) == expected
    assert _error(lambda: store.queues_to_arrow()) == expected
    # errors="skip": the queue is left out whole and reported as store.queues() reports it.
    batches = store.queue_batches(errors="skip")
    table = batches.read_all()
    info = {(q.topic, q.queue_id): q for q in store.queues()}
    assert batches.unreadable == [("TopicTest", 0, info[("TopicTest", 0)].error)] and expected[3].endswith(
        batches.unreadable[0][2].split(": ", 1)[1])
    assert ("TopicTest", 0) not in {(r["topic"], r["queueId"]) for r in table.to_pylist()}
    assert table.num_rows == sum(q.count for q in store.queues() if q.error is None)


def test_damaged_file_outside_the_recovery_walk_leaves_no_rows_when_skipped(tmp_path):
    """A queue of five files whose oldest is cut: recovery does not look there, reading does."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), root)
    folder = root / "consumequeue" / "Long" / "0"
    synth.write_consume_queue(folder, [(1000 + 10 * i, 10, i) for i in range(5 * 8)], file_units=8)
    first = folder / f"{0:020d}"
    os.truncate(first, 20 * 8 - 3)
    store = rmqformats.open_store(root)
    expected = _error(lambda: list(store.consume_queue("Long", 0).units()))
    assert expected[:3] == (QueueFileError, str(first), 20 * 7)
    assert _error(lambda: store.consume_queue("Long", 0).to_arrow()) == expected
    skipped = store.queue_batches(errors="skip")
    assert "Long" not in skipped.read_all().column("topic").to_pylist()
    assert [u[:2] for u in skipped.unreadable] == [("Long", 0)]


def test_zero_filled_unit_in_the_middle(store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    data = bytearray(path.read_bytes())
    data[5 * 20:6 * 20] = bytes(20)
    path.write_bytes(bytes(data))
    cq = rmqformats.open_store(store_copy).consume_queue("TopicTest", 0)
    table = cq.to_arrow()
    assert table.to_pylist() == _api_cq_rows(cq) and table.num_rows == cq.max_offset == 5


def test_zero_filled_empty_and_gapped_queues(store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    path.write_bytes(bytes(path.stat().st_size))
    assert rmqformats.open_store(store_copy).consume_queue("TopicTest", 0).to_arrow().num_rows == 0
    path.write_bytes(b"")
    assert rmqformats.open_store(store_copy).consume_queue("TopicTest", 0).to_arrow().num_rows == 0
    folder = store_copy / "consumequeue" / "TopicCqRoll" / "0"
    os.remove(folder / "00000000000000001280")
    store = rmqformats.open_store(store_copy)
    expected = _error(lambda: list(store.consume_queue("TopicCqRoll", 0).units()))
    assert "gap in the queue" in expected[3]
    assert _error(lambda: rmqformats.open_store(store_copy).consume_queue("TopicCqRoll", 0).to_arrow()) == expected


def test_queue_file_cut_while_read(store_copy):
    cq = rmqformats.open_store(store_copy).consume_queue("TopicTest", 1)
    assert cq.max_offset > 12  # listed and recovered; now the file loses its tail
    path = store_copy / "consumequeue" / "TopicTest" / "1" / "00000000000000000000"
    os.truncate(path, 20 * 12)
    kind, where, offset, message = _error(lambda: cq.to_arrow())
    assert (kind, where, offset) == (FileChangedError, str(path), 20 * 12)
    assert "1/00000000000000000000 @ 0xf0" in message


def test_truncated_batch_queue_file(tmp_path):
    folder = tmp_path / "batchconsumequeue" / "T" / "0"
    write_batch_consumequeue(folder, _bcq_specs(3), units_per_file=4)
    path = folder / f"{0:020d}"
    os.truncate(path, 2 * BCQ_UNIT_SIZE + 10)
    expected = _error(lambda: list(BatchConsumeQueue(folder, "T", 0).units()))
    assert expected[:3] == (QueueFileError, str(path), 2 * BCQ_UNIT_SIZE)
    assert _error(lambda: BatchConsumeQueue(folder, "T", 0).to_arrow()) == expected


def _index_copy(tmp_path, name="20261121095322493", version="rocketmq-4.9.7"):
    dst = tmp_path / "index" / name
    dst.parent.mkdir(exist_ok=True)
    shutil.copy(store_path(version) / "index" / name, dst)
    return dst


@pytest.mark.parametrize("count", [257, 1 << 20, 0x7FFFFFFF])
def test_index_header_claiming_too_many_entries(tmp_path, count):
    path = _index_copy(tmp_path)
    data = bytearray(path.read_bytes())
    data[INDEX_COUNT_AT:INDEX_COUNT_AT + 4] = count.to_bytes(4, "big")
    path.write_bytes(bytes(data))
    with IndexFile(path) as f:
        # The object reader: the header's last entry is not in the file.
        assert _error(lambda: f.entry(f.header.num_entries))[:2] == (IndexRangeError, str(path))
        kind, where, offset, message = _error(lambda: f.to_arrow())
        assert (kind, where, offset) == (IndexRangeError, str(path), INDEX_COUNT_AT)
        assert message.startswith("index/20261121095322493 @ 0x24: indexCount") and "last entry (255)" in message
        assert _error(lambda: f.entry_array()) == (kind, where, offset, message)
        clipped = f.to_arrow(strict=False)
        assert clipped.num_rows == 255
        assert clipped.column("commitLogOffset").to_pylist() == [f.entry(n).phy_offset for n in range(1, 256)]
    assert _error(lambda: IndexFiles(path.parent).to_arrow())[:3] == (IndexRangeError, str(path), INDEX_COUNT_AT)


def test_index_header_with_a_negative_count_has_no_entries(tmp_path):
    path = _index_copy(tmp_path)
    data = bytearray(path.read_bytes())
    data[INDEX_COUNT_AT:INDEX_COUNT_AT + 4] = (-5).to_bytes(4, "big", signed=True)
    path.write_bytes(bytes(data))
    with IndexFile(path) as f:  # read as 1, like IndexHeader.load
        assert f.header.num_entries == 0 and f.to_arrow().num_rows == 0


def test_index_file_cut_after_it_was_opened(tmp_path):
    path = _index_copy(tmp_path)
    with IndexFile(path) as f:
        os.truncate(path, 1000)
        expected = _error(lambda: f.entry(200))
        kind, where, offset, message = _error(lambda: f.to_arrow(batch_size=64))
        assert (kind, where) == expected[:2] == (IndexSizeError, str(path))
        assert offset == 40 + 4 * 64 + 20 * 1 and "it was 5416 bytes when opened" in message


def test_truncated_index_file_fails_as_the_reader_does(store_copy):
    path = next((store_copy / "index").iterdir())
    os.truncate(path, 5000)
    store = rmqformats.open_store(store_copy)
    expected = _error(lambda: store.index())
    assert expected[0] is IndexSizeError
    assert _error(lambda: store.index_to_arrow()) == expected


def test_index_entries_of_several_sources(tmp_path):
    path = _index_copy(tmp_path)
    with IndexFile(path) as a, IndexFile(path) as b:
        two = index_batches([a, b], batch_size=1000).read_all()
        assert two.num_rows == 2 * a.header.num_entries
        assert two.slice(0, a.header.num_entries).equals(a.to_arrow())


# -- packaging ------------------------------------------------------------------------------------


def test_reading_changes_nothing(version):
    root = store_path(version)
    parts = [root / "consumequeue", root / "batchconsumequeue", root / "index"]
    files = [p for part in parts if part.exists() for p in sorted(part.rglob("*")) if p.is_file()]
    before = {p: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files}
    store = rmqformats.open_store(root)
    store.queues_to_arrow(batch_queues=True)
    store.batch_queues_to_arrow()
    store.index_to_arrow()
    assert {p: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files} == before


def test_readers_do_not_import_the_columnar_package():
    code = ("import sys, rmqformats, rmqformats.consumequeue, rmqformats.batch_consumequeue, rmqformats.index; "
            "assert not [m for m in sys.modules if m.startswith(('rmqformats.columnar', 'rmqformats.walk'))], sys.modules.keys()")
    subprocess.run([sys.executable, "-c", code], check=True)
