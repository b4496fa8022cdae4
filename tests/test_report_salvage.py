"""The report with ``--salvage`` on a damaged copy of a vector store: each damaged range listed and drawn at its offset."""

from __future__ import annotations

import html
import re
import shutil

import pytest

import rmqformats
from rmqformats.cli import main, status

from conftest import store_path
from test_report import _chromium, _open_in_chromium
from test_salvage import flipped_magic, zero_hole

VERSION = "rocketmq-5.3.3"


@pytest.fixture
def damaged_store(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path(VERSION), root)
    _, first = flipped_magic(root, VERSION, k=40)
    _, second = zero_hole(root, VERSION, k=80)
    return root, first + second


def _ranges(root):
    scan = rmqformats.open_store(str(root)).commitlog.scan(salvage=True)
    for _ in scan:
        pass
    return scan.damaged


def test_salvage_report_lists_and_draws_each_range(tmp_path, damaged_store, capsys):
    root, starts = damaged_store
    ranges = _ranges(root)
    assert [r.commitlog_offset for r in ranges] == starts  # the true offsets of the damage
    page = tmp_path / "report.html"
    code = main(["report", str(root), "-o", str(page), "--salvage"])
    assert code in (status.OK, status.FINDINGS)
    text = page.read_text(encoding="utf-8")
    section = re.search(r'<section id="segments">(.*?)</section>', text, re.S).group(1)
    assert f"{len(ranges)} damaged range(s) shown in red." in section
    for r in ranges:  # listed with segment, file offset, commit-log offset and length
        row = f"<td>{r.segment.rsplit('/', 1)[-1]}</td><td>{r.file_offset}</td><td>{r.commitlog_offset}</td>" \
              f"<td>{r.length}</td>"
        assert row in section.replace("\n", ""), row
    # drawn: the segment map's "damaged" trace has each range's file offset as a bar base and its length as width
    assert '"name":"damaged"' in section
    trace = re.search(r'"base":\[([^\]]*)\](?:(?!"base").)*?"name":"damaged","orientation":"h","x":\[([^\]]*)\]',
                      section, re.S)
    assert trace is not None
    assert [int(b) for b in trace.group(1).split(",")] == [r.file_offset for r in ranges]
    assert [int(x) for x in trace.group(2).split(",")] == [r.length for r in ranges]
    summary = html.unescape(re.search(r'<section id="summary">(.*?)</section>', text, re.S).group(1))
    assert "the data ended at damage" in summary and f"{len(ranges)} damaged range(s)" in summary

    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (`make setup-browser` installs it)")
    dom, log = _open_in_chromium(browser, page, tmp_path / "report.png")
    assert [line for line in log.splitlines() if "CONSOLE" in line] == []
    assert 'data-errors="0"' in dom
    assert "plot-segments" in re.search(r'data-plots="([^"]*)"', dom).group(1)
    for r in ranges:
        assert f"<td>{r.file_offset}</td>" in dom


def test_clean_store_salvage_report_says_no_damage(tmp_path, capsys):
    page = tmp_path / "report.html"
    # (status 1: lag flags one queue of this store, behind the commit log; no damage)
    assert main(["report", str(store_path(VERSION)), "-o", str(page), "--salvage"]) == status.FINDINGS
    text = html.unescape(page.read_text(encoding="utf-8"))
    assert "the data did not end at damage; 0 damaged range(s)" in text
    assert "No damaged range reported." in text
