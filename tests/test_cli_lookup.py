"""The ``lookup`` command: RocketMQ's index hits, and the messages that carry the key."""

from __future__ import annotations

import json

from rmqformats.cli import main

from conftest import FIXTURES, store_path, truth_records


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _queries(version):
    truth = json.loads((FIXTURES / version / "truth" / "index.json").read_text(encoding="utf-8"))
    return truth["queries_topic#key_to_phyOffsets"]


def test_raw_lookup_equals_rocketmq(capsys, version):
    queries = _queries(version)
    # A spread of the recorded queries: keys, UNIQ_KEYs, non-ASCII keys, rewritten topics.
    picked = [q for i, q in enumerate(sorted(queries)) if i % 25 == 0 or "键" in q or q.startswith("SCHEDULE")]
    assert len(picked) > 20
    for query in picked:
        topic, key = query.split("#", 1)
        code, out, _ = run(capsys, "lookup", str(store_path(version)), "--topic", topic, "--key", key,
                           "--raw", "--format", "jsonl")
        assert code == 0
        assert [json.loads(line)["commitLogOffset"] for line in out.splitlines()] == queries[query], query


def test_checked_lookup_returns_the_messages_with_the_key(capsys, version):
    carrying = {}
    for r in truth_records(version):
        if r["kind"] != "MESSAGE":
            continue
        for k in [*(r["keys"] or "").split(" "), r["uniqKey"]]:
            if k:
                carrying.setdefault((r["topic"], k), set()).add(r["commitlogOffset"])
    for query, offsets in list(_queries(version).items())[::15]:
        topic, key = query.split("#", 1)
        code, out, _ = run(capsys, "lookup", str(store_path(version)), "--topic", topic, "--key", key,
                           "--format", "jsonl")
        rows = [json.loads(line) for line in out.splitlines()]
        assert all(r["keyMatches"] and r["message"]["topic"] == topic for r in rows)
        assert [r["commitLogOffset"] for r in rows] == [o for o in offsets if o in carrying.get((topic, key), ())]


def test_lookup_table_time_range_and_errors(capsys):
    root = str(store_path("rocketmq-5.1.4"))
    code, out, _ = run(capsys, "lookup", root, "--topic", "TopicTest", "--key", "key-1")
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["commitLogOffset", "indexFile", "entry"]
    assert len(lines) == 2 and " key-1 order-0 " in lines[1]
    code, out, _ = run(capsys, "lookup", root, "--topic", "TopicTest", "--key", "key-1", "--end", "1000")
    assert code == 0 and len(out.splitlines()) == 1  # nothing stored before 1970-01-01T00:00:01Z
    code, _, err = run(capsys, "lookup", root, "--topic", "TopicTest", "--key", "key-1", "--hash-slots", "7")
    assert code == 2 and "index/" in err
