"""A store-time window passes the segments that cannot hold it, with the unpruned walk's exact answer.

``CommitLog.batches(since=, until=)`` walks each segment's record headers
first (:func:`rmqformats.walk.kernels.time_bounds`) and decodes only the
segments with a record in the window; the rows, their order, the data end,
the BLANK records and a strict walk's error are those of the walk that
decodes every segment (``ColumnarScan._skip`` patched to pass nothing).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import rmqformats
from rmqformats.walk.parallel import ParallelScan
from rmqformats.walk.scan import ColumnarScan
from rmqformats.synth.commitlog import MessageSpec, write_commitlog

from conftest import VERSIONS, store_path

HOUR = 3_600_000
T0 = 1_790_000_000_000
SEGMENT = 16 << 10
COLUMNS = ["commitLogOffset", "topic", "queueId", "storeTimestamp", "body"]


def unpruned(monkeypatch):
    monkeypatch.setattr(ColumnarScan, "_skip", lambda self, *args: None)


def walk(path, monkeypatch=None, **options):
    """The table (or the strict walk's error), the scan and its end, pruned or (with ``monkeypatch``) not."""
    with pytest.MonkeyPatch.context() as mp:
        if monkeypatch is not None:
            unpruned(mp)
        scan = rmqformats.open_store(path).commitlog.batches(COLUMNS, batch_size=50, **options)
        try:
            table, error = scan.read_all(), None
        except rmqformats.RmqFormatError as exc:
            table, error = None, (type(exc), str(exc))
    return table, error, scan


def assert_same(path, **options) -> ColumnarScan:
    pruned, error, scan = walk(path, **options)
    whole, error2, scan2 = walk(path, monkeypatch=True, **options)
    assert error == error2
    if pruned is not None:
        assert pruned.equals(whole)
    assert scan.end == scan2.end
    assert scan.blanks == scan2.blanks
    assert scan.bytes_done == scan2.bytes_done
    assert scan2.segments_skipped == 0
    return scan


def twelve_hours(folder, *, late_early: bool = False, damage: bytes | None = None,
                 schedule: bool = False) -> tuple[list[int], list]:
    """A commit log of 16 KiB segments whose store times rise over 12 hours (the store times, the placements).

    ``late_early`` gives one record of the last full segment a time of the second hour; ``schedule`` makes
    one record of the first segment a ``SCHEDULE_TOPIC_XXXX`` record with a DELAY the broker rejects.
    """
    n = 600
    times = [T0 + i * 12 * HOUR // n for i in range(n)]
    if late_early:
        times[-60] = T0 + HOUR + 17
    specs = []
    for i, t in enumerate(times):
        topic, props = f"T{i % 3}", {"KEYS": f"k{i}"}
        if schedule and i == 5:
            topic, props = "SCHEDULE_TOPIC_XXXX", {"DELAY": "not-a-number", "REAL_TOPIC": "T0"}
        specs.append(MessageSpec(topic=topic, body=bytes([65 + i % 26]) * (200 + i % 50), properties=props,
                                 queue_id=i % 4, queue_offset=i, store_timestamp=t))
    placed = write_commitlog(folder, specs, segment_size=SEGMENT)
    return times, placed


def segment_of(offset: int) -> int:
    return offset // SEGMENT


@pytest.fixture
def store(tmp_path):
    folder = tmp_path / "store" / "commitlog"
    times, placed = twelve_hours(folder)
    return folder, times, placed


def test_each_hour_equals_the_unpruned_walk(store):
    folder, times, placed = store
    for h in range(-1, 13):
        assert_same(folder, since=T0 + h * HOUR, until=T0 + (h + 1) * HOUR)
    assert_same(folder, since=T0 + 5 * HOUR)
    assert_same(folder, until=T0 + 5 * HOUR)
    assert_same(folder, since=T0 + 5 * HOUR, until=T0 + 5 * HOUR)  # an empty window


def test_one_hour_decodes_only_the_segments_that_hold_it(store):
    folder, times, placed = store
    segments = rmqformats.open_store(folder).commitlog.segments
    assert len(segments) >= 8
    since, until = T0 + 6 * HOUR, T0 + 7 * HOUR
    holding = {segment_of(p.commitlog_offset) for p, t in zip(placed, times) if since <= t < until}
    decoded = holding | {len(segments) - 1}  # the last segment is always decoded (its end may be live)
    table, _, scan = walk(folder, since=since, until=until)
    assert table.num_rows == sum(since <= t < until for t in times)
    assert scan.segments_skipped == len(segments) - len(decoded)
    assert scan.bytes_skipped == sum(s.size for i, s in enumerate(segments) if i not in decoded)
    assert scan.bytes_decoded <= sum(segments[i].size for i in decoded)
    assert scan.bytes_decoded * 3 <= scan.bytes_done  # a twelfth of the times: well under a third decoded


def test_a_later_segment_with_an_earlier_time_is_read(tmp_path):
    folder = tmp_path / "commitlog"
    times, placed = twelve_hours(folder, late_early=True)
    late = placed[-60]
    since, until = T0 + HOUR, T0 + 2 * HOUR
    scan = assert_same(folder, since=since, until=until)
    table, _, _ = walk(folder, since=since, until=until)
    assert late.commitlog_offset in table.column("commitLogOffset").to_pylist()
    assert table.num_rows == sum(since <= t < until for t in times)
    assert scan.segments_skipped > 0


def corrupt(folder, offset: int, data: bytes) -> None:
    path = os.path.join(folder, f"{offset - offset % SEGMENT:020d}")
    with open(path, "r+b") as f:
        f.seek(offset % SEGMENT)
        f.write(data)


@pytest.mark.parametrize("how", ["magic", "size", "zero"])
def test_damage_outside_the_window_ends_the_data_as_before(tmp_path, how):
    folder = tmp_path / "commitlog"
    times, placed = twelve_hours(folder)
    bad = placed[150]  # hour 3
    if how == "magic":
        corrupt(folder, bad.commitlog_offset + 4, b"\x12\x34\x56\x78")
    elif how == "size":
        corrupt(folder, bad.commitlog_offset, (bad.size + 7).to_bytes(4, "big"))
    else:
        corrupt(folder, bad.commitlog_offset, bytes(8))
    for strict in (False, True):
        scan = assert_same(folder, since=T0 + 8 * HOUR, until=T0 + 9 * HOUR, strict=strict)
        assert scan.end.segment.endswith(f"{bad.commitlog_offset - bad.commitlog_offset % SEGMENT:020d}")
        assert not scan.end.reason.is_clean or how == "zero"


def test_a_schedule_record_outside_the_window_is_checked(tmp_path):
    folder = tmp_path / "commitlog"
    twelve_hours(folder, schedule=True)
    scan = assert_same(folder, since=T0 + 8 * HOUR, until=T0 + 9 * HOUR)
    assert scan.end.reason.name == "BAD_PROPERTY"


@pytest.mark.parametrize("options", [{"stop": 5 * SEGMENT + 100}, {"to_offset": 4 * SEGMENT + 1},
                                     {"start": 2 * SEGMENT}, {"from_offset": 3 * SEGMENT + 10},
                                     {"topic": "T1", "queue_id": 1}, {"verify_crc": True}])
def test_other_bounds_of_the_walk_are_kept(store, options):
    folder, _, _ = store
    for h in (0, 3, 8):
        assert_same(folder, since=T0 + h * HOUR, until=T0 + (h + 1) * HOUR, **options)


def test_several_jobs_pass_the_same_segments(store, monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    folder, times, _ = store
    since, until = T0 + 6 * HOUR, T0 + 7 * HOUR
    one, _, scan1 = walk(folder, since=since, until=until)
    log = rmqformats.open_store(folder).commitlog
    many = log.batches(COLUMNS, batch_size=50, since=since, until=until, jobs=2)
    assert isinstance(many, ParallelScan) and many.parallel
    assert many.read_all().equals(one)
    assert many.end == scan1.end and many.blanks == scan1.blanks
    assert many.segments_skipped == scan1.segments_skipped > 0


@pytest.mark.parametrize("version", VERSIONS)
def test_vector_stores_equal_the_unpruned_walk(version):
    path = store_path(version)
    stamps = np.sort(rmqformats.open_store(path).commitlog.to_arrow("storeTimestamp").column(0)
                     .cast("int64").to_numpy())
    cuts = [int(stamps[int(q * (len(stamps) - 1))]) for q in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)]
    skipped = [assert_same(path, since=a, until=b).segments_skipped for a, b in zip(cuts, cuts[1:])]
    assert max(skipped) > 0  # the vectors' windows do leave segments out
    assert_same(path, since=cuts[-1] + 1)
    assert_same(path, until=cuts[0])


def cli_outputs(capfdbinary, folder, out, jobs: int) -> dict:
    """What ``messages`` and ``export`` (JSON Lines and Parquet) write for hour 6 with ``--jobs``."""
    import pyarrow.parquet as pq
    from rmqformats.cli import main
    window = ["--since", str(T0 + 6 * HOUR), "--until", str(T0 + 7 * HOUR), "--jobs", str(jobs)]
    got = {"messages": (main(["messages", str(folder), "--format", "jsonl", *window]), capfdbinary.readouterr())}
    target = out / f"e{jobs}.jsonl"
    got["jsonl"] = (main(["export", str(folder), "--to", "jsonl", str(target), *window]), target.read_bytes())
    capfdbinary.readouterr()
    target = out / f"p{jobs}"
    got["parquet"] = (main(["export", str(folder), "--to", "parquet", str(target), *window]),
                      pq.read_table(target).to_pylist())
    capfdbinary.readouterr()
    return got


def test_commands_give_the_unpruned_output(store, tmp_path, capfdbinary, monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    folder, times, _ = store
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    pruned = cli_outputs(capfdbinary, folder, tmp_path / "a", 1)
    jobs = cli_outputs(capfdbinary, folder, tmp_path / "b", 2)
    unpruned(monkeypatch)
    whole = cli_outputs(capfdbinary, folder, tmp_path / "c", 1)
    assert pruned["messages"][0] == 0
    assert pruned["messages"][1].out.count(b"\n") == sum(T0 + 6 * HOUR <= t < T0 + 7 * HOUR for t in times)
    assert pruned == whole
    assert jobs["messages"] == whole["messages"] and jobs["jsonl"] == whole["jsonl"]
    assert jobs["parquet"] == whole["parquet"]


@pytest.mark.parametrize("version", VERSIONS)
def test_segment_times_are_the_records_own(version):
    """Each vector segment's least and greatest store time, from the header walk, are those of its decoded
    rows (up to where it stopped: a segment's BLANK record, or the last record before the zero fill, which
    the decoding walk checks more strictly before taking it)."""
    from rmqformats.walk import kernels as K
    from rmqformats.walk.timebounds import segment_times
    log = rmqformats.open_store(store_path(version)).commitlog
    table = log.to_arrow(["commitLogOffset", "storeTimestamp"])
    offsets = table.column("commitLogOffset").to_numpy()
    stamps = table.column("storeTimestamp").cast("int64").to_numpy()
    for i, seg in enumerate(log.segments):
        found = segment_times(seg)
        assert found.stop == (K.STOP_FRONTIER if i == len(log.segments) - 1 else K.STOP_BLANK)
        mine = stamps[(offsets >= seg.start_offset) & (offsets < seg.start_offset + found.pos)]
        assert (found.low, found.high) == (int(mine.min()), int(mine.max()))
        assert not found.hit
