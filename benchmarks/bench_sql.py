"""``rmqformats sql`` on a generated store: time, records walked and peak RSS of whole-store and one-hour queries.

Each query runs in a fresh process (so each peak RSS is that query's own), after one warm-up walk in this
process that loads the page cache and the compiled kernels' cache. The store is the ``mixed`` log of
:mod:`storegen` (``--mib`` MiB in ``--segment-mib`` MiB segments) with store times spread over
``--span-hours`` hours; the one-hour query asks for the hour in the middle of that span, once with its
time condition where the walk sees it and once behind a cast the walk does not read (the same rows,
every record walked).

    .venv/bin/python benchmarks/bench_sql.py [--mib 256] [--segment-mib 64] [--span-hours 12] [--jobs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from storegen import DEFAULT_DATA_DIR, DEFAULT_SEED, ensure_store  # noqa: E402

_CHILD = """
import json, sys, time
sys.path.insert(0, {here!r})
from procstats import peak_rss_kib
import rmqformats
store = rmqformats.open_store({root!r})
t0 = time.perf_counter()
result = store.sql({query!r}, jobs={jobs})
rows = sum(b.num_rows for b in result)
dt = time.perf_counter() - t0
walked = {{name: s.rows for name, s in result.sources.items()}}
options = {{name: {{k: v for k, v in s.options.items()}} for name, s in result.sources.items()}}
print(json.dumps({{"seconds": dt, "rows": rows, "walked": walked, "options": options,
                  "peak_rss_mib": peak_rss_kib() / 1024}}, default=str))
"""


def run(root: str, query: str, jobs: int) -> dict:
    code = _CHILD.format(here=HERE, root=root, query=query, jobs=jobs)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=256, help="MiB of message data (default: 256)")
    ap.add_argument("--segment-mib", type=int, default=64, help="segment size in MiB (default: 64)")
    ap.add_argument("--span-hours", type=float, default=12, help="hours the store times span (default: 12)")
    ap.add_argument("--jobs", type=int, default=1, help="threads of the commit-log walk (default: 1)")
    ap.add_argument("--data", default=DEFAULT_DATA_DIR, help="folder of the generated stores")
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
    print(f"store {root}: {size / 2**20:,.0f} MiB of segments; warm-up walk {time.perf_counter() - t0:.2f} s")
    mid = (int(first) + int(last)) // 2
    hour = [time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t / 1000)) for t in (mid, mid + 3_600_000)]
    within = f"storeTimestamp >= TIMESTAMP '{hour[0]}' AND storeTimestamp < TIMESTAMP '{hour[1]}'"
    hidden = within.replace("storeTimestamp", "CAST(storeTimestamp AS TIMESTAMPTZ)")  # not a bare column
    cases = [
        ("no table (the process's floor)", "SELECT 1 AS one"),
        ("whole store GROUP BY topic, queueId",
         "SELECT topic, queueId, count(*) AS n, sum(storeSize) AS bytes FROM messages GROUP BY ALL"),
        ("whole store GROUP BY with bodies",
         "SELECT topic, count(*) AS n, sum(octet_length(body)) AS bytes FROM messages GROUP BY ALL"),
        ("one hour, GROUP BY topic",
         f"SELECT topic, count(*) AS n, sum(storeSize) AS bytes FROM messages WHERE {within} GROUP BY ALL"),
        ("one hour, condition hidden from the walk",
         f"SELECT topic, count(*) AS n, sum(storeSize) AS bytes FROM messages WHERE {hidden} GROUP BY ALL"),
    ]
    print(f"{'query':42s} {'time':>8s} {'records walked':>15s} {'result rows':>12s} {'peak RSS':>10s}")
    for name, query in cases:
        r = run(root, query, args.jobs)
        print(f"{name:42s} {r['seconds']:7.2f}s {r['walked'].get('messages', 0):15,} {r['rows']:12,} "
              f"{r['peak_rss_mib']:8,.0f} MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
