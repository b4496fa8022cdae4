"""Consume-queue units per second: ``ConsumeQueue.to_arrow()`` against ``struct.iter_unpack`` on the same bytes.

Generates (once, into ``benchmarks/data/``) a store of consume queues of
realistic size: ``queues`` queues of one topic, 300,000 units per file
(``mappedFileSizeConsumeQueue`` = 6,000,000 bytes), the last file of each
queue partly written and zero-filled after its last unit like a broker's
pre-allocated file. The files are written by
:func:`rmqformats.synth.write_consume_queue` through the generated construct
schema.

Each reader runs in its own process on a warm page cache, best of
``repeat`` runs, and reports units/s and its peak RSS (``VmHWM``, with the
RSS after its imports for reference):

* ``to_arrow``: ``store.consume_queue(topic, q).to_arrow()`` for every queue,
  a fresh queue object each run (so the recovery walk is timed too);
* ``iter_unpack``: each file read whole and walked with
  ``struct.iter_unpack`` on the spec's unit format up to the first unit the
  broker's recovery rejects (offset < 0 or size <= 0).

Both must read the same units with the same offset and size sums.

    .venv/bin/python benchmarks/bench_queues.py [--queues 2] [--files 2] [--repeat 3]

or from Python (``benchmarks/`` on ``sys.path``)::

    from bench_queues import bench_consume_queues
    result = bench_consume_queues(queues=2, files_per_queue=2)   # prints, returns a dict
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from procstats import peak_rss_kib, rss_kib  # noqa: E402 (benchmarks/ is on sys.path)
DATA = os.path.join(HERE, "data")
#: Units per consume-queue file (``mappedFileSizeConsumeQueue`` / 20).
UNITS_PER_FILE = 300_000
TOPIC = "BenchTopic"
READERS = ("to_arrow", "iter_unpack")


# -- data ---------------------------------------------------------------------------------------


def generate(root: str, queues: int, files_per_queue: int, units_per_file: int = UNITS_PER_FILE,
             seed: int = 20261122) -> dict:
    """Write the queues under ``root/consumequeue/`` (unless a manifest says they are there); returns the manifest."""
    manifest_path = os.path.join(root, "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            return json.load(f)
    sys.path.insert(0, os.path.dirname(HERE))
    from rmqformats import synth
    from rmqformats.javahash import tags_code

    rng = random.Random(seed)
    tags = [tags_code(t) for t in ("TagA", "TagB", "TagC", "order-created", "order-paid")] + [0]
    # The last file of each queue is written to two thirds: the rest is its zero-filled tail.
    units_per_queue = files_per_queue * units_per_file - units_per_file // 3
    offset = 0
    out = []
    t0 = time.perf_counter()
    for q in range(queues):
        units = []
        for _ in range(units_per_queue):
            size = rng.randrange(180, 1400)
            units.append((offset, size, rng.choice(tags)))
            offset += size * queues  # the other queues' messages sit in between
        folder = os.path.join(root, "consumequeue", TOPIC, str(q))
        paths = synth.write_consume_queue(folder, units, file_units=units_per_file)
        out.append({"topic": TOPIC, "queue_id": q, "units": len(units), "files": len(paths),
                    "offset_sum": sum(u[0] for u in units), "size_sum": sum(u[1] for u in units)})
    os.makedirs(os.path.join(root, "commitlog"), exist_ok=True)  # open_store wants a store root
    manifest = {"queues": out, "units_per_file": units_per_file, "seed": seed,
                "generate_seconds": round(time.perf_counter() - t0, 1)}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


# -- the readers (each in its own process) -------------------------------------------------------


def read_to_arrow(root: str, manifest: dict) -> dict:
    import pyarrow.compute as pc

    import rmqformats

    store = rmqformats.open_store(root)
    units = offsets = sizes = 0
    t0 = time.perf_counter()
    for q in manifest["queues"]:
        table = store.consume_queue(q["topic"], q["queue_id"]).to_arrow()
        units += table.num_rows
        offsets += pc.sum(table.column("commitLogOffset")).as_py() or 0
        sizes += pc.sum(table.column("size")).as_py() or 0
    return {"seconds": time.perf_counter() - t0, "units": units, "offsets": offsets, "sizes": sizes}


def read_iter_unpack(root: str, manifest: dict) -> dict:
    from rmqformats.generated.layouts import rocketmq_consumequeue as layout

    (_names, fmt), = layout.UNIT_RUNS
    units = offsets = sizes = 0
    t0 = time.perf_counter()
    for q in manifest["queues"]:
        folder = os.path.join(root, "consumequeue", q["topic"], str(q["queue_id"]))
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            for offset, size, _tags in struct.iter_unpack(fmt, data):
                if offset < 0 or size <= 0:  # the broker's recovery ends the queue here
                    break
                units += 1
                offsets += offset
                sizes += size
    return {"seconds": time.perf_counter() - t0, "units": units, "offsets": offsets, "sizes": sizes}


def worker(name: str, root: str, repeat: int) -> None:
    """Run one reader ``repeat`` times after a warm-up; print one JSON line."""
    import pyarrow  # noqa: F401  (imports are not timed)

    import rmqformats  # noqa: F401
    import rmqformats.columnar.queues  # noqa: F401  (to_arrow() imports it on first use)

    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    read = {"to_arrow": read_to_arrow, "iter_unpack": read_iter_unpack}[name]
    rss_before = rss_kib()
    read(root, manifest)  # warm-up: page cache and first-call costs
    runs = [read(root, manifest) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["seconds"])
    best.update(peak_rss_kib=peak_rss_kib(), rss_before_kib=rss_before,
                all_seconds=[round(r["seconds"], 4) for r in runs])
    print(json.dumps(best))


def run_worker(name: str, root: str, repeat: int) -> dict:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--root", root,
                           "--repeat", str(repeat)], capture_output=True, text=True,
                          cwd=os.path.dirname(HERE))
    if proc.returncode:
        raise RuntimeError(f"{name} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the helper ---------------------------------------------------------------------------------


def bench_consume_queues(*, queues: int = 2, files_per_queue: int = 2, units_per_file: int = UNITS_PER_FILE,
                         repeat: int = 3, data_dir: str = DATA, quiet: bool = False) -> dict:
    """Measure consume-queue units/s of ``to_arrow()`` and ``struct.iter_unpack``; returns and prints the results.

    The result has, per reader, ``units``, ``seconds`` (best run),
    ``units_per_s``, ``peak_rss_mib``, ``rss_before_mib``, and ``ratio``
    (to_arrow units/s over iter_unpack units/s). Raises if the readers
    disagree with each other or with what was generated.
    """
    root = os.path.join(data_dir, f"queues-{queues}x{files_per_queue}x{units_per_file}")
    manifest = generate(root, queues, files_per_queue, units_per_file)
    want = {"units": sum(q["units"] for q in manifest["queues"]),
            "offsets": sum(q["offset_sum"] for q in manifest["queues"]),
            "sizes": sum(q["size_sum"] for q in manifest["queues"])}
    results = {}
    for name in READERS:
        r = run_worker(name, root, repeat)
        got = {k: r[k] for k in want}
        if got != want:
            raise AssertionError(f"{name} read {got}, the generator wrote {want}")
        results[name] = {"units": r["units"], "seconds": r["seconds"], "units_per_s": r["units"] / r["seconds"],
                         "peak_rss_mib": r["peak_rss_kib"] / 1024, "rss_before_mib": r["rss_before_kib"] / 1024,
                         "all_seconds": r["all_seconds"]}
    ratio = results["to_arrow"]["units_per_s"] / results["iter_unpack"]["units_per_s"]
    out = {"files": sum(q["files"] for q in manifest["queues"]), "queues": queues,
           "units_per_file": units_per_file, "readers": results, "ratio": ratio}
    if not quiet:
        print(f"{out['files']} consume-queue files ({queues} queues, {units_per_file:,} units per file, "
              f"{want['units']:,} units), best of {repeat}, warm page cache")
        print(f"{'reader':<12} {'units':>10} {'seconds':>9} {'units/s':>14} {'peak RSS MiB':>13} "
              f"{'RSS before MiB':>15}")
        for name, r in results.items():
            print(f"{name:<12} {r['units']:>10,} {r['seconds']:>9.4f} {r['units_per_s']:>14,.0f} "
                  f"{r['peak_rss_mib']:>13.1f} {r['rss_before_mib']:>15.1f}")
        print(f"to_arrow / iter_unpack: {ratio:.1f}x the units per second")
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queues", type=int, default=2)
    p.add_argument("--files", type=int, default=2, help="files per queue (the last one partly written)")
    p.add_argument("--units", type=int, default=UNITS_PER_FILE, help="units per file")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data", default=DATA, help="where the generated queues are kept")
    p.add_argument("--worker", choices=READERS, help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.root, args.repeat)
        return
    result = bench_consume_queues(queues=args.queues, files_per_queue=args.files, units_per_file=args.units,
                                  repeat=args.repeat, data_dir=args.data)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
