"""Reading the other commit-log layouts: DLedger entries and several folders, against plain segments.

What is measured
    The first ``--mb`` MB of message records of a generated store (a
    ``storegen`` store under ``benchmarks/data/``, as ``make bench`` makes,
    or ``--source``) are laid out three ways from the same record bytes:
    plain 64 MiB segments in one folder, the same segments spread over two
    folders, and DLedger data files (``rmqformats.synth.dledger.write_dledger``,
    64 MiB files). Each is read completely in a fresh subprocess by the
    object API's scan (``commitlog.scan()``) and by ``to_arrow()`` (five
    columns), after warming the page cache and numba's kernels; the floor is
    reading the files' bytes. Best of ``--repeat`` runs. Printed per run:
    messages/s, MB/s (10^6 bytes of files covered), peak RSS of the worker
    and the speed ratio to the plain layout. Every run must count the same
    messages. With ``--jobs 2,4``, ``to_arrow()`` runs again with that many
    worker processes on the plain and DLedger layouts (``arrow@N``: the pool
    started before the clock, any store size walked by the workers), with
    its speedup over one job.

How to run
    .venv/bin/python benchmarks/bench_layouts.py             # 200 MB
    .venv/bin/python benchmarks/bench_layouts.py --mb 50 --source /path/to/store/commitlog
    .venv/bin/python benchmarks/bench_layouts.py --mb 512 --jobs 2
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from procstats import peak_rss_kib  # noqa: E402

MB = 1_000_000
SEGMENT = 64 << 20


def _source_log(given: str | None) -> str:
    if given:
        return given
    for shape in ("mixed-1100mib-seg1024-*", "mixed-24mib-seg8-*"):
        found = sorted(glob.glob(os.path.join(HERE, "data", shape, "store", "commitlog")))
        if found:
            return found[0]
    raise SystemExit("no generated store under benchmarks/data: run `make bench` or give --source")


def build(out: str, mb: int, source: str) -> dict:
    import rmqformats
    from rmqformats.synth.commitlog import encode_blank
    from rmqformats.synth.dledger import write_dledger

    manifest = os.path.join(out, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            info = json.load(f)
        if info.get("mb") == mb and info.get("source") == source:
            return info
    shutil.rmtree(out, ignore_errors=True)
    src = rmqformats.open_store(source).commitlog
    plain = os.path.join(out, "plain", "commitlog")
    multi = [os.path.join(out, "multi", f"disk{i}", "commitlog") for i in range(2)]
    for d in (plain, *multi):
        os.makedirs(d)
    kept: list[bytes] = []
    taken = 0
    for m in src.scan():
        if taken >= mb * MB:
            break
        with open(m.segment, "rb") as f:
            f.seek(m.file_offset)
            kept.append(f.read(m.store_size))
        taken += m.store_size
    start, pos, nseg = 0, 0, 0
    buf = bytearray(SEGMENT)

    def flush() -> None:
        name = f"{start:020d}"
        with open(os.path.join(plain, name), "wb") as f:
            f.write(buf)
        shutil.copyfile(os.path.join(plain, name), os.path.join(multi[nseg % 2], name))

    for data in kept:
        if pos + len(data) + 8 > SEGMENT:
            buf[pos:pos + 8] = encode_blank(SEGMENT - pos)
            flush()
            start, pos, nseg, buf = start + SEGMENT, 0, nseg + 1, bytearray(SEGMENT)
        buf[pos:pos + len(data)] = data  # PHYSICALOFFSET left as in the source: the scan does not read it
        pos += len(data)
    flush()
    t = time.perf_counter()
    write_dledger(os.path.join(out, "dledger"), iter(kept), SEGMENT, keep_records=False, index_file_units=1 << 20)
    info = {"mb": mb, "source": source, "messages": len(kept),
            "dledgerBuildSeconds": round(time.perf_counter() - t, 1)}
    with open(manifest, "w") as f:
        json.dump(info, f)
    return info


def worker(kind: str, out: str) -> None:
    import rmqformats
    paths = {"plain": os.path.join(out, "plain", "commitlog"),
             "multi": ";".join(os.path.join(out, "multi", f"disk{i}", "commitlog") for i in range(2)),
             "dledger": os.path.join(out, "dledger", "dledger-n0", "data")}
    layout, how = kind.split("/")
    how, _, jobs = how.partition("@")
    jobs = int(jobs or 1)
    log = rmqformats.open_store(paths[layout]).commitlog
    size = sum(s.size for s in log.segments)
    if how == "arrow":
        from rmqformats.walk.kernels import warm_up
        warm_up()  # numba compiles its kernels once per process; not part of the read
    if jobs > 1:
        from rmqformats.walk.parallel import start_workers
        os.environ["RMQFORMATS_JOBS_MIN_BYTES"] = "0"  # the workers walk any size of store
        start_workers(jobs)
    for s in log.segments:  # a warm page cache for every run
        with open(s.path, "rb") as f:
            while f.read(8 << 20):
                pass
    t = time.perf_counter()
    if how == "floor":
        n = 0
        for s in log.segments:
            with open(s.path, "rb") as f:
                while f.read(8 << 20):
                    pass
    elif how == "scan":
        n = sum(1 for _ in log.scan())
    else:
        n = log.to_arrow(["commitLogOffset", "topic", "tags", "keys", "body"], jobs=jobs).num_rows
    dt = time.perf_counter() - t
    print(json.dumps({"kind": kind, "messages": n, "seconds": dt, "bytes": size, "peakRssKiB": peak_rss_kib()}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mb", type=int, default=200)
    p.add_argument("--source", help="a plain commit-log folder to take the records from")
    p.add_argument("--repeat", type=int, default=3, help="best of N runs of each (default 3)")
    p.add_argument("--jobs", default="1", help="worker processes of the arrow runs, comma-separated (default 1)")
    p.add_argument("--worker")
    p.add_argument("--out", default=os.path.join(HERE, "data", "layouts"))
    a = p.parse_args()
    if a.worker:
        worker(a.worker, a.out)
        return
    info = build(a.out, a.mb, _source_log(a.source))
    print(f"{info['messages']} messages, {a.mb} MB of records; DLedger copy built in {info['dledgerBuildSeconds']} s")
    rows = {}
    many = [int(j) for j in a.jobs.split(",") if int(j) > 1]
    for kind in ("plain/floor", "plain/scan", "multi/scan", "dledger/scan", "plain/arrow", "multi/arrow",
                 "dledger/arrow", *[f"{layout}/arrow@{j}" for j in many for layout in ("plain", "dledger")]):
        runs = []
        for _ in range(max(1, a.repeat)):
            res = subprocess.run([sys.executable, __file__, "--worker", kind, "--out", a.out],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
        rows[kind] = r = min(runs, key=lambda x: x["seconds"])
        if kind != "plain/floor" and r["messages"] != info["messages"]:
            raise SystemExit(f"{kind}: {r['messages']} messages, expected {info['messages']}")
    print(f"{'run':<17}{'msgs/s':>12}{'MB/s':>10}{'peak RSS MiB':>14}{'vs plain':>10}{'vs 1 job':>10}")
    for kind, r in rows.items():
        base = rows.get(kind.replace("multi", "plain").replace("dledger", "plain"))
        ratio = base["seconds"] / r["seconds"] if "floor" not in kind else float("nan")
        one = rows[kind.partition("@")[0]]["seconds"] / r["seconds"] if "@" in kind else float("nan")
        rate = r["messages"] / r["seconds"] if r["messages"] else float("nan")
        print(f"{kind:<17}{rate:>12,.0f}{r['bytes'] / MB / r['seconds']:>10,.1f}{r['peakRssKiB'] / 1024:>14,.1f}"
              f"{ratio:>10.2f}{one:>10.2f}")


if __name__ == "__main__":
    main()
