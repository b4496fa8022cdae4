"""Salvage scans of damaged copies of the vector stores: every intact message, every damaged range at its offset."""

from __future__ import annotations

import os
import random
import struct

import pytest

import rmqformats
from rmqformats.commitlog import CommitLog
from rmqformats.recovery.salvage import DamagedRange

from conftest import truth_records


def _messages(version):
    return [t for t in truth_records(version) if t["kind"] == "MESSAGE"]


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _read(path, offset, n):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(n)


def _seg_messages(version, name):
    return [t for t in _messages(version) if t["file"] == name]


def _first_segment(version):
    return _messages(version)[0]["file"]


# -- the ways a commit log gets damaged: each returns (damaged record offsets, expected range starts) -------------

def flipped_magic(store, version, k=40):
    rec = _seg_messages(version, _first_segment(version))[k]
    seg = store / "commitlog" / rec["file"]
    magic = _read(seg, rec["fileOffset"] + 4, 4)
    _patch(seg, rec["fileOffset"] + 4, bytes([magic[0] ^ 0x01]) + magic[1:])
    return {rec["commitlogOffset"]}, [rec["commitlogOffset"]]


def bad_size(store, version, k=60):
    rec = _seg_messages(version, _first_segment(version))[k]
    _patch(store / "commitlog" / rec["file"], rec["fileOffset"], struct.pack(">i", 100))
    return {rec["commitlogOffset"]}, [rec["commitlogOffset"]]


def zero_hole(store, version, k=80):
    recs = _seg_messages(version, _first_segment(version))
    a, c = recs[k], recs[k + 2]
    start, end = a["fileOffset"] + 10, c["fileOffset"] + c["totalSize"] - 5  # cuts records k and k+2 in the middle
    _patch(store / "commitlog" / a["file"], start, bytes(end - start))
    return {recs[k + i]["commitlogOffset"] for i in range(3)}, [a["commitlogOffset"]]


def zeroed_header(store, version, k=100):
    rec = _seg_messages(version, _first_segment(version))[k]
    _patch(store / "commitlog" / rec["file"], rec["fileOffset"], bytes(8))
    return {rec["commitlogOffset"]}, [rec["commitlogOffset"]]


def torn_last(store, version):
    rec = _messages(version)[-1]
    half = rec["totalSize"] // 2
    _patch(store / "commitlog" / rec["file"], rec["fileOffset"] + half, bytes(rec["totalSize"] - half))
    return {rec["commitlogOffset"]}, [rec["commitlogOffset"]]


def overwritten(store, version, k=120):
    recs = _seg_messages(version, _first_segment(version))
    a, b = recs[k], recs[k + 2]
    start, end = a["fileOffset"] + 3, b["fileOffset"] + 7
    noise = random.Random(7).randbytes(end - start)
    _patch(store / "commitlog" / a["file"], start, noise)
    return {a["commitlogOffset"], recs[k + 1]["commitlogOffset"], b["commitlogOffset"]}, [a["commitlogOffset"]]


def missing_segment(store, version):
    name = "00000000000000524288"
    os.remove(store / "commitlog" / name)
    return {t["commitlogOffset"] for t in _seg_messages(version, name)}, [524288]


def tail_never_written(store, version):
    name = "00000000000000262144"  # a full segment: its big record, then the BLANK
    recs = _seg_messages(version, name)
    seg = store / "commitlog" / name
    rec = recs[0]
    _patch(seg, rec["fileOffset"] + 40_000, bytes(os.path.getsize(seg) - rec["fileOffset"] - 40_000))
    return {rec["commitlogOffset"]}, [rec["commitlogOffset"]]


DAMAGES = {f.__name__: f for f in (flipped_magic, bad_size, zero_hole, zeroed_header, torn_last, overwritten,
                                   missing_segment, tail_never_written)}


def _object_salvage(store, **kw):
    scan = rmqformats.open_store(store).commitlog.scan(salvage=True, **kw)
    msgs = list(scan)
    return msgs, scan


def _columnar_salvage(store, **kw):
    scan = rmqformats.open_store(store).commitlog.batches(["commitLogOffset", "topic", "body"], salvage=True,
                                                          decompress=False, **kw)
    table = scan.read_all()
    return table, scan


def _check(store, version, damaged, starts, **kw):
    truth = _messages(version)
    expected = [t for t in truth if t["commitlogOffset"] not in damaged]
    msgs, scan = _object_salvage(store, **kw)
    assert [m.commitlog_offset for m in msgs] == [t["commitlogOffset"] for t in expected]
    for m, t in zip(msgs, expected):  # every field as RocketMQ decoded it
        assert (m.topic, m.queue_id, m.queue_offset, m.store_timestamp, m.body_raw.hex(), m.properties) == \
               (t["topic"], t["queueId"], t["queueOffset"], t["storeTimestamp"],
                __import__("base64").b64decode(t["bodyRawBase64"]).hex(), t["properties"])
    assert [r.commitlog_offset for r in scan.damaged] == starts
    for r in scan.damaged:
        assert isinstance(r, DamagedRange) and r.length > 0
        assert r.commitlog_offset == int(os.path.basename(r.segment)) + r.file_offset
        for m in msgs:  # no message returned from inside a damaged range
            assert m.commitlog_offset + m.store_size <= r.commitlog_offset or \
                m.commitlog_offset >= r.commitlog_offset + r.length
    for off in damaged:  # each damaged record starts inside a range
        assert any(r.commitlog_offset <= off < r.commitlog_offset + r.length for r in scan.damaged), off
    assert scan.end.reason.is_clean
    # The columnar decoder: the same messages, ranges and end.
    table, cscan = _columnar_salvage(store, **kw)
    assert table.column("commitLogOffset").to_pylist() == [m.commitlog_offset for m in msgs]
    assert table.column("body").to_pylist() == [m.body_raw for m in msgs]
    assert cscan.damaged == scan.damaged
    assert cscan.end == scan.end
    return scan


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_each_damage_alone(store_copy, version, damage):
    damaged, starts = DAMAGES[damage](store_copy, version)
    scan = _check(store_copy, version, damaged, starts, verify_crc=damage == "overwritten")
    if damage == "missing_segment":
        (r,) = scan.damaged
        assert (r.file_offset, r.length, os.path.basename(r.segment)) == (0, 262144, "00000000000000524288")
        assert "missing" in r.reason
    if damage == "flipped_magic":
        (r,) = scan.damaged
        rec = next(t for t in _messages(version) if t["commitlogOffset"] == starts[0])
        assert r.length == rec["totalSize"] and "bad magic" in r.reason


def test_several_at_once(store_copy, version):
    damaged, starts = set(), []
    for name in ("flipped_magic", "zero_hole", "overwritten", "missing_segment", "tail_never_written", "torn_last"):
        d, s = DAMAGES[name](store_copy, version)
        damaged |= d
        starts += s
    _check(store_copy, version, damaged, sorted(starts), verify_crc=True)


def test_clean_store_salvage_is_the_plain_scan(version):
    from conftest import store_path
    log = rmqformats.open_store(store_path(version)).commitlog
    plain = log.scan()
    offsets = [m.commitlog_offset for m in plain]
    scan = log.scan(salvage=True)
    assert [m.commitlog_offset for m in scan] == offsets
    assert scan.damaged == [] and scan.end == plain.end and len(scan.blanks) == len(plain.blanks)


# -- a body that is itself a commit-log record --------------------------------------------------------------------

def _embed(store, version, forge: bool):
    """Copy a real record into the body of the big record of the second segment; optionally forge its offset."""
    big = _seg_messages(version, "00000000000000262144")[0]
    small = _messages(version)[3]
    record = bytearray(_read(store / "commitlog" / small["file"], small["fileOffset"], small["totalSize"]))
    seg = store / "commitlog" / big["file"]
    body_at = big["fileOffset"] + big["totalSize"] - big["bodyLength"] - len(big["topic"].encode()) - 3 - \
        len(big["propertiesString"].encode())
    places = [body_at + 1000, body_at + 5000]
    for at in places:
        rec = bytearray(record)
        if forge:  # the offset this copy sits at, as a real record there would store
            rec[28:36] = struct.pack(">q", big["commitlogOffset"] - big["fileOffset"] + at)
        _patch(seg, at, bytes(rec))
    return big, places


@pytest.mark.parametrize("forge", [False, True], ids=["copied", "forged-offset"])
@pytest.mark.parametrize("damage", ["magic", "size"])
def test_records_inside_a_body_are_never_taken(store_copy, version, forge, damage):
    big, places = _embed(store_copy, version, forge)
    seg = store_copy / "commitlog" / big["file"]
    # Undamaged, the body is just a body: the plain scan gives every message of the truth.
    log = CommitLog(store_copy / "commitlog")
    assert [m.commitlog_offset for m in log.scan()] == [t["commitlogOffset"] for t in _messages(version)]
    if damage == "magic":
        _patch(seg, big["fileOffset"] + 4, b"\x00\x00\x00\x01")
    else:
        _patch(seg, big["fileOffset"], struct.pack(">i", big["totalSize"] + 3))
    scan = _check(store_copy, version, {big["commitlogOffset"]}, [big["commitlogOffset"]])
    (r,) = scan.damaged
    assert r.length == big["totalSize"]  # up to the segment's BLANK record, past both copies


def test_resync_is_linear_in_record_lookalikes(tmp_path):
    """A segment full of magic codes with wrong offsets: each candidate costs a constant, none is taken."""
    from rmqformats.commitlog import next_record_start
    pattern = struct.pack(">iI", 300, 0xDAA320A7) + bytes(20) + struct.pack(">q", 12345)
    buf = pattern * 40_000
    assert next_record_start(buf, 0, len(buf), 0, len(buf)) is None


# -- exit statuses ---------------------------------------------------------------------------------------------

def _cli(capsys, *argv):
    from rmqformats.cli import main
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", ["messages", "inspect", "export"])
def test_exit_statuses(tmp_path, store_copy, capsys, command, version):
    from rmqformats.cli import status

    def run(*extra):
        args = [command, store_copy, *extra]
        if command == "export":
            args += ["--to", "jsonl", tmp_path / f"out{len(os.listdir(tmp_path))}.jsonl"]
        return _cli(capsys, *args)
    code, _, err = run()
    assert code == status.OK and "damaged" not in err
    damaged, starts = flipped_magic(store_copy, version)
    code, out, err = run()
    assert code == status.DAMAGED
    if command != "inspect":
        assert "data ends early" in err and "bad magic" in err
    code, out, err = run("--salvage")
    assert code == status.DAMAGED
    assert "damaged range skipped: " in err and f"0x{starts[0]:x}" in err
    if command == "inspect":
        assert "damaged    1 ranges skipped" in out
        code, out, _ = run("--salvage", "--format", "json")
        import json
        info = json.loads(out)
        assert [r["commitLogOffset"] for r in info["damaged"]] == starts
        assert info["messages"] == len(_messages(version)) - 1
    if command == "messages":
        code, out, _ = run("--salvage", "--format", "jsonl")
        assert len(out.splitlines()) == len(_messages(version)) - 1


def test_exit_status_zeroed_header(store_copy, capsys, version):
    from rmqformats.cli import status
    zeroed_header(store_copy, version)
    code, out, err = _cli(capsys, "messages", store_copy)
    assert code == status.DAMAGED and "data follows" in err
    code, out, err = _cli(capsys, "inspect", store_copy)
    assert code == status.DAMAGED and "data follows" in out


def test_columnar_salvage_in_parallel_byte_ranges(store_copy, version):
    """Several threads decoding byte ranges find the same messages, ranges and end as the object API."""
    for name in ("flipped_magic", "zero_hole", "overwritten", "torn_last"):
        DAMAGES[name](store_copy, version)
    msgs, scan = _object_salvage(store_copy, verify_crc=True)
    log = rmqformats.open_store(store_copy).commitlog
    cscan = log.batches(["commitLogOffset"], salvage=True, verify_crc=True, threads=2, range_size=4096)
    assert cscan.read_all().column("commitLogOffset").to_pylist() == [m.commitlog_offset for m in msgs]
    assert cscan.damaged == scan.damaged and cscan.end == scan.end


@pytest.mark.parametrize("command", ["messages", "inspect", "export"])
def test_a_missing_segment_file_is_damage_without_salvage_too(tmp_path, store_copy, capsys, command):
    """A plain scan crosses the gap as the broker's recovery does; the exit status still says damage."""
    from rmqformats.cli import status
    missing_segment(store_copy, "rocketmq-5.3.3")
    args = [command, store_copy] + (["--to", "jsonl", tmp_path / "o.jsonl"] if command == "export" else [])
    code, out, err = _cli(capsys, *args)
    assert code == status.DAMAGED
    if command != "inspect":
        assert "00000000000000524288 @ 0x0: 262,144 bytes skipped" in err and "missing" in err
    else:
        assert "gap: 00000000000000262144 ends at offset 524288" in out
