"""Offline consumer lag against counts computed from the vectors' ground truth."""

from __future__ import annotations

import json
import re

import pytest

from rmqformats import open_store
from rmqformats.errors import ConfigSyntaxError
from rmqformats.lag import LagRow, consumer_lag

from conftest import FIXTURES, store_path, truth_records


def truth_queues(version: str) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, queue id) → (min offset, max offset) from RocketMQ's own ConsumeQueue reads."""
    data = json.loads((FIXTURES / version / "truth" / "consumequeue.json").read_text(encoding="utf-8"))
    out = {}
    for topic, queues in data.items():
        for qid, q in queues.items():
            units = q["units"]
            out[(topic, int(qid))] = (units[0]["cqIndex"], units[-1]["cqIndex"] + 1) if units else (0, 0)
    return out


def truth_offsets(store) -> dict[tuple[str, str, int], int]:
    """consumerOffset.json read independently: Python's json after quoting the bare integer keys."""
    text = (store / "config" / "consumerOffset.json").read_text(encoding="utf-8")
    table = json.loads(re.sub(r"([{,])(-?\d+):", r'\1"\2":', text))["offsetTable"]
    return {(k.split("@", 1)[0], k.split("@", 1)[1], int(q)): o for k, qs in table.items() for q, o in qs.items()}


def store_times(version: str) -> dict[tuple[str, int, int], int]:
    return {(t["topic"], t["queueId"], t["queueOffset"]): t["storeTimestamp"]
            for t in truth_records(version) if t["kind"] == "MESSAGE"}


def test_lag_table_equals_truth(version):
    queues = truth_queues(version)
    offsets = truth_offsets(store_path(version))
    times = store_times(version)
    rows = open_store(store_path(version)).consumer_lag()
    assert rows == sorted(rows, key=lambda r: (r.group, r.topic, r.queue_id))
    assert {(r.topic, r.group, r.queue_id) for r in rows} == set(offsets)
    for r in rows:
        lo, hi = queues[(r.topic, r.queue_id)]
        committed = offsets[(r.topic, r.group, r.queue_id)]
        assert (r.committed_offset, r.min_offset, r.max_offset) == (committed, lo, hi)
        # The vectors' offsets are illustrative: 5.3.3 commits TopicTest/1 one past its max offset.
        assert r.lag == max(0, hi - committed) and r.available == max(0, hi - max(committed, lo))
        assert r.next_message_store_time == (times[(r.topic, r.queue_id, committed)] if committed < hi else None)
        assert r.behind_min is (committed < lo) and r.beyond_max is (committed > hi)
        assert r.queue_found and r.queue_type == "SimpleCQ"
    assert sum(r.lag for r in rows if r.topic == "TopicTest") == sum(
        max(0, queues[("TopicTest", q)][1] - offsets[("TopicTest", "GroupA", q)]) for q in range(4))
    assert any(r.lag > 0 for r in rows)


def test_filters():
    store = open_store(store_path("rocketmq-4.9.7"))
    assert [r.queue_id for r in consumer_lag(store, topic="TopicTest")] == [0, 1, 2, 3]
    assert consumer_lag(store, group="NoSuchGroup") == []
    rows = list(consumer_lag(store, group="GroupA", with_store_time=False))
    assert len(rows) == 5 and all(r.next_message_store_time is None for r in rows)


def _set_offsets(store, table: str) -> None:
    (store / "config" / "consumerOffset.json").write_text('{\n\t"offsetTable":{' + table + "\n\t}\n}", encoding="utf-8")


def test_missing_queue_folder_behind_min_and_beyond_max(store_copy, version):
    queues = truth_queues(version)
    _set_offsets(store_copy, '\n\t\t"NoSuchTopic@GroupX":{0:5\n\t\t},'
                             '\n\t\t"TopicCqRoll@GroupX":{0:1000\n\t\t},'
                             '\n\t\t"TopicTest@GroupX":{0:3,1:2,2:1\n\t\t}')
    rows = {(r.topic, r.queue_id): r for r in open_store(store_copy).consumer_lag()}
    missing = rows[("NoSuchTopic", 0)]
    assert (missing.max_offset, missing.lag, missing.queue_found) == (0, 0, False)
    assert missing.beyond_max and "no consumequeue folder" in missing.note
    beyond = rows[("TopicCqRoll", 0)]
    assert beyond.beyond_max and beyond.lag == 0 and beyond.max_offset == queues[("TopicCqRoll", 0)][1]
    # Queue 3 of TopicTest has no committed offset: listed, counted from 0 like the broker does.
    q3 = rows[("TopicTest", 3)]
    assert q3.committed_offset is None and q3.lag == queues[("TopicTest", 3)][1] and "no committed" in q3.note
    assert rows[("TopicTest", 0)].lag == queues[("TopicTest", 0)][1] - 3


def test_committed_below_min_offset(store_copy, version):
    """Messages deleted before they were consumed: the first consume-queue file is gone."""
    folder = store_copy / "consumequeue" / "TopicCqRoll" / "0"
    first = min(folder.iterdir())
    first.unlink()
    _set_offsets(store_copy, '\n\t\t"TopicCqRoll@GroupX":{0:10\n\t\t}')
    (row,) = open_store(store_copy).consumer_lag()
    assert row.min_offset == 64 and row.behind_min
    assert row.lag == row.max_offset - 10 and row.available == row.max_offset - 64
    assert row.next_message_store_time == store_times(version)[("TopicCqRoll", 0, 64)]


def test_batch_consume_queue_topic(tmp_path):
    import shutil
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), store)
    _set_offsets(store, '\n\t\t"TopicBatchCQ@GroupB":{0:2\n\t\t}')
    data = json.loads((FIXTURES / "rocketmq-5.1.4" / "truth" / "batchconsumequeue.json").read_text())
    units = data["TopicBatchCQ"]["0"]["units"]
    hi = units[-1]["msgBaseOffset"] + units[-1]["batchSize"]
    holder = [u for u in units if u["msgBaseOffset"] <= 2][-1]
    (row,) = open_store(store).consumer_lag()
    assert isinstance(row, LagRow)
    assert (row.queue_type, row.min_offset, row.max_offset, row.lag) == ("BatchCQ", 0, hi, hi - 2)
    assert row.next_message_store_time == holder["storeTime"]


def test_no_consumer_offsets_file_gives_no_rows(store_copy):
    (store_copy / "config" / "consumerOffset.json").unlink()
    assert open_store(store_copy).consumer_lag() == []


def test_damaged_topics_json_does_not_stop_the_lag(store_copy, version):
    (store_copy / "config" / "topics.json").write_text("{", encoding="utf-8")
    rows = open_store(store_copy).consumer_lag()
    assert rows == open_store(store_path(version)).consumer_lag()


def test_damaged_consumer_offsets_is_a_typed_error(store_copy):
    (store_copy / "config" / "consumerOffset.json").write_text('{"offsetTable":{"T@G":{0:', encoding="utf-8")
    with pytest.raises(ConfigSyntaxError, match=r"^config/consumerOffset.json @ 0x19 \(\$.offsetTable\['T@G'\]\[0\]\)"):
        open_store(store_copy).consumer_lag()
