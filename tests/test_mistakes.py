"""A user's mistakes get an answer: an error saying what was expected and what was found, or the right
answer with a note; never a silent exit 0, a wrong verdict or a traceback."""

from __future__ import annotations

import json
import shutil

import pytest

import rmqformats
from rmqformats import synth
from rmqformats.cli import main, status
from rmqformats.errors import NotASegmentError

from conftest import VERSIONS, store_path, truth_records

STORE = store_path("rocketmq-5.3.3")
FIRST = "00000000000000000000"


def run(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# -- --sample with a STORE -----------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["inspect"], ["messages"], ["check"], ["config"], ["lag"], ["queue"],
                                  ["queue", "TopicTest", "0"], ["lookup", "--topic", "TopicTest", "--key", "k"],
                                  ["report", "-o", "{tmp}/r.html"], ["export", "--to", "jsonl", "{tmp}/x.jsonl"]])
def test_sample_with_a_store_is_a_usage_error(tmp_path, capsys, argv):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = run(capsys, argv[0], "--sample", STORE, *argv[1:])
    assert code == status.ERROR and out == ""
    assert "--sample" in err and str(STORE) in err and "not both" in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_sample_alone_still_works(capsys):
    assert run(capsys, "check", "--sample")[0] == status.OK
    assert run(capsys, "queue", "--sample", "TopicTest", "0")[0] == status.OK


# -- a file that is not a commit-log segment ---------------------------------------------------------------------

@pytest.mark.parametrize("rel, kind", [("checkpoint", "store checkpoint"), ("config/topics.json", "config JSON"),
                                       ("consumequeue/TopicTest/0/" + FIRST, "consume-queue file"),
                                       ("timerlog/" + FIRST, "timer-log segment"), ("lock", "lock or abort")])
@pytest.mark.parametrize("command", [["messages"], ["inspect"], ["check"], ["export", "--to", "jsonl", "{out}"],
                                     ["cut", "--records", "1", "-o", "{out}"]])
def test_another_store_file_is_refused_as_no_segment(tmp_path, capsys, rel, kind, command):
    out = str(tmp_path / "out")
    argv = [command[0], STORE / rel, *[a.replace("{out}", out) for a in command[1:]]]
    code, _, err = run(capsys, *argv)
    assert code == status.ERROR, err
    assert f"{STORE / rel}: not a commit-log segment: it is a {kind}" in err and "damage" not in err
    assert not (tmp_path / "out").exists()


def test_a_file_with_neither_the_name_nor_the_content_of_a_segment(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a segment\n" * 100)
    for argv in (["messages", notes], ["inspect", notes], ["check", notes]):
        code, _, err = run(capsys, *argv)
        assert code == status.ERROR and "not a commit-log segment: its name is not a 20-digit" in err
    with pytest.raises(NotASegmentError):
        rmqformats.open_store(notes)


def test_pieces_and_copies_of_segments_are_still_read(tmp_path, capsys):
    """A piece cut under any name starts with a record; a segment out of its folder keeps its 20-digit name."""
    segment = STORE / "commitlog" / FIRST
    piece = tmp_path / "piece.bin"
    assert run(capsys, "cut", segment, "--records", "5", "-o", piece)[0] == status.OK
    code, out, _ = run(capsys, "messages", piece, "--format", "jsonl")
    assert code == status.OK and len(out.splitlines()) == 5
    copy = tmp_path / "copy" / FIRST
    copy.parent.mkdir()
    copy.write_bytes(bytes(4096))  # preallocated and empty: a segment by its name
    assert run(capsys, "messages", copy)[0] == status.OK


# -- folders of the wrong kind ---------------------------------------------------------------------------------

def test_tiered_on_a_plain_store_says_what_it_expected_and_found(capsys, tmp_path):
    code, out, err = run(capsys, "tiered", STORE)
    assert code == status.ERROR and out == ""
    assert "not a tiered store: expected tieredStoreFilePath" in err and "found a broker store root" in err
    code, _, err = run(capsys, "inspect", STORE, "--tiered", STORE)
    assert code == status.ERROR and "not a tiered store" in err
    code, _, err = run(capsys, "tiered", tmp_path)
    assert code == status.ERROR and "found an empty folder" in err


def test_compaction_of_a_queue_it_does_not_have(capsys):
    code, out, err = run(capsys, "compaction", STORE, "--topic", "TopicTest", "--queue", "0")
    assert code == status.ERROR and out == "" and "no compaction queue TopicTest/0" in err
    code, _, err = run(capsys, "compaction", store_path("rocketmq-4.9.7"), "--topic", "TopicTest")
    assert code == status.ERROR and "expected a compaction/ folder" in err and "found a broker store root" in err
    code, _, err = run(capsys, "compaction", STORE)
    assert code == status.OK and "no compaction queues" in err


def test_dledger_on_a_plain_store(capsys):
    code, _, err = run(capsys, "dledger", STORE)
    assert code == status.ERROR and "expected dledger-*/data" in err and "found a plain commit log" in err


# -- --msg-id: the producer's message id --------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_msg_id_answers_a_uniq_key_through_the_index(capsys, version, tmp_path):
    root = store_path(version)
    rows = [t for t in truth_records(version) if t["kind"] == "MESSAGE" and t["uniqKey"]]
    want = rows[7]
    same = sorted(t["commitlogOffset"] for t in rows if t["uniqKey"] == want["uniqKey"])
    code, out, err = run(capsys, "messages", root, "--msg-id", want["uniqKey"], "--format", "jsonl")
    assert code == status.OK
    assert [json.loads(line)["commitLogOffset"] for line in out.splitlines()] == same
    assert "producer's message id (UNIQ_KEY" in err and "found by key in the index files" in err
    # The broker's offset message id keeps working, without a note.
    code, out, err = run(capsys, "messages", root, "--msg-id", want["msgId"], "--format", "jsonl")
    assert code == status.OK and err == "" and json.loads(out)["commitLogOffset"] == want["commitlogOffset"]
    # No index: the commit log's properties are scanned.
    copy = tmp_path / "store"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("index"))
    code, out, err = run(capsys, "messages", copy, "--msg-id", want["uniqKey"].lower(), "--format", "jsonl")
    assert code == status.OK and "scanning the commit log's UNIQ_KEY properties" in err
    assert [json.loads(line)["commitLogOffset"] for line in out.splitlines()] == same


def test_msg_id_of_an_ipv4_producer_and_an_unknown_id(tmp_path, capsys):
    uniq = "C0000201" "04D2" "1B2C3D4E" "0A0B0C0D" "0001"  # 192.0.2.1, pid 1234, hash, time, counter: 32 hex
    specs = [synth.MessageSpec(topic="T", body=b"b%d" % i, queue_offset=i,
                               properties={"UNIQ_KEY": uniq if i == 3 else f"C000020104D21B2C3D4E0A0B0C0D{i:04X}"})
             for i in range(3, 8)]
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 20)
    code, out, err = run(capsys, "messages", tmp_path, "--msg-id", uniq, "--format", "jsonl")
    assert code == status.OK and json.loads(out)["properties"]["UNIQ_KEY"] == uniq
    assert "client 192.0.2.1, pid 1234" in err
    code, out, err = run(capsys, "messages", tmp_path, "--msg-id", uniq[:-1] + "F")
    assert code == status.ERROR and "nor the producer's message id (UNIQ_KEY)" in err
    code, _, err = run(capsys, "messages", tmp_path, "--msg-id", "xyz")
    assert code == status.ERROR and "not hexadecimal" in err


# -- dump --kind on a file its kind cannot be ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["consumequeue", "batchconsumequeue", "consumequeue_ext", "timerlog"])
def test_dump_kind_of_a_file_not_named_by_its_offset(tmp_path, capsys, kind):
    f = tmp_path / "cqfile"
    shutil.copy(STORE / "consumequeue" / "TopicTest" / "0" / FIRST, f)
    code, _, err = run(capsys, "dump", "--kind", kind, f)
    assert code == status.ERROR and "Traceback" not in err and "ValueError" not in err
    assert f"{f}: a {kind} file is named by the 20-digit offset of its first byte, not 'cqfile'" in err
