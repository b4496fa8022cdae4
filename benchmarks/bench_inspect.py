"""``inspect`` against the columnar walk it sums, on the same generated store.

Each task runs in its own process on a warm page cache, best of ``repeat``
runs, and reports wall and CPU seconds, messages/s, peak RSS (``VmHWM``)
and its time over ``batches``'s:

* ``batches``: ``CommitLog.batches()`` with every column (bodies
  decompressed), the yardstick: ``inspect`` should cost at most 1.5x this;
* ``walk``: the walk ``inspect`` reads (its columns, bodies as stored, body
  CRCs checked as the command does by default): the floor of ``inspect``;
* ``inspect``: :func:`rmqformats.cli.inspect.inspect_store` as the command
  runs it (the commit-log summary, release evidence, consume queues, index,
  checkpoint and config files);
* ``object_scan`` (``--object-scan``): the per-message road ``inspect``
  took before, ``CommitLog.scan()`` with a ``Message`` per record, a
  ``Detector.message`` call and counters per message (slow).

    .venv/bin/python benchmarks/bench_inspect.py --store benchmarks/data/small-384mib-seg128-seed1/store
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
from procstats import peak_rss_kib  # noqa: E402

DEFAULT_STORE = os.path.join(HERE, "data", "small-1100mib-seg1024-seed20261122", "store")
TASKS = ("batches", "walk", "inspect")


def run_task(name: str, root: str) -> dict:
    import rmqformats
    from rmqformats.cli.inspect import inspect_store
    from rmqformats.columnar.summary import SUMMARY_COLUMNS

    store = rmqformats.open_store(root)
    log = store.commitlog
    wall, cpu = time.perf_counter(), time.process_time()
    if name == "batches":
        n = sum(b.num_rows for b in log.batches())
    elif name == "walk":
        n = sum(b.num_rows for b in log.batches(columns=SUMMARY_COLUMNS, decompress=False, verify_crc=True))
    elif name == "inspect":
        n = inspect_store(store, verify_crc=True, progress=False)["messages"]
    elif name == "object_scan":
        from collections import Counter

        from rmqformats.versions.detect import Detector
        per_queue, per_segment, versions, detector, n = Counter(), Counter(), Counter(), Detector(), 0
        for msg in log.scan(verify_crc=True):
            n += 1
            detector.message(msg)
            per_queue[(msg.topic, msg.queue_id)] += 1
            per_segment[msg.segment] += 1
            versions[msg.version] += 1
    else:
        raise ValueError(name)
    return {"seconds": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "messages": n}


def worker(name: str, root: str, repeat: int) -> None:
    import rmqformats.columnar
    from rmqformats.walk import crc
    rmqformats.columnar.warm_up()
    crc.warm_up()
    runs = [run_task(name, root) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["seconds"])
    best["peak_rss_kib"] = peak_rss_kib()
    print(json.dumps(best))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--object-scan", action="store_true", help="also time the per-message road (slow; one run)")
    p.add_argument("--worker")
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.store, args.repeat)
        return
    if not os.path.isdir(args.store):
        sys.exit(f"no store at {args.store}: generate one with storegen.ensure_store, or give --store")
    size = sum(e.stat().st_size for e in os.scandir(os.path.join(args.store, "commitlog")))
    results = {}
    for name in TASKS + (("object_scan",) if args.object_scan else ()):
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--store", args.store,
                               "--repeat", str(1 if name == "object_scan" else args.repeat)],
                              capture_output=True, text=True, cwd=os.path.dirname(HERE))
        if proc.returncode:
            raise RuntimeError(f"{name} failed:\n{proc.stderr}")
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = results["batches"]
    print(f"{args.store}: {size / 1e6:,.0f} MB of segment files, best of {args.repeat}, warm page cache")
    print(f"{'task':<12} {'messages':>10} {'seconds':>8} {'cpu s':>7} {'messages/s':>11} {'peak RSS MiB':>13} "
          f"{'/ batches':>10} {'cpu / batches':>14}")
    for name, r in results.items():
        print(f"{name:<12} {r['messages']:>10,} {r['seconds']:>8.2f} {r['cpu']:>7.2f} "
              f"{r['messages'] / r['seconds']:>11,.0f} {r['peak_rss_kib'] / 1024:>13.1f} "
              f"{r['seconds'] / base['seconds']:>9.2f}x {r['cpu'] / base['cpu']:>13.2f}x")


if __name__ == "__main__":
    main()
