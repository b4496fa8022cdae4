"""A compressed body that does not decompress is a finding of its message, not the end of the read.

One bit flipped inside the zlib body of a vector store's compressed message:
every other message still equals RocketMQ's truth, in every output; the
damaged one keeps its stored body and says why in ``bodyError``.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil

import pyarrow.parquet as pq
import pytest

import rmqformats
from rmqformats.cli import main
from rmqformats.errors import DecompressionError

from conftest import store_path, truth_records

csv.field_size_limit(1 << 30)  # the vector stores hold bodies of a few MiB
VERSION = "rocketmq-4.9.7"
REASON = "zlib body is corrupt"


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """A copy of the store with one bit flipped in the middle of its zlib body; (root, record, stored body)."""
    root = tmp_path_factory.mktemp("corrupt-body") / "store"
    shutil.copytree(store_path(VERSION), root)
    rec = next(t for t in truth_records(VERSION) if t["kind"] == "MESSAGE" and t["sysFlag"] & 1)
    body_at = rec["fileOffset"] + rec["totalSize"] - rec["bodyLength"] - len(rec["topic"].encode()) - 3 \
        - len(rec["propertiesString"].encode())
    seg = root / "commitlog" / rec["file"]
    data = bytearray(seg.read_bytes())
    assert bytes(data[body_at:body_at + rec["bodyLength"]]) == base64.b64decode(rec["bodyRawBase64"])
    data[body_at + rec["bodyLength"] // 2] ^= 0x10
    seg.write_bytes(bytes(data))
    return root, rec, bytes(data[body_at:body_at + rec["bodyLength"]])


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def _truth() -> dict[int, dict]:
    return {t["commitlogOffset"]: t for t in truth_records(VERSION) if t["kind"] == "MESSAGE"}


def _check_rows(rows: list[dict], damaged_rec: dict, stored: bytes, body_key: str = "body") -> None:
    """Every row equals the truth but the damaged one, which has its stored bytes and the reason."""
    truth = _truth()
    assert sorted(r["commitLogOffset"] for r in rows) == sorted(truth)
    for r in rows:
        t = truth[r["commitLogOffset"]]
        body = r[body_key] if isinstance(r[body_key], bytes) else base64.b64decode(r[body_key])
        if r["commitLogOffset"] == damaged_rec["commitlogOffset"]:
            assert body == stored and REASON in r["bodyError"]
        else:
            assert body == base64.b64decode(t.get("bodyDecompressedBase64", t["bodyRawBase64"])), r["commitLogOffset"]
            assert r.get("bodyError") is None
            assert (r["topic"], r["queueId"], r["queueOffset"], r["msgId"]) == \
                (t["topic"], t["queueId"], t["queueOffset"], t["msgId"])


@pytest.mark.parametrize("salvage", [False, True])
def test_messages_jsonl_and_exports(damaged, tmp_path, capsys, salvage):
    root, rec, stored = damaged
    extra = ["--salvage"] if salvage else []
    status, out, _ = run(capsys, "messages", root, "--format", "jsonl", *extra)
    assert status == 0
    rows = [json.loads(line) for line in out.splitlines()]
    _check_rows(rows, rec, stored)
    # The other lines are byte for byte those of the undamaged store.
    _, clean, _ = run(capsys, "messages", store_path(VERSION), "--format", "jsonl")
    changed = [a for a, b in zip(out.splitlines(), clean.splitlines()) if a != b]
    assert len(changed) == 1 and f'"commitLogOffset": {rec["commitlogOffset"]},' in changed[0]
    for fmt in ("jsonl", "csv", "parquet"):
        target = tmp_path / f"out-{fmt}-{salvage}"
        status, _, err = run(capsys, "export", root, "--to", fmt, target, *extra)
        assert status == 0 and f"exported {len(rows)} messages" in err
        if fmt == "jsonl":
            assert target.read_text(encoding="utf-8") == out
        elif fmt == "csv":
            got = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8"))))
            for r in got:
                r["commitLogOffset"] = int(r["commitLogOffset"])
                r["queueId"], r["queueOffset"] = int(r["queueId"]), int(r["queueOffset"])
                r["bodyError"] = r["bodyError"] or None
            _check_rows(got, rec, stored)
        else:
            _check_rows(pq.read_table(target).to_pylist(), rec, stored)


def test_messages_table_shows_the_reason(damaged, capsys):
    root, rec, _ = damaged
    status, out, _ = run(capsys, "messages", root, "--body", "hex", "--body-limit", "4", "--wide")
    assert status == 0
    lines = [line for line in out.splitlines() if "not decompressed" in line]
    assert len(lines) == 1 and lines[0].startswith(str(rec["commitlogOffset"])) and REASON in lines[0]


def test_python_api(damaged):
    root, rec, stored = damaged
    log = rmqformats.open_store(root).commitlog
    msgs = list(log.scan())
    bad = [m for m in msgs if m.body_error is not None]
    assert [m.commitlog_offset for m in bad] == [rec["commitlogOffset"]]
    assert REASON in bad[0].body_error and bad[0].shown_body == stored
    with pytest.raises(DecompressionError, match=REASON):
        bad[0].body
    d = bad[0].to_json_dict()
    assert base64.b64decode(d["body"]) == stored and REASON in d["bodyError"]
    _check_rows([m.to_json_dict() for m in msgs], rec, stored)
    for threads in (1, 2):
        table = log.batches(["commitLogOffset", "topic", "queueId", "queueOffset", "msgId", "body", "bodyError"],
                            threads=threads, range_size=4096, batch_size=7).read_all()
        _check_rows(table.to_pylist(), rec, stored)
        errors = log.batches(["commitLogOffset", "bodyError"], threads=threads).read_all().to_pylist()
        assert [r["commitLogOffset"] for r in errors if r["bodyError"]] == [rec["commitlogOffset"]]
    salvaged = log.batches(["commitLogOffset", "topic", "queueId", "queueOffset", "msgId", "body", "bodyError"],
                           salvage=True).read_all()
    _check_rows(salvaged.to_pylist(), rec, stored)


def test_stopping_at_a_corrupt_body_is_an_option(damaged, capsys):
    root, rec, _ = damaged
    before = [o for o in sorted(_truth()) if o < rec["commitlogOffset"]]
    status, out, err = run(capsys, "messages", root, "--format", "jsonl", "--stop-at-corrupt-body")
    assert status == 2 and f"{root}/commitlog/{rec['file']} @ 0x{rec['fileOffset']:x}" in err and REASON in err
    assert [json.loads(line)["commitLogOffset"] for line in out.splitlines()] == before
    with pytest.raises(DecompressionError, match=REASON):
        rmqformats.open_store(root).commitlog.batches(stop_at_corrupt_body=True).read_all()
