"""Regression cases found by fuzzing, each reproduced with the ``rmqformats`` command on a copy of a vector store.

Times no date can show, config JSON that broke the reader, a huge committed
offsets file, a record over 2 GiB, a looping index chain and a tag filter on
the schedule topic: each gives a typed error or its value shown, never an
exception.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter

import pytest

import rmqformats
from rmqformats.cli import main
from rmqformats.config import read_config_file
from rmqformats.config.stream import iter_consumer_offsets, read_committed_offsets
from rmqformats.errors import ConfigSchemaError, ConfigSyntaxError, IndexChainLoopError
from rmqformats.recovery.report import build_report
from rmqformats.message import MAX_DATETIME_MS, format_millis, millis_to_datetime, millis_to_datetime_or_none

from conftest import store_path

FLAG = "(out of range)"


def _copy(tmp_path, version: str):
    dst = tmp_path / version
    shutil.copytree(store_path(version), dst)
    return dst


def _patch(path, offset: int, data: bytes) -> None:
    b = bytearray(open(path, "rb").read())
    b[offset:offset + len(data)] = data
    open(path, "wb").write(bytes(b))


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


# -- times no date can show ---------------------------------------------------------------

def test_time_helpers():
    assert format_millis(0) == "1970-01-01T00:00:00.000Z"
    assert format_millis(MAX_DATETIME_MS) == "9999-12-31T23:59:59.999Z"
    assert format_millis(MAX_DATETIME_MS + 1) == f"{MAX_DATETIME_MS + 1} {FLAG}"
    assert format_millis(-(1 << 63)) == f"{-(1 << 63)} {FLAG}"
    assert millis_to_datetime_or_none(1 << 62) is None
    with pytest.raises(ValueError, match="outside the years 1 to 9999"):
        millis_to_datetime(1 << 62)


@pytest.mark.parametrize("fmt", ["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d %H:%M:%SZ"])
def test_time_text_is_what_strftime_and_format_millis_write(fmt):
    """The table and CSV text of a column of store times (its own kernel) is Arrow's strftime of it, and
    format_millis's text for each value: the years 1 to 9999, leap days and century years among them,
    before and after 1970, nulls, and values no date can show, raw and flagged; in chunks too."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from rmqformats.export import time_text
    rng = np.random.default_rng(20261207)
    edges = [0, -1, 1, -999, 999, 1000, -1000, MAX_DATETIME_MS, MAX_DATETIME_MS + 1, -62135596800000,
             -62135596800001, 951782400000, 951868799999, 4107542400000, -2203891200000, 946684800000,
             -(1 << 63), (1 << 63) - 1]
    ms = np.concatenate([rng.integers(-62135596800000 - 10 ** 12, MAX_DATETIME_MS + 10 ** 12, 20000),
                         rng.integers(1_500_000_000_000, 2_000_000_000_000, 5000), np.array(edges, np.int64)])
    stamps = pa.array(ms, pa.timestamp("ms", tz="UTC"), mask=rng.random(len(ms)) < 0.05)
    got = time_text(stamps, fmt).to_pylist()
    values = pc.cast(stamps, pa.int64()).to_pylist()
    shows = [v is not None and -62135596800000 <= v <= MAX_DATETIME_MS for v in values]
    strftime = pc.strftime(pc.cast(pa.array([v if ok else 0 for v, ok in zip(values, shows)], pa.int64()),
                                   stamps.type), format=fmt).to_pylist()
    assert [g for g, ok in zip(got, shows) if ok] == [s for s, ok in zip(strftime, shows) if ok]
    assert got == [None if v is None else format_millis(v).replace("T", fmt[8]) if ok else format_millis(v)
                   for v, ok in zip(values, shows)]
    assert sum(shows) > 15000 and None in got and any(g and g.endswith(FLAG) for g in got)
    chunked = time_text(pa.chunked_array([stamps[:7], stamps[7:]]), fmt)
    assert chunked.type == pa.string() and chunked.to_pylist() == got


def test_flipped_bit_in_a_store_timestamp(tmp_path, capsys):
    # Byte 56 of the first record is in STORETIMESTAMP: XOR 0x40 puts it past year 9999.
    s = _copy(tmp_path, "rocketmq-4.9.7")
    seg = s / "commitlog" / "00000000000000000000"
    b = bytearray(seg.read_bytes())
    b[56] ^= 0x40
    seg.write_bytes(bytes(b))
    msg = next(iter(rmqformats.open_store(s).commitlog.scan()))
    assert msg.store_time is None and msg.born_time is not None
    raw = msg.store_timestamp
    assert raw > MAX_DATETIME_MS
    for argv in (["inspect", s], ["messages", s], ["queue", s, "TopicTest", "0", "--resolve"],
                 ["lookup", s, "--topic", "TopicTest", "--key", "key-0"], ["messages", s, "--offset", "0"]):
        status, out, _ = run(capsys, *argv)
        assert status == 0, argv
        assert f"{raw} {FLAG}" in out, argv
    status, out, _ = run(capsys, "messages", s, "--format", "jsonl", "--limit", "1")
    assert json.loads(out)["storeTimestamp"] == raw
    for fmt in ("csv", "jsonl", "parquet"):
        status, _, _ = run(capsys, "export", s, "--to", fmt, tmp_path / f"out.{fmt}")
        assert status == 0
    with open(tmp_path / "out.csv", encoding="utf-8") as f:
        f.readline()
        assert f'"{raw} {FLAG}"' in f.readline()


def test_report_over_a_store_timestamp_with_its_sign_bit_flipped(tmp_path, capsys):
    s = _copy(tmp_path, "rocketmq-4.9.7")
    _patch(s / "commitlog" / "00000000000000000000", 56,
           bytes([(s / "commitlog" / "00000000000000000000").read_bytes()[56] ^ 0x80]))
    raw = next(iter(rmqformats.open_store(s).commitlog.scan())).store_timestamp
    assert raw < 0
    report = build_report(rmqformats.open_store(s))
    assert sum(report.times.totals.values()) == report.messages
    assert report.times.totals == Counter(m.topic for m in rmqformats.open_store(s).commitlog.scan())
    assert report.first_time == raw
    status, _, err = run(capsys, "report", s, "-o", tmp_path / "report.html")
    assert status == 0 and "305 message(s)" in err
    assert f"{raw} {FLAG}" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_huge_times_in_checkpoint_batch_queue_and_index(tmp_path, capsys):
    s = _copy(tmp_path, "rocketmq-5.1.4")
    _patch(s / "checkpoint", 0, struct.pack(">q", 1 << 62))
    _patch(s / "batchconsumequeue" / "TopicBatchCQ" / "0" / "00000000000000000000", 20,
           struct.pack(">q", -(1 << 63)))
    for f in glob.glob(str(s / "index" / "*")):
        _patch(f, 0, struct.pack(">qq", 1 << 62, 1 << 62))
    status, out, _ = run(capsys, "inspect", s)
    assert status == 0 and f"physic {1 << 62} {FLAG}" in out
    status, out, _ = run(capsys, "queue", s, "TopicBatchCQ", "0")
    assert status == 0 and f"{-(1 << 63)} {FLAG}" in out
    status, out, _ = run(capsys, "lookup", s, "--topic", "TopicTest", "--key", "key-0", "--raw")
    assert status == 0 and FLAG in out
    cp = rmqformats.open_store(s).checkpoint()
    assert cp.physic_msg_time is None


# -- config JSON ----------------------------------------------------------------------------

CONFIG_CASES = {
    "dash key": ('{"offsetTable":{-:{0:1}}}', ConfigSyntaxError, "expected a key"),
    "5000 digits": ('{"offsetTable":{"T@G":{0:' + "9" * 5000 + "}}}", ConfigSyntaxError, "5,000 digits"),
    "queue id of 5000 digits": ('{"offsetTable":{"T@G":{' + "7" * 5000 + ":1}}}", ConfigSyntaxError, "5,000 digits"),
    "quoted queue id of 5000 digits": ('{"offsetTable":{"T@G":{"' + "7" * 5000 + '":1}}}', ConfigSchemaError,
                                       "a Java int holds"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_config_that_broke_the_reader(tmp_path, capsys, case):
    text, error, reason = CONFIG_CASES[case]
    s = _copy(tmp_path, "rocketmq-4.9.7")
    path = s / "config" / "consumerOffset.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(error, match=reason):
        read_config_file(path)
    with pytest.raises(error, match=reason):
        list(iter_consumer_offsets(path))
    for argv in (["config", s], ["config", s, "--format", "jsonl"], ["lag", s], ["dump", path]):
        status, _, err = run(capsys, *argv)
        assert status == 2 and "consumerOffset.json @ 0x" in err and reason in err, argv
        assert len(err) < 1000, argv  # the key's ends name it, not its 5,000 characters


def test_integer_topic_keys_are_text_as_fastjson_reads_them(tmp_path, capsys):
    s = _copy(tmp_path, "rocketmq-4.9.7")
    (s / "config" / "consumerOffset.json").write_text('{"offsetTable":{1:{0:1}}}', encoding="utf-8")
    topics = s / "config" / "topics.json"
    doc = topics.read_text(encoding="utf-8").replace('"TopicTest":{', '7:{', 1)
    topics.write_text(doc, encoding="utf-8")
    f = read_config_file(s / "config" / "consumerOffset.json")
    assert f.model.entries() == [("1", "", 0, 1)]
    assert list(iter_consumer_offsets(s / "config" / "consumerOffset.json")) == [("1", "", 0, 1)]
    assert "7" in read_config_file(topics).model.topic_config_table
    for argv in (["config", s], ["config", s, "--format", "jsonl"], ["lag", s], ["lag", s, "--format", "jsonl"]):
        status, out, _ = run(capsys, *argv)
        assert status in ((0, 1) if argv[0] == "lag" else (0,)), argv  # lag: 1 when queues are flagged
    status, out, _ = run(capsys, "config", s)
    assert "\n  7 " in out


def test_lone_surrogate_in_a_key(tmp_path):
    s = _copy(tmp_path, "rocketmq-4.9.7")
    path = s / "config" / "consumerOffset.json"
    path.write_text('{"offsetTable":{"Topic\\ud800@G":{0:1}}}', encoding="utf-8")
    f = read_config_file(path)
    assert f.model.entries()[0].topic == "Topic\ud800"
    assert b'"Topic?@G"' in f.to_bytes()  # as Java's String.getBytes writes it
    # Through the real command and a UTF-8 stdout: the escape is printed, valid inside JSON too.
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for argv in (["config", str(s)], ["config", str(s), "--format", "jsonl"], ["lag", str(s)],
                 ["lag", str(s), "--format", "jsonl"]):
        proc = subprocess.run([sys.executable, "-m", "rmqformats", *argv], capture_output=True, text=True, env=env)
        assert proc.returncode in ((0, 1) if argv[0] == "lag" else (0,)), (argv, proc.stderr)
        assert "Topic\\ud800" in proc.stdout, argv
        if "jsonl" in argv:
            line = proc.stdout.splitlines()[0]
            assert "Topic\ud800" in line.encode().decode("unicode_escape") or json.loads(line)


def test_streamed_offsets_agree_with_the_document_reader():
    for version in ("rocketmq-4.9.7", "rocketmq-5.1.4", "rocketmq-5.3.3"):
        path = store_path(version) / "config" / "consumerOffset.json"
        assert list(iter_consumer_offsets(path)) == read_config_file(path).model.entries()
        assert read_committed_offsets(path) == read_config_file(path).model.offsets


def test_streamed_offsets_check_values(tmp_path):
    path = tmp_path / "consumerOffset.json"
    path.write_text('{"offsetTable":{"a@b":{0:1.5}}}', encoding="utf-8")
    with pytest.raises(ConfigSchemaError, match=r"consumerOffset.json @ 0x16 \(\$.offsetTable\['a@b'\]\[0\]\)"):
        list(iter_consumer_offsets(path))
    path.write_text('{"offsetTable":{"a@b":{0:99999999999999999999}}}', encoding="utf-8")
    with pytest.raises(ConfigSchemaError, match="out of range for int64"):
        list(iter_consumer_offsets(path))
    # a damaged file with a good .bak: the broker's loadBak
    path.write_text('{"offsetTable":{"a@b":{0:1', encoding="utf-8")
    (tmp_path / "consumerOffset.json.bak").write_text('{"offsetTable":{"a@b":{0:7}}}', encoding="utf-8")
    assert read_committed_offsets(path) == {("a", "b", 0): 7}


def test_config_jsonl_streams_a_large_offsets_file(tmp_path, capsys, monkeypatch):
    s = _copy(tmp_path, "rocketmq-4.9.7")
    entries = ",".join(f'"T{k}@G{k % 7}":{{0:{k},1:{k + 1}}}' for k in range(9000))
    (s / "config" / "consumerOffset.json").write_text('{"offsetTable":{' + entries + "}}", encoding="utf-8")
    status, whole, _ = run(capsys, "config", s, "--format", "json")
    monkeypatch.setattr("rmqformats.config.stream.STREAM_BYTES", 1000)
    status2, streamed, _ = run(capsys, "config", s, "--format", "json")
    assert status == status2 == 0
    a, b = json.loads(whole), json.loads(streamed)
    assert a["consumerOffsets"] == b["consumerOffsets"] and len(a["consumerOffsets"]) == 18000
    assert {k: v for k, v in a.items() if k != "files"} == {k: v for k, v in b.items() if k != "files"}


# -- smaller ----------------------------------------------------------------------------------

def test_read_in_several_preads(tmp_path, monkeypatch):
    # One pread returns at most 0x7ffff000 bytes: read() of a record near 2 GiB needs more than one.
    import rmqformats.mapped as mapped
    real = mapped.pread
    monkeypatch.setattr(mapped, "pread", lambda fd, n, offset: real(fd, min(n, 100), offset))
    log = rmqformats.open_store(store_path("rocketmq-5.3.3")).commitlog
    first = next(iter(log.scan()))
    assert first.store_size > 100
    assert log.read(first.commitlog_offset) == first


def _loop_index(s) -> None:
    """The oldest index file's written entries (key-0's among them) linked in a ring: n -> n - 1, 1 -> the last."""
    from rmqformats.index import IndexFile
    for path in sorted(glob.glob(str(s / "index" / "*")))[:1]:
        with IndexFile(path) as f:
            n, at = f.written_entries(), f._entries_at
        for k in range(1, n + 1):
            _patch(path, at + k * 20 + 16, struct.pack(">i", k - 1 if k > 1 else n))


def test_lookup_on_a_looping_chain(tmp_path, capsys):
    s = _copy(tmp_path, "rocketmq-4.9.7")
    _loop_index(s)
    status, out, err = run(capsys, "lookup", s, "--topic", "TopicTest", "--key", "key-0", "--raw",
                           "--max", "100000000")
    assert status == 2 and "loops back to entry" in err and "until 100000000" in err
    # As many as the broker returns for its default maxNum: the loop's hits, repeated.
    status, out, err = run(capsys, "lookup", s, "--topic", "TopicTest", "--key", "key-0", "--raw",
                           "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and len(rows) == 64 and len({r["entry"] for r in rows}) < 64
    files = rmqformats.open_store(s).index()
    with pytest.raises(IndexChainLoopError):
        files.query_offsets("TopicTest", "key-0", max_num=100_000_000)
    assert 0 < len(files.query_offsets("TopicTest", "key-0", max_num=100_000_000, strict=False)) < 1000


def test_tag_filter_on_the_schedule_topic(tmp_path, capsys):
    s = store_path("rocketmq-5.3.3")
    status, out, _ = run(capsys, "queue", s, "SCHEDULE_TOPIC_XXXX", "0", "--tag", "X")
    assert status == 0 and out.splitlines()[1].split() == ["cqOffset", "commitLogOffset", "size", "tagsCode"]
    assert len(out.splitlines()) == 2
    status, out, _ = run(capsys, "queue", s, "SCHEDULE_TOPIC_XXXX", "0", "--tag", "Delay", "--format", "jsonl")
    assert status == 0 and len(out.splitlines()) == 1




def test_config_written_back_with_an_integer_top_level_key(tmp_path):
    # An unknown top-level member with an unquoted integer name is kept, and written among the bean's
    # names by its text, as fastjson orders a bean's names; the rest is written as it was.
    original = (store_path("rocketmq-5.3.3") / "config" / "consumerOffset.json").read_text(encoding="utf-8")
    path = tmp_path / "consumerOffset.json"
    path.write_text(original.replace("{\n", "{7:1,\n", 1), encoding="utf-8")
    f = read_config_file(path)
    assert f.model.extra == {7: 1}
    assert f.to_bytes().decode("utf-8") == original.replace("{\n", '{\n\t"7":1,\n', 1)
    path.write_bytes(f.to_bytes())
    again = read_config_file(path)
    assert again.model.offsets == f.model.offsets and again.to_bytes() == f.to_bytes()
