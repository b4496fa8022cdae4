"""``rmqformats dump``: every file of every vector store gets its kind and the values of the store-level commands."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path

import pytest

from rmqformats import filekind, open_store
from rmqformats.cli import dump, main, segment_dump, status
from rmqformats.commitlog import CommitLog
from rmqformats.errors import DecompressionError

from conftest import FIXTURES, store_path

VERSIONS = ("rocketmq-4.9.7", "rocketmq-5.1.4", "rocketmq-5.3.3")


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def expected_kind(root: Path, path: Path) -> str:
    """The kind of a store file from where the broker puts it (written out here, apart from the detection)."""
    rel = path.relative_to(root).parts
    by_folder = {"commitlog": "commitlog", "consumequeue": "consumequeue", "batchconsumequeue": "batchconsumequeue",
                 "index": "index", "timerlog": "timerlog"}
    if rel[0] in by_folder:
        return by_folder[rel[0]]
    if rel == ("config", "timercheck"):
        return "timercheck"
    if rel[0] in ("config", "compaction"):
        return "config"
    return {"checkpoint": "checkpoint", "timerwheel": "timerwheel", "lock": "marker", "abort.bak": "marker"}[rel[0]]


def store_files(version: str) -> list[Path]:
    root = store_path(version)
    return sorted(p for p in root.rglob("*") if p.is_file())


def dump_records(capsys, path: Path, *options: str) -> list[dict]:
    code, out, err = run(capsys, "dump", str(path), "--format", "jsonl", *options)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    for r in rows:
        assert r.pop("file") == str(path.resolve())
    return rows


def jsonl(capsys, *argv) -> list[dict]:
    code, out, err = run(capsys, *argv, "--format", "jsonl")
    assert code in (0, 1), err
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_file_gets_its_kind(version):
    root = store_path(version)
    files = store_files(version)
    assert len(files) > 30
    for path in files:
        assert filekind.detect(path).name == expected_kind(root, path), path


@pytest.mark.parametrize("version", VERSIONS)
def test_every_file_dumps_the_values_of_the_store_level_commands(capsys, version):
    root = store_path(version)
    store = open_store(root)
    messages = jsonl(capsys, "messages", str(root))
    inspect = json.loads(run(capsys, "inspect", str(root), "--format", "json")[1])
    seen: dict[str, int] = {}
    for path in store_files(version):
        kind = expected_kind(root, path)
        rows = dump_records(capsys, path, "--deep")
        assert all(r.pop("kind") == kind for r in rows)
        seen[kind] = seen.get(kind, 0) + 1
        name = path.name
        if kind == "commitlog":
            start, end = int(name), int(name) + path.stat().st_size
            got = [r for r in rows if r["record"] == "MESSAGE"]
            want = [m for m in messages if start <= m["commitLogOffset"] < end]
            assert [{k: v for k, v in r.items() if k not in ("fileOffset", "record")} for r in got] == want
            assert all(r["fileOffset"] == r["commitLogOffset"] - start for r in rows)
            segment = next(s for s in inspect["segments"] if s["name"] == name)
            assert [r["commitLogOffset"] for r in rows if r["record"] == "BLANK"] == (
                [] if segment["blankOffset"] is None else [segment["blankOffset"]])
        elif kind == "consumequeue":
            topic, qid = path.parent.parent.name, path.parent.name
            start = int(name) // 20
            units = [u for u in jsonl(capsys, "queue", str(root), topic, qid)
                     if start <= u["cqOffset"] < start + path.stat().st_size // 20]
            assert [{k: r[k] for k in ("cqOffset", "commitLogOffset", "size", "tagsCode")} for r in rows] == units
            assert all(r["fileOffset"] == (r["cqOffset"] - start) * 20 for r in rows)
        elif kind == "batchconsumequeue":
            topic, qid = path.parent.parent.name, path.parent.name
            per_message = jsonl(capsys, "queue", str(root), topic, qid)
            keys = ("commitLogOffset", "size", "tagsCode", "storeTime", "msgBaseOffset", "batchSize")
            units = [{k: m[k] for k in keys} for m in per_message if m["cqOffset"] == m["msgBaseOffset"]]
            assert [{k: r[k] for k in keys} for r in rows] == units
            assert sum(r["batchSize"] for r in rows) == len(per_message)
        elif kind == "index":
            truth = next(f for f in json.loads((FIXTURES / version / "truth" / "index.json").read_text())["files"]
                         if f["file"] == name)
            header, entries = rows[0], rows[1:]
            assert header["record"] == "HEADER" and header["fileOffset"] == 0
            assert (header["beginTimestamp"], header["endTimestamp"], header["beginPhyOffset"],
                    header["endPhyOffset"], header["hashSlotCount"], header["indexCount"]) == (
                truth["beginTimestamp"], truth["endTimestamp"], truth["header_beginPhyOffset"], truth["endPhyOffset"],
                truth["header_hashSlotCount"], truth["header_indexCount"])
            assert [e["entry"] for e in entries] == list(range(1, truth["header_indexCount"]))
            offsets = {m["commitLogOffset"] for m in messages}
            assert {e["phyOffset"] for e in entries} <= offsets
        elif kind == "checkpoint":
            assert {r["field"]: r["value"] for r in rows} == inspect["checkpoint"]
        elif kind == "timerlog":
            units = [u for u in store.timer().units() if u.segment_name == name]
            assert [(r["offset"], r["prevPos"], r["magic"], r["commitLogOffset"], r["delayMs"]) for r in rows
                    if r["unitKind"] != "BLANK"] == [
                (u.offset, u.prev_pos, u.magic, u.commitlog_offset, u.delay_ms) for u in units]
            # Every entry as the broker's reader sees it, the blank marker that ends a segment included.
            truth = [t for t in json.loads((FIXTURES / version / "truth" / "timer.json").read_text())["timerLogUnits"]
                     if t["file"] == name]
            assert [(r["offset"], r["prevPos"], r["magic"], "BLANK" if r["unitKind"] == "BLANK" else "UNIT")
                    for r in rows] == [(t["timerLogOffset"], t["prevPos"], t["magic"], t["kind"]) for t in truth]
            assert all(r["size"] == t["size"] for r, t in zip(rows, truth) if t["kind"] == "BLANK")
        elif kind == "timerwheel":
            wheel = store.timer().wheel
            assert wheel is not None
            assert [r["slot"] for r in rows] == wheel.used_indexes().tolist()
            assert all(r["timeMs"] == wheel.raw_slot(r["slot"]).time_ms for r in rows)
        elif kind == "timercheck":
            cp = store.timer().checkpoint()
            assert {r["field"]: r["value"] for r in rows} == {
                "lastReadTimeMs": cp.last_read_time_ms, "lastTimerLogFlushPos": cp.last_timer_log_flush_pos,
                "lastTimerQueueOffset": cp.last_timer_queue_offset,
                "masterTimerQueueOffset": cp.master_timer_queue_offset,
                "dataVersion.stateVersion": cp.data_version_state_version,
                "dataVersion.timestamp": cp.data_version_timestamp,
                "dataVersion.counter": cp.data_version_counter}
        elif kind == "config":
            if name.endswith(".bak"):
                want = json.loads(path.read_text(encoding="utf-8"))
            else:
                code, out, _ = run(capsys, "config", str(root), "--file", name, "--format", "jsonl")
                assert code == 0
                want = json.loads(out)["model"]
            assert [r["model"] for r in rows] == [want]
        else:
            assert [r["content"] for r in rows] == [path.read_text()]
    assert {"commitlog", "consumequeue", "index", "checkpoint", "config", "marker"} <= set(seen)


def test_summary_counts_and_ranges(capsys):
    path = store_path("rocketmq-5.1.4") / "commitlog" / "00000000000000000000"
    (s,) = dump_records(capsys, path, "--summary")
    rows = dump_records(capsys, path)
    assert s["kind"] == "commitlog" and s["records"] == len(rows)
    assert s["recordKinds"] == {"BLANK": 1, "MESSAGE": len(rows) - 1}
    offsets = [r["commitLogOffset"] for r in rows]
    assert s["ranges"]["commitLogOffset"] == [min(offsets), max(offsets)]
    code, out, _ = run(capsys, "dump", str(path), "--summary")
    assert code == 0 and f"{len(rows):,} records, {path.stat().st_size:,} bytes" in out


def _records_text(path: Path, deep: bool, body: str | None, limit: int | None = None) -> tuple[list[dict], str]:
    """The records of a commit-log segment from the record-by-record view, and their JSON Lines as json.dumps
    writes them: what the output written from the walk's columns is held to."""
    whole = str(path.resolve())
    records = list(segment_dump.records(whole, deep=deep, body=body, body_limit=limit))
    text = "".join(json.dumps({"file": whole, "kind": "commitlog", **r}, ensure_ascii=False) + "\n" for r in records)
    return records, text


def _document(path: Path, records: list[dict]) -> str:
    head = json.dumps({"file": str(path.resolve()), "kind": "commitlog"}, ensure_ascii=False)[:-1]
    inner = ",".join("\n  " + json.dumps(r, ensure_ascii=False) for r in records)
    return "[\n" + head + ', "records": [' + inner + "\n]}\n]\n"


@pytest.mark.parametrize("version", VERSIONS)
def test_commitlog_json_from_the_walk_is_the_records_text(capsys, version):
    views = ((None, None), ("none", None), ("base64", None), ("text", None), ("hex", 3), (None, 0), ("text", 8))
    for path in sorted((store_path(version) / "commitlog").iterdir()):
        for deep, (body, limit) in ((deep, view) for deep in (False, True) for view in views):
            options = (["--deep"] if deep else []) + (["--body", body] if body else []) + (
                ["--body-limit", str(limit)] if limit is not None else [])
            records, want = _records_text(path, deep, body, limit)
            code, out, err = run(capsys, "dump", str(path), "--format", "jsonl", *options)
            assert (code, out, err) == (0, want, "")
            code, out, err = run(capsys, "dump", str(path), "--format", "json", *options)
            assert (code, out, err) == (0, _document(path, records), "")


@pytest.mark.parametrize("version", VERSIONS)
def test_commitlog_table_from_the_walk_is_the_records_table(capsys, monkeypatch, version):
    for width, body, limit, deep in (("", None, None, False), ("100", None, None, False), ("", "text", None, False),
                                     ("90", "hex", 5, False), ("", "base64", 2, False), ("", None, None, True),
                                     ("120", "text", 6, True)):
        monkeypatch.setenv("COLUMNS", width)  # plain, or fitted (text cut, columns left out)
        options = (["--body", body] if body else []) + (["--body-limit", str(limit)] if limit is not None else []) + (
            ["--deep"] if deep else [])
        for path in sorted((store_path(version) / "commitlog").iterdir()):
            want = io.StringIO()
            want.write(f"{path}\n  commit-log segment (commitlog)\n")
            dump._write_table(segment_dump.records(str(path.resolve()), deep=deep, body=body, body_limit=limit,
                                                   table=True), want)
            capsys.readouterr()
            code, out, _ = run(capsys, "dump", str(path), *options)
            assert (code, out) == (0, want.getvalue()), options


def test_commitlog_json_of_long_bodies_written_in_pieces(capsys, monkeypatch, tmp_path):
    """Bodies longer than the text written at a time go out in pieces (JSON Lines) and still make whole
    records of the JSON document, and a batch whose bodies decompress past the bound is made a few rows at a
    time: the same text as the records', and the same table."""
    import zlib

    from rmqformats import export, synth
    bodies = [b"short", bytes(range(256)) * 40, b"", b"x" * 70_000, b"tail"]
    specs = [synth.MessageSpec(topic="TopicLong", body=zlib.compress(b) if i % 2 else b,
                               sys_flag=1 if i % 2 else 0, queue_offset=i, properties={"KEYS": f"k{i}"})
             for i, b in enumerate(bodies)]
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 20)
    path = tmp_path / "commitlog" / ("0" * 20)
    monkeypatch.setattr(export, "TEXT_BYTES", 1000)
    monkeypatch.setattr(export, "_B64_PIECE", 300)
    monkeypatch.setattr(segment_dump, "PIECE_BYTES", 5000)  # bodies decompressed a few rows at a time
    for deep in (False, True):
        records, want = _records_text(path, deep, None)
        assert [base64.b64decode(r["body"]) for r in records if r["record"] == "MESSAGE"] == bodies
        code, out, err = run(capsys, "dump", str(path), "--format", "jsonl", *(["--deep"] if deep else []))
        assert (code, out, err) == (0, want, "")
        code, out, err = run(capsys, "dump", str(path), "--format", "json", *(["--deep"] if deep else []))
        assert (code, out, err) == (0, _document(path, records), "")
    table = io.StringIO()
    table.write(f"{path}\n  commit-log segment (commitlog)\n")
    dump._write_table(segment_dump.records(str(path), table=True), table)
    assert run(capsys, "dump", str(path), "--wide")[:2] == (0, table.getvalue())


def test_commitlog_deep_table_breaks_blocks_where_the_fields_change(capsys, monkeypatch, tmp_path):
    """``--deep`` records have ``priority`` and ``liteTopic`` only where a message does: the table starts a new
    block (and header) there, and every 1,000 rows of a run, across the walk's batches, as the records' table."""
    from rmqformats import synth
    from rmqformats.synth.commitlog import lite_message, priority_message
    specs = []
    for i in range(3000):
        fields = dict(body=b"b%d" % i, queue_offset=i, properties={"KEYS": f"k{i}"})
        if 1200 <= i < 1300 or i % 97 == 5:
            specs.append(priority_message("TopicP", i % 9, **fields))
        elif i % 89 == 3 or 2500 <= i < 2510:
            specs.append(lite_message("TopicL", f"lite{i % 4}", lmq_offset=i, **fields))
        else:
            specs.append(synth.MessageSpec(topic="TopicA", **fields))
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 20)
    path = tmp_path / "commitlog" / ("0" * 20)
    monkeypatch.setattr(segment_dump, "BATCH_ROWS", 300)  # runs and blocks across batches
    for options in ([], ["--body", "text"]):
        want = io.StringIO()
        want.write(f"{path}\n  commit-log segment (commitlog)\n")
        n = dump._write_table(segment_dump.records(str(path), deep=True, body=options[1] if options else None,
                                                   table=True), want)
        assert n == 3000 and want.getvalue().count("liteTopic") > 5 and want.getvalue().count("priority") > 5
        assert run(capsys, "dump", str(path), "--deep", "--wide", *options)[:2] == (0, want.getvalue())


def _corrupt_compressed_body(tmp_path: Path) -> tuple[Path, int]:
    """A copy of a 5.3.3 segment whose second compressed body is damaged, and that record's file offset."""
    source = store_path("rocketmq-5.3.3") / "commitlog" / "00000000000000000000"
    data = bytearray(source.read_bytes())
    batch = next(iter(CommitLog(str(source)).batches(["commitLogOffset", "storeSize", "sysFlag", "body"],
                                                     decompress=False)))
    row = [i for i, flag in enumerate(batch.column("sysFlag").to_pylist()) if flag & 1][1]
    offset, size = batch.column("commitLogOffset")[row].as_py(), batch.column("storeSize")[row].as_py()
    stored = batch.column("body")[row].as_py()
    at = data.find(stored, offset, offset + size)
    for k in range(at + 4, at + len(stored) - 2):
        data[k] ^= 0x5A
    copy = tmp_path / "00000000000000000000"
    copy.write_bytes(bytes(data))
    return copy, offset


def test_commitlog_body_that_does_not_decompress_ends_the_output_there(capsys, tmp_path):
    path, offset = _corrupt_compressed_body(tmp_path)
    for deep in (False, True):
        whole = str(path.resolve())
        before = []
        with pytest.raises(DecompressionError) as raised:
            for r in segment_dump.records(whole, deep=deep):
                before.append(r)
        assert raised.value.offset == offset and before[-1]["commitLogOffset"] < offset
        code, out, err = run(capsys, "dump", str(path), "--format", "jsonl", *(["--deep"] if deep else []))
        assert code == 2 and [json.loads(line) for line in out.splitlines()] == [
            {"file": whole, "kind": "commitlog", **r} for r in before]
        assert err == f"rmqformats: error: {whole} @ {offset:#x}: {raised.value.reason}\n"
        code, out, err = run(capsys, "dump", str(path), "--format", "json", *(["--deep"] if deep else []))
        assert code == 2 and json.loads(out)[0]["records"] == before
    # The table: the whole blocks of 1,000 records before it (none here), then the error.
    code, out, err = run(capsys, "dump", str(path))
    assert code == 2 and out == f"{path}\n  commit-log segment (commitlog)\n" and f"@ {offset:#x}: " in err
    # The summary reads no body: every record is counted.
    (s,) = dump_records(capsys, path, "--summary")
    assert s["records"] == 282 and s["recordKinds"] == {"BLANK": 1, "MESSAGE": 281}


@pytest.mark.parametrize("version", VERSIONS)
def test_commitlog_summary_is_that_of_the_records(capsys, version):
    for path in sorted((store_path(version) / "commitlog").iterdir()):
        records = list(segment_dump.records(str(path.resolve())))
        (s,) = dump_records(capsys, path, "--summary")
        kinds: dict[str, int] = {}
        for r in records:
            kinds[r["record"]] = kinds.get(r["record"], 0) + 1
        assert s["records"] == len(records) and s.get("recordKinds", {}) == dict(sorted(kinds.items()))
        for name in ("commitLogOffset", "queueOffset", "storeTimestamp"):
            values = [r[name] for r in records if name in r]
            assert s["ranges"].get(name) == ([min(values), max(values)] if values else None)


def test_commitlog_cut_short_ends_early_in_every_view(capsys, tmp_path):
    source = store_path("rocketmq-4.9.7") / "commitlog" / "00000000000000000000"
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes()[:5000])
    records, want = _records_text(path, False, None)
    code, out, err = run(capsys, "dump", str(path), "--format", "jsonl")
    assert code == status.DAMAGED and out == want and "rmqformats: data ends early: " in err and str(path) in err
    code, out, err = run(capsys, "dump", str(path), "--format", "jsonl", "--summary")
    assert code == status.DAMAGED and "rmqformats: data ends early: " in err
    assert json.loads(out)["records"] == len(records) > 0


def test_commitlog_jobs_give_the_same_bytes(capsys, monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")  # many ranges, walked by worker processes
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    for version in VERSIONS:
        for path in sorted((store_path(version) / "commitlog").iterdir()):
            for options in (["--format", "jsonl"], ["--format", "jsonl", "--deep"], ["--summary"], []):
                serial = run(capsys, "dump", str(path), "--jobs", "1", *options)
                assert run(capsys, "dump", str(path), "--jobs", "2", *options) == serial


def test_bodies_as_text_hex_and_base64_with_a_limit(capsys):
    path = store_path("rocketmq-5.1.4") / "commitlog" / "00000000000000000000"
    first = dump_records(capsys, path, "--body", "text")[0]
    assert first["body"].startswith("Hello RocketMQ") and first["bodyView"] == "text"
    hexed = dump_records(capsys, path, "--body", "hex", "--body-limit", "4")[0]
    assert hexed["body"] == b"Hell".hex() and hexed["bodyTruncated"] and hexed["bodyBytes"] == len(first["body"])
    assert "body" not in dump_records(capsys, path, "--body", "none")[0]
    code, out, _ = run(capsys, "dump", str(path), "--body", "text", "--body-limit", "5", "--wide")
    assert code == 0 and "Hello…" in out.splitlines()[3]


def test_json_document_and_several_files(capsys):
    root = store_path("rocketmq-5.3.3")
    files = [root / "checkpoint", root / "config" / "timercheck"]
    code, out, _ = run(capsys, "dump", *map(str, files), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and [d["kind"] for d in doc] == ["checkpoint", "timercheck"]
    assert [len(d["records"]) for d in doc] == [5, 7]


def test_unknown_and_missing_files_are_errors_with_whole_paths(capsys, tmp_path):
    odd = tmp_path / "notes.txt"
    odd.write_text("hello")
    code, out, err = run(capsys, "dump", str(odd), str(store_path("rocketmq-5.1.4") / "checkpoint"))
    assert code == 2 and f"rmqformats: error: {odd}: not a store file" in err
    assert "physicMsgTimestamp" in out  # the other file is still dumped
    code, _, err = run(capsys, "dump", "no/such/file")
    assert code == 2 and f"{os.path.abspath('no/such/file')}: no such file" in err


def test_kind_is_found_from_content_outside_a_store(capsys, tmp_path):
    segment = tmp_path / "00000000000000000000"
    segment.write_bytes((store_path("rocketmq-4.9.7") / "commitlog" / "00000000000000000000").read_bytes())
    assert filekind.detect(segment).name == "commitlog"
    renamed = tmp_path / "segment.bin"  # e.g. a piece written by rmqformats cut
    renamed.write_bytes(segment.read_bytes())
    assert filekind.detect(renamed).name == "commitlog"
    assert dump_records(capsys, renamed) == dump_records(capsys, segment)
    other = tmp_path / "notes.bin"
    other.write_bytes(b"\x00" * 64)
    with pytest.raises(filekind.UnknownFileKindError):
        filekind.detect(other)
    assert dump_records(capsys, renamed, "--kind", "commitlog") == dump_records(capsys, segment)
    code, _, err = run(capsys, "dump", str(other), "--kind", "nonsense")
    assert code == 2 and "unknown --kind 'nonsense'" in err
    cfg = tmp_path / "topics-copy"
    cfg.write_text('{"topicConfigTable": {}}')
    assert filekind.detect(cfg).name == "config"


def test_new_kinds_register():
    from rmqformats.cli import dump

    kind = filekind.FileKind("demo", "demo file", lambda f: 20 if f.name == "demo.bin" else 0)
    filekind.register(kind)
    try:
        dump.register("demo", lambda path, o: iter([{"fileOffset": 0}]))
        assert filekind.KINDS[-1] is kind and "demo" in dump.DUMPERS
    finally:
        filekind.KINDS.remove(kind)
        dump.DUMPERS.pop("demo", None)


@pytest.mark.parametrize("version", VERSIONS)
def test_index_summary_agrees_with_its_records(capsys, version):
    """The index summary reads whole arrays; it says what the records say."""
    for path in sorted((store_path(version) / "index").iterdir()):
        (s,) = dump_records(capsys, path, "--summary")
        entries = [r for r in dump_records(capsys, path) if r["record"] == "ENTRY"]
        assert s["records"] == len(entries) + 1 and s["recordKinds"] == {"ENTRY": len(entries), "HEADER": 1}
        assert s["ranges"] == {"entry": [1, len(entries)],
                               "phyOffset": [min(e["phyOffset"] for e in entries),
                                             max(e["phyOffset"] for e in entries)]}


def test_consume_queue_ext_files(capsys, tmp_path):
    """No vector store has an extension (enableConsumeQueueExt is off by default): files built by synth."""
    from rmqformats.consumequeue_ext import ConsumeQueueExt
    from rmqformats.synth.queues import ExtUnitSpec, write_consumequeue_ext

    folder = tmp_path / "consumequeue_ext" / "TopicExt" / "0"
    specs = [ExtUnitSpec(1984402762, 1795254822882, b""), ExtUnitSpec(-5, 1795254822883, bytes(range(8))),
             ExtUnitSpec(7, 1795254822885, b"\xff" * 40)]
    addresses = write_consumequeue_ext(folder, specs, file_size=128)
    units = list(ConsumeQueueExt(folder))
    rows = []
    for path in sorted(folder.iterdir()):
        assert filekind.detect(path).name == "consumequeue_ext"
        got = dump_records(capsys, path, "--deep")
        assert all(r.pop("kind") == "consumequeue_ext" for r in got)
        assert all(r["fileOffset"] == r["extOffset"] - int(path.name) for r in got)
        rows += got
    assert [(r["tagsCode"], r["msgStoreTime"], bytes.fromhex(r["filterBitmap"]), r["address"]) for r in rows] == [
        (u.tags_code, u.msg_store_time, u.filter_bitmap, a) for u, a in zip(units, addresses)]
