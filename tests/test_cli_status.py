"""One exit-status table for every command (rmqformats/cli/status.py): a test per row, and what falls in each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rmqformats.cli import build_parser, main, status

from conftest import store_path
import docpages

ROOT = Path(__file__).resolve().parent.parent


def run(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_the_table_is_in_help_and_readme(capsys):
    text = build_parser().format_help()
    readme = docpages.page("docs/exit-statuses.md")
    for code, meaning in status.TABLE:
        assert f"  {code}  {meaning}" in text
        assert re.search(rf"^\| {code} \| {re.escape(meaning)} \|$", readme, re.M), code
    assert [code for code, _ in status.TABLE] == [status.OK, status.FINDINGS, status.ERROR, status.DAMAGED,
                                                  status.INTERRUPTED]


# -- 0: success ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["inspect"], ["messages"], ["queue"], ["queue", "TopicTest", "0"], ["check"],
                                  ["config"], ["lookup", "--topic", "TopicTest", "--key", "k1"]])
def test_ok(capsys, argv):
    code, _, err = run(capsys, argv[0], store_path("rocketmq-5.1.4"), *argv[1:])
    assert code == status.OK, err


@pytest.mark.parametrize("argv", [["messages", "--topic", "NoSuchTopic"], ["messages", "--key", "nope"],
                                  ["queue", "TopicTest", "0", "--from", "1000"],
                                  ["lookup", "--topic", "TopicTest", "--key", "no-such-key"]])
def test_empty_filter_results_are_ok_with_a_note(capsys, argv):
    code, _, err = run(capsys, argv[0], store_path("rocketmq-5.1.4"), *argv[1:])
    assert code == status.OK and err.startswith("rmqformats: no ")


# -- 1: findings --------------------------------------------------------------------------------------------

def test_findings_from_check(capsys, store_copy):
    path = store_copy / "consumequeue" / "TopicTest" / "3" / "00000000000000000000"
    data = bytearray(path.read_bytes())
    data[4 * 20 + 8:4 * 20 + 12] = (1).to_bytes(4, "big")  # size
    data[4 * 20 + 12:4 * 20 + 20] = (7).to_bytes(8, "big")  # tags code: a second mismatch in the same unit
    path.write_bytes(bytes(data))
    code, out, _ = run(capsys, "check", store_copy, "--format", "json")
    assert code == status.FINDINGS and len(json.loads(out)["problems"]) == 2
    code, out, _ = run(capsys, "check", store_copy, "--format", "json", "--max-problems", "1")
    assert code == status.FINDINGS and len(json.loads(out)["problems"]) == 1
    code, out, _ = run(capsys, "check", store_copy, "--max-problems", "1")
    assert code == status.FINDINGS and sum(line.startswith("mismatch") for line in out.splitlines()) == 1


def test_findings_from_lag_flags(capsys):
    code, out, _ = run(capsys, "lag", store_path("rocketmq-5.3.3"))
    assert code == status.FINDINGS and "beyond-max" in out
    code, out, _ = run(capsys, "lag", store_path("rocketmq-5.1.4"))
    assert code == status.OK and "total lag GroupA" in out


# -- 2: usage errors and typed errors -------------------------------------------------------------------------

@pytest.mark.parametrize("argv,text", [
    (["messages", "--limit", "-1"], "--limit: must be 0 or more, not -1"),
    (["messages", "--msg-id", "X", "--offset", "0"], "not allowed with argument"),
    (["messages", "--offset", "0", "--topic", "TopicTest"], "cannot be combined with --topic"),
    (["queue", "TopicTest", "0", "--limit", "-5"], "--limit: must be 0 or more"),
    (["queue", "TopicTest", "x"], "QID must be a number"),
    (["queue", "TopicTest", "0", "--body", "text"], "--body and --body-limit need --resolve"),
    (["check", "--max-problems", "0"], "must be 1 or more"),
    (["lookup", "--topic", "T", "--key", "k", "--max", "0"], "must be 1 or more"),
    (["lookup", "--topic", "T", "--key", "k", "--max", "-1"], "--max: must be 1 or more, not -1"),
    (["inspect", "--jobs", "0"], "--jobs/--threads: must be 1 or more, not 0"),
    (["messages", "--live", "--interval", "2"], "--interval is the time between reads of --follow"),
    (["dump", "--body-limit", "-1"], "must be 0 or more"),
])
def test_usage_errors(capsys, argv, text):
    code, out, err = run(capsys, argv[0], *([] if argv[0] == "dump" else [store_path("rocketmq-5.1.4")]),
                         *argv[1:], *(["x"] if argv[0] == "dump" else []))
    assert code == status.ERROR and text in err and out == ""


@pytest.mark.parametrize("argv,text", [
    (["queue", "NoTopic", "0"], "unknown topic 'NoTopic'"),
    (["queue", "NoTopic"], "unknown topic 'NoTopic'"),
    (["queue", "TopicTest", "9"], "unknown queue TopicTest/9"),
    (["check", "--topic", "NoTopic"], "unknown topic 'NoTopic'"),
    (["check", "--topic", "TopicTest", "--queue", "99"], "unknown queue TopicTest/99"),
    (["check", "--queue", "99"], "unknown queue id 99"),
    (["lag", "--group", "Nope"], "unknown group 'Nope'"),
    (["lag", "--topic", "NoTopic"], "unknown topic 'NoTopic'"),
])
def test_unknown_topics_queues_and_groups(capsys, argv, text):
    root = store_path("rocketmq-5.1.4")
    code, out, err = run(capsys, argv[0], root, *argv[1:])
    assert code == status.ERROR and f"rmqformats: error: {text}" in err and out == ""
    assert str(root) in err  # where it looked, as a whole path


def test_typed_errors_name_the_whole_path(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "inspect", tmp_path / "empty")
    assert code == status.ERROR and err.startswith(f"rmqformats: error: {tmp_path / 'empty'}: neither a store root")
    seg = tmp_path / "commitlog" / "00000000000000000000"
    seg.parent.mkdir()
    seg.write_bytes(b"\x00\x00\x01\x00\x12\x34\x56\x78" + bytes(248))
    code, _, err = run(capsys, "messages", tmp_path, "--offset", "0")
    assert code == status.ERROR and f"rmqformats: error: {seg} @ 0x0: " in err


def test_compaction_given_the_compaction_folder_names_the_root(capsys):
    root = store_path("rocketmq-5.3.3")
    code, _, err = run(capsys, "compaction", root / "compaction")
    assert code == status.ERROR and f"give the store root ({root})" in err


def test_tiered_given_a_file_says_so(capsys, tmp_path):
    (tmp_path / "f").write_text("x")
    code, _, err = run(capsys, "tiered", tmp_path / "f")
    assert code == status.ERROR and f"{tmp_path / 'f'}: a file, not a tiered store folder" in err


def test_missing_store_argument_is_a_usage_error(capsys):
    code, _, err = run(capsys, "inspect")
    assert code == status.ERROR and "give a STORE path or --sample" in err


# -- 3: data ended at damage ----------------------------------------------------------------------------------

def test_damaged_is_the_last_row():
    """Status 3 is set by the reading commands whose data ends at damage (the salvage scan); here: its row."""
    assert status.DAMAGED == 3 and dict(status.TABLE)[3].startswith("the data ended at damage")
