"""The two-way consistency check on the vector stores and on copies damaged in the ways incidents leave them."""

from __future__ import annotations

import json
import os
import struct
import zlib

import pytest

import rmqformats
from rmqformats.cli import main, status
from rmqformats.index import IndexFile
from rmqformats.recovery import Kind, Severity, cross_check, undispatched

from conftest import store_path

CQ_UNIT = 20


def run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    return code, out


def problems(result) -> dict:
    """The counts of the problems found (notes left out)."""
    return {k: n for k, n in result.counts.items()
            if k not in (Kind.RESTART, Kind.ABNORMAL_RECOVERY, Kind.AFTER_CHECKPOINT)}


def of_kind(result, kind: Kind) -> list:
    return [f for f in result.findings if f.kind is kind]


# -- clean stores ---------------------------------------------------------------------------


def test_clean_stores_have_no_problem(capsys, version):
    store = rmqformats.open_store(store_path(version))
    result = cross_check(store)
    assert result.ok, [str(f) for f in result.findings if f.severity is Severity.PROBLEM]
    assert problems(result) == {}
    with open(store_path(version).parent / "truth" / "messages.jsonl", encoding="utf-8") as f:
        truth = [d["dispatch"] for d in map(json.loads, f) if d["kind"] == "MESSAGE"]
    assert result.messages == len(truth)
    # Every message but transaction PREPARED (sysFlag 4) and ROLLBACK (12) goes to a queue.
    assert result.dispatched == sum(1 for m in truth if m["sysFlag"] & 0xC not in (4, 12))
    # The messages with keys, from the broker's own DispatchRequest (ROLLBACK is not indexed).
    assert result.indexed == sum(1 for m in truth if (m["keys"] or m["uniqKey"]) and m["sysFlag"] & 0xC != 12)
    # Every index entry of the store was matched to a message key.
    with store.index() as files:
        assert result.index_entries == sum(f.header.num_entries for f in files)
    assert result.timer_units == (9 if version == "rocketmq-5.3.3" else 0)
    code, out = run(capsys, "check", str(store_path(version)))
    assert code == status.OK and out.rstrip().endswith("consistent")
    assert undispatched(store) == {}


def test_clean_store_recovery_plan(version):
    store = rmqformats.open_store(store_path(version))
    plan = cross_check(store).recovery
    assert plan.clean_shutdown and plan.data_end.reason.is_clean
    assert plan.restart_dispatch == 0 and plan.truncated_units == 0
    # Abnormal recovery starts from a segment whose first message is not newer than the checkpoint's mark.
    first = store.commitlog.read(plan.abnormal_start)
    assert first.store_timestamp <= plan.checkpoint.min_timestamp or plan.abnormal_start == 0
    assert plan.abnormal_dispatch == sum(1 for m in store.commitlog.scan(start=plan.abnormal_start))
    # Messages stored after each checkpoint mark, counted and located, with the mark's byte in the file.
    messages = list(store.commitlog)
    cp = plan.checkpoint
    for (count, first), mark in ((plan.after_physic, cp.physic_msg_timestamp),
                                 (plan.after_logics, cp.logics_msg_timestamp),
                                 (plan.after_index, cp.index_msg_timestamp)):
        late = [m for m in messages if m.store_timestamp > mark]
        assert count == len(late) and first == (late[0].commitlog_offset if late else None)
    notes = [f for f in cross_check(store).findings if f.kind is Kind.AFTER_CHECKPOINT]
    assert {f.other.offset for f in notes} <= {0, 8, 16}
    assert all(f.other.path == str(store_path(version) / "checkpoint") for f in notes)


# -- damaged copies -------------------------------------------------------------------------


def _open(root):
    return rmqformats.open_store(root)


def _check_cli(capsys, root) -> dict:
    code, out = run(capsys, "check", str(root), "--format", "json")
    assert code == status.FINDINGS
    doc = json.loads(out)
    assert doc["ok"] is False
    return doc


def test_zeroed_unit(capsys, store_copy):
    cq_file = store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    before = _open(store_copy).consume_queue("TopicTest", 0)
    unit = before.unit(3)
    with open(cq_file, "r+b") as f:
        f.seek(3 * CQ_UNIT)
        f.write(bytes(CQ_UNIT))
    store = _open(store_copy)
    # The one-way check cannot see it: recovery ends the queue at the zeroed unit.
    assert store.check_consistency().ok
    result = cross_check(store)
    missing = of_kind(result, Kind.MISSING_UNIT)
    assert [(f.topic, f.queue_id, f.queue_offset, f.commitlog_offset) for f in missing] == [
        ("TopicTest", 0, 3, unit.commitlog_offset)]
    f = missing[0]
    assert "zeroed" in f.text
    assert (f.other.path, f.other.offset) == (str(cq_file), 3 * CQ_UNIT)
    seg = store.commitlog.segments[store.commitlog.segment_index(unit.commitlog_offset)]
    assert (f.commitlog.path, f.commitlog.offset) == (seg.path, unit.commitlog_offset - seg.start_offset)
    behind = of_kind(result, Kind.QUEUE_BEHIND)
    assert [(b.topic, b.queue_id, b.queue_offset) for b in behind] == [("TopicTest", 0, 3)]
    assert result.behind == {("TopicTest", 0): before.max_offset - 3}
    doc = _check_cli(capsys, store_copy)
    assert {x["kind"] for x in doc["findings"] if x["severity"] == "problem"} == {"missing-unit", "queue-behind"}


def test_deleted_last_consume_queue_file(capsys, store_copy):
    folder = store_copy / "consumequeue" / "TopicCqRoll" / "0"
    last = folder / "00000000000000002560"
    os.remove(last)
    store = _open(store_copy)
    result = cross_check(store)
    missing = of_kind(result, Kind.MISSING_UNIT)
    assert [f.queue_offset for f in missing] == list(range(128, 150))
    assert all(f.topic == "TopicCqRoll" and f.other.absent and f.other.path == str(last) for f in missing)
    assert [f.other.offset for f in missing] == [(q - 128) * CQ_UNIT for q in range(128, 150)]
    assert [(b.topic, b.queue_offset) for b in of_kind(result, Kind.QUEUE_BEHIND)] == [("TopicCqRoll", 128)]
    assert problems(result) == {Kind.MISSING_UNIT: 22, Kind.QUEUE_BEHIND: 1}
    _check_cli(capsys, store_copy)


def test_index_file_removed(capsys, store_copy):
    index = store_copy / "index"
    victim = sorted(index.iterdir())[0]
    with IndexFile(victim) as f:
        entries = f.entry_array()
        lost = sorted(int(x) for x in entries["ofs_physical"])
    os.remove(victim)
    store = _open(store_copy)
    result = cross_check(store, max_findings=10_000)
    if os.listdir(index):
        missing = of_kind(result, Kind.MISSING_INDEX)
        # One finding per key the removed file held, at the message it pointed at.
        assert sorted(f.commitlog_offset for f in missing) == lost
        assert problems(result) == {Kind.MISSING_INDEX: len(lost)}
        # Each names the index side: the key's slot in a file whose range holds the offset, or the folder.
        for f in missing:
            assert f.other.path == str(index) and "no index file covers its offset" in f.text or (
                f.other.offset is not None and os.path.dirname(f.other.path) == str(index))
    else:
        assert problems(result) == {Kind.NO_INDEX: 1}
    _check_cli(capsys, store_copy)
    # Without the index part the store is consistent again.
    assert run(capsys, "check", str(store_copy), "--no-index")[0] == status.OK


def test_unit_past_end_of_data(capsys, store_copy):
    cq_file = store_copy / "consumequeue" / "TopicTest" / "1" / "00000000000000000000"
    store = _open(store_copy)
    scan = store.commitlog.scan()
    for _ in scan:
        pass
    data_end = scan.end.offset
    original = store.consume_queue("TopicTest", 1).unit(2)
    target = data_end + 1000
    with open(cq_file, "r+b") as f:
        f.seek(2 * CQ_UNIT)
        f.write(struct.pack(">q", target))
    result = cross_check(_open(store_copy))
    past = of_kind(result, Kind.UNIT_PAST_END)
    assert [(f.topic, f.queue_id, f.queue_offset, f.commitlog_offset) for f in past] == [
        ("TopicTest", 1, 2, target)]
    seg = store.commitlog.segments[-1]
    assert (past[0].other.path, past[0].other.offset) == (str(cq_file), 2 * CQ_UNIT)
    assert (past[0].commitlog.path, past[0].commitlog.offset) == (seg.path, target - seg.start_offset)
    # The message the unit pointed at has lost its unit.
    assert [(f.queue_offset, f.commitlog_offset) for f in of_kind(result, Kind.MISSING_UNIT)] == [
        (2, original.commitlog_offset)]
    assert result.recovery.truncated_units == 1
    _check_cli(capsys, store_copy)


def _append_copy(root, topic: str, queue_id: int) -> tuple[int, int]:
    """Append to the commit log a copy of the newest message of a queue, as the queue's next message.

    Returns (commit-log offset, queue offset) of the new record. Its body CRC
    stays right; a ``__CRC32#`` property is recomputed as the broker writes it.
    """
    store = _open(root)
    cq = store.consume_queue(topic, queue_id)
    last = cq.unit(cq.max_offset - 1)
    scan = store.commitlog.scan()
    for _ in scan:
        pass
    end = scan.end
    seg = store.commitlog.segments[store.commitlog.segment_index(last.commitlog_offset)]
    with open(seg.path, "rb") as f:
        f.seek(last.commitlog_offset - seg.start_offset)
        record = bytearray(f.read(last.size))
    struct.pack_into(">q", record, 20, cq.max_offset)  # QUEUEOFFSET
    struct.pack_into(">q", record, 28, end.offset)  # PHYSICALOFFSET
    if record.endswith(b"\x02") and b"__CRC32#\x01" in record[-20:]:
        crc = zlib.crc32(bytes(record[:-20])) & 0x7FFFFFFF
        record[-11:-1] = "".join(str(crc // 10 ** i % 10) for i in range(10)).encode()
    with open(end.segment, "r+b") as f:
        f.seek(end.file_offset)
        f.write(record)
    return end.offset, cq.max_offset


def test_message_appended_after_queues_written(capsys, store_copy, version):
    offset, queue_offset = _append_copy(store_copy, "TopicTest", 0)
    store = _open(store_copy)
    msg = store.commitlog.read(offset)
    assert msg.queue_offset == queue_offset
    result = cross_check(store)
    missing = of_kind(result, Kind.MISSING_UNIT)
    assert [(f.topic, f.queue_id, f.queue_offset, f.commitlog_offset) for f in missing] == [
        ("TopicTest", 0, queue_offset, offset)]
    assert "the next start dispatches it again" in missing[0].text
    assert [(b.topic, b.queue_offset) for b in of_kind(result, Kind.QUEUE_BEHIND)] == [("TopicTest", queue_offset)]
    # Its keys are in no index file either; the newest file would have taken them, at their slots.
    keys = (1 if msg.uniq_key else 0) + len(msg.keys)
    assert result.counts.get(Kind.MISSING_INDEX, 0) == keys
    newest = IndexFile(sorted((store_copy / "index").iterdir())[-1])
    slots = {40 + newest.slot_of(f"TopicTest#{k}") * 4 for k in [msg.uniq_key, *msg.keys] if k}
    newest.close()
    assert {(f.other.path, f.other.offset) for f in of_kind(result, Kind.MISSING_INDEX)} == {
        (str(sorted((store_copy / "index").iterdir())[-1]), s) for s in slots}
    assert result.recovery.restart_dispatch == 1 and result.recovery.restart_first == offset
    assert undispatched(store) == {("TopicTest", 0): 1}
    _check_cli(capsys, store_copy)
    # ``lag`` says the queue is behind the commit log.
    code, out = run(capsys, "lag", str(store_copy), "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    flagged = [r for r in rows if r.get("behindCommitLog")]
    assert flagged and all((r["topic"], r["queueId"], r["behindCommitLog"]) == ("TopicTest", 0, 1)
                           for r in flagged)
    assert code == status.FINDINGS
    code, out = run(capsys, "lag", str(store_copy))
    assert code == status.FINDINGS
    flagged = [line for line in out.splitlines() if "behind-commitlog" in line]
    assert flagged and all(line.split()[1:3] == ["TopicTest", "0"] for line in flagged)
    assert "lag is understated by as many" in out
    # Without the commit log, the queue is not flagged (other flags, such as 5.3.3's offset committed
    # past a queue's end, still are).
    code, out = run(capsys, "lag", str(store_copy), "--no-behind")
    assert "behind-commitlog" not in out
    assert code == run(capsys, "lag", str(store_path(version)))[0]


def test_several_damages_at_once(store_copy):
    """Each damage is still found, at its place, when they come together."""
    os.remove(store_copy / "consumequeue" / "TopicCqRoll" / "0" / "00000000000000002560")
    offset, queue_offset = _append_copy(store_copy, "TopicTest", 2)
    with open(store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000", "r+b") as f:
        f.seek(3 * CQ_UNIT)
        f.write(bytes(CQ_UNIT))
    result = cross_check(_open(store_copy), max_findings=10_000)
    missing = {(f.topic, f.queue_id, f.queue_offset) for f in of_kind(result, Kind.MISSING_UNIT)}
    assert missing == ({("TopicCqRoll", 0, q) for q in range(128, 150)} | {("TopicTest", 2, queue_offset)}
                       | {("TopicTest", 0, 3)})
    assert {(b.topic, b.queue_id) for b in of_kind(result, Kind.QUEUE_BEHIND)} == {
        ("TopicCqRoll", 0), ("TopicTest", 2), ("TopicTest", 0)}


def test_timer_unit_not_a_timer_message(tmp_path):
    import shutil
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    store = _open(root)
    units = list(store.timer().units())
    seg = store.timer().log_segments[0]
    other = store.consume_queue("TopicTest", 0).unit(0)
    # Point the first unit at an ordinary TopicTest message, and the second past the end of data
    # (offsetPy is at byte 28 of a unit: size, prevPos, magic, currWriteTime, delayedTime before it).
    with open(seg.path, "r+b") as f:
        f.seek(units[0].position + 28)
        f.write(struct.pack(">q", other.commitlog_offset))
        f.seek(units[1].position + 28)
        f.write(struct.pack(">q", 10 << 20))
    result = cross_check(_open(root))
    bad = of_kind(result, Kind.TIMER_NOT_TIMER)
    assert [(f.commitlog_offset, f.other.path, f.other.offset) for f in bad] == [
        (other.commitlog_offset, seg.path, units[0].position)]
    assert "TopicTest" in bad[0].text
    past = of_kind(result, Kind.TIMER_PAST_END)
    assert [(f.commitlog_offset, f.other.offset) for f in past] == [(10 << 20, units[1].position)]
    assert past[0].commitlog.absent


def test_abort_file_and_checkpoint(store_copy):
    (store_copy / "abort").write_bytes(b"")
    plan = cross_check(_open(store_copy)).recovery
    assert not plan.clean_shutdown
    note = [f for f in cross_check(_open(store_copy)).findings if f.kind is Kind.ABNORMAL_RECOVERY]
    assert note and "did not shut down cleanly" in note[0].text


@pytest.mark.parametrize("flag", ["--no-both-ways"])
def test_one_way_check_still_available(capsys, store_copy, flag):
    with open(store_copy / "consumequeue" / "TopicTest" / "0" / "00000000000000000000", "r+b") as f:
        f.seek(3 * CQ_UNIT)
        f.write(bytes(CQ_UNIT))
    assert run(capsys, "check", str(store_copy), flag)[0] == status.OK
    assert run(capsys, "check", str(store_copy))[0] == status.FINDINGS


def _truncate(path, size):
    with open(path, "r+b") as f:
        f.truncate(size)


def _overwrite(path, pos, data):
    with open(path, "r+b") as f:
        f.seek(pos)
        f.write(data)


def test_missing_segment_and_unreadable_files(tmp_path):
    """Damage that is not a dispatch gap: each is named, and the rest of the store is still checked."""
    import shutil
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    segments = sorted((root / "commitlog").iterdir())
    big = _open(root).consume_queue("TopicBig", 0)
    gone = segments[2]
    lost = [u for u in big.units() if int(gone.name) <= u.commitlog_offset < int(gone.name) + gone.stat().st_size]
    os.remove(gone)
    index_files = sorted((root / "index").iterdir())
    _truncate(index_files[0], 100)
    _overwrite(root / "timerlog" / "00000000000000000000", 52, b"\x7f" * 52)
    result = cross_check(_open(root), max_findings=10_000)
    in_gap = of_kind(result, Kind.UNIT_NO_SEGMENT)
    assert [(f.topic, f.queue_offset, f.commitlog_offset) for f in in_gap] == [
        ("TopicBig", u.cq_offset, u.commitlog_offset) for u in lost]
    assert in_gap[0].commitlog.absent and in_gap[0].commitlog.path == str(gone)
    unreadable = of_kind(result, Kind.UNREADABLE)
    assert {f.other.path for f in unreadable} == {str(index_files[0]), str(root / "timerlog" / "00000000000000000000")}
    # The other index files are still matched: only the keys of the unreadable file are missing.
    with IndexFile(store_path("rocketmq-5.3.3") / "index" / index_files[0].name) as f:
        assert result.counts[Kind.MISSING_INDEX] == f.header.num_entries
    assert result.timer_units == 1  # the units after the damaged one are not read


def test_queues_verified_from_the_commit_log_are_not_read_again(capsys, store_copy):
    """``check`` skips the unit-by-unit pass for queues the walk found right, and still reports the others."""
    store = _open(store_copy)
    result = cross_check(store)
    full = store.check_consistency()
    fast = store.check_consistency(verified=result.verified)
    assert (fast.queues, fast.units, fast.deleted, fast.ok) == (full.queues, full.units, full.deleted, True)
    # A wrong tags code: the unit still points at its message, so only the unit-by-unit pass sees it.
    with open(store_copy / "consumequeue" / "TopicTest" / "1" / "00000000000000000000", "r+b") as f:
        f.seek(2 * CQ_UNIT + 12)
        f.write(struct.pack(">q", 12345))
    store = _open(store_copy)
    result = cross_check(store)
    assert result.ok and result.verified[("TopicTest", 1)] == store.consume_queue("TopicTest", 1).max_offset - 1
    report = store.check_consistency(verified=result.verified)
    assert [(p.topic, p.queue_id, p.cq_offset, p.field, p.expected) for p in report.problems] == [
        ("TopicTest", 1, 2, "tagsCode", 12345)]
    code, out = run(capsys, "check", str(store_copy))
    assert code == status.FINDINGS and "tagsCode" in out


def test_check_walks_each_queue_end_once(capsys, monkeypatch, version):
    """The end of a file consume queue (a walk of its newest files) is found once by ``check``, by its listing;
    the cross-check's own steps and the unit-by-unit pass take it from there."""
    from collections import Counter

    from rmqformats import queuefiles
    walked: Counter = Counter()
    end_unit = queuefiles.UnitFiles.end_unit

    def counted(self):
        if self._end is None:
            walked[self.folder] += 1
        return end_unit(self)
    monkeypatch.setattr(queuefiles.UnitFiles, "end_unit", counted)
    root = store_path(version)
    code, out = run(capsys, "check", str(root), "--format", "jsonl")
    assert code == status.OK
    files = {f for f in walked if os.sep + "consumequeue" + os.sep in f}
    assert files and {walked[f] for f in files} == {1}
    assert len(files) == len(rmqformats.open_store(root).queues())


def test_check_reads_every_unit_once_after_the_walk(monkeypatch, version):
    """The cross-check's pass over every unit (those past the end of data) counts each file queue's units as
    ``check_consistency`` does; given those counts, the unit-by-unit pass reads no verified queue again and
    reports the same."""
    from collections import Counter

    from rmqformats import queuefiles
    from rmqformats.consumequeue import _checkable_units

    store = rmqformats.open_store(store_path(version))
    result = cross_check(store)
    files = [i for i in result.listed if i.kind == "file" and not i.error]
    assert files and set(result.counted) == {(i.topic, i.queue_id) for i in files}
    for info in files:
        cq = store.consume_queue(info.topic, info.queue_id)
        assert result.counted[(info.topic, info.queue_id)] == _checkable_units(cq)
    reads: Counter = Counter()
    read = queuefiles.UnitFiles.read

    def counting(self, *args, **kwargs):
        reads[self.folder] += 1
        return read(self, *args, **kwargs)
    monkeypatch.setattr(queuefiles.UnitFiles, "read", counting)
    again = store.check_consistency(verified=result.verified, queues=result.listed)
    read_again = {f for f in reads if os.sep + "consumequeue" + os.sep in f}
    reads.clear()
    once = store.check_consistency(verified=result.verified, queues=result.listed, counted=result.counted)
    assert (once.queues, once.units, once.deleted, once.problems, once.unreadable) == \
        (again.queues, again.units, again.deleted, again.problems, again.unreadable)
    verified = {store.consume_queue(i.topic, i.queue_id).files.folder for i in files
                if result.verified.get((i.topic, i.queue_id)) == result.counted[(i.topic, i.queue_id)][0]
                - result.counted[(i.topic, i.queue_id)][1]}
    assert verified and verified <= read_again  # read again without the counts
    assert not verified & set(reads)  # not with them


def test_key_hashes_match_the_index_hash(version):
    """The compiled ``topic#key`` hash equals ``indexKeyHashMethod`` for every key of the store, non-ASCII too."""
    import numpy as np
    import pyarrow as pa

    from rmqformats.index import index_key_hash
    from rmqformats.recovery.keyhash import key_hashes

    store = rmqformats.open_store(store_path(version))
    pairs = [(m.topic, k) for m in store.commitlog for k in [m.uniq_key, *m.keys] if k]
    pairs += [("TopicTest", "ключ"), ("T", "😀 x"), ("%RETRY%G", "")]
    topics = sorted({t for t, _ in pairs})
    got = key_hashes(pa.array([k for _, k in pairs]), np.array([topics.index(t) for t, _ in pairs]), topics)
    assert got.tolist() == [index_key_hash(f"{t}#{k}") for t, k in pairs]


def test_rocksdb_consume_queues_are_not_taken_for_missing_ones(store_copy):
    """A ``consumequeue/`` RocksDB database that cannot be opened is reported unreadable, not taken for empty."""
    import shutil
    shutil.rmtree(store_copy / "consumequeue")
    (store_copy / "consumequeue").mkdir()
    (store_copy / "consumequeue" / "CURRENT").write_text("MANIFEST-000005\n")
    result = cross_check(_open(store_copy))
    assert Kind.MISSING_UNIT not in result.counts and Kind.QUEUE_BEHIND not in result.counts
    unreadable = [f for f in result.findings if f.kind is Kind.UNREADABLE]
    assert len(unreadable) == 1 and "RocksDB consume queue cannot be read" in unreadable[0].text
    assert unreadable[0].other.path == str(store_copy / "consumequeue")
    assert result.recovery.restart_dispatch == 0


# -- many queues in one batch -------------------------------------------------------------------------


def _many_queue_store(root) -> dict:
    """A commit log of 40 queues' messages interleaved, with light queues, and the queues as the dispatch
    writes them, but: one unit zeroed, one pointing at another message, one light queue never written, one
    message whose queue offset lies far past its queue's units. Returns what the check must find."""
    from rmqformats import synth
    from rmqformats.javahash import tags_code
    specs, keys = [], []
    nxt: dict[tuple[str, int], int] = {}
    for i in range(400):
        topic, q = f"T{i % 5}", (i * 7) % 8
        qo = nxt.get((topic, q), 0)
        if i == 333:
            qo = 10**6  # far past the queue's units (a damaged record)
        else:
            nxt[(topic, q)] = qo + 1
        properties = {"TAGS": f"tag{i % 3}"}
        if i % 50 == 10:  # a light message: one more unit in each light queue it names
            properties |= {"INNER_MULTI_DISPATCH": f"%LMQ%a{i % 100},%LMQ%b", "INNER_MULTI_QUEUE_OFFSET": f"{i // 100},{i // 50}"}
        specs.append(synth.MessageSpec(topic, f"body{i}".encode(), properties, queue_id=q, queue_offset=qo))
        keys.append((topic, q, qo))
    placed = synth.write_commitlog(root / "commitlog", specs, segment_size=1 << 20)
    units: dict[tuple[str, int], dict[int, tuple[int, int, int]]] = {}
    for spec, (topic, q, qo), p in zip(specs, keys, placed):
        unit = (p.commitlog_offset, p.size, tags_code(spec.properties["TAGS"]))
        units.setdefault((topic, q), {})[qo] = unit
        lmq = spec.properties.get("INNER_MULTI_DISPATCH")
        if lmq:
            for name, lqo in zip(lmq.split(","), spec.properties["INNER_MULTI_QUEUE_OFFSET"].split(",")):
                units.setdefault((name, 0), {})[int(lqo)] = unit
    expected_units = {k: dict(v) for k, v in units.items()}
    damaged = {("T1", 3): 2, ("T2", 6): 4}  # zeroed, and pointing at another message
    missing = set()
    for (topic, q), by_offset in units.items():
        if topic == "%LMQ%a60":
            missing |= {(topic, q, qo) for qo in by_offset}
            continue  # never written
        rows = sorted(by_offset.items())
        far = [qo for qo, _ in rows if qo >= 10**6]
        missing |= {(topic, q, qo) for qo in far}
        rows = [(qo, u) for qo, u in rows if qo < 10**6]
        table = [u for _, u in rows]
        if (topic, q) in damaged:
            at = damaged[(topic, q)]
            table[at] = (0, 0, 0) if (topic, q) == ("T1", 3) else table[0]
            missing.add((topic, q, at))
        synth.write_consume_queue(root / "consumequeue" / topic / str(q), table, file_units=1000)
    return {"units": expected_units, "missing": missing, "messages": len(specs)}


@pytest.mark.parametrize("batch_size", [65536, 7])
def test_check_compares_every_queue_of_a_batch(tmp_path, batch_size):
    """A batch holds messages of many queues (and light queues): each queue's units are compared with its
    messages, whatever the batch size, with findings naming the queue, offset and message."""
    _check_many_queues(tmp_path, batch_size)


def _check_many_queues(tmp_path, batch_size: int):
    from rmqformats.recovery.crosscheck import dispatch_units
    truth = _many_queue_store(tmp_path)
    store = _open(tmp_path)
    # The units the dispatch writes, by queue, against the ones built above.
    got: dict[tuple[str, int], dict[int, tuple[int, int, int]]] = {}
    for batch in store.commitlog.batches(batch_size=batch_size):
        for key, (eq, eo, es, et) in dispatch_units(batch).items():
            for qo, o, s, t in zip(eq.tolist(), eo.tolist(), es.tolist(), et.tolist()):
                got.setdefault(key, {})[qo] = (o, s, t)
    assert got == truth["units"]
    result = cross_check(store, batch_size=batch_size, index=False, max_findings=10_000)
    found = {(f.topic, f.queue_id, f.queue_offset) for f in of_kind(result, Kind.MISSING_UNIT)}
    assert found == truth["missing"]
    texts = {(f.topic, f.queue_id, f.queue_offset): f.text for f in of_kind(result, Kind.MISSING_UNIT)}
    assert "zeroed" in texts[("T1", 3, 2)]
    assert "points at commit-log offset" in texts[("T2", 6, 4)]
    assert "no consume-queue file holds that offset" in texts[("%LMQ%a60", 0, 0)]
    assert "no consume-queue file holds that offset" in texts[("T3", 3, 10**6)]
    # Every unit agrees but the damaged ones; recovery ends a queue at a zeroed unit, so only the units
    # before it count there.
    for key, by_offset in truth["units"].items():
        bad = sum(1 for t, q, _ in truth["missing"] if (t, q) == key)
        agree = 2 if key == ("T1", 3) else len(by_offset) - bad
        assert result.verified.get(key, 0) == agree, key
    assert result.messages == truth["messages"]
    return result


def test_check_of_many_queues_on_workers(tmp_path, monkeypatch):
    """The workers compare the queues of their ranges: the same findings, in the same order, as one job."""
    serial = _check_many_queues(tmp_path, 65536)
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    store = _open(tmp_path)
    store.commitlog.jobs = 2
    walked = cross_check(store, index=False, max_findings=10_000)
    assert walked.findings == serial.findings
    assert (walked.counts, walked.verified, walked.behind) == (serial.counts, serial.verified, serial.behind)


def test_queue_units_read_ahead_stop_at_the_listed_end_and_keep_to_a_budget(tmp_path, monkeypatch):
    """A check reads a few units of each of many queues per batch: it reads more than asked, up to where the
    queue ended when listed (units past it may still be written) and holds them, within a budget of bytes."""
    import numpy as np

    from rmqformats.consumequeue import UNIT_DTYPE
    from rmqformats.recovery import crosscheck as cc

    folder = tmp_path / "T" / "0"
    folder.mkdir(parents=True)
    first, unit = UNIT_DTYPE.names[0], UNIT_DTYPE.itemsize
    units = np.zeros(1000, UNIT_DTYPE)
    units[first] = np.arange(1000)
    (folder / f"{0:020d}").write_bytes(units.tobytes())
    reads = []
    real_pread = os.pread
    monkeypatch.setattr(cc.os, "pread", lambda fd, n, at: reads.append((n // unit, at // unit)) or real_pread(fd, n, at))
    raw, ahead = cc._RawQueue(str(folder)), cc._ReadAhead()

    def read(start, stop, upto):
        got, held = raw.read(start, stop, ahead, upto)
        assert held is None and got[first].tolist() == list(range(start, stop))

    read(0, 10, 100)
    assert reads == [(100, 0)]  # 16 times what was asked, but not past the listed end
    read(10, 20, 200)
    read(90, 100, 200)
    assert len(reads) == 1  # served from what was read
    read(100, 110, 200)
    assert reads[1:] == [(100, 100)]
    read(150, 160, 1000)
    read(195, 200, 1000)
    assert len(reads) == 2
    read(200, 220, 1000)
    assert reads[2:] == [(320, 200)]
    assert raw.read(0, 10)[0][first].tolist() == list(range(10)) and reads[3:] == [(10, 0)]  # without: as asked

    small = cc._ReadAhead(budget=100 * unit)
    for q in range(5):
        small.put(f"q{q}", 0, units[:40])
    assert small._bytes <= small.budget and list(small._held) == ["q3", "q4"]  # the least recently used went
    assert small.get("q3", 0, 40) is not None and small.get("q3", 30, 41) is None and small.get("q0", 0, 1) is None
