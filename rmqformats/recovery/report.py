"""A store report for people: one self-contained HTML page with plots, made in one pass over the commit log.

:func:`build_report` walks the commit log once (through :func:`cross_check`,
which hands each record batch to an aggregator) and gathers, in bounded
memory: messages per topic over time (time buckets that widen as the store's
time span grows, so the table never passes :data:`MAX_CELLS` cells), the
segments with where the data ends and any damaged ranges, queue depths,
consumer lag per group, the findings of the check, and what is still pending
(``rmqformats pending``: the same walk's batches go to a
:class:`~rmqformats.systopics.pending.PendingWalk`, with the delay levels of
the store's ``config/broker.properties`` or the caller's). :func:`render_html`
turns it into one HTML page; :func:`write_report` writes plotly.js once beside
it (shared by the reports in that folder), so it opens without a network.
"""

from __future__ import annotations

import html
import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import __version__
from ..commitlog import DataEnd, split_folders
from ..frames import to_numpy
from ..message import format_millis
from ..errors import RmqFormatError, display_path, place, whole_text
from .crosscheck import CrossCheck, Kind, cross_check

if TYPE_CHECKING:
    from ..store import Store
    from ..systopics.pending import Pending

#: Most (topic, time bucket) cells kept while walking; past it the buckets are widened.
MAX_CELLS = 200_000
#: Bucket widths tried in turn, in ms.
BUCKETS_MS = (1_000, 10_000, 60_000, 600_000, 3_600_000, 6 * 3_600_000, 86_400_000, 7 * 86_400_000)
#: Topics drawn on their own in the time plot; the others are summed.
TOP_TOPICS = 12
#: Bars per topic the time plot aims at most (its buckets widen to fit).
PLOT_BARS = 300
#: Queues drawn in the depth plot.
TOP_QUEUES = 40
#: Findings listed in the page (all are counted).
MAX_LISTED = 500
#: Rows of each part of what is pending listed in the page (all are counted).
PENDING_LISTED = 20


@dataclass
class SegmentInfo:
    """One commit-log segment as the report draws it."""

    name: str
    path: str
    start: int
    size: int
    messages: int = 0
    #: Bytes from the segment's start to the end of its last message.
    used: int = 0
    #: Position of the segment's BLANK record, or ``None``.
    blank_at: int | None = None
    first_time: int | None = None
    last_time: int | None = None
    #: Messages a salvage walk read in this segment after the end of the data (past the damage).
    salvaged: int = 0
    #: File offsets of the first salvaged message and of the end of the last one (``None`` without any).
    salvaged_from: int | None = None
    salvaged_to: int | None = None


@dataclass
class TimeHistogram:
    """Messages per topic and time bucket, widened as needed to stay under :data:`MAX_CELLS` cells."""

    bucket_ms: int = BUCKETS_MS[0]
    cells: Counter = field(default_factory=Counter)
    totals: Counter = field(default_factory=Counter)

    def add(self, topics: list[str], codes: np.ndarray, times: np.ndarray) -> None:
        # Any 64-bit time (a damaged record's included): the pairs are counted as pairs, not packed
        # into one integer that a time span past 2^40 buckets would overflow.
        pairs = np.stack([codes.astype(np.int64), times // self.bucket_ms])
        uniq, counts = np.unique(pairs, axis=1, return_counts=True)
        for code, bucket, c in zip(uniq[0].tolist(), uniq[1].tolist(), counts.tolist()):
            topic = topics[code]
            self.cells[(topic, bucket)] += c
            self.totals[topic] += c
        while len(self.cells) > MAX_CELLS and self.bucket_ms != BUCKETS_MS[-1]:
            self._widen()

    def _widen(self) -> None:
        wider = next(b for b in BUCKETS_MS if b > self.bucket_ms)
        cells: Counter = Counter()
        for (topic, b), c in self.cells.items():
            cells[(topic, b * self.bucket_ms // wider)] += c
        self.cells, self.bucket_ms = cells, wider


class _Aggregator:
    """Receives every record batch of the walk."""

    def __init__(self, store: Store):
        self.segments = [SegmentInfo(s.name, s.path, s.start_offset, s.size) for s in store.commitlog.segments]
        self.starts = np.array([s.start for s in self.segments], np.int64)
        self.times = TimeHistogram()
        self.messages = 0
        self.first_time: int | None = None
        self.last_time: int | None = None

    def __call__(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        if not n:
            return
        self.messages += n
        off = to_numpy(batch.column("commitLogOffset"))
        size = to_numpy(batch.column("storeSize"))
        times = to_numpy(batch.column("storeTimestamp").cast(pa.int64()))
        codes = pc.dictionary_encode(batch.column("topic"))
        self.times.add(codes.dictionary.to_pylist(), to_numpy(codes.indices), times)
        lo, hi = int(times.min()), int(times.max())
        self.first_time = lo if self.first_time is None else min(self.first_time, lo)
        self.last_time = hi if self.last_time is None else max(self.last_time, hi)
        seg = np.searchsorted(self.starts, off, side="right") - 1
        for s in np.unique(seg).tolist():
            rows = seg == s
            info = self.segments[s]
            info.messages += int(rows.sum())
            info.used = max(info.used, int((off[rows] + size[rows]).max()) - info.start)
            t_lo, t_hi = int(times[rows].min()), int(times[rows].max())
            info.first_time = t_lo if info.first_time is None else min(info.first_time, t_lo)
            info.last_time = t_hi if info.last_time is None else max(info.last_time, t_hi)


@dataclass
class StoreReport:
    """Everything the page shows."""

    path: str
    generated: str
    messages: int
    first_time: int | None
    last_time: int | None
    segments: list[SegmentInfo]
    data_end: DataEnd | None
    #: Damaged ranges the walk skipped (segment, file offset, length, reason); see ``CrossCheck.damaged``.
    damaged: list
    times: TimeHistogram
    #: (topic, queue id, kind, min offset, max offset, error)
    queues: list[tuple[str, int, str, int, int, str | None]]
    #: rows of ``Store.consumer_lag`` with ``behind_commitlog`` filled in
    lag: list
    lag_error: str | None
    check: CrossCheck | None
    check_error: str | None
    #: Whether a salvage walk looked past the end of the data (``build_report(salvage=True)``).
    salvaged: bool = False
    #: Messages the salvage walk read after the end of the data (past the damage).
    salvaged_messages: int = 0
    #: The 5.4+ RocksDB message store's summary (``RocksDBMessageStore.summary``), ``None`` without one.
    rocksdb_messages: dict | None = None
    #: What ``rmqformats pending`` lists (:func:`rmqformats.systopics.pending.pending`), ``None`` when not read.
    pending: Pending | None = None
    #: Why :attr:`pending` could not be read.
    pending_error: str | None = None

    @property
    def lag_flagged(self) -> int:
        """Rows of :attr:`lag` that ``rmqformats lag`` flags (see :attr:`rmqformats.lag.LagRow.flagged`)."""
        return sum(1 for r in self.lag if r.flagged)

    @property
    def unread(self) -> list[str]:
        """Why a part of the report could not be made: check, lag or pending that could not read the store."""
        return [f"{what} could not read the store: {why}" for what, why in (
            ("check", self.check_error), ("lag", self.lag_error), ("pending", self.pending_error))
            if why is not None]

    @property
    def problems(self) -> int:
        """The findings of ``check``, the rows ``lag`` flags, and one for each part that could not be made."""
        return (0 if self.check is None else self.check.problems) + len(self.unread) + self.lag_flagged

    @property
    def ok(self) -> bool:
        """Whether neither ``check`` nor ``lag`` found anything, and every part was made (``rmqformats report``
        exits 0)."""
        return (self.check is None or self.check.ok) and not self.unread and not self.lag_flagged


def build_report(store: Store, *, index: bool = True, timer: bool = True, max_findings: int = MAX_LISTED,
                 salvage: bool = False, delay_levels_ms: tuple[int, ...] | None = None) -> StoreReport:
    """Walk the store once and gather what :func:`render_html` draws.

    With ``salvage``, when the data ends at damage, a salvage walk goes on
    from there to the end of the commit log and the report lists and draws
    every damaged range it skipped (and the bytes between segment files no
    file holds). The counts and plots stay those of the broker's own
    recovery (the data up to its end); the walk past the damage reads only
    commit-log offsets, so it costs a read of the bytes after the end.
    ``delay_levels_ms``: the broker's ``messageDelayLevel`` for the check and
    the pending scheduled messages (default: the store's
    ``config/broker.properties``'s, else the broker's default; see
    :func:`rmqformats.systopics.settings.delay_levels`).
    """
    from ..systopics.pending import PendingFeed
    agg = _Aggregator(store)
    still = PendingFeed(store, delay_levels_ms=delay_levels_ms)
    levels = still.delay_levels_ms
    check = None
    check_error = None
    data_end = None
    damaged: list = []
    if store.root is not None:
        try:
            check = cross_check(store, index=index, timer=timer, max_findings=max_findings,
                                on_batch=lambda b: (agg(b), still(b)), columns=still.columns, decompress=True,
                                **({} if levels is None else {"delay_levels_ms": levels}))
            data_end = check.recovery.data_end
            damaged = list(check.damaged)
            blanks = check.blanks
        except RmqFormatError as exc:
            check_error = exc.whole()
            agg = _Aggregator(store)
            still = PendingFeed(store, delay_levels_ms=delay_levels_ms)
            check = None
    if check is None:
        walk = store.commitlog.batches(columns=["commitLogOffset", "storeSize", "storeTimestamp", "topic",
                                                *still.columns])
        for batch in walk:
            agg(batch)
            still(batch)
        data_end, blanks = walk.end, tuple(walk.blanks)
    salvaged_messages = 0
    if salvage:
        damaged, salvaged_messages, more_blanks = _salvage_past(store, data_end, damaged, agg.segments)
        blanks = tuple(blanks) + more_blanks
    by_path = {s.path: s for s in agg.segments}
    for b in blanks:
        if b.segment in by_path:
            by_path[b.segment].blank_at = b.file_offset

    queues = []
    lag: list = []
    lag_error = None
    if store.root is not None:
        for kind, infos in (("ConsumeQueue", _safe(store.queues)), ("BatchConsumeQueue", _safe(store.batch_queues))):
            queues += [(q.topic, q.queue_id, "RocksDBConsumeQueue" if q.kind == "rocksdb" else kind, q.min_offset,
                        q.max_offset, q.error) for q in infos]
        try:
            behind = check.behind if check is not None else {}
            lag = [r._replace(behind_commitlog=behind.get((r.topic, r.queue_id), 0))
                   for r in store.consumer_lag(with_store_time=False)]
        except (RmqFormatError, OSError) as exc:
            lag_error = whole_text(exc)
    messages_db = store.rocksdb_message_store() if store.root is not None else None
    pending, pending_error = still.result()
    return StoreReport(
        pending=pending, pending_error=pending_error,
        rocksdb_messages=messages_db.summary() if messages_db is not None else None,
        path=os.path.abspath(store.root or store.commitlog.path),
        generated=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        messages=agg.messages, first_time=agg.first_time, last_time=agg.last_time, segments=agg.segments,
        data_end=data_end, damaged=damaged, times=agg.times, queues=queues, lag=lag, lag_error=lag_error,
        check=check, check_error=check_error, salvaged=salvage, salvaged_messages=salvaged_messages)


def _salvage_past(store: Store, data_end: DataEnd | None, damaged: list,
                  segments: list[SegmentInfo]) -> tuple[list, int, tuple]:
    """The damaged ranges from ``data_end`` on (a salvage walk from there) and the gaps between segment files.

    The messages the walk reads are counted per segment in ``segments`` (with the span of file
    offsets they cover), so the segment map draws them.
    """
    from .salvage import gaps
    log = store.commitlog
    found = {(_damaged_field(d, "commitlog_offset"), _damaged_field(d, "length")): d for d in damaged}
    for g in gaps(log.segments):
        found.setdefault((g.commitlog_offset, g.length), g)
    messages = 0
    blanks: tuple = ()
    if data_end is not None and not data_end.reason.is_clean and data_end.segment is not None:
        walk = log.batches(columns=["commitLogOffset", "storeSize"], salvage=True, start=data_end.offset)
        starts = np.array([s.start for s in segments], np.int64)
        for batch in walk:
            messages += batch.num_rows
            if not batch.num_rows:
                continue
            off = to_numpy(batch.column("commitLogOffset"))
            end = off + to_numpy(batch.column("storeSize"))
            seg = np.searchsorted(starts, off, side="right") - 1
            for i in np.unique(seg).tolist():
                if i < 0:
                    continue
                rows = seg == i
                info = segments[i]
                lo, hi = int(off[rows].min()) - info.start, int(end[rows].max()) - info.start
                info.salvaged += int(rows.sum())
                info.salvaged_from = lo if info.salvaged_from is None else min(info.salvaged_from, lo)
                info.salvaged_to = hi if info.salvaged_to is None else max(info.salvaged_to, hi)
        blanks = tuple(walk.blanks)
        for d in walk.damaged:
            found.setdefault((d.commitlog_offset, d.length), d)
    return sorted(found.values(), key=lambda d: _damaged_field(d, "commitlog_offset") or 0), messages, blanks


def _safe(listing):
    try:
        return listing()
    except (RmqFormatError, OSError):
        return []


# -- the page -----------------------------------------------------------------------------------


def _iso(ms: int | None) -> str:
    """A store time as every command shows it (:func:`~rmqformats.message.format_millis`); empty for none."""
    return "" if ms is None else format_millis(int(ms))


def _topics_figure(report: StoreReport):
    import plotly.graph_objects as go
    h = report.times
    top = [t for t, _ in h.totals.most_common(TOP_TOPICS)]
    rest = set(h.totals) - set(top)
    series: dict[str, Counter] = {t: Counter() for t in top}
    if rest:
        series["(other topics)"] = Counter()
    # Draw at most about PLOT_BARS bars per topic: the buckets kept may be finer than a plot can show.
    width = h.bucket_ms
    if h.cells:
        lo = min(b for _, b in h.cells) * h.bucket_ms
        hi = (max(b for _, b in h.cells) + 1) * h.bucket_ms
        width = next((b for b in BUCKETS_MS if b >= h.bucket_ms and (hi - lo) / b <= PLOT_BARS), BUCKETS_MS[-1])
        width = max(width, h.bucket_ms)
    for (topic, b), c in h.cells.items():
        series[topic if topic in top else "(other topics)"][b * h.bucket_ms // width] += c
    fig = go.Figure()
    for name, cells in series.items():
        xs = sorted(cells)
        fig.add_trace(go.Bar(x=[_iso(b * width) for b in xs], y=[cells[b] for b in xs], name=_short(name)))
    fig.update_layout(barmode="stack", height=420, margin=dict(l=50, r=20, t=30, b=40),
                      xaxis=dict(title=f"store time (UTC, buckets of {_span(width)})", automargin=False),
                      yaxis=dict(title="messages", automargin=False), legend_title_text="topic")
    return fig


def _short(text: str, width: int = 36) -> str:
    """``text`` cut in the middle to ``width`` characters, for axis labels."""
    if len(text) <= width:
        return text
    half = (width - 1) // 2
    return f"{text[:half]}…{text[-(width - 1 - half):]}"


def _span(ms: int) -> str:
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"


def _segments_figure(report: StoreReport):
    import plotly.graph_objects as go
    names = [s.name for s in report.segments]
    end = report.data_end
    end_seg = getattr(end, "segment", None)
    parts: dict[str, tuple[list, list, list, list]] = {}

    def add(kind: str, seg: SegmentInfo, start: int, length: int, text: str) -> None:
        if length <= 0:
            return
        ys, bases, widths, texts = parts.setdefault(kind, ([], [], [], []))
        ys.append(seg.name)
        bases.append(start)
        widths.append(length)
        texts.append(text)

    past_end = False
    for s in report.segments:
        add("messages", s, 0, s.used, f"{s.messages} message(s), {_iso(s.first_time)} to {_iso(s.last_time)}")
        if s.blank_at is not None:
            add("BLANK padding", s, s.blank_at, s.size - s.blank_at,
                f"BLANK record at {place(display_path(s.path), s.blank_at)}")
        salvaged = (f"; {s.salvaged} message(s) readable past the damage (salvage)" if s.salvaged
                    else "; no message readable" if report.salvaged else "; not read")
        if past_end:
            add("after the end of data", s, 0, s.size, "after the end of the data" + salvaged)
        elif end is not None and s.path == end_seg:
            past_end = True
            add("after the end of data", s, end.file_offset, s.size - end.file_offset,
                f"data ends at {place(display_path(s.path), end.file_offset)}: {end.reason.value}"
                + (salvaged if report.salvaged else ""))
    for s in report.segments:
        # Drawn over the yellow: what a salvage walk still reads after the broker's end of the data.
        if s.salvaged and s.salvaged_from is not None and s.salvaged_to is not None:
            add("readable past the damage", s, s.salvaged_from, s.salvaged_to - s.salvaged_from,
                f"{s.salvaged} message(s) readable past the damage (salvage), from "
                f"{place(display_path(s.path), s.salvaged_from)} to 0x{s.salvaged_to:x}")
    for d in report.damaged:
        seg = next((s for s in report.segments if s.path == _damaged_field(d, "segment")
                    or s.name == os.path.basename(str(_damaged_field(d, "segment")))), None)
        if seg is not None:
            add("damaged", seg, int(_damaged_field(d, "file_offset") or 0), int(_damaged_field(d, "length") or 0),
                str(_damaged_field(d, "reason") or "damaged"))
    colors = {"messages": "#4c78a8", "BLANK padding": "#bab0ac", "after the end of data": "#f2cf5b",
              "readable past the damage": "#72b7b2", "damaged": "#e45756"}
    fig = go.Figure()
    # Overlaid in this order: the yellow past the end under what a salvage walk reads there, BLANK
    # padding over both, the damage on top.
    for kind in ("after the end of data", "messages", "readable past the damage", "BLANK padding", "damaged"):
        if kind not in parts:
            continue
        ys, bases, widths, texts = parts[kind]
        fig.add_trace(go.Bar(y=ys, base=bases, x=widths, orientation="h", name=kind, hovertext=texts,
                             marker_color=colors[kind]))
    if end is not None and end_seg is not None:
        seg_size = next((s.size for s in report.segments if s.path == end_seg), 0)
        # The label sits on the side of the mark with room, and is not clipped by the plot area.
        side = "top left" if seg_size and end.file_offset > seg_size / 2 else "top right"
        fig.add_trace(go.Scatter(x=[end.file_offset], y=[os.path.basename(end_seg)], mode="markers+text",
                                 marker=dict(symbol="line-ns-open", size=24, color="#d62728"),
                                 text=["end of data"], textposition=side, cliponaxis=False, name="end of data",
                                 hovertext=[_data_end_text(end)]))
    fig.update_layout(barmode="overlay", height=max(240, 40 * len(names) + 140),
                      margin=dict(l=180, r=40, t=50, b=50),
                      xaxis=dict(title="byte in segment file", automargin=False),
                      yaxis=dict(autorange="reversed", type="category", categoryorder="array",
                                 categoryarray=names, automargin=False))
    return fig


def _data_end_text(end: DataEnd | None) -> str:
    """Where the data ends: the commit-log offset in decimal, as the report shows every offset, and the
    place in the segment as every error and notice names one (``commitlog/… @ 0x…``)."""
    if end is None:
        return ""
    where = f" ({place(display_path(end.segment), end.file_offset)})" if end.segment else ""
    text = f"commit-log offset {end.offset:,}{where}: {end.reason.value}"
    if end.detail:
        text += f": {end.detail}"
    if end.bytes_after:
        text += (f" ({end.bytes_after:,} bytes of data follow, {end.records_after:,} message record(s) in this "
                 "segment)")
    return text


def _damaged_field(d, name: str):
    """A field of a damaged range, whatever its type (an object with attributes, a dict or a tuple)."""
    if isinstance(d, dict):
        return d.get(name)
    return getattr(d, name, None)


def _queues_figure(report: StoreReport):
    import plotly.graph_objects as go
    rows = sorted(report.queues, key=lambda q: q[4] - q[3], reverse=True)[:TOP_QUEUES]
    fig = go.Figure(go.Bar(x=[_short(f"{t}/{q}" + (" (batch)" if k == "BatchConsumeQueue" else ""))
                              for t, q, k, *_ in rows],
                           y=[hi - lo for _, _, _, lo, hi, _ in rows],
                           hovertext=[f"offsets {lo}..{hi}" for _, _, _, lo, hi, _ in rows], marker_color="#54a24b"))
    # Fixed margins: labels are cut to a known width, so plotly need not grow the margins as it draws.
    fig.update_layout(height=460, margin=dict(l=60, r=20, t=30, b=200), yaxis_title="messages on disk (max - min)",
                      xaxis=dict(tickangle=-45, automargin=False), yaxis=dict(automargin=False))
    return fig


#: What a flagged lag row is flagged for, as the lag figure names it, in the order it is stacked.
_FLAG_KINDS = (("beyond-max", "committed offset past the queue's end (beyond-max)"),
               ("behind-min", "committed offset below the queue's first (behind-min)"),
               ("no-queue", "no consume queue on disk"),
               ("behind-commitlog", "queue behind the commit log"),
               ("max-overflow", "queue's max offset past Long.MAX_VALUE"))


def _flag_kinds(r) -> list[str]:
    return [k for k, on in (("beyond-max", r.beyond_max), ("behind-min", r.behind_min),
                            ("no-queue", not r.queue_found), ("behind-commitlog", bool(r.behind_commitlog)),
                            ("max-overflow", r.max_overflow)) if on]


def _lag_figure(report: StoreReport):
    """Lag per group, stacked by topic; with every lag 0 and rows flagged, the flagged rows per group by
    what they are flagged for (an all-zero lag chart would draw nothing of what the summary says)."""
    import plotly.graph_objects as go
    groups = sorted({r.group for r in report.lag})
    fig = go.Figure()
    if any(r.lag for r in report.lag) or not report.lag_flagged:
        by: dict[str, Counter] = {}
        for r in report.lag:
            by.setdefault(r.topic, Counter())[r.group] += r.lag
        for topic, counts in sorted(by.items()):
            fig.add_trace(go.Bar(x=[_short(g) for g in groups], y=[counts.get(g, 0) for g in groups],
                                 name=_short(topic)))
        title = "lag (messages)"
        if not any(r.lag for r in report.lag):
            fig.update_yaxes(range=[0, 1], dtick=1)
            fig.add_annotation(text="every group is caught up: lag 0 on every row", showarrow=False,
                               xref="paper", yref="paper", x=0.5, y=0.6)
    else:
        by_kind: dict[str, Counter] = {k: Counter() for k, _ in _FLAG_KINDS}
        for r in report.lag:
            for k in _flag_kinds(r):
                by_kind[k][r.group] += 1
        for k, label in _FLAG_KINDS:
            if by_kind[k]:
                fig.add_trace(go.Bar(x=[_short(g) for g in groups], y=[by_kind[k].get(g, 0) for g in groups],
                                     name=label))
        title = "flagged rows (every lag is 0)"
        fig.update_yaxes(dtick=1 if report.lag_flagged <= 10 else None)
    fig.update_layout(barmode="stack", height=400, margin=dict(l=60, r=20, t=30, b=140), yaxis_title=title,
                      showlegend=True,
                      legend_title_text="topic" if title.startswith("lag") else "flagged for",
                      xaxis=dict(automargin=False), yaxis=dict(automargin=False))
    return fig


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1280px;padding:16px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;width:100%;table-layout:auto}
td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:anywhere;max-width:40em}
th{background:#f4f4f4}.problem{color:#b00}.note{color:#555}.ok{color:#080}.mono{font-family:ui-monospace,monospace;word-break:break-all}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 16px}dt{font-weight:600}
"""

#: Runs first: collects script errors and console errors into the page, so a headless browser can read them.
_ERROR_PROBE = """
window.__reportErrors = [];
window.addEventListener('error', function (e) { window.__reportErrors.push(String(e.message || e)); });
(function () { var orig = console.error; console.error = function () {
  window.__reportErrors.push(Array.prototype.join.call(arguments, ' ')); return orig.apply(console, arguments); }; })();
window.addEventListener('load', function () {
  document.body.setAttribute('data-errors', String(window.__reportErrors.length));
  var drawn = Array.prototype.filter.call(document.querySelectorAll('.js-plotly-plot'),
    function (d) { return d.querySelector('.main-svg') !== null; }).map(function (d) { return d.id; });
  document.body.setAttribute('data-plots', drawn.join(' '));
  document.getElementById('page-errors').textContent = window.__reportErrors.join('\\n');
});
"""


def _e(value) -> str:
    return html.escape(str(value))


def _table(header: list[str], rows: list[list], classes: list[str] | None = None) -> str:
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>"]
    for i, r in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "".join(out)


def plotly_script_name() -> str:
    """The name of the plotly.js file a report loads from beside itself (named for its version, so
    every report in a folder shares one, and a file of another version is never taken for it)."""
    from plotly.offline import get_plotlyjs_version
    return f"plotly-{get_plotlyjs_version()}.min.js"


def render_html(report: StoreReport, *, plotly_src: str | None = None) -> str:
    """The page: one ``<section>`` per part, nothing fetched from the network.

    plotly.js is loaded from ``plotly_src``, a path relative to the page
    (:func:`write_report` writes the file there), or embedded in the page
    when ``plotly_src`` is ``None``.
    """
    from plotly.offline import get_plotlyjs

    def plot(fig, div_id: str) -> str:
        return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                           config={"displaylogo": False, "responsive": True})

    sections = []
    end = report.data_end
    check = report.check
    summary = [("store", report.path), ("messages", f"{report.messages:,}"),
               ("stored", f"{_iso(report.first_time)} to {_iso(report.last_time)}"),
               ("segments", f"{len(report.segments)} ({sum(s.size for s in report.segments):,} bytes)"),
               ("data ends", _data_end_text(end))]
    if report.salvaged:
        at_damage = end is not None and not end.reason.is_clean
        skipped = sum(int(_damaged_field(d, "length") or 0) for d in report.damaged)
        summary.append(("salvage", (f"the data ended at damage; past it {report.salvaged_messages:,} message(s) "
                                    "are readable" if at_damage else "the data did not end at damage")
                        + f"; {len(report.damaged)} damaged range(s), {skipped:,} byte(s) skipped"))
    if check is not None:
        summary.append(("check", "consistent" if check.ok else f"{check.problems} problem(s)"))
    if report.lag:
        summary.append(("lag", f"{report.lag_flagged} row(s) flagged" if report.lag_flagged else "nothing flagged"))
    plan = check.recovery if check is not None else None
    if plan is not None:
        summary.append(("shutdown", "clean (no abort file)" if plan.clean_shutdown
                        else "not clean (abort file): the next start runs abnormal recovery"))
        summary.append(("next start", f"dispatches {plan.restart_dispatch} message(s) past the queues' ends"))
        if plan.abnormal_segment is not None:
            summary.append(("abnormal recovery", f"from segment {os.path.basename(plan.abnormal_segment)}: "
                                                 f"{plan.abnormal_dispatch} message(s) dispatched again, "
                                                 f"{plan.truncated_units} unit(s) truncated"))
    ms = report.rocksdb_messages
    if ms is not None:
        parts = [f"{ms[cf]['records']:,} {label}" for cf, label in (
            ("timer", "timer record(s)"), ("trans", "open transaction(s)"), ("index", "index entries"))
            if isinstance(ms.get(cf), dict)]
        text = ms["path"] + ": " + (ms["error"] if ms.get("error") else ", ".join(parts))
        if ms.get("readFromCopy"):
            text += " (read from a copy: a running broker holds its LOCK)"
        summary.append(("RocksDB message store", text))
    sections.append('<section id="summary"><h2>Summary</h2><dl>' + "".join(
        f"<dt>{_e(k)}</dt><dd class=\"mono\">{_e(v)}</dd>" for k, v in summary) + "</dl></section>")

    body = (plot(_topics_figure(report), "plot-topics") if report.messages
            else "<p>The commit log holds no message.</p>")
    sections.append(f'<section id="topics"><h2>Messages per topic over time</h2>{body}</section>')

    damaged_note = (f"<p>{len(report.damaged)} damaged range(s) shown in red.</p>" if report.damaged
                    else "<p>No damaged range reported.</p>")
    if report.damaged:
        damaged_note += _table(["segment", "file offset", "commit-log offset", "length", "reason"],
                               [[os.path.basename(str(_damaged_field(d, "segment"))),
                                 int(_damaged_field(d, 'file_offset') or 0),
                                 _damaged_field(d, "commitlog_offset"), _damaged_field(d, "length"),
                                 _damaged_field(d, "reason")] for d in report.damaged],
                               ["problem"] * len(report.damaged))
    body = plot(_segments_figure(report), "plot-segments") if report.segments else "<p>No segment files.</p>"
    extra = ["readable past the damage"] if report.salvaged else []
    sections.append(f'<section id="segments"><h2>Commit-log segments</h2>{damaged_note}{body}'
                    + _table(["segment", "start offset", "size", "messages", "used bytes", "BLANK at", "first", "last",
                              *extra],
                             [[s.name, s.start, s.size, s.messages, s.used,
                               "" if s.blank_at is None else s.blank_at, _iso(s.first_time),
                               _iso(s.last_time), *([s.salvaged] if extra else [])] for s in report.segments])
                    + "</section>")

    if report.queues:
        body = plot(_queues_figure(report), "plot-queues") + _table(
            ["topic", "queue", "type", "min offset", "max offset", "depth", "error"],
            [[t, q, k, lo, hi, hi - lo, err or ""] for t, q, k, lo, hi, err in
             sorted(report.queues, key=lambda x: x[4] - x[3], reverse=True)[:200]])
    else:
        body = "<p>No consume queue.</p>"
    sections.append(f'<section id="queues"><h2>Queue depths</h2>{body}</section>')

    if report.lag:
        # Flagged rows first: a long table lists at most 500 rows, and those are the ones to see.
        rows = sorted(report.lag, key=lambda r: not r.flagged)[:500]
        flagged = report.lag_flagged
        head = (f'<p class="{"problem" if flagged else "ok"}">'
                + (f"{flagged} row(s) flagged, as rmqformats lag flags them." if flagged else "Nothing flagged.")
                + "</p>")
        body = head + plot(_lag_figure(report), "plot-lag") + _table(
            ["group", "topic", "queue", "committed", "min offset", "max offset", "lag", "behind commit log",
             "flagged"],
            [[r.group, r.topic, r.queue_id, "" if r.committed_offset is None else r.committed_offset,
              r.min_offset, r.max_offset, r.lag, r.behind_commitlog or "", "; ".join(r.flags)] for r in rows],
            ["problem" if r.flagged else "" for r in rows])
    else:
        body = f"<p>{_e(report.lag_error or 'No committed consumer offsets (config/consumerOffset.json).')}</p>"
    sections.append(f'<section id="lag"><h2>Consumer lag per group</h2>{body}</section>')

    sections.append(_pending_section(report))

    if check is not None:
        counts = ", ".join(f"{k.value}: {n}" for k, n in sorted(check.counts.items(), key=lambda kv: list(Kind).index(kv[0])))
        head = (f'<p class="{"ok" if check.ok else "problem"}">'
                f'{"No problem found." if check.ok else f"{check.problems} problem(s) found."} '
                f'{check.messages:,} message(s) checked against {check.queues} queue(s), '
                f'{check.index_entries:,} index entries and {check.timer_units} timer-log unit(s).'
                f'{" Counts: " + _e(counts) if counts else ""}</p>')
        listed = list(check.findings)
        body = head + _table(["severity", "kind", "finding", "commit log", "queue / index / timer / other"],
                             [[f.severity.value, f.kind.value, f.text, str(f.commitlog or ""), str(f.other or "")]
                              for f in listed],
                             [f.severity.value for f in listed])
    else:
        body = f"<p>{_e(report.check_error or 'Not checked: the store was opened without its root.')}</p>"
    sections.append(f'<section id="findings"><h2>Findings of check</h2>{body}</section>')

    title = f"RocketMQ store report: {report.path}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style><script>{_ERROR_PROBE}</script>"
        + (f"<script>{get_plotlyjs()}</script>" if plotly_src is None
           else f'<script src="{_e(plotly_src)}" charset="utf-8"></script>')
        + "</head><body>"
        f"<h1>{_e(title)}</h1><p class=\"note\">Made by rmqformats {_e(__version__)} at {_e(report.generated)}; "
        "opens without a network.</p>"
        + "".join(sections)
        + '<pre id="page-errors" hidden></pre>'
        + f'<script type="application/json" id="report-data">{_e(json.dumps(_data(report)))}</script>'
        + "</body></html>\n")


def _pending_section(report: StoreReport) -> str:
    """Counts per kind of what is pending, then the first :data:`PENDING_LISTED` rows of each kind."""
    from ..systopics.pending import PARTS, table_cells
    result = report.pending
    if result is None:
        body = f"<p>{_e(report.pending_error or 'Not read.')}</p>"
    else:
        counts = result.counts()
        body = _table(["kind", "what", "rows"], [[part, title, counts[part]] for part, _, title in PARTS])
        for part, attr, title in PARTS:
            table = getattr(result, attr)
            if not table.num_rows:
                continue
            more = f" (first {PENDING_LISTED} of {table.num_rows:,})" if table.num_rows > PENDING_LISTED else ""
            body += (f'<h3 id="pending-{_e(part)}">{_e(title)}{more}</h3>'
                     + _table(table.column_names, list(table_cells(table.slice(0, PENDING_LISTED), _iso))))
    return f'<section id="pending"><h2>Still pending (as rmqformats pending lists it)</h2>{body}</section>'


def _data(report: StoreReport) -> dict:
    """A small machine-readable summary embedded in the page."""
    check = report.check
    return {"path": report.path, "messages": report.messages, "segments": len(report.segments),
            "queues": len(report.queues), "lagRows": len(report.lag),
            "problems": None if check is None else check.problems, "lagFlagged": report.lag_flagged,
            "counts": None if check is None else {k.value: n for k, n in check.counts.items()},
            "rocksdbMessageStore": report.rocksdb_messages,
            "pending": None if report.pending is None else report.pending.counts()}


def write_report(store: Store, path: str | os.PathLike[str], *, index: bool = True, timer: bool = True,
                 max_findings: int = MAX_LISTED, salvage: bool = False, force: bool = False,
                 reads: Iterable[str | os.PathLike[str]] = (), single_file: bool = False,
                 delay_levels_ms: tuple[int, ...] | None = None) -> StoreReport:
    """Build the report of ``store`` (the options of :func:`build_report`) and write its page to ``path``;
    returns the report.

    plotly.js (about 4.6 MB) is written once beside the page as
    :func:`plotly_script_name` (``plotly-<version>.min.js``), which every
    report in that folder shares, and the page loads it by that relative
    name: the page and that file open without a network, and a page is
    about 100 KB. An existing script file with the same bytes is left as it
    is; one with other bytes is replaced only with ``force``. The script is
    written (atomically) before the page is renamed into place, so a page
    never names a script that is not there. With ``single_file``, or when
    ``path`` is a device or pipe, plotly.js is embedded in the page instead.

    The page is written as :mod:`rmqformats.output` writes a file: ``path``
    is locked before the store is read, the page goes to a temporary renamed
    onto ``path`` when complete, an existing non-empty file is replaced only
    with ``force``, and never into the store (its root and commit log, and
    ``reads``).
    """
    from .. import output
    reads = [*reads, *([store.root] if store.root is not None else []), *split_folders(store.commitlog.path)]
    with output.AtomicFile(path, force=force, reads=reads) as f:
        report = build_report(store, index=index, timer=timer, max_findings=max_findings, salvage=salvage,
                              delay_levels_ms=delay_levels_ms)
        src = None if single_file or f.tmp is None else _write_plotly_beside(f.target, force=force, reads=reads)
        page = render_html(report, plotly_src=src)
        with output.write_errors(path):
            f.stream.write(page.encode("utf-8"))
    return report


def _write_plotly_beside(page: str, *, force: bool, reads: list) -> str:
    """Write plotly.js beside ``page`` (unless the same bytes are there already); its name relative to the page."""
    from plotly.offline import get_plotlyjs

    from .. import output
    name = plotly_script_name()
    target = os.path.join(os.path.dirname(os.path.abspath(page)), name)
    data = get_plotlyjs().encode("utf-8")
    try:
        if os.path.isfile(target) and not os.path.islink(target) and os.path.getsize(target) == len(data):
            with open(target, "rb") as existing:
                if existing.read() == data:
                    return name
    except OSError:
        pass
    with output.AtomicFile(target, force=force, reads=reads) as f, output.write_errors(target):
        f.stream.write(data)
    return name


__all__ = ["MAX_CELLS", "SegmentInfo", "StoreReport", "TimeHistogram", "build_report", "plotly_script_name",
           "render_html", "write_report"]
