"""Peak memory of reading a large ``consumerOffset.json``, against the file's size.

Generates (once, into ``benchmarks/data/``) a store root whose only content
is ``config/consumerOffset.json`` of about ``--mb`` MB (default 200) in the
broker's fastjson format: ``topic@group`` keys, ``--queues`` queues each
(default 16), offsets up to 10^9 — what a broker with tens of thousands of
groups and topics writes. ``--queues 2`` gives about 3 M keys in 200 MB: the
many-groups case, where a string per key costs more than the offsets.

Each reader runs in its own process (``--worker NAME``) and reports its
time and peak RSS (``VmHWM``) and the RSS after its imports:

* ``stream``: :func:`rmqformats.config.stream.iter_consumer_offsets`,
  counting the offsets and summing them;
* ``config-jsonl``: ``rmqformats config ROOT --format jsonl`` (output to
  ``/dev/null``), which streams the file's offsets into its JSON line;
* ``config-table``: ``rmqformats config ROOT`` (the table, to ``/dev/null``),
  which reads the offsets twice (column widths, then lines) instead of
  holding them;
* ``config-file``: ``rmqformats config ROOT --file consumerOffset.json``, the
  file's model as one JSON document (held whole: not bounded yet);
* ``lag``: ``rmqformats lag ROOT --format jsonl --no-store-time``: every
  committed offset becomes a row (the store has no queues), written as it
  is made; the lines are counted;
* ``api``: :func:`rmqformats.config.read_config_file`, the API's reader
  (schema-checked, a typed model; above ``COMPACT_BYTES`` its tables are
  arrays), then every offset read through ``model.entries()``;
* ``document``: the same with ``COMPACT_BYTES`` raised past the file's size,
  the whole-document reader (Python objects for every offset), on a
  ``--document-mb`` file (default 20), for comparison; not run by default.

The run fails unless ``stream``, ``config-jsonl``, ``config-table``, ``lag`` and ``api`` stay
under 4x the file size (peak RSS, the interpreter and imports included) and
agree with the generator on the count (and, but for ``lag``, the sum) of
the offsets.

    .venv/bin/python benchmarks/bench_config.py [--mb 200] [--queues 16] [--document-mb 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from procstats import LineCounter, peak_rss_kib, rss_kib  # noqa: E402 (benchmarks/ is on sys.path)

DATA = os.path.join(HERE, "data")
QUEUES = 16
READERS = ("stream", "config-jsonl", "config-table", "config-file", "lag", "api", "document")
#: Run unless ``--readers`` says otherwise.
DEFAULT_READERS = ("stream", "config-jsonl", "config-table", "config-file", "lag", "api")
#: Readers whose peak RSS must stay under LIMIT.
BOUNDED = ("stream", "config-jsonl", "config-table", "lag", "api")
#: Peak RSS allowed for the streaming readers, in file sizes.
LIMIT = 4.0


def generate(root: str, mb: int, seed: int = 20261122, queues: int = QUEUES) -> dict:
    """Write ``root/config/consumerOffset.json`` of about ``mb`` MB unless it is there; returns its manifest."""
    manifest_path = os.path.join(root, "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            return json.load(f)
    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "config"), exist_ok=True)
    os.makedirs(os.path.join(root, "commitlog"), exist_ok=True)
    path = os.path.join(root, "config", "consumerOffset.json")
    target = mb * 1_000_000
    count = total = entries = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write('{\n\t"offsetTable":{')
        written = 16
        k = 0
        while written < target:
            topic, group = f"Topic_{k % 5000:05d}", f"ConsumerGroup_{k // 5000:05d}"
            offsets = [rng.randrange(10 ** rng.randrange(1, 10)) for _ in range(queues)]
            text = (("," if k else "") + f'\n\t\t"{topic}@{group}":{{'
                    + ",".join(f"{q}:{o}" for q, o in enumerate(offsets)) + "\n\t\t}")
            f.write(text)
            written += len(text)
            count += queues
            total += sum(offsets)
            entries += 1
            k += 1
        f.write("\n\t}\n}")
    manifest = {"mb": mb, "queues": queues, "seed": seed, "size": os.path.getsize(path), "entries": entries,
                "offsets": count,
                "offset_sum": total}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)
    return manifest


def run_reader(name: str, root: str) -> dict:
    path = os.path.join(root, "config", "consumerOffset.json")
    if name == "stream":
        from rmqformats.config.stream import iter_consumer_offsets
        n = s = 0
        for e in iter_consumer_offsets(path):
            n += 1
            s += e.offset
        return {"offsets": n, "offset_sum": s}
    if name in ("api", "document"):
        import rmqformats.config as config
        if name == "document":
            config.COMPACT_BYTES = 1 << 62
        f = config.read_config_file(path)
        entries = f.model.entries()
        n = s = 0
        for e in entries:
            n += 1
            s += e.offset
        if n != len(entries):
            raise AssertionError(f"entries() iterates {n} offsets but its length is {len(entries)}")
        return {"offsets": n, "offset_sum": s, "model": type(f.model).__name__}
    from rmqformats.cli import main
    args = {"config-jsonl": ["config", root, "--format", "jsonl"], "config-table": ["config", root],
            "config-file": ["config", root, "--file", "consumerOffset.json"]}.get(
        name, ["lag", root, "--format", "jsonl", "--no-store-time"])
    sink = LineCounter()
    with contextlib.redirect_stdout(sink):
        status = main(args)
    # lag exits 1 (findings) here: no queue of the generated store has files.
    if status not in ((0, 1) if name == "lag" else (0,)):
        raise RuntimeError(f"rmqformats {' '.join(args)} exited with {status}")
    return {"rows": sink.lines, "output_bytes": sink.chars} if name == "lag" else {"output_bytes": sink.chars}


def worker(name: str, root: str) -> None:
    import rmqformats.cli  # noqa: F401  (imports are not measured)
    import rmqformats.config  # noqa: F401
    import rmqformats.config.stream  # noqa: F401
    import rmqformats.lag  # noqa: F401

    before = rss_kib()
    t0 = time.perf_counter()
    result = run_reader(name, root)
    result.update(seconds=time.perf_counter() - t0, peak_rss_kib=peak_rss_kib(), rss_before_kib=before)
    sys.stderr.write(json.dumps(result) + "\n")


def run_worker(name: str, root: str) -> dict:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--root", root],
                          capture_output=True, text=True, cwd=os.path.dirname(HERE))
    if proc.returncode:
        raise RuntimeError(f"{name} failed:\n{proc.stderr}")
    return json.loads(proc.stderr.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=200, help="size of the generated consumerOffset.json in MB")
    p.add_argument("--queues", type=int, default=QUEUES, help="queues per topic@group key of the generated file")
    p.add_argument("--document-mb", type=int, default=20, help="size of the file the document reader reads")
    p.add_argument("--readers", default=",".join(DEFAULT_READERS),
                   help=f"comma-separated readers to run, of {', '.join(READERS)}")
    p.add_argument("--data", default=DATA)
    p.add_argument("--worker", choices=READERS, help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.root)
        return
    results = {}
    print(f"{'reader':<13} {'file MB':>8} {'seconds':>8} {'offsets':>11} {'peak RSS MiB':>13} "
          f"{'RSS before MiB':>15} {'peak / file':>12}")
    for name in args.readers.split(","):
        mb = args.document_mb if name == "document" else args.mb
        suffix = "" if args.queues == QUEUES else f"-{args.queues}q"
        root = os.path.join(args.data, f"config-consumeroffset-{mb}mb{suffix}")
        t0 = time.perf_counter()
        manifest = generate(root, mb, queues=args.queues)
        if time.perf_counter() - t0 > 1:
            print(f"(generated {manifest['size']:,} bytes in {time.perf_counter() - t0:.1f} s)")
        r = run_worker(name, root)
        ratio = r["peak_rss_kib"] * 1024 / manifest["size"]
        r.update(size=manifest["size"], ratio=ratio)
        results[name] = r
        print(f"{name:<13} {manifest['size'] / 1e6:>8.1f} {r['seconds']:>8.1f} {r.get('offsets', r.get('rows', '')):>11} "
              f"{r['peak_rss_kib'] / 1024:>13.1f} {r['rss_before_kib'] / 1024:>15.1f} {ratio:>11.2f}x")
        if "offsets" in r and (r["offsets"], r["offset_sum"]) != (manifest["offsets"], manifest["offset_sum"]):
            raise AssertionError(f"{name} read {r['offsets']} offsets summing to {r['offset_sum']}, the generator "
                                 f"wrote {manifest['offsets']} summing to {manifest['offset_sum']}")
        if "rows" in r and r["rows"] != manifest["offsets"]:
            raise AssertionError(f"lag wrote {r['rows']} rows, the generator wrote {manifest['offsets']} offsets")
    print(json.dumps(results))
    over = [n for n in BOUNDED if n in results and results[n]["ratio"] >= LIMIT]
    if over:
        raise SystemExit(f"peak RSS at or over {LIMIT}x the file size: {', '.join(over)}")


if __name__ == "__main__":
    main()
