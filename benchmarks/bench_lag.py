"""Peak memory of ``rmqformats lag`` against the number of committed offsets in ``consumerOffset.json``.

Generates a store root (in a temporary folder, deleted at the end unless
``--keep``) whose only content is ``config/consumerOffset.json`` with
``--keys`` ``topic@group`` keys of ``--queues`` queues each, in the broker's
fastjson format, keys in a shuffled order (as a broker's hash map writes
them). ``--names few`` repeats 5,000 topics over groups of 5,000 keys each
(the many-groups case); ``--names distinct`` gives every key its own topic
(one name per key: the case where names cost most).

Each ``--formats`` entry runs ``rmqformats lag ROOT --no-store-time --format F``
in its own process (``--worker``), its output counted and dropped, and
reports its time, the rows written and the peak RSS (``VmHWM``, the
interpreter and imports included) and the RSS after the imports. The
store has no queues, so every committed offset is one row (exit status 1:
every row is flagged "no consume queue on disk").

    .venv/bin/python benchmarks/bench_lag.py --keys 1000000 --queues 2 [--names few] [--formats jsonl,table]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from procstats import LineCounter, peak_rss_kib, rss_kib  # noqa: E402 (benchmarks/ is on sys.path)


def generate(root: str, keys: int, queues: int, names: str, seed: int = 20261128) -> dict:
    """Write ``root/config/consumerOffset.json``; returns its size, keys and offsets."""
    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "config"), exist_ok=True)
    os.makedirs(os.path.join(root, "commitlog"), exist_ok=True)
    path = os.path.join(root, "config", "consumerOffset.json")
    order = list(range(keys))
    rng.shuffle(order)
    with open(path, "w", encoding="utf-8") as f:
        f.write('{\n\t"offsetTable":{')
        parts = []
        for n, k in enumerate(order):
            if names == "distinct":
                key = f"Topic_{k:09d}@ConsumerGroup_{k % 100:03d}"
            else:
                key = f"Topic_{k % 5000:05d}@ConsumerGroup_{k // 5000:05d}"
            parts.append(("," if n else "") + f'\n\t\t"{key}":{{'
                         + ",".join(f"{q}:{rng.randrange(1 << 30)}" for q in range(queues)) + "\n\t\t}")
            if len(parts) == 10000:
                f.write("".join(parts))
                parts = []
        f.write("".join(parts))
        f.write("\n\t}\n}")
    return {"size": os.path.getsize(path), "keys": keys, "offsets": keys * queues}


def worker(fmt: str, root: str) -> None:
    import rmqformats.cli  # noqa: F401  (imports are not measured)
    import rmqformats.lag  # noqa: F401
    from rmqformats.cli import main
    before = rss_kib()
    t0 = time.perf_counter()
    sink = LineCounter()
    with contextlib.redirect_stdout(sink):
        code = main(["lag", root, "--no-store-time", "--format", fmt])
    if code not in (0, 1):
        raise RuntimeError(f"rmqformats lag exited with {code}")
    sys.stderr.write(json.dumps({"seconds": time.perf_counter() - t0, "lines": sink.lines, "chars": sink.chars,
                                 "peak_rss_kib": peak_rss_kib(), "rss_before_kib": before}) + "\n")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--keys", type=int, default=1_000_000, help="topic@group keys in the generated file")
    p.add_argument("--queues", type=int, default=2, help="queues per key")
    p.add_argument("--names", choices=("few", "distinct"), default="few")
    p.add_argument("--formats", default="jsonl", help="comma-separated lag output formats to run")
    p.add_argument("--keep", help="generate into (or reuse) this folder and keep it")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.root)
        return
    root = args.keep or tempfile.mkdtemp(prefix="bench-lag-")
    try:
        t0 = time.perf_counter()
        manifest_path = os.path.join(root, "manifest.json")
        if os.path.exists(manifest_path):
            with open(manifest_path) as f:
                manifest = json.load(f)
        else:
            manifest = generate(root, args.keys, args.queues, args.names)
            with open(manifest_path, "w") as f:
                json.dump(manifest, f)
        print(f"consumerOffset.json: {manifest['size']:,} bytes, {manifest['keys']:,} keys, "
              f"{manifest['offsets']:,} offsets ({args.names} names; {time.perf_counter() - t0:.1f} s)")
        print(f"{'format':<7} {'seconds':>8} {'rows':>11} {'peak RSS MiB':>13} {'RSS before MiB':>15}")
        results = {}
        for fmt in args.formats.split(","):
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", fmt, "--root", root],
                                  capture_output=True, text=True, cwd=os.path.dirname(HERE))
            if proc.returncode:
                raise SystemExit(f"lag --format {fmt} failed:\n{proc.stderr}")
            r = results[fmt] = json.loads(proc.stderr.strip().splitlines()[-1])
            rows = r["lines"] if fmt == "jsonl" else None
            print(f"{fmt:<7} {r['seconds']:>8.1f} {rows if rows is not None else '':>11} "
                  f"{r['peak_rss_kib'] / 1024:>13.1f} {r['rss_before_kib'] / 1024:>15.1f}")
            if rows is not None and rows != manifest["offsets"]:
                raise SystemExit(f"lag wrote {rows} rows, the file has {manifest['offsets']} offsets")
        print(json.dumps({"manifest": manifest, "results": results}))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
