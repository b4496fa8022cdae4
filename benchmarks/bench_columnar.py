"""Commit logs to Arrow: the columnar decoder against the floor, the baseline, Kaitai and the object API.

What is measured
    Two generated commit logs of about 1 GiB each, in 1 GiB segments (see
    ``storegen.py``): ``mixed`` (bodies of 100 B-4 KiB) and ``small`` (bodies
    of 10-200 B). For each log, each decoder runs in its own fresh
    subprocess (this script with ``--worker NAME``) on a warm page cache
    (the parent reads the files first) and prints one JSON line; peak RSS is
    the worker's ``VmHWM``. Imports happen before the clock starts.

    ``floor-read``      the data bytes read with ``readinto`` into one reused
                        8 MiB buffer and summed with numpy (as uint64 words).
    ``floor-mmap``      the same bytes through a read-only memory map, summed
                        32 MiB at a time, pages given back as the readers do.
                        The faster of the two is *the floor*.
    ``kaitai``          the Kaitai Struct generated parser over the records
                        that start in the first 32 MiB; its rates are scaled
                        to the whole log by bytes.
    ``baseline``        ``baseline_reader.read_commitlog(any_record=True)``:
                        the published script's ``f.read`` + ``struct.unpack``
                        per field, with the IPv6, V2 and compression-type
                        cases these logs need.
    ``api``             ``open_store(p).commitlog.scan()``, every field of each
                        message touched, including the properties dict, the
                        decompressed body, hosts as text, msgId, tags, keys.
    ``columnar``        ``for rb in open_store(p).commitlog.batches(): ...``,
                        every column (pyarrow RecordBatches).
    ``columnar-fixed``  ``batches(columns=FIXED_COLUMNS)``: fixed-width columns only.

    All decoders must agree with what the generator wrote: the message
    count, the sum of commit-log offsets, the sum of decoded body lengths and
    the number of properties (for the columnar decoder computed with
    pyarrow compute between batches, outside the timed section), and where
    the data ends. Any disagreement fails the run.

    Then the consume queues of the ``small`` store (``consumequeue/``, 300,000
    units per file) are read whole, queue by queue: numpy sum of the unit
    bytes (the floor), ``struct.iter_unpack`` over each file, and the API's
    ``ConsumeQueue.unit_array()`` (and ``to_arrow()`` where it exists). And
    index lookups run through ``bench_index.py``'s readers on its
    full-size index file (built once, ~5 minutes, and cached).

    The goals at the end are checked against the numbers of this run; when
    the columnar decoder misses one, a per-column timing and a cProfile of
    the decoder over the first 256 MiB of the log in question are printed.

The data
    Generated once into ``benchmarks/data/`` (git-ignored) with a
    ``manifest.json`` per store, reused while the parameters match.

How to run
    make bench                                           # .venv/bin/python benchmarks/bench_columnar.py
    .venv/bin/python benchmarks/bench_columnar.py --mib 48 --segment-mib 16 --index-slots 50000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import platform
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from procstats import peak_rss_kib  # noqa: E402 (benchmarks/ is on sys.path)

# Workers import only what their decoder needs (their RSS is measured); the
# parent imports the data generator, ``storegen``, when it runs.
DEFAULT_DATA_DIR = os.path.join(HERE, "data")
DEFAULT_SEED = 20261122
LOGS = ("mixed", "small")
DECODERS = ("floor-read", "floor-mmap", "kaitai", "baseline", "api", "columnar", "columnar-fixed")
COLUMNAR = ("columnar", "columnar-fixed")
CQ_READERS = ("cq-floor", "cq-iter_unpack", "cq-api", "cq-arrow")
FIXED_COLUMNS = ("commitLogOffset", "storeSize", "queueId", "queueOffset", "storeTimestamp")
MB = 1_000_000
MIB = 1 << 20
READ_CHUNK = 8 * MIB
MAP_CHUNK = 32 * MIB
PROFILE_MIB = 256

# The goals, checked at the end of a run.
GOAL_MIXED_FLOOR = 4.0       # mixed log, all columns: at most this many times the floor's time
GOAL_MIXED_BASELINE = 3.0    # mixed log: at least this many times the baseline's speed
GOAL_SMALL_RATE = 5_000_000  # small log: messages per second
GOAL_SMALL_BASELINE = 4.0    # small log: at least this many times the baseline's speed
GOAL_RSS_MB = 300            # peak RSS of the columnar decoder, 10^6 bytes
GOAL_CQ_FLOOR = 2.0          # consume queues: at most this many times the floor's time


# -- measurements common to the workers -------------------------------------------------------------

class Tally:
    """What a decoder produced: messages, sum of offsets, body bytes, properties, and the data end."""

    __slots__ = ("messages", "offsets", "body_bytes", "properties", "end")

    def __init__(self) -> None:
        self.messages = self.offsets = self.body_bytes = self.properties = self.end = 0

    def add(self, offset: int, body_length: int, properties: int) -> None:
        """Account for one decoded message."""
        self.messages += 1
        self.offsets += offset
        self.body_bytes += body_length
        self.properties += properties

    def checksum(self) -> dict[str, int]:
        """The four sums, keyed as in the generator's manifest."""
        return {"messages": self.messages, "offsets": self.offsets, "body_bytes": self.body_bytes,
                "properties": self.properties}


def segment_paths(root: str, manifest: dict) -> list[tuple[str, int]]:
    """``(path, data bytes)`` of each segment: the bytes up to the end of the data."""
    folder = os.path.join(root, "commitlog")
    return [(os.path.join(folder, name), size) for name, size in zip(manifest["segments"], manifest["segment_data"])]


# -- the decoders (each runs in a worker) -----------------------------------------------------------

def sum_words(np, buf, n: int) -> int:
    """Sum of the first ``n`` bytes of ``buf``: as uint64 words, then the bytes left over."""
    words = n // 8
    total = int(np.frombuffer(buf, np.uint64, words).sum(dtype=np.uint64)) if words else 0
    if n % 8:
        total += int(np.frombuffer(buf, np.uint8, n % 8, words * 8).sum())
    return total


def decode_floor_read(root: str, manifest: dict) -> dict:
    """Read the data bytes into one reused buffer with ``readinto`` and sum them."""
    import numpy as np

    buf = bytearray(READ_CHUNK)
    view = memoryview(buf)
    total = done = 0
    t0 = time.perf_counter()
    for path, size in segment_paths(root, manifest):
        with open(path, "rb", buffering=0) as f:
            left = size
            while left:
                n = f.readinto(view[:min(READ_CHUNK, left)])
                total += sum_words(np, buf, n)
                left -= n
                done += n
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": done, "messages": manifest["messages"], "sum": total & (2**64 - 1)}


def decode_floor_mmap(root: str, manifest: dict) -> dict:
    """Map each segment read-only and sum the data bytes 32 MiB at a time, giving pages back after each."""
    import numpy as np

    total = done = 0
    t0 = time.perf_counter()
    for path, size in segment_paths(root, manifest):
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        mm.madvise(mmap.MADV_SEQUENTIAL)
        for start in range(0, size, MAP_CHUNK):
            n = min(MAP_CHUNK, size - start)
            total += sum_words(np, memoryview(mm)[start:start + n], n)
            # Like the readers: the pages passed leave the resident set (they stay in the page cache).
            mm.madvise(mmap.MADV_DONTNEED, 0, start + n - (start + n) % mmap.PAGESIZE)
            done += n
        mm.close()
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": done, "messages": manifest["messages"], "sum": total & (2**64 - 1)}


def decode_kaitai(root: str, manifest: dict) -> dict:
    """The Kaitai parser over the records that start in the first ``slice_mib`` MiB of the first segment."""
    import zlib

    from rmqformats.compression import decompress
    from rmqformats.properties import parse_properties
    from rmqformats.reference import kaitai_records

    limit = manifest["params"]["slice_mib"] * MIB
    path = segment_paths(root, manifest)[0][0]
    tally = Tally()
    t0 = time.perf_counter()
    for pos, rec in kaitai_records(path):
        if pos >= limit or not rec.is_message:
            break
        m = rec.body
        body = m.body
        if m.sys_flag.is_compressed:
            kind = m.sys_flag.compression_type.name
            body = zlib.decompress(body) if kind in ("unspecified", "zlib") else decompress(body, kind)
        tally.add(pos, len(body), len(parse_properties(m.properties)))
        tally.end = pos + rec.len_record
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": tally.end, "messages": tally.messages, "checksum": tally.checksum(),
            "slice": True}


def decode_baseline(root: str, manifest: dict) -> dict:
    """The published script's approach (``baseline_reader``), reading every kind of record."""
    import baseline_reader

    tally = Tally()
    t0 = time.perf_counter()
    for offset, m in baseline_reader.read_commitlog(os.path.join(root, "commitlog"), any_record=True):
        tally.add(offset, len(m.body), len(m.properties))
        tally.end = offset + m.store_size
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": tally.end, "messages": tally.messages, "checksum": tally.checksum()}


def decode_api(root: str, manifest: dict) -> dict:
    """``scan()`` with every field of every message read, the derived ones included."""
    import rmqformats

    tally = Tally()
    t0 = time.perf_counter()
    scan = rmqformats.open_store(root).commitlog.scan()
    for m in scan:
        row = (m.commitlog_offset, m.store_size, m.body_crc, m.queue_id, m.flag, m.queue_offset, m.sys_flag,
               m.born_timestamp, m.born_host, m.store_timestamp, m.store_host, m.reconsume_times,
               m.prepared_transaction_offset, m.topic, m.properties, m.properties_raw, m.msg_id, m.body,
               m.tags, m.keys, m.uniq_key, m.segment)
        tally.add(row[0], len(row[17]), len(row[14]))
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": scan.end.offset, "messages": tally.messages,
            "checksum": tally.checksum(), "end": str(scan.end), "clean": scan.end.reason.is_clean}


class BatchTally:
    """The :class:`Tally` sums of RecordBatches, computed with pyarrow compute and numpy."""

    def __init__(self) -> None:
        self.sums = {"messages": 0, "offsets": 0, "body_bytes": 0, "properties": 0}
        self.batches = 0
        self.schema: str | None = None
        self.names: list[str] = []

    def add(self, rb) -> None:
        """Fold one RecordBatch into the sums (the columns it has)."""
        import numpy as np
        import pyarrow.compute as pc

        self.batches += 1
        if self.schema is None:
            self.schema = str(rb.schema)
            self.names = list(rb.schema.names)
        self.sums["messages"] += rb.num_rows
        self.sums["offsets"] += pc.sum(rb.column("commitLogOffset")).as_py() or 0
        names = rb.schema.names
        if "body" in names:
            self.sums["body_bytes"] += pc.sum(pc.binary_length(rb.column("body"))).as_py() or 0
        if "properties" in names:
            props = rb.column("properties")
            lengths = np.diff(props.offsets.to_numpy())
            if props.null_count:
                lengths = lengths[props.is_valid().to_numpy(zero_copy_only=False)]
            self.sums["properties"] += int(lengths.sum())


def decode_columnar(root: str, manifest: dict, columns: tuple[str, ...] | None = None) -> dict:
    """``batches()`` over the whole log; only the iteration is timed, the sums run between batches."""
    import rmqformats

    log = rmqformats.open_store(root).commitlog
    tally = BatchTally()
    seconds = 0.0
    first = None
    t0 = time.perf_counter()
    it = log.batches() if columns is None else log.batches(columns=list(columns))
    for rb in it:
        seconds += time.perf_counter() - t0
        if first is None:  # includes loading (or compiling) the decoder's compiled kernels
            first = seconds
        tally.add(rb)
        t0 = time.perf_counter()
    seconds += time.perf_counter() - t0
    sums = tally.sums if columns is None else {k: tally.sums[k] for k in ("messages", "offsets")}
    return {"seconds": seconds, "bytes": it.end.offset, "messages": tally.sums["messages"], "checksum": sums,
            "end": str(it.end), "clean": it.end.reason.is_clean, "batches": tally.batches, "schema": tally.schema,
            "columns": tally.names, "first_batch_seconds": first}


DECODE = {
    "floor-read": decode_floor_read, "floor-mmap": decode_floor_mmap, "kaitai": decode_kaitai,
    "baseline": decode_baseline, "api": decode_api, "columnar": decode_columnar,
    "columnar-fixed": lambda root, manifest: decode_columnar(root, manifest, FIXED_COLUMNS),
}


def preload(name: str) -> None:
    """Import what decoder ``name`` uses, so that imports are not timed."""
    if name.startswith("floor"):
        import numpy  # noqa: F401
    elif name == "kaitai":
        import rmqformats.reference  # noqa: F401
    elif name == "baseline":
        import baseline_reader  # noqa: F401
    elif name == "api":
        import rmqformats  # noqa: F401
    elif name.startswith("cq") or name == "profile" or name in COLUMNAR:
        import pyarrow  # noqa: F401
        import pyarrow.compute  # noqa: F401

        import rmqformats  # noqa: F401
        import rmqformats.consumequeue  # noqa: F401
        if name == "cq-arrow":
            import rmqformats.columnar.queues  # noqa: F401  (to_arrow() imports it on first use)
        if name in COLUMNAR or name == "profile":
            import rmqformats.columnar  # batches() imports it on first use
            # Loading the compiled kernels is a once-per-process cost, like an import: not timed.
            rmqformats.columnar.warm_up()


# -- consume queues ----------------------------------------------------------------------------------

def cq_unit_format() -> tuple[str, int]:
    """The struct format and size of a consume-queue unit, from the generated layout."""
    from rmqformats.generated.layouts import rocketmq_consumequeue as cq_layout

    (_names, fmt), = cq_layout.UNIT_RUNS
    return fmt, struct.calcsize(fmt)


def cq_units_floor(root: str, queues: list[dict]) -> dict:
    """Read each queue's unit bytes into one reused buffer and sum them with numpy."""
    import numpy as np

    _fmt, unit = cq_unit_format()
    file_bytes = max(os.path.getsize(p) for q in queues for p in cq_files(root, q))
    buf = bytearray(file_bytes)
    view = memoryview(buf)
    total = done = 0
    t0 = time.perf_counter()
    for q in queues:
        left = q["units"] * unit
        for path in cq_files(root, q):
            with open(path, "rb", buffering=0) as f:
                n = f.readinto(view[:min(left, file_bytes)])
            total += int(np.frombuffer(buf, np.uint32, n // 4).sum(dtype=np.uint64))
            left -= n
            done += n
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "units": done // unit, "bytes": done, "sum": total}


def cq_iter_unpack(root: str, queues: list[dict]) -> dict:
    """Read each file and walk its units with ``struct.iter_unpack`` up to the first unwritten one."""
    fmt, unit = cq_unit_format()
    units = offsets = sizes = 0
    t0 = time.perf_counter()
    for q in queues:
        for path in cq_files(root, q):
            with open(path, "rb") as f:
                data = f.read()
            for offset, size, _tags in struct.iter_unpack(fmt, data):
                if offset < 0 or size <= 0:  # the zero-filled tail: the broker's end of the queue
                    break
                units += 1
                offsets += offset
                sizes += size
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "units": units, "bytes": units * unit,
            "checksum": {"units": units, "offsets": offsets, "sizes": sizes}}


def cq_api(root: str, queues: list[dict], method: str = "unit_array") -> dict:
    """``store.consume_queue(t, q).<method>()`` per queue; only those calls are timed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    import rmqformats

    from rmqformats.generated.layouts import rocketmq_consumequeue as cq_layout

    _fmt, unit = cq_unit_format()
    store = rmqformats.open_store(root)
    seconds = 0.0
    units = offsets = sizes = 0
    for q in queues:
        t0 = time.perf_counter()
        result = getattr(store.consume_queue(q["topic"], q["queue_id"]), method)()
        seconds += time.perf_counter() - t0
        if isinstance(result, np.ndarray):
            ofs, size, _tags = cq_layout.UNIT_SEQ
            units += len(result)
            offsets += int(result[ofs].sum())
            sizes += int(result[size].sum())
        else:
            assert isinstance(result, (pa.Table, pa.RecordBatch)), type(result)
            units += result.num_rows
            names = {n.lower(): n for n in result.schema.names}
            offsets = None if offsets is None or "commitlogoffset" not in names else \
                offsets + (pc.sum(result.column(names["commitlogoffset"])).as_py() or 0)
            sizes = None if sizes is None or "size" not in names else \
                sizes + (pc.sum(result.column(names["size"])).as_py() or 0)
    sums = {"units": units, "offsets": offsets, "sizes": sizes}
    return {"seconds": seconds, "units": units, "bytes": units * unit,
            "checksum": {k: v for k, v in sums.items() if v is not None}}


def cq_files(root: str, queue: dict) -> list[str]:
    """The file paths of a generated queue, in order."""
    folder = os.path.join(root, "consumequeue", queue["topic"], str(queue["queue_id"]))
    return [os.path.join(folder, name) for name in sorted(os.listdir(folder))]


CQ_DECODE = {
    "cq-floor": cq_units_floor, "cq-iter_unpack": cq_iter_unpack, "cq-api": cq_api,
    "cq-arrow": lambda root, queues: cq_api(root, queues, "to_arrow"),
}


# -- where the columnar decoder's time goes -----------------------------------------------------------

def profile_columnar(root: str, manifest: dict) -> dict:
    """Per-column times and a cProfile of ``batches()`` over the first ``PROFILE_MIB`` MiB of the log."""
    import cProfile
    import io
    import pstats

    import rmqformats

    log = rmqformats.open_store(root).commitlog
    upto = min(PROFILE_MIB * MIB, manifest["data_end"])

    def decode_slice(columns):
        t0 = time.perf_counter()
        rows = sum(rb.num_rows for rb in log.batches(columns=columns, to_offset=upto))
        return time.perf_counter() - t0, rows

    per_column = {}
    from rmqformats.columnar import COLUMNS  # the decoder's columns, all of them (the worker imports it)
    for column in COLUMNS:
        per_column[column] = min(decode_slice([column])[0] for _ in range(2))
    seconds, rows = min(decode_slice(None) for _ in range(2))
    prof = cProfile.Profile()
    prof.enable()
    decode_slice(None)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(18)
    return {"bytes": upto, "rows": rows, "all_columns": seconds, "per_column": per_column,
            "profile": out.getvalue()}


# -- workers ------------------------------------------------------------------------------------------

def worker(name: str, root: str, manifest_path: str) -> None:
    """Run one decoder in this process and print one JSON line of measurements."""
    with open(manifest_path) as f:
        manifest = json.load(f)
    preload(name)
    start_rss = peak_rss_kib()
    if name in CQ_DECODE:
        result = CQ_DECODE[name](root, manifest["consume_queues"])
    elif name == "profile":
        result = profile_columnar(root, manifest)
    else:
        result = DECODE[name](root, manifest)
    result.update({"decoder": name, "peak_rss_kib": peak_rss_kib(), "start_rss_kib": start_rss})
    print(json.dumps(result))


def run_worker(name: str, root: str, manifest_path: str) -> dict:
    """Run a worker in a fresh interpreter; its JSON, or ``{"error": ...}`` when it failed."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--store", root,
                           "--manifest", manifest_path], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"decoder": name, "error": (proc.stderr or proc.stdout).strip()[-3000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def best_runs(names: tuple[str, ...], root: str, manifest_path: str, repeat: int, label: str) -> dict[str, dict]:
    """Each worker's fastest of ``repeat`` runs, interleaved, with the highest peak RSS seen."""
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for round_no in range(1, repeat + 1):
        for name in names:  # interleaved, so a slow patch of the machine hits every decoder
            r = run_worker(name, root, manifest_path)
            runs[name].append(r)
            shown = f"{r['seconds']:8.2f} s" if "seconds" in r else "FAILED"
            print(f"  {label} round {round_no}/{repeat} {name:<15} {shown}", flush=True)
    out = {}
    for name, rs in runs.items():
        ok = [r for r in rs if "error" not in r]
        if not ok:
            out[name] = rs[0]
            continue
        out[name] = dict(min(ok, key=lambda r: r["seconds"]), peak_rss_kib=max(r["peak_rss_kib"] for r in ok),
                         runs=[round(r["seconds"], 3) for r in ok])
    return out


def warm_page_cache(paths: list[tuple[str, int]]) -> None:
    """Read the first ``n`` bytes of each file once, so that no decoder pays for the disk."""
    for path, n in paths:
        with open(path, "rb") as f:
            while n > 0:
                chunk = f.read(min(64 * MIB, n))
                if not chunk:
                    break
                n -= len(chunk)


# -- checks -------------------------------------------------------------------------------------------

def log_problems(results: dict[str, dict], manifest: dict) -> list[str]:
    """What the decoders of one log disagree on with the generator (and the two floors with each other)."""
    problems = []
    for name, r in results.items():
        if "error" in r:
            problems.append(f"{name} failed: {r['error'].splitlines()[-1] if r['error'] else '?'}")
            continue
        if name.startswith("floor"):
            if r["bytes"] != manifest["data_end"]:
                problems.append(f"{name} read {r['bytes']:,} bytes, the data is {manifest['data_end']:,}")
            continue
        want = manifest["slice"] if r.get("slice") else manifest["checksum"]
        want = {k: want[k] for k in r["checksum"]}
        if r["checksum"] != want:
            problems.append(f"{name}: {r['checksum']} but the generator wrote {want}")
        if not r.get("slice") and r["bytes"] != manifest["data_end"]:
            problems.append(f"{name} says the data ends at {r['bytes']:,}, it ends at {manifest['data_end']:,}")
        if r.get("clean") is False:
            problems.append(f"{name} ended on corrupt data: {r.get('end')}")
    from rmqformats.columnar import COLUMNS  # every column the decoder gives by default
    for name, want in (("columnar", COLUMNS), ("columnar-fixed", FIXED_COLUMNS)):
        got = results.get(name, {}).get("columns")
        if got is not None and tuple(got) != want:
            problems.append(f"{name} gave the columns {got}, asked for {list(want)}")
    ends = {name: results[name]["end"] for name in ("api", "columnar", "columnar-fixed")
            if "end" in results.get(name, {})}
    if len(set(ends.values())) > 1:
        problems.append(f"the decoders end the data at different places: {ends}")
    floors = [r["sum"] for n, r in results.items() if n.startswith("floor") and "sum" in r]
    if len(set(floors)) > 1:
        problems.append(f"the two floors summed different bytes: {floors}")
    return problems


def cq_problems(results: dict[str, dict], queues: list[dict]) -> list[str]:
    """What the consume-queue readers disagree on with the generator."""
    want = {"units": sum(q["units"] for q in queues), "offsets": sum(q["offset_sum"] for q in queues),
            "sizes": sum(q["size_sum"] for q in queues)}
    problems = []
    for name, r in results.items():
        if "error" in r:
            problems.append(f"{name} failed: {r['error'].splitlines()[-1] if r['error'] else '?'}")
        elif "checksum" in r and r["checksum"] != {k: want[k] for k in r["checksum"]}:
            problems.append(f"{name}: {r['checksum']} but the generator wrote {want}")
        elif r.get("units") != want["units"]:
            problems.append(f"{name} read {r.get('units')} units, the generator wrote {want['units']}")
    return problems


# -- reporting ----------------------------------------------------------------------------------------

def rate(r: dict) -> float:
    """Bytes per second of a result."""
    return r["bytes"] / r["seconds"]


def floor_of(results: dict[str, dict]) -> dict:
    """The faster of the two floors."""
    return max((results[n] for n in ("floor-read", "floor-mmap") if "error" not in results[n]), key=rate)


def log_table(log: str, results: dict[str, dict], manifest: dict) -> str:
    """The decoders of one log as a Markdown table."""
    floor = floor_of(results)
    columnar = results.get("columnar", {})
    has_columnar = "seconds" in columnar
    lines = [f"| {log} | messages | seconds | msgs/s | MB/s | peak RSS MiB | RSS before MiB | × columnar time "
             f"| × floor time |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"| {name} | failed | | | | | | | |")
            continue
        seconds = r["seconds"]
        label = name
        if r.get("slice"):  # scaled to the whole log by bytes
            label = f"{name} (first {manifest['params']['slice_mib']} MiB, seconds scaled)"
            seconds = manifest["data_end"] / rate(r)
        if name.startswith("floor"):
            label += " (floor)" if r is floor else ""
        vs_columnar = f"{rate(columnar) / rate(r):.2f}" if has_columnar else "n/a"
        lines.append(f"| {label} | {r['messages']:,} | {seconds:.2f} | {r['messages'] / r['seconds']:,.0f} "
                     f"| {rate(r) / MB:,.0f} | {r['peak_rss_kib'] / 1024:.1f} | {r['start_rss_kib'] / 1024:.1f} "
                     f"| {vs_columnar} | {rate(floor) / rate(r):.2f} |")
    for name in COLUMNAR:
        r = results.get(name, {})
        if r.get("first_batch_seconds") is not None:
            lines.append(f"\n{name}: the first batch took {r['first_batch_seconds']:.2f} s of the {r['seconds']:.2f} s "
                         f"(it loads the compiled kernels); runs {r['runs']}")
    return "\n".join(lines)


def cq_table(results: dict[str, dict]) -> str:
    """The consume-queue readers as a Markdown table."""
    floor = results["cq-floor"]
    lines = ["| reader | units | seconds | units/s | MB/s | peak RSS MiB | × floor time |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"| {name} | failed | | | | | |")
            continue
        lines.append(f"| {name} | {r['units']:,} | {r['seconds']:.3f} | {r['units'] / r['seconds']:,.0f} "
                     f"| {rate(r) / MB:,.0f} | {r['peak_rss_kib'] / 1024:.1f} | {rate(floor) / rate(r):.2f} |")
    return "\n".join(lines)


def goal(text: str, value: float, limit: float, higher_is_better: bool, unit: str = "×") -> dict:
    """One goal: met or missed, and by how much."""
    met = value >= limit if higher_is_better else value <= limit
    factor = limit / value if higher_is_better else value / limit
    detail = f"{value:,.2f}{unit} (goal {'≥' if higher_is_better else '≤'} {limit:,}{unit})"
    if not met:
        detail += f": missed, needs {factor:.2f}× better"
    return {"goal": text, "met": met, "detail": detail}


def goals(logs: dict[str, dict], cq: dict[str, dict] | None) -> list[dict]:
    """The goals of the run, evaluated on its results."""
    out = []
    mixed, small = logs.get("mixed"), logs.get("small")
    if mixed and "seconds" in mixed.get("columnar", {}):
        c = mixed["columnar"]
        out.append(goal("mixed log, all columns: time vs the floor", rate(floor_of(mixed)) / rate(c),
                        GOAL_MIXED_FLOOR, False))
        out.append(goal("mixed log: speed vs the baseline", rate(c) / rate(mixed["baseline"]),
                        GOAL_MIXED_BASELINE, True))
    if small and "seconds" in small.get("columnar", {}):
        c = small["columnar"]
        out.append(goal("small log: messages/s, all columns", c["messages"] / c["seconds"],
                        GOAL_SMALL_RATE, True, " msgs/s"))
        out.append(goal("small log: speed vs the baseline", rate(c) / rate(small["baseline"]),
                        GOAL_SMALL_BASELINE, True))
    rss = [(log, name, r["peak_rss_kib"] * 1024 / MB) for log, rs in logs.items() for name, r in rs.items()
           if name in COLUMNAR and "peak_rss_kib" in r]
    if rss:
        log, name, worst = max(rss, key=lambda t: t[2])
        out.append(goal(f"peak RSS of the columnar decoder, 1 GiB segments (worst: {log} {name})", worst,
                        GOAL_RSS_MB, False, " MB"))
    if cq and "seconds" in cq.get("cq-api", {}):
        out.append(goal("consume queues, unit_array(): time vs the floor",
                        rate(cq["cq-floor"]) / rate(cq["cq-api"]), GOAL_CQ_FLOOR, False))
    return out


def goals_table(items: list[dict]) -> str:
    """The goals as a Markdown table."""
    lines = ["| goal | result | |", "|---|---|---|"]
    lines += [f"| {g['goal']} | {'met' if g['met'] else '**missed**'} | {g['detail']} |" for g in items]
    return "\n".join(lines)


def profile_report(log: str, p: dict) -> str:
    """Per-column times and the top of the profile, as text."""
    lines = [f"columnar decoder on the first {p['bytes'] / MIB:.0f} MiB of the {log} log ({p['rows']:,} rows): "
             f"all columns {p['all_columns']:.3f} s ({p['bytes'] / MB / p['all_columns']:,.0f} MB/s)",
             "each column alone (batches(columns=[c]), best of 2):"]
    for column, seconds in sorted(p["per_column"].items(), key=lambda kv: -kv[1]):
        lines.append(f"  {column:<28} {seconds:7.3f} s  {p['rows'] / seconds:>12,.0f} rows/s")
    lines.append("cProfile, all columns, sorted by own time:")
    lines.append(p["profile"])
    return "\n".join(lines)


def source_state() -> str:
    """The commit measured and the files of the package that differ from it."""
    def git(*args: str) -> str:
        proc = subprocess.run(["git", "-C", os.path.dirname(HERE), *args], capture_output=True, text=True)
        return proc.stdout.rstrip()

    changed = git("status", "--short", "--", "rmqformats", "generated", "formats").splitlines()
    return f"commit {git('rev-parse', '--short', 'HEAD')}" + \
        (f", uncommitted changes in {', '.join(line[3:] for line in changed)}" if changed else ", no uncommitted changes")


def machine() -> str:
    """One line about the machine and the Python used."""
    import numpy
    import pyarrow

    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    return (f"{os.cpu_count()} cores ({model}), {ram:.0f} GB RAM, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, numpy {numpy.__version__}, pyarrow {pyarrow.__version__}, "
            f"load average {os.getloadavg()[0]:.2f}")


# -- the parent ---------------------------------------------------------------------------------------

def describe_log(log: str, manifest: dict) -> str:
    """One paragraph about a generated log."""
    p = manifest["params"]
    return (f"{log}: {manifest['messages']:,} messages, {manifest['data_end']:,} bytes of data in "
            f"{len(manifest['segments'])} segments of {p['segment_mib']} MiB ({len(manifest['blanks'])} BLANK), "
            f"bodies {p['body_min']}-{p['body_max']} B (mean record {manifest['mean_record']} B, "
            f"{manifest['mean_properties']} properties), {manifest['compressed']:,} compressed, "
            f"{manifest['born_v6']:,} IPv6 born hosts, {manifest['store_v6']:,} IPv6 store hosts, "
            f"{manifest['v2']:,} V2; generated in {manifest['generation_seconds']} s")


def bench_log(log: str, root: str, manifest: dict, manifest_path: str, repeat: int,
              decoders: tuple[str, ...]) -> tuple[dict, list[str]]:
    """Measure every decoder on one log; returns the results and the disagreements."""
    warm_page_cache(segment_paths(root, manifest))
    results = best_runs(decoders, root, manifest_path, repeat, log)
    return results, log_problems(results, manifest)


def bench_queues(root: str, manifest: dict, manifest_path: str, repeat: int, readers: tuple[str, ...]):
    """Measure the consume-queue readers on a store's queues."""
    paths = [(p, os.path.getsize(p)) for q in manifest["consume_queues"] for p in cq_files(root, q)]
    warm_page_cache(paths)
    results = best_runs(readers, root, manifest_path, repeat, "queues")
    return results, cq_problems(results, manifest["consume_queues"])


def bench_index(args) -> dict | None:
    """Index lookups through ``bench_index.py``'s readers on its cached index file."""
    import bench_index

    slots = args.index_slots
    path, manifest = bench_index.ensure_data(args.data_dir, slots, slots * 4, bench_index.DEFAULT_SEED, False)
    bench_index.warm_page_cache(path)
    results = bench_index.measure(path, args.index_keys, bench_index.DEFAULT_SEED, args.repeat)
    bench_index.print_results(results, manifest, args.index_keys, args.repeat)
    return {"manifest": manifest, "results": results}


def main(argv: list[str] | None = None) -> int:
    """Run a worker (``--worker``) or the whole benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=1100, help="MiB of message data per log (default 1100)")
    parser.add_argument("--segment-mib", type=int, default=1024, help="segment size in MiB (default 1024)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per decoder; the best is reported")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--logs", default=",".join(LOGS), help="logs to measure (default mixed,small)")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="where generated data is kept")
    parser.add_argument("--regenerate", action="store_true", help="generate the logs even if they exist")
    parser.add_argument("--index-slots", type=int, default=5_000_000, help="hash slots of the index file")
    parser.add_argument("--index-keys", type=int, default=20_000, help="keys per index key set")
    parser.add_argument("--skip-index", action="store_true", help="leave out the index lookups")
    parser.add_argument("--profile", action="store_true",
                        help="profile the columnar decoder even if it meets the goals")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--manifest", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.store, args.manifest)
        return 0
    return run(args)


def run(args) -> int:
    """The whole benchmark: data, the commit-log decoders, consume queues, index lookups, goals."""
    import rmqformats
    import storegen

    started = time.perf_counter()
    print(f"machine: {machine()}", flush=True)
    print(f"source: {source_state()}", flush=True)
    columnar_ok = hasattr(rmqformats.CommitLog, "batches")
    decoders = DECODERS if columnar_ok else tuple(d for d in DECODERS if d not in COLUMNAR)
    if not columnar_ok:
        print("CommitLog.batches does not exist: the columnar decoder is left out", flush=True)
    stores = {}
    for log in args.logs.split(","):
        t0 = time.perf_counter()
        root, manifest = storegen.ensure_store(args.data_dir, log, args.mib, args.segment_mib, args.seed,
                                               args.regenerate)
        stores[log] = (root, manifest, time.perf_counter() - t0)
    for log, (_, manifest, _) in stores.items():
        print(describe_log(log, manifest))
    logs, problems, tables = {}, [], []
    for log, (root, manifest, _) in stores.items():
        manifest_path = os.path.join(os.path.dirname(root), "manifest.json")
        logs[log], found = bench_log(log, root, manifest, manifest_path, args.repeat, decoders)
        problems += [f"{log}: {p}" for p in found]
        tables.append(log_table(log, logs[log], manifest))
        print("\n" + tables[-1] + "\n", flush=True)
    cq = None
    queue_log = "small" if "small" in stores else next(iter(stores))
    root, manifest, _ = stores[queue_log]
    readers = tuple(r for r in CQ_READERS if r != "cq-arrow" or hasattr(rmqformats.ConsumeQueue, "to_arrow"))
    cq, found = bench_queues(root, manifest, os.path.join(os.path.dirname(root), "manifest.json"),
                             args.repeat, readers)
    problems += [f"consume queues: {p}" for p in found]
    queues = manifest["consume_queues"]
    print(f"\nconsume queues of the {queue_log} store: {len(queues)} queues, "
          f"{sum(q['units'] for q in queues):,} units in {sum(q['files'] for q in queues)} files "
          f"of {manifest['params']['cq_file_units']:,} units (largest queue {max(q['units'] for q in queues):,} "
          f"units)\n")
    print(cq_table(cq) + "\n", flush=True)
    index = None if args.skip_index else bench_index(args)
    results = goals(logs, cq)
    print("\n" + goals_table(results))
    profiles = {}
    if columnar_ok and (args.profile or not all(g["met"] for g in results)):
        for log, (root, manifest, _) in stores.items():
            p = run_worker("profile", root, os.path.join(os.path.dirname(root), "manifest.json"))
            profiles[log] = p
            print("\n" + (profile_report(log, p) if "error" not in p else f"profile of {log} failed:\n{p['error']}"))
    for log, rs in logs.items():
        if "columnar" in rs and "schema" in rs["columnar"]:
            print(f"\ncolumnar schema ({log}):\n{rs['columnar']['schema']}")
    print(f"\nmachine at the end: {machine()}; the run took {time.perf_counter() - started:.0f} s")
    print(json.dumps({"logs": logs, "manifests": {k: v[1] for k, v in stores.items()}, "queues": cq,
                      "index": index, "goals": results, "profiles": profiles}))
    if problems:
        print("\nDECODERS DISAGREE:\n  " + "\n  ".join(problems))
        return 1
    if not columnar_ok:
        print("\nthe columnar decoder was not measured (CommitLog.batches is missing)")
        return 2
    print("all decoders agree with the generated data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
