"""Commit-log decoding speed: baseline vs the Kaitai parser vs the rmqformats API.

What is measured
    A generated commit log (``--mb`` MB of records, default 200, in 64 MiB
    segments so BLANK end-of-segment records occur) is decoded completely by
    three decoders, each producing per message the integer fields, the topic,
    the properties as a dict and the body (zlib-decompressed when compressed):

    ``baseline``  ``benchmarks/baseline_reader.py``: the approach of the script
                  people copy today (buffered ``f.read`` + ``struct.unpack`` per
                  field, V1 and IPv4 only, zlib when SYSFLAG == 1).
    ``kaitai``    the Kaitai Struct generated parser, through
                  ``rmqformats.reference.kaitai_records``.
    ``api``       ``rmqformats.open_store(path).commitlog.scan()``.

    Each decoder runs in its own fresh subprocess (this script with
    ``--worker NAME``), so its peak RSS is its own: ``VmHWM`` of the worker,
    since on Linux ``ru_maxrss`` starts at the parent's RSS (see
    ``max_rss_kib``; it is still printed in the JSON). A worker
    times only the decoding (imports happen before the clock starts), on a
    warm page cache (the parent reads the files first), and prints one JSON
    line. The parent prints messages/s, MB/s (10^6 bytes of commit log up to
    the end of the last message, BLANK padding included) and peak RSS per
    decoder and the speed ratios, and fails unless all decoders agree on the
    message count, the bytes covered and a checksum over (commit-log offset,
    size, queue, queue offset, store time, topic, UNIQ_KEY, property count,
    body length) of every message, so a decoder that silently skips work is
    caught.

The data
    Built by ``rmqformats.synth`` through the generated construct schemas into
    ``benchmarks/data/<mb>mb-seed<seed>/commitlog/`` (git-ignored), with a
    ``manifest.json`` next to it; it is reused while the parameters match.
    V1 records with IPv4 hosts, a few topics and queues, TAGS/KEYS/UNIQ_KEY
    style properties, JSON-like bodies of 200-2000 bytes from a seeded RNG,
    about 5% of them zlib-compressed with SYSFLAG == 1 (what the baseline
    understands).

How to run
    make bench                                          # .venv/bin/python benchmarks/bench_commitlog.py
    .venv/bin/python benchmarks/bench_commitlog.py --mb 20            # a quick run
    .venv/bin/python benchmarks/bench_commitlog.py --repeat 3         # best of 3 per decoder
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
from procstats import max_rss_kib, peak_rss_kib  # noqa: E402 (benchmarks/ is on sys.path)
DEFAULT_DATA_DIR = os.path.join(HERE, "data")
SEGMENT_SIZE = 64 * 1024 * 1024
DEFAULT_SEED = 20261121
#: Bump when the generated mix changes, so old data is not reused.
DATA_FORMAT = 1
DECODERS = ("baseline", "kaitai", "api")
MB = 1_000_000
MIB = 1024 * 1024

# topic, queue count, relative share of messages, tags used
TOPICS = (
    ("OrderEvents", 8, 40, ("created", "paid", "shipped", "cancelled")),
    ("PaymentNotify", 4, 20, ("success", "failure")),
    ("InventorySync", 4, 15, ("reserve", "release")),
    ("UserActivityLog", 16, 22, ("login", "view", "click")),
    ("%RETRY%order-service", 1, 3, ("created", "paid")),
)
CLIENT_HOSTS = tuple((f"10.0.{i // 4}.{10 + i}", 40000 + 17 * i) for i in range(6))
STORE_HOST = ("10.0.8.5", 10911)
COMPRESSED_SHARE = 0.05
BODY_SIZES = (200, 2000)
# V1 record with two IPv4 hosts: every fixed field plus the 1-byte topic length.
V1_IPV4_OVERHEAD = 91


# -- generated data -------------------------------------------------------------------------------

def body_pool(rng: random.Random, size: int = 1 << 18) -> bytes:
    """JSON-lines text of made-up order events; bodies are slices of it, so they compress like real ones."""
    lines = []
    total = 0
    while total < size:
        line = json.dumps({
            "orderId": f"ORD{rng.randrange(10**9):09d}", "userId": rng.randrange(10**6),
            "amount": round(rng.uniform(1, 5000), 2), "currency": rng.choice(("CNY", "USD", "EUR")),
            "items": [{"sku": f"SKU-{rng.randrange(10**5):05d}", "qty": rng.randrange(1, 5)}
                      for _ in range(rng.randrange(1, 4))],
            "status": rng.choice(("NEW", "PAID", "SHIPPED", "DONE")), "ts": 1_763_700_000_000 + total,
        }, separators=(",", ":"))
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def uniq_key(client: int, seq: int, delta_ms: int) -> str:
    """A client message id shaped like the producer's: address, pid, class-loader hash, time, counter."""
    return f"0A00000{client:01X}{4242 + client:04X}5B1F2C3D{delta_ms & 0xFFFFFFFF:08X}{seq & 0xFFFF:04X}"


def message_specs(target_bytes: int, seed: int, stats: dict) -> Iterator:
    """Yield ``synth.MessageSpec`` until the records add up to ``target_bytes``; counts into ``stats``."""
    from rmqformats import synth
    from rmqformats.properties import format_properties

    rng = random.Random(seed)
    pool = body_pool(rng)
    names = [t[0] for t in TOPICS]
    weights = [t[2] for t in TOPICS]
    by_name = {t[0]: t for t in TOPICS}
    queue_offsets: dict[tuple[str, int], int] = {}
    born = 1_763_700_000_000
    total = seq = 0
    while total < target_bytes:
        topic, queues, _, tags = by_name[rng.choices(names, weights)[0]]
        queue_id = rng.randrange(queues)
        client = rng.randrange(len(CLIENT_HOSTS))
        n = rng.randint(*BODY_SIZES)
        start = rng.randrange(len(pool) - n)
        body = pool[start:start + n]
        compression = "zlib-legacy" if rng.random() < COMPRESSED_SHARE else None
        properties = {
            "KEYS": f"ORD{rng.randrange(10**9):09d} U{rng.randrange(10**6)}",
            "UNIQ_KEY": uniq_key(client, seq, born - 1_763_700_000_000),
            "WAIT": "true",
            "TAGS": rng.choice(tags),
            "TRACE_ON": "true",
            "MSG_REGION": "DefaultRegion",
        }
        key = (topic, queue_id)
        queue_offsets[key] = queue_offsets.get(key, -1) + 1
        born += rng.randrange(3)
        stored = len(zlib.compress(body)) if compression else n  # synth compresses with the same call
        total += V1_IPV4_OVERHEAD + len(topic) + len(format_properties(properties).encode()) + stored
        seq += 1
        stats["compressed"] += compression is not None
        yield synth.MessageSpec(
            topic=topic, body=body, properties=properties, queue_id=queue_id,
            queue_offset=queue_offsets[key], born_timestamp=born, store_timestamp=born + rng.randrange(1, 5),
            born_host=CLIENT_HOSTS[client], store_host=STORE_HOST,
            reconsume_times=rng.randrange(1, 4) if topic.startswith("%RETRY%") else 0,
            compression=compression, version=1,
        )


def data_params(mb: int, seed: int) -> dict:
    """The parameters that decide the generated bytes; data is reused only when they match."""
    return {"format": DATA_FORMAT, "mb": mb, "seed": seed, "segment_size": SEGMENT_SIZE}


def load_manifest(folder: str, params: dict) -> dict | None:
    """The manifest of existing data in ``folder`` made with ``params``, else ``None``."""
    try:
        with open(os.path.join(folder, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    if manifest.get("params") != params:
        return None
    commitlog = os.path.join(folder, "commitlog")
    if not os.path.isdir(commitlog) or len(os.listdir(commitlog)) != manifest["segments"]:
        return None
    return manifest


def generate(folder: str, params: dict) -> dict:
    """Write the commit log into ``folder``/commitlog and return its manifest (also written as JSON)."""
    from rmqformats import synth

    shutil.rmtree(folder, ignore_errors=True)
    commitlog = os.path.join(folder, "commitlog")
    stats = {"compressed": 0}
    print(f"generating {params['mb']} MB of commit log into {commitlog} ...", flush=True)
    t0 = time.perf_counter()
    specs = message_specs(params["mb"] * MB, params["seed"], stats)
    placed = synth.write_commitlog(commitlog, specs, segment_size=params["segment_size"])
    seconds = time.perf_counter() - t0
    last = placed[-1]
    manifest = {
        "params": params, "messages": len(placed), "compressed": stats["compressed"],
        "bytes": last.commitlog_offset + last.size, "segments": len(os.listdir(commitlog)),
        "generation_seconds": round(seconds, 1),
    }
    # Written last: an interrupted generation leaves no manifest and is redone.
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"generated {manifest['messages']:,} messages ({manifest['compressed']:,} compressed), "
          f"{manifest['bytes'] / MB:.1f} MB in {manifest['segments']} segments, in {seconds:.1f} s", flush=True)
    return manifest


def ensure_data(data_dir: str, mb: int, seed: int, regenerate: bool) -> tuple[str, dict]:
    """The commit-log folder and manifest for ``mb``/``seed``, generated unless already there."""
    params = data_params(mb, seed)
    folder = os.path.join(data_dir, f"{mb}mb-seed{seed}")
    manifest = None if regenerate else load_manifest(folder, params)
    if manifest is None:
        manifest = generate(folder, params)
    else:
        print(f"reusing {manifest['messages']:,} messages, {manifest['bytes'] / MB:.1f} MB in {folder} "
              f"(generated in {manifest['generation_seconds']} s)", flush=True)
    return os.path.join(folder, "commitlog"), manifest


def warm_page_cache(commitlog: str) -> None:
    """Read every segment once so that no decoder pays for the disk and the first one is not penalised."""
    for name in sorted(os.listdir(commitlog)):
        with open(os.path.join(commitlog, name), "rb") as f:
            while f.read(8 * MIB):
                pass


# -- the decoders (run in the workers) ----------------------------------------------------------

class Tally:
    """Counts the messages a decoder produced and folds them into an order-sensitive checksum.

    The checksum uses ``hash``, which is stable across processes because the
    parent starts the workers with ``PYTHONHASHSEED=0``.
    """

    __slots__ = ("messages", "end", "checksum")

    def __init__(self) -> None:
        self.messages = 0
        #: Commit-log offset just past the last message: the bytes covered from offset 0.
        self.end = 0
        self.checksum = 0

    def add(self, offset: int, size: int, queue_id: int, queue_offset: int, store_timestamp: int,
            topic: str, properties: dict, body: bytes) -> None:
        """Account for one decoded message."""
        self.messages += 1
        self.end = offset + size
        self.checksum = hash((self.checksum, offset, size, queue_id, queue_offset, store_timestamp, topic,
                              properties.get("UNIQ_KEY"), len(properties), len(body)))


Decode = Callable[[str, Tally], None]


def load_baseline() -> Decode:
    """The baseline decoder: ``baseline_reader.read_commitlog``."""
    import baseline_reader

    def decode(commitlog: str, tally: Tally) -> None:
        for offset, m in baseline_reader.read_commitlog(commitlog):
            tally.add(offset, m.store_size, m.queue_id, m.queue_offset, m.store_timestamp, m.topic,
                      m.properties, m.body)
    return decode


def load_kaitai() -> Decode:
    """The Kaitai decoder: ``kaitai_records`` per segment, properties and bodies decoded here."""
    from baseline_reader import segment_files
    from rmqformats.compression import decompress
    from rmqformats.properties import parse_properties
    from rmqformats.reference import kaitai_records

    def decode(commitlog: str, tally: Tally) -> None:
        for start, path in segment_files(commitlog):
            for pos, rec in kaitai_records(path):
                if not rec.is_message:
                    break  # BLANK or the zero tail: the rest of the segment is not data
                m = rec.body
                body = m.body
                if m.sys_flag.is_compressed:
                    kind = m.sys_flag.compression_type.name
                    # Type 0 is what 4.x producers write for zlib.
                    body = zlib.decompress(body) if kind in ("unspecified", "zlib") else decompress(body, kind)
                tally.add(start + pos, rec.len_record, m.queue_id, m.queue_offset, m.store_timestamp, m.topic,
                          parse_properties(m.properties), body)
    return decode


def load_api() -> Decode:
    """The API decoder: ``open_store(path).commitlog.scan()``."""
    import rmqformats

    def decode(commitlog: str, tally: Tally) -> None:
        scan = rmqformats.open_store(commitlog).commitlog.scan()
        for m in scan:
            tally.add(m.commitlog_offset, m.store_size, m.queue_id, m.queue_offset, m.store_timestamp, m.topic,
                      m.properties, m.body)
        if not scan.end.reason.is_clean:
            raise SystemExit(f"api: the data ended early: {scan.end}")
    return decode


LOADERS: dict[str, Callable[[], Decode]] = {"baseline": load_baseline, "kaitai": load_kaitai, "api": load_api}


def worker(name: str, commitlog: str) -> None:
    """Decode ``commitlog`` with decoder ``name`` and print one JSON line of measurements."""
    decode = LOADERS[name]()
    start_rss = peak_rss_kib()
    tally = Tally()
    t0 = time.perf_counter()
    decode(commitlog, tally)
    seconds = time.perf_counter() - t0
    print(json.dumps({
        "decoder": name, "messages": tally.messages, "bytes": tally.end, "seconds": seconds,
        "peak_rss_kib": peak_rss_kib(), "start_rss_kib": start_rss, "ru_maxrss_kib": max_rss_kib(),
        "checksum": tally.checksum,
    }))


# -- the parent ---------------------------------------------------------------------------------------

def run_worker(name: str, commitlog: str) -> dict:
    """Run one decoder in a fresh interpreter and return its measurements."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--commitlog", commitlog],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"worker {name} failed (exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(commitlog: str, repeat: int) -> dict[str, dict]:
    """Each decoder's fastest run over ``repeat`` rounds, with the highest peak RSS seen."""
    runs: dict[str, list[dict]] = {name: [] for name in DECODERS}
    for round_no in range(1, repeat + 1):
        for name in DECODERS:  # interleaved, so a slow patch of the machine hits all decoders
            result = run_worker(name, commitlog)
            print(f"  round {round_no}/{repeat} {name:<8} {result['seconds']:8.2f} s", flush=True)
            runs[name].append(result)
    return {name: dict(min(rs, key=lambda r: r["seconds"]), peak_rss_kib=max(r["peak_rss_kib"] for r in rs))
            for name, rs in runs.items()}


def disagreements(results: dict[str, dict], manifest: dict) -> list[str]:
    """What the decoders disagree on, with each other or with what was generated."""
    problems = []
    expected = {"messages": manifest["messages"], "bytes": manifest["bytes"]}
    for key, want in expected.items():
        for name, r in results.items():
            if r[key] != want:
                problems.append(f"{name} decoded {r[key]:,} {key}, the generator wrote {want:,}")
    checksums = {r["checksum"] for r in results.values()}
    if len(checksums) != 1:
        problems.append("checksums differ: " + ", ".join(f"{n}={r['checksum']}" for n, r in results.items()))
    return problems


def table(results: dict[str, dict]) -> str:
    """The results as a Markdown table."""
    base = results["baseline"]["seconds"]
    rows = ["| decoder | messages | seconds | msgs/s | MB/s | peak RSS MiB | RSS before decoding MiB | speed vs baseline |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        s = r["seconds"]
        rows.append(f"| {name} | {r['messages']:,} | {s:.2f} | {r['messages'] / s:,.0f} | {r['bytes'] / MB / s:.1f} "
                    f"| {r['peak_rss_kib'] / 1024:.1f} | {r['start_rss_kib'] / 1024:.1f} | {base / s:.2f}x |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run a worker (``--worker``) or the whole benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the generated commit log in MB (default 200)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per decoder; the best time is reported")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the generated data")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="where generated data is kept")
    parser.add_argument("--regenerate", action="store_true", help="generate the data even if it exists")
    parser.add_argument("--worker", choices=DECODERS, help=argparse.SUPPRESS)
    parser.add_argument("--commitlog", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        worker(args.worker, args.commitlog)
        return 0
    if args.mb < 1 or args.repeat < 1:
        parser.error("--mb and --repeat must be at least 1")

    commitlog, manifest = ensure_data(args.data_dir, args.mb, args.seed, args.regenerate)
    warm_page_cache(commitlog)
    print(f"decoding with {', '.join(DECODERS)} ({args.repeat} round(s), each in a fresh process)", flush=True)
    results = measure(commitlog, args.repeat)
    print()
    print(table(results))
    ratio = results["kaitai"]["seconds"] / results["api"]["seconds"]
    print(f"\napi/kaitai speed ratio: {ratio:.1f}x (api is {ratio:.1f} times as fast as the Kaitai parser)")
    problems = disagreements(results, manifest)
    if problems:
        print("\nDECODERS DISAGREE:\n  " + "\n  ".join(problems))
        return 1
    print(f"all decoders agree: {manifest['messages']:,} messages, {manifest['bytes']:,} bytes, same checksum")
    return 0


if __name__ == "__main__":
    sys.exit(main())
