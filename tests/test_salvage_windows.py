"""Salvage resync and the data-after-zeros count read segments in bounded pread windows, never a memory map.

The windowed searches give the answers of the plain searches on the whole
file's bytes (checked here with windows far smaller than the records, so
every check crosses a window's edge), and a segment cut while they read it
is a :class:`FileChangedError` in a child process, never a SIGBUS.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import rmqformats.segments as cl  # the module that holds the windowed search
from rmqformats.commitlog import SegmentWindow, next_record_start

from test_salvage import DAMAGES, _first_segment


@pytest.fixture
def small_windows(monkeypatch):
    monkeypatch.setattr(cl, "_SEARCH_WINDOW", 4096)
    monkeypatch.setattr(cl, "_CHECK_WINDOW", 16)


@pytest.mark.parametrize("damage", ["flipped_magic", "zero_hole", "overwritten", "bad_size"])
def test_windowed_search_is_the_plain_search(store_copy, version, damage, small_windows):
    DAMAGES[damage](store_copy, version)
    name = _first_segment(version)
    path = str(store_copy / "commitlog" / name)
    with open(path, "rb") as f:
        data = f.read()
    base = int(name)
    starts = []
    with SegmentWindow(path, base) as window:
        for begin in list(range(0, len(data), 997)) + [len(data) - 3]:
            plain = next_record_start(data, begin, len(data), base, len(data))
            assert window.next_record_start(begin) == plain, begin
            starts.append(plain)
        # the plain count on the whole bytes
        assert window.count_records(1) == cl.count_records(data, 1, len(data), base, len(data))
    assert len({s for s in starts if s is not None}) > 10  # the search found records all along the file


def _child(code: str, *args: str) -> subprocess.CompletedProcess:
    prelude = textwrap.dedent("""
        import os, sys
        import rmqformats.segments as cl
        cl._SEARCH_WINDOW = 4096  # read a page at a time, so the cut falls inside the search
        cl._CHECK_WINDOW = 16
        from rmqformats.errors import RmqFormatError
        opened = cl.SegmentWindow.__init__
        def cut_after_open(self, path, base, **kw):
            opened(self, path, base, **kw)
            if path == sys.argv[2]:
                os.truncate(path, int(sys.argv[3]))  # the segment shrinks once the window has its size
        cl.SegmentWindow.__init__ = cut_after_open
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=300)


def _no_signal(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode} ({signal.Signals(-proc.returncode).name})"
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.parametrize("damage", ["flipped_magic", "zero_hole"])
def test_segment_cut_while_salvage_resyncs(store_copy, version, damage):
    damaged, _ = DAMAGES[damage](store_copy, version)
    name = _first_segment(version)
    seg = str(store_copy / "commitlog" / name)
    cut = min(damaged) - int(name) + 16  # inside the damaged record: the resync meets the new end
    out = _no_signal(_child("""
        from rmqformats import open_store
        scan = open_store(sys.argv[1]).commitlog.scan(salvage=True)
        n = 0
        try:
            for msg in scan:
                n += 1
            print("end", scan.end.reason.name, n)
        except RmqFormatError as exc:
            print("error", type(exc).__name__, exc)
    """, str(store_copy), seg, str(cut)))
    assert out.startswith("error FileChangedError"), out
    assert f"commitlog/{name} @ 0x" in out and "shrank" in out
    assert os.path.getsize(seg) == cut


def test_segment_cut_while_counting_data_after_zeros(store_copy, version):
    DAMAGES["zeroed_header"](store_copy, version)
    name = _first_segment(version)
    seg = str(store_copy / "commitlog" / name)
    out = _no_signal(_child("""
        from rmqformats import open_store
        scan = open_store(sys.argv[1]).commitlog.scan()
        try:
            n = sum(1 for _ in scan)
            print("end", scan.end.reason.name, n)
        except RmqFormatError as exc:
            print("error", type(exc).__name__, exc)
    """, str(store_copy), seg, "8192"))
    # The zero header ends the data; counting what follows meets the cut.
    assert out.startswith("error FileChangedError") or out.startswith("end "), out
    if out.startswith("end "):
        assert "ZERO_TAIL" in out or "DATA_AFTER_ZEROS" in out, out
