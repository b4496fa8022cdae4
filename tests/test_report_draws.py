"""The report draws what its summary says: flagged lag rows when every lag is 0, and the messages a
salvage walk reads past the damage; both opened in headless Chromium for screenshots."""

from __future__ import annotations

import os
import shutil

import pytest

import rmqformats
from rmqformats.cli import main, status
from rmqformats.recovery.report import _lag_figure, _segments_figure, build_report

from conftest import store_path
from test_report import _chromium, _open_in_chromium
from test_salvage import flipped_magic, zero_hole


@pytest.fixture
def beyond_max_store(tmp_path):
    """4.9.7 with every group caught up and two committed offsets past their queues' ends: every lag is 0,
    two rows flagged beyond-max."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-4.9.7"), root)
    path = root / "config" / "consumerOffset.json"
    path.write_text(path.read_text(encoding="utf-8").replace("{0:29,1:31,2:28,3:28", "{0:32,1:90,2:31,3:77"),
                    encoding="utf-8")
    return root


def test_lag_chart_draws_flagged_rows_when_every_lag_is_0(beyond_max_store):
    report = build_report(rmqformats.open_store(beyond_max_store))
    assert all(r.lag == 0 for r in report.lag) and report.lag_flagged == 2
    fig = _lag_figure(report)
    drawn = [(t.name, list(t.x), list(t.y)) for t in fig.data]
    group = next(r.group for r in report.lag if r.beyond_max)
    bars = {n: dict(zip(x, y)) for n, x, y in drawn}
    assert sum(sum(v.values()) for v in bars.values()) == report.lag_flagged == 2
    assert bars["committed offset past the queue's end (beyond-max)"][group] == 2
    assert fig.layout.yaxis.title.text == "flagged rows (every lag is 0)"


def test_lag_chart_of_a_caught_up_store_says_so(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-4.9.7"), root)
    path = root / "config" / "consumerOffset.json"
    path.write_text(path.read_text(encoding="utf-8").replace("{0:29,1:31,2:28,3:28", "{0:32,1:34,2:31,3:31"),
                    encoding="utf-8")
    report = build_report(rmqformats.open_store(root))
    assert report.lag and not any(r.lag for r in report.lag) and not report.lag_flagged
    fig = _lag_figure(report)
    assert list(fig.layout.yaxis.range) == [0, 1]
    assert [a.text for a in fig.layout.annotations] == ["every group is caught up: lag 0 on every row"]


@pytest.fixture
def salvage_store(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    flipped_magic(root, "rocketmq-5.3.3", k=40)
    zero_hole(root, "rocketmq-5.3.3", k=80)
    return root


def test_salvage_map_draws_the_messages_readable_past_the_damage(salvage_store):
    report = build_report(rmqformats.open_store(salvage_store), salvage=True)
    assert report.salvaged_messages > 0
    assert sum(s.salvaged for s in report.segments) == report.salvaged_messages
    fig = _segments_figure(report)
    readable = next(t for t in fig.data if t.name == "readable past the damage")
    end = report.data_end
    for seg, base, width, text in zip(readable.y, readable.base, readable.x, readable.hovertext):
        info = next(s for s in report.segments if s.name == seg)
        assert base >= (end.file_offset if info.path == end.segment else 0) and base + width <= info.size
        assert text.startswith(f"{info.salvaged} message(s) readable past the damage")
    # The label of the end of the data is not clipped by the plot area.
    mark = next(t for t in fig.data if t.name == "end of data")
    assert mark.cliponaxis is False and fig.layout.margin.t >= 50


@pytest.mark.parametrize("case", ["every-lag-0-beyond-max", "salvage-past-damage"])
def test_report_screenshots(tmp_path, case, request, record_property, capsys):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (`make setup-browser` installs it)")
    root = request.getfixturevalue("beyond_max_store" if case.startswith("every") else "salvage_store")
    page = tmp_path / f"{case}.html"
    args = ["report", str(root), "-o", str(page)] + (["--salvage"] if case.startswith("salvage") else [])
    assert main(args) in (status.OK, status.FINDINGS)
    shot = tmp_path / f"{case}.png"
    dom, log = _open_in_chromium(browser, page, shot)
    assert [line for line in log.splitlines() if "CONSOLE" in line] == []
    assert 'data-errors="0"' in dom and "plot-lag" in dom and "plot-segments" in dom
    assert shot.stat().st_size > 10_000
    record_property("screenshot", str(shot))
    with capsys.disabled():
        print(f"\n{case} screenshot: {shot}")


@pytest.mark.parametrize("version", ["rocketmq-4.9.7", "rocketmq-5.3.3"])
def test_segment_map_labels_name_places_file_at_hex(version):
    """The segment map's labels name a place as the summary and every error do, ``FILE @ 0xHEX``: each
    BLANK record of the ground truth, and where the data ends."""
    from conftest import truth_records
    report = build_report(rmqformats.open_store(store_path(version)))
    fig = _segments_figure(report)
    texts = {t.name: list(t.hovertext) for t in fig.data}
    blanks = [f"BLANK record at commitlog/{r['file']} @ 0x{r['fileOffset']:x}"
              for r in truth_records(version) if r["kind"] == "BLANK"]
    assert blanks and texts["BLANK padding"] == blanks
    end = report.data_end
    assert texts["after the end of data"] == [f"data ends at commitlog/{os.path.basename(end.segment)} @ "
                                              f"0x{end.file_offset:x}: {end.reason.value}"]
    assert not any(" at byte " in t or "bytes " in t for ts in texts.values() for t in ts)


def test_salvage_map_labels_name_places_file_at_hex(salvage_store):
    report = build_report(rmqformats.open_store(salvage_store), salvage=True)
    fig = _segments_figure(report)
    readable = next(t for t in fig.data if t.name == "readable past the damage")
    for seg, base, width, text in zip(readable.y, readable.base, readable.x, readable.hovertext):
        assert text.endswith(f"from commitlog/{seg} @ 0x{base:x} to 0x{base + width:x}"), text
