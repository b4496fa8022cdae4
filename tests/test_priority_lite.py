"""Priority messages (5.4.0, ``_SYS_MSG_PRIORITY_``) and lite topics (5.5.0, ``__LITE_TOPIC``): the ``priority``
and ``liteTopic`` values in the object API, the columnar batches, every export and ``messages``.

The real vectors (4.9.7, 5.1.4, 5.3.3) hold no such message: the store here is built through the construct
schemas (``synth.priority_message`` / ``synth.lite_message`` place them as the broker does).
"""

from __future__ import annotations

import csv
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rmqformats
from rmqformats import properties as props
from rmqformats import synth
from rmqformats.cli import main
from rmqformats.columnar import SCHEMA
from rmqformats.generated.layouts import rocketmq_commitlog as layout
from rmqformats.versions import annotations

#: (the value as stored, the priority Java's Integer.parseInt gives, None where it throws)
PRIORITIES = [("0", 0), ("5", 5), ("40", 40), ("-2", -2), ("+07", 7), ("0000000000012", 12),
              ("2147483647", 2147483647), ("-2147483648", -2147483648), ("2147483648", None),
              ("-2147483649", None), ("99999999999999999999", None), ("\uff13", 3), ("\u0661\u0662", 12),
              ("x1", None), ("1x", None), (" 1", None), ("1_0", None), ("+", None), ("-", None), ("1.5", None),
              ("\u00b2", None)]
WRITE_QUEUES = 8


def _specs() -> list[synth.MessageSpec]:
    specs = [synth.priority_message("TopicPriority", value, write_queue_nums=WRITE_QUEUES, body=value.encode(),
                                    properties={"TAGS": "p", "KEYS": "k1 k2"}) for value, _ in PRIORITIES]
    specs += [synth.lite_message("TopicParent", lite, lmq_offset=i, body=b"lite", compression="zstd" if i else None)
              for i, lite in enumerate(["user-1", "user-2", "\u4e2d\u6587 \"q\""])]
    specs.append(synth.MessageSpec("TopicPlain", b"plain", {"TAGS": "t", "UNIQ_KEY": "U1"}))
    # Both properties on one message, and each repeated (the last value counts, as the broker's parser does).
    specs.append(synth.MessageSpec("TopicBoth", b"both", f"{props.PRIORITY}\x011\x02{props.LITE_TOPIC}\x01a\x02"
                                                         f"{props.PRIORITY}\x012\x02{props.LITE_TOPIC}\x01b"))
    return specs


#: topic -> the (priority, liteTopic) of each of its messages, in order.
EXPECTED = {"TopicPriority": [(p, None) for _, p in PRIORITIES],
            "TopicParent": [(None, "user-1"), (None, "user-2"), (None, "\u4e2d\u6587 \"q\"")],
            "TopicPlain": [(None, None)], "TopicBoth": [(2, "b")]}


def _expected_rows() -> list[tuple]:
    return [(topic, p, lite) for topic in ("TopicPriority", "TopicParent", "TopicPlain", "TopicBoth")
            for p, lite in EXPECTED[topic]]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("prio_lite")
    synth.write_commitlog(root / "commitlog", _specs(), segment_size=4096)
    return root


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the names, from formats/ ---------------------------------------------------------------------------

def test_property_names_come_from_the_commitlog_spec_with_their_releases():
    assert layout.MESSAGE_PROPERTIES_NAMES["priority"] == props.PRIORITY == "_SYS_MSG_PRIORITY_"
    assert layout.MESSAGE_PROPERTIES_NAMES["lite_topic"] == props.LITE_TOPIC == "__LITE_TOPIC"
    assert (props.TAGS, props.KEYS, props.UNIQ_KEY, props.CRC32) == ("TAGS", "KEYS", "UNIQ_KEY", "__CRC32#")
    facts = annotations.load()
    for name_id, release in (("crc32", "5.2.0"), ("priority", "5.4.0"), ("lite_topic", "5.5.0")):
        change = facts.change("rocketmq_commitlog", name_id)
        assert change.rule == "PROPERTY_ADDED" and str(change.release) == release
        assert f"`{layout.MESSAGE_PROPERTIES_NAMES[name_id]}`" in change.doc
        assert change.ref.startswith(f"rocketmq-all-{release}:")


@pytest.mark.parametrize("value, expected", PRIORITIES + [("", None), (None, None)])
def test_priority_is_read_as_java_integer_parse_int_reads_it(value, expected):
    assert props.parse_java_int(value) == expected


# -- the object API and the columnar batches ------------------------------------------------------------

def test_object_api_and_the_broker_queue_choice(store):
    msgs = list(rmqformats.open_store(store).commitlog.scan())
    assert [(m.topic, m.priority, m.lite_topic) for m in msgs] == _expected_rows()
    for m, (value, p) in zip(msgs, PRIORITIES):
        assert m.properties[props.PRIORITY] == value  # the stored text stays in the properties
        assert m.queue_id == (min(p, WRITE_QUEUES - 1) if p is not None and p >= 0 else 0)
    lite = [m for m in msgs if m.topic == "TopicParent"]
    assert [m.properties["INNER_MULTI_DISPATCH"] for m in lite] == [
        "%LMQ%$TopicParent$user-1", "%LMQ%$TopicParent$user-2", "%LMQ%$TopicParent$\u4e2d\u6587 \"q\""]
    d = msgs[2].to_json_dict()
    assert list(d)[-1] == "priority" and d["priority"] == 40 and "liteTopic" not in d
    assert "priority" not in msgs[-2].to_json_dict() and "liteTopic" not in msgs[-2].to_json_dict()
    assert list(msgs[-1].to_json_dict())[-2:] == ["priority", "liteTopic"]


@pytest.mark.parametrize("threads, jobs, batch_size", [(1, 1, 3), (1, 1, 8192), (2, 1, 5), (1, 2, 4)])
def test_columnar_batches(store, threads, jobs, batch_size):
    log = rmqformats.open_store(store).commitlog
    scan = log.batches(["topic", "priority", "liteTopic"], batch_size=batch_size, threads=threads, jobs=jobs,
                       range_size=4096)
    batches = list(scan)
    assert all(b.schema == pa.schema([SCHEMA.field(c) for c in ("topic", "priority", "liteTopic")]) for b in batches)
    assert SCHEMA.field("priority").type == pa.int32() and SCHEMA.field("liteTopic").type == pa.string()
    table = pa.Table.from_batches(batches)
    assert list(zip(*(table.column(c).to_pylist() for c in ("topic", "priority", "liteTopic")))) == _expected_rows()
    # Every column at once (the properties split once for all of them) gives the same values.
    full = log.to_arrow()
    assert full.select(["priority", "liteTopic"]).equals(table.select(["priority", "liteTopic"]))


def test_filters_and_invalid_utf8(tmp_path):
    """A value with bytes that are not UTF-8 is read as the object API reads it (U+FFFD: no priority)."""
    synth.write_commitlog(tmp_path / "commitlog", [
        synth.MessageSpec("T", b"a", {props.PRIORITY: "7", props.LITE_TOPIC: "ok"}),
        synth.MessageSpec("T", b"b", {props.PRIORITY: "8", props.LITE_TOPIC: "bad"})], segment_size=4096)
    log = rmqformats.open_store(tmp_path).commitlog
    second = list(log.scan())[1]
    with open(second.segment, "r+b") as f:
        data = f.read()
        for text in (f"{props.PRIORITY}\x018".encode(), f"{props.LITE_TOPIC}\x01bad".encode()):
            f.seek(data.index(text, second.file_offset) + len(text) - 1)
            f.write(b"\xff")
    msgs = list(log.scan())
    assert [(m.priority, m.lite_topic) for m in msgs] == [(7, "ok"), (None, "ba\ufffd")]
    table = log.to_arrow(["priority", "liteTopic"])
    assert table.to_pylist() == [{"priority": 7, "liteTopic": "ok"}, {"priority": None, "liteTopic": "ba\ufffd"}]


# -- exports and messages -------------------------------------------------------------------------------

def test_exports_hold_the_values(store, tmp_path, capsys):
    expected = _expected_rows()
    code, _, _ = run(capsys, "export", store, "--to", "parquet", tmp_path / "pq")
    assert code == 0
    table = pq.read_table(tmp_path / "pq").sort_by("commitLogOffset")
    assert table.schema.field("priority").type == pa.int32() and table.schema.field("liteTopic").type == pa.string()
    assert list(zip(*(table.column(c).to_pylist() for c in ("topic", "priority", "liteTopic")))) == expected

    code, _, _ = run(capsys, "export", store, "--to", "csv", tmp_path / "m.csv")
    with open(tmp_path / "m.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["topic"], int(r["priority"]) if r["priority"] else None, r["liteTopic"] or None)
            for r in rows] == expected

    code, _, _ = run(capsys, "export", store, "--to", "jsonl", tmp_path / "m.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(d["topic"], d.get("priority"), d.get("liteTopic")) for d in lines] == expected
    code, out, _ = run(capsys, "export", store, "--to", "jsonl", "-", "--columns", "topic,priority,liteTopic")
    assert [(d["topic"], d.get("priority"), d.get("liteTopic")) for d in map(json.loads, out.splitlines())] == expected


def test_messages_jsonl_and_columns(store, capsys):
    expected = _expected_rows()
    code, out, _ = run(capsys, "messages", store, "--format", "jsonl")
    assert code == 0
    objects = [json.dumps(m.to_json_dict(), ensure_ascii=False) for m in rmqformats.open_store(store).commitlog.scan()]
    assert out.splitlines() == objects  # the columnar output is the object API's, key for key
    code, out, _ = run(capsys, "messages", store, "--format", "jsonl", "--columns", "priority,liteTopic,topic")
    got = [json.loads(line) for line in out.splitlines()]
    assert [(d["topic"], d.get("priority"), d.get("liteTopic")) for d in got] == expected
    # In the order given; the first key is always written (it opens the object), the others only with a value.
    assert all(list(d)[:1] == ["priority"] for d in got) and got[-2] == {"priority": None, "topic": "TopicPlain"}
    code, out, _ = run(capsys, "messages", store, "--topic", "TopicBoth", "--columns", "topic,priority,liteTopic")
    assert code == 0 and out.splitlines()[1].split() == ["TopicBoth", "2", "b"]
    # One message read at its offset goes through the object API: the same keys.
    both = [m for m in rmqformats.open_store(store).commitlog.scan() if m.topic == "TopicBoth"][0]
    for columns in ([], ["--columns", "topic,priority,liteTopic"]):
        code, out, _ = run(capsys, "messages", store, "--offset", both.commitlog_offset, "--format", "jsonl", *columns)
        d = json.loads(out)
        assert (d["priority"], d["liteTopic"]) == (2, "b")
    plain = [m for m in rmqformats.open_store(store).commitlog.scan() if m.topic == "TopicPlain"][0]
    code, out, _ = run(capsys, "messages", store, "--offset", plain.commitlog_offset, "--format", "jsonl",
                       "--columns", "topic,priority,liteTopic")
    assert json.loads(out) == {"topic": "TopicPlain"}  # as the columnar output: no key without a value
    code, out, _ = run(capsys, "messages", store, "--topic", "TopicPlain", "--format", "jsonl",
                       "--columns", "topic,priority,liteTopic")
    assert json.loads(out) == {"topic": "TopicPlain"}


def test_csv_and_table_text_of_the_columns(store, capsys):
    code, out, _ = run(capsys, "export", store, "--to", "csv", "-", "--columns", "topic,priority,liteTopic")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["topic", "priority", "liteTopic"] and rows[-1] == ["TopicBoth", "2", "b"]
