"""Where one core's time goes in ``CommitLog.batches()``: CPU seconds per group of columns, msg/s per core, × floor.

For each generated log (``storegen.py``: ``--mib`` MiB in ``--segment-mib``
MiB segments), in this one process with the kernels loaded and the page
cache warm, best of ``--repeat``, in CPU time (``time.process_time``: on a
shared, loaded machine the wall clock measures the neighbours), one thread:

    ``floor``      the segments' bytes read (``readinto`` an 8 MiB buffer) and summed by numpy
    ``fixed``      ``batches(columns=[commitLogOffset, queueId, storeTimestamp])``: the record walk,
                   its reads and the batches, nearly nothing built
    ``hosts+id``   ``bornHost``, ``storeHost``, ``msgId``
    ``strings``    ``topic``, ``propertiesString``, ``segment``
    ``props``      ``properties``, ``tags``, ``keys``, ``uniqKey`` (the properties split)
    ``body``       ``body``, ``bodyError`` (bodies gathered, compressed ones decompressed)
    ``all``        every column

The cost of a group beyond the walk is its row's time minus ``fixed``'s.

    .venv/bin/python benchmarks/bench_percore.py --mib 256 --segment-mib 128
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_columnar import DEFAULT_DATA_DIR, DEFAULT_SEED, machine  # noqa: E402

GROUPS = {
    "fixed": ["commitLogOffset", "queueId", "storeTimestamp"],
    "hosts+id": ["bornHost", "storeHost", "msgId"],
    "strings": ["topic", "propertiesString", "segment"],
    "props": ["properties", "tags", "keys", "uniqKey"],
    "body": ["body", "bodyError"],
    "all": None,
}


def floor_seconds(store: str) -> float:
    """CPU seconds to read the commit log's bytes and sum them with numpy."""
    buf = np.empty(8 << 20, np.uint8)
    start = time.process_time()
    total = 0
    for path in sorted(glob.glob(os.path.join(store, "commitlog", "*"))):
        with open(path, "rb", buffering=0) as f:
            while n := f.readinto(buf):
                total += int(buf[:n - n % 8].view(np.uint64).sum())
    return time.process_time() - start


def walk_seconds(store: str, columns) -> tuple[float, int]:
    """CPU seconds of one ``batches(columns=...)`` walk, and the rows it gave."""
    from rmqformats import open_store
    start = time.process_time()
    rows = 0
    for batch in open_store(store).commitlog.batches(columns=columns):
        rows += batch.num_rows
    return time.process_time() - start, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=256, help="MiB of message data per log (default 256)")
    parser.add_argument("--segment-mib", type=int, default=128, help="segment size in MiB (default 128)")
    parser.add_argument("--logs", default="mixed,small", help="logs to measure (default mixed,small)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each; the least CPU time is kept (default 5)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="where generated data is kept")
    args = parser.parse_args(argv)
    import storegen
    from rmqformats.walk import kernels
    kernels.warm_up()
    print(machine())
    print(f"load average before: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} CPUs")
    for log in args.logs.split(","):
        store, manifest = storegen.ensure_store(args.data_dir, log, args.mib, args.segment_mib, args.seed)
        walk_seconds(store, ["queueId"])  # the page cache warm, the imports done
        floor = min(floor_seconds(store) for _ in range(args.repeat))
        print(f"\n{log}: {manifest['messages']:,} messages, {args.mib} MiB in {args.segment_mib} MiB segments")
        print(f"| what | CPU s | M msg/s per core | × floor |\n|---|---:|---:|---:|")
        print(f"| floor | {floor:.3f} | | 1.0 |")
        fixed = None
        for name, columns in GROUPS.items():
            best, rows = min(walk_seconds(store, columns) for _ in range(args.repeat))
            if rows != manifest["messages"]:
                raise SystemExit(f"{log} {name}: {rows} rows, the generator wrote {manifest['messages']}")
            fixed = best if name == "fixed" else fixed
            extra = "" if name in ("fixed", "all") else f" (+{best - fixed:.3f} over fixed)"
            print(f"| {name} | {best:.3f}{extra} | {rows / best / 1e6:.2f} | {best / floor:.1f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.1f} (1 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
