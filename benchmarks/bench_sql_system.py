"""What decoding the system columns costs ``SELECT *`` in ``rmqformats sql``: CPU seconds with and without.

``SELECT * FROM messages`` fills the decoded system columns (``kind``,
``realTopic``, ``dueTime``, …); a query naming only the message columns
leaves them null and decodes nothing. Each query runs in a fresh process
``--repeat`` times (the least CPU time is kept: the machine is shared, and
CPU time is what the decoding adds); ``SELECT 1`` gives the process's floor.
Then, in this process, the decoder alone (:func:`rmqformats.systopics.decode`)
on the batches of the columns it reads, and the walk of those columns
without it; and in a fresh process its first and second call on one batch
(the first pays pyarrow's one-time import of pandas, which pyarrow makes
when it first turns a Python value into a scalar).

The store is a :mod:`storegen` log (``--kind``, ``--mib`` MiB in
``--segment-mib`` MiB segments): normal messages with transaction records
(SYSFLAG ``prepared`` / ``commit``) and ``%RETRY%`` copies, the rows the
decoder fills; every other row is classified only.

    .venv/bin/python benchmarks/bench_sql_system.py [--kind small] [--mib 32] [--segment-mib 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from storegen import DEFAULT_DATA_DIR, DEFAULT_SEED, ensure_store  # noqa: E402

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {here!r})
from procstats import peak_rss_kib
import rmqformats
store = rmqformats.open_store({root!r})
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, t0 = cpu(), time.perf_counter()
result = store.sql({query!r})
rows = cols = 0
for b in result:
    rows += b.num_rows
    cols = b.num_columns
print(json.dumps({{"cpu": cpu() - c0, "seconds": time.perf_counter() - t0, "rows": rows, "columns": cols,
                  "peak_rss_mib": peak_rss_kib() / 1024}}))
"""


def run(root: str, query: str, repeat: int) -> dict:
    """The run of ``query`` with the least CPU time of ``repeat`` fresh processes."""
    best = None
    for _ in range(repeat):
        code = _CHILD.format(here=HERE, root=root, query=query)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        best = r if best is None or r["cpu"] < best["cpu"] else best
    return best


_FIRST = """
import json, sys, time
import rmqformats
from rmqformats.systopics import decode
from rmqformats.systopics.batches import NEEDED
batch = next(iter(rmqformats.open_store({root!r}).commitlog.batches(list(NEEDED))))
had = "pandas" in sys.modules
c0 = time.process_time()
decode(batch)
first = time.process_time() - c0
c0 = time.process_time()
decode(batch)
print(json.dumps({{"first": first, "second": time.process_time() - c0, "rows": batch.num_rows,
                  "pandas": (had, "pandas" in sys.modules)}}))
"""


def first_call(root: str) -> dict:
    """CPU time of the first and second decode() of one batch in a fresh process, and whether pandas was
    imported before and after (pyarrow imports it when it first makes a scalar or array of Python values)."""
    proc = subprocess.run([sys.executable, "-c", _FIRST.format(root=root)], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def decoder_alone(root: str, repeat: int) -> tuple[float, float, int, int]:
    """(CPU s of the walk of the decoder's columns, CPU s of decode() on its batches, rows, rows decoded)."""
    import pyarrow.compute as pc

    import rmqformats
    from rmqformats.systopics import decode
    from rmqformats.systopics.batches import NEEDED
    walk_best = decode_best = None
    rows = picked = 0
    for _ in range(repeat):
        batches = []
        c0 = _cpu()
        for b in rmqformats.open_store(root).commitlog.batches(list(NEEDED)):
            batches.append(b)
        walk = _cpu() - c0
        c0 = _cpu()
        out = [decode(b) for b in batches]
        dec = _cpu() - c0
        rows = sum(b.num_rows for b in batches)
        picked = sum(pc.sum(pc.is_valid(d.column("transactionState"))).as_py()
                     + pc.sum(pc.is_valid(d.column("group"))).as_py() for d in out)
        walk_best = walk if walk_best is None else min(walk_best, walk)
        decode_best = dec if decode_best is None else min(decode_best, dec)
        batches = out = None
    return walk_best, decode_best, rows, picked


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", default="small", help="the storegen mix (default: small, 10-200 B bodies)")
    ap.add_argument("--mib", type=int, default=32, help="MiB of message data (default: 32)")
    ap.add_argument("--segment-mib", type=int, default=16, help="segment size in MiB (default: 16)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each query; the least CPU time is kept")
    ap.add_argument("--data", default=DEFAULT_DATA_DIR, help="folder of the generated stores")
    args = ap.parse_args()
    root, manifest = ensure_store(args.data, args.kind, args.mib, args.segment_mib, DEFAULT_SEED)
    from rmqformats.columnar import SCHEMA
    from rmqformats.systopics import SYSTEM_COLUMNS
    plain = ", ".join(f'"{n}"' for n in SCHEMA.names)
    cases = [("floor: SELECT 1 (no table)", "SELECT 1 AS one"),
             ("the message columns by name (no decoding)", f"SELECT {plain} FROM messages"),
             ("SELECT * (the system columns decoded)", "SELECT * FROM messages")]
    print(f"store {root}: {manifest['messages']:,} messages; least CPU time of {args.repeat} runs each")
    print(f"{'query':44s} {'CPU':>8s} {'wall':>8s} {'rows':>10s} {'cols':>5s} {'rows/CPU s':>12s} {'peak RSS':>10s}")
    found = {}
    for name, query in cases:
        r = found[name] = run(root, query, args.repeat)
        print(f"{name:44s} {r['cpu']:7.2f}s {r['seconds']:7.2f}s {r['rows']:10,} {r['columns']:5d} "
              f"{r['rows'] / r['cpu']:12,.0f} {r['peak_rss_mib']:8,.0f} MiB", flush=True)
    floor, base, star = (found[n]["cpu"] for n, _ in cases)
    print(f"SELECT * / by name: {star / base:.3f} in CPU time; above the floor: {(star - floor) / (base - floor):.3f}")
    walk, dec, rows, picked = decoder_alone(root, args.repeat)
    print(f"in process: walk of the decoder's columns {walk:.2f} s CPU; decode() on its {rows:,} rows "
          f"{dec:.2f} s CPU ({rows / dec:,.0f} rows/s; {picked:,} rows filled)")
    f = first_call(root)
    print(f"fresh process, one batch of {f['rows']:,} rows: first decode() {f['first']:.3f} s CPU, second "
          f"{f['second']:.3f} s (pandas imported before: {f['pandas'][0]}, after: {f['pandas'][1]})")
    print(f"system columns: {len(SYSTEM_COLUMNS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
