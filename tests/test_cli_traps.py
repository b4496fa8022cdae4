"""What the command line answers where it used to mislead: each answer says what is there and what to do."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rmqformats.cli import status
from rmqformats.cli import build_parser, main
from rmqformats.errors import with_article
from rmqformats.index import IndexFiles
from rmqformats.message import format_millis
from rmqformats.synth.index import IndexFileBuilder

from conftest import FIXTURES, store_path, truth_records
import docpages

STORE = store_path("rocketmq-5.3.3")
REPO = Path(__file__).resolve().parent.parent


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _most_keyed() -> tuple[str, str, list[int]]:
    """The topic and key the most messages of the 5.3.3 vector carry, and their commit-log offsets."""
    carrying: dict[tuple[str, str], list[int]] = {}
    for r in truth_records("rocketmq-5.3.3"):
        if r["kind"] == "MESSAGE":
            for k in (r["keys"] or "").split(" "):
                if k:
                    carrying.setdefault((r["topic"], k), []).append(r["commitlogOffset"])
    (topic, key), offsets = max(carrying.items(), key=lambda kv: len(kv[1]))
    return topic, key, offsets


# -- lookup ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("index", ["missing", "empty"])
def test_lookup_without_index_files_points_at_the_commit_log_scan(tmp_path, capsys, index):
    root = tmp_path / "store"
    shutil.copytree(STORE, root, ignore=shutil.ignore_patterns("index"))
    if index == "empty":
        (root / "index").mkdir()
    topic, key, offsets = _most_keyed()
    assert len(offsets) > 1
    code, out, err = run(capsys, "lookup", root, "--topic", topic, "--key", key)
    # Nothing to search is not "no entry": exit 2 (the exit table's typed error), one line, the command to use.
    assert code == status.ERROR and out == "" and len(err.splitlines()) == 1
    assert f"{root / 'index'}: {'no such folder' if index == 'missing' else 'no index files'}" in err
    suggested = err.split("`")[1].split()
    assert suggested == ["rmqformats", "messages", str(root), "--topic", topic, "--key", key]
    code, out, _ = run(capsys, *suggested[1:], "--format", "jsonl")
    assert code == 0 and [json.loads(line)["commitLogOffset"] for line in out.splitlines()] == offsets


def test_lookup_outside_the_indexed_times_says_what_the_index_covers(capsys):
    files = json.loads((FIXTURES / "rocketmq-5.3.3" / "truth" / "index.json").read_text())["files"]
    low = format_millis(min(f["beginTimestamp"] for f in files))
    high = format_millis(max(f["endTimestamp"] for f in files))
    code, out, err = run(capsys, "lookup", STORE, "--topic", "TopicTest", "--key", "key-1", "--begin", "2030-01-01")
    assert code == status.OK and len(out.splitlines()) == 1  # the header: a valid query that found nothing
    assert err.startswith("rmqformats: no index file covers the window asked (--begin 2030-01-01T00:00:00.000Z)")
    assert f"the {len(files)} index file(s) with entries in {STORE / 'index'} cover store times {low} to {high}" in err
    # Inside the window, a key without entries: said as such, with the same coverage.
    code, _, err = run(capsys, "lookup", STORE, "--topic", "TopicTest", "--key", "no-such-key")
    assert code == status.OK and "no index entry for key 'no-such-key' in topic 'TopicTest'" in err
    assert f"cover store times {low} to {high}" in err


def test_lookup_window_that_ends_before_it_begins_is_a_usage_error(capsys):
    code, out, err = run(capsys, "lookup", STORE, "--topic", "TopicTest", "--key", "key-1",
                         "--begin", "2026-11-23", "--end", "2026-11-22")
    assert code == status.ERROR and out == "" and len(err.splitlines()) == 1
    assert "--begin 2026-11-23T00:00:00.000Z is after --end 2026-11-22T00:00:00.000Z" in err
    # A closed window: one instant is a window (the index keeps seconds).
    assert run(capsys, "lookup", STORE, "--topic", "TopicTest", "--key", "key-1", "--begin", "1000",
               "--end", "1000")[0] == status.OK


# -- dump --------------------------------------------------------------------------------------------------------

def test_dump_index_of_an_odd_size_lists_the_counts_that_fit(tmp_path, capsys):
    builder = IndexFileBuilder(1000, 5000)  # 40 + 4*1000 + 20*5000 bytes: not the defaults, not 4 per slot
    for n in range(3):
        builder.put_key(f"TopicTest#key-{n}", 100 * n, 1_795_377_022_000 + n)
    path = tmp_path / "20261122195022317"
    builder.write(path)
    code, out, err = run(capsys, "dump", "--kind", "index", path)
    assert code == status.ERROR and len(err.splitlines()) == 1
    assert f"{path}: cannot infer the slot and entry counts from the file size 104040" in err
    assert "5,199 pairs of counts fit it, among them 1,240 slots and 4,952 entries, 1,000 slots and 5,000 entries" in err
    assert "--hash-slots and --index-num on the command line" in err
    code, out, err = run(capsys, "dump", "--kind", "index", path, "--hash-slots", "1000", "--index-num", "5000",
                         "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and err == ""
    assert (rows[0]["hashSlots"], rows[0]["indexNum"]) == (1000, 5000)
    assert [r["phyOffset"] for r in rows[1:]] == [0, 100, 200]
    code, out, _ = run(capsys, "dump", path, "--hash-slots", "1000", "--summary", "--format", "jsonl")
    assert code == 0 and json.loads(out)["recordKinds"] == {"ENTRY": 3, "HEADER": 1}


def test_dump_of_a_file_no_counts_fit_names_the_nearest_sizes(tmp_path, capsys):
    path = tmp_path / "20261122195022317"
    path.write_bytes(b"\0" * 130)  # 40 + 90: no whole number of 4-byte slots
    code, _, err = run(capsys, "dump", "--kind", "index", path)
    assert code == status.ERROR
    assert "no counts give 130 bytes (40 + 4 * slots + 20 * entries): the file is cut short or not an index file" in err
    assert "have 124 bytes (1 slot) and 208 bytes (2 slots); one of the defaults has 420,000,040 bytes" in err


@pytest.mark.parametrize("rel, what, command", [
    ("", "a store root", "`rmqformats inspect {store}`"),
    ("commitlog", "a folder of 5 commit-log segment(s)", "`rmqformats messages {store}/commitlog` reads its messages"),
    ("index", "the index folder", "`rmqformats lookup {store} --topic T --key K` searches it"),
    ("timerlog", "the timer-log folder", "`rmqformats dump {store}/timerlog/00000000000000000000` lists"),
    ("consumequeue/TopicTest/0", "the files of queue TopicTest/0", "`rmqformats queue {store} TopicTest 0` lists"),
    ("config", "the config folder", "`rmqformats config {store}` reads it"),
])
def test_dump_of_a_folder_says_what_it_is_and_what_reads_it(capsys, rel, what, command):
    folder = STORE / rel if rel else STORE
    code, out, err = run(capsys, "dump", folder)
    assert code == status.ERROR and len(err.splitlines()) == 1
    assert f"rmqformats: error: {folder}: a folder, not a file: {what}; " in err
    assert command.format(store=STORE) in err


def test_dump_of_a_timer_log_lists_its_blank_marker(capsys):
    """The truth of the 5.3.3 vector: seven units, then the blank marker at 364 that sends the broker's reader on
    to the next file (size 52: the bytes left; magic BLANK_MAGIC_CODE 0xcbd43194)."""
    truth = [t for t in json.loads((FIXTURES / "rocketmq-5.3.3" / "truth" / "timer.json").read_text())["timerLogUnits"]
             if t["file"] == "00000000000000000000"]
    code, out, _ = run(capsys, "dump", STORE / "timerlog" / "00000000000000000000", "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == len(truth) == 8
    blank = rows[-1]
    assert (blank["unitKind"], blank["fileOffset"], blank["size"], blank["prevPos"]) == ("BLANK", 364, 52, 0)
    assert blank["magic"] & 0xFFFFFFFF == 0xCBD43194 == truth[-1]["magic"] & 0xFFFFFFFF
    code, out, _ = run(capsys, "dump", STORE / "timerlog" / "00000000000000000000", "--summary", "--format", "jsonl")
    assert json.loads(out)["recordKinds"] == {"BLANK": 1, "enqueue": 7}


# -- grammar -----------------------------------------------------------------------------------------------------

def test_an_index_file_given_as_a_segment_is_named_with_its_article(capsys):
    path = STORE / "index" / "20261122195022317"
    code, _, err = run(capsys, "messages", path)
    assert code == status.ERROR
    assert f"{path}: not a commit-log segment: it is an index file (`rmqformats dump --kind index` reads it)" in err


@pytest.mark.parametrize("text, said", [
    ("index file", "an index file"), ("commit-log segment", "a commit-log segment"), ("8", "an 8"),
    ("11", "an 11"), ("18", "an 18"), ("80", "an 80"), ("20", "a 20"), ("110", "a 110"), ("11000", "an 11000"),
    ("180000", "a 180000"), ("1", "a 1"), ("RocksDB message store", "a RocksDB message store")])
def test_articles(text, said):
    assert with_article(text) == said


# -- options -----------------------------------------------------------------------------------------------------

def test_an_option_the_command_lacks_is_named_with_the_command(tmp_path, capsys):
    out_file = tmp_path / "out.jsonl"
    code, out, err = run(capsys, "export", STORE, "--to", "jsonl", out_file, "--limit", "2")
    assert code == status.ERROR and out == "" and len(err.splitlines()) == 1
    assert err.startswith("rmqformats export: error: export has no option --limit (given: --limit 2; "
                          "--limit is an option of dledger, messages, queue); `rmqformats export --help`")
    assert "usage:" not in err and not out_file.exists()


@pytest.mark.parametrize("argv, message", [
    (["messages", STORE, "--since", "2026-11-23", "--until", "2026-11-22"],
     "rmqformats messages: error: --since 2026-11-23T00:00:00.000Z is after --until 2026-11-22T00:00:00.000Z"),
    (["messages", STORE, "--since", "1000", "--until", "1000"],
     "--since 1970-01-01T00:00:01.000Z is equal to --until 1970-01-01T00:00:01.000Z"),
    (["export", STORE, "--to", "jsonl", "{out}", "--from-offset", "500", "--to-offset", "100"],
     "rmqformats export: error: --from-offset 500 is after --to-offset 100"),
    (["queue", STORE, "TopicTest", "0", "--from", "5", "--to", "2"], "rmqformats queue: error: --from 5 is after --to 2"),
])
def test_a_range_that_selects_nothing_is_a_usage_error(tmp_path, capsys, argv, message):
    out_file = tmp_path / "out.jsonl"
    code, out, err = run(capsys, *[str(out_file) if a == "{out}" else a for a in argv])
    assert code == status.ERROR and out == "" and len(err.splitlines()) == 1
    assert message in err and "so nothing can match" in err
    assert not out_file.exists()


def _options(parser: argparse.ArgumentParser, name: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from _options(sub, f"{name} {command}")
        else:
            yield name, action


def test_every_option_of_every_command_has_a_help_text():
    parser = build_parser()
    missing = [f"{name} {'/'.join(a.option_strings) or a.dest}" for name, a in _options(parser, "rmqformats")
               if a.help is None or (a.help != argparse.SUPPRESS and not a.help.strip())]
    assert missing == []
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert all(c.help for c in commands._choices_actions)


def test_storegen_has_a_command_line():
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "storegen.py"), "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for option in ("--kind", "--mib", "--segment-mib", "--out", "--seed"):
        assert option in done.stdout
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import storegen
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    parser = storegen.build_parser()
    assert all(a.help for a in parser._actions)
    args = parser.parse_args(["--kind", "small", "--mib", "3", "--out", "x", "--seed", "7"])
    assert (args.kind, args.mib, args.out, args.seed) == ("small", 3, "x", 7)


def test_the_readme_shows_the_lookup_notes_as_printed(tmp_path, capsys):
    readme = docpages.text()
    _, _, err = run(capsys, "lookup", STORE, "--topic", "TopicTest", "--key", "key-1", "--begin", "2030-01-01")
    assert err.replace(str(STORE), "STORE") in readme
    root = tmp_path / "s"
    shutil.copytree(STORE, root, ignore=shutil.ignore_patterns("index", "commitlog", "consumequeue"))
    (root / "index").mkdir()
    (root / "commitlog").mkdir()
    _, _, err = run(capsys, "lookup", root, "--topic", "TopicTest", "--key", "key-1")
    assert err.replace(str(root), "STORE-WITHOUT-INDEX") in readme
