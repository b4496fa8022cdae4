"""Commands over a damaged copy of a vector store say where the data ended and end with its status, as
`messages` does; texts about a file name its whole path; a queue file cut short is a finding of `check`."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

import pytest

import rmqformats
from rmqformats.cli import main, status

from conftest import store_path

#: A cut in the 259-byte record at 0x63ec of the 5.3.3 store's first segment: 100 messages before it.
CUT = 25700


@pytest.fixture
def cut_store(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    os.truncate(root / "commitlog" / f"{0:020d}", CUT)
    return root


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def ends_early(err: str, root) -> bool:
    return f"rmqformats: data ends early: {root / 'commitlog' / f'{0:020d}'} @ 0x63ec: " in err


def test_sql_pending_and_dump_end_where_the_data_ends(cut_store, capsys):
    code, out, err = run(capsys, "sql", cut_store, "SELECT count(*) AS n FROM messages", "--format", "jsonl")
    assert code == status.DAMAGED and json.loads(out) == {"n": 100} and ends_early(err, cut_store)
    code, out, err = run(capsys, "sql", cut_store, "SELECT topic FROM messages LIMIT 1")
    assert code == status.OK and not err  # a query that stops before the end reads no end
    for fmt in ("table", "jsonl", "json"):
        code, _, err = run(capsys, "pending", cut_store, "--format", fmt)
        assert code == status.DAMAGED and ends_early(err, cut_store), fmt
    segment = cut_store / "commitlog" / f"{0:020d}"
    for extra in ([], ["--summary"], ["--format", "jsonl"], ["--format", "json"]):
        code, _, err = run(capsys, "dump", segment, *extra)
        assert code == status.DAMAGED and ends_early(err, cut_store), extra
    code, _, err = run(capsys, "dump", store_path("rocketmq-5.3.3") / "commitlog" / f"{0:020d}")
    assert code == status.OK and not err
    assert run(capsys, "pending", store_path("rocketmq-5.3.3"))[0] == status.OK


def test_a_unit_past_the_end_names_the_whole_path(cut_store, capsys):
    code, out, _ = run(capsys, "queue", cut_store, "TopicTest", "0", "--resolve", "--format", "jsonl")
    details = [json.loads(line).get("detail") for line in out.splitlines()]
    missing = [d for d in details if d]
    assert missing and all(d.startswith(str(cut_store / "commitlog")) for d in missing), missing


@pytest.fixture
def cut_batch_queue(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    path = root / "batchconsumequeue" / "TopicBatchCQ" / "0" / f"{0:020d}"
    os.truncate(path, 50)
    return root, path


def test_a_batch_queue_file_cut_short_is_a_finding_of_check(cut_batch_queue, capsys):
    root, path = cut_batch_queue
    code, out, err = run(capsys, "check", root, "--format", "json")
    assert code == status.FINDINGS, err
    doc = json.loads(out)
    unreadable = [f for f in doc["findings"] if f["kind"] == "unreadable"]
    assert unreadable and all(str(path) in f["text"] for f in unreadable)
    assert any(f["kind"] == "missing-unit" and f["topic"] == "TopicBatchCQ" for f in doc["findings"])
    code, out, err = run(capsys, "preflight", root)
    assert code in (status.PREFLIGHT_CHANGES, status.PREFLIGHT_REFUSES) and "Traceback" not in err


def test_report_of_a_store_check_cannot_read(cut_batch_queue, capsys, tmp_path, monkeypatch):
    """The report's summary does not need check's recovery plan; a check that could not read the store is a
    problem, named in the summary line."""
    root, _ = cut_batch_queue
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r.html")
    assert code == status.FINDINGS and "problem(s) found" in err
    from rmqformats.errors import QueueFileError
    from rmqformats.recovery import report as report_module

    def refuse(*args, **kwargs):
        raise QueueFileError(str(root / "consumequeue"), 4, "not read")
    monkeypatch.setattr(report_module, "cross_check", refuse)
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r2.html")
    assert code == status.FINDINGS
    assert f"check could not read the store: {root / 'consumequeue'} @ 0x4: not read" in err
    built = report_module.build_report(rmqformats.open_store(root))
    assert built.check is None and built.lag and not built.ok
    assert "not read" in report_module.render_html(dataclasses.replace(built), plotly_src="p.js")


def test_report_counts_the_parts_it_could_not_make(tmp_path, capsys):
    """Config files lag and pending cannot read: the report is written, each part's reason in the summary
    line with the file's whole path, and the report ends 1, as those commands would not end 0."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    os.truncate(root / "config" / "topics.json", 100)
    (root / "config" / "consumerOffset.json").write_bytes(b"\x00\xffnotjson")
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r.html")
    assert code == status.FINDINGS and "2 problem(s) found" in err
    assert f"lag could not read the store: {root / 'config' / 'consumerOffset.json'} @ 0x0" in err
    assert f"pending could not read the store: {root / 'config' / 'topics.json'} @ 0x" in err
    assert run(capsys, "lag", root)[0] == status.ERROR


def test_an_index_header_no_query_matches_is_a_finding(tmp_path, capsys):
    """Begin and end store times overwritten: lookup finds nothing there, as the broker's queries pass the
    file by; check says so, naming the file."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    path = sorted((root / "index").iterdir())[0]
    data = bytearray(path.read_bytes())
    data[:16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    code, out, err = run(capsys, "check", root, "--format", "json")
    assert code == status.FINDINGS, err
    (found,) = [f for f in json.loads(out)["findings"] if f["kind"] == "index-header-matches-no-time"]
    assert path.name in found["text"] and "(begin -1, end -1)" in found["text"]
    assert run(capsys, "check", store_path("rocketmq-5.3.3"))[0] == status.OK


@pytest.mark.parametrize("damage", ["shortened", "missing"])
def test_commit_log_bytes_no_file_holds_are_a_finding_of_check(tmp_path, capsys, damage):
    """A shortened or missing segment: messages crosses the bytes and ends 3, check names them (preflight
    says what the broker does)."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    segment = root / "commitlog" / f"{262144:020d}"
    if damage == "shortened":
        os.truncate(segment, 200236)
    else:
        segment.unlink()
    code, out, err = run(capsys, "check", root, "--format", "json")
    assert code == status.FINDINGS, err
    (gap,) = [f for f in json.loads(out)["findings"] if f["kind"] == "commit-log-gap"]
    assert ("is 200,236 bytes, not the 262,144 of the others" if damage == "shortened"
            else "no segment file holds them") in gap["text"]
    assert run(capsys, "messages", root, "--count")[0] == status.DAMAGED


def test_timer_files_the_timer_store_cannot_load_are_findings_of_check(tmp_path, capsys):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    os.truncate(root / "config" / "timercheck", 3)
    os.truncate(root / "timerwheel", 33)
    code, out, err = run(capsys, "check", root, "--format", "json")
    assert code == status.FINDINGS, err
    texts = [f["text"] for f in json.loads(out)["findings"] if f["kind"] == "unreadable"]
    assert any(t.startswith(f"{root / 'timerwheel'} @ 0x20: ") for t in texts)
    assert any(t.startswith(f"{root / 'config' / 'timercheck'} @ 0x3: ") for t in texts)
    code, out, _ = run(capsys, "check", root, "--no-timer", "--format", "json")
    assert not [f for f in json.loads(out)["findings"] if f["kind"] == "unreadable"]


def test_a_segment_named_inside_the_one_before_it(tmp_path, capsys):
    """A renamed segment whose name lies inside the previous file: read at offsets from its name, as the broker
    reads it; messages ends 3 saying so, check and preflight name it."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    renamed = root / "commitlog" / f"{1048000:020d}"
    (root / "commitlog" / f"{1048576:020d}").rename(renamed)
    code, out, err = run(capsys, "messages", root, "--count")
    assert code == status.DAMAGED and f"segment {renamed} is named for commit-log offset 1048000" in err
    code, out, _ = run(capsys, "check", root, "--format", "json")
    assert code == status.FINDINGS
    assert [f for f in json.loads(out)["findings"] if f["kind"] == "segment-named-inside-another"]
    code, out, _ = run(capsys, "preflight", root)
    assert f"commit-log segment {renamed.name} is named 261,568 bytes after" in out


def test_rebuild_of_a_commit_log_with_a_missing_segment_ends_3(tmp_path, capsys):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    (root / "commitlog" / f"{524288:020d}").unlink()
    code, _, err = run(capsys, "rebuild", root, "--out", tmp_path / "new")
    assert code == status.DAMAGED and "262,144 byte(s) at commit-log offset 524288 are in no segment file" in err
    assert run(capsys, "rebuild", root, "--out", tmp_path / "salvaged", "--salvage")[0] == status.OK


@pytest.mark.parametrize("size, zeroed", [(0, "physicMsgTimestamp, logicsMsgTimestamp, indexMsgTimestamp, "
                                              "masterFlushedOffset, confirmPhyOffset as 0"),
                                         (20, "masterFlushedOffset, confirmPhyOffset as 0 and indexMsgTimestamp "
                                              "with its bytes past the old end as zeros")])
def test_preflight_says_a_short_checkpoint_is_extended(tmp_path, capsys, size, zeroed):
    """StoreCheckpoint maps 4096 bytes read-write: a shorter file grows, its missing fields read as zeros."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    os.truncate(root / "checkpoint", size)
    code, out, _ = run(capsys, "preflight", root, "--format", "json")
    (item,) = [i for i in json.loads(out)["items"] if i["method"] == "StoreCheckpoint.<init>"]
    assert item["verdict"] == "change" and item["offset"] == size and zeroed in item["text"]
    assert code == status.PREFLIGHT_CHANGES
    code, out, _ = run(capsys, "preflight", store_path("rocketmq-5.3.3"), "--format", "json")
    assert not [i for i in json.loads(out)["items"] if i["method"] == "StoreCheckpoint.<init>"]
