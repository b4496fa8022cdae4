"""Bodies decoded as JSON, text and by a Python function, after decompression, in ``sql``, ``export`` and the
API; a body that does not decode is a row with its reason."""

from __future__ import annotations

import base64
import json

import pyarrow.parquet as pq
import pytest

import bodystores
import rmqformats
from rmqformats import synth
from rmqformats.body_decoders import BodyDecoderError, decode_batches, decoding, resolve
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

def test_decoders_with_columns(store, tmp_path, capsys):
    """--columns with a body decoder: the columns asked for, then the decoded ones; the body is read for
    the decoder and shown only where asked for (table, JSON Lines, one message, exports)."""
    offsets = [r["commitLogOffset"] for r in rows_of(rmqformats.open_store(store).commitlog.batches(
        ["commitLogOffset"]))]
    assert main(["messages", str(store), "--columns", "commitLogOffset", "--body-decoder", "text:gbk", "--wide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["commitLogOffset", "decoded"]
    assert lines[4].split() == [str(offsets[3]), "\u4e2d\u6587", "gbk"] and "[UnicodeDecodeError" in lines[3]
    assert main(["messages", str(store), "--columns", "commitLogOffset,topic", "--body-decoder", "json",
                 "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [list(r) for r in rows] == [["commitLogOffset", "topic", "bodyDecoded", "bodyDecodeError"]] * 4
    assert json.loads(rows[1]["bodyDecoded"]) == {"order": 2, "note": "\u4e2d\u6587"}
    assert main(["messages", str(store), "--offset", str(offsets[0]), "--columns", "commitLogOffset",
                 "--body-decoder", "json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["commitLogOffset", "decoded"] and lines[1].split()[0] == str(offsets[0])
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"out-{fmt}"
        assert main(["export", str(store), "--to", fmt, str(out), "--columns", "commitLogOffset",
                     "--body-decoder", "json"]) == 0
    assert pq.read_table(tmp_path / "out-parquet").schema.names == ["commitLogOffset", "bodyDecoded",
                                                                   "bodyDecodeError"]
    assert list(json.loads((tmp_path / "out-jsonl").read_text().splitlines()[0])) == [
        "commitLogOffset", "bodyDecoded", "bodyDecodeError"]
    assert (tmp_path / "out-csv").read_text().splitlines()[0] == '"commitLogOffset","bodyDecoded","bodyDecodeError"'



def test_an_entry_point_adds_a_decoder(store, monkeypatch):
    import importlib.metadata as md
    point = md.EntryPoint("reversed", f"{__name__}:reversed_text", "rmqformats.body_decoders")
    real = md.entry_points
    monkeypatch.setattr(md, "entry_points", lambda **kw: [point] if kw.get("group") == "rmqformats.body_decoders"
                        else real(**kw))
    rows = rows_of(decode_batches(rmqformats.open_store(store).commitlog.batches(["body"]), "reversed:latin-1"))
    assert rows[0]["bodyDecoded"] == BODIES[0][0].decode("latin-1")[::-1]
    assert all(r["bodyDecodeError"] is None for r in rows)


# Protobuf and Avro bodies, and fields picked out of the decoded values.

@pytest.fixture
def typed(tmp_path):
    bodystores.need_packages()
    root = tmp_path / "typed"
    return root, bodystores.write_store(root)


def topic_rows(root, topic: str, decoder, fields=None) -> list[dict]:
    log = rmqformats.open_store(root).commitlog
    return rows_of(decode_batches(log.batches(["topic", "body"], topic=topic), decoder, fields))


@pytest.mark.parametrize("topic", ["Json", "Proto", "Avro"])
def test_typed_bodies_decode_to_the_same_json(typed, topic):
    root, specs = typed
    rows = topic_rows(root, topic, specs[topic])
    assert [json.loads(r["bodyDecoded"]) for r in rows[:2]] == bodystores.ORDERS
    assert [r["bodyDecodeError"] for r in rows[:2]] == [None, None]
    assert rows[2]["bodyDecoded"] is None and rows[2]["body"] == bodystores.BAD
    assert rows[2]["bodyDecodeError"].split(":")[0] in {"JSONDecodeError", "UnicodeDecodeError", "DecodeError",
                                                        "EOFError", "ValueError"}
    fielded = topic_rows(root, topic, specs[topic], bodystores.FIELDS)
    names = [f"body.{f}" for f in bodystores.FIELDS.split(",")]
    assert list(fielded[0])[-len(names) - 1:] == [*names, "bodyDecodeError"] and "bodyDecoded" not in fielded[0]
    assert [{k: r[k] for k in names} for r in fielded[:2]] == bodystores.EXPECTED
    assert fielded[2]["bodyDecodeError"] == rows[2]["bodyDecodeError"]
    assert all(fielded[2][k] is None for k in names)


def test_field_values_as_text(typed):
    root, specs = typed
    (row, *_) = topic_rows(root, "Json", "json", ["customer", "tags", "sku", "customer.name", "order.x"])
    assert row["body.customer"] == '{"id":"c1","name":"\u4e2d\u6587"}' and row["body.tags"] == '["x","y"]'
    assert row["body.sku"] == "a-1" and row["body.customer.name"] == "\u4e2d\u6587" and row["body.order.x"] is None
    # A Python decoder's value: bytes in base64, times in ISO 8601.
    import datetime
    stamp = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    (row, *_) = topic_rows(root, "Json", lambda body: {"raw": b"\x00\x01", "at": stamp}, "raw,at")
    assert (row["body.raw"], row["body.at"]) == ("AAE=", "2026-01-02T03:04:05+00:00")


def test_decoder_specs_refused_in_one_line(typed, tmp_path):
    root, specs = typed
    desc = specs["Proto"].split(":")[1]
    refused = {
        f"protobuf:{desc}": "give protobuf:DESCRIPTOR_SET:MESSAGE",
        f"protobuf:{desc}:shop.Nope": "has no message 'shop.Nope'; its messages: shop.Customer, shop.Order",
        f"protobuf:{tmp_path}/none.desc:shop.Order": f"cannot read {tmp_path}/none.desc",
        f"protobuf:{specs['Avro'][5:]}:shop.Order": "is not a compiled FileDescriptorSet",
        f"avro:{tmp_path}/none.avsc": f"cannot read {tmp_path}/none.avsc",
        f"avro:{desc}": "is not JSON",
    }
    # An array of items that take no bytes: a few bytes of count would make a list of any length.
    (tmp_path / "nulls.avsc").write_text(json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "xs", "type": {"type": "array", "items": {"type": "record", "name": "E",
                                                           "fields": [{"name": "z", "type": "null"}]}}}]}))
    refused[f"avro:{tmp_path}/nulls.avsc"] = "has an array of items that take no bytes (E)"
    for spec, words in refused.items():
        with pytest.raises(BodyDecoderError, match=None) as err:
            resolve(spec)
        assert words in str(err.value) and "\n" not in str(err.value), spec
    for decoder, fields, words in (("text:utf-8", "a", "gives text, which has no fields"),
                                   (None, "a", "body fields need a body decoder"),
                                   ("json", "a..b", "is not a field path"), ("json", "", "is not a field path")):
        with pytest.raises(BodyDecoderError, match=words):
            decoding(decoder, fields)


def test_a_missing_package_names_its_extra(typed, monkeypatch):
    root, specs = typed
    import builtins
    real = builtins.__import__

    def without(name, *args, **kw):
        if name.startswith("google.protobuf") or name == "fastavro":
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kw)
    monkeypatch.setattr(builtins, "__import__", without)
    for topic, extra in (("Proto", "protobuf"), ("Avro", "avro")):
        with pytest.raises(BodyDecoderError, match=rf"pip install 'rmqformats\[{extra}\]'"):
            resolve(specs[topic])


FIELD_NAMES = [f"body.{f}" for f in bodystores.FIELDS.split(",")]


@pytest.mark.parametrize("topic", ["Json", "Proto", "Avro"])
def test_typed_body_fields_in_messages_export_and_sql(typed, topic, tmp_path, capsys):
    root, specs = typed
    decoding = ["--body-decoder", specs[topic], "--body-fields", bodystores.FIELDS]
    assert main(["messages", str(root), "--topic", topic, "--format", "jsonl", *decoding]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [{k: r[k] for k in FIELD_NAMES} for r in rows[:2]] == bodystores.EXPECTED
    assert base64.b64decode(rows[2]["body"]) == bodystores.BAD and rows[2]["bodyDecodeError"]
    assert all(rows[2][k] is None for k in FIELD_NAMES) and "bodyDecoded" not in rows[0]
    bad = rows[2]["bodyDecodeError"]
    # The table: the fields' columns, the reason where a body did not decode.
    assert main(["messages", str(root), "--topic", topic, *decoding, "--wide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-4:] == FIELD_NAMES and lines[1].split()[-3:] == ["1", "c1", "y"]
    assert lines[3].endswith(f"[{bad}]")
    # Parquet: the same values, the bad body kept as stored with its reason.
    assert main(["export", str(root), "--topic", topic, "--to", "parquet", str(tmp_path / "pq"), *decoding,
                 "--columns", "commitLogOffset,body"]) == 0
    exported = pq.read_table(tmp_path / "pq").sort_by("commitLogOffset").to_pylist()
    assert [{k: r[k] for k in FIELD_NAMES} for r in exported[:2]] == bodystores.EXPECTED
    assert (exported[2]["body"], exported[2]["bodyDecodeError"]) == (bodystores.BAD, bad)
    # SQL: the fields are columns of messages.
    pytest.importorskip("duckdb")
    table = rmqformats.open_store(root).sql(
        f'SELECT "body.order"::INT AS o, "body.customer.id" AS c, bodyDecodeError AS e FROM messages '
        f"WHERE topic = '{topic}' ORDER BY commitLogOffset", body_decoder=specs[topic],
        body_fields=bodystores.FIELDS).read_all().to_pylist()
    assert table == [{"o": 1, "c": "c1", "e": None}, {"o": 2, "c": "c2", "e": None}, {"o": None, "c": None, "e": bad}]
    capsys.readouterr()
    assert main(["sql", str(root), f"SELECT * FROM messages WHERE topic = '{topic}'", "--format", "jsonl",
                 *decoding]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [{k: r[k] for k in FIELD_NAMES} for r in rows[:2]] == bodystores.EXPECTED and rows[2]["bodyDecodeError"] == bad


def test_refused_decoders_are_one_line_exit_2(typed, monkeypatch, capsys):
    root, specs = typed
    for args, words in ((["--body-fields", "order"], "body fields need a body decoder"),
                        (["--body-decoder", "text:utf-8", "--body-fields", "order"], "gives text"),
                        (["--body-decoder", specs["Proto"] + "x"], "has no message 'shop.Orderx'")):
        for command in (["messages", str(root)], ["export", str(root), "--to", "jsonl", "-"]):
            assert main([*command, *args]) == 2
            err = capsys.readouterr().err
            assert words in err and err.count("\n") == 1, (command, args, err)
    import builtins
    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **kw: (_ for _ in ()).throw(ImportError(name))
                        if name == "fastavro" else real(name, *a, **kw))
    assert main(["messages", str(root), "--body-decoder", specs["Avro"]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fastavro package is not installed: pip install 'rmqformats[avro]'" in err


def order_fields(body: bytes) -> dict:
    """A Python decoder whose value has fields: ``order`` and ``sku`` of a JSON body, upper-cased."""
    value = json.loads(body)
    return {"order": value["order"], "sku": value["sku"].upper()}


def test_python_decoder_fields_in_sql_and_one_message(typed, capsys):
    pytest.importorskip("duckdb")
    root, _ = typed
    decoding = ["--body-decoder", f"python:{__name__}:order_fields", "--body-fields", "sku,order"]
    assert main(["sql", str(root), "SELECT commitLogOffset, \"body.sku\", \"body.order\", bodyDecodeError FROM messages "
                 "WHERE topic = 'Json' ORDER BY commitLogOffset", "--format", "jsonl", *decoding]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["body.sku"], r["body.order"]) for r in rows] == [("A-1", "1"), ("B-2", "2"), (None, None)]
    assert rows[2]["bodyDecodeError"].startswith(("JSONDecodeError", "UnicodeDecodeError"))
    # One message, read through the object API, gives the same columns.
    assert main(["messages", str(root), "--offset", str(rows[1]["commitLogOffset"]), "--format", "jsonl",
                 *decoding]) == 0
    (one,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (one["body.sku"], one["body.order"], one["bodyDecodeError"]) == ("B-2", "2", None)
