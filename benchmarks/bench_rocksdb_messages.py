"""RocksDB timer records per second (5.4+ ``rocksdbstore/``), against the binding's own walk (the floor).

Generates (once, into ``benchmarks/data/rocksdb-messages/``) a RocksDB message
store of ``records`` timer records, written by
:func:`rmqformats.synth.rocksdb.write_rocksdb_message_store` after the
broker's key and value layouts. Each reader runs in its own process, best of
``repeat`` runs, and reports records/s, the ratio to the floor and its peak
RSS (``VmHWM``):

* ``floor``: ``rocksdict`` seek/valid/key/value/next over the ``timer``
  column family, nothing decoded;
* ``timer_entries``: ``RocksDBMessageStore.timer_entries()`` (one
  ``TimerEntry`` per record);
* ``timer_count``: ``RocksDBMessageStore.timer_count()`` (values' sizes
  checked, keys not decoded), what ``inspect`` pays.

    .venv/bin/python benchmarks/bench_rocksdb_messages.py [--records 300000] [--repeat 3]
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
READERS = ("floor", "timer_entries", "timer_count")


def generate(path: str, records: int) -> None:
    """Write the database unless a manifest says it holds ``records`` records."""
    manifest = os.path.join(os.path.dirname(path), "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            if json.load(f).get("records") == records:
                return
    from rmqformats.synth.rocksdb import write_rocksdb_message_store
    # UNIQ_KEYs of the length MessageClientIDSetter makes (32 hex digits), due over a day.
    timer = [(1_795_000_000_000 + i * 86_400_000 // records, f"{i:032X}", i * 512, 512) for i in range(records)]
    write_rocksdb_message_store(path, timer=timer, timer_scan_offset=records, timeline=1_795_000_000_000)
    with open(manifest, "w") as f:
        json.dump({"records": records}, f)


def run_reader(reader: str, path: str, repeat: int) -> dict:
    """One reader in this process: best time of ``repeat`` runs, records read."""
    from rmqformats.rocksdb.messagestore import CF_TIMER, TIMER_SCAN_OFFSET, TIMER_TIMELINE, RocksDBMessageStore
    best, count = float("inf"), 0
    for _ in range(repeat):
        with RocksDBMessageStore(path) as ms:
            ms.db  # opened before the clock starts
            t = time.perf_counter()
            if reader == "floor":
                it = ms.db._cf(CF_TIMER).iter()
                it.seek_to_first()
                count = 0
                while it.valid():
                    if it.key() not in (TIMER_SCAN_OFFSET, TIMER_TIMELINE):
                        it.value()
                        count += 1
                    it.next()
            elif reader == "timer_entries":
                count = sum(1 for _ in ms.timer_entries())
            else:
                count = ms.timer_count()
            best = min(best, time.perf_counter() - t)
    return {"reader": reader, "seconds": best, "records": count, "peakRssMiB": peak_rss_kib() / 1024}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=300_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--reader", choices=READERS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    path = os.path.join(DATA, "rocksdb-messages", "rocksdbstore")
    if args.reader:
        print(json.dumps(run_reader(args.reader, path, args.repeat)))
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    generate(path, args.records)
    results = {}
    for reader in READERS:
        out = subprocess.run([sys.executable, __file__, "--records", str(args.records), "--repeat", str(args.repeat),
                              "--reader", reader], check=True, capture_output=True, text=True).stdout
        results[reader] = json.loads(out.strip().splitlines()[-1])
    floor = results["floor"]["records"] / results["floor"]["seconds"]
    print(f"RocksDB timer records, {args.records:,} records, best of {args.repeat}")
    for reader, r in results.items():
        assert r["records"] == args.records, r
        rate = r["records"] / r["seconds"]
        print(f"  {reader:13s} {rate / 1e6:6.2f} M records/s  {rate / floor:5.2f} x floor  "
              f"peak RSS {r['peakRssMiB']:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
