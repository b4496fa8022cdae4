"""Consume-queue units resolved to their messages as columns (``rmqformats.columnar.resolve``, ``queue
--resolve``): held to RocketMQ's truth on the vector stores, to the unit-at-a-time reader on damaged copies,
and the record reads at offsets (``rmqformats.walk.gather``) to the walk's own rows."""

from __future__ import annotations

import base64
import io
import json
import os
import random
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

import rmqformats
from rmqformats.cli import main
from rmqformats.columnar import resolve as R
from rmqformats.commitlog import CommitLog
from rmqformats.export import JSONL_COLUMNS
from rmqformats.walk import gather as G
from rmqformats.walk.arrow import COLUMNS

from conftest import VERSIONS, store_path, truth_records

#: The ``queue --resolve`` views compared between the columns and the reader.
VIEWS = ([], ["--format", "jsonl"], ["--body", "text"], ["--body", "hex", "--body-limit", "5"],
         ["--format", "jsonl", "--body", "text"], ["--format", "jsonl", "--body", "hex", "--body-limit", "5"],
         ["--format", "jsonl", "--body-limit", "3"], ["--format", "jsonl", "--body", "none"],
         ["--format", "jsonl", "--from", "2", "--to", "9"], ["--limit", "3"], ["--format", "jsonl", "--limit", "1"],
         ["--format", "jsonl", "--tag", "TagA"], ["--tag", "TagB"])


def _run(argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _queues(root: str) -> list[tuple[str, int]]:
    code, out, _ = _run(["queue", root, "--format", "jsonl"])
    assert code == 0
    return [(q["topic"], q["queueId"]) for q in map(json.loads, out.splitlines()) if q["type"] == "ConsumeQueue"]


def _same_as_the_reader(root: str, monkeypatch, views=VIEWS) -> int:
    """``queue --resolve`` of every queue of ``root`` in every view, from the columns and a unit at a time
    through the reader (``ConsumeQueue.messages``): the same output and status; returns how many units."""
    units = 0
    for topic, qid in _queues(root):
        for view in views:
            argv = ["queue", root, topic, str(qid), "--resolve", *view]
            columns = _run(argv)
            with monkeypatch.context() as m:
                m.setattr(R, "can_resolve", lambda cq: False)
                reader = _run(argv)
            assert columns == reader, argv
            if view == ["--format", "jsonl"]:
                units += len(columns[1].splitlines())
    return units


def test_resolved_units_equal_the_truth(version):
    """Every unit of every consume queue resolves to the record RocketMQ's decoder read at its offset."""
    truth = {r["commitlogOffset"]: r for r in truth_records(version) if r["kind"] == "MESSAGE"}
    store = rmqformats.open_store(str(store_path(version)))
    seen = 0
    for q in store.queues():
        cq = store.consume_queue(q.topic, q.queue_id)
        assert R.can_resolve(cq)
        for batch in R.resolved_batches(cq, columns=COLUMNS):
            units, messages = batch.units.to_pylist(), iter(batch.messages.to_pylist())
            for unit, ok in zip(units, batch.ok.tolist()):
                assert (unit["status"] == "OK") == ok
                if not ok:
                    assert unit["commitLogOffset"] not in truth and unit["detail"]
                    continue
                m, t = next(messages), truth[unit["commitLogOffset"]]
                seen += 1
                assert (m["commitLogOffset"], m["storeSize"], m["topic"], m["queueId"], m["queueOffset"]) == (
                    t["commitlogOffset"], t["storeSize"], t["topic"], t["queueId"], t["queueOffset"])
                assert (m["msgId"], m["bodyCRC"], m["sysFlag"], m["propertiesString"], m["tags"]) == (
                    t["msgId"], t["bodyCRC"], t["sysFlag"], t["propertiesString"], t["tags"])
                assert int(m["storeTimestamp"].timestamp() * 1000) == t["storeTimestamp"]
                assert dict(m["properties"]) == t["properties"]
                if not t["sysFlag"] & 1:  # (a compressed body is decompressed in the columns)
                    assert m["body"] == base64.b64decode(t["bodyRawBase64"])
                assert unit["size"] == t["storeSize"] and unit["cqOffset"] == t["queueOffset"]
    assert seen > 250


def test_queue_resolve_equals_the_reader_on_the_vectors(version, monkeypatch):
    assert _same_as_the_reader(str(store_path(version)), monkeypatch) > 250


def _damaged(tmp_path: Path, version: str, how: str) -> str:
    root = tmp_path / how
    shutil.copytree(store_path(version), root)
    folder = root / "commitlog"
    names = sorted(os.listdir(folder))
    rng = random.Random(f"{version}/{how}")
    if how == "cut":  # a segment cut inside its records, and the last one to a few bytes
        os.truncate(folder / names[len(names) // 2], 100_001)
        os.truncate(folder / names[-1], 5)
    elif how == "gap":  # a segment gone from the middle, and the first one (deleted)
        for name in {names[0], names[len(names) // 2]}:
            os.remove(folder / name)
    elif how == "noise":  # bytes flipped and a zeroed run in every segment
        for name in names:
            data = bytearray((folder / name).read_bytes())
            for _ in range(150):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            at = rng.randrange(len(data) - 3000)
            data[at:at + 3000] = bytes(3000)
            (folder / name).write_bytes(bytes(data))
    elif how == "bodies":  # every compressed body damaged: shown as stored, with the reason
        for name in names:
            path = str(folder / name)
            data = bytearray((folder / name).read_bytes())
            for batch in CommitLog(path).batches(["commitLogOffset", "sysFlag", "body"], decompress=False):
                starts = batch.column("commitLogOffset").to_pylist()
                for start, flag, body in zip(starts, batch.column("sysFlag").to_pylist(),
                                             batch.column("body").to_pylist()):
                    at = data.find(body, start - int(name), start - int(name) + (1 << 20))
                    if flag & 1 and len(body) > 8 and at >= 0:
                        for k in range(at + 4, at + len(body) - 2):
                            data[k] ^= 0x5A
            (folder / name).write_bytes(bytes(data))
    return str(root)


@pytest.mark.parametrize("how", ["cut", "gap", "noise", "bodies"])
def test_queue_resolve_equals_the_reader_on_damaged_copies(how, tmp_path, monkeypatch):
    views = ([], ["--format", "jsonl"], ["--body", "text"], ["--format", "jsonl", "--body", "hex", "--body-limit", "5"],
             ["--format", "jsonl", "--tag", "TagA"])
    statuses: set[str] = set()
    for version in VERSIONS:
        root = _damaged(tmp_path / version, version, how)
        assert _same_as_the_reader(root, monkeypatch, views) > 200
        for topic, qid in _queues(root):
            out = _run(["queue", root, topic, str(qid), "--resolve", "--format", "jsonl"])[1]
            statuses.update(json.loads(line)["status"] for line in out.splitlines())
    assert "OK" in statuses and len(statuses) >= (1 if how == "bodies" else 2)


def test_a_body_that_does_not_decompress_is_shown_as_stored(tmp_path):
    """A resolved message whose compressed body is damaged keeps its stored bytes, with the reason
    (``bodyError``), in JSON and in the table, as ``messages`` shows it; the queue goes on past it."""
    root = _damaged(tmp_path, "rocketmq-5.3.3", "bodies")
    code, out, _ = _run(["queue", root, "TopicMisc", "0", "--resolve", "--format", "jsonl"])
    rows = [json.loads(line) for line in out.splitlines()]
    broken = [r for r in rows if "bodyError" in (r["message"] or {})]
    assert code == 0 and broken and rows[-1]["cqOffset"] > broken[0]["cqOffset"]
    assert all(r["status"] == "OK" and "body is corrupt" in r["message"]["bodyError"] for r in broken)
    code, out, _ = _run(["queue", root, "TopicMisc", "0", "--resolve", "--body", "text"])
    assert code == 0 and out.count("[not decompressed: ") == len(broken)


def _walk_rows(path: str) -> dict:
    """Every message of a file commit log, by offset, as the walk gives its columns."""
    table = CommitLog(path).batches(list(COLUMNS)).read_all()
    return {row["commitLogOffset"]: row for row in table.to_pylist()}


@pytest.mark.parametrize("gap,window", [(G.GAP, G.WINDOW), (0, 1), (300, 2000)])
def test_records_at_offsets_equal_the_walk(gap, window, version, monkeypatch):
    """The records read at offsets (in a shuffled order, some given too short, some sizes nonsense) are the
    walk's rows; offsets where no record starts are marked, whatever the windows' sizes."""
    monkeypatch.setattr(G, "GAP", gap)
    monkeypatch.setattr(G, "WINDOW", window)
    log = CommitLog(str(store_path(version) / "commitlog"))
    rows = _walk_rows(str(store_path(version) / "commitlog"))
    rng = random.Random(gap * 7 + window)
    starts = sorted(rows)
    offsets = starts + [s + 1 for s in starts[:20]] + [starts[-1] + 3]
    rng.shuffle(offsets)
    sizes = [rows[o]["storeSize"] if o in rows else 100 for o in offsets]
    for k in rng.sample(range(len(offsets)), 40):
        sizes[k] = rng.choice([0, -5, 10, 1 << 30, sizes[k] // 2])
    with G.RecordGather(log.segments) as gather:
        offsets_arr = np.array(offsets, np.int64)
        inside = gather.covered(offsets_arr)
        assert inside.all()
        got = []
        for part in gather.chunks(np.array(sizes, np.int64)):
            asked = offsets[part]
            for within, batch, ok in gather.read(offsets_arr[part], np.array(sizes[part], np.int64), COLUMNS):
                assert ok.tolist() == [o in rows for o in asked[within]]
                got += batch.to_pylist()
    assert got == [rows[o] for o in offsets if o in rows]


def test_records_read_by_themselves_are_read_a_part_at_a_time(version, monkeypatch):
    """Records whose size no unit gives are read by themselves; past CHUNK_BYTES of them the offsets are
    read in parts (the memory held stays bounded whatever the sizes), with the same rows and messages."""
    monkeypatch.setattr(G, "CHUNK_BYTES", 3000)
    log = CommitLog(str(store_path(version) / "commitlog"))
    rows = _walk_rows(str(store_path(version) / "commitlog"))
    offsets = np.array(sorted(rows), np.int64)
    with G.RecordGather(log.segments) as gather:
        parts = list(gather.read(offsets, np.zeros(len(offsets), np.int64), COLUMNS))
        assert len(parts) > 5 and parts[0][0].start == 0 and parts[-1][0].stop == len(offsets)
        assert all(a[0].stop == b[0].start for a, b in zip(parts, parts[1:]))
        assert [r for _, b, _ in parts for r in b.to_pylist()] == [rows[o] for o in offsets.tolist()]
        made = [m for _, ms, _ in gather.messages(offsets, np.full(len(offsets), -1, np.int64)) for m in ms]
    assert made == [log.read(o) for o in offsets.tolist()]
    assert [m for m in log.read_each(offsets.tolist())] == made


def test_chunks_are_bounded_in_rows_and_bytes():
    with G.RecordGather([]) as gather:
        sizes = np.array([100] * 20000 + [1 << 30] * 20 + [5 << 20] * 30, np.int64)
        parts = list(gather.chunks(sizes))
    assert parts[0].start == 0 and parts[-1].stop == len(sizes)
    assert all(a.stop == b.start for a, b in zip(parts, parts[1:]))
    for p in parts:
        cost = np.clip(sizes[p], 0, G.WINDOW) + G.GAP
        assert p.stop - p.start <= G.CHUNK_ROWS and (cost.sum() <= G.CHUNK_BYTES or p.stop - p.start == 1)


def test_resolved_batches_of_the_schedule_topic_check_tags_on_the_messages(version):
    """In ``SCHEDULE_TOPIC_XXXX`` tags codes are delivery times: the tag is checked on the messages only."""
    store = rmqformats.open_store(str(store_path(version)))
    cq = store.consume_queue("SCHEDULE_TOPIC_XXXX", next(q.queue_id for q in store.queues()
                                                          if q.topic == "SCHEDULE_TOPIC_XXXX"))
    every = [r for b in R.resolved_batches(cq, columns=("tags",)) for r in b.messages.column("tags").to_pylist()]
    tag = next(t for t in every if t)
    kept = [b for b in R.resolved_batches(cq, tag=tag, columns=("msgId",))]
    assert sum(b.units.num_rows for b in kept) == every.count(tag)
    assert [r.message.msg_id for r in cq.messages(tag=tag)] == [
        m for b in kept for m in b.messages.column("msgId").to_pylist()]


def test_a_dledger_log_is_resolved_by_its_reader(tmp_path):
    """Only a file commit log is read as columns: a DLedger one's records sit in entries its reader checks."""
    from rmqformats.consumequeue import ConsumeQueue

    assert not R.can_resolve(ConsumeQueue(str(tmp_path), "T", 0))
    with pytest.raises(ValueError, match="one at a time"):
        next(R.resolved_batches(ConsumeQueue(str(tmp_path), "T", 0), columns=JSONL_COLUMNS))


def _read_or_error(log, offset):
    from rmqformats.errors import RmqFormatError
    try:
        return log.read(offset)
    except RmqFormatError as exc:
        return exc


def _same_answer(a, b) -> bool:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    return a == b


@pytest.mark.parametrize("how", [None, "noise", "cut"])
@pytest.mark.parametrize("small", [False, True])
def test_read_each_gives_what_read_gives(how, small, version, tmp_path, monkeypatch):
    """``CommitLog.read_each`` answers each offset as ``read`` does, message or typed error (same type and
    text), whatever the order, the sizes given, and the windows' sizes; on the vectors and damaged copies."""
    if small:
        monkeypatch.setattr(G, "GAP", 100)
        monkeypatch.setattr(G, "WINDOW", 700)
    root = str(store_path(version)) if how is None else _damaged(tmp_path, version, how)
    log = rmqformats.open_store(root).commitlog
    starts = [r["commitLogOffset"] for r in _walk_rows(str(store_path(version) / "commitlog")).values()]
    rng = random.Random(f"{version}{how}{small}")
    end = log.segments[-1].start_offset + log.segments[-1].size
    offsets = starts + [s + rng.randrange(1, 50) for s in rng.sample(starts, 30)] + [-1, 0, end - 3, end, end + 9]
    rng.shuffle(offsets)
    sizes = [rng.choice([0, 200, 300, 1 << 20, -4]) for _ in offsets]
    want = [_read_or_error(log, o) for o in offsets]
    for got in (list(log.read_each(offsets)), list(log.read_each(offsets, sizes))):
        assert len(got) == len(want)
        assert all(_same_answer(a, b) for a, b in zip(want, got))
    assert sum(not isinstance(a, Exception) for a in want) > (250 if how is None else 100)


def test_read_along_keeps_the_items_before_an_error(monkeypatch):
    """``read_along``: each item with its record (``None`` where not wanted), a chunk of items at a time;
    an error the items raise comes after the items before it."""
    from rmqformats import commitlog as C

    monkeypatch.setattr(C, "READ_ALONG", 7)
    log = rmqformats.open_store(str(store_path(VERSIONS[-1]))).commitlog
    starts = [m.commitlog_offset for m in log.scan()][:30]

    def items():
        yield from starts[:17]
        raise ValueError("the items end here")

    seen = []
    with pytest.raises(ValueError, match="end here"):
        for offset, m in log.read_along(items(), offset=lambda o: o, wanted=lambda o: o % 2 == 0):
            seen.append((offset, None if m is None else m.commitlog_offset))
    assert seen == [(o, o if o % 2 == 0 else None) for o in starts[:17]]
    pairs = list(log.read_along(starts, offset=lambda o: o, size=lambda o: 1))
    assert [(o, m.commitlog_offset) for o, m in pairs] == [(o, o) for o in starts]


def test_read_each_of_a_dledger_log_reads_each_record(tmp_path):
    """A DLedger log's records sit in entries: ``read_each`` is its ``read`` of each offset."""
    from rmqformats.dledger.commitlog import DLedgerCommitLog

    calls = []

    class Log(DLedgerCommitLog):
        def __init__(self):
            pass

        def read(self, offset):
            calls.append(offset)
            if offset < 0:
                raise rmqformats.errors.MessageNotFoundError("x", offset, "no message")
            return offset

    got = list(Log().read_each([5, -1, 7]))
    assert calls == [5, -1, 7] and got[0] == 5 and got[2] == 7
    assert isinstance(got[1], rmqformats.errors.MessageNotFoundError)


def test_a_gather_keeps_few_segments_open(monkeypatch):
    """Records across every segment, read with two descriptors kept open at most."""
    monkeypatch.setattr(G, "OPEN_SEGMENTS", 2)
    log = CommitLog(str(store_path("rocketmq-4.9.7") / "commitlog"))
    assert len(log.segments) == 5
    rows = _walk_rows(str(store_path("rocketmq-4.9.7") / "commitlog"))
    offsets = np.array(sorted(rows)[::-1], np.int64)  # last segment first
    with G.RecordGather(log.segments) as gather:
        got = [r for _, b, _ in gather.read(offsets, np.full(len(offsets), 300, np.int64), COLUMNS)
               for r in b.to_pylist()]
        assert len(gather._fds) <= 2
    assert got == [rows[o] for o in offsets.tolist()] and not gather._fds
