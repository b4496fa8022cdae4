"""Columns of one property's values (``property.NAME``), against RocketMQ's own decoded properties.

Each vector store's messages carry the properties RocketMQ's
``MessageDecoder`` read from them (the truth files); a column asked for by
a property's name holds that value per message, null where the message has
none, with the serial walk, threads, worker processes and a DLedger log
alike.
"""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import rmqformats
from rmqformats import properties as props
from rmqformats.columnar import COLUMNS
from rmqformats.frames import map_key_rows, present_rows
from rmqformats.walk.arrow import PROPERTY_PREFIX, property_column, property_of, resolve_columns

from conftest import VERSIONS, store_path, truth_records
from layoutstores import dledger_store


def _names(version: str) -> list[str]:
    return sorted({k for t in truth_records(version) if t["kind"] == "MESSAGE" for k in t["properties"]})


def test_each_property_column_holds_rocketmq_s_value(version):
    names = _names(version)
    assert {"TAGS", "KEYS", "UNIQ_KEY"} <= set(names) and len(names) > 10
    columns = [*map(property_column, names), property_column("NO_SUCH_PROPERTY"), "commitLogOffset", "tags"]
    log = rmqformats.open_store(store_path(version)).commitlog
    table = log.to_arrow(columns)  # in the order asked
    assert table.schema.names == columns
    # the batches: the message columns first, in schema order, then the properties in the order asked
    assert log.batches(columns=columns).schema.names == ["commitLogOffset", "tags", *columns[:-2]]
    assert all(table.schema.field(c).type == pa.string() for c in columns[:-2])
    truth = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    assert table.column("commitLogOffset").to_pylist() == [t["commitlogOffset"] for t in truth]
    for name in names:
        assert table.column(property_column(name)).to_pylist() == [t["properties"].get(name) for t in truth], name
    assert table.column(property_column("NO_SUCH_PROPERTY")).null_count == len(truth)
    assert table.column(property_column("TAGS")).equals(table.column("tags"))


@pytest.mark.parametrize("options", [{"threads": 2, "range_size": 4096}, {"jobs": 3}])
def test_the_same_columns_from_threads_and_workers(version, options, monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    columns = ["commitLogOffset", "properties", *map(property_column, _names(version))]
    log = rmqformats.open_store(store_path(version)).commitlog
    one = log.batches(columns=columns, batch_size=37).read_all()
    many = log.batches(columns=columns, batch_size=37, **options).read_all()
    assert many.equals(one)
    for name in _names(version):  # the map's value wherever the map holds the name
        assert one.column(property_column(name)).equals(
            pc.map_lookup(one.column("properties"), pa.scalar(name), "first"))


def test_a_dledger_log_gives_the_same_columns(tmp_path, monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    version = VERSIONS[-1]
    root, _, _ = dledger_store(version, tmp_path / "store")
    columns = ["commitLogOffset", "entryIndex", *map(property_column, _names(version))]
    log = rmqformats.open_store(root).commitlog
    one = log.batches(columns=columns).read_all()
    assert one.schema.names == [*columns[:1], *columns[2:], "entryIndex"]  # the entry's columns come last
    assert log.batches(columns=columns, jobs=3).read_all().equals(one)
    plain = rmqformats.open_store(store_path(version)).commitlog.to_arrow(columns[:1] + columns[2:])
    # the copy's records moved, so their __CRC32# values are new: every other property is the vector's
    crc = property_column(props.CRC32)
    assert one.drop_columns(["commitLogOffset", "entryIndex", crc]).equals(plain.drop_columns(["commitLogOffset", crc]))
    assert one.column(crc).null_count == 0


def test_invalid_utf8_in_a_value_reads_as_the_object_api_reads_it(tmp_path):
    """A value with a byte that is not UTF-8: U+FFFD in its place, as in the ``properties`` map and the
    object API (the batch is decoded in Python then)."""
    version = VERSIONS[-1]
    message = next(t for t in truth_records(version)
                   if t["kind"] == "MESSAGE" and t["properties"].get("CLUSTER") == "DefaultCluster")
    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    segment = root / "commitlog" / message["file"]
    data = bytearray(segment.read_bytes())
    record = data[message["fileOffset"]:message["fileOffset"] + message["totalSize"]]
    at = message["fileOffset"] + record.index(b"CLUSTER\x01Default") + len("CLUSTER\x01De")
    data[at] = 0xFF
    segment.write_bytes(bytes(data))
    log = rmqformats.open_store(root).commitlog
    table = log.to_arrow(["commitLogOffset", "properties", property_column("CLUSTER"), property_column("TAGS")])
    row = table.column("commitLogOffset").to_pylist().index(message["commitlogOffset"])
    assert table.column(property_column("CLUSTER"))[row].as_py() == "De\ufffdaultCluster"
    assert table.column(property_column("TAGS"))[row].as_py() == message["properties"].get("TAGS")
    obj = log.read(message["commitlogOffset"])
    assert props.parse_properties(obj.properties_raw)["CLUSTER"] == "De\ufffdaultCluster"
    for name in ("CLUSTER", "TAGS"):
        assert table.column(property_column(name)).equals(
            pc.map_lookup(table.column("properties"), pa.scalar(name), "first"))


def test_a_repeated_name_gives_its_last_value():
    """``string2messageProperties`` puts each pair into a map, so a later one replaces an earlier one."""
    from rmqformats import synth
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        text = "WAIT\x01true\x02KEYS\x01a\x02WAIT\x01false\x02"
        synth.write_commitlog(f"{tmp}/s/commitlog", [synth.MessageSpec(topic="T", body=b"x", properties=text)])
        table = rmqformats.open_store(f"{tmp}/s").commitlog.to_arrow(["properties", property_column("WAIT")])
    assert table.column(property_column("WAIT")).to_pylist() == ["false"]
    assert table.column("properties").to_pylist() == [[("WAIT", "false"), ("KEYS", "a")]]


def test_column_names():
    assert property_column("DELAY") == PROPERTY_PREFIX + "DELAY" == "property.DELAY"
    assert property_of("property.a.b") == "a.b" and property_of("topic") is None
    assert resolve_columns(["property.B", "topic", "property.A", "property.B"]) == \
        ("topic", "property.B", "property.A")
    for bad in ("", None):
        with pytest.raises(ValueError, match="needs a property name"):
            property_column(bad)
    with pytest.raises(ValueError, match=r"unknown column\(s\) 'property\.'.*property\.NAME"):
        resolve_columns(["topic", "property."])
    with pytest.raises(ValueError, match=r"unknown column\(s\) 'Topic'"):
        resolve_columns(["Topic"])
    assert "property.DELAY" not in COLUMNS


def test_present_rows_is_map_key_rows_for_a_column(version):
    table = rmqformats.open_store(store_path(version)).commitlog.to_arrow(
        ["properties", property_column("KEYS"), property_column("DELAY")])
    for name in ("KEYS", "DELAY"):
        column = table.column(property_column(name)).combine_chunks()
        maps = table.column("properties").combine_chunks()
        assert present_rows(column) == map_key_rows(maps, name)
        rows = pa.array(range(0, len(column), 3)).to_numpy()
        assert present_rows(column, rows) == map_key_rows(maps, name, rows)


def _cli(capfdbinary, *argv) -> tuple[int, str]:
    from rmqformats.cli import main
    code = main([str(a) for a in argv])
    out, err = capfdbinary.readouterr()
    return code, out.decode("utf-8")


def test_messages_and_export_take_property_columns(version, capfdbinary, tmp_path, monkeypatch):
    """``--columns property.NAME`` in ``messages`` (JSON Lines, table) and ``export`` (JSON Lines, CSV,
    Parquet): RocketMQ's value of the property, null (an empty cell) without one; the same with jobs."""
    import csv
    import io
    import json

    import pyarrow.parquet as pq
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    root = store_path(version)
    truth = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    want = [(t["commitlogOffset"], t["properties"].get("KEYS"), t["properties"].get("DELAY")) for t in truth]
    columns = "commitLogOffset,property.KEYS,property.DELAY"
    for jobs in (1, 3):
        code, out = _cli(capfdbinary, "messages", root, "--columns", columns, "--format", "jsonl", "--jobs", jobs)
        rows = [json.loads(line) for line in out.splitlines()]
        assert code == 0 and [tuple(r.values()) for r in rows] == want
        assert list(rows[0]) == columns.split(",")
        code, out = _cli(capfdbinary, "export", root, "--to", "csv", "-", "--columns", columns, "--jobs", jobs)
        rows = list(csv.reader(io.StringIO(out)))
        assert rows[0] == columns.split(",")
        assert rows[1:] == [[str(o), k or "", d or ""] for o, k, d in want]
        folder = tmp_path / f"out{jobs}"
        assert _cli(capfdbinary, "export", root, "--to", "parquet", folder, "--columns", columns,
                    "--jobs", jobs)[0] == 0
        table = pq.read_table(folder).sort_by("commitLogOffset")
        assert table.schema.field("property.KEYS").type == pa.string()
        assert list(zip(*(table.column(c).to_pylist() for c in columns.split(",")))) == want
    code, out = _cli(capfdbinary, "messages", root, "--columns", "commitLogOffset,property.DELAY", "--limit", "500")
    lines = out.splitlines()
    assert lines[0].split() == ["commitLogOffset", "property.DELAY"]
    assert [line.split()[1:] for line in lines[1:]] == [[d] if d else [] for _, _, d in want]
    # the object road (one message by id) gives the same object
    code, out = _cli(capfdbinary, "messages", root, "--msg-id", truth[3]["msgId"], "--columns", columns,
                     "--format", "jsonl")
    assert code == 0 and json.loads(out) == dict(zip(columns.split(","), want[3]))
    with pytest.raises(SystemExit) as exit_:
        _cli(capfdbinary, "messages", root, "--columns", "topic,property.", "--format", "jsonl")
    assert exit_.value.code == 2 and b"property.NAME for the value of property NAME" in capfdbinary.readouterr().err


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

# Names and values from a small alphabet with the separators in it, so that pairs without a name or a value,
# repeated names, names that share their first eight bytes and names longer than eight bytes all come up.
_PART = st.text(alphabet=["A", "B", "_", "Ü", "\x01", "\x02", "0", "\u4e2d"], max_size=11)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.lists(st.tuples(_PART, _PART), max_size=6), min_size=1, max_size=8),
       asked=st.lists(_PART.filter(lambda s: s and "\x01" not in s and "\x02" not in s), min_size=1, max_size=4),
       trailing=st.booleans())
def test_random_properties_read_as_the_broker_reads_them(tmp_path_factory, texts, asked, trailing):
    """Property strings made of names and values with separators, repeats and non-ASCII characters: each
    property column holds what ``string2messageProperties`` reads (the object API's parse), and the map too."""
    from rmqformats import synth
    raw = ["\x02".join(f"{n}\x01{v}" for n, v in pairs) + ("\x02" if trailing and pairs else "")
           for pairs in texts]
    root = tmp_path_factory.mktemp("props")
    synth.write_commitlog(root / "commitlog", [synth.MessageSpec(topic="T", body=b"b", queue_offset=i,
                                                                 properties=text) for i, text in enumerate(raw)])
    names = list(dict.fromkeys(asked + ["TAGS"]))
    table = rmqformats.open_store(root).commitlog.to_arrow(["properties", *map(property_column, names)])
    parsed = [props.parse_properties(text) for text in raw]
    for name in names:
        assert table.column(property_column(name)).to_pylist() == [p.get(name) for p in parsed], name
    assert [dict(m) for m in table.column("properties").to_pylist()] == parsed
