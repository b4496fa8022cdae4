"""The Spark data source against the in-process columnar decoder, with one and two cores.

What is measured
    A generated commit log of about 1 GiB (``mixed`` by default: bodies of
    100 B-4 KiB in 1 GiB segments; the logs ``bench_columnar.py`` generates,
    reused from ``benchmarks/data/`` when they are there), on a warm page cache:

    ``columnar``        ``for rb in open_store(p).commitlog.batches(): ...``, every
                        column, in a fresh process (the in-process decoder).
    ``spark local[N]``  ``spark.read.format("rocketmq_commitlog").option("splitSize", S)
                        .load(p).write.format("noop").save()``: every column of every
                        message decoded on the executors and handed to Spark, for
                        N = 1 and 2, in a fresh process each; the first read (of the
                        bundled sample) starts the Python workers and is not timed.
                        ``default`` walks the record chain on the driver first (the
                        data end of the API's scan; the segments are touched before
                        each run so that the walk is timed, not its cache);
                        ``salvage`` does not.
    ``chain walk``      the driver's walk alone (:func:`rmqformats.spark.dataend.check_chain`).
    ``Spark's floor``   a Python data source that hands Spark the same number of
                        rows, each a real converted message, without decoding
                        anything: what Spark itself costs for these rows.
    ``narrow``          ``topic``, ``queueId``, ``storeTimestamp`` only (the schema given
                        to the reader), counted by topic and queue.

    Every process is pinned to its cores (``sched_setaffinity``, inherited by
    the JVM and the Python workers): one for the in-process readers and
    local[1], two for local[2], so "one core" is one core even though a Spark
    task is a JVM thread and a Python worker.

    Each timed read is followed by a count of the messages (only
    ``commitLogOffset`` decoded), which must be the generator's. The speed-up
    is local[1]'s time over local[2]'s; "per core" is local[1]'s throughput
    over the in-process decoder's.

How to run
    .venv/bin/python benchmarks/bench_spark.py                      # mixed log, splitSize 128m
    .venv/bin/python benchmarks/bench_spark.py --log small --split-size 256m --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

DEFAULT_DATA_DIR = os.path.join(HERE, "data")
DEFAULT_SEED = 20261122
MB = 1_000_000
MASTERS = ("local[1]", "local[2]")
MODES = ("default", "salvage")
#: The columns of the narrow read (an aggregation that looks at no body).
NARROW = {"topic": "string", "queueId": "int", "storeTimestamp": "timestamp"}
GOAL_SPEEDUP = 1.7     # local[2] over local[1]
GOAL_PER_CORE = 0.7    # local[1] throughput over the in-process decoder's ("within 30 %")


# -- workers (each in a fresh process, pinned to its cores) ---------------------------------------

def pin(cores: int) -> None:
    """Keep this process and everything it starts (the JVM, the Python workers) on ``cores`` CPUs."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])


def work_columnar(root: str, columns: list[str] | None, repeat: int) -> dict:
    import rmqformats

    log = rmqformats.open_store(root).commitlog
    best = None
    for _ in range(repeat):
        rows = 0
        t0 = time.perf_counter()
        for batch in log.batches(columns):
            rows += batch.num_rows
        seconds = time.perf_counter() - t0
        best = seconds if best is None else min(best, seconds)
    return {"seconds": best, "messages": rows}


def work_adapter(root: str, columns: list[str] | None, split_size: str, batch_size: int, repeat: int) -> dict:
    """The data source's planning and every split's read(), in this process: the adapter without Spark."""
    from pyspark.sql.types import StructType

    from rmqformats.spark import CommitLogDataSource

    ds = CommitLogDataSource(options={"path": root, "splitSize": split_size, "batchSize": str(batch_size)})
    schema = ds.schema()
    if columns:
        schema = StructType([f for f in schema.fields if f.name in columns])
    best = None
    for _ in range(repeat):
        rows = 0
        t0 = time.perf_counter()
        reader = ds.reader(schema)
        for part in reader.partitions():
            for batch in reader.read(part):
                rows += batch.num_rows
        seconds = time.perf_counter() - t0
        best = seconds if best is None else min(best, seconds)
    return {"seconds": best, "messages": rows}


def work_chain(root: str, split_size: int, repeat: int) -> dict:
    import rmqformats
    from rmqformats.spark.dataend import CHAIN_THREADS, _walk

    segments = rmqformats.open_store(root).commitlog.segments
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        chain = _walk(segments, split_size, False, CHAIN_THREADS)  # not the cached entry point
        seconds = time.perf_counter() - t0
        best = seconds if best is None else min(best, seconds)
    return {"seconds": best, "threads": CHAIN_THREADS, "end": str(chain.end)}


def floor_source(root: str, partitions: int, messages: int, batch_size: int):
    """A Python data source that hands Spark the log's first converted batch again and again, without decoding.

    As many rows as the log has, in as many partitions as the adapter's
    read, each the shape of a real message: what any Python data source
    costs Spark for these rows (the floor of the adapter on Spark).
    """
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class FloorReader(DataSourceReader):
        def __init__(self, schema):
            self.schema = schema

        def partitions(self):
            return [InputPartition(i) for i in range(partitions)]

        def read(self, partition):
            from rmqformats.spark import CommitLogDataSource
            from rmqformats.spark.schema import Converter

            ds = CommitLogDataSource(options={"path": root, "salvage": "true", "batchSize": str(batch_size)})
            converter = Converter(self.schema, ds.full_schema(), None)
            first = next(iter(rmqformats_open(root).commitlog.batches(batch_size=batch_size)))
            batch = converter.convert(first, root)
            rows = messages // partitions + (partition.value < messages % partitions)
            while rows > 0:
                yield batch.slice(0, min(rows, batch.num_rows))
                rows -= batch.num_rows

    class FloorSource(DataSource):
        @classmethod
        def name(cls):
            return "bench_floor"

        def schema(self):
            from rmqformats.spark import message_schema
            return message_schema()

        def reader(self, schema):
            return FloorReader(schema)

    return FloorSource


def rmqformats_open(root: str):
    import rmqformats
    return rmqformats.open_store(root)


def work_spark(root: str, master: str, split_size: str, batch_size: int, repeat: int) -> dict:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import rmqformats
    from rmqformats.spark import register

    spark = (SparkSession.builder.master(master).appName("bench-spark").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    # Start the Python workers and load the compiled kernels in each before the clock runs.
    warm = spark.read.format("rocketmq_commitlog").option("splitSize", "64k").load(rmqformats.sample_store_path())
    warm.write.format("noop").mode("overwrite").save()

    def timed_once(action) -> list[float]:
        t0 = time.perf_counter()
        action()
        return [time.perf_counter() - t0]

    def timed(action) -> list[float]:
        return [t for _ in range(repeat) for t in timed_once(action)]

    def reader(salvage: bool):
        return (spark.read.format("rocketmq_commitlog").option("splitSize", split_size)
                .option("batchSize", batch_size).option("salvage", salvage))

    segments = [os.path.join(root, "commitlog", n) for n in os.listdir(os.path.join(root, "commitlog"))]

    def touch() -> None:
        # A new modification time: the driver's walk is done again, not taken from its cache.
        for path in segments:
            os.utime(path, None)

    frames = {mode: reader(mode == "salvage").load(root) for mode in MODES}
    frames["salvage"].write.format("noop").mode("overwrite").save()  # the JVM's code paths warm, untimed
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(repeat):  # the modes take turns, so that neither gets a warmer JVM
        for mode in MODES:
            touch()
            times[mode] += timed_once(lambda: frames[mode].write.format("noop").mode("overwrite").save())
    out = {}
    for mode in MODES:
        count = reader(mode == "salvage").schema("commitLogOffset long").load(root).count()
        out[mode] = {"seconds": min(times[mode]), "runs": times[mode], "messages": count,
                     "partitions": frames[mode].rdd.getNumPartitions()}
    floor = floor_source(root, out["default"]["partitions"], out["default"]["messages"], batch_size)
    spark.dataSource.register(floor)
    df = spark.read.format("bench_floor").load()
    times = timed(lambda: df.write.format("noop").mode("overwrite").save())
    out["floor"] = {"seconds": min(times), "runs": times, "messages": out["default"]["messages"],
                    "partitions": df.rdd.getNumPartitions()}
    narrow = reader(False).schema(", ".join(f"{c} {t}" for c, t in NARROW.items())).load(root)
    counted = []
    times = timed(lambda: counted.append(narrow.groupBy("topic", "queueId").count().agg({"count": "sum"}).first()[0]))
    out["narrow"] = {"seconds": min(times), "runs": times, "messages": counted[-1],
                     "partitions": narrow.rdd.getNumPartitions()}
    spark.stop()
    return out


def worker(args) -> None:
    columns = list(NARROW) if args.narrow else None
    if args.worker == "columnar":
        pin(1)
        result = work_columnar(args.store, columns, args.repeat)
    elif args.worker == "adapter":
        pin(1)
        result = work_adapter(args.store, columns, args.split_size, args.batch_size, args.repeat)
    elif args.worker == "chain":
        result = work_chain(args.store, args.split_bytes, args.repeat)
    else:
        pin(int(args.master.strip("local[]")))
        result = work_spark(args.store, args.master, args.split_size, args.batch_size, args.repeat)
    print("RESULT " + json.dumps(result), flush=True)


def run_worker(*extra: str) -> dict:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), *extra], capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"worker {extra} failed:\n{proc.stderr[-4000:]}")
    return json.loads(lines[-1][len("RESULT "):])


# -- the parent -------------------------------------------------------------------------------------

def parse_size(text: str) -> int:
    from rmqformats.spark.options import parse_size as parse
    return parse("splitSize", text)


def warm_page_cache(root: str) -> None:
    folder = os.path.join(root, "commitlog")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb", buffering=0) as f:
            while f.read(32 << 20):
                pass


def machine() -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    import pyspark
    return (f"{os.cpu_count()} cores ({model}), {platform.system()} {platform.release()}, Python "
            f"{platform.python_version()}, pyspark {pyspark.__version__}, load average {os.getloadavg()[0]:.2f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log", default="mixed", help="generated log: mixed or small (default mixed)")
    p.add_argument("--mib", type=int, default=1100)
    p.add_argument("--segment-mib", type=int, default=1024)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--split-size", default="128m", help="splitSize of the Spark reads (default 128m)")
    p.add_argument("--batch-size", type=int, default=8192, help="batchSize of the Spark reads")
    p.add_argument("--repeat", type=int, default=2, help="timed runs of each; the best is reported")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--store", help=argparse.SUPPRESS)
    p.add_argument("--master", help=argparse.SUPPRESS)
    p.add_argument("--split-bytes", type=int, help=argparse.SUPPRESS)
    p.add_argument("--narrow", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0

    import storegen

    started = time.perf_counter()
    print(f"machine: {machine()}", flush=True)
    root, manifest = storegen.ensure_store(args.data_dir, args.log, args.mib, args.segment_mib, args.seed)
    data = manifest["data_end"]
    messages = manifest["messages"]
    print(f"{args.log} log: {messages:,} messages, {data:,} bytes of data in {len(manifest['segments'])} segments; "
          f"splitSize {args.split_size}, batchSize {args.batch_size}, best of {args.repeat}", flush=True)
    warm_page_cache(root)
    common = ["--store", root, "--repeat", str(args.repeat)]
    sized = ["--split-size", args.split_size, "--batch-size", str(args.batch_size)]
    columnar = {"all": run_worker("--worker", "columnar", *common),
                "narrow": run_worker("--worker", "columnar", "--narrow", *common)}
    adapter = {"all": run_worker("--worker", "adapter", *sized, *common),
               "narrow": run_worker("--worker", "adapter", "--narrow", *sized, *common)}
    chain = run_worker("--worker", "chain", "--split-bytes", str(parse_size(args.split_size)), *common)
    spark = {m: run_worker("--worker", "spark", "--master", m, *sized, *common) for m in MASTERS}

    problems = [f"{name} read {r['messages']:,} messages, the generator wrote {messages:,}"
                for name, r in [(f"columnar {k}", v) for k, v in columnar.items()]
                + [(f"adapter {k}", v) for k, v in adapter.items()]
                + [(f"spark {m} {k}", v) for m in MASTERS for k, v in spark[m].items()]
                if r["messages"] != messages]

    def row(name: str, r: dict, note: str = "") -> str:
        s = r["seconds"]
        return f"| {name} | {s:.2f} | {data / MB / s:,.0f} | {messages / s:,.0f} | {note} |"

    names = ", ".join(NARROW)
    lines = ["| read | seconds | MB/s | messages/s | |", "|---|---:|---:|---:|---|",
             row("columnar decoder, in process, all columns", columnar["all"], "1 core"),
             row("adapter's read() of every split, in process, all columns", adapter["all"], "1 core, no Spark"),
             row(f"driver's chain walk alone ({chain['threads']} threads)", chain, "part of default")]
    for m in MASTERS:
        for mode in MODES:
            r = spark[m][mode]
            lines.append(row(f"spark {m}, {mode}, all columns (noop write)", r,
                             f"{m.strip('local[]')} core(s), {r['partitions']} partitions"))
    for m in MASTERS:
        lines.append(row(f"spark {m}, the same rows from a source that does not decode (Spark's floor)",
                         spark[m]["floor"], f"{m.strip('local[]')} core(s)"))
    lines += [row(f"columnar decoder, in process, {names}", columnar["narrow"], "1 core"),
              row(f"adapter's read(), in process, {names}", adapter["narrow"], "1 core, no Spark")]
    for m in MASTERS:
        lines.append(row(f"spark {m}, default, {names} (count by topic, queue)", spark[m]["narrow"],
                         f"{m.strip('local[]')} core(s)"))
    print("\n" + "\n".join(lines))

    speedup = {k: spark["local[1]"][k]["seconds"] / spark["local[2]"][k]["seconds"] for k in (*MODES, "narrow")}
    per_core = {"default": columnar["all"]["seconds"] / spark["local[1]"]["default"]["seconds"],
                "salvage": columnar["all"]["seconds"] / spark["local[1]"]["salvage"]["seconds"],
                "narrow": columnar["narrow"]["seconds"] / spark["local[1]"]["narrow"]["seconds"]}
    adapter_ratio = {"all": columnar["all"]["seconds"] / adapter["all"]["seconds"],
                     "narrow": columnar["narrow"]["seconds"] / adapter["narrow"]["seconds"]}
    print("\n| | all columns, default | all columns, salvage | " + names + " | goal |")
    print("|---|---:|---:|---:|---|")
    print(f"| speed-up, 1 → 2 cores | {speedup['default']:.2f}× | {speedup['salvage']:.2f}× "
          f"| {speedup['narrow']:.2f}× | ≥ {GOAL_SPEEDUP}× |")
    print(f"| spark local[1] throughput / in-process decoder's | {per_core['default']:.2f} | {per_core['salvage']:.2f} "
          f"| {per_core['narrow']:.2f} | ≥ {GOAL_PER_CORE} |")
    print(f"| adapter without Spark / in-process decoder's | {adapter_ratio['all']:.2f} | | {adapter_ratio['narrow']:.2f} "
          f"| |")
    floor = {k: spark[m]["floor"]["seconds"] / spark[m][k]["seconds"] for m in MASTERS for k in MODES if m == "local[1]"}
    print(f"| spark local[1] throughput / Spark's floor's (no decoding) | {floor['default']:.2f} | {floor['salvage']:.2f} "
          f"| | |")
    met = speedup["default"] >= GOAL_SPEEDUP and per_core["default"] >= GOAL_PER_CORE
    print(f"\ngoals {'met' if met else 'missed'} (default read, all columns); machine at the end: {machine()}; "
          f"the run took {time.perf_counter() - started:.0f} s")
    print(json.dumps({"manifest": {k: manifest[k] for k in ("messages", "data_end", "segments")},
                      "columnar": columnar, "adapter": adapter, "chain": chain, "spark": spark}))
    if problems:
        print("\nREADS DISAGREE:\n  " + "\n  ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
