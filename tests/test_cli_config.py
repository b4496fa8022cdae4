"""``rmqformats config`` and ``rmqformats lag`` on the vector stores."""

from __future__ import annotations

import json

from rmqformats import open_store
from rmqformats.cli import main

from conftest import store_path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


#: Committed offsets (group, topic, queue) in each vector's consumerOffset.json.
CONSUMER_OFFSETS = {"rocketmq-4.9.7": 5, "rocketmq-5.1.4": 5, "rocketmq-5.3.3": 4}


def test_config_table(capsys, version):
    code, out, err = run(capsys, "config", str(store_path(version)))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "files"
    assert any(line.split()[:4] == ["topics.json", "file", "utf-8", "yes"] for line in lines)
    assert any(line.split()[:6] == ["TopicTest", "4", "4", "RW-", "no", "0"] for line in lines)
    assert f"consumer offsets ({CONSUMER_OFFSETS[version]})" in out
    if version == "rocketmq-4.9.7":
        assert "delay offsets (2)" in out and any(line.split()[1:3] == ["SCHEDULE_TOPIC_XXXX", "1"] for line in lines)
    else:  # 5.x: delay levels are delivered by the broker, whose delayOffset.json the vectors do not have
        assert any("TopicBatchCQ" in line and "queue.type=BatchCQ" in line for line in lines)
        assert "delay offsets (0)" in out


def test_config_jsonl_matches_models(capsys, version):
    code, out, _ = run(capsys, "config", str(store_path(version)), "--format", "json")
    assert code == 0
    info = json.loads(out)
    config = open_store(store_path(version)).config()
    assert [f["name"] for f in info["files"]] == list(config.files)
    assert all(f["valid"] and f["source"] == "file" and f["unknownKeys"] == [] for f in info["files"])
    topics = config.topics.topic_config_table
    assert [t["topic"] for t in info["topics"]] == sorted(topics)  # sorted by name
    assert all(t["readQueueNums"] == topics[t["topic"]].read_queue_nums and t["permString"] == "RW-"
               for t in info["topics"])
    assert {(o["topic"], o["group"], o["queueId"]): o["committedOffset"] for o in info["consumerOffsets"]} == \
        config.consumer_offsets.offsets


def test_config_file_shows_one_model(capsys):
    code, out, _ = run(capsys, "config", str(store_path("rocketmq-4.9.7")), "--file", "consumerOffset.json")
    assert code == 0
    doc = json.loads(out)
    assert doc["model"]["offsetTable"]["TopicTest@GroupA"] == {"0": 29, "1": 31, "2": 28, "3": 28}


def test_config_bad_file_exit_2(capsys, store_copy, version):
    text = (store_copy / "config" / "topics.json").read_text(encoding="utf-8")
    # The first topic in the file is the one whose perm gets broken.
    first = next(iter(json.loads(text)["topicConfigTable"]))
    assert text.index('"perm":6') < text.index(f'"topicName":"{first}"')
    (store_copy / "config" / "topics.json").write_text(text.replace('"perm":6', '"perm":"rw"', 1), encoding="utf-8")
    code, out, err = run(capsys, "config", str(store_copy))
    assert code == 2
    assert f"rmqformats: error: {store_copy}/config/topics.json @ 0x" in err  # the whole path
    assert f"($.topicConfigTable.{first}.perm): 'rw' is not of type 'integer'" in err
    assert f"consumer offsets ({CONSUMER_OFFSETS[version]})" in out  # the other files are still shown


def test_lag_table_and_jsonl(capsys, version):
    code, out, _ = run(capsys, "lag", str(store_path(version)))
    rows = open_store(store_path(version)).consumer_lag()
    # Exit status 1 (findings) when a queue is flagged (5.3.3: an offset committed beyond the queue's max).
    assert code == (1 if any(r.behind_min or r.beyond_max or not r.queue_found for r in rows) else 0)
    lines = out.splitlines()
    assert lines[0].split() == ["group", "topic", "queueId", "committedOffset", "minOffset", "maxOffset", "lag",
                                 "nextMessageStoreTime", "flags"]
    rows = open_store(store_path(version)).consumer_lag()
    assert f"total lag GroupA: {sum(r.lag for r in rows)}" in lines
    code, out, _ = run(capsys, "lag", str(store_path(version)), "--format", "jsonl", "--group", "GroupA",
                       "--topic", "TopicTest")
    got = [json.loads(line) for line in out.splitlines()]
    assert got == [r.to_json_dict() for r in rows if r.topic == "TopicTest"]


def test_lag_without_store_root_is_an_error(capsys):
    code, _, err = run(capsys, "lag", str(store_path("rocketmq-4.9.7") / "commitlog"))
    assert code == 2 and "needs a store root" in err


def test_config_file_errors_exit_2(capsys, store_copy):
    (store_copy / "config" / "delayOffset.json").write_text('{"offsetTable":{1:', encoding="utf-8")
    code, _, err = run(capsys, "config", str(store_copy), "--file", "delayOffset.json")
    assert code == 2 and err.startswith(f"rmqformats: error: {store_copy}/config/delayOffset.json @ 0x12 "
                                        "($.offsetTable[1]): ")
    code, _, err = run(capsys, "config", str(store_copy), "--file", "consumerOrderInfo.json")
    assert code == 2 and "consumerOrderInfo.json: no such file" in err
    code, out, _ = run(capsys, "config", str(store_path("rocketmq-5.1.4")), "--file", "position-checkpoint")
    assert code == 0 and json.loads(out)["model"] == {"empty": True, "queueOffsetMap": {}}


def test_config_jsonl_is_one_record_a_line(capsys, version):
    """JSON Lines: a ``config`` line, then one line per file, topic, group and offset; the same as the document."""
    code, out, _ = run(capsys, "config", str(store_path(version)), "--format", "jsonl")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    code, doc, _ = run(capsys, "config", str(store_path(version)), "--format", "json")
    doc = json.loads(doc)
    assert lines[0] == {"record": "config", "config": doc["config"], "errors": doc["errors"]}
    kinds = {"file": "files", "topic": "topics", "group": "groups", "consumerOffset": "consumerOffsets",
             "delayOffset": "delayOffsets"}
    got: dict = {k: [] for k in kinds.values()}
    for r in lines[1:]:
        got[kinds[r.pop("record")]].append(r)
    assert got == {k: doc[k] for k in kinds.values()}
    assert len(lines) == 1 + sum(len(doc[k]) for k in kinds.values())
    assert [t["topic"] for t in got["topics"]] == sorted(t["topic"] for t in got["topics"])


def test_consumer_offsets_are_named_as_lag_names_them(capsys, version):
    """A consumer offset is ``committedOffset`` in ``config`` (JSON, JSON Lines, the table's header) as in
    ``lag``, with the same value for each group, topic and queue."""
    root = str(store_path(version))
    code, out, _ = run(capsys, "lag", root, "--format", "jsonl")
    lag = {(r["group"], r["topic"], r["queueId"]): r["committedOffset"] for r in map(json.loads, out.splitlines())}
    for fmt in ("json", "jsonl"):
        code, out, _ = run(capsys, "config", root, "--format", fmt)
        rows = (json.loads(out)["consumerOffsets"] if fmt == "json" else
                [r for r in map(json.loads, out.splitlines()) if r["record"] == "consumerOffset"])
        assert rows and all("offset" not in r for r in rows)
        assert {(r["group"], r["topic"], r["queueId"]): r["committedOffset"] for r in rows} == lag
    code, out, _ = run(capsys, "config", root)
    lines = out.splitlines()
    header = lines[next(i for i, line in enumerate(lines) if line.startswith("consumer offsets (")) + 1]
    assert header.split() == ["group", "topic", "queueId", "committedOffset"]
