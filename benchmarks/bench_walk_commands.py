"""One core's CPU time of the commands that walk a store, against the walk itself: ``inspect``, ``check`` and
``export --to parquet`` over ``CommitLog.batches()`` with every column.

For each generated log (``storegen.py``: ``--mib`` MiB in ``--segment-mib``
MiB segments), in this one process (the kernels loaded, every command run
once first so that imports and the page cache are warm), ``--jobs 1``, best
of ``--repeat``, in CPU seconds of this process (``time.process_time``: on
a shared, loaded machine the wall clock measures the neighbours):

    ``batches``   ``open_store(STORE).commitlog.batches(jobs=1)``, every column, the rows counted
    ``inspect``   ``rmqformats inspect STORE --jobs 1``
    ``check``     ``rmqformats check STORE --jobs 1``
    ``export``    ``rmqformats export STORE --to parquet OUT --jobs 1``
    ``dump summary``  ``rmqformats dump --summary SEGMENT… --jobs 1``, every commit-log segment
    ``dump jsonl``    ``rmqformats dump --format jsonl SEGMENT… --jobs 1`` (the text to ``/dev/null``)

and each command's ratio to ``batches`` (the goal for ``inspect``, ``check`` and ``export``: at most 1.5).

    .venv/bin/python benchmarks/bench_walk_commands.py --mib 256 --segment-mib 128
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_columnar import DEFAULT_DATA_DIR, DEFAULT_SEED, machine  # noqa: E402


def measure(store: str, repeat: int) -> dict[str, float]:
    """The least CPU seconds of each task over ``repeat`` runs."""
    import rmqformats
    from rmqformats.cli import main as cli

    def batches() -> None:
        for _ in rmqformats.open_store(store).commitlog.batches(jobs=1):
            pass

    tmp = tempfile.mkdtemp(prefix="bench-walk-commands-")

    def export() -> None:
        out = os.path.join(tmp, "out")
        shutil.rmtree(out, ignore_errors=True)
        cli(["export", store, "--to", "parquet", out, "--jobs", "1"])

    segments = sorted(os.path.join(store, "commitlog", name) for name in os.listdir(os.path.join(store, "commitlog")))
    tasks = {"batches": batches, "inspect": lambda: cli(["inspect", store, "--jobs", "1"]),
             "check": lambda: cli(["check", store, "--jobs", "1"]), "export": export,
             "dump summary": lambda: cli(["dump", "--summary", "--jobs", "1", *segments]),
             "dump jsonl": lambda: cli(["dump", "--format", "jsonl", "--jobs", "1", *segments])}
    best = {name: float("inf") for name in tasks}
    try:
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
            for task in tasks.values():
                task()
            for _ in range(repeat):
                for name, task in tasks.items():
                    start = time.process_time()
                    task()
                    best[name] = min(best[name], time.process_time() - start)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=256, help="MiB of message data per log (default 256)")
    parser.add_argument("--segment-mib", type=int, default=128, help="segment size in MiB (default 128)")
    parser.add_argument("--logs", default="mixed,small", help="logs to measure (default mixed,small)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the least CPU time is kept (default 3)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--queue-factor", type=int, default=1,
                        help="each topic gets this many times its queues (storegen.py; default 1: 20 queues)")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="where generated data is kept")
    args = parser.parse_args(argv)
    import storegen
    from rmqformats.columnar import warm_up
    warm_up()
    print(machine())
    print(f"load average before: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} CPUs")
    for log in args.logs.split(","):
        store, manifest = storegen.ensure_store(args.data_dir, log, args.mib, args.segment_mib, args.seed,
                                                queue_factor=args.queue_factor)
        best = measure(store, args.repeat)
        walk = best["batches"]
        print(f"\n{log}: {manifest['messages']:,} messages, {args.mib} MiB in {args.segment_mib} MiB segments, "
              f"{len(manifest['consume_queues']):,} queues")
        print("| what | CPU s | M msg/s per core | / batches |\n|---|---:|---:|---:|")
        for name, seconds in best.items():
            print(f"| {name} | {seconds:.3f} | {manifest['messages'] / seconds / 1e6:.2f} | {seconds / walk:.2f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.1f} (1 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
