"""How the commit-log walks scale with ``jobs``: seconds, msg/s, speedup, efficiency, × floor, peak RSS.

For jobs 1, 2, 4, … up to the CPUs this process may use (or ``--jobs``), on
the generated ``mixed`` and ``small`` logs (``storegen.py``; ``--mib`` MiB
of data in ``--segment-mib`` MiB segments), it measures

    ``batches``   ``CommitLog.batches(jobs=N)`` with every column, the rows counted (the kernels
                  loaded and the workers started before the clock starts, as in a long-running
                  program: ``rmqformats.walk.parallel.start_workers``)
    ``folded``    ``batches``' walk, every column built, but each range's rows counted where it is
                  built (a :class:`~rmqformats.walk.parallel.Fold`): with workers, the batches are
                  not handed to the reader, so ``batches`` less ``folded`` is what handing them
                  over costs
    ``inspect``   ``rmqformats inspect STORE --jobs N``
    ``check``     ``rmqformats check STORE --jobs N``
    ``export``    ``rmqformats export STORE --to parquet OUT --jobs N``
    ``floor``     the segments' bytes read (``preadv``) and summed by numpy in N threads
    ``copies``    N processes started together, each walking its share of the segments with
                  ``batches(jobs=1)`` (kernels loaded before the clock): the split with no
                  coordination at all, so its speedup is what this machine allows N processes
                  of this work (shared caches and memory, a virtual CPU's neighbours)

each in a fresh process (for the commands, the start of Python, its imports and
the worker processes is part of the time), with workers whatever the size
(``RMQFORMATS_JOBS_MIN_BYTES=0``; by default a commit log under 1 GiB is
walked serially),
best of ``--repeat``. ``speedup`` is over the same measurement with one job,
``efficiency`` the speedup over the jobs, ``× floor`` the time over the
floor's with the same jobs. ``CPU s`` adds the reader's CPU time and its
worker processes' (on a busy machine it shows the cost where the wall
clock cannot). Peak RSS is the reader's own (``VmHWM``) and the largest of
its worker processes'.

    .venv/bin/python benchmarks/bench_scaling.py --mib 256
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_columnar import DEFAULT_DATA_DIR, DEFAULT_SEED, machine, source_state  # noqa: E402
from procstats import peak_rss_kib  # noqa: E402

WHAT = ("batches", "folded", "inspect", "check", "export", "floor", "copies")
CHUNK = 32 << 20


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def job_counts(limit: int) -> list[int]:
    out, n = [], 1
    while n < limit:
        out.append(n)
        n *= 2
    return out + [limit]


# -- one measurement, in a process of its own -----------------------------------------------------

def floor(root: str, jobs: int) -> int:
    """Sum the bytes of every segment as 64-bit words, ``CHUNK`` bytes per task, in ``jobs`` threads."""
    import numpy as np

    folder = os.path.join(root, "commitlog")
    tasks = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        size = os.path.getsize(path)
        tasks += [(path, p, min(CHUNK, size - p)) for p in range(0, size, CHUNK)]

    def one(task) -> int:
        path, pos, n = task
        buf = np.empty(n + (-n) % 8, np.uint8)
        buf[n:] = 0
        fd = os.open(path, os.O_RDONLY)
        try:
            done = 0
            while done < n:
                done += os.preadv(fd, [memoryview(buf)[done:n]], pos + done)
        finally:
            os.close(fd)
        return int(buf.view(np.uint64).sum(dtype=np.uint64))

    with ThreadPoolExecutor(jobs) as pool:
        return sum(pool.map(one, tasks)) & (2**64 - 1)


def _walk_share(root: str, share: list[int], ready, go) -> None:
    """Walk the segments ``share`` with one job, every column, after the others are ready too."""
    import rmqformats
    from rmqformats.columnar import warm_up
    warm_up()
    log = rmqformats.open_store(root).commitlog
    ready.wait()
    go.wait()
    for i in share:
        seg = log.segments[i]
        for _ in log.batches(jobs=1, start=seg.start_offset, stop=seg.start_offset + seg.size):
            pass


def copies(root: str, jobs: int) -> tuple[list, object]:
    """``jobs`` processes, each walking every ``jobs``-th segment, waiting at the barrier returned with them
    (see the module)."""
    import multiprocessing

    import rmqformats
    n = len(rmqformats.open_store(root).commitlog.segments)
    ctx = multiprocessing.get_context("fork")  # this process runs no thread yet
    ready, go = ctx.Barrier(jobs + 1), ctx.Barrier(jobs + 1)
    procs = [ctx.Process(target=_walk_share, args=(root, list(range(k, n, jobs)), ready, go)) for k in range(jobs)]
    for proc in procs:
        proc.start()
    ready.wait()
    return procs, go


def workers() -> tuple[int, float]:
    """The largest peak RSS (KiB) of this process's commit-log worker processes and the CPU seconds they
    used (0 when none ran; Linux only)."""
    parallel = sys.modules.get("rmqformats.walk.parallel")
    peak, cpu = 0, 0.0
    if parallel is None:  # not imported yet: no workers (importing it here would take its imports off the clock)
        return peak, cpu
    for pool in parallel._POOLS.values():
        for proc in list(getattr(pool, "_processes", {}).values()):
            try:
                with open(f"/proc/{proc.pid}/status") as f:
                    peak = max(peak, next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")))
                with open(f"/proc/{proc.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                cpu += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, StopIteration, IndexError):
                pass
    return peak, cpu


class RowCount:
    """A :class:`~rmqformats.walk.parallel.Fold` that counts rows (``folded``)."""

    def __init__(self) -> None:
        self.rows = 0

    def empty(self) -> "RowCount":
        return RowCount()

    def add(self, batch) -> None:
        self.rows += batch.num_rows

    def merge(self, later: "RowCount") -> None:
        self.rows += later.rows


def measure(what: str, root: str, jobs: int) -> dict:
    import rmqformats
    from rmqformats.cli import main as cli

    rows = 0
    procs = None
    if what == "copies":
        procs, go = copies(root, jobs)
    if what in ("batches", "folded"):  # the API in a long-running program: kernels loaded, workers started
        from rmqformats.walk import parallel
        from rmqformats.columnar import warm_up
        warm_up()
        if jobs > 1:
            parallel.start_workers(jobs)
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp, \
            open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        cpu_before = workers()[1]
        t0 = time.perf_counter()
        c0 = time.process_time()
        if what == "batches":
            for batch in rmqformats.open_store(root).commitlog.batches(jobs=jobs):
                rows += batch.num_rows
            code = 0
        elif what == "folded":
            fold = RowCount()
            for batch in rmqformats.open_store(root).commitlog.batches(jobs=jobs, fold=fold):
                fold.add(batch)
            rows, code = fold.rows, 0
        elif what == "floor":
            floor(root, jobs)
            code = 0
        elif what == "copies":
            go.wait()
            for proc in procs:
                proc.join()
            code = max(proc.exitcode for proc in procs)
        elif what == "export":
            code = cli(["export", root, "--to", "parquet", os.path.join(tmp, "out"), "--jobs", str(jobs)])
        else:
            code = cli([what, root, "--jobs", str(jobs)])
        seconds = time.perf_counter() - t0
        cpu = time.process_time() - c0
        worker_rss, worker_cpu = workers()
        if procs is not None:  # the copies, joined: their CPU time (with loading the kernels) and peak RSS
            import resource
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            worker_cpu += usage.ru_utime + usage.ru_stime
            worker_rss = max(worker_rss, usage.ru_maxrss)
    return {"seconds": seconds, "rows": rows, "code": code, "rss_kib": peak_rss_kib(), "worker_rss_kib": worker_rss,
            "cpu": cpu + worker_cpu - cpu_before}


# -- the parent ---------------------------------------------------------------------------------------

def run_one(what: str, root: str, jobs: int) -> dict:
    # Workers even below the size where the walk is serial by default (1 GiB): the parallel walk is measured.
    env = dict(os.environ, RMQFORMATS_JOBS_MIN_BYTES="0")
    proc = subprocess.run([sys.executable, __file__, "--worker", what, "--store", root, "--jobs", str(jobs)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(log: str, manifest: dict, results: dict) -> str:
    messages = manifest["messages"]
    lines = [f"{log}: {messages:,} messages, {manifest['data_end'] / (1 << 20):,.0f} MiB, "
             f"{len(manifest['consume_queues']):,} queues",
             "| what | jobs | seconds | msg/s | speedup | efficiency | × floor | CPU s (all processes) "
             "| peak RSS MiB (reader / worker) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for what, by_jobs in results.items():
        one = by_jobs.get(1, {}).get("seconds")
        for jobs, r in by_jobs.items():
            if "error" in r:
                lines.append(f"| {what} | {jobs} | error: {r['error']} | | | | | | |")
                continue
            s = r["seconds"]
            fl = results.get("floor", {}).get(jobs, {}).get("seconds")
            speed = one / s if one else float("nan")
            lines.append(f"| {what} | {jobs} | {s:.2f} | {messages / s:,.0f} | {speed:.2f} | {speed / jobs:.2f} "
                         f"| {s / fl if fl else float('nan'):.1f} | {r['cpu']:.2f} | {r['rss_kib'] / 1024:,.0f} / "
                         f"{r['worker_rss_kib'] / 1024:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=256, help="MiB of message data per log (default 256)")
    parser.add_argument("--segment-mib", type=int, default=64, help="segment size in MiB (default 64)")
    parser.add_argument("--jobs", help="comma-separated job counts (default: 1, 2, 4, … up to the CPUs)")
    parser.add_argument("--what", default=",".join(WHAT), help=f"what to measure (default {','.join(WHAT)})")
    parser.add_argument("--logs", default="mixed,small", help="logs to measure (default mixed,small)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is reported (default 3)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--queue-factor", type=int, default=1,
                        help="each topic gets this many times its queues (storegen.py; default 1: 20 queues)")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="where generated data is kept")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.worker, args.store, int(args.jobs))))
        return 0
    import storegen

    print(f"machine: {machine()}", flush=True)
    print(f"source: {source_state()}", flush=True)
    jobs = [int(j) for j in args.jobs.split(",")] if args.jobs else job_counts(cpus())
    whats = args.what.split(",")
    if "floor" in whats:  # measured first: the others are compared with it
        whats = ["floor"] + [w for w in whats if w != "floor"]
    for log in args.logs.split(","):
        root, manifest = storegen.ensure_store(args.data_dir, log, args.mib, args.segment_mib, args.seed,
                                               queue_factor=args.queue_factor)
        results: dict[str, dict[int, dict]] = {}
        for what in whats:
            for n in jobs:
                runs = [run_one(what, root, n) for _ in range(args.repeat)]
                good = [r for r in runs if "error" not in r]
                best = min(good, key=lambda r: r["seconds"]) if good else runs[0]
                if good:
                    best = dict(best, rss_kib=max(r["rss_kib"] for r in good),
                                worker_rss_kib=max(r["worker_rss_kib"] for r in good))
                if "error" not in best and what in ("batches", "folded") and best["rows"] != manifest["messages"]:
                    best = {"error": f"{best['rows']:,} rows, not the log's {manifest['messages']:,} messages"}
                results.setdefault(what, {})[n] = best
                print(f"  {log} {what} jobs={n}: "
                      + (f"{best['seconds']:.2f} s" if "error" not in best else best["error"]), flush=True)
        print("\n" + table(log, manifest, results) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
