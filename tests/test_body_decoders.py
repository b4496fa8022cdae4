"""Bodies decoded as JSON, text and by a Python function, after decompression, in ``sql``, ``export`` and the
API; a body that does not decode is a row with its reason."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import rmqformats
from rmqformats import synth
from rmqformats.body_decoders import BodyDecoderError, decode_batches, resolve
from rmqformats.cli import main

BODIES = [
    (b'{"order": 1, "sku": "a"}', None),
    (json.dumps({"order": 2, "note": "\u4e2d\u6587"}).encode(), "zstd"),  # compressed: decoded after decompression
    (b"not json \xff", None),
    ("\u4e2d\u6587 gbk".encode("gbk"), None),
]


def rows_of(batches) -> list[dict]:
    return [row for batch in batches for row in batch.to_pylist()]


def upper_reversed(body: bytes) -> dict:
    """A Python decoder: a JSON value, or an error for a body that is not UTF-8."""
    return {"text": body.decode("utf-8")[::-1].upper()}


@pytest.fixture
def store(tmp_path):
    root = tmp_path / "store"
    synth.write_commitlog(root / "commitlog", [
        synth.MessageSpec(topic="Orders", body=body, compression=compression, queue_offset=i,
                          properties={"TAGS": "t"}) for i, (body, compression) in enumerate(BODIES)],
        segment_size=1 << 16)
    return root


def test_decoders_in_the_api(store):
    log = rmqformats.open_store(store).commitlog
    rows = rows_of(decode_batches(log.batches(["body"]), "json"))
    assert [json.loads(r["bodyDecoded"]) if r["bodyDecoded"] else None for r in rows] == [
        {"order": 1, "sku": "a"}, {"order": 2, "note": "\u4e2d\u6587"}, None, None]
    assert [r["bodyDecodeError"] is None for r in rows] == [True, True, False, False]
    assert rows[2]["bodyDecodeError"].startswith("UnicodeDecodeError") and rows[2]["body"] == BODIES[2][0]
    gbk = [r["bodyDecoded"] for r in rows_of(decode_batches(log.batches(["body"]), "text:gbk"))]
    assert gbk[3] == "\u4e2d\u6587 gbk"
    func = rows_of(decode_batches(log.batches(["body"]), upper_reversed))
    assert json.loads(func[0]["bodyDecoded"]) == {"text": '}"A" :"UKS" ,1 :"REDRO"{'}
    assert func[3]["bodyDecoded"] is None and func[3]["bodyDecodeError"].startswith("UnicodeDecodeError")
    for bad in ("nope", "text:no-such-encoding", "python:no_such_module:f", "python:json:no_such_function"):
        with pytest.raises(BodyDecoderError):
            resolve(bad)


def test_decoders_in_sql_and_export(store, tmp_path, capsys):
    pytest.importorskip("duckdb")
    table = rmqformats.open_store(store).sql(
        "SELECT json_extract(bodyDecoded, '$.order')::INT AS o, bodyDecodeError IS NOT NULL AS bad FROM messages "
        "ORDER BY commitLogOffset", body_decoder="json").read_all().to_pylist()
    assert table == [{"o": 1, "bad": False}, {"o": 2, "bad": False}, {"o": None, "bad": True},
                     {"o": None, "bad": True}]
    assert main(["sql", str(store), "SELECT bodyDecoded FROM messages WHERE bodyDecodeError IS NULL",
                 "--format", "jsonl", "--body-decoder", f"python:{__name__}:upper_reversed"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(out) == 2 and json.loads(out[0]["bodyDecoded"]) == {"text": '}"A" :"UKS" ,1 :"REDRO"{'}
    assert main(["export", str(store), "--to", "parquet", str(tmp_path / "out"), "--body-decoder", "json",
                 "--columns", "commitLogOffset,body"]) == 0
    exported = pq.read_table(tmp_path / "out").sort_by("commitLogOffset").to_pylist()
    assert [r["bodyDecoded"] is not None for r in exported] == [True, True, False, False]
    assert exported[2]["body"] == BODIES[2][0] and exported[2]["bodyDecodeError"]
    capsys.readouterr()
    assert main(["export", str(store), "--to", "jsonl", "-", "--body-decoder", "nope"]) == 2
    assert "unknown body decoder 'nope'" in capsys.readouterr().err


def test_decoders_in_messages(store, capsys):
    assert main(["messages", str(store), "--format", "jsonl", "--body-decoder", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [json.loads(r["bodyDecoded"]) if r["bodyDecoded"] else None for r in rows] == [
        {"order": 1, "sku": "a"}, {"order": 2, "note": "\u4e2d\u6587"}, None, None]
    assert rows[3]["bodyDecodeError"].startswith("UnicodeDecodeError")
    # One message read through the object API decodes the same.
    offset = str(rows[1]["commitLogOffset"])
    assert main(["messages", str(store), "--offset", offset, "--format", "jsonl", "--body-decoder", "json"]) == 0
    (one,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert one["bodyDecoded"] == rows[1]["bodyDecoded"] and one["bodyDecodeError"] is None
    assert main(["messages", str(store), "--body-decoder", "text:gbk", "--wide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-1] == "decoded"
    assert lines[4].endswith("\u4e2d\u6587 gbk") and "[UnicodeDecodeError" in lines[3]


def reversed_text(argument):
    """An entry point's object: given the spec's argument, it returns the decoder."""
    return lambda body: body.decode(argument or "utf-8")[::-1]


def test_an_entry_point_adds_a_decoder(store, monkeypatch):
    import importlib.metadata as md
    point = md.EntryPoint("reversed", f"{__name__}:reversed_text", "rmqformats.body_decoders")
    real = md.entry_points
    monkeypatch.setattr(md, "entry_points", lambda **kw: [point] if kw.get("group") == "rmqformats.body_decoders"
                        else real(**kw))
    rows = rows_of(decode_batches(rmqformats.open_store(store).commitlog.batches(["body"]), "reversed:latin-1"))
    assert rows[0]["bodyDecoded"] == BODIES[0][0].decode("latin-1")[::-1]
    assert all(r["bodyDecodeError"] is None for r in rows)
