"""``rmqformats cut``: pieces of a segment cut at record boundaries, read to the end by the generated parsers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kaitaistruct import KaitaiStream

from rmqformats.cli import main, status
from rmqformats.cli.cut import find_cut
from rmqformats.generated.kaitai.rocketmq_commitlog import RocketmqCommitlog

from conftest import VERSIONS, store_path, truth_records
from test_javascript import parsers, run_js  # noqa: F401  (the module fixture)

FIRST = "00000000000000000000"


def _kaitai_records(path) -> list:
    with RocketmqCommitlog.from_file(str(path)) as k:
        return [(r.len_record, r.body.topic if r.is_message else None) for r in k.records]


def _truth_prefix(version: str, n: int) -> list:
    rows = [t for t in truth_records(version) if t["file"] == FIRST][:n]
    assert all(t["kind"] == "MESSAGE" for t in rows)
    return [(t["totalSize"], t["topic"]) for t in rows]


@pytest.mark.parametrize("version", VERSIONS)
def test_pieces_parse_to_the_end_in_python_and_javascript(parsers, tmp_path, version, capsys):  # noqa: F811
    segment = store_path(version) / "commitlog" / FIRST
    data = segment.read_bytes()
    pieces = []
    for option, n in (("--bytes", 1000), ("--bytes", 20_000), ("--bytes", 40_000), ("--records", 1),
                      ("--records", 50)):
        out = tmp_path / f"piece{option}{n}"
        assert main(["cut", str(segment), option, str(n), "-o", str(out)]) == status.OK
        piece = out.read_bytes()
        assert data.startswith(piece)
        if option == "--bytes":
            assert len(piece) <= n
        records = _kaitai_records(out)
        assert records == _truth_prefix(version, len(records))
        if option == "--records":
            assert len(records) == n
        else:  # the next record would not have fitted
            nxt = _truth_prefix(version, len(records) + 1)[-1][0]
            assert len(piece) + nxt > n
        pieces.append((out, records))
    assert "records" in capsys.readouterr().out
    for (out, records), d in zip(pieces, run_js(parsers, "rocketmq_commitlog", [p for p, _ in pieces], tmp=tmp_path)):
        assert [(r["len_record"], r["body"]["topic"]) for r in d["records"]] == records
        assert all(r["is_message"] for r in d["records"])


def test_a_piece_cut_at_a_byte_count_is_what_the_parsers_reject(parsers, tmp_path):  # noqa: F811
    """Why the command exists: `head -c` ends in half a record."""
    segment = store_path("rocketmq-5.1.4") / "commitlog" / FIRST
    raw = tmp_path / "raw"
    raw.write_bytes(segment.read_bytes()[:20_000])
    with pytest.raises(EOFError):
        _kaitai_records(raw)
    [d] = run_js(parsers, "rocketmq_commitlog", [raw], tmp=tmp_path, allow_errors=True)
    assert "EOF" in d["_error"] or "eof" in d["_error"].lower(), d


def test_byte_cuts_on_a_boundary_or_in_the_blank_padding_parse(parsers, tmp_path):  # noqa: F811
    """What the Web IDE guide says of `head -c`: a cut on a record boundary, or 8 bytes or more into
    the BLANK record (its padding is never parsed), reads cleanly; a cut in its 8-byte header does not."""
    segment = store_path("rocketmq-5.1.4") / "commitlog" / FIRST
    data = segment.read_bytes()
    sizes = [t["totalSize"] for t in truth_records("rocketmq-5.1.4") if t["file"] == FIRST and t["kind"] == "MESSAGE"]
    blank_at = sum(sizes)
    assert int.from_bytes(data[blank_at + 4:blank_at + 8], "big") == 0xCBD43194  # the BLANK record
    clean = {"boundary": (sum(sizes[:3]), 3), "blank header": (blank_at + 8, len(sizes) + 1),
             "blank padding": (blank_at + 100, len(sizes) + 1)}
    paths = []
    for name, (n, records) in clean.items():
        path = tmp_path / name.replace(" ", "-")
        path.write_bytes(data[:n])
        got = _kaitai_records(path)
        assert len(got) == records and [s for s, _ in got[:len(sizes)]] == sizes[:records], name
        paths.append(path)
    for d, (name, (_, records)) in zip(run_js(parsers, "rocketmq_commitlog", paths, tmp=tmp_path), clean.items()):
        assert len(d["records"]) == records, name
    half = tmp_path / "half-header"
    half.write_bytes(data[:blank_at + 6])
    with pytest.raises(EOFError):
        _kaitai_records(half)


def test_records_past_the_end_of_the_data_stop_at_the_blank(tmp_path, capsys):
    segment = store_path("rocketmq-5.1.4") / "commitlog" / FIRST
    n = len([t for t in truth_records("rocketmq-5.1.4") if t["file"] == FIRST and t["kind"] == "MESSAGE"])
    out = tmp_path / "all"
    assert main(["cut", str(segment), "--records", "100000", "-o", str(out)]) == status.OK
    assert len(_kaitai_records(out)) == n
    assert f"data ends after {n} records (blank)" in capsys.readouterr().err


def test_damage_ends_the_piece_with_status_3(tmp_path, capsys):
    segment = tmp_path / FIRST
    shutil.copy(store_path("rocketmq-5.1.4") / "commitlog" / FIRST, segment)
    sizes = [t["totalSize"] for t in truth_records("rocketmq-5.1.4") if t["file"] == FIRST][:3]
    bad_at = sizes[0] + sizes[1]
    with open(segment, "r+b") as f:
        f.seek(bad_at + 4)
        f.write(b"\x12\x34\x56\x78")
    out = tmp_path / "piece"
    assert main(["cut", str(segment), "--records", "10", "-o", str(out)]) == status.DAMAGED
    assert out.stat().st_size == bad_at and len(_kaitai_records(out)) == 2
    assert f"{segment} @ {bad_at:#x}: bad magic 0x12345678" in capsys.readouterr().err
    # A segment that is itself cut mid-record: the piece ends before the cut record.
    short = tmp_path / "short"
    short.write_bytes((store_path("rocketmq-5.1.4") / "commitlog" / FIRST).read_bytes()[:sizes[0] + 10])
    assert find_cut(str(short), records=5)[:3] == (sizes[0], 1, "damage")


def test_usage_errors(tmp_path, capsys):
    segment = store_path("rocketmq-5.1.4") / "commitlog" / FIRST
    assert main(["cut", str(segment), "--bytes", "100", "-o", str(tmp_path / "x")]) == status.ERROR
    assert "first record is larger than 100 bytes" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    copy = tmp_path / "seg"
    shutil.copy(segment, copy)
    assert main(["cut", str(copy), "--records", "1", "-o", str(copy)]) == status.ERROR
    assert copy.read_bytes() == segment.read_bytes()
    assert main(["cut", str(tmp_path / "missing"), "--records", "1", "-o", str(tmp_path / "y")]) == status.ERROR
    capsys.readouterr()
    zeros = tmp_path / "zeros"
    zeros.write_bytes(bytes(4096))
    assert main(["cut", str(zeros), "--records", "1", "-o", str(tmp_path / "z")]) == status.ERROR
    assert "not a commit-log segment" in capsys.readouterr().err
    (tmp_path / "log").mkdir()
    zeros = zeros.rename(tmp_path / "log" / FIRST)  # a preallocated segment: named as one, zero-filled
    assert main(["cut", str(zeros), "--records", "1", "-o", str(tmp_path / "z")]) == status.ERROR
    assert "zero-filled" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["cut", str(segment), "--records", "1", "--bytes", "10", "-o", str(tmp_path / "w")])


def test_the_web_ides_debug_build_reads_a_piece(tmp_path):
    """The Web IDE compiles in debug mode (no read in the constructor) and calls _read() itself."""
    ksc = Path(__file__).resolve().parents[1] / "tools" / "ksc"
    out = tmp_path / "dbg"
    spec = Path(__file__).resolve().parents[1] / "formats" / "rocketmq_commitlog.ksy"
    subprocess.run(["node", str(ksc / "compile.js"), "--lang", "javascript", "--debug", "--out", str(out), str(spec)],
                   check=True, capture_output=True)
    piece = tmp_path / "piece"
    segment = store_path("rocketmq-5.3.3") / "commitlog" / FIRST
    assert main(["cut", str(segment), "--bytes", "30000", "-o", str(piece)]) == status.OK
    script = f"""
        const KaitaiStream = require('kaitai-struct/KaitaiStream');
        const R = require({str(out / 'RocketmqCommitlog.js')!r}).RocketmqCommitlog;
        const data = require('fs').readFileSync({str(piece)!r});
        const r = new R(new KaitaiStream(new Uint8Array(data).buffer));
        r._read();
        console.log(JSON.stringify(r.records.map(x => [x.lenRecord, x.body.topic, x._debug.body.end])));
    """
    env = {"NODE_PATH": str(ksc / "node_modules"), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.run(["node", "-e", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)
    assert [r[:2] for r in records] == [list(r) for r in _kaitai_records(piece)]
    assert sum(r[0] for r in records) == piece.stat().st_size
