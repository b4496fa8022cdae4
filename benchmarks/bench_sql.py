"""``rmqformats sql`` on a generated store: time, bytes read and decoded, and peak RSS of whole-store and
one-hour queries.

Each query runs in a fresh process (so each peak RSS is that query's own), after one warm-up walk in this
process that loads the page cache and the compiled kernels' cache; it runs ``--repeat`` times there, and the
first run (which also loads DuckDB and the compiled kernels) and the best of the others (wall and CPU
seconds: the querying process's, DuckDB's threads included, not the workers' of ``--jobs`` above 1) are
printed. The
store is the ``mixed`` log of :mod:`storegen` (``--mib`` MiB in ``--segment-mib`` MiB segments) with store
times spread over ``--span-hours`` hours; the one-hour query asks for the hour in the middle of that span, once with its
time condition where the walk sees it (the segments with no record in the hour are passed after a walk of
their record headers) and once behind a cast the walk does not read (the same rows, every segment decoded).

The windowed queries run with no store-time cache, with the cache emptied before each run (cold: the
first windowed query over a store, which walks every segment and writes their entries) and with the
cache filled by the runs before (warm: the usual next query); ``--cache`` names its folder (default: a
new temporary folder).

For each query: seconds, the records handed to DuckDB, the bytes of segments decoded (records walked and
filtered, columns built for those kept), the bytes read in all (decoded, plus those only walked for their
store times), the segments passed and of those the ones whose times came from the cache; then the one-hour query's ratios to the whole-store query's.

``--rss-mib N`` also generates an N MiB store (``--rss-segment-mib`` MiB segments) and measures the peak RSS
of ``rmqformats sql STORE "SELECT topic, count(*), sum(storeSize) FROM messages GROUP BY topic"`` (the
command line's own ``main``, in a fresh process).

    .venv/bin/python benchmarks/bench_sql.py [--mib 512] [--segment-mib 32] [--span-hours 12] [--jobs 1]
                                             [--repeat 4] [--rss-mib 2048] [--rss-segment-mib 256]
                                             [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from storegen import DEFAULT_DATA_DIR, DEFAULT_SEED, ensure_store  # noqa: E402

_CHILD = """
import json, shutil, sys, time
sys.path.insert(0, {here!r})
from procstats import peak_rss_kib
import rmqformats
store = rmqformats.open_store({root!r})
times, cpus = [], []
for _ in range({repeat}):  # the first run also loads DuckDB and the compiled kernels; the best is the query's own
    if {clear!r}:  # each run with the store-time cache empty
        shutil.rmtree({clear!r}, ignore_errors=True)
    t0, c0 = time.perf_counter(), time.process_time()
    result = store.sql({query!r}, jobs={jobs})
    rows = sum(b.num_rows for b in result)
    times.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
dt = min(times[1:] or times)
cpu = min(cpus[1:] or cpus)
walked = {{name: s.rows for name, s in result.sources.items()}}
options = {{name: {{k: v for k, v in s.options.items()}} for name, s in result.sources.items()}}
scan = result.sources["messages"].scan if "messages" in result.sources else None
io = {{}} if scan is None else {{"decoded": scan.bytes_decoded, "read": scan.bytes_decoded + scan.bytes_hopped,
                               "skipped": scan.segments_skipped, "done": scan.bytes_done,
                               "cached": scan.times_cached}}
print(json.dumps({{"seconds": dt, "cpu": cpu, "first": times[0], "rows": rows, "walked": walked,
                  "options": options, "io": io, "peak_rss_mib": peak_rss_kib() / 1024}}, default=str))
"""

_CLI = """
import io, json, sys, time
sys.path.insert(0, {here!r})
from procstats import peak_rss_kib
from rmqformats.cli import main
t0 = time.perf_counter()
code = main(["sql", {root!r}, {query!r}, "--jobs", "{jobs}"])
dt = time.perf_counter() - t0
print(json.dumps({{"code": code, "seconds": dt, "peak_rss_mib": peak_rss_kib() / 1024}}))
"""


def run(root: str, query: str, jobs: int, repeat: int, cache: str = "", clear: bool = False) -> dict:
    """``query`` in a fresh process with the store-time cache in ``cache`` ("": none), emptied before each
    run with ``clear``."""
    code = _CHILD.format(here=HERE, root=root, query=query, jobs=jobs, repeat=repeat,
                         clear=cache if clear else "")
    env = dict(os.environ, RMQFORMATS_CACHE_DIR=cache)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_cli(root: str, query: str, jobs: int) -> dict:
    code = _CLI.format(here=HERE, root=root, query=query, jobs=jobs)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=512, help="MiB of message data (default: 512)")
    ap.add_argument("--segment-mib", type=int, default=32, help="segment size in MiB (default: 32)")
    ap.add_argument("--span-hours", type=float, default=12, help="hours the store times span (default: 12)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes of the commit-log walk (default: 1)")
    ap.add_argument("--repeat", type=int, default=4,
                    help="runs of each query in its process; the first loads DuckDB and the kernels, and the "
                         "best of the others is reported (default: 4)")
    ap.add_argument("--rss-mib", type=int, default=0,
                    help="also measure a whole-store GROUP BY's peak RSS on a store of this many MiB (default: off)")
    ap.add_argument("--rss-segment-mib", type=int, default=256, help="segment size of that store (default: 256)")
    ap.add_argument("--data", default=DEFAULT_DATA_DIR, help="folder of the generated stores")
    ap.add_argument("--cache", default=None,
                    help="the store-time cache folder of the windowed queries (default: a new temporary folder, "
                         "removed at the end; it is emptied before the cold-cache runs)")
    args = ap.parse_args()
    root, _ = ensure_store(args.data, "mixed", args.mib, args.segment_mib, DEFAULT_SEED,
                           span_hours=args.span_hours)
    import rmqformats
    store = rmqformats.open_store(root)
    size = sum(s.size for s in store.commitlog.segments)
    t0 = time.perf_counter()
    first = last = None
    for batch in store.commitlog.batches(["storeTimestamp"]):  # warm-up: page cache, kernels
        stamps = batch.column(0).cast("int64").to_numpy()
        if len(stamps):
            first = stamps.min() if first is None else min(first, stamps.min())
            last = stamps.max() if last is None else max(last, stamps.max())
    print(f"store {root}: {size / 2**20:,.0f} MiB in {len(store.commitlog.segments)} segments; "
          f"warm-up walk {time.perf_counter() - t0:.2f} s")
    mid = (int(first) + int(last)) // 2
    hour = [time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t / 1000)) for t in (mid, mid + 3_600_000)]
    within = f"storeTimestamp >= TIMESTAMP '{hour[0]}' AND storeTimestamp < TIMESTAMP '{hour[1]}'"
    hidden = within.replace("storeTimestamp", "CAST(storeTimestamp AS TIMESTAMPTZ)")  # not a bare column
    sizes = "SELECT topic, queueId, count(*) AS n, sum(storeSize) AS bytes FROM messages"
    bodies = "SELECT topic, count(*) AS n, sum(octet_length(body)) AS bytes FROM messages"
    temp = None
    if args.cache is None:
        temp = args.cache = tempfile.mkdtemp(prefix="bench-sql-segment-times-")
    # (key, name, query, cache folder, emptied before each run)
    cases = [
        ("floor", "no table (the process's floor)", "SELECT 1 AS one", "", False),
        ("whole", "whole store GROUP BY topic, queueId", f"{sizes} GROUP BY ALL", "", False),
        ("whole-bodies", "whole store GROUP BY with bodies", f"{bodies} GROUP BY ALL", "", False),
        ("hour-uncached", "one hour, no store-time cache", f"{sizes} WHERE {within} GROUP BY ALL", "", False),
        ("hour-cold", "one hour, store-time cache cold", f"{sizes} WHERE {within} GROUP BY ALL", args.cache, True),
        ("hour", "one hour, GROUP BY topic, queueId (warm)", f"{sizes} WHERE {within} GROUP BY ALL", args.cache,
         False),
        ("hour-bodies", "one hour, GROUP BY with bodies (warm)", f"{bodies} WHERE {within} GROUP BY ALL",
         args.cache, False),
        ("hidden", "one hour, condition hidden from the walk", f"{sizes} WHERE {hidden} GROUP BY ALL", "", False),
    ]
    print(f"store-time cache of the windowed queries: {args.cache}")
    print(f"{'query':42s} {'first':>7s} {'time':>8s} {'CPU':>7s} {'records':>9s} {'MiB decoded':>12s} {'MiB read':>9s} "
          f"{'passed':>7s} {'cached':>7s} {'rows':>5s} {'peak RSS':>10s}")
    got = {}
    try:
        for key, name, query, cache, clear in cases:
            r = got[key] = run(root, query, args.jobs, args.repeat, cache, clear)
            io = r["io"]
            print(f"{name:42s} {r['first']:6.2f}s {r['seconds']:7.2f}s {r['cpu']:6.2f}s "
                  f"{r['walked'].get('messages', 0):9,} "
                  f"{_mib(io.get('decoded', 0)):>12s} {_mib(io.get('read', 0)):>9s} {io.get('skipped', 0):7} "
                  f"{io.get('cached', 0):7} {r['rows']:5,} {r['peak_rss_mib']:8,.0f} MiB", flush=True)
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    for hour_key, whole_key in (("hour-uncached", "whole"), ("hour-cold", "whole"), ("hour", "whole"),
                                ("hour-bodies", "whole-bodies")):
        h, w = got[hour_key], got[whole_key]
        print(f"{hour_key} / {whole_key}: time {h['seconds'] / w['seconds']:.2f}, CPU {h['cpu'] / w['cpu']:.2f}, "
              f"bytes decoded "
              f"{h['io']['decoded'] / w['io']['decoded']:.3f}, bytes read {h['io']['read'] / w['io']['read']:.3f}")
    if args.rss_mib:
        big, _ = ensure_store(args.data, "mixed", args.rss_mib, args.rss_segment_mib, DEFAULT_SEED,
                              span_hours=args.span_hours)
        big_size = sum(s.size for s in rmqformats.open_store(big).commitlog.segments)
        query = "SELECT topic, count(*) AS n, sum(storeSize) AS bytes FROM messages GROUP BY topic"
        r = run_cli(big, query, args.jobs)
        print(f"rmqformats sql GROUP BY topic on {big_size / 2**20:,.0f} MiB of segments: exit {r['code']}, "
              f"{r['seconds']:.2f} s, peak RSS {r['peak_rss_mib']:,.0f} MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
