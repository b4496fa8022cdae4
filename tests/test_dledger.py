"""DLedger commit logs: copies of the vector commit logs framed as DLedger writes them read back as the same messages.

The DLedger copies are built by :mod:`layoutstores` through the construct
schemas from the vector stores' own record bytes (see its docstring).
"""

from __future__ import annotations

import json

import os

import pytest

import rmqformats
from rmqformats import EndReason
from rmqformats.dledger import DLedgerCommitLog, DLedgerEndReason, is_dledger
from rmqformats.dledger.index import check_index
from rmqformats.errors import BadMagicError, DLedgerEntryError, MessageNotFoundError, TruncatedRecordError
from rmqformats.message import offset_msg_id
from rmqformats import properties as props
from rmqformats.cli import main

from conftest import store_path, truth_records
from layoutstores import dledger_store
from test_commitlog_api import api_row
from test_store_readonly import _snapshot
from truthcmp import count_mismatches


def _truth_in_dledger(version, placed, truth=None):
    """The ground truth's messages, with the offsets DLedger gives them (entry position + 48).

    Moving a record changes its PHYSICALOFFSET, hence its offset message id
    and, where the record carries one, the ``__CRC32#`` digits over its bytes.
    """
    if truth is None:
        truth = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    truth = [dict(t) for t in truth]
    for t, e in zip(truth, placed):
        m = rmqformats.decode_message(e.record, 0)
        t["commitlogOffset"] = t["physicalOffset"] = e.message_offset
        t["msgId"] = offset_msg_id(m.store_address, m.store_port, e.message_offset)
        if props.CRC32 in t["properties"]:
            t["properties"] = dict(t["properties"], **{props.CRC32: m.properties[props.CRC32]})
            t["propertiesString"] = m.properties_raw
        else:
            assert m.properties_raw == t["propertiesString"]
    return truth


@pytest.fixture
def dl(tmp_path, version):
    root, placed, moved = dledger_store(version, tmp_path / "store")
    return version, root, placed, moved


def test_messages_match_truth(dl):
    version, root, placed, _ = dl
    store = rmqformats.open_store(root)
    assert isinstance(store.commitlog, DLedgerCommitLog)
    assert is_dledger(store.commitlog.path)
    scan = store.commitlog.scan(verify_crc=True)
    n, details = count_mismatches([api_row(m) for m in scan], _truth_in_dledger(version, placed))
    assert n == 0, details
    # The same end of data as the plain commit log: the zero-filled tail right after the last record.
    plain = rmqformats.open_store(store_path(version)).commitlog.scan()
    list(plain)
    assert plain.end.reason is scan.end.reason is EndReason.ZERO_TAIL
    last = placed[-1]
    assert scan.end.offset == last.position + last.size
    assert scan.end.segment == store.commitlog.segments[-1].path
    assert len(scan.blanks) == len(store.commitlog.segments) - 1


def test_entries_and_index(dl):
    version, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    entries = log.entries()
    got = [(e.index, e.term, e.position, e.size, e.channel, e.chain_crc, e.body_crc) for e in entries]
    assert got == [(p.index, p.term, p.position, p.size, 0, 0, 0) for p in placed]
    assert entries.last_index == len(placed) - 1
    assert check_index(log, log.index()) == []
    units = list(log.index().units())
    assert [(u.index, u.position, u.size) for u in units] == [(p.index, p.position, p.size) for p in placed]


def test_read_by_offset_and_msg_id(dl):
    version, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    for e in placed[::17]:
        m = log.read(e.message_offset)
        assert m.physical_offset == m.commitlog_offset == e.message_offset
        assert log.read_msg_id(m.msg_id) == m
        assert log.read_entry(e.position).index == e.index
    with pytest.raises(MessageNotFoundError):
        log.read(placed[3].position)  # an entry position, not a message offset
    with pytest.raises(MessageNotFoundError):
        log.read(placed[3].message_offset + 1)


def test_queue_check_and_lag_resolve_through_dledger(dl, capsys):
    version, root, placed, _ = dl
    store = rmqformats.open_store(root)
    assert store.check_consistency().ok
    for argv in (["queue"], ["lag"], ["inspect"]):
        # The same status as on the plain vector (5.3.3's consumerOffset.json makes lag report a finding).
        assert main([argv[0], str(root), *argv[1:]]) == main([argv[0], str(store_path(version)), *argv[1:]]), argv
    # The two-way check also reports the batch-queue messages the copy has no batch consume queue for.
    assert main(["check", str(root)]) in (0, 1)
    capsys.readouterr()
    assert main(["messages", str(root), "--format", "jsonl"]) == 0
    assert capsys.readouterr().out.count('"commitLogOffset"') == len(placed)
    # Units resolved through the DLedger reader (a unit at a time): the plain vector's messages, at new offsets.
    for where in (root, store_path(version)):
        assert main(["queue", str(where), "TopicTest", "1", "--resolve", "--format", "jsonl"]) == 0
    dledger, plain = capsys.readouterr().out.split('{"cqOffset": 0,')[1:]
    ours, theirs = ([json.loads('{"cqOffset": 0,' + part.split("\n")[0])] for part in (dledger, plain))
    assert ours[0]["status"] == theirs[0]["status"] == "OK"
    assert ours[0]["message"]["msgId"] != theirs[0]["message"]["msgId"]
    assert ours[0]["message"]["body"] == theirs[0]["message"]["body"]


def test_columnar_batches_equal_the_object_scan(dl):
    version, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    table = log.to_arrow()
    objects = list(log.scan())
    assert table.num_rows == len(objects)
    assert table.column("commitLogOffset").to_pylist() == [m.commitlog_offset for m in objects]
    assert table.column("msgId").to_pylist() == [m.msg_id for m in objects]
    # Same values as the compiled decoder gives for the plain vector, except what the offsets change.
    plain = rmqformats.open_store(store_path(version)).commitlog.to_arrow()
    for name in ("storeSize", "bodyCRC", "queueId", "queueOffset", "sysFlag", "bornTimestamp", "bornHost",
                 "storeTimestamp", "storeHost", "topic", "body", "tags", "keys", "uniqKey"):
        assert table.column(name).to_pylist() == plain.column(name).to_pylist(), name
    filtered = log.to_arrow(topic="TopicTest", queue_id=1)
    assert filtered.num_rows == sum(1 for m in objects if m.topic == "TopicTest" and m.queue_id == 1)


def _damage(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _last_file_entry(root, placed, k=-1):
    log = rmqformats.open_store(root).commitlog
    e = placed[k]
    seg = log.segments[log.segment_index(e.position)]
    return log, e, seg


def test_torn_entry_cut_by_the_end_of_the_file(dl):
    """A file cut inside its last entry: DLedger's recovery stops at that entry's start."""
    version, root, placed, _ = dl
    log, e, seg = _last_file_entry(root, placed)
    os.truncate(seg.path, e.position - seg.start_offset + e.size - 5)
    scan = rmqformats.open_store(root).commitlog.scan()
    assert sum(1 for _ in scan) == len(placed) - 1
    assert scan.end.reason is EndReason.TRUNCATED
    assert (scan.end.offset, scan.end.segment) == (e.position, seg.path)
    with pytest.raises(TruncatedRecordError) as err:
        list(rmqformats.open_store(root).commitlog.scan(strict=True))
    assert err.value.path == seg.path and err.value.offset == e.position - seg.start_offset


def test_torn_entry_with_half_a_header(dl):
    """Only the first 16 bytes of the last entry reached the disk: its pos field reads 0."""
    version, root, placed, _ = dl
    log, e, seg = _last_file_entry(root, placed)
    _damage(seg.path, e.position - seg.start_offset + 16, bytes(e.size - 16))
    scan = rmqformats.open_store(root).commitlog.scan()
    assert sum(1 for _ in scan) == len(placed) - 1
    assert scan.end.reason is DLedgerEndReason.BAD_POSITION and scan.end.offset == e.position
    assert not scan.end.reason.is_clean


def test_torn_entry_with_a_zeroed_message(dl):
    """Header written, record not: DLedger keeps the entry, RocketMQ's dispatch rejects its message; the data ends there."""
    version, root, placed, _ = dl
    log, e, seg = _last_file_entry(root, placed)
    _damage(seg.path, e.position - seg.start_offset + 48, bytes(e.size - 48))
    scan = rmqformats.open_store(root).commitlog.scan()
    assert sum(1 for _ in scan) == len(placed) - 1
    assert scan.end.reason is EndReason.BAD_MAGIC and scan.end.offset == e.position
    assert f"entry {e.index}" in scan.end.detail


@pytest.mark.parametrize("field,at,value,reason,error", [
    ("magic", 0, (7).to_bytes(4, "big"), EndReason.BAD_MAGIC, BadMagicError),
    ("index", 8, (10 ** 6).to_bytes(8, "big"), DLedgerEndReason.INDEX_GAP, DLedgerEntryError),
    ("term", 16, (2 ** 63 - 1).to_bytes(8, "big"), None, None),
    ("body length", 44, (1).to_bytes(4, "big"), DLedgerEndReason.BAD_BODY_SIZE, DLedgerEntryError),
    ("size", 4, (2 ** 31 - 1).to_bytes(4, "big"), DLedgerEndReason.BAD_BODY_SIZE, DLedgerEntryError),
])
def test_damaged_header_ends_the_data_with_a_typed_error(dl, field, at, value, reason, error):
    version, root, placed, _ = dl
    k = len(placed) // 2
    log, e, seg = _last_file_entry(root, placed, k)
    _damage(seg.path, e.position - seg.start_offset + at, value)
    scan = rmqformats.open_store(root).commitlog.scan()
    n = sum(1 for _ in scan)
    if reason is None:
        # A larger term is valid; the next entry's smaller term is not.
        assert n == k + 1 and scan.end.reason is DLedgerEndReason.TERM_DECREASE
        return
    assert n == k
    assert scan.end.reason is reason and scan.end.offset == e.position
    with pytest.raises(error) as err:
        list(rmqformats.open_store(root).commitlog.scan(strict=True))
    assert err.value.path == seg.path and err.value.offset == e.position - seg.start_offset
    assert seg.path in str(err.value) or os.path.basename(seg.path) in str(err.value)


def test_index_disagreement_is_a_finding(dl, monkeypatch):
    version, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    unit = next(u for u in log.index().units() if u.index == 5)
    _damage(unit.file, unit.file_offset + 12, (3).to_bytes(4, "big"))
    found = check_index(log, log.index())
    assert len(found) == 1 and os.path.basename(unit.file) in found[0] and "index unit" in found[0]
    assert f"{(5, placed[5].position, placed[5].size, placed[5].term)}" in found[0]
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")  # the entries walked by workers, in many ranges
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    assert check_index(log, log.index(), jobs=3) == found
    assert sum(1 for _ in log.scan()) == len(placed)  # the data files decide, as in the recovery


def _check_entry_by_entry(log, index) -> list[str]:
    """The index check as the recovery reads it: each entry of the object API against the next unit whose
    index is not below its own."""
    found, units = [], index.units()
    for entry in log.entries():
        unit = next(units, None)
        while unit is not None and unit.index < entry.index:
            unit = next(units, None)
        if unit is None:
            return found + [f"entry {entry.index} (position {entry.position}): no index unit (the index ends "
                            f"before it; files from unit {index.files[0].start // 32})"]
        got, want = (unit.index, unit.position, unit.size, unit.term), (entry.index, entry.position, entry.size,
                                                                         entry.term)
        if got != want:
            found.append(str(DLedgerEntryError(unit.file, unit.file_offset,
                                               f"index unit (index, pos, size, term) {got} != entry {want}")))
            if len(found) >= 100:
                return found
    return found


@pytest.mark.parametrize("seed", range(6))
def test_the_index_check_takes_agreeing_units_at_once_and_the_rest_one_by_one(dl, monkeypatch, seed):
    """Units changed, zeroed or cut off: the check, which takes a batch's units at once where they agree with
    its entries and compares one by one elsewhere, finds what the entry-by-entry comparison finds; the
    batches and the blocks of units are made small so that they fall across each other."""
    import random

    from rmqformats.dledger import index as dindex
    rnd = random.Random(seed)
    version, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    files = log.index().files
    for _ in range(rnd.randrange(1, 4)):
        f = rnd.choice(files)
        at = rnd.randrange(f.size // 32) * 32
        how = rnd.choice(["field", "zero", "cut", "shift"])
        if how == "field":
            _damage(f.path, at + rnd.choice([4, 12, 16, 24]) + 3, bytes([rnd.randrange(1, 256)]))
        elif how == "zero":
            _damage(f.path, at, bytes(32 * rnd.randrange(1, 5)))
        elif how == "cut":
            os.truncate(f.path, at)
        else:  # a unit's index a few ahead: the units between are passed over
            _damage(f.path, at + 16, (placed[min(at // 32 + 3, len(placed) - 1)].index).to_bytes(8, "big"))
    log = rmqformats.open_store(root).commitlog
    want = _check_entry_by_entry(log, log.index())
    batches = DLedgerCommitLog.batches
    monkeypatch.setattr(DLedgerCommitLog, "batches", lambda self, *a, **kw: batches(self, *a, batch_size=13, **kw))
    monkeypatch.setattr(dindex, "_CHUNK", 7)
    assert check_index(log, log.index()) == want
    assert sum(1 for _ in log.index().units()) == sum(len(b) for _, _, b in log.index().unit_blocks())


def test_from_index_starts_at_the_data_file_the_index_points_to(dl, capsys, monkeypatch):
    """``dledger --from-index`` walks from the data file holding the entry, where the index puts it and the
    entry there confirms; without that agreement it walks from the start, and shows the same entries."""
    import json
    version, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    last = placed[-1]
    unit = log.index().unit(last.index)
    assert (unit.index, unit.position, unit.size, unit.term) == (last.index, last.position, last.size, last.term)
    assert log.index().unit(last.index + 1) is None and log.entry_start(0) is None
    assert log.entry_start(last.index) == last.position
    held = log.segment_index(last.position)
    assert held > 0, "the store has entries in more than one data file"
    from_file = list(log.entries(start=last.position))
    assert [e.index for e in from_file] == [p.index for p in placed if p.position >= log.segments[held].start_offset]

    starts = []
    batches = DLedgerCommitLog.batches
    monkeypatch.setattr(DLedgerCommitLog, "batches",
                        lambda self, *a, **kw: starts.append(kw["start"]) or batches(self, *a, **kw))
    k = last.index - 1
    want = [p.index for p in placed if p.index >= k]
    assert main(["dledger", str(root), "--from-index", str(k), "--format", "jsonl"]) == 0
    assert [json.loads(line)["index"] for line in capsys.readouterr().out.splitlines()] == want
    assert starts[-1] == placed[k].position
    _damage(unit.file, unit.file_offset + 4, placed[0].position.to_bytes(8, "big"))  # the unit points elsewhere
    assert rmqformats.open_store(root).commitlog.entry_start(last.index) is None
    assert main(["dledger", str(root), "--from-index", str(last.index), "--format", "jsonl"]) == 0
    assert [json.loads(line)["index"] for line in capsys.readouterr().out.splitlines()] == [last.index]
    assert starts[-1] is None


def test_a_data_folder_given_directly(dl):
    version, root, placed, _ = dl
    data = root / "dledger-n0" / "data"
    store = rmqformats.open_store(data)
    assert isinstance(store.commitlog, DLedgerCommitLog) and store.root is None
    assert sum(1 for _ in store.commitlog.scan()) == len(placed)


def test_commands_change_nothing(dl, capsys, tmp_path):
    version, root, placed, _ = dl
    before = _snapshot(root)
    out = tmp_path / "out.parquet"
    for argv in (["inspect"], ["messages"], ["queue"], ["check"], ["lag"], ["config"],
                 ["lookup", "--topic", "TopicTest", "--key", "key-1"], ["export", "--to", "parquet", str(out)]):
        assert main([argv[0], str(root), *argv[1:]]) in (0, 1), argv  # 1: lag's finding on 5.3.3
    capsys.readouterr()
    assert _snapshot(root) == before
    import pyarrow.parquet as pq
    assert pq.read_table(out).num_rows == len(placed)


def test_store_switched_to_dledger(tmp_path, version, capsys):
    """Old commit log up to dividedCommitlogOffset, DLedger after it: one log, in offset order."""
    from layoutstores import mixed_dledger_store
    from rmqformats.dledger.commitlog import MixedCommitLog
    root, placed, moved, divided = mixed_dledger_store(version, tmp_path / "store")
    store = rmqformats.open_store(root)
    assert isinstance(store.commitlog, MixedCommitLog) and store.commitlog.divided_offset == divided
    truth = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    old = [t for t in truth if t["commitlogOffset"] < divided]
    scan = store.commitlog.scan(verify_crc=True)
    rows = [api_row(m) for m in scan]
    n, details = count_mismatches(rows[:len(old)], old)
    assert n == 0, details
    n, details = count_mismatches(rows[len(old):], _truth_in_dledger(version, placed, truth[len(old):]))
    assert n == 0, details
    assert scan.end.reason is EndReason.ZERO_TAIL and scan.end.offset == placed[-1].position + placed[-1].size
    for off in (old[-1]["commitlogOffset"], placed[0].message_offset, placed[-1].message_offset):
        assert store.commitlog.read(off).commitlog_offset == off
    assert main(["inspect", str(root), "--format", "json"]) == 0
    import json
    info = json.loads(capsys.readouterr().out)
    assert info["layouts"]["commitLog"] == "file, then dledger" and info["layouts"]["dledgerFrom"] == divided
    assert info["messages"] == len(truth)
    # The record batches are the two walks' columns, the old log's then the DLedger log's: the scan's rows and end.
    objects = list(store.commitlog.scan())
    batches = store.commitlog.batches()
    table = batches.read_all()
    cols = ("commitLogOffset", "topic", "queueId", "queueOffset", "storeTimestamp", "propertiesString", "msgId",
            "tags", "keys", "uniqKey", "body")
    rows = lambda msgs: [(m.commitlog_offset, m.topic, m.queue_id, m.queue_offset, m.store_timestamp,
                          m.properties_raw, m.msg_id, m.tags, m.keys, m.uniq_key, m.decompressed_body()) for m in msgs]
    assert list(zip(*((table.column(c).cast("int64") if c == "storeTimestamp" else table.column(c)).to_pylist()
                           for c in cols))) == rows(objects)
    assert batches.end == scan.end and batches.blanks == scan.blanks
    assert (batches.last_index, batches.last_term) == (placed[-1].index, placed[-1].term)
    for start in (old[len(old) // 2]["commitlogOffset"], placed[0].message_offset):
        got = store.commitlog.to_arrow(["commitLogOffset"], start=start, topic="TopicTest")
        assert got.column(0).to_pylist() == [m.commitlog_offset for m in objects
                                             if m.commitlog_offset >= start and m.topic == "TopicTest"]
    got = store.commitlog.to_arrow(["commitLogOffset"], stop=placed[1].message_offset, jobs=2)
    assert got.column(0).to_pylist() == [m.commitlog_offset for m in objects if m.commitlog_offset < placed[1].message_offset]
    # The entries are the DLedger part's.
    assert main(["dledger", str(root), "--format", "jsonl", "--jobs", "2"]) == 0
    assert [(r["index"], r["entryOffset"]) for r in map(json.loads, capsys.readouterr().out.splitlines())] == \
        [(e.index, e.position) for e in placed]


def test_a_file_that_shrinks_while_read_is_a_typed_error(dl, monkeypatch):
    """Read with pread, never mapped: a shrinking file gives FileChangedError, not SIGBUS."""
    from rmqformats.dledger import commitlog as dlc
    from rmqformats.errors import FileChangedError
    version, root, placed, _ = dl
    monkeypatch.setattr(dlc, "WINDOW", 4096)
    log = rmqformats.open_store(root).commitlog
    scan = log.scan()
    next(scan)
    first = log.segments[0]
    # Cut inside an entry that the first windows do not reach.
    cut = next(e.position for e in placed if e.position > 3 * 4096) + 10
    assert cut < first.size
    os.truncate(first.path, cut)
    with pytest.raises(FileChangedError) as err:
        list(scan)
    assert err.value.path == first.path and err.value.offset <= cut


def test_key_lookup_through_the_index(dl, capsys):
    """The index points at DLedger message offsets; lookup finds what it finds in the plain vector."""
    version, root, placed, moved = dl
    plain = rmqformats.open_store(store_path(version))
    store = rmqformats.open_store(root)
    checked = 0
    for topic, key in (("TopicTest", "key-1"), ("TopicTest", "order-0"), ("TopicMisc", "k1")):
        want = sorted(moved[h.commitlog_offset] for h in plain.lookup(topic, key) if h.message is not None)
        got = sorted(h.commitlog_offset for h in store.lookup(topic, key) if h.message is not None)
        assert got == want
        checked += len(got)
    assert checked > 0
    assert main(["lookup", str(root), "--topic", "TopicTest", "--key", "key-1"]) == 0
    capsys.readouterr()


def test_dledger_data_in_several_folders(tmp_path):
    """A multi-path DLedger store (dataStorePath listing several folders) reads as one log."""
    from layoutstores import SEGMENT_SIZE, vector_records
    from rmqformats.synth.dledger import write_dledger
    version = "rocketmq-5.1.4"
    folders = [str(tmp_path / f"disk{i}" / "data") for i in range(2)]
    placed = write_dledger(tmp_path / "base", [r for _, r in vector_records(version)], SEGMENT_SIZE,
                           data_folders=folders)
    store = rmqformats.open_store(";".join(folders))
    assert isinstance(store.commitlog, DLedgerCommitLog)
    assert {os.path.dirname(s.path) for s in store.commitlog.segments} == set(folders)
    scan = store.commitlog.scan(verify_crc=True)
    n, details = count_mismatches([api_row(m) for m in scan], _truth_in_dledger(version, placed))
    assert n == 0, details
    assert scan.end.reason is EndReason.ZERO_TAIL


def test_inspect_describes_the_dledger_layout(dl, capsys):
    import json
    version, root, placed, _ = dl
    assert main(["inspect", str(root), "--format", "json"]) == 0
    lay = json.loads(capsys.readouterr().out)["layouts"]
    assert lay["commitLog"] == "dledger" and not lay["multiFolder"]
    dli = lay["dledger"]
    assert dli["lastIndex"] == placed[-1].index and dli["indexUnits"] == len(placed) and dli["indexMatchesData"]
    assert dli["checkpoint"] == {"endIndex": placed[-1].index, "committedIndex": placed[-1].index}
    # Broker DLedger mode is deprecated (apache/rocketmq #10641): the fact comes from the DLedger spec.
    dep = lay["dledgerDeprecated"]
    assert dep["release"] == "5.5.1" and dep["spec"] == "formats/rocketmq_dledger_data.ksy"
    assert dep["citation"].startswith("rocketmq-all-5.5.1:") and "controller mode" in dep["doc"]
    assert main(["inspect", str(root)]) == 0
    assert "broker DLedger mode is deprecated from 5.5.1 on" in capsys.readouterr().out


def test_options_the_layout_does_not_support_are_typed_errors(dl):
    version, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    with pytest.raises(rmqformats.RmqFormatError) as err:
        log.scan(salvage=True)
    assert "does not apply to a DLedger commit log" in str(err.value)
    assert log.to_arrow(threads=2, window_size=1 << 20).num_rows == len(placed)


def test_entry_columns_are_the_entries_written(dl):
    """The entry header's fields as columns, beside the message columns and alone, equal the entries the
    construct schemas wrote; without them asked for, the batches hold the message columns alone."""
    from rmqformats.columnar import COLUMNS
    from rmqformats.dledger.columnar import ENTRY_COLUMNS
    _, root, placed, _ = dl
    log = rmqformats.open_store(root).commitlog
    written = {"entryIndex": [e.index for e in placed], "entryTerm": [e.term for e in placed],
               "entryPosition": [e.position for e in placed], "entrySize": [e.size for e in placed],
               "entryChannel": [0] * len(placed), "entryChainCrc": [0] * len(placed),
               "entryBodyCrc": [0] * len(placed)}
    both = log.batches(["msgId", *ENTRY_COLUMNS, "commitLogOffset"], batch_size=29).read_all()
    assert both.schema.names == ["commitLogOffset", "msgId", *ENTRY_COLUMNS]
    assert {c: both.column(c).to_pylist() for c in ENTRY_COLUMNS} == written
    assert both.column("commitLogOffset").to_pylist() == [e.message_offset for e in placed]
    assert [str(t) for t in both.schema.types[2:]] == ["int64"] * 3 + ["int32"] * 4
    alone = log.batches(["entryTerm", "entryIndex"], topic="TopicTest").read_all()
    kept = [m.commitlog_offset for m in log.scan() if m.topic == "TopicTest"]
    assert 0 < len(kept) < len(placed)
    assert alone.column("entryIndex").to_pylist() == [e.index for e in placed if e.message_offset in set(kept)]
    assert log.batches().schema.names == list(COLUMNS)
    with pytest.raises(ValueError, match="unknown column.*'entryIdx'.*entryIndex"):
        log.batches(["entryIdx"])
    with pytest.raises(ValueError, match="unknown column.*'entryIndex'"):  # a plain commit log has no entries
        rmqformats.open_store(store_path(dl[0])).commitlog.batches(["entryIndex"])


def test_dledger_command(dl, capsys):
    import json
    version, root, placed, _ = dl
    assert main(["dledger", str(root), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # the entry's offset in the log's byte stream (the file's pos field), its message's commit-log offset
    assert [(r["index"], r["term"], r["entryOffset"], r["size"], r["commitLogOffset"]) for r in rows] == \
        [(e.index, e.term, e.position, e.size, e.message_offset) for e in placed]
    assert "pos" not in rows[0]
    # Every field, as the object API's entries have them (held to the truth above).
    assert rows == [{"index": e.index, "term": e.term, "entryOffset": e.position, "size": e.size,
                     "channel": e.channel, "chainCrc": e.chain_crc, "bodyCrc": e.body_crc, "file": e.segment,
                     "fileOffset": e.file_offset, "commitLogOffset": e.message.commitlog_offset,
                     "topic": e.message.topic, "queueId": e.message.queue_id, "queueOffset": e.message.queue_offset,
                     "storeTimestamp": e.message.store_timestamp, "msgId": e.message.msg_id}
                    for e in rmqformats.open_store(root).commitlog.entries()]
    assert main(["dledger", str(root), "--from-index", "5", "--limit", "3"]) == 0
    header, *table = capsys.readouterr().out.splitlines()
    assert len(table) == 3 and header.split()[:5] == ["index", "term", "entryOffset", "size", "commitLogOffset"]
    assert [int(line.split()[2]) for line in table] == [e.position for e in placed if e.index >= 5][:3]
    assert main(["dledger", str(root), "--check-index"]) == 0
    assert "agrees" in capsys.readouterr().out
    assert main(["dledger", str(store_path(version))]) == 2
    assert "not a DLedger commit log" in capsys.readouterr().err


@pytest.mark.parametrize("at,value,reason", [
    (48 + 8, (9).to_bytes(4, "big"), EndReason.CRC_MISMATCH),  # BODYCRC, read with verify_crc
    (48 + 4, (9).to_bytes(4, "big"), EndReason.BAD_MAGIC),  # the record's MAGICCODE
    (48, (9).to_bytes(4, "big"), EndReason.BAD_SIZE),  # TOTALSIZE other than the entry's body length
    (8, (9).to_bytes(8, "big"), DLedgerEndReason.INDEX_GAP),
])
def test_batches_and_objects_end_alike_on_damaged_entries(dl, at, value, reason):
    """The batches and the object view are one walk: the entries before the damaged one, then the same end
    and the same strict error."""
    version, root, placed, _ = dl
    k = len(placed) // 2
    log, e, seg = _last_file_entry(root, placed, k)
    where = e.position - seg.start_offset
    _damage(seg.path, where + at, value)
    log = rmqformats.open_store(root).commitlog
    options = {"verify_crc": True} if reason is EndReason.CRC_MISMATCH else {}
    scan = log.scan(**options)
    objects = list(scan)
    batches = log.batches(batch_size=7, **options)
    table = batches.read_all()
    assert [m.commitlog_offset for m in objects] == [p.message_offset for p in placed[:k]]
    assert table.column("commitLogOffset").to_pylist() == [p.message_offset for p in placed[:k]]
    assert table.column("body").to_pylist() == [m.body for m in objects]
    assert batches.end == scan.end and scan.end.reason is reason and scan.end.offset == e.position
    assert (batches.last_index, batches.last_term) == (scan.last_index, scan.last_term) == \
        (placed[k - 1].index, placed[k - 1].term)
    with pytest.raises(rmqformats.RmqFormatError) as from_objects:
        list(log.scan(strict=True, **options))
    with pytest.raises(rmqformats.RmqFormatError) as from_batches:
        log.to_arrow(strict=True, **options)
    assert type(from_batches.value) is type(from_objects.value)
    assert (from_batches.value.path, from_batches.value.offset, from_batches.value.reason) == \
        (from_objects.value.path, from_objects.value.offset, from_objects.value.reason)
    assert from_batches.value.path == seg.path
    assert from_batches.value.offset == (where if at == 8 else where + 48)
