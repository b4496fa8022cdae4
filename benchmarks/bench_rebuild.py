"""``rebuild`` on a generated store: messages/s, commit-log MB/s and peak RSS for each part.

Runs each case in this process on a warm page cache (one warm-up walk first, so that the columnar
decoder's compiled kernels are loaded): the whole rebuild (queues, index, checkpoint, commit log
hard-linked), queues only, index only, and the RocksDB consume queue. The store is the ``small``
log of :mod:`storegen` (``--mib`` MiB; 256 by default to keep the run short).

    .venv/bin/python benchmarks/bench_rebuild.py [--mib 256] [--data benchmarks/data]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from procstats import peak_rss_kib  # noqa: E402
from storegen import ensure_store  # noqa: E402

from rmqformats import open_store  # noqa: E402
from rmqformats.rebuild import rebuild_store  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--segment-mib", type=int, default=256)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--store", help="an existing store root instead of a generated one")
    args = ap.parse_args()
    root = args.store or ensure_store(args.data, "small", args.mib, args.segment_mib, 20261122)[0]
    store = open_store(root)
    size = sum(s.size for s in store.commitlog.segments)
    for _ in store.commitlog.batches(columns=["commitLogOffset"]):
        pass
    cases = [("all (--link)", dict(link=True)), ("queues", dict(only=("queues",), link=True)),
             ("index", dict(only=("index",), link=True)),
             ("queues as RocksDB", dict(only=("queues",), link=True, queues_kind="rocksdb"))]
    print(f"store {root}: {size / 1e6:,.0f} MB of commit log")
    for name, opts in cases:
        out = tempfile.mkdtemp(prefix="rebuild-bench-", dir=args.data)
        shutil.rmtree(out)
        t0 = time.perf_counter()
        r = rebuild_store(store, out, **opts)
        dt = time.perf_counter() - t0
        print(f"{name:20s} {dt:7.2f} s  {r.messages / dt:12,.0f} msg/s  {size / dt / 1e6:8,.0f} MB/s  "
              f"units {r.queue_units:,}  index entries {r.index_entries:,}  peak RSS {peak_rss_kib() / 1024:,.0f} MiB")
        shutil.rmtree(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
