"""The filters and modes of ``messages`` (and ``export``, ``queue``) against the same filters applied in Python
to ``messages --format jsonl`` of the whole store, and ``--outstanding`` against ``lag``, on every vector store."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from rmqformats import open_store
from rmqformats.cli import main
from rmqformats.cli.filters import tag_expression
from rmqformats.lag import consumer_lag

from conftest import store_path
import docpages

REPO = Path(__file__).resolve().parent.parent


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def jsonl(capsys, *argv) -> list[dict]:
    code, out, err = run(capsys, *argv, "--format", "jsonl")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def expected(version: str, whole: list[dict], keep) -> set[tuple]:
    """(commitLogOffset, innerIndex) of the messages ``keep`` passes: of the whole store's JSON objects, each
    inner-batch record taken item by item when the store has batch consume queues (as ``messages`` does
    when it filters by tag, key or property there)."""
    store = open_store(store_path(version))
    unwrap = bool(store.batch_queues())
    out = set()
    for d in whole:
        m = store.commitlog.read(d["commitLogOffset"]) if unwrap else None
        if m is not None and m.has_flag("is_inner_batch"):
            for item in m.inner_messages():
                e = {**d, "queueOffset": d["queueOffset"] + item.index, "properties": item.properties}
                if keep(e):
                    out.add((d["commitLogOffset"], item.index))
        elif keep(d):
            out.add((d["commitLogOffset"], None))
    return out


def got(lines: list[dict]) -> set[tuple]:
    keys = [(d["commitLogOffset"], d.get("innerIndex")) for d in lines]
    assert len(keys) == len(set(keys))
    return set(keys)


@pytest.fixture(scope="module")
def wholes() -> dict[str, list[dict]]:
    return {}


def whole_of(capsys, wholes, version) -> list[dict]:
    if version not in wholes:
        wholes[version] = jsonl(capsys, "messages", store_path(version))
    return wholes[version]


@pytest.mark.parametrize("expression", ["TagA || TagB", "TagA", " TagC ||TagA||", "*", "标签||TagB", "Zip || |"])
def test_tag_expressions_equal_the_filter_in_python(capsys, wholes, version, expression):
    whole = whole_of(capsys, wholes, version)
    tags = tag_expression(expression)
    lines = jsonl(capsys, "messages", store_path(version), "--tag", expression)
    if tags is None:  # every message, records as stored
        assert lines == whole
        return
    want = expected(version, whole, lambda d: tags is None or d["properties"].get("TAGS") in tags)
    assert got(lines) == want
    assert want or tags is None or expression == "Zip || |"
    if tags is not None and len(tags) > 1:  # the union of the tags one by one
        assert want == set().union(*(expected(version, whole, lambda d, t=t: d["properties"].get("TAGS") == t)
                                     for t in tags))


def test_tag_expression_parsed_as_filter_api():
    assert tag_expression("*") is None and tag_expression("") is None
    assert tag_expression(" TagA || TagB ") == {"TagA", "TagB"}
    assert tag_expression("|||") == {"|"}  # split at the first "||", the "|" left is a tag
    assert tag_expression("TagA||||TagB") == {"TagA", "TagB"}
    for empty in ("||", "  ", "|| ||"):
        with pytest.raises(Exception, match="names no tag"):
            tag_expression(empty)


def test_an_empty_tag_expression_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["messages", str(store_path("rocketmq-5.3.3")), "--tag", "||"])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and "names no tag" in err and out == ""


@pytest.mark.parametrize("props", [["CLUSTER=DefaultCluster"], ["TAGS=TagA", "CLUSTER=DefaultCluster"],
                                   ["KEYS=key-5 order-1"], ["NO_SUCH=1"], ["TAGS=TagA", "TAGS=TagB"]])
def test_properties_equal_the_filter_in_python(capsys, wholes, version, props):
    whole = whole_of(capsys, wholes, version)
    pairs = [p.split("=", 1) for p in props]
    argv = [a for p in props for a in ("--property", p)]
    lines = jsonl(capsys, "messages", store_path(version), *argv)
    want = expected(version, whole, lambda d: all(d["properties"].get(k) == v for k, v in pairs))
    assert got(lines) == want
    if props[0].startswith(("CLUSTER", "KEYS")) and props[0] != "KEYS=key-5 order-1":
        assert want


def test_topic_lists_equal_the_filter_in_python(capsys, wholes, version):
    whole = whole_of(capsys, wholes, version)
    topics = sorted({d["topic"] for d in whole})
    assert len(topics) >= 3
    pick = [topics[0], topics[-1], topics[len(topics) // 2]]
    for argv in (["--topic", ",".join(pick)], ["--topic", pick[0], "--topic", f"{pick[1]},{pick[2]}"]):
        lines = jsonl(capsys, "messages", store_path(version), *argv)
        assert got(lines) == {(d["commitLogOffset"], None) for d in whole if d["topic"] in pick}
        assert [d["commitLogOffset"] for d in lines] == sorted(d["commitLogOffset"] for d in lines)
    # With the other filters: all must hold.
    lines = jsonl(capsys, "messages", store_path(version), "--topic", ",".join(pick + ["TopicTest"]),
                  "--tag", "TagA||TagC", "--property", "CLUSTER=DefaultCluster")
    want = expected(version, whole, lambda d: d["topic"] in pick + ["TopicTest"]
                    and d["properties"].get("TAGS") in ("TagA", "TagC")
                    and d["properties"].get("CLUSTER") == "DefaultCluster")
    assert got(lines) == want and want


def test_export_takes_the_same_filters(capsys, version, tmp_path):
    argv = ["--topic", "TopicTest,TopicMisc", "--tag", "TagA || TagB", "--property", "CLUSTER=DefaultCluster"]
    shown = jsonl(capsys, "messages", store_path(version), *argv)
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "export", store_path(version), "--to", "jsonl", out, *argv)
    assert code == 0, err
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [d for d in shown if "innerIndex" not in d] == exported and exported


def outstanding_units(version: str, group: str) -> set[tuple]:
    """(topic, queue id, queue offset) of every unit past ``group``'s committed offsets, per ``lag``."""
    rows = consumer_lag(open_store(store_path(version)), group=group)
    return {(r.topic, r.queue_id, q) for r in rows
            for q in range(max(r.committed_offset or 0, r.min_offset), r.max_offset)}


def test_outstanding_equals_the_units_past_the_committed_offsets(capsys, version):
    groups = sorted({r.group for r in consumer_lag(open_store(store_path(version)))})
    assert groups
    for group in groups:
        lines = jsonl(capsys, "messages", store_path(version), "--outstanding", group)
        seen = [(d["topic"], d["queueId"], d["queueOffset"]) for d in lines]
        assert len(seen) == len(set(seen))
        want = outstanding_units(version, group)
        assert set(seen) == want
        code, out, _ = run(capsys, "messages", store_path(version), "--outstanding", group, "--count", "--format",
                           "jsonl")
        assert json.loads(out) == {"messages": len(want)}
        lag_total = sum(r.available for r in consumer_lag(open_store(store_path(version)), group=group))
        assert lag_total == len(want)


def test_outstanding_with_a_topic_and_an_unknown_group(capsys):
    store = store_path("rocketmq-5.1.4")
    lines = jsonl(capsys, "messages", store, "--outstanding", "GroupA", "--topic", "TopicTest")
    assert {(d["topic"], d["queueId"], d["queueOffset"]) for d in lines} == \
        {u for u in outstanding_units("rocketmq-5.1.4", "GroupA") if u[0] == "TopicTest"}
    code, out, err = run(capsys, "messages", store, "--outstanding", "NoGroup")
    assert code == 2 and "unknown consumer group 'NoGroup'" in err and "GroupA" in err
    code, out, err = run(capsys, "messages", store, "--outstanding", "GroupA", "--topic", "TopicMisc")
    assert code == 2 and "none of the topics group 'GroupA' has" in err


def test_queue_outstanding_lists_the_units_past_the_committed_offset(capsys, version):
    store = store_path(version)
    want = outstanding_units(version, "GroupA")
    seen = set()
    for r in consumer_lag(open_store(store), group="GroupA"):
        code, out, err = run(capsys, "queue", store, r.topic, r.queue_id, "--outstanding", "GroupA",
                             "--format", "jsonl")
        assert code == 0, err
        seen |= {(r.topic, r.queue_id, json.loads(line)["cqOffset"]) for line in out.splitlines()}
    assert seen == want
    code, out, err = run(capsys, "queue", store, "--outstanding", "GroupA", "--format", "jsonl")
    listed = [json.loads(line) for line in out.splitlines()]
    rows = {(r.topic, r.queue_id): r for r in consumer_lag(open_store(store), group="GroupA")}
    assert {(d["topic"], d["queueId"]) for d in listed} == set(rows)
    for d in listed:
        r = rows[(d["topic"], d["queueId"])]
        assert (d["committedOffset"], d["outstanding"]) == (r.committed_offset, r.available)


def test_columns_and_count(capsys, wholes, version):
    whole = whole_of(capsys, wholes, version)
    cols = ["topic", "queueOffset", "msgId", "properties", "storeTimestamp"]
    lines = jsonl(capsys, "messages", store_path(version), "--columns", ",".join(cols))
    assert [list(d) for d in lines] == [cols] * len(whole)
    assert lines == [{c: d[c] for c in cols} for d in whole]
    code, out, _ = run(capsys, "messages", store_path(version), "--columns", "queueId,tags,keys", "--limit", "2")
    assert out.splitlines()[0].split() == ["queueId", "tags", "keys"] and len(out.splitlines()) == 3
    code, out, _ = run(capsys, "messages", store_path(version), "--count")
    assert out.split() == ["messages", str(len(whole))]
    by_topic = Counter(d["topic"] for d in whole)
    counted = jsonl(capsys, "messages", store_path(version), "--count", "topic")
    assert {d["topic"]: d["messages"] for d in counted} == by_topic
    by_queue = Counter((d["topic"], d["queueId"]) for d in whole)
    counted = jsonl(capsys, "messages", store_path(version), "--count", "queue", "--topic", "TopicTest")
    assert {(d["topic"], d["queueId"]): d["messages"] for d in counted} == \
        {k: n for k, n in by_queue.items() if k[0] == "TopicTest"}
    code, _, err = run(capsys, "messages", store_path(version), "--count", "--limit", "3")
    assert code == 2 and "--limit does not go with it" in err


def test_lag_rows_to_pandas(monkeypatch):
    pytest.importorskip("pandas")
    rows = consumer_lag(open_store(store_path("rocketmq-5.3.3")))
    frame = rows.to_pandas()
    assert list(frame.columns) == list(next(iter(rows)).to_json_dict())
    assert frame["group"].tolist() == [r.group for r in rows]
    assert frame["lag"].tolist() == [r.lag for r in rows]
    assert frame["committedOffset"].tolist() == [r.committed_offset for r in rows]
    assert frame["beyondMax"].tolist() == [r.beyond_max for r in rows] and any(frame["beyondMax"])
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ModuleNotFoundError, match=r"\[pandas\] extra"):
        rows.to_pandas()


def _write_growing(src: Path, dst: Path, records: list[tuple[int, int]], done: threading.Event) -> None:
    """Copy ``src``'s segments into ``dst`` a record at a time, as a broker appends: each segment file
    created zero-filled, each record's bytes after its size field first and the size field last."""
    segs = sorted(src.iterdir())
    starts = [int(p.name) for p in segs]
    data = {int(p.name): p.read_bytes() for p in segs}
    pieces = []
    for start in starts:
        ends = [o for o, _ in records if start <= o < start + len(data[start])] + [start + len(data[start])]
        pieces += [(start, a - start, b - a) for a, b in zip(ends, ends[1:]) if b > a]
    for i, (start, at, size) in enumerate(pieces):
        path = dst / f"{start:020d}"
        if not path.exists():
            with open(path, "wb") as f:
                f.truncate(len(data[start]))
        with open(path, "r+b") as f:
            f.seek(at + 4)
            f.write(data[start][at + 4:at + size])
            f.flush()
            f.seek(at)
            f.write(data[start][at:at + 4])
        if i % 25 == 0:
            time.sleep(0.05)
    done.set()


def test_follow_reads_a_growing_store_until_ctrl_c(capsys, tmp_path):
    src = store_path("rocketmq-4.9.7") / "commitlog"
    whole = jsonl(capsys, "messages", src, "--live")
    dst = tmp_path / "commitlog"
    dst.mkdir()
    first = sorted(src.iterdir())[0]
    with open(dst / first.name, "wb") as f:
        f.truncate(first.stat().st_size)
    proc = subprocess.Popen([sys.executable, "-m", "rmqformats", "messages", str(dst), "--live", "--follow",
                             "--interval", "0.02", "--format", "jsonl"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, b"")), daemon=True)
    reader.start()
    done = threading.Event()
    records = [(d["commitLogOffset"], d["storeSize"]) for d in whole]
    writer = threading.Thread(target=_write_growing, args=(src, dst, records, done), daemon=True)
    try:
        time.sleep(1.0)
        writer.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not done.is_set() or len(lines) < len(whole)):
            time.sleep(0.1)
        assert proc.poll() is None, proc.stderr.read().decode()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=10)
    err = proc.stderr.read().decode()
    assert code == 130, err
    assert err.strip().splitlines()[-1].endswith("interrupted (SIGINT)") and "Traceback" not in err
    assert [json.loads(x) for x in lines] == whole


def test_follow_needs_live(capsys):
    code, _, err = run(capsys, "messages", store_path("rocketmq-4.9.7"), "--follow")
    assert code == 2 and "give --live with it" in err
    code, _, err = run(capsys, "messages", store_path("rocketmq-5.3.3"), "--live", "--follow", "--tag", "TagA")
    assert code == 2 and "give the commit-log folder" in err and "TopicBatchCQ" in err


@pytest.mark.parametrize("argv, text", [(["--property", "NOEQUALS"], "expected NAME=VALUE"),
                                        (["--columns", "topic,nope"], "unknown column(s) nope"),
                                        (["--topic", ","], "no topic in")])
def test_bad_filter_values_are_usage_errors(capsys, argv, text):
    with pytest.raises(SystemExit) as exc:
        main(["messages", str(store_path("rocketmq-4.9.7")), *argv])
    assert exc.value.code == 2 and text in capsys.readouterr().err


@pytest.mark.parametrize("command", [
    "messages --sample --outstanding GroupA --columns queueId,queueOffset,tags,keys --limit 3",
    "messages --sample --tag 'TagA || TagB' --count queue --topic TopicTest"])
def test_the_readme_shows_the_examples_as_printed(capsys, command):
    import shlex
    readme = docpages.text()
    code, out, _ = run(capsys, *shlex.split(command))
    assert code == 0 and f"$ rmqformats {command}\n{out}" in readme


def test_outstanding_from_rocksdb_offsets(capsys, tmp_path, version):
    """Offsets in config/rdb (5.3.x's RocksDB config), loaded by the broker when consumerOffset.json is gone."""
    pytest.importorskip("rocksdict")
    from rmqformats.synth.rocksdb import write_config_v2
    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    for name in ("consumerOffset.json", "consumerOffset.json.bak"):
        if (root / "config" / name).exists():
            os.remove(root / "config" / name)
    write_config_v2(str(root / "config"), offsets={("TopicTest", "GroupR", 0): 3, ("TopicTest", "GroupR", 2): 10})
    rows = consumer_lag(open_store(root), group="GroupR")
    assert {(r.queue_id, r.committed_offset) for r in rows if r.committed_offset is not None} == {(0, 3), (2, 10)}
    want = {(r.topic, r.queue_id, q) for r in rows
            for q in range(max(r.committed_offset or 0, r.min_offset), r.max_offset)}
    lines = jsonl(capsys, "messages", root, "--outstanding", "GroupR")
    assert {(d["topic"], d["queueId"], d["queueOffset"]) for d in lines} == want and len(lines) == len(want)
    assert {(t, q) for t, q, _ in want} == {("TopicTest", q) for q in range(4)}  # its other queues from 0
