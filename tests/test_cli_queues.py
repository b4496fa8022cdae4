"""The ``queue`` and ``check`` commands on the vector stores."""

from __future__ import annotations

import json

from rmqformats.cli import main

from conftest import FIXTURES, store_path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _truth_cq(version):
    return json.loads((FIXTURES / version / "truth" / "consumequeue.json").read_text(encoding="utf-8"))


def test_queue_units_jsonl_equal_truth(capsys, version):
    truth = _truth_cq(version)
    for topic, queues in truth.items():
        for qid, data in queues.items():
            code, out, _ = run(capsys, "queue", str(store_path(version)), topic, qid, "--format", "jsonl")
            assert code == 0
            rows = [json.loads(line) for line in out.splitlines()]
            assert rows == [{"cqOffset": u["cqIndex"], "commitLogOffset": u["commitlogOffset"],
                             "size": u["size"], "tagsCode": u["tagsCode"]} for u in data["units"]]


def test_queue_resolved_jsonl(capsys, version):
    code, out, _ = run(capsys, "queue", str(store_path(version)), "TopicTest", "2", "--resolve",
                       "--format", "jsonl", "--from", "3", "--limit", "4")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["cqOffset"] for r in rows] == [3, 4, 5, 6]
    for r in rows:
        assert r["status"] == "OK"
        m = r["message"]
        assert (m["topic"], m["queueId"], m["queueOffset"], m["commitLogOffset"], m["storeSize"]) == (
            "TopicTest", 2, r["cqOffset"], r["commitLogOffset"], r["size"])


def test_queue_listing_and_table(capsys, version):
    code, out, _ = run(capsys, "queue", str(store_path(version)), "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    truth = _truth_cq(version)
    assert {(r["topic"], str(r["queueId"])) for r in rows if r["type"] == "ConsumeQueue"} == {
        (t, q) for t, qs in truth.items() for q in qs}
    roll = next(r for r in rows if r["topic"] == "TopicCqRoll")
    assert (roll["minOffset"], roll["maxOffset"], roll["files"], roll["error"]) == (0, 150, 3, None)
    code, out, _ = run(capsys, "queue", str(store_path(version)), "TopicTest")
    assert code == 0 and len(out.splitlines()) == 5
    code, out, _ = run(capsys, "queue", str(store_path(version)), "TopicTest", "0", "--resolve", "--tag", "TagA")
    lines = out.splitlines()
    assert lines[0].startswith(f"# TopicTest/0: offsets 0..{len(truth['TopicTest']['0']['units'])}, 1 file(s)")
    assert lines[1].split()[:5] == ["cqOffset", "commitLogOffset", "size", "tagsCode", "status"]
    assert len(lines) > 3 and all(" TagA " in line for line in lines[2:])


def test_queue_with_sample_and_errors(capsys):
    code, out, _ = run(capsys, "queue", "--sample", "TopicCqRoll", "0", "--limit", "2", "--format", "jsonl")
    assert code == 0 and len(out.splitlines()) == 2


def test_check_command(capsys, version, store_copy):
    code, out, _ = run(capsys, "check", str(store_path(version)))
    assert code == 0 and out.splitlines()[-1].split() == ["result", "consistent"]
    path = store_copy / "consumequeue" / "TopicTest" / "3" / "00000000000000000000"
    data = bytearray(path.read_bytes())
    data[4 * 20 + 8:4 * 20 + 12] = (1).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    code, out, _ = run(capsys, "check", str(store_copy), "--format", "json")
    report = json.loads(out)
    assert code == 1 and not report["ok"]
    assert [(p["topic"], p["queueId"], p["cqOffset"], p["field"], p["where"], p["unitValue"])
            for p in report["problems"]] == [("TopicTest", 3, 4, "size", f"{path} @ 0x50", 1)]


def test_batch_queue_units_and_messages(capsys):
    root = str(store_path("rocketmq-5.1.4"))
    truth = json.loads((FIXTURES / "rocketmq-5.1.4" / "truth" / "batchconsumequeue.json").read_text())
    code, out, _ = run(capsys, "queue", root, "TopicBatchCQ", "0", "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    units = truth["TopicBatchCQ"]["0"]["units"]
    assert code == 0
    # One row per message (queue offset), each with the unit it is in.
    assert [r["cqOffset"] for r in rows] == list(range(sum(u["batchSize"] for u in units)))
    assert [(r["commitLogOffset"], r["size"], r["tagsCode"], r["storeTime"], r["msgBaseOffset"], r["batchSize"])
            for r in rows] == [(u["commitlogOffset"], u["size"], u["tagsCode"], u["storeTime"], u["msgBaseOffset"],
                                u["batchSize"]) for u in units for _ in range(u["batchSize"])]
    code, out, _ = run(capsys, "queue", root, "TopicBatchCQ", "0", "--resolve", "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["cqOffset"] for r in rows] == list(range(9))
    assert [r.get("innerProperties", r["message"]["properties"])["KEYS"] for r in rows] == (
        ["bcq-single"] + [f"bcq-{b}-{i}" for b in (0, 1) for i in range(4)])
    code, out, _ = run(capsys, "queue", root, "--format", "jsonl")
    kinds = {json.loads(line)["topic"]: json.loads(line)["type"] for line in out.splitlines()}
    assert kinds["TopicBatchCQ"] == "BatchConsumeQueue" and kinds["TopicTest"] == "ConsumeQueue"


def test_check_names_config_keys_fastjson2_refuses(capsys, monkeypatch, version, store_copy):
    """The vectors' consumerOffset.json, written by fastjson 1, has integer queue ids without quotes
    (``{0:29,...}``), which 5.5.0's fastjson2 refused (apache/rocketmq #10284): ``check`` names the file, the
    key, the object holding it and its byte, with the rule preflight applies, as a note that leaves the verdict
    as it is; for a release before 5.5.0 there is none, nor once every name has quotes."""
    import re

    path = store_copy / "config" / "consumerOffset.json"
    data = path.read_bytes()
    first = re.search(rb'"([^"]+)":\{(\d+):', data)  # the first integer key, as the file holds it
    owner, key, offset = first.group(1).decode(), first.group(2).decode(), first.start(2)
    place = f"{path} @ 0x{offset:x}"
    rule = "config JSON parsed by fastjson2, which refuses unquoted names"

    code, out, _ = run(capsys, "check", str(store_copy), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["ok"]
    [note] = [c for c in doc["configFindings"] if c["path"] == str(path)]
    assert (note["severity"], note["key"], note["object"], note["offset"], note["place"]) == (
        "note", key, owner, offset, place)
    assert note["appliesTo"] == "when upgrading to 5.5.0 or later" and "#10284" in note["text"]
    assert note["rule"] == {"name": rule, "release": "5.5.0", "method": "RemotingSerializable.fromJson "
                            "(ConfigManager.decode)", "knownFrom": "apache/rocketmq #10284, PR #10283, PR #10287"}
    assert note["source"].startswith("rocketmq-all-5.5.0:") and data[offset:offset + len(key) + 1] == (
        key + ":").encode()

    code, out, _ = run(capsys, "check", str(store_copy), "--format", "jsonl", "--release", "5.5.1")
    lines = [json.loads(line) for line in out.splitlines()]
    notes = [r for r in lines if r["record"] == "configFinding" and r["path"] == str(path)]
    assert code == 0 and [(r["key"], r["place"], r["appliesTo"]) for r in notes] == [(key, place, "release 5.5.1")]
    assert lines[0]["record"] == "check" and lines[0]["ok"] and lines[-1]["record"] == "recovery"

    code, out, _ = run(capsys, "check", str(store_copy), "--release", "5.5.0")
    assert code == 0 and out.splitlines()[-1].split() == ["result", "consistent"]
    assert f"config-unparsable (release 5.5.0): consumerOffset.json has the unquoted name {key} in {owner!r}" in out
    assert f"config      {place}\n" in out and f"rule            {rule} (from 5.5.0;" in out
    monkeypatch.setenv("COLUMNS", "60")  # the citation, wider than that, is broken after a `/`
    code, out, _ = run(capsys, "check", str(store_copy), "--release", "5.5.0")
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("source "))
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith(" " * 16))
    pieces = lines[at:end]
    assert len(pieces) > 1 and all(len(line) <= 60 and line.rstrip().endswith(("/", ".java")) for line in pieces)
    assert "".join(line[16:] for line in pieces) == note["source"]
    monkeypatch.delenv("COLUMNS")

    code, out, _ = run(capsys, "check", str(store_copy), "--release", "5.4.0", "--format", "json")
    assert code == 0 and json.loads(out)["configFindings"] == []

    path.write_bytes(re.sub(rb"([{,])(-?\d+):", rb'\1"\2":', data))  # every name quoted, as fastjson2 writes
    code, out, _ = run(capsys, "check", str(store_copy), "--format", "json")
    assert code == 0 and not [c for c in json.loads(out)["configFindings"] if c["path"] == str(path)]


def test_queue_tables_are_written_a_block_at_a_time(capsys, version, monkeypatch):
    """``queue`` as a table holds one block of rows, not the queue: with blocks of two units, its lines go out
    while the queue is still being read, and they equal the JSON Lines' units."""
    from rmqformats.cli import queues, tables

    truth = _truth_cq(version)
    topic, queues_of = max(truth.items(), key=lambda kv: max(len(q["units"]) for q in kv[1].values()))
    qid, data = max(queues_of.items(), key=lambda kv: len(kv[1]["units"]))
    assert len(data["units"]) > 2
    read, written = [], []

    def streamed(rows, header, out, indent="", **kw):
        def counted():
            for r in rows:
                read.append(r)
                yield r

        class Out:
            def write(self, text):
                written.append(len(read))
                return out.write(text)

            def flush(self):
                out.flush()
        return tables.print_rows_streamed(counted(), header, Out(), indent, block=2, **kw)

    monkeypatch.setattr(queues, "print_rows_streamed", streamed)
    code, out, _ = run(capsys, "queue", str(store_path(version)), topic, qid)
    assert code == 0 and written[0] == 2 < len(read) == len(data["units"])
    lines = out.splitlines()[2:]  # after the queue's line and the header
    assert [[int(v) for v in line.split()] for line in lines] == \
        [[u["cqIndex"], u["commitlogOffset"], u["size"], u["tagsCode"]] for u in data["units"]]
