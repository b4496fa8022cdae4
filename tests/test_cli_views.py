"""Bodies (--body, --body-limit), batch consume queues one row per message, inspect's shutdown and numbers."""

from __future__ import annotations

import base64
import json
import shutil

from rmqformats import open_store
from rmqformats.cli import build_parser, main

from conftest import store_path, truth_records


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_messages_bodies_in_json(capsys):
    root = store_path("rocketmq-5.1.4")
    code, out, _ = run(capsys, "messages", root, "--format", "jsonl", "--limit", "3")
    plain = [json.loads(line) for line in out.splitlines()]
    for view, encode in (("text", lambda b: b.decode()), ("hex", bytes.hex),
                         ("base64", lambda b: base64.b64encode(b).decode())):
        code, out, _ = run(capsys, "messages", root, "--format", "jsonl", "--limit", "3", "--body", view)
        rows = [json.loads(line) for line in out.splitlines()]
        assert code == 0 and len(rows) == 3
        for r, p in zip(rows, plain):
            assert r["body"] == encode(base64.b64decode(p["body"]))
            assert r.get("bodyView") == (None if view == "base64" else view)
    code, out, _ = run(capsys, "messages", root, "--format", "jsonl", "--limit", "1", "--body-limit", "5")
    r = json.loads(out)
    assert base64.b64decode(r["body"]) == base64.b64decode(plain[0]["body"])[:5] and r["bodyTruncated"]
    code, out, _ = run(capsys, "messages", root, "--format", "jsonl", "--limit", "1", "--body", "none")
    assert "body" not in json.loads(out)


def test_messages_bodies_in_tables_and_compressed_bodies_decompressed(capsys):
    root = store_path("rocketmq-5.1.4")
    truth = [t for t in truth_records("rocketmq-5.1.4") if t["kind"] == "MESSAGE"]
    zipped = next(t for t in truth if "bodyDecompressedBase64" in t and t["bodyLength"] > 0)
    body = base64.b64decode(zipped["bodyDecompressedBase64"])
    code, out, _ = run(capsys, "messages", root, "--offset", zipped["commitlogOffset"], "--body", "hex", "--wide")
    assert code == 0 and out.splitlines()[0].split()[-1] == "body"
    assert out.splitlines()[1].split()[-1].rstrip("…") == body[:256].hex()
    code, out, _ = run(capsys, "messages", root, "--topic", "TopicTest", "--limit", "2", "--body", "text",
                       "--body-limit", "5", "--wide")
    assert [line.split()[-1] for line in out.splitlines()[1:]] == ["Hello…", "Hello…"]


def test_queue_resolve_bodies(capsys):
    root = store_path("rocketmq-5.1.4")
    code, out, _ = run(capsys, "queue", root, "TopicTest", "0", "--resolve", "--format", "jsonl", "--limit", "1",
                       "--body", "text")
    (row,) = [json.loads(line) for line in out.splitlines()]
    message = open_store(root).commitlog.read(row["commitLogOffset"])
    assert row["message"]["body"] == message.body.decode() and row["message"]["bodyView"] == "text"
    code, out, _ = run(capsys, "queue", root, "TopicTest", "0", "--resolve", "--limit", "1", "--body", "text",
                       "--wide")
    assert out.splitlines()[1].split()[-1] == "body" and message.body.decode().split()[-1] in out


def test_batch_queue_one_row_per_message_and_no_repeated_outer_body(capsys):
    root = store_path("rocketmq-5.1.4")
    code, out, _ = run(capsys, "queue", root, "TopicBatchCQ", "0", "--wide")
    lines = out.splitlines()
    assert code == 0 and [line.split()[0] for line in lines[2:]] == [str(i) for i in range(9)]
    code, out, _ = run(capsys, "queue", root, "TopicBatchCQ", "0", "--resolve", "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    inner = [r for r in rows if "innerIndex" in r]
    assert len(rows) == 9 and len(inner) == 8
    assert all("body" not in r["message"] for r in inner)  # the outer batch's body is not repeated
    assert [base64.b64decode(r["innerBody"]).decode() for r in inner[:2]] == [
        "inner batch 0 message 0", "inner batch 0 message 1"]
    assert "body" in rows[0]["message"]  # a plain record is the message: its body is there


def test_messages_key_and_tag_look_inside_inner_batches(capsys):
    root = store_path("rocketmq-5.1.4")
    code, out, _ = run(capsys, "messages", root, "--key", "bcq-1-2", "--format", "jsonl")
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and row["queueOffset"] == 7 and row["innerIndex"] == 2
    assert row["properties"]["KEYS"] == "bcq-1-2" and base64.b64decode(row["body"]) == b"inner batch 1 message 2"
    code, out, _ = run(capsys, "messages", root, "--tag", "BcqTag", "--wide")
    assert [line.split()[3] for line in out.splitlines()[1:]] == [str(i) for i in range(9)]
    code, out, _ = run(capsys, "messages", root, "--key", "key-1", "--format", "jsonl")
    plain = [json.loads(line) for line in out.splitlines()]
    assert plain and all("key-1" in r["properties"]["KEYS"].split() for r in plain)


def test_lookup_help_says_one_second_resolution():
    sub = build_parser()._subparsers._group_actions[0].choices["lookup"]
    text = sub.format_help()
    assert "one-second" in text and "to the second" in text


def test_inspect_unknown_shutdown_and_one_number_style(capsys, tmp_path):
    shutil.copytree(store_path("rocketmq-4.9.7") / "commitlog", tmp_path / "commitlog")
    code, out, _ = run(capsys, "inspect", tmp_path)
    assert code == 0 and "shutdown   unknown (no abort, lock or checkpoint file in the folder)" in out
    code, out, _ = run(capsys, "inspect", tmp_path, "--format", "json")
    assert json.loads(out)["shutdown"]["clean"] is None
    code, out, _ = run(capsys, "inspect", tmp_path / "commitlog")
    assert code == 0 and "shutdown   unknown (a commit-log folder or segment, not a store root)" in out
    code, out, _ = run(capsys, "inspect", store_path("rocketmq-4.9.7"))
    assert "shutdown   clean shutdown (no abort file)" in out
    assert "segments   5, 1,310,720 bytes" in out and "  00000000000000000000  262,144  " in out
