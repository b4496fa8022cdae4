"""``rmqformats export``: Parquet, JSON Lines and CSV files that hold the object API's messages."""

from __future__ import annotations

import base64
import io
import json
import os
import sys
import threading

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import rmqformats
from rmqformats import synth
from rmqformats.cli import main
from rmqformats.columnar import COLUMNS, SCHEMA
from rmqformats.export import (DICTIONARY_COLUMNS, JSONL_COLUMNS, OPTIONAL_JSON_KEYS, TABLE_COLUMNS, ParquetSink,
                               export_batches, topic_folder)
from rmqformats.generated.layouts import rocketmq_commitlog as layout
from rmqformats.sample import sample_store_path

from conftest import VERSIONS, store_path, truth_records

#: Scalar columns (CSV holds them as they are).
SCALARS = ["commitLogOffset", "storeSize", "bodyCRC", "queueId", "flag", "queueOffset", "sysFlag", "bornTimestamp",
           "bornHost", "storeTimestamp", "storeHost", "reconsumeTimes", "preparedTransactionOffset", "topic", "msgId",
           "tags", "uniqKey", "priority", "liteTopic"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def object_rows(root, **scan_options) -> list[dict]:
    """The object API's messages, keyed by column name (timestamps as epoch ms, the body decompressed)."""
    rows = []
    for m in rmqformats.open_store(root).commitlog.scan(**scan_options):
        rows.append({
            "commitLogOffset": m.commitlog_offset, "storeSize": m.store_size, "bodyCRC": m.body_crc,
            "queueId": m.queue_id, "flag": m.flag, "queueOffset": m.queue_offset, "sysFlag": m.sys_flag,
            "bornTimestamp": m.born_timestamp, "bornHost": m.born_host, "storeTimestamp": m.store_timestamp,
            "storeHost": m.store_host, "reconsumeTimes": m.reconsume_times,
            "preparedTransactionOffset": m.prepared_transaction_offset, "topic": m.topic,
            "properties": m.properties, "propertiesString": m.properties_raw, "msgId": m.msg_id, "body": m.shown_body,
            "bodyError": m.body_error, "bodyRaw": m.body_raw, "tags": m.tags, "keys": m.keys, "uniqKey": m.uniq_key,
            "priority": m.priority, "liteTopic": m.lite_topic, "segment": os.path.basename(m.segment),
        })
    return rows


def object_jsonl(root) -> bytes:
    """What ``messages --format jsonl`` printed before it read batches: the object API's JSON, line by line."""
    return "".join(json.dumps(m.to_json_dict(), ensure_ascii=False) + "\n"
                   for m in rmqformats.open_store(root).commitlog.scan()).encode()


def table_rows(table: pa.Table) -> list[dict]:
    """Rows of a table read back, with timestamps as epoch ms and properties as dicts, in commit-log order."""
    for name in ("bornTimestamp", "storeTimestamp"):
        if name in table.column_names:
            i = table.column_names.index(name)
            table = table.set_column(i, name, table.column(name).cast(pa.int64()))
    if "topic" in table.column_names:
        i = table.column_names.index("topic")
        table = table.set_column(i, "topic", table.column("topic").cast(pa.string()))
    rows = table.sort_by("commitLogOffset").to_pylist()
    for r in rows:
        if isinstance(r.get("properties"), list):
            r["properties"] = dict(r["properties"])
    return rows


def assert_rows_equal(got: list[dict], expected: list[dict], columns) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert set(g) == set(columns)
        assert g == {c: e[c] for c in columns}, e["commitLogOffset"]


# -- a generated commit log with every record variant, and JSON's escapes ---------------------------------

def _variants() -> list[synth.MessageSpec]:
    body = b"payload \xe4\xb8\xad \x00\x01\"\\ " * 40
    specs = []
    hosts = [(("192.0.2.10", 54321), ("127.0.0.1", 10911)), (("2001:db8::10", 54322), ("127.0.0.1", 10911)),
             (("::1", 65535), ("fe80::1:2:3:4", 0))]
    for i, (born, store) in enumerate(hosts):
        for compression in (None, "zlib", "zlib-legacy", "lz4", "zstd"):
            specs.append(synth.MessageSpec(
                topic=f"Topic{i}", body=body * (i + 1), queue_id=i, queue_offset=len(specs),
                properties={"TAGS": f"T{i}", "KEYS": f"k{i}  k{i}b ", "UNIQ_KEY": f"U{len(specs):08d}",
                            "中文": "值 with \"quotes\" and \\ back\tslash\n\r\x08\x0c\x00\x1b\x1f\x7f \u2028 😀"},
                born_host=born, store_host=store, compression=compression))
    specs.append(synth.MessageSpec(topic="%RETRY%" + "G" * 170, body=b"v2", properties={"TAGS": "v2"}))
    specs.append(synth.MessageSpec(topic="TopicEmpty", body=b"", properties={}))
    specs.append(synth.MessageSpec(topic="Topic\"Quoted\\", body=b"q", properties={"TAGS": "tab\there",
                                                                                   "KEYS": "\"a\" b\\"}))
    specs.append(synth.MessageSpec(topic="TopicTrailing", body=b"x", properties={"TAGS": "a", "KEYS": "b"},
                                   trailing_separator=True))
    specs.append(synth.MessageSpec(topic="TopicOddProps", body=b"x",
                                   properties="\x01v\x02n\x01\x02TAGS\x01first\x02KEYS\x01a b\x02TAGS\x01second"))
    specs.append(synth.MessageSpec(topic="TopicBadUtf8", body=b"x", properties="TAGS\x01ok"))
    specs.append(synth.MessageSpec(topic="TopicCrc", body=b"crc body", properties={"TAGS": "c"},
                                   crc32_property=True))
    specs.append(synth.MessageSpec(topic="TopicNeg", body=b"x", born_timestamp=-1, store_timestamp=2**41,
                                   reconsume_times=-3, flag=-7, queue_offset=-1))
    specs.append(synth.MessageSpec(topic="123", body=b"numeric topic", properties={"TAGS": "n"}))
    # 5.4 priority and 5.5 lite-topic messages (a priority Java cannot read is in the properties only).
    specs += [synth.priority_message("TopicPriority", p, body=b"p") for p in ("0", "9", "-3", "high")]
    specs.append(synth.lite_message("TopicParent", "lite \"quoted\" \u4e2d", body=b"l", properties={"TAGS": "t"}))
    return specs


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    root = tmp_path_factory.mktemp("variants")
    synth.write_commitlog(root / "commitlog", _variants(), segment_size=8192)
    # Invalid UTF-8 in one topic and one properties string, as damaged or foreign writers leave them.
    for m in rmqformats.open_store(root).commitlog.scan():
        if m.topic == "TopicBadUtf8":
            with open(m.segment, "r+b") as f:
                data = f.read()
                for text, at in ((b"TopicBadUtf8", 5), (b"TAGS\x01ok", 5)):
                    f.seek(data.index(text, m.file_offset) + at)
                    f.write(b"\xff" if text.startswith(b"Topic") else b"\xc3")
    return root


# -- Parquet --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("partition", [False, True])
def test_parquet_equals_the_object_api(tmp_path, capsys, version, partition):
    root = store_path(version)
    out = tmp_path / "pq"
    extra = ["--partition-by", "topic"] if partition else []
    code, _, err = run(capsys, "export", root, "--to", "parquet", out, *extra)
    assert code == 0
    expected = object_rows(root)
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet"))
    if partition:
        topics = sorted({e["topic"] for e in expected})
        assert sorted({w.split("/")[0] for w in written}) == sorted(topic_folder(t) for t in topics)
        assert len(written) == len({(e["topic"], e["segment"]) for e in expected})
        table = ds.dataset(out, partitioning=ds.partitioning(pa.schema([("topic", pa.string())]),
                                                             flavor="hive")).to_table()
        assert table.column_names == [c for c in TABLE_COLUMNS if c != "topic"] + ["topic"]
        # pq.read_table reads it back too (the topic as a dictionary column)
        assert table_rows(pq.read_table(out)) == table_rows(table)
    else:
        assert written == sorted(f"{s}.parquet" for s in {e["segment"] for e in expected})
        table = pq.read_table(out)
        assert table.schema == pa.schema([SCHEMA.field(c) for c in TABLE_COLUMNS])
        assert table_rows(table) == table_rows(rmqformats.open_store(root).commitlog.to_arrow(list(TABLE_COLUMNS)))
        meta = pq.ParquetFile(out / written[0]).metadata
        assert meta.row_group(0).column(0).compression == "ZSTD"
        # The columns whose values repeat are dictionary-encoded; ids, offsets, times and bodies are plain.
        group = meta.row_group(0)
        encoded = {group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)}
        assert {p for p, e in encoded.items() if "RLE_DICTIONARY" in e} \
            == {c for c in TABLE_COLUMNS if c in DICTIONARY_COLUMNS}
        assert {"topic", "bornHost", "storeHost", "queueId", "tags"} <= DICTIONARY_COLUMNS
        assert not DICTIONARY_COLUMNS & {"commitLogOffset", "msgId", "uniqKey", "body", "storeTimestamp"}
    assert_rows_equal(table_rows(table), expected, TABLE_COLUMNS)
    assert f"exported {len(expected)} messages to {len(written)} Parquet files in {out}" in err



@pytest.mark.parametrize("codec", ["snappy", "lz4", "none"])
def test_parquet_compression(tmp_path, capsys, codec, monkeypatch):
    """--compression sets every column chunk's codec; the rows are the zstd export's, with workers too."""
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    root = store_path(VERSIONS[-1])
    assert run(capsys, "export", root, "--to", "parquet", tmp_path / "zstd", "--jobs", 1)[0] == 0
    for jobs in (1, 3):
        out = tmp_path / f"{codec}-{jobs}"
        assert run(capsys, "export", root, "--to", "parquet", out, "--compression", codec, "--jobs", jobs)[0] == 0
        files = sorted(out.glob("*.parquet"))
        assert [f.name for f in files] == sorted(f.name for f in (tmp_path / "zstd").glob("*.parquet"))
        for f in files:
            meta = pq.ParquetFile(f).metadata
            assert {meta.row_group(g).column(c).compression for g in range(meta.num_row_groups)
                    for c in range(meta.num_columns)} == {"UNCOMPRESSED" if codec == "none" else codec.upper()}
        assert pq.read_table(out).equals(pq.read_table(tmp_path / "zstd"))
    assert {f.name: f.read_bytes() for f in (tmp_path / f"{codec}-3").iterdir()} \
        == {f.name: f.read_bytes() for f in (tmp_path / f"{codec}-1").iterdir()}

def test_parquet_every_record_variant_and_every_column(tmp_path, capsys, variants):
    expected = object_rows(variants)
    for partition in ([], ["--partition-by", "topic"]):
        out = tmp_path / f"pq{len(partition)}"
        code, _, _ = run(capsys, "export", variants, "--to", "parquet", out, "--columns", ",".join(COLUMNS),
                         *partition)
        assert code == 0
        got = table_rows(ds.dataset(out, partitioning=ds.partitioning(
            pa.schema([("topic", pa.string())]), flavor="hive") if partition else None).to_table())
        assert_rows_equal(got, expected, COLUMNS)
    assert (tmp_path / "pq2" / topic_folder("%RETRY%" + "G" * 170)).is_dir()
    assert (tmp_path / "pq2" / "topic=%25RETRY%25GGG").exists() is False
    quoted = next(e for e in expected if e["topic"] == "Topic\"Quoted\\")
    assert os.listdir(tmp_path / "pq2" / "topic=Topic%22Quoted%5C") == [quoted["segment"] + ".parquet"]


def test_parquet_sink_bounds_open_files(tmp_path, variants):
    """With one file open at a time, a topic that comes back in a segment continues in ``<segment>-1``."""
    log = rmqformats.open_store(variants).commitlog
    table = log.to_arrow(["commitLogOffset", "topic", "body", "segment"])
    # One segment's rows with the topics interleaved: A B A B …
    seg = table.filter(pa.compute.equal(table.column("segment"), table.column("segment")[0]))
    batches = [seg.slice(i, 1).to_batches()[0] for i in range(seg.num_rows)]
    mixed = [b.set_column(1, "topic", pa.array(["A" if i % 2 == 0 else "B"])) for i, b in enumerate(batches)]
    sink = export_batches(iter(mixed), "parquet", str(tmp_path / "out"), mixed[0].schema, partition_by="topic",
                          keep_segment=False, max_open=1)
    assert sink.rows == seg.num_rows
    name = seg.column("segment")[0].as_py()
    files = set(os.listdir(tmp_path / "out" / "topic=A"))
    assert len(files) == (seg.num_rows + 1) // 2 > 1 and len(sink.files) == seg.num_rows
    assert files == {f"{name}.parquet"} | {f"{name}-{k}.parquet" for k in range(1, len(files))}
    back = ds.dataset(tmp_path / "out", partitioning="hive").to_table().sort_by("commitLogOffset")
    assert back.column("commitLogOffset").to_pylist() == seg.column("commitLogOffset").to_pylist()
    assert back.column("topic").to_pylist() == ["A" if i % 2 == 0 else "B" for i in range(seg.num_rows)]
    assert back.column("body").to_pylist() == seg.column("body").to_pylist()
    assert not list((tmp_path / "out").rglob("*.tmp"))


def test_parquet_sink_groups_small_batches_into_row_groups(tmp_path):
    rows = pa.table({"commitLogOffset": list(range(1000)), "segment": ["00000000000000000000"] * 1000})
    sink = ParquetSink(str(tmp_path), rows.schema)
    for b in rows.to_batches(max_chunksize=7):
        sink.write(b)
    sink.close()
    meta = pq.ParquetFile(tmp_path / "00000000000000000000.parquet").metadata
    assert meta.num_rows == 1000 and meta.num_row_groups == 1 and meta.schema.names == ["commitLogOffset"]


# -- JSON Lines -----------------------------------------------------------------------------------------

def test_jsonl_equals_messages_jsonl(tmp_path, capsys, version):
    root = store_path(version)
    expected = object_jsonl(root)
    code, out, _ = run(capsys, "messages", root, "--format", "jsonl")
    assert code == 0 and out.encode() == expected
    code, _, err = run(capsys, "export", root, "--to", "jsonl", tmp_path / "m.jsonl")
    assert code == 0 and (tmp_path / "m.jsonl").read_bytes() == expected
    n = expected.count(b"\n")
    assert f"exported {n} messages to {tmp_path / 'm.jsonl'}" in err
    code, out, err = run(capsys, "export", root, "--to", "jsonl", "-")
    assert code == 0 and out.encode() == expected and "to stdout" in err


def test_jsonl_every_record_variant(tmp_path, capsys, variants):
    expected = object_jsonl(variants)
    assert b"\\u001b" in expected and b"\\\\" in expected and "😀".encode() in expected  # the escapes are there
    code, out, _ = run(capsys, "messages", variants, "--format", "jsonl")
    assert code == 0 and out.encode() == expected
    code, _, _ = run(capsys, "export", variants, "--to", "jsonl", tmp_path / "v.jsonl")
    assert (tmp_path / "v.jsonl").read_bytes() == expected
    lines = expected.decode().split("\n")[:-1]  # not splitlines(): U+2028 is in a value
    for sample in (sample_store_path(),):
        code, out, _ = run(capsys, "messages", sample, "--format", "jsonl", "--limit", "50")
        assert out.encode() == b"".join(object_jsonl(sample).splitlines(keepends=True)[:50])
    keys = [list(json.loads(line)) for line in lines]
    assert all(k == [c for c in JSONL_COLUMNS if c not in OPTIONAL_JSON_KEYS or c in k] for k in keys)
    assert sum("priority" in k for k in keys) == 3 and sum("liteTopic" in k for k in keys) == 1


def test_jsonl_columns_and_raw_bodies(tmp_path, capsys, variants):
    code, _, _ = run(capsys, "export", variants, "--to", "jsonl", tmp_path / "c.jsonl", "--no-decompress",
                     "--columns", "body,keys,commitLogOffset,tags,propertiesString,segment")
    assert code == 0
    got = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text(encoding="utf-8").split("\n")[:-1]]
    expected = [{"commitLogOffset": e["commitLogOffset"], "propertiesString": e["propertiesString"],
                 "body": base64.b64encode(e["bodyRaw"]).decode(), "tags": e["tags"], "keys": e["keys"],
                 "segment": e["segment"]} for e in object_rows(variants)]
    assert got == expected
    assert all(list(g) == ["commitLogOffset", "propertiesString", "body", "tags", "keys", "segment"] for g in got)
    assert any(g["tags"] is None for g in got) and any(len(g["keys"]) == 2 for g in got)


def test_messages_jsonl_after_a_body_that_does_not_decompress(tmp_path, capsys):
    """A body that does not decompress is kept as stored, with bodyError; --stop-at-corrupt-body stops there:
    the lines before the bad body, then the object API's error, as the messages command did before."""
    compressed = layout.SYS_FLAG_BITS["is_compressed"][0]
    specs = [synth.MessageSpec(topic="T", body=b"b%d" % i, queue_offset=i) for i in range(20)]
    specs.insert(13, synth.MessageSpec(topic="T", body=b"not zlib", sys_flag=compressed, queue_offset=99))
    root = tmp_path / "store"
    synth.write_commitlog(root / "commitlog", specs, segment_size=1 << 20)
    every = [json.dumps(m.to_json_dict(), ensure_ascii=False) + "\n"
             for m in rmqformats.open_store(root).commitlog.scan()]
    good = every[:13]
    assert "bodyError" in json.loads(every[13]) and json.loads(every[13])["body"] == base64.b64encode(b"not zlib").decode()
    code, out, err = run(capsys, "messages", root, "--format", "jsonl")
    assert code == 0 and out == "".join(every)
    code, out, err = run(capsys, "messages", root, "--format", "jsonl", "--stop-at-corrupt-body")
    assert code == 2 and out == "".join(good) and "rmqformats: error:" in err
    code, out, err = run(capsys, "messages", root, "--format", "jsonl", "--limit", "5", "--stop-at-corrupt-body")
    assert code == 0 and out == "".join(good[:5])
    code, _, err = run(capsys, "export", root, "--to", "jsonl", tmp_path / "x.jsonl", "--stop-at-corrupt-body")
    assert code == 2 and "rmqformats: error:" in err and not os.path.exists(tmp_path / "x.jsonl")
    assert not os.path.exists(tmp_path / "x.jsonl.tmp")
    code, _, _ = run(capsys, "export", root, "--to", "jsonl", tmp_path / "x.jsonl")
    assert code == 0 and (tmp_path / "x.jsonl").read_text() == "".join(every)
    code, _, _ = run(capsys, "export", root, "--to", "jsonl", tmp_path / "y.jsonl", "--no-decompress")
    assert code == 0 and len((tmp_path / "y.jsonl").read_text().splitlines()) == 21


# -- CSV ------------------------------------------------------------------------------------------------

def _read_csv(path_or_bytes) -> list[dict]:
    types = {f.name: (pa.string() if f.name in ("properties", "keys", "body") else f.type) for f in SCHEMA}
    opts = pcsv.ConvertOptions(column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False)
    source = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    return table_rows(pcsv.read_csv(source, convert_options=opts))


def test_csv_round_trips(tmp_path, capsys, version):
    _assert_csv_round_trips(tmp_path, capsys, store_path(version))


def test_csv_round_trips_every_record_variant(tmp_path, capsys, variants):
    _assert_csv_round_trips(tmp_path, capsys, variants)


def _assert_csv_round_trips(tmp_path, capsys, root):
    code, _, _ = run(capsys, "export", root, "--to", "csv", tmp_path / "m.csv")
    assert code == 0
    got = _read_csv(str(tmp_path / "m.csv"))
    expected = object_rows(root)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert list(g) == list(TABLE_COLUMNS)
        assert {c: g[c] for c in SCALARS} == {c: e[c] for c in SCALARS}
        assert json.loads(g["properties"]) == e["properties"]
        assert g["keys"] == " ".join(e["keys"])
        assert base64.b64decode(g["body"]) == e["body"]
    code, out, _ = run(capsys, "export", root, "--to", "csv", "-")
    assert out.encode() == (tmp_path / "m.csv").read_bytes()


def test_csv_help_says_how_the_columns_are_written(capsys):
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    text = capsys.readouterr().out
    assert "properties a JSON object" in text and "keys joined by spaces" in text and "body base64" in text
    assert "propertiesString" in text and "uniqKey" in text


# -- filters, damage, overwriting, errors -------------------------------------------------------------------

FILTERS = [["--topic", "TopicTest", "--queue", "2"], ["--tag", "TagB"], ["--key", "order-3"],
           ["--since", "1795254822760", "--until", "1795254822900"], ["--from-offset", "30000", "--to-offset", "90000"],
           ["--topic", "%RETRY%GroupA"], ["--verify-crc"]]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: " ".join(f))
def test_filters_select_what_messages_selects(tmp_path, capsys, filters):
    root = store_path("rocketmq-5.1.4")
    code, out, _ = run(capsys, "messages", root, "--format", "jsonl", *filters)
    assert code == 0
    code, _, _ = run(capsys, "export", root, "--to", "jsonl", tmp_path / "f.jsonl", *filters)
    assert code == 0 and (tmp_path / "f.jsonl").read_text(encoding="utf-8") == out
    offsets = [json.loads(line)["commitLogOffset"] for line in out.splitlines()]
    code, _, _ = run(capsys, "export", root, "--to", "parquet", tmp_path / "f", *filters)
    assert code == 0
    back = pq.read_table(tmp_path / "f") if offsets else None
    assert (back.column("commitLogOffset").to_pylist() if back is not None else []) == offsets


def test_filters_match_the_ground_truth(tmp_path, capsys):
    truth = [t for t in truth_records("rocketmq-5.1.4") if t["kind"] == "MESSAGE"]
    root = store_path("rocketmq-5.1.4")

    def offsets(*filters):
        code, _, _ = run(capsys, "export", root, "--to", "parquet", tmp_path / "p", "--force",
                         "--columns", "commitLogOffset", *filters)
        assert code == 0
        files = list((tmp_path / "p").glob("*.parquet"))
        return pq.read_table(tmp_path / "p").column("commitLogOffset").to_pylist() if files else []

    assert offsets("--topic", "TopicTest", "--queue", "2") == [
        t["commitlogOffset"] for t in truth if t["topic"] == "TopicTest" and t["queueId"] == 2]
    assert offsets("--tag", "TagB") == [t["commitlogOffset"] for t in truth if t["tags"] == "TagB"]
    uniq = truth[7]["uniqKey"]
    assert offsets("--key", uniq) == [t["commitlogOffset"] for t in truth if t["uniqKey"] == uniq]
    assert offsets("--topic", "NoSuchTopic") == []


def test_export_of_a_damaged_store_says_where_the_data_ends(tmp_path, capsys, store_copy, version):
    rec = [t for t in truth_records(version) if t["kind"] == "MESSAGE"][10]
    with open(store_copy / "commitlog" / rec["file"], "r+b") as f:
        f.seek(rec["fileOffset"] + 4)
        f.write(b"\0\0\0\0")
    code, _, err = run(capsys, "export", store_copy, "--to", "parquet", tmp_path / "d")
    assert code == 3  # status.DAMAGED: the data ended at damage
    assert "exported 10 messages to 1 Parquet file in" in err
    assert "data ends early" in err and "bad magic 0x00000000" in err
    assert pq.read_table(tmp_path / "d").num_rows == 10


def test_refuses_to_overwrite_without_force(tmp_path, capsys):
    root = store_path("rocketmq-4.9.7")
    target = tmp_path / "m.jsonl"
    target.write_text("keep me\n")
    code, _, err = run(capsys, "export", root, "--to", "jsonl", target)
    assert code == 2 and "exists and is not empty" in err and target.read_text() == "keep me\n"
    code, _, _ = run(capsys, "export", root, "--to", "jsonl", target, "--force")
    assert code == 0 and target.read_bytes() == object_jsonl(root)
    folder = tmp_path / "pq"
    assert run(capsys, "export", root, "--to", "parquet", folder)[0] == 0
    code, _, err = run(capsys, "export", root, "--to", "parquet", folder, "--topic", "TopicTest")
    assert code == 2 and "exists and is not empty" in err
    code, _, _ = run(capsys, "export", root, "--to", "parquet", folder, "--topic", "TopicTest", "--force")
    assert code == 0 and set(pq.read_table(folder).column("topic").to_pylist()) == {"TopicTest"}
    (folder / "notes.txt").write_text("mine")
    code, _, err = run(capsys, "export", root, "--to", "parquet", folder, "--force")
    assert code == 2 and "not removing them" in err and (folder / "notes.txt").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(capsys, "export", root, "--to", "parquet", empty)[0] == 0
    code, _, err = run(capsys, "export", root, "--to", "parquet", target)
    assert code == 2 and "not a folder" in err


def test_links_are_replaced_never_followed_and_fifos_written_in_place(tmp_path, capsys):
    root = store_path("rocketmq-4.9.7")
    expected = object_jsonl(root)
    real = tmp_path / "real.jsonl"
    real.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    code, _, err = run(capsys, "export", root, "--to", "jsonl", link)
    assert code == 2 and "symbolic link" in err and link.is_symlink()
    assert run(capsys, "export", root, "--to", "jsonl", link, "--force")[0] == 0
    assert not link.is_symlink() and link.read_bytes() == expected and real.read_bytes() == b""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    code = run(capsys, "export", root, "--to", "jsonl", fifo)[0]
    reader.join()
    assert code == 0 and got == [expected] and fifo.is_fifo()


def test_usage_errors(tmp_path, capsys):
    root = store_path("rocketmq-4.9.7")
    with pytest.raises(SystemExit) as exc:
        main(["export", str(root), "--to", "jsonl", str(tmp_path / "x"), "--columns", "topic,nope"])
    assert exc.value.code == 2 and "unknown column(s) nope" in capsys.readouterr().err
    code, _, err = run(capsys, "export", root, "--to", "xml", tmp_path / "x")
    assert code == 2 and "parquet, jsonl or csv" in err
    code, _, err = run(capsys, "export", root, "--to", "jsonl", tmp_path / "x", "--partition-by", "topic")
    assert code == 2 and "--partition-by needs --to parquet" in err
    code, _, err = run(capsys, "export", root, "--to", "csv", tmp_path / "x", "--compression", "snappy")
    assert code == 2 and "--compression needs --to parquet" in err
    with pytest.raises(SystemExit) as exc:
        main(["export", str(root), "--to", "parquet", str(tmp_path / "x"), "--compression", "gzip"])
    assert exc.value.code == 2
    code, _, err = run(capsys, "export", root, "--to", "parquet", "-")
    assert code == 2 and "folder" in err
    code, _, err = run(capsys, "export", tmp_path / "missing", "--to", "jsonl", tmp_path / "x")
    assert code == 2 and "no such file" in err
    assert not os.path.exists(tmp_path / "x")


def test_sample_and_progress_bar_on_a_terminal(tmp_path):
    """``--sample`` needs no STORE; with stderr on a terminal the export draws a progress bar there."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # child: stdout and stderr are the terminal, 100 columns wide
        import fcntl
        import struct
        import termios
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        os.execv(sys.executable, [sys.executable, "-m", "rmqformats", "export", "--sample", "--to", "parquet",
                                  str(tmp_path / "out")])
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0
    assert "export:" in text and "exported 309 messages to 5 Parquet files" in text
    assert pq.read_table(tmp_path / "out").num_rows == 309
