"""The Spark data source against the in-process columnar decoder, with one and two cores.

The default run: filter pushdown, split pruning and the incremental load
    A ~1 GiB ``mixed`` log whose store times are spread over ``--span-hours``
    (12 by default; generated into ``benchmarks/data/`` once, with the
    package's construct schemas), read with ``splitSize`` 128m at local[1]
    and local[2]: every message; one topic of six (``PaymentNotify``) and a
    one-hour window in the middle of the log, each with pushdown off (Spark
    filters) and on (``spark.sql.python.filterPushdown.enabled`` and the
    option ``filterPushdown``); beside the in-process decoder with the same
    filters. Then an ``availableNow`` stream into the ``noop`` sink over a
    copy of the log (the last segment copied, the others hard-linked), run
    once, and again after 10 % more data was appended with
    ``rmqformats.synth``. Prints rows, seconds, throughput and the peak RSS
    of each process tree (JVM and Python workers included), and the ratios;
    fails when pushdown on, off and the decoder disagree, or when the second
    stream run does not give exactly the appended messages.

``--adapter``: the full reads measured before (what follows)
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
    .venv/bin/python benchmarks/bench_spark.py                      # pushdown and the incremental load
    .venv/bin/python benchmarks/bench_spark.py --adapter            # full reads, mixed log, splitSize 128m
    .venv/bin/python benchmarks/bench_spark.py --adapter --log small --split-size 256m --repeat 3
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

from procstats import peak_rss_kib  # noqa: E402

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
    if args.worker.startswith("pushdown-"):
        result = pushdown_worker(args)
    elif args.worker == "columnar":
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
    p.add_argument("--adapter", action="store_true",
                   help="the adapter's full reads against Spark's floor (the older measurement) instead of "
                        "pushdown, pruning and the incremental load")
    p.add_argument("--span-hours", type=float, default=12.0,
                   help="store times of the pushdown log spread over this many hours (default 12)")
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
    p.add_argument("--query", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if not args.adapter:
        return pushdown_main(args)

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


# -- pushdown, pruning and the incremental load (the default run) ------------------------------------

#: The topic of the one-topic query (one of the six topics of the generated log, ~10 % of its messages).
ONE_TOPIC = "PaymentNotify"
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


class PeakMemory:
    """The peak of the summed RSS of this process and all its descendants (the JVM, the Python workers)."""

    def __init__(self, interval: float = 0.1):
        import threading
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)
        self._thread.start()

    @staticmethod
    def _tree_rss() -> int:
        children: dict[int, list[int]] = {}
        rss: dict[int, int] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(name))
                rss[int(name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, IndexError, ValueError):
                continue
        total, todo = 0, [os.getpid()]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0)
            todo += children.get(pid, [])
        return total

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.peak = max(self.peak, self._tree_rss())

    def reset(self) -> None:
        self.peak = self._tree_rss()

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def hour_window(manifest_root: str) -> tuple[int, int]:
    """A one-hour window of store times in the middle of the log (epoch ms)."""
    import rmqformats
    log = rmqformats.open_store(manifest_root).commitlog
    first = next(iter(log.batches(["storeTimestamp"], batch_size=1))).column(0)[0].value
    last = None
    for batch in log.batches(["storeTimestamp"], batch_size=1 << 16):
        if batch.num_rows:
            last = batch.column(0)[-1].value
    middle = (first + last) // 2
    return middle - 1_800_000, middle + 1_800_000


def work_columnar_filtered(root: str, query: str, window: tuple[int, int], repeat: int) -> dict:
    """The in-process decoder with the same filter, every column."""
    import rmqformats

    log = rmqformats.open_store(root).commitlog
    options = {"topic": ONE_TOPIC} if query == "topic" else {"since": window[0], "until": window[1]} \
        if query == "hour" else {}
    best = None
    for _ in range(repeat):
        rows = 0
        t0 = time.perf_counter()
        for batch in log.batches(None, **options):
            rows += batch.num_rows
        seconds = time.perf_counter() - t0
        best = seconds if best is None else min(best, seconds)
    return {"seconds": best, "messages": rows, "peak_rss": peak_rss_kib() << 10}


def append_tenth(root: str, fraction: float = 0.1) -> tuple[int, int]:
    """Append ``fraction`` of the log's data as new messages (the package's builders); (messages, bytes)."""
    import rmqformats
    from rmqformats.synth.commitlog import MessageSpec, encode_message

    log = rmqformats.open_store(root).commitlog
    scan = log.batches(["commitLogOffset", "storeTimestamp", "queueOffset", "topic", "queueId"], batch_size=1 << 16,
                       decompress=False)
    last = None
    for batch in scan:
        if batch.num_rows:
            last = batch.slice(batch.num_rows - 1).to_pylist()[0]
    end = scan.end
    seg = log.segments[-1]
    assert end.segment == seg.path, "the data must end in the last segment"
    target = int((end.offset - log.segments[0].start_offset) * fraction)
    pos, written, n = end.file_offset, 0, 0
    t = int(last["storeTimestamp"].timestamp() * 1000)
    chunks = []
    while written < target:
        size = 100 + (n * 7919) % 4000
        spec = MessageSpec(topic=("OrderEvents", ONE_TOPIC, "UserActivityLog")[n % 3], body=bytes(size),
                           queue_id=n % 4, queue_offset=10_000_000 + n, born_timestamp=t + n, store_timestamp=t + n + 1,
                           properties={"TAGS": "created", "UNIQ_KEY": f"A{n:031X}"})
        data = encode_message(spec, seg.start_offset + pos + written)
        chunks.append(data)
        written += len(data)
        n += 1
    with open(seg.path, "r+b") as f:
        f.seek(pos)
        f.write(b"".join(chunks))
    return n, written


def copy_store(root: str, dest: str) -> str:
    """A copy of the store's commit log to append to: the segments but the last hard-linked, the last copied."""
    import shutil
    shutil.rmtree(dest, ignore_errors=True)
    folder = os.path.join(dest, "commitlog")
    os.makedirs(folder)
    names = sorted(os.listdir(os.path.join(root, "commitlog")))
    for name in names[:-1]:
        os.link(os.path.join(root, "commitlog", name), os.path.join(folder, name))
    subprocess.run(["cp", "--sparse=always", os.path.join(root, "commitlog", names[-1]), folder], check=True)
    return dest


def work_pushdown_spark(root: str, master: str, split_size: str, window: tuple[int, int], repeat: int,
                        data_dir: str) -> dict:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from datetime import datetime, timezone

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import rmqformats
    from rmqformats.spark import register

    spark = (SparkSession.builder.master(master).appName("bench-spark").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    warm = spark.read.format("rocketmq_commitlog").option("splitSize", "64k").load(rmqformats.sample_store_path())
    warm.write.format("noop").mode("overwrite").save()
    since, until = (datetime.fromtimestamp(t / 1000, tz=timezone.utc) for t in window)
    filters = {"full": None, "topic": F.col("topic") == ONE_TOPIC,
               "hour": (F.col("storeTimestamp") >= F.lit(since)) & (F.col("storeTimestamp") < F.lit(until))}
    memory = PeakMemory()
    out: dict = {}

    def run(name: str, pushdown: bool) -> dict:
        spark.conf.set(PUSHDOWN_CONF, str(pushdown).lower())
        df = (spark.read.format("rocketmq_commitlog").option("splitSize", split_size)
              .option("filterPushdown", str(pushdown).lower()).load(root))
        if filters[name] is not None:
            df = df.where(filters[name])
        runs, count = [], None
        memory.reset()
        for _ in range(repeat):
            t0 = time.perf_counter()
            count = df.agg(F.count(F.lit(1))).first()[0]  # every column decoded: no pruning for Python sources
            runs.append(time.perf_counter() - t0)
        return {"seconds": min(runs), "runs": runs, "messages": count, "partitions": df.rdd.getNumPartitions(),
                "peak_rss": memory.peak}

    out["full"] = run("full", False)
    for name in ("topic", "hour"):
        for pushdown in (False, True):
            out[f"{name} {'on' if pushdown else 'off'}"] = run(name, pushdown)
    spark.conf.set(PUSHDOWN_CONF, "false")
    # The incremental load: a stream over a copy, all of it, then again after 10 % more data is appended.
    copy = copy_store(root, os.path.join(data_dir, f"stream-copy-{master.strip('local[]')}"))
    checkpoint = os.path.join(copy, "_checkpoint")

    def stream(tries: int = 3) -> tuple[float, int]:
        from pyspark.errors import StreamingQueryException

        memory.reset()
        t0 = time.perf_counter()
        query = (spark.readStream.format("rocketmq_commitlog").load(copy).writeStream.format("noop")
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        try:
            query.awaitTermination()
        except StreamingQueryException as exc:
            # On a loaded machine the planner's Python worker can miss Spark's 10 s to connect back
            # before the query starts: the checkpoint has nothing yet, so the run is started again.
            if tries > 1 and "failed to connect back" in str(exc):
                print(f"stream start failed ({str(exc).splitlines()[0][:120]}); again", file=sys.stderr)
                return stream(tries - 1)
            raise
        rows = sum(p["numInputRows"] for p in query.recentProgress)
        return time.perf_counter() - t0, rows

    first_seconds, first_rows = stream()
    out["stream first"] = {"seconds": first_seconds, "messages": first_rows, "peak_rss": memory.peak}
    appended, appended_bytes = append_tenth(copy)
    seconds, rows = stream()
    out["stream appended"] = {"seconds": seconds, "messages": rows, "appended": appended,
                              "appended_bytes": appended_bytes, "peak_rss": memory.peak}
    memory.stop()
    spark.stop()
    import shutil
    shutil.rmtree(copy, ignore_errors=True)
    return out


def pushdown_worker(args) -> dict:
    window = tuple(json.loads(args.query)["window"])
    if args.worker == "pushdown-columnar":
        pin(1)
        return {q: work_columnar_filtered(args.store, q, window, args.repeat) for q in ("full", "topic", "hour")}
    pin(int(args.master.strip("local[]")))
    return work_pushdown_spark(args.store, args.master, args.split_size, window, args.repeat, args.data_dir)


def pushdown_main(args) -> int:
    import storegen

    started = time.perf_counter()
    print(f"machine: {machine()}", flush=True)
    root, manifest = storegen.ensure_store(args.data_dir, args.log, args.mib, args.segment_mib, args.seed,
                                           span_hours=args.span_hours)
    data, messages = manifest["data_end"], manifest["messages"]
    window = hour_window(root)
    print(f"{args.log} log: {messages:,} messages, {data:,} bytes of data in {len(manifest['segments'])} segments, "
          f"store times over {args.span_hours:g} h; one topic: {ONE_TOPIC}; one hour: {window}; "
          f"splitSize {args.split_size}, best of {args.repeat}", flush=True)
    warm_page_cache(root)
    common = ["--store", root, "--repeat", str(args.repeat), "--query", json.dumps({"window": window}),
              "--data-dir", args.data_dir]
    columnar = run_worker("--worker", "pushdown-columnar", *common)
    spark = {m: run_worker("--worker", "pushdown-spark", "--master", m, "--split-size", args.split_size, *common)
             for m in MASTERS}

    def row(name: str, r: dict, nbytes: int = data, note: str = "") -> str:
        s = r["seconds"]
        return (f"| {name} | {r['messages']:,} | {s:.2f} | {nbytes / MB / s:,.0f} | {r.get('peak_rss', 0) / 2**20:,.0f} "
                f"| {note} |")

    lines = ["| read | rows | seconds | MB/s of the log | peak RSS MiB | |", "|---|---:|---:|---:|---:|---|"]
    for q, label in (("full", "every message"), ("topic", f"topic = {ONE_TOPIC}"), ("hour", "one hour")):
        lines.append(row(f"in-process decoder, {label}", columnar[q], note="1 core"))
    for m in MASTERS:
        r = spark[m]
        lines.append(row(f"spark {m}, every message", r["full"], note=f"{r['full']['partitions']} partitions"))
        for q, label in (("topic", f"topic = {ONE_TOPIC}"), ("hour", "one hour")):
            for on in ("off", "on"):
                x = r[f"{q} {on}"]
                lines.append(row(f"spark {m}, {label}, pushdown {on}", x, note=f"{x['partitions']} partitions"))
        first, later = r["stream first"], r["stream appended"]
        lines.append(row(f"spark {m}, stream availableNow, first run (whole log)", first))
        lines.append(row(f"spark {m}, stream availableNow, after appending 10 %", later, later["appended_bytes"],
                         note=f"{later['appended']:,} messages appended"))
    print("\n" + "\n".join(lines))
    print("\n| ratio | local[1] | local[2] |\n|---|---:|---:|")
    for q, label in (("topic", "one topic"), ("hour", "one hour")):
        print(f"| {label}: pushdown off / on | " + " | ".join(
            f"{spark[m][f'{q} off']['seconds'] / spark[m][f'{q} on']['seconds']:.2f}×" for m in MASTERS) + " |")
        print(f"| {label}, pushdown on: full read / filtered read | " + " | ".join(
            f"{spark[m]['full']['seconds'] / spark[m][f'{q} on']['seconds']:.2f}×" for m in MASTERS) + " |")
        print(f"| {label}, pushdown on: in-process decoder / spark | " + " | ".join(
            f"{columnar[q]['seconds'] / spark[m][f'{q} on']['seconds']:.2f}" for m in MASTERS) + " |")
    print("| incremental load: first run / run after 10 % appended | " + " | ".join(
        f"{spark[m]['stream first']['seconds'] / spark[m]['stream appended']['seconds']:.2f}×" for m in MASTERS) + " |")
    print("| local[1] / local[2], every message | " + f"{spark['local[1]']['full']['seconds'] / spark['local[2]']['full']['seconds']:.2f}× | |")
    problems = []
    for m in MASTERS:
        for q in ("topic", "hour"):
            if not spark[m][f"{q} on"]["messages"] == spark[m][f"{q} off"]["messages"] == columnar[q]["messages"]:
                problems.append(f"{m} {q}: pushdown on, off and the decoder disagree")
        if spark[m]["full"]["messages"] != messages or spark[m]["stream first"]["messages"] != messages:
            problems.append(f"{m}: the full read or the first stream run did not give {messages:,} messages")
        if spark[m]["stream appended"]["messages"] != spark[m]["stream appended"]["appended"]:
            problems.append(f"{m}: the stream after the append did not give exactly the appended messages")
    print(f"\nmachine at the end: {machine()}; the run took {time.perf_counter() - started:.0f} s")
    print(json.dumps({"window": window, "columnar": columnar, "spark": spark}))
    if problems:
        print("\nREADS DISAGREE:\n  " + "\n  ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
