"""The store report: what it gathers, the page it writes, and the page opened in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

import rmqformats
from rmqformats.cli import main, status
from rmqformats.cli.present import iso
from plotly.offline import get_plotlyjs

from rmqformats.systopics import parse_delay_levels
from rmqformats.recovery.report import BUCKETS_MS, MAX_CELLS, TimeHistogram, build_report, plotly_script_name

from conftest import store_path, truth_records
from test_crosscheck import _append_copy

SECTIONS = ("summary", "topics", "segments", "queues", "lag", "pending", "findings")
PLOTS = ("plot-topics", "plot-segments", "plot-queues", "plot-lag")


def test_report_gathers_the_store(version):
    store = rmqformats.open_store(store_path(version))
    report = build_report(store)
    records = [r for r in truth_records(version) if r["kind"] == "MESSAGE"]
    assert report.messages == len(records)
    assert sum(report.times.totals.values()) == len(records)
    by_topic: dict[str, int] = {}
    for r in records:
        by_topic[r["topic"]] = by_topic.get(r["topic"], 0) + 1
    assert dict(report.times.totals) == by_topic
    assert [s.messages for s in report.segments] == [
        sum(1 for r in records if r["file"] == s.name) for s in report.segments]
    assert report.data_end.reason.is_clean and report.check.ok
    assert {(t, q) for t, q, *_ in report.queues} == {(q.topic, q.queue_id) for q in store.queues()} | {
        (q.topic, q.queue_id) for q in store.batch_queues()}


def test_time_buckets_widen_to_stay_bounded():
    import numpy as np
    h = TimeHistogram()
    times = np.arange(0, (MAX_CELLS + 10) * 1000, 1000, dtype=np.int64)
    h.add(["T"], np.zeros(len(times), np.int32), times)
    assert len(h.cells) <= MAX_CELLS and h.bucket_ms == BUCKETS_MS[1]
    assert sum(h.cells.values()) == len(times) == h.totals["T"]


def test_page_opens_offline_with_plotly_beside_it(tmp_path, capsys):
    out = tmp_path / "report.html"
    # lag flags one row of this store (a queue behind the commit log), so the report exits as lag does.
    assert main(["report", str(store_path("rocketmq-5.3.3")), "-o", str(out)]) == status.FINDINGS
    page = out.read_text(encoding="utf-8")
    # Nothing is loaded from elsewhere: the one script by name is plotly.js, written beside the page.
    srcs = re.findall(r"<(?:script|link|img|iframe)[^>]+(?:src|href)=\"([^\"]*)\"", page)
    script = plotly_script_name()
    assert srcs == [script] and "/" not in script
    beside = tmp_path / script
    assert beside.read_text(encoding="utf-8") == get_plotlyjs()
    # The page itself is small: plotly.js (about 4.6 MB) is not in it.
    assert len(page.encode()) < 300_000 < beside.stat().st_size
    assert page.count('class="plotly-graph-div"') == len(PLOTS)
    # A second report in the folder shares the file (left as it is); --single-file embeds it instead.
    before = beside.stat().st_mtime_ns
    assert main(["report", str(store_path("rocketmq-4.9.7")), "-o", str(tmp_path / "b.html")]) == status.OK
    assert beside.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["b.html", "report.html", script])
    single = tmp_path / "one" / "single.html"
    single.parent.mkdir()
    assert main(["report", str(store_path("rocketmq-4.9.7")), "-o", str(single), "--single-file"]) == status.OK
    text = single.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text) and get_plotlyjs() in text
    assert [p.name for p in single.parent.iterdir()] == ["single.html"]
    # A different file under the script's name is not overwritten without --force.
    other = tmp_path / "two"
    other.mkdir()
    (other / script).write_text("not plotly", encoding="utf-8")
    assert main(["report", str(store_path("rocketmq-4.9.7")), "-o", str(other / "r.html")]) == status.ERROR
    assert not (other / "r.html").exists() and "--force" in capsys.readouterr().err
    assert (other / script).read_text(encoding="utf-8") == "not plotly"
    page = (out).read_text(encoding="utf-8")
    for section in SECTIONS:
        assert f'<section id="{section}">' in page
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page)
                      .group(1).replace("&quot;", '"'))
    assert data["problems"] == 0 and data["lagFlagged"] == 1 and data["messages"] == 322


def test_report_shows_what_pending_lists(tmp_path, capsys):
    """The pending section and the page's data give the counts ``pending --format json`` gives, on the 5.3.3
    vector (4 scheduled, 5 timer messages, 1 dead-letter origin), and list the rows of each kind."""
    store = str(store_path("rocketmq-5.3.3"))
    assert main(["pending", store, "--format", "json"]) == status.OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"] == {"scheduled": 4, "timer": 5, "transaction": 0, "popCheckpoint": 0, "deadLetter": 1}
    assert {k: len(doc[k]) for k in doc["counts"]} == doc["counts"]
    out = tmp_path / "report.html"
    assert main(["report", store, "-o", str(out)]) == status.FINDINGS
    page = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page)
                      .group(1).replace("&quot;", '"'))
    assert data["pending"] == doc["counts"]
    section = re.search(r'<section id="pending">(.*?)</section>', page).group(1)
    counts = dict(re.findall(r"<tr><td>(\w+)</td><td>[^<]*</td><td>(\d+)</td></tr>", section))
    assert {k: int(v) for k, v in counts.items()} == doc["counts"]
    # Each kind with rows is listed, with the same rows as the command's.
    for part in ("scheduled", "timer", "deadLetter"):
        assert f'<h3 id="pending-{part}">' in section
    for row in doc["scheduled"] + doc["timer"]:
        # the page shows times as people read them; the command's JSON gives epoch milliseconds
        assert f"<td>{row['uniqKey']}</td>" in section and f"<td>{iso(row['dueTime'])}</td>" in section
    assert f"<td>{doc['deadLetter'][0]['originTopic']}</td>" in section


def _page_data(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page)
                      .group(1).replace("&quot;", '"'))


def test_report_pending_comes_from_its_one_walk_with_the_brokers_delay_levels(tmp_path, capsys, monkeypatch):
    """The commit log is walked once for the whole page; the store's config/broker.properties gives the delay
    levels of the pending scheduled messages (as pending reads them), and --config wins over it."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    levels = "2s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
    (root / "config" / "broker.properties").write_text(f"brokerName=b\nmessageDelayLevel={levels}\n")
    assert main(["pending", str(root), "--format", "json"]) == status.OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"] == {"scheduled": 4, "timer": 5, "transaction": 0, "popCheckpoint": 0, "deadLetter": 1}
    truth = {m["commitlogOffset"]: m for m in truth_records("rocketmq-5.3.3") if m.get("kind") == "MESSAGE"}
    delays = parse_delay_levels(levels)
    assert 1 in {row["delayLevel"] for row in doc["scheduled"]}  # level 1 is 2s here, not the default 1s
    for row in doc["scheduled"]:
        m = truth[row["commitLogOffset"]]
        assert row["dueTime"] == m["storeTimestamp"] + delays[row["delayLevel"] - 1]

    walks = []
    batches = rmqformats.CommitLog.batches

    def counted(self, *args, **kwargs):
        walks.append(kwargs.get("columns"))
        return batches(self, *args, **kwargs)

    monkeypatch.setattr(rmqformats.CommitLog, "batches", counted)
    out = tmp_path / "report.html"
    assert main(["report", str(root), "-o", str(out)]) == status.FINDINGS
    monkeypatch.undo()
    assert len(walks) == 1, walks
    page = out.read_text(encoding="utf-8")
    assert _page_data(page)["pending"] == doc["counts"]
    section = re.search(r'<section id="pending">(.*?)</section>', page).group(1)
    for row in doc["scheduled"] + doc["timer"]:
        assert f"<td>{row['uniqKey']}</td>" in section and f"<td>{iso(row['dueTime'])}</td>" in section

    # --config wins over the store's file; a value that is not a list of delays is refused naming the file.
    config = tmp_path / "other.properties"
    config.write_text("messageDelayLevel=1m 1m 1m\n")
    assert main(["report", str(root), "-o", str(out), "--force", "--config", str(config)]) == status.FINDINGS
    section = re.search(r'<section id="pending">(.*?)</section>', out.read_text(encoding="utf-8")).group(1)
    for row in doc["scheduled"]:
        assert f"<td>{iso(truth[row['commitLogOffset']]['storeTimestamp'] + 60_000)}</td>" in section
    (root / "config" / "broker.properties").write_text("messageDelayLevel=soon\n")
    assert main(["report", str(root), "-o", str(out), "--force"]) == status.FINDINGS
    capsys.readouterr()
    page = out.read_text(encoding="utf-8")
    assert _page_data(page)["pending"] is None
    section = re.search(r'<section id="pending">(.*?)</section>', page).group(1)
    assert "broker.properties" in section and "messageDelayLevel" in section
    assert main(["pending", str(root)]) != status.OK
    assert "broker.properties" in capsys.readouterr().err


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _open_in_chromium(browser: str, page, screenshot) -> tuple[str, str]:
    """The DOM after the page's scripts ran, and the browser's log; also writes a screenshot."""
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              "--no-first-run", "--disable-extensions", "--disable-background-networking",
              f"--user-data-dir={page.parent / 'chromium-profile'}"]
    url = page.resolve().as_uri()
    dom = subprocess.run([*common, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom",
                          url], capture_output=True, text=True, timeout=180)
    subprocess.run([*common, "--window-size=1400,5200", "--virtual-time-budget=5000", f"--screenshot={screenshot}",
                    url], capture_output=True, text=True, timeout=180)
    return dom.stdout, dom.stderr


@pytest.mark.parametrize("damaged", [False, True], ids=["clean", "appended-message"])
def test_report_in_headless_chromium(tmp_path, capsys, record_property, damaged):
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: CI runs `make setup-browser` first")
        pytest.skip("chromium is not installed (`make setup-browser` installs it)")
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    if damaged:
        _append_copy(root, "TopicTest", 0)
    page = tmp_path / "report.html"
    code = main(["report", str(root), "-o", str(page)])
    # lag flags one row of this store in both cases (committed offset past the queue's end), so the report
    # exits 1 either way; what differs is what check finds.
    assert code == status.FINDINGS
    screenshot = tmp_path / "report.png"
    dom, log = _open_in_chromium(browser, page, screenshot)
    # No console output at all from the page: no script error, no console.error, no plotly warning.
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    assert console == [], console
    body = re.search(r"<body([^>]*)>", dom)
    assert body is not None, dom[:2000]
    attrs = dict(re.findall(r'(data-[a-z]+)="([^"]*)"', body.group(1)))
    assert attrs.get("data-errors") == "0", re.search(r'<pre id="page-errors"[^>]*>(.*?)</pre>', dom, re.S)
    # Every section is there and every plot was drawn (plotly put its SVG into the div).
    for section in SECTIONS:
        assert f'<section id="{section}">' in dom
    assert sorted(attrs["data-plots"].split()) == sorted(PLOTS)
    if damaged:
        assert "queue-behind" in dom and "missing-unit" in dom
    else:
        assert "No problem found." in dom
    assert screenshot.exists() and screenshot.stat().st_size > 10_000
    record_property("screenshot", str(screenshot))
    with capsys.disabled():
        print(f"\nstore report screenshot: {screenshot}")


def test_report_includes_what_lag_flags(tmp_path, capsys):
    """Committed offsets past the queues' ends: lag flags them and exits 1; so does the report, with the same count."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-4.9.7"), root)
    path = root / "config" / "consumerOffset.json"
    path.write_text(path.read_text(encoding="utf-8").replace("{0:29,1:31,2:28,3:28", "{0:29,1:90,2:28,3:77"),
                    encoding="utf-8")
    code = main(["lag", str(root), "--format", "jsonl"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    flagged = [(r["topic"], r["queueId"]) for r in rows if r["beyondMax"]]
    assert code == status.FINDINGS and flagged == [("TopicTest", 1), ("TopicTest", 3)]
    report = build_report(rmqformats.open_store(root))
    assert report.check.ok and report.lag_flagged == 2 and report.problems == 2 and not report.ok
    assert [(r.topic, r.queue_id) for r in report.lag if r.flagged] == flagged
    out = tmp_path / "report.html"
    code = main(["report", str(root), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == status.FINDINGS and "2 problem(s) found (0 by check, 2 lag row(s) flagged)" in err
    page = out.read_text(encoding="utf-8")
    assert "2 row(s) flagged, as rmqformats lag flags them." in page
    assert page.count("committed offset past the queue&#x27;s end") == 2 or \
        page.count("committed offset past the queue's end") == 2
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page).group(1).replace("&quot;", '"'))
    assert data["lagFlagged"] == 2
    # The unedited store: nothing flagged, exit 0, as lag.
    assert main(["lag", str(store_path("rocketmq-4.9.7")), "--format", "jsonl"]) == status.OK
    assert main(["report", str(store_path("rocketmq-4.9.7")), "-o", str(tmp_path / "clean.html")]) == status.OK
