"""RocksDB consume-queue units per second, against the binding's own key/value walk (the floor).

Generates (once, into ``benchmarks/data/rocksdb-cq/``) a RocksDB consume queue
of ``units`` units in one topic queue, written by
:func:`rmqformats.synth.rocksdb.write_rocksdb_queues` after the broker's key
and value layouts. Each reader runs in its own process, best of ``repeat``
runs, and reports units/s, the ratio to the floor and its peak RSS
(``VmHWM``):

* ``floor``: ``rocksdict`` seek/valid/key/value/next over the queue's keys,
  nothing decoded (what any Python reader of this binding pays);
* ``unit_array``: ``RocksDBConsumeQueue.unit_array()`` (numpy rows, in batches);
* ``units``: ``RocksDBConsumeQueue.units()`` (one ``CqUnit`` per unit).

    .venv/bin/python benchmarks/bench_rocksdb.py [--units 300000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from procstats import peak_rss_kib  # noqa: E402 (benchmarks/ is on sys.path)

DATA = os.path.join(HERE, "data")
TOPIC = "BenchTopic"
READERS = ("floor", "unit_array", "units")


def generate(path: str, units: int) -> None:
    """Write the database unless a manifest says it holds ``units`` units."""
    manifest = os.path.join(os.path.dirname(path), "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            if json.load(f).get("units") == units:
                return
    from rmqformats.synth.rocksdb import write_rocksdb_queues
    rows = [(cq, cq * 512, 512, (cq * 7919) % 1000, 1_795_000_000_000 + cq) for cq in range(units)]
    write_rocksdb_queues(path, {(TOPIC, 0): rows})
    with open(manifest, "w") as f:
        json.dump({"units": units}, f)


def run_reader(reader: str, path: str, repeat: int) -> dict:
    """One reader in this process: best time of ``repeat`` runs, units read."""
    from rmqformats.rocksdb import RocksDBQueues
    from rmqformats.rocksdb.consumequeue import CF_UNITS, queue_prefix
    best, count = float("inf"), 0
    for _ in range(repeat):
        with RocksDBQueues(path) as queues:
            cq = queues.consume_queue(TOPIC, 0)
            t = time.perf_counter()
            if reader == "floor":
                prefix = queue_prefix(TOPIC, 0)
                it = queues.db._cf(CF_UNITS).iter()
                it.seek(prefix)
                count = 0
                while it.valid():
                    if not it.key().startswith(prefix):
                        break
                    it.value()
                    count += 1
                    it.next()
            elif reader == "unit_array":
                count = len(cq.unit_array())
            else:
                count = sum(1 for _ in cq.units())
            best = min(best, time.perf_counter() - t)
    return {"reader": reader, "seconds": best, "units": count, "peakRssMiB": peak_rss_kib() / 1024}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--units", type=int, default=300_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--reader", choices=READERS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    path = os.path.join(DATA, "rocksdb-cq", "consumequeue")
    if args.reader:
        print(json.dumps(run_reader(args.reader, path, args.repeat)))
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    generate(path, args.units)
    results = {}
    for reader in READERS:
        out = subprocess.run([sys.executable, __file__, "--units", str(args.units), "--repeat", str(args.repeat),
                              "--reader", reader], check=True, capture_output=True, text=True).stdout
        results[reader] = json.loads(out.strip().splitlines()[-1])
    floor = results["floor"]["units"] / results["floor"]["seconds"]
    print(f"RocksDB consume queue, {args.units:,} units, best of {args.repeat}")
    for reader, r in results.items():
        assert r["units"] == args.units, r
        rate = r["units"] / r["seconds"]
        print(f"  {reader:11s} {rate / 1e6:6.2f} M units/s  {rate / floor:5.2f} x floor  "
              f"peak RSS {r['peakRssMiB']:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
