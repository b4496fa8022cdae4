"""``rmqformats cut`` on timer wheels and index files: pieces the unchanged specs read to the end, with the values of
the same slots and entries of the whole file."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from kaitaistruct import KaitaiStream

from rmqformats.cli import main, status
from rmqformats.generated.kaitai.rocketmq_index_file import RocketmqIndexFile
from rmqformats.generated.kaitai.rocketmq_timer_wheel import RocketmqTimerWheel
from rmqformats.timer import SLOT_DTYPE

from conftest import FIXTURES, VERSIONS, store_path
from test_javascript import parsers, run_js  # noqa: F401  (the module fixture)

WHEEL_FIELDS = ("time_units", "ofs_first", "ofs_last", "num_messages", "reserved")
ENTRY_FIELDS = ("key_hash", "ofs_physical", "time_diff", "prev_index")
HEADER_FIELDS = ("begin_timestamp", "end_timestamp", "ofs_begin_physical", "ofs_end_physical",
                 "num_hash_slots_used", "next_index")


def _slots_of_whole_wheel(path: Path, first: int, count: int) -> list[tuple]:
    """Slots ``first .. first + count - 1`` of a wheel, each parsed by the spec's slot type at its place in the file."""
    with open(path, "rb") as f:
        io = KaitaiStream(f)
        out = []
        for i in range(first, first + count):
            io.seek(i * 32)
            s = RocketmqTimerWheel.Slot(io)
            out.append(tuple(getattr(s, n) for n in WHEEL_FIELDS))
        return out


def _wheel_piece_slots(piece: Path) -> list[tuple]:
    with RocketmqTimerWheel.from_file(str(piece)) as k:
        assert k._io.is_eof()
        return [tuple(getattr(s, n) for n in WHEEL_FIELDS) for s in k.slots]


def test_the_used_slots_of_a_timer_wheel(tmp_path, capsys):
    wheel = store_path("rocketmq-5.3.3") / "timerwheel"
    truth = json.loads((FIXTURES / "rocketmq-5.3.3" / "truth" / "timer.json").read_text())["nonEmptySlots"]
    out = tmp_path / "piece"
    assert main(["cut", str(wheel), "--used", "-o", str(out)]) == status.OK
    first, last = truth[0]["slotIndex"], truth[-1]["slotIndex"]
    assert f"slots {first}..{last} of {wheel}" in capsys.readouterr().out
    assert out.stat().st_size == (last - first + 1) * 32 < 3 << 20  # 38.7 MB -> 2.7 MB
    slots = _wheel_piece_slots(out)
    assert len(slots) == last - first + 1
    # Every used slot of the piece is RocketMQ's non-empty slot at the same place, field for field.
    used = {first + i: s for i, s in enumerate(slots) if s[0] != 0}
    assert used == {t["slotIndex"]: (t["timeMs"] // 1000, t["firstPos"], t["lastPos"], t["num"], t["magic"])
                    for t in truth}
    # And every slot, used or not, equals the whole wheel's (read at its place by the spec's slot type).
    whole = np.fromfile(wheel, dtype=SLOT_DTYPE)[first:last + 1]
    assert slots == [tuple(int(x) for x in row) for row in whole.tolist()]


def test_a_slot_range_of_a_timer_wheel(tmp_path, capsys):
    wheel = store_path("rocketmq-5.3.3") / "timerwheel"
    out = tmp_path / "piece"
    assert main(["cut", str(wheel), "--slots", "330620:330640", "-o", str(out)]) == status.OK
    assert _wheel_piece_slots(out) == _slots_of_whole_wheel(wheel, 330620, 20)
    # A range past the end is cut at the last slot, and says so.
    end = tmp_path / "end"
    assert main(["cut", str(wheel), "--slots", "1209590:1300000", "-o", str(end)]) == status.OK
    assert "the piece ends at slot 1209599" in capsys.readouterr().err
    assert _wheel_piece_slots(end) == _slots_of_whole_wheel(wheel, 1209590, 10)
    assert main(["cut", str(wheel), "--slots", "1209600:1209601", "-o", str(tmp_path / "none")]) == status.ERROR
    assert "past the wheel's last slot 1209599" in capsys.readouterr().err


def _index(path: Path) -> dict:
    """Header, hash slots, entries and last entry of an index file, by the spec's top-level type."""
    with RocketmqIndexFile.from_file(str(path)) as k:
        assert k.is_size_consistent
        out = {
            "header": tuple(getattr(k.header, n) for n in HEADER_FIELDS),
            "slots": [s.latest_index for s in k.tables.hash_slots],
            "entries": [tuple(getattr(e, n) for n in ENTRY_FIELDS) for e in k.tables.entries],
            "last_entry": None if k.last_entry is None else tuple(getattr(k.last_entry, n) for n in ENTRY_FIELDS),
        }
        # The tables end at the end of the file: nothing is left over or cut short.
        assert 40 + 4 * len(out["slots"]) + 20 * len(out["entries"]) == k._io.size()
        return out


def _chain(index: dict, first_slot: int, slot: int) -> list[tuple]:
    """The entries of a slot's chain, newest first, as a lookup walks them (values 1 .. next_index - 1)."""
    limit, out = index["header"][-1], []
    e = index["slots"][slot - first_slot]
    while 0 < e < limit and len(out) <= limit:
        out.append((e, index["entries"][e]))
        e = index["entries"][e][3]
    return out


def _index_files(version: str) -> list[Path]:
    return sorted((store_path(version) / "index").iterdir())


@pytest.mark.parametrize("version", VERSIONS)
def test_the_first_entries_of_an_index_file(tmp_path, version):
    for path in _index_files(version):
        whole = _index(path)
        out = tmp_path / f"{path.name}.piece"
        assert main(["cut", str(path), "--entries", "20", "-o", str(out)]) == status.OK
        piece = _index(out)
        assert out.stat().st_size == 40 + 5 * 84
        assert piece["header"] == whole["header"]
        assert piece["slots"] == whole["slots"][:5]
        assert piece["entries"] == whole["entries"][:20]
        next_index = whole["header"][-1]
        assert piece["last_entry"] == (whole["last_entry"] if next_index <= 20 else None)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_slot_range_of_an_index_file_holds_its_chains(tmp_path, version, capsys):
    for path in _index_files(version):
        whole = _index(path)
        followed = 0
        for a, b in ((0, 1), (3, 5), (60, 64)):
            out = tmp_path / f"{path.name}.{a}"
            assert main(["cut", str(path), "--slots", f"{a}:{b}", "-o", str(out)]) == status.OK
            printed = capsys.readouterr().out
            piece = _index(out)
            first = int(printed.split("hash slots ")[1].split("..")[0])
            k = len(piece["slots"])
            assert k >= b - a and first <= a and first + k >= b
            assert piece["slots"] == whole["slots"][first:first + k]
            assert piece["entries"] == whole["entries"][:4 * k]
            assert piece["header"] == whole["header"]
            for slot in range(a, b):  # every chain of the slots asked for is whole in the piece
                chain = _chain(piece, first, slot)
                assert chain == _chain(whole, 0, slot)
                assert all(e < 4 * k for e, _ in chain)
                followed += len(chain)
        assert followed > 0  # the ranges hold chains, not only empty slots


def _custom_index(path: Path, slots: int, entries: int) -> None:
    """An index file of a broker with fewer than four entries per slot: a chain through slot 9 of every entry."""
    header = struct.pack(">qqqqii", 1000, 2000, 0, 100 * (entries - 1), 1, entries)
    table = [0] * slots
    table[9] = entries - 1
    body = b"".join(struct.pack(">iqii", 0 if n == 0 else 9, 0 if n == 0 else 100 * n, 0, n - 1 if n > 1 else 0)
                    for n in range(entries))
    path.write_bytes(header + struct.pack(f">{slots}i", *table) + body)


def test_an_index_file_of_another_ratio(tmp_path, capsys):
    """A broker with two entries per slot: the piece keeps the spec's four, zero-filling entries the file lacks."""
    path = tmp_path / "20261122195022317"
    _custom_index(path, 10, 20)
    written = [(0 if n == 0 else 9, 0 if n == 0 else 100 * n, 0, n - 1 if n > 1 else 0) for n in range(20)]
    out = tmp_path / "piece"
    assert main(["cut", str(path), "--slots", "9:10", "--hash-slots", "10", "-o", str(out)]) == status.OK
    assert "slots 9..9 reach entry 19: the piece holds 5 slots and entries 0..19" in capsys.readouterr().err
    piece = _index(out)
    # Entry 19 needs 5 slots of 4 entries: the file's slots 5..9 (the range widened back from the last slot).
    assert piece["slots"] == [0, 0, 0, 0, 19] and piece["entries"] == written
    assert [e for e, _ in _chain(piece, 5, 9)] == list(range(19, 0, -1))
    every = tmp_path / "every"
    assert main(["cut", str(path), "--slots", "0:10", "--index-num", "20", "-o", str(every)]) == status.OK
    assert "entries 20..39 of the piece are zero-filled" in capsys.readouterr().err
    piece = _index(every)
    assert piece["slots"] == [0] * 9 + [19] and piece["entries"] == written + [(0, 0, 0, 0)] * 20
    # Without the counts the size fits no known ratio: a one-line error.
    assert main(["cut", str(path), "--slots", "0:10", "-o", str(tmp_path / "x")]) == status.ERROR
    assert "maxHashSlotNum" in capsys.readouterr().err


def test_existing_output_is_refused_without_force(tmp_path, capsys):
    wheel = store_path("rocketmq-5.3.3") / "timerwheel"
    segment = store_path("rocketmq-5.3.3") / "commitlog" / "00000000000000000000"
    out = tmp_path / "piece"
    out.write_bytes(b"keep")
    for args in (["--slots", "0:4"], ["--records", "1"]):
        src = wheel if args[0] == "--slots" else segment
        assert main(["cut", str(src), *args, "-o", str(out)]) == status.ERROR
        assert f"{out}: exists and is not empty (--force overwrites it)" in capsys.readouterr().err
        assert out.read_bytes() == b"keep"
    assert main(["cut", str(wheel), "--slots", "0:4", "-o", str(out), "--force"]) == status.OK
    assert out.stat().st_size == 128


def test_options_that_do_not_cut_the_file_kind(tmp_path, capsys):
    index = _index_files("rocketmq-5.3.3")[0]
    wheel = store_path("rocketmq-5.3.3") / "timerwheel"
    segment = store_path("rocketmq-5.3.3") / "commitlog" / "00000000000000000000"
    for src, args, text in ((index, ["--records", "3"], "--records does not cut an index file"),
                            (index, ["--used"], "--used does not cut an index file"),
                            (wheel, ["--entries", "3"], "--entries does not cut a timer wheel"),
                            (segment, ["--slots", "1:3"], "--slots does not cut a commit-log segment")):
        assert main(["cut", str(src), *args, "-o", str(tmp_path / "x")]) == status.ERROR
        assert text in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_the_javascript_parsers_read_the_pieces(parsers, tmp_path):  # noqa: F811
    """The Web IDE runs the JavaScript parsers: they read the pieces to the end with the same values."""
    wheel = store_path("rocketmq-5.3.3") / "timerwheel"
    wheel_piece = tmp_path / "wheel"
    assert main(["cut", str(wheel), "--slots", "330620:330640", "-o", str(wheel_piece)]) == status.OK
    [d] = run_js(parsers, "rocketmq_timer_wheel", [wheel_piece], tmp=tmp_path)
    assert [tuple(s[n] for n in WHEEL_FIELDS) for s in d["slots"]] == _wheel_piece_slots(wheel_piece)
    index = _index_files("rocketmq-5.3.3")[0]
    index_piece = tmp_path / "index"
    assert main(["cut", str(index), "--entries", "40", "-o", str(index_piece)]) == status.OK
    [d] = run_js(parsers, "rocketmq_index_file", [index_piece], instances=["tables"], tmp=tmp_path)
    py = _index(index_piece)
    assert [s["latest_index"] for s in d["tables"]["hash_slots"]] == py["slots"]
    assert [tuple(e[n] for n in ENTRY_FIELDS) for e in d["tables"]["entries"]] == py["entries"]
