"""Index lookups in a full-size index file: the rmqformats API vs a seek/read baseline vs the Kaitai parser.

What is measured
    One index file of the broker's default size (5,000,000 hash slots,
    20,000,000 entries, 420,000,040 bytes), filled to the last entry the way
    ``IndexFile.putKey`` fills it, is searched for keys, as
    ``IndexFile.selectPhyOffset`` searches it (up to 64 hits, whole time
    range). Four readers do the same lookups:

    ``api``       ``rmqformats.index.IndexFile.select_phy_offsets``: one
                  ``os.pread`` of 4 or 20 bytes per slot and entry visited.
    ``baseline``  what one writes without the package: ``open(path, "rb")``,
                  then ``f.seek`` + ``f.read`` + ``struct.unpack`` per slot and
                  entry, with the broker's stop rules.
    ``api-mmap``  the same with ``IndexFile(path, mapped=True)``: reads
                  through a read-only memory map
                  (``rmqformats.mapped.open_readonly(path, sequential=False)``,
                  i.e. ``MADV_RANDOM``); shows what mapping a 420 MB file
                  does to the resident set.
    ``kaitai``    the Kaitai Struct generated parser: the top-level object
                  (header and inferred counts), then the generated ``HashSlot``
                  and ``Entry`` types read at the slot and entry positions of
                  the parser's own stream. Reading the ``tables`` instance
                  would parse all 25 million items, so it runs on a tenth of
                  the keys and reaches slots and entries the way its ``pos``
                  instances do.

    All three hash keys with ``rmqformats.index.index_key_hash`` (Java
    ``String.hashCode``), so the hashing cost is the same. Two key sets:
    existing keys (half UNIQ_KEYs with one hit, half order keys with two hits)
    and missing keys (the walk goes through the whole chain of the slot, four
    entries on average, without a hit). Each reader runs in its own fresh
    subprocess (``--worker NAME``) on a warm page cache and prints one JSON
    line: lookups/s per key set, the time to open the file, the RSS before the
    lookups and the peak RSS (``VmHWM``). The parent fails unless all readers
    return the same offsets (a checksum over every result, and over the keys
    the Kaitai reader did).

The data
    Built through the generated construct schema by ``rmqformats.synth.index``
    into ``benchmarks/data/index-<slots>x<entries>-seed<seed>/`` (git-ignored)
    with a ``manifest.json``; reused while the parameters match. The file is
    created sparse at full size; entries are appended as ``putKey`` makes
    them and written in chunks of 65,536 through ``tables(0, n)`` (the
    spec's slot/entry type with explicit counts), then the non-empty slots in
    chunks through ``tables(n, 0)`` and the header through ``header``.
    Messages (four topics) get a 32-hex-digit UNIQ_KEY and one order key
    shared with the next message, so each message puts two keys; store times
    advance about 1 ms per message (~2.8 hours for the file) and commit-log
    offsets by 180-1,200 bytes.

How to run
    .venv/bin/python benchmarks/bench_index.py                      # default-size file
    .venv/bin/python benchmarks/bench_index.py --slots 50000        # a small file (4 entries per slot)
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
sys.path.insert(0, os.path.dirname(HERE))
from procstats import peak_rss_kib  # noqa: E402 (benchmarks/ is on sys.path)

DEFAULT_DATA_DIR = os.path.join(HERE, "data")
DEFAULT_SEED = 20261121
#: Bump when the generated contents change, so old data is not reused.
DATA_FORMAT = 1
READERS = ("baseline", "kaitai", "api-mmap", "api")
TOPICS = ("OrderEvents", "PaymentNotify", "InventorySync", "UserActivityLog")
T0 = 1_795_200_000_000
FILE_NAME = "20261121000000000"
MAX_NUM = 64
LONG_MAX = (1 << 63) - 1
MIB = 1024 * 1024


# -- generated data -------------------------------------------------------------------------------

def message_keys(i: int) -> tuple[str, str, str]:
    """(topic, UNIQ_KEY, order key) of message ``i``; order keys are shared by messages 2k and 2k+1."""
    topic = TOPICS[i // 2 % len(TOPICS)]
    return topic, f"0A0000151F6C18B4AAC2{i:012X}", f"ORD{i // 2:010d}"


def data_params(slots: int, entries: int, seed: int) -> dict:
    return {"format": DATA_FORMAT, "slots": slots, "entries": entries, "seed": seed}


def generate(folder: str, params: dict) -> dict:
    """Write the index file into ``folder`` and return its manifest (also written as JSON)."""
    from rmqformats.synth.index import IndexFileBuilder, create_sparse

    os.makedirs(folder, exist_ok=True)
    manifest_path = os.path.join(folder, "manifest.json")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)
    path = os.path.join(folder, FILE_NAME)
    rng = random.Random(params["seed"])
    print(f"building a {params['slots']:,}-slot, {params['entries']:,}-entry index file at {path} ...",
          flush=True)
    t0 = time.perf_counter()
    with create_sparse(path, params["slots"], params["entries"]) as sink:
        builder = IndexFileBuilder(params["slots"], params["entries"], sink=sink)
        phy = 0
        i = 0
        report = time.perf_counter()
        while True:
            topic, uniq, order = message_keys(i)
            store_ts = T0 + i + rng.randrange(3)
            if not builder.put_key(f"{topic}#{uniq}", phy, store_ts):
                break
            if not builder.put_key(f"{topic}#{order}", phy, store_ts):
                i += 1
                break
            phy += rng.randrange(180, 1200)
            i += 1
            if time.perf_counter() - report > 30:
                report = time.perf_counter()
                print(f"  {builder.index_count - 1:,} entries, {report - t0:.0f} s", flush=True)
        entries_seconds = time.perf_counter() - t0
        builder.finish()
    seconds = time.perf_counter() - t0
    manifest = {
        "params": params, "file": FILE_NAME, "size": os.path.getsize(path), "messages": i,
        "entries": builder.index_count - 1, "slots_used": builder.hash_slot_count,
        "begin_timestamp": builder.begin_timestamp, "end_timestamp": builder.end_timestamp,
        "generation_seconds": round(seconds, 1), "entries_seconds": round(entries_seconds, 1),
    }
    with open(manifest_path, "w") as f:  # written last: an interrupted build leaves none
        json.dump(manifest, f, indent=2)
    print(f"built {manifest['entries']:,} entries of {i:,} messages in {seconds:.1f} s "
          f"({manifest['slots_used']:,} slots used)", flush=True)
    return manifest


def ensure_data(data_dir: str, slots: int, entries: int, seed: int, regenerate: bool) -> tuple[str, dict]:
    params = data_params(slots, entries, seed)
    folder = os.path.join(data_dir, f"index-{slots}x{entries}-seed{seed}")
    try:
        with open(os.path.join(folder, "manifest.json")) as f:
            manifest = json.load(f)
        if not regenerate and manifest.get("params") == params and \
                os.path.getsize(os.path.join(folder, FILE_NAME)) == manifest["size"]:
            print(f"reusing {folder} ({manifest['entries']:,} entries, built in "
                  f"{manifest['generation_seconds']} s)", flush=True)
            return os.path.join(folder, FILE_NAME), manifest
    except (OSError, ValueError, KeyError):
        pass
    return os.path.join(folder, FILE_NAME), generate(folder, params)


def key_sets(manifest: dict, count: int, seed: int) -> tuple[list[str], list[str]]:
    """``count`` existing keys (messages chosen at random) and ``count`` keys that were never indexed."""
    rng = random.Random(seed + 1)
    existing = []
    for j in range(count):
        topic, uniq, order = message_keys(rng.randrange(manifest["messages"] - 1))
        existing.append(f"{topic}#{uniq if j % 2 else order}")
    missing = [f"{TOPICS[j % len(TOPICS)]}#NoSuchKey-{rng.randrange(10**12)}" for j in range(count)]
    return existing, missing


# -- readers --------------------------------------------------------------------------------------

def api_reader(path: str):
    from rmqformats.index import IndexFile

    f = IndexFile(path)

    def lookup(key: str) -> list[int]:
        return f.select_phy_offsets(key, MAX_NUM, 0, LONG_MAX)
    return lookup


def baseline_reader(path: str):
    from rmqformats.index import index_key_hash

    f = open(path, "rb")
    size = os.fstat(f.fileno()).st_size
    slots = (size - 40) // 84
    index_count = struct.unpack(">qqqqii", f.read(40))[5]
    index_count = max(index_count, 1)
    entries_at = 40 + 4 * slots

    def lookup(key: str) -> list[int]:
        h = index_key_hash(key)
        f.seek(40 + 4 * (h % slots))
        (n,) = struct.unpack(">i", f.read(4))
        out: list[int] = []
        if n <= 0 or n > index_count or index_count <= 1:
            return out
        while len(out) < MAX_NUM:
            f.seek(entries_at + 20 * n)
            entry_hash, phy, time_diff, prev = struct.unpack(">iqii", f.read(20))
            if time_diff < 0:
                break
            if entry_hash == h:
                out.append(phy)
            if prev <= 0 or prev > index_count or prev == n:
                break
            n = prev
        return out
    return lookup


def mapped_reader(path: str):
    from rmqformats.index import IndexFile

    f = IndexFile(path, mapped=True)

    def lookup(key: str) -> list[int]:
        return f.select_phy_offsets(key, MAX_NUM, 0, LONG_MAX)
    return lookup


def kaitai_reader(path: str):
    from kaitaistruct import KaitaiStream

    from rmqformats.generated.kaitai.rocketmq_index_file import RocketmqIndexFile as K
    from rmqformats.index import index_key_hash

    root = K(KaitaiStream(open(path, "rb")))
    io = root._io
    slots = root.num_hash_slots
    next_index = max(root.header.next_index, 1)
    entries_at = 40 + 4 * slots

    def lookup(key: str) -> list[int]:
        h = index_key_hash(key)
        io.seek(40 + 4 * (h % slots))
        n = K.HashSlot(io, root, root).latest_index
        out: list[int] = []
        if n <= 0 or n > next_index or next_index <= 1:
            return out
        while len(out) < MAX_NUM:
            io.seek(entries_at + 20 * n)
            e = K.Entry(io, root, root)
            if e.time_diff < 0:
                break
            if e.key_hash == h:
                out.append(e.ofs_physical)
            if e.prev_index <= 0 or e.prev_index > next_index or e.prev_index == n:
                break
            n = e.prev_index
        return out
    return lookup


LOADERS = {"api": api_reader, "baseline": baseline_reader, "api-mmap": mapped_reader, "kaitai": kaitai_reader}


def checksum(results: list[list[int]]) -> int:
    h = 0
    for offsets in results:
        h = (h * 1_000_003 + len(offsets)) & 0xFFFFFFFFFFFF
        for o in offsets:
            h = (h * 1_000_003 + o) & 0xFFFFFFFFFFFF
    return h


def worker(name: str, path: str, manifest: dict, count: int, seed: int) -> None:
    """Run reader ``name`` over both key sets and print one JSON line."""
    # Imports before the clock starts: "open" times opening the file only.
    import kaitaistruct  # noqa: F401
    import rmqformats.generated.kaitai.rocketmq_index_file  # noqa: F401
    import rmqformats.index  # noqa: F401

    existing, missing = key_sets(manifest, count, seed)
    if name == "kaitai":
        existing, missing = existing[:count // 10], missing[:count // 10]
    start_rss = peak_rss_kib()
    t0 = time.perf_counter()
    lookup = LOADERS[name](path)
    open_seconds = time.perf_counter() - t0
    out = {"reader": name, "open_seconds": open_seconds, "rss_before_kib": peak_rss_kib(),
           "start_rss_kib": start_rss}
    for label, keys in (("existing", existing), ("missing", missing)):
        t0 = time.perf_counter()
        results = [lookup(k) for k in keys]
        seconds = time.perf_counter() - t0
        out[label] = {"keys": len(keys), "seconds": seconds, "hits": sum(map(len, results)),
                      "checksum": checksum(results), "checksum_tenth": checksum(results[:count // 10])}
    out["peak_rss_kib"] = peak_rss_kib()
    print(json.dumps(out))


# -- parent ---------------------------------------------------------------------------------------

def run_worker(name: str, path: str, manifest_path: str, count: int, seed: int) -> dict:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--file", path,
                           "--manifest", manifest_path, "--keys", str(count), "--seed", str(seed)],
                          check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"worker {name} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=5_000_000, help="hash slots (entries: 4 per slot)")
    parser.add_argument("--keys", type=int, default=20_000, help="keys per key set (kaitai: a tenth)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--repeat", type=int, default=1, help="runs per reader; the best is kept")
    parser.add_argument("--worker", choices=READERS, help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    parser.add_argument("--manifest", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        with open(args.manifest) as f:
            worker(args.worker, args.file, json.load(f), args.keys, args.seed)
        return

    path, manifest = ensure_data(args.data_dir, args.slots, args.slots * 4, args.seed, args.regenerate)
    warm_page_cache(path)
    results = measure(path, args.keys, args.seed, args.repeat)
    print_results(results, manifest, args.keys, args.repeat)
    print(json.dumps({"manifest": manifest, "results": results}))


def warm_page_cache(path: str) -> None:
    """Read the index file once, so that no reader pays for the disk."""
    with open(path, "rb") as f:
        while f.read(64 * MIB):
            pass


def measure(path: str, keys: int, seed: int, repeat: int) -> dict[str, dict]:
    """Each reader's best run of ``repeat``; raises SystemExit when a reader disagrees with the api."""
    manifest_path = os.path.join(os.path.dirname(path), "manifest.json")
    results = {}
    for name in READERS:
        runs = [run_worker(name, path, manifest_path, keys, seed) for _ in range(repeat)]
        results[name] = min(runs, key=lambda r: r["existing"]["seconds"] + r["missing"]["seconds"])
    api = results["api"]
    for name, r in results.items():
        for label in ("existing", "missing"):
            field = "checksum_tenth" if name == "kaitai" else "checksum"
            if r[label][field] != api[label][field]:
                raise SystemExit(f"{name} disagrees with api on the {label} keys")
    return results


def lookups_per_second(r: dict) -> float:
    """Lookups per second over both key sets."""
    return (r["existing"]["keys"] + r["missing"]["keys"]) / (r["existing"]["seconds"] + r["missing"]["seconds"])


def print_results(results: dict[str, dict], manifest: dict, keys: int, repeat: int) -> None:
    """The readers' lookups/s, RSS and speed against the baseline, as a text table."""
    size = manifest["size"]
    print(f"\nindex file: {size:,} bytes, {manifest['params']['slots']:,} slots ({manifest['slots_used']:,} used), "
          f"{manifest['entries']:,} entries of {manifest['messages']:,} messages")
    print(f"keys per set: {keys:,} (kaitai: {keys // 10:,}); best of {repeat}\n")
    header = (f"{'reader':<10} {'open ms':>8} {'existing/s':>11} {'hits':>7} {'missing/s':>10} "
              f"{'peak RSS MiB':>13} {'RSS before MiB':>15} {'vs baseline':>12}")
    print(header)
    print("-" * len(header))
    base_rate = lookups_per_second(results["baseline"])
    for name in READERS:
        r = results[name]
        print(f"{name:<10} {r['open_seconds'] * 1000:>8.2f} "
              f"{r['existing']['keys'] / r['existing']['seconds']:>11,.0f} {r['existing']['hits']:>7,} "
              f"{r['missing']['keys'] / r['missing']['seconds']:>10,.0f} {r['peak_rss_kib'] / 1024:>13.1f} "
              f"{r['rss_before_kib'] / 1024:>15.1f} {lookups_per_second(r) / base_rate:>11.2f}x")
    print(f"\npeak RSS of the api reader: {results['api']['peak_rss_kib'] * 1024 / size:.1%} of the file size")


if __name__ == "__main__":
    main()
