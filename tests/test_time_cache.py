"""The store-time cache: each segment's store times kept outside the store, the window's answer unchanged.

A windowed walk with the cache warm gives exactly the rows, order, data end,
BLANK records and strict errors of the walk without it, and reads only the
segments whose cached times meet the window (the others' times come from
the cache: ``times_cached``, and no time walk runs for them). A segment
changed after its entry was written (rewritten in place, its mtime put
back, replaced by another file) is walked again. A cache folder that cannot
be written, corrupt entries and ``RMQFORMATS_CACHE_DIR=""`` change nothing
but the speed, and the cache never lands in the store.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

import rmqformats
from rmqformats.synth.commitlog import MessageSpec, write_commitlog
from rmqformats.walk import timecache
from rmqformats.walk.timebounds import walk_times
from rmqformats.walk import kernels as K

from conftest import VERSIONS, store_path
from test_time_pruning import COLUMNS, HOUR, SEGMENT, T0, walk

WINDOW = (T0 + 6 * HOUR, T0 + 7 * HOUR)


def build(folder, moved: dict[int, int] | None = None) -> list[int]:
    """The 12-hour commit log of test_time_pruning (16 KiB segments); ``moved``: record index -> store time."""
    n = 600
    times = [T0 + i * 12 * HOUR // n for i in range(n)]
    for i, t in (moved or {}).items():
        times[i] = t
    specs = [MessageSpec(topic=f"T{i % 3}", body=bytes([65 + i % 26]) * (200 + i % 50), properties={"KEYS": f"k{i}"},
                         queue_id=i % 4, queue_offset=i, store_timestamp=t) for i, t in enumerate(times)]
    placed = write_commitlog(folder, specs, segment_size=SEGMENT)
    return times, placed


@pytest.fixture
def cache(tmp_path_factory, monkeypatch):
    """A fresh cache folder for the test; files settled for 50 ms get entries (the tests wait 0.1 s after
    writing a store, and the coarse clock of a file's times steps by far less than 50 ms)."""
    folder = tmp_path_factory.mktemp("cache") / "segment-times"  # outside the stores, which are in tmp_path
    monkeypatch.setenv(timecache.CACHE_ENV, str(folder))
    monkeypatch.setattr(timecache, "SETTLED_NS", 50_000_000)
    return folder


@pytest.fixture
def store(tmp_path):
    folder = tmp_path / "store" / "commitlog"
    times, placed = build(folder)
    time.sleep(0.1)
    return folder, times, placed


@pytest.fixture
def walks(monkeypatch):
    """How many time walks read a segment (``walk_times`` calls in this process)."""
    count = [0]
    real = timecache.walk_times

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(timecache, "walk_times", counted)
    return count


def no_cache(path, **options):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(timecache.CACHE_ENV, "")
        return walk(path, **options)


def same(a, b) -> None:
    """Two walks' (table, error, scan) give the same answer."""
    assert a[1] == b[1]
    if a[0] is not None:
        assert a[0].equals(b[0])
    assert a[2].end == b[2].end
    assert a[2].blanks == b[2].blanks
    assert a[2].bytes_done == b[2].bytes_done
    assert a[2].segments_skipped == b[2].segments_skipped


def entries(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".json")) if os.path.isdir(folder) else []


def holding(times, placed, since, until) -> set[int]:
    return {p.commitlog_offset // SEGMENT for p, t in zip(placed, times) if since <= t < until}


def test_a_warm_cache_reads_only_the_window_segments(store, cache, walks):
    folder, times, placed = store
    segments = rmqformats.open_store(folder).commitlog.segments
    last = len(segments) - 1
    held = holding(times, placed, *WINDOW) - {last}
    plain = no_cache(folder, since=WINDOW[0], until=WINDOW[1])
    walks[0] = 0
    cold = walk(folder, since=WINDOW[0], until=WINDOW[1])
    same(cold, plain)
    assert cold[2].times_cached == 0 and walks[0] == last
    assert cold[2].bytes_hopped == plain[2].bytes_hopped  # the first query reads what it reads without cache
    # Every segment but the last: those passed by the time walk, and those holding the hour by the decoding
    # walk, which went through all their records to the BLANK record.
    assert len(entries(cache)) == last
    walks[0] = 0
    warm = walk(folder, since=WINDOW[0], until=WINDOW[1])
    same(warm, plain)
    assert warm[2].times_cached == warm[2].segments_skipped == last - len(held)
    assert walks[0] == len(held)  # only the segments holding the hour are walked for their times
    assert warm[2].bytes_hopped <= sum(segments[i].size for i in held)
    assert warm[2].bytes_hopped + warm[2].bytes_decoded < plain[2].bytes_hopped + plain[2].bytes_decoded
    assert (warm[2].bytes_hopped + warm[2].bytes_decoded) * 3 <= warm[2].bytes_done
    # Another window: its own segments are walked as they hold it; the first window's are passed from the cache.
    other = (T0 + 2 * HOUR, T0 + 3 * HOUR)
    held2 = holding(times, placed, *other) - {last}
    walks[0] = 0
    got = walk(folder, since=other[0], until=other[1])
    assert walks[0] == len(held2)
    same(got, no_cache(folder, since=other[0], until=other[1]))
    assert len(entries(cache)) == last
    walks[0] = 0
    again = walk(folder, since=WINDOW[0], until=WINDOW[1])
    assert walks[0] == len(held)
    same(again, plain)


@pytest.mark.parametrize("strict", [False, True])
def test_every_window_equals_the_walk_without_cache(store, cache, strict):
    folder, times, _ = store
    walk(folder, since=WINDOW[0], until=WINDOW[1])  # warms the cache
    windows = [(T0 + h * HOUR, T0 + (h + 1) * HOUR) for h in range(-1, 13)]
    windows += [(T0 + 5 * HOUR, None), (None, T0 + 5 * HOUR), (T0 + 5 * HOUR, T0 + 5 * HOUR),
                (times[100], times[100] + 1), (times[100] + 1, times[101])]  # one record; between two records
    for since, until in windows:
        warm = walk(folder, since=since, until=until, strict=strict)
        same(warm, no_cache(folder, since=since, until=until, strict=strict))
        if warm[0] is not None:
            assert warm[0].num_rows == sum((since is None or since <= t) and (until is None or t < until)
                                           for t in times)


def damage(folder, offset: int, data: bytes) -> None:
    with open(os.path.join(folder, f"{offset - offset % SEGMENT:020d}"), "r+b") as f:
        f.seek(offset % SEGMENT)
        f.write(data)


def test_damage_and_schedule_records_are_met_with_a_warm_cache(tmp_path, cache):
    folder = tmp_path / "commitlog"
    times, placed = build(folder)
    time.sleep(0.1)
    bad = placed[150]
    damage(folder, bad.commitlog_offset + 4, b"\x12\x34\x56\x78")
    time.sleep(0.1)
    for strict in (False, True):
        for _ in range(2):  # cold, then warm
            got = walk(folder, since=T0 + 8 * HOUR, until=T0 + 9 * HOUR, strict=strict)
            same(got, no_cache(folder, since=T0 + 8 * HOUR, until=T0 + 9 * HOUR, strict=strict))
            assert got[2].end.segment.endswith(f"{bad.commitlog_offset - bad.commitlog_offset % SEGMENT:020d}")
            assert not got[2].end.reason.is_clean
    assert entries(cache)


def copy_segment(src, dst, index: int) -> str:
    """Write the bytes of segment ``index`` of commit log ``src`` over that of ``dst`` (same size)."""
    name = f"{index * SEGMENT:020d}"
    with open(os.path.join(src, name), "rb") as f:
        data = f.read()
    path = os.path.join(dst, name)
    assert os.path.getsize(path) == len(data)
    with open(path, "r+b") as f:
        f.write(data)
    return path


@pytest.mark.parametrize("how", ["rewrite", "rewrite-mtime-kept", "replace"])
def test_a_segment_changed_after_it_was_cached_is_walked_again(tmp_path, store, cache, how):
    folder, times, placed = store
    walk(folder, since=WINDOW[0], until=WINDOW[1])  # every segment but the last cached
    before = len(entries(cache))
    # The same records with the store times of segment 2 moved into the window: the same bytes but those.
    target = 2
    moved = {i: WINDOW[0] + i for i, p in enumerate(placed) if p.commitlog_offset // SEGMENT == target}
    other = tmp_path / "other" / "commitlog"
    new_times, new_placed = build(other, moved)
    assert new_placed == placed
    path = os.path.join(folder, f"{target * SEGMENT:020d}")
    st = os.stat(path)
    if how == "replace":
        shutil.copyfile(os.path.join(other, f"{target * SEGMENT:020d}"), str(path) + ".new")
        os.replace(str(path) + ".new", path)
    else:
        copy_segment(other, folder, target)
        if how == "rewrite-mtime-kept":
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            assert os.stat(path).st_mtime_ns == st.st_mtime_ns
    got = walk(folder, since=WINDOW[0], until=WINDOW[1])
    same(got, no_cache(folder, since=WINDOW[0], until=WINDOW[1]))
    assert got[0].num_rows == sum(WINDOW[0] <= t < WINDOW[1] for t in new_times) > \
        sum(WINDOW[0] <= t < WINDOW[1] for t in times)
    assert set(got[0].column("commitLogOffset").to_pylist()) >= {placed[i].commitlog_offset for i in moved}
    assert len(entries(cache)) in (before, before + 1)  # its new entry only once its times settled


def test_a_touched_segment_is_walked_again(store, cache, walks):
    folder, times, placed = store
    walk(folder, since=WINDOW[0], until=WINDOW[1])
    path = os.path.join(folder, f"{1 * SEGMENT:020d}")
    os.utime(path, ns=(1, 1))
    walks[0] = 0
    got = walk(folder, since=WINDOW[0], until=WINDOW[1])
    walked = walks[0]
    same(got, no_cache(folder, since=WINDOW[0], until=WINDOW[1]))
    last = len(rmqformats.open_store(folder).commitlog.segments) - 1
    held = holding(times, placed, *WINDOW) - {last}
    assert walked == len(held) + 1  # the window's segments and the touched one


def test_a_file_changed_lately_gets_no_entry(store, cache, monkeypatch):
    """A file whose status changed less than SETTLED_NS before the walk ended gets no entry: a write in the
    same step of a coarse file-system clock would not change its times."""
    folder, _, _ = store
    monkeypatch.setattr(timecache, "SETTLED_NS", 600 * 10**9)
    got = walk(folder, since=WINDOW[0], until=WINDOW[1])
    same(got, no_cache(folder, since=WINDOW[0], until=WINDOW[1]))
    assert entries(cache) == []


@pytest.mark.parametrize("how", ["a-file", "empty", "unwritable"])
def test_a_cache_that_cannot_be_used_changes_nothing(store, cache, monkeypatch, capfd, how):
    folder, _, _ = store
    if how == "a-file":  # its folder is a file: it can be neither made nor written
        cache.write_bytes(b"not a folder")
        monkeypatch.setenv(timecache.CACHE_ENV, str(cache / "sub"))
    elif how == "empty":
        monkeypatch.setenv(timecache.CACHE_ENV, "")
    else:
        cache.mkdir()
        cache.chmod(0o500)
        if os.access(cache, os.W_OK):  # root writes anyway
            pytest.skip("this user writes into a folder of mode 0500")
    for _ in range(2):
        got = walk(folder, since=WINDOW[0], until=WINDOW[1])
        same(got, no_cache(folder, since=WINDOW[0], until=WINDOW[1]))
        assert got[2].times_cached == 0
    out = capfd.readouterr()
    assert out.out == "" and out.err == ""
    if how == "unwritable":
        assert os.listdir(cache) == []


@pytest.mark.parametrize("how", ["garbage", "truncated", "foreign", "wrong-types", "empty"])
def test_corrupt_entries_are_passed_over(store, cache, capfd, walks, how):
    folder, _, _ = store
    walk(folder, since=WINDOW[0], until=WINDOW[1])
    names = entries(cache)
    assert names
    texts = [(cache / n).read_bytes() for n in names]
    for k, name in enumerate(names):
        text = texts[k]
        if how == "garbage":
            text = os.urandom(64)
        elif how == "truncated":
            text = text[:len(text) // 2]
        elif how == "foreign":  # another segment's entry
            text = texts[(k + 1) % len(texts)]
        elif how == "wrong-types":
            data = json.loads(text)
            data["times"]["low"], data["times"]["stop"] = str(data["times"]["low"]), 0.5
            data["times"]["pos"] = True
            text = json.dumps(data).encode()
        else:
            text = b""
        (cache / name).write_bytes(text)
    walks[0] = 0
    got = walk(folder, since=WINDOW[0], until=WINDOW[1])
    walked = walks[0]
    same(got, no_cache(folder, since=WINDOW[0], until=WINDOW[1]))
    assert got[2].times_cached == 0
    assert walked == len(rmqformats.open_store(folder).commitlog.segments) - 1  # every segment walked again
    assert capfd.readouterr().err == ""
    again = walk(folder, since=WINDOW[0], until=WINDOW[1])  # the entries were written again
    assert again[2].times_cached == again[2].segments_skipped > 0


@pytest.mark.parametrize("inside", ["commitlog", "root"])
def test_the_cache_never_lands_in_the_store(store, monkeypatch, inside):
    folder, _, _ = store
    place = folder / "cache" if inside == "commitlog" else folder.parent / "segment-times"
    monkeypatch.setenv(timecache.CACHE_ENV, str(place))
    monkeypatch.setattr(timecache, "SETTLED_NS", 0)
    listing = sorted(os.listdir(folder)), sorted(os.listdir(folder.parent))
    assert timecache.cache_for(str(folder)) is None
    got = walk(folder, since=WINDOW[0], until=WINDOW[1])
    same(got, no_cache(folder, since=WINDOW[0], until=WINDOW[1]))
    assert not place.exists()
    assert (sorted(os.listdir(folder)), sorted(os.listdir(folder.parent))) == listing


def test_where_the_cache_is(monkeypatch, tmp_path):
    monkeypatch.delenv(timecache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert timecache.default_folder() == str(tmp_path / "xdg" / "rmqformats" / "segment-times")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert timecache.default_folder() == str(tmp_path / "home" / ".cache" / "rmqformats" / "segment-times")
    monkeypatch.setenv(timecache.CACHE_ENV, "")
    assert timecache.default_folder() is None
    assert timecache.cache_for(str(tmp_path / "store" / "commitlog")) is None


def jobs2(folder, since, until):
    log = rmqformats.open_store(folder).commitlog
    scan = log.batches(COLUMNS, batch_size=50, since=since, until=until, jobs=2)
    return scan.read_all(), None, scan


def test_two_jobs_equal_one_with_the_cache_cold_and_warm(store, cache, monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    folder, times, placed = store
    segments = rmqformats.open_store(folder).commitlog.segments
    for since, until in [WINDOW, (T0 + 2 * HOUR, T0 + 3 * HOUR)]:
        plain = no_cache(folder, since=since, until=until)
        cold = jobs2(folder, since, until)  # walked by the workers, which write the entries
        assert cold[2].parallel
        same(cold, plain)
        assert len(entries(cache)) >= len(segments) - 1 - len(holding(times, placed, since, until))
        warm = jobs2(folder, since, until)
        same(warm, plain)
        assert warm[2].times_cached == warm[2].segments_skipped > 0
        same(walk(folder, since=since, until=until), plain)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_window_walk_with_no_hit_is_the_whole_walk(version):
    """What an entry keeps answers a window it does not meet: for each vector segment and windows around
    its own times, the walk in a window the whole walk's times do not meet is the whole walk, and a window
    with a record in it meets them."""
    for seg in rmqformats.open_store(store_path(version)).commitlog.segments:
        fd = os.open(seg.path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            whole = walk_times(fd, size)
            assert not whole.hit
            mid = (whole.low + whole.high) // 2
            for low, high in [(whole.low, whole.low + 1), (mid, mid + 1), (whole.high, whole.high + 1),
                              (whole.high + 1, whole.high + 10), (whole.low - 10, whole.low), (mid, mid)]:
                windowed = walk_times(fd, size, low=low, high=high)
                if windowed.hit:
                    assert windowed.stop == K.STOP_LIMIT and timecache.meets(whole, low, high)
                else:
                    assert windowed == whole
                if not timecache.meets(whole, low, high):
                    assert not windowed.hit
        finally:
            os.close(fd)


def test_commands_use_the_cache_and_write_the_same_output(store, cache, capfdbinary, monkeypatch):
    """``messages`` with a store-time window, one job and two, writes the same lines cold and warm as with no
    cache; the entries land in ``RMQFORMATS_CACHE_DIR``."""
    from rmqformats.cli import main
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    folder, times, _ = store
    window = ["--since", str(WINDOW[0]), "--until", str(WINDOW[1])]

    def messages(jobs: int, env: str | None = None):
        with pytest.MonkeyPatch.context() as mp:
            if env is not None:
                mp.setenv(timecache.CACHE_ENV, env)
            code = main(["messages", str(folder), "--format", "jsonl", *window, "--jobs", str(jobs)])
            return code, capfdbinary.readouterr()
    plain = messages(1, "")
    assert plain[0] == 0 and plain[1].out.count(b"\n") == sum(WINDOW[0] <= t < WINDOW[1] for t in times)
    assert not entries(cache)
    assert messages(1) == plain  # cold
    assert entries(cache)
    assert messages(1) == plain  # warm
    assert messages(2) == plain


@pytest.mark.parametrize("version", VERSIONS)
def test_vector_stores_give_the_uncached_answer_warm(version, cache):
    """The real stores' windows (their times go back and forth) with every segment's entry written: the rows,
    end and BLANK records of the walk without cache, and the segments passed on their cached times."""
    import numpy as np
    path = store_path(version)
    stamps = np.sort(rmqformats.open_store(path).commitlog.to_arrow("storeTimestamp").column(0)
                     .cast("int64").to_numpy())
    cuts = [int(stamps[int(q * (len(stamps) - 1))]) for q in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)]
    windows = list(zip(cuts, cuts[1:])) + [(cuts[-1] + 1, None), (None, cuts[0])]
    for since, until in windows:  # cold: the entries of the segments walked through
        same(walk(path, since=since, until=until), no_cache(path, since=since, until=until))
    assert entries(cache)
    cached = 0
    for since, until in windows:
        got = walk(path, since=since, until=until)
        same(got, no_cache(path, since=since, until=until))
        cached += got[2].times_cached
    assert cached > 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_inspect_fills_the_cache(cache, store, walks, capsys, monkeypatch, jobs):
    """``inspect`` (one walk of every record) leaves each segment's entry, the same a time walk writes, so
    that the first store-time window after it walks only the segments its window meets."""
    from rmqformats.cli import main

    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    folder, _, _ = store
    assert main(["inspect", str(folder.parent), "--jobs", str(jobs), "--format", "json"]) == 0
    capsys.readouterr()
    entries = {p.name: json.loads(p.read_text()) for p in cache.iterdir()}
    segments = sorted(os.listdir(folder))
    assert len(entries) == len(segments) - 1  # all but the last
    # Each equals the entry a time walk of the segment writes.
    shutil.rmtree(cache)
    for name in segments[:-1]:
        timecache.file_times(str(folder / name), os.path.getsize(folder / name), cache=timecache.cache_for(str(folder)))
    assert {p.name: json.loads(p.read_text()) for p in cache.iterdir()} == entries
    # A window after inspect: no time walk of a segment the window does not meet, the uncached answer.
    shutil.rmtree(cache)
    assert main(["inspect", str(folder.parent), "--jobs", str(jobs), "--format", "json"]) == 0
    capsys.readouterr()
    walks[0] = 0
    table, error, scan = walk(folder, since=WINDOW[0], until=WINDOW[1])
    assert walks[0] <= 2  # only the segments whose times meet the window are walked for their times
    table2, error2, scan2 = no_cache(folder, since=WINDOW[0], until=WINDOW[1])
    assert error is None and error2 is None and table.equals(table2) and table.num_rows
    assert scan.end == scan2.end and scan.blanks == scan2.blanks
    assert scan.segments_skipped == scan2.segments_skipped == scan.times_cached > 0


def test_inspect_entries_equal_the_time_walks_on_the_vectors(cache, tmp_path, capsys, version):
    """On each vector store (scheduled messages, BLANK records, several segments), the entries ``inspect``
    leaves are those the time walks write."""
    from rmqformats.cli import main

    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    time.sleep(0.1)
    assert main(["inspect", str(root), "--jobs", "1", "--format", "json"]) in (0, 3)
    capsys.readouterr()
    by_inspect = {p.name: json.loads(p.read_text()) for p in cache.iterdir()}
    shutil.rmtree(cache)
    folder = root / "commitlog"
    for name in sorted(os.listdir(folder))[:-1]:
        timecache.file_times(str(folder / name), os.path.getsize(folder / name), cache=timecache.cache_for(str(folder)))
    by_walk = {p.name: json.loads(p.read_text()) for p in cache.iterdir()} if cache.exists() else {}
    assert by_inspect == by_walk and by_walk


def _entries(cache) -> dict:
    return {p.name: json.loads(p.read_text()) for p in cache.iterdir()} if cache.exists() else {}


def _time_walk_entries(cache, folder) -> dict:
    shutil.rmtree(cache, ignore_errors=True)
    for name in sorted(os.listdir(folder))[:-1]:
        timecache.file_times(str(folder / name), os.path.getsize(folder / name), cache=timecache.cache_for(str(folder)))
    return _entries(cache)


def test_a_whole_walk_fills_the_cache(cache, store, walks):
    """A serial walk of every record (no window: ``messages``, ``export``, ``sql`` on the whole store) leaves
    each segment's entry, the one a time walk writes; a walk that starts, stops or filters by offset
    inside the log leaves none for the segments it does not walk whole."""
    folder, _, placed = store
    log = rmqformats.open_store(folder).commitlog
    log.batches(["storeSize"], jobs=1).read_all()
    by_walk = _entries(cache)
    assert by_walk == _time_walk_entries(cache, folder) and len(by_walk) == len(os.listdir(folder)) - 1
    shutil.rmtree(cache)
    middle = log.segments[2].start_offset + 100
    log.batches(["storeSize"], jobs=1, stop=middle).read_all()
    assert len(_entries(cache)) == 2  # the segments before the one it stopped in
    walks[0] = 0
    table, error, scan = walk(folder, since=WINDOW[0], until=WINDOW[1])
    assert error is None and scan.times_cached == 2


def test_a_whole_walk_fills_the_cache_on_the_vectors(cache, tmp_path, version):
    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    time.sleep(0.1)
    folder = root / "commitlog"
    rmqformats.open_store(root).commitlog.batches(["storeSize"], jobs=1).read_all()
    by_walk = _entries(cache)
    assert by_walk and by_walk == _time_walk_entries(cache, folder)


@pytest.mark.parametrize("how", ["batches", "export"])
def test_workers_fill_the_cache(cache, store, monkeypatch, tmp_path, how):
    """With workers (ranges of a segment, or whole segments for a Parquet export), a walk of every record
    leaves the entries a time walk writes: the ranges' times, summed in commit-log order."""
    from rmqformats.cli import main

    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")
    folder, _, _ = store
    if how == "batches":
        scan = rmqformats.open_store(folder).commitlog.batches(["storeSize"], jobs=3)
        scan.read_all()
        assert scan.ranges_used > 10
    else:
        assert main(["export", str(folder.parent), "--to", "parquet", str(tmp_path / "out"), "--jobs", "3"]) == 0
    by_workers = _entries(cache)
    assert len(by_workers) == len(os.listdir(folder)) - 1
    assert by_workers == _time_walk_entries(cache, folder)
