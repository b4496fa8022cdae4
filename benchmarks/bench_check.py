"""The two-way check and the store report against a plain walk of the commit log, on the same store.

Each task runs in its own process on a warm page cache, best of ``repeat``
runs, and reports messages/s and its peak RSS (``VmHWM``):

* ``walk``: the columnar walk alone, with the columns the check reads (the
  floor: the check cannot be faster than reading what it checks);
* ``cross_check``: :func:`rmqformats.recovery.cross_check` (queues, index,
  timer log, recovery plan);
* ``check``: what ``rmqformats check`` runs, the cross-check and then the
  unit-by-unit pass for the queues it could not verify;
* ``one_way``: the unit-by-unit pass alone (``Store.check_consistency()``
  without the cross-check), the command before the two-way check (slow;
  only with ``--one-way``);
* ``report``: :func:`rmqformats.recovery.report.build_report` and the page.

The default store is the ``small`` commit log of ``make bench``
(``benchmarks/data/small-1100mib-seg1024-seed20261122/store``: 3.6 M
messages in 1.1 GB, 20 consume queues).

    .venv/bin/python benchmarks/bench_check.py [--store PATH] [--repeat 2] [--one-way]
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
TASKS = ("walk", "cross_check", "check", "report")


def run_task(name: str, root: str) -> dict:
    import rmqformats
    from rmqformats.recovery import cross_check
    from rmqformats.recovery.crosscheck import _COLUMNS

    store = rmqformats.open_store(root)
    t0 = time.perf_counter()
    if name == "walk":
        n = sum(b.num_rows for b in store.commitlog.batches(columns=_COLUMNS, decompress=False))
    elif name == "cross_check":
        n = cross_check(store).messages
    elif name == "check":
        result = cross_check(store)
        store.check_consistency(verified=result.verified)
        n = result.messages
    elif name == "one_way":
        n = store.check_consistency().units
    elif name == "report":
        from rmqformats.recovery.report import build_report, render_html
        report = build_report(store)
        render_html(report)
        n = report.messages
    else:
        raise ValueError(name)
    return {"seconds": time.perf_counter() - t0, "messages": n}


def worker(name: str, root: str, repeat: int) -> None:
    import rmqformats.columnar
    rmqformats.columnar.warm_up()
    runs = [run_task(name, root) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["seconds"])
    best["peak_rss_kib"] = peak_rss_kib()
    print(json.dumps(best))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--one-way", action="store_true", help="also time the unit-by-unit pass alone (minutes)")
    p.add_argument("--worker")
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.store, args.repeat)
        return
    if not os.path.isdir(args.store):
        sys.exit(f"no store at {args.store}: run `make bench` once to generate it, or give --store")
    size = sum(e.stat().st_size for e in os.scandir(os.path.join(args.store, "commitlog")))
    results = {}
    for name in TASKS + (("one_way",) if args.one_way else ()):
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--store", args.store,
                               "--repeat", str(1 if name == "one_way" else args.repeat)],
                              capture_output=True, text=True, cwd=os.path.dirname(HERE))
        if proc.returncode:
            raise RuntimeError(f"{name} failed:\n{proc.stderr}")
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    floor = results["walk"]["messages"] / results["walk"]["seconds"]
    print(f"{args.store}: {size / 1e6:,.0f} MB of segment files, best of {args.repeat}, warm page cache")
    print(f"{'task':<12} {'messages':>10} {'seconds':>9} {'messages/s':>12} {'MB/s':>7} {'peak RSS MiB':>13} "
          f"{'vs walk':>8}")
    for name, r in results.items():
        rate = r["messages"] / r["seconds"]
        print(f"{name:<12} {r['messages']:>10,} {r['seconds']:>9.2f} {rate:>12,.0f} {size / r['seconds'] / 1e6:>7.0f} "
              f"{r['peak_rss_kib'] / 1024:>13.1f} {rate / floor:>7.2f}x")
    if "one_way" in results:
        print(f"check (both ways) / one-way pass alone: "
              f"{results['one_way']['seconds'] / results['check']['seconds']:.1f}x faster")


if __name__ == "__main__":
    main()
