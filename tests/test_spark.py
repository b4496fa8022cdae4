"""The PySpark data sources and functions return what the Python API returns, row for row.

Every comparison is the count and a checksum over every column of all rows
(rows put in a canonical form first: times as epoch milliseconds, maps as
sorted items), against the object API (``scan()``, ``units()``,
``IndexFile.entry()``) on the real stores of ``tests/fixtures``. Split
sizes from one byte to whole segments are checked with the readers run in
this process (the code executors run, without a task per split); Spark
itself reads with a few split sizes, damaged copies, several stores, and
once with separate executor processes (``local-cluster``).

Filter pushdown: for every store and filter, the rows read with the filters
pushed down equal the rows filtered after a plain read and the Python API's
own filter, for split sizes from one byte to a segment, and a time window
plans only the splits that can hold it. Streaming: ``availableNow`` runs
over a copy of a store, records appended with the package's builders
between them, return each message once; an unread segment deleted, or the
last segment cut below the query's offset and written again, fail the next
run naming the offsets (``failOnDataLoss``) or are reported in ``lost``
while every new record is read once; retention of read segments and growth
lose nothing.

The module is one piece so that every test shares one SparkSession (and its
Python workers): starting another costs more than most tests here.
"""

from __future__ import annotations

import ast
import base64
import collections
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import pyarrow as pa  # noqa: E402

import rmqformats  # noqa: E402
from conftest import VERSIONS, store_path, truth_records  # noqa: E402
from rmqformats.commitlog import CommitLog  # noqa: E402
from rmqformats.spark import (  # noqa: E402
    BinaryFileDecoder,
    CommitLogDataSource,
    ConsumeQueueDataSource,
    IndexDataSource,
    MalformedRecordError,
    OptionError,
    SplitDecoder,
    index_schema,
    message_schema,
    queue_schema,
    segment_splits,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "spark" / "examples"
MESSAGE_COLUMNS = message_schema().fieldNames()
QUEUE_COLUMNS = queue_schema().fieldNames()
INDEX_COLUMNS = index_schema().fieldNames()
TIMES = ("bornTimestamp", "storeTimestamp", "storeTime")


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    from rmqformats.spark import register

    # Executors must run this interpreter, which has rmqformats and pyarrow.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("rmqformats-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


def root_of(version: str) -> str:
    return os.path.normpath(str(store_path(version)))


# -- canonical rows and checksums ------------------------------------------------------------------


def _value(v):
    if isinstance(v, dict):
        return tuple(sorted(v.items()))
    if isinstance(v, list) and v and isinstance(v[0], tuple):  # an Arrow map as (key, value) pairs
        return tuple(sorted(v))
    if isinstance(v, list):
        return tuple(v)
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


def canon(rows: list[dict], columns: list[str]) -> list[tuple]:
    """Rows as tuples of ``columns`` in a canonical order (store, then offset-like columns)."""
    out = [tuple(_value(r.get(c)) for c in columns) for r in rows]
    return sorted(out, key=lambda t: tuple("" if x is None else str(x) for x in t))


def checksum(rows: list[tuple]) -> str:
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def assert_same(got: list[tuple], want: list[tuple]) -> None:
    """The same count and checksum; on a difference, the first differing rows."""
    if len(got) != len(want) or checksum(got) != checksum(want):
        extra = [r for r in got if r not in set(want)][:2]
        missing = [r for r in want if r not in set(got)][:2]
        pytest.fail(f"{len(got)} rows, expected {len(want)}; extra {extra!r}; missing {missing!r}")


def spark_dicts(df) -> list[dict]:
    """Rows of a DataFrame as dicts, times as epoch milliseconds."""
    from pyspark.sql import functions as F

    cols = [F.unix_millis(c).alias(c) if c in TIMES else F.col(c) for c in df.columns]
    return [r.asDict() for r in df.select(*cols).collect()]


def arrow_dicts(batches: list[pa.RecordBatch]) -> list[dict]:
    """Rows of Arrow batches as dicts, times as epoch milliseconds."""
    rows = []
    for b in batches:
        cols = {}
        for name in b.schema.names:
            col = b.column(name)
            if pa.types.is_timestamp(col.type):
                col = col.cast(pa.timestamp("ms", tz=col.type.tz)).cast(pa.int64())
            cols[name] = col.to_pylist()
        rows += [dict(zip(cols, values)) for values in zip(*cols.values())]
    return rows


# -- the Python API's rows --------------------------------------------------------------------------


def message_dict(m, store: str) -> dict:
    return {"commitLogOffset": m.commitlog_offset, "storeSize": m.store_size, "bodyCRC": m.body_crc,
            "queueId": m.queue_id, "flag": m.flag, "queueOffset": m.queue_offset, "sysFlag": m.sys_flag,
            "bornTimestamp": m.born_timestamp, "bornHost": m.born_host, "storeTimestamp": m.store_timestamp,
            "storeHost": m.store_host, "reconsumeTimes": m.reconsume_times,
            "preparedTransactionOffset": m.prepared_transaction_offset, "topic": m.topic,
            "properties": m.properties, "propertiesString": m.properties_raw, "msgId": m.msg_id, "body": m.body,
            "tags": m.tags, "keys": m.keys, "uniqKey": m.uniq_key, "priority": m.priority,
            "liteTopic": m.lite_topic, "segment": os.path.basename(m.segment), "store": store}


def api_messages(path: str, *, store: str | None = None, verify_crc: bool = False, log: CommitLog | None = None,
                 columns: list[str] = MESSAGE_COLUMNS) -> list[tuple]:
    """The object API's scan of the store at ``path`` (or of ``log``), as canonical rows."""
    log = log or rmqformats.open_store(path).commitlog
    return canon([message_dict(m, store or path) for m in log.scan(verify_crc=verify_crc)], columns)


def api_queue_units(path: str) -> list[tuple]:
    """Every consume-queue unit (placeholders skipped) and batch consume-queue unit, by the object API."""
    s = rmqformats.open_store(path)
    rows = []
    for info in s.queues():
        for u in s.consume_queue(info.topic, info.queue_id).units():
            rows.append({"topic": info.topic, "queueId": info.queue_id, "cqOffset": u.cq_offset,
                         "commitLogOffset": u.commitlog_offset, "size": u.size, "tagsCode": u.tags_code,
                         "batchSize": 1, "queueType": "SimpleCQ", "store": path})
    for info in s.batch_queues():
        for u in s.batch_consume_queue(info.topic, info.queue_id).units():
            rows.append({"topic": info.topic, "queueId": info.queue_id, "cqOffset": u.msg_base_offset,
                         "commitLogOffset": u.commitlog_offset, "size": u.size, "tagsCode": u.tags_code,
                         "batchSize": u.batch_size, "queueType": "BatchCQ", "store": path})
    return canon(rows, QUEUE_COLUMNS)


def api_index_entries(path: str) -> list[tuple]:
    """Every written entry of every index file, by the object API."""
    rows = []
    with rmqformats.open_store(path).index() as files:
        for f in files:
            for n in range(1, f.header.num_entries + 1):
                e = f.entry(n)
                rows.append({"file": f.name, "entry": n, "slot": e.key_hash % f.num_hash_slots, "keyHash": e.key_hash,
                             "commitLogOffset": e.phy_offset, "timeDiff": e.time_diff, "prevIndex": e.prev_index,
                             "storeTime": e.time_ms(f.header.begin_timestamp), "store": path})
    return canon(rows, INDEX_COLUMNS)


def read_in_process(source, options: dict, schema=None) -> tuple[int, list[dict]]:
    """Plan and read a source in this process, as the driver and the executors would: (partitions, rows)."""
    ds = source(options=options)
    reader = ds.reader(schema or ds.schema())
    parts = reader.partitions()
    return len(parts), arrow_dicts([b for p in parts for b in reader.read(p)])


# -- damage -----------------------------------------------------------------------------------------


def middle_message(root: str, segment: int = 0):
    """A message in the middle of a segment of the store at ``root``."""
    log = rmqformats.open_store(root).commitlog
    name = log.segments[segment].path
    msgs = [m for m in log.scan() if m.segment == name]
    return msgs[len(msgs) // 2]


def flip_magic(root: str) -> tuple[str, int]:
    """Break the magic code of a record in the middle of the first segment; returns (file, position)."""
    m = middle_message(root)
    with open(m.segment, "r+b") as f:
        f.seek(m.file_offset + 4)
        magic = f.read(4)
        f.seek(m.file_offset + 4)
        f.write(bytes(b ^ 0xFF for b in magic))
    return m.segment, m.file_offset


def flip_body_byte(root: str) -> tuple[str, int]:
    """Change a body byte of a record in the middle of the first segment (its CRC no longer matches)."""
    log = rmqformats.open_store(root).commitlog
    name = log.segments[0].path
    msgs = [m for m in log.scan() if m.segment == name and len(m.body_raw) > 4]
    m = msgs[len(msgs) // 2]
    with open(m.segment, "r+b") as f:
        f.seek(m.file_offset)
        record = f.read(m.store_size)
        at = m.file_offset + record.index(m.body_raw, 20)
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x01]))
    return m.segment, m.file_offset


@pytest.fixture
def damaged(tmp_path) -> tuple[str, str, int]:
    """A copy of the 5.1.4 store with a flipped magic in the middle of its first segment."""
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    path, pos = flip_magic(root)
    return root, path, pos


# -- messages: the default read, splits, ground truth -----------------------------------------------


def test_default_read_equals_the_api(spark, version):
    root = root_of(version)
    df = spark.read.format("rocketmq_commitlog").load(root)
    assert df.rdd.getNumPartitions() == len(rmqformats.open_store(root).commitlog.segments)  # one per segment
    assert_same(canon(spark_dicts(df), MESSAGE_COLUMNS), api_messages(root))


def test_splits_inside_segments_equal_the_api(spark, version):
    root = root_of(version)
    df = spark.read.format("rocketmq_commitlog").option("splitSize", "4k").option("batchSize", 7).load(root)
    assert df.rdd.getNumPartitions() > 2 * len(rmqformats.open_store(root).commitlog.segments)
    assert_same(canon(spark_dicts(df), MESSAGE_COLUMNS), api_messages(root))


@pytest.mark.parametrize("split", [1, 7, 97, 4096, 65536, None])
def test_every_split_size_reads_each_message_once(version, split):
    root = root_of(version)
    options = {"path": root} if split is None else {"path": root, "splitSize": str(split)}
    n, rows = read_in_process(CommitLogDataSource, options)
    assert_same(canon(rows, MESSAGE_COLUMNS), api_messages(root))


@pytest.mark.parametrize("split", [97, 4096, None])
def test_salvage_splits_resync_to_the_same_messages(version, split):
    root = root_of(version)
    options = {"path": root, "salvage": "true"} | ({} if split is None else {"splitSize": str(split)})
    n, rows = read_in_process(CommitLogDataSource, options)
    assert_same(canon(rows, MESSAGE_COLUMNS), api_messages(root))


def test_messages_match_rocketmq_ground_truth(spark, version):
    truth = {t["commitlogOffset"]: t for t in truth_records(version) if t["kind"] == "MESSAGE"}
    rows = spark_dicts(spark.read.format("rocketmq_commitlog").option("splitSize", "64k").load(root_of(version)))
    assert sorted(r["commitLogOffset"] for r in rows) == sorted(truth)
    for r in rows:
        t = truth[r["commitLogOffset"]]
        body = base64.b64decode(t.get("bodyDecompressedBase64", t["bodyRawBase64"]))
        assert (r["storeSize"], r["bodyCRC"], r["queueId"], r["queueOffset"], r["sysFlag"], r["storeTimestamp"],
                r["topic"], r["properties"], r["msgId"], r["uniqKey"], r["tags"], bytes(r["body"]), r["segment"]) == (
            t["storeSize"], t["bodyCRC"], t["queueId"], t["queueOffset"], t["sysFlag"], t["storeTimestamp"],
            t["topic"], t["properties"], t["msgId"], t["uniqKey"], t["tags"], body, t["file"])


def test_sql_over_a_subset_of_columns(spark):
    df = (spark.read.format("rocketmq_commitlog").schema("topic string, queueId int, storeTimestamp timestamp")
          .load(root_of("rocketmq-5.1.4")))
    assert df.columns == ["topic", "queueId", "storeTimestamp"]
    df.createOrReplaceTempView("commitlog")
    counts = {r.queueId: r.n for r in spark.sql(
        "SELECT queueId, count(*) AS n FROM commitlog WHERE topic = 'TopicTest' GROUP BY queueId").collect()}
    assert counts == {0: 32, 1: 34, 2: 34, 3: 31}


def test_topics_are_filtered_while_decoding(spark):
    root = root_of("rocketmq-5.3.3")
    want = [r for r in api_messages(root) if r[MESSAGE_COLUMNS.index("topic")] in ("TopicTest", "TopicBig")]
    df = spark.read.format("rocketmq_commitlog").option("topics", "TopicTest, TopicBig").load(root)
    assert_same(canon(spark_dicts(df), MESSAGE_COLUMNS), want)
    n, rows = read_in_process(CommitLogDataSource, {"path": root, "topics": "TopicBig"})
    assert {r["topic"] for r in rows} == {"TopicBig"}


# -- damage ------------------------------------------------------------------------------------------


def test_damaged_store_default_read_stops_where_the_api_does(spark, damaged):
    root, path, pos = damaged
    want = api_messages(root)
    assert max(r[0] for r in want) < rmqformats.open_store(root).commitlog.segments[1].start_offset  # later segments: none
    for split in (None, "4k"):
        reader = spark.read.format("rocketmq_commitlog")
        if split:
            reader = reader.option("splitSize", split)
        assert_same(canon(spark_dicts(reader.load(root)), MESSAGE_COLUMNS), want)
    df = spark.read.format("rocketmq_commitlog").option("mode", "DROPMALFORMED").option("splitSize", "8k").load(root)
    assert_same(canon(spark_dicts(df), MESSAGE_COLUMNS), want)


def test_permissive_gives_the_corrupt_record_row(spark, damaged):
    root, path, pos = damaged
    df = (spark.read.format("rocketmq_commitlog").option("columnNameOfCorruptRecord", "_corrupt")
          .option("splitSize", "2k").load(root))
    rows = spark_dicts(df)
    bad = [r for r in rows if r["_corrupt"] is not None]
    assert len(bad) == 1
    assert bad[0]["_corrupt"]["file"] == path and bad[0]["_corrupt"]["offset"] == pos
    assert "bad magic" in bad[0]["_corrupt"]["reason"]
    assert all(bad[0][c] is None for c in MESSAGE_COLUMNS if c != "store") and bad[0]["store"] == root
    good = [r for r in rows if r["_corrupt"] is None]
    assert_same(canon(good, MESSAGE_COLUMNS), api_messages(root))
    text = (spark.read.format("rocketmq_commitlog").option("columnNameOfCorruptRecord", "_corrupt")
            .schema("commitLogOffset long, _corrupt string").load(root).where("_corrupt IS NOT NULL").collect())
    assert len(text) == 1 and f"{path} @ {pos}: bad magic" in text[0]._corrupt


def test_failfast_names_the_file_and_offset(spark, damaged):
    root, path, pos = damaged
    with pytest.raises(Exception) as info:
        spark.read.format("rocketmq_commitlog").option("mode", "FAILFAST").option("splitSize", "8k").load(root).collect()
    assert "MalformedRecordError" in str(info.value) and f"{path} @ 0x{pos:x}" in str(info.value)
    with pytest.raises(MalformedRecordError) as direct:
        read_in_process(CommitLogDataSource, {"path": root, "mode": "failfast"})
    assert (direct.value.path, direct.value.offset) == (path, pos)


def test_salvage_reads_every_intact_message(spark, damaged):
    root, path, pos = damaged
    bad_offset = int(os.path.basename(path)) + pos
    intact = [r for r in api_messages(root_of("rocketmq-5.1.4"), store=root) if r[0] != bad_offset]
    df = (spark.read.format("rocketmq_commitlog").option("salvage", "true").option("splitSize", "32k")
          .option("columnNameOfCorruptRecord", "_corrupt").load(root))
    rows = spark_dicts(df)
    bad = [r["_corrupt"] for r in rows if r["_corrupt"] is not None]
    assert [(b["file"], b["offset"]) for b in bad] == [(path, pos)]
    assert_same(canon([r for r in rows if r["_corrupt"] is None], MESSAGE_COLUMNS), intact)
    for split in (97, 4096):  # resyncs everywhere, in this process
        n, rows = read_in_process(CommitLogDataSource, {"path": root, "salvage": "true", "splitSize": str(split)})
        assert_same(canon(rows, MESSAGE_COLUMNS), intact)


def test_bad_crc_with_verify_crc(spark, tmp_path):
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-4.9.7"), root)
    path, pos = flip_body_byte(root)
    checked = api_messages(root, verify_crc=True)
    assert len(checked) < len(api_messages(root))
    df = spark.read.format("rocketmq_commitlog").option("verifyCrc", "true").option("splitSize", "4k").load(root)
    assert_same(canon(spark_dicts(df), MESSAGE_COLUMNS), checked)
    assert_same(canon(spark_dicts(spark.read.format("rocketmq_commitlog").load(root)), MESSAGE_COLUMNS),
                api_messages(root))  # without verifyCrc, the changed body is a message like any other
    bad = (spark.read.format("rocketmq_commitlog").option("verifyCrc", "true").option("mode", "PERMISSIVE")
           .option("columnNameOfCorruptRecord", "why").load(root).where("why IS NOT NULL").collect())
    assert [(b.why.file, b.why.offset) for b in bad] == [(path, pos)] and "CRC" in bad[0].why.reason
    with pytest.raises(Exception) as info:
        spark.read.format("rocketmq_commitlog").option("verifyCrc", "true").option("mode", "FAILFAST").load(root).count()
    assert f"{path} @ 0x{pos:x}" in str(info.value)


def test_zero_tail_with_data_after_it_is_damage(tmp_path):
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.3.3"), root)
    m = middle_message(root, segment=0)
    with open(m.segment, "r+b") as f:  # a record zeroed: recovery ends there, as at a zero tail
        f.seek(m.file_offset)
        f.write(bytes(m.store_size))
    want = api_messages(root)
    n, rows = read_in_process(CommitLogDataSource, {"path": root, "columnNameOfCorruptRecord": "c"})
    assert_same(canon([r for r in rows if r["c"] is None], MESSAGE_COLUMNS), want)
    assert [(r["c"]["file"], r["c"]["offset"]) for r in rows if r["c"] is not None] == [(m.segment, m.file_offset)]


# -- paths -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_stores(tmp_path_factory) -> tuple[str, str, str]:
    """A folder holding copies of two stores: (folder, first store, second store)."""
    top = tmp_path_factory.mktemp("stores")
    a, b = top / "broker-a" / "store", top / "broker-b" / "store"
    shutil.copytree(root_of("rocketmq-4.9.7"), a)
    shutil.copytree(root_of("rocketmq-5.3.3"), b)
    return str(top), str(a), str(b)


def test_several_stores_give_the_union(spark, two_stores):
    top, a, b = two_stores
    want = api_messages(a) + api_messages(b)
    want = canon([dict(zip(MESSAGE_COLUMNS, r)) for r in want], MESSAGE_COLUMNS)
    reads = {
        "recursiveFileLookup": spark.read.format("rocketmq_commitlog").option("recursiveFileLookup", "true").load(top),
        "list": spark.read.format("rocketmq_commitlog").load([a, b + "/commitlog"]),
        "glob": spark.read.format("rocketmq_commitlog").load(top + "/broker-{a,b}/st*"),
        "uri": spark.read.format("rocketmq_commitlog").load(["file://" + a, Path(b).as_uri()]),
    }
    for how, df in reads.items():
        rows = spark_dicts(df)
        assert {r["store"] for r in rows} == {a, b}, how
        assert_same(canon(rows, MESSAGE_COLUMNS), want)
    with pytest.raises(Exception, match="recursiveFileLookup"):
        spark.read.format("rocketmq_commitlog").load(top).count()
    units = spark.read.format("rocketmq_consumequeue").option("recursiveFileLookup", "true").load(top)
    assert_same(canon(spark_dicts(units), QUEUE_COLUMNS), canon(
        [dict(zip(QUEUE_COLUMNS, r)) for r in api_queue_units(a) + api_queue_units(b)], QUEUE_COLUMNS))


def test_a_segment_and_a_missing_path(spark):
    root = root_of("rocketmq-5.1.4")
    seg = rmqformats.open_store(root).commitlog.segments[4].path
    want = api_messages(seg, store=root)  # the API reads one segment as a commit log of its own
    assert_same(canon(spark_dicts(spark.read.format("rocketmq_commitlog").load(seg)), MESSAGE_COLUMNS), want)
    with pytest.raises(Exception, match="does not exist"):
        spark.read.format("rocketmq_commitlog").load(root + "/nowhere").count()
    with pytest.raises(Exception, match="local or mounted paths"):
        read_in_process(CommitLogDataSource, {"path": "hdfs://namenode/store"})


def test_path_glob_filter_and_modification_times(tmp_path):
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    log = rmqformats.open_store(root).commitlog
    old, new = log.segments[:2], log.segments[2:]
    for s in old:
        os.utime(s.path, (1577836800, 1577836800))  # 2020-01-01T00:00:00Z
    for s in new:
        os.utime(s.path, (1704067200, 1704067200))  # 2024-01-01T00:00:00Z

    def expected(segments):
        view = CommitLog(log.path)
        view.segments = tuple(segments)
        return api_messages(root, log=view)

    cases = [
        ({"pathGlobFilter": "0000000000000{0262144,0524288}"}, log.segments[1:3]),
        ({"modifiedAfter": "2022-01-01T00:00:00", "timeZone": "UTC"}, new),
        ({"modifiedBefore": "2022-01-01T00:00:00Z"}, old),
        ({"modifiedBefore": "2020-01-01T01:00:00", "timeZone": "+02:00"}, ()),
    ]
    for options, segments in cases:
        n, rows = read_in_process(CommitLogDataSource, {"path": root, **options})
        assert_same(canon(rows, MESSAGE_COLUMNS), expected(segments) if segments else [])
    n, rows = read_in_process(ConsumeQueueDataSource, {"path": root, "pathGlobFilter": "*[^0-9]"})
    assert rows == []


def test_options_are_checked(spark):
    root = root_of("rocketmq-5.1.4")
    with pytest.raises(Exception) as info:
        spark.read.format("rocketmq_commitlog").option("verifyCRCs", "true").load(root)
    assert "unknown option 'verifycrcs'" in str(info.value) and "verifyCrc" in str(info.value)
    for options, text in [({"mode": "LENIENT"}, "mode must be one of"), ({"splitSize": "big"}, "splitSize"),
                          ({"batchSize": "0"}, "batchSize"), ({"salvage": "yes"}, "salvage"),
                          ({"salvage": "true", "mode": "FAILFAST"}, "contradict"),
                          ({"modifiedAfter": "yesterday"}, "modifiedAfter"), ({"hashSlots": "64"}, "unknown option")]:
        with pytest.raises(OptionError, match=text):
            CommitLogDataSource(options={"path": root, **options})
    with pytest.raises(OptionError, match="unknown option 'salvage'"):
        IndexDataSource(options={"path": root, "salvage": "true"})
    with pytest.raises(OptionError, match="one of the source's own columns"):
        CommitLogDataSource(options={"path": root, "columnNameOfCorruptRecord": "topic"})
    with pytest.raises(OptionError, match="give load"):
        ConsumeQueueDataSource(options={})
    with pytest.raises(Exception, match="no column 'nope'"):
        spark.read.format("rocketmq_commitlog").schema("nope string").load(root).count()
    with pytest.raises(Exception, match="column queueId is int, not bigint"):
        spark.read.format("rocketmq_commitlog").schema("queueId long").load(root).count()


# -- queues and index --------------------------------------------------------------------------------


def test_consume_queues_equal_the_api(spark, version):
    root = root_of(version)
    df = spark.read.format("rocketmq_consumequeue").option("splitSize", "1000").load(root)
    assert df.rdd.getNumPartitions() > 3
    assert_same(canon(spark_dicts(df), QUEUE_COLUMNS), api_queue_units(root))
    for split in (20, 46, 999, None):  # unit boundaries of both unit sizes
        n, rows = read_in_process(ConsumeQueueDataSource, {"path": root} | ({"splitSize": split} if split else {}))
        assert_same(canon(rows, QUEUE_COLUMNS), api_queue_units(root))


def test_index_entries_equal_the_api(spark, version):
    root = root_of(version)
    df = spark.read.format("rocketmq_index").option("splitSize", "2k").load(root)
    assert_same(canon(spark_dicts(df), INDEX_COLUMNS), api_index_entries(root))
    for split in (20, 100, None):
        n, rows = read_in_process(IndexDataSource, {"path": root} | ({"splitSize": split} if split else {}))
        assert_same(canon(rows, INDEX_COLUMNS), api_index_entries(root))
    assert_same(canon(arrow_dicts(rmqformats.open_store(root).index_to_arrow().to_batches()), INDEX_COLUMNS[:-1]),
                [r[:-1] for r in api_index_entries(root)])


def test_damaged_queue_and_index_files(tmp_path):
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    qfile = next(Path(root, "consumequeue", "TopicTest", "1").iterdir())
    with open(qfile, "ab") as f:
        f.write(b"\1\2\3")  # no longer a whole number of units
    n, rows = read_in_process(ConsumeQueueDataSource, {"path": root, "splitSize": "100",
                                                       "columnNameOfCorruptRecord": "bad"})
    bad = [r["bad"] for r in rows if r["bad"] is not None]
    assert len(bad) == 1 and bad[0]["file"] == str(qfile) and "not a multiple" in bad[0]["reason"]
    assert not any(r["topic"] == "TopicTest" and r["queueId"] == 1 for r in rows)
    with pytest.raises(MalformedRecordError, match="TopicTest/1"):
        read_in_process(ConsumeQueueDataSource, {"path": root, "mode": "FAILFAST"})
    index = sorted(Path(root, "index").iterdir())[0]
    with open(index, "ab") as f:
        f.write(b"\0")
    n, rows = read_in_process(IndexDataSource, {"path": root, "columnNameOfCorruptRecord": "bad"})
    assert [r["bad"]["file"] for r in rows if r["bad"]] == [str(index)]
    assert {r["file"] for r in rows if not r["bad"]} == {p.name for p in Path(root, "index").iterdir()} - {index.name}


# -- per-partition functions -------------------------------------------------------------------------


def test_split_decoder_over_range_descriptors(spark):
    root = root_of("rocketmq-5.3.3")
    decode = SplitDecoder()
    ranges = spark.createDataFrame(segment_splits(root, split_size=16384), "path string, start long, end long")
    df = ranges.repartition(3).mapInArrow(decode, decode.schema)
    assert_same(canon(spark_dicts(df), MESSAGE_COLUMNS), api_messages(root))
    tiny = pa.RecordBatch.from_pylist([{"path": p, "start": s, "end": e} for p, s, e in segment_splits(root, 97)])
    assert_same(canon(arrow_dicts(list(decode(iter([tiny])))), MESSAGE_COLUMNS), api_messages(root))
    some = SplitDecoder(columns=["topic", "store"])
    assert some.schema.fieldNames() == ["topic", "store"]


def test_binary_file_decoder(spark):
    root = root_of("rocketmq-5.1.4")
    decode = BinaryFileDecoder(columns=["commitLogOffset", "topic", "body", "segment", "store"])
    df = spark.read.format("binaryFile").load(root + "/commitlog").mapInArrow(decode, decode.schema)
    cols = ["commitLogOffset", "topic", "body", "segment", "store"]
    assert_same(canon(spark_dicts(df), cols), api_messages(root, columns=cols))


# -- example jobs ------------------------------------------------------------------------------------


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"rmqformats_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_jobs_on_the_sample(spark, tmp_path):
    sample = rmqformats.sample_store_path()
    hourly = example("topic_hourly").run(spark, sample).collect()
    per_topic: dict[str, int] = {}
    for m in rmqformats.open_store(sample).commitlog.scan():
        per_topic[m.topic] = per_topic.get(m.topic, 0) + 1
    assert {r.topic: r.messages for r in hourly} == per_topic  # the sample was written within one hour
    n = example("export_topic").run(spark, sample, "TopicTest", str(tmp_path / "out.parquet"))
    assert n == per_topic["TopicTest"]
    lag = [(r.group, r.topic, r.queueId, r.committedOffset, r.maxOffset, r.lag)
           for r in example("consumer_lag").run(spark, sample).collect()]
    api = [(r.group, r.topic, r.queue_id, r.committed_offset, r.max_offset, r.lag)
           for r in rmqformats.open_store(sample).consumer_lag(with_store_time=False)]
    assert sorted(lag) == sorted(api) and sum(r[-1] for r in lag) == 12


# -- separate executor processes ---------------------------------------------------------------------


CLUSTER_JOB = textwrap.dedent("""
    import json, os, sys
    from pyspark.sql import SparkSession, functions as F
    from rmqformats.spark import register
    spark = (SparkSession.builder.master("local-cluster[2,1,1024]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    register(spark)
    df = spark.read.format("rocketmq_commitlog").option("splitSize", "16k").load(sys.argv[1])
    cols = [F.unix_millis(c).alias(c) if c.endswith("Timestamp") else F.col(c) for c in df.columns]
    rows = [r.asDict() for r in df.select(*cols).collect()]
    executors = spark.sparkContext._jsc.sc().getExecutorIds().size()
    for r in rows:
        r["body"] = bytes(r["body"]).hex()
    print("RESULT " + json.dumps({"rows": rows, "executors": executors, "partitions": df.rdd.getNumPartitions()}))
    spark.stop()
""")


def test_local_cluster_with_separate_executors(tmp_path):
    import pyspark

    root = root_of("rocketmq-4.9.7")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_HOME=os.path.dirname(pyspark.__file__))
    job = tmp_path / "job.py"
    job.write_text(CLUSTER_JOB)
    done = subprocess.run([sys.executable, str(job), root], env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stderr[-3000:]
    result = json.loads(lines[0][len("RESULT "):])
    assert result["partitions"] > 5 and result["executors"] == 2
    rows = result["rows"]
    for r in rows:
        r["body"] = bytes.fromhex(r["body"])
    assert_same(canon(rows, MESSAGE_COLUMNS), api_messages(root))


# -- symbolic links ------------------------------------------------------------------------------------


def test_recursive_lookup_follows_symbolic_links(spark, two_stores, tmp_path):
    top, a, b = two_stores
    links = tmp_path / "links"
    links.mkdir()
    (links / "broker-a").symlink_to(Path(a).parent, target_is_directory=True)
    (links / "b-store").symlink_to(b, target_is_directory=True)
    (links / "up").symlink_to(links, target_is_directory=True)  # a cycle is searched once
    stores = {str(links / "broker-a" / "store"): a, str(links / "b-store"): b}
    want = canon([dict(zip(MESSAGE_COLUMNS, r[:-1] + (link,))) for link, real in stores.items()
                  for r in api_messages(real)], MESSAGE_COLUMNS)
    n, rows = read_in_process(CommitLogDataSource, {"path": str(links), "recursiveFileLookup": "true"})
    assert_same(canon(rows, MESSAGE_COLUMNS), want)
    df = spark.read.format("rocketmq_commitlog").option("recursiveFileLookup", "true").load(str(links))
    assert df.count() == len(want)
    n, units = read_in_process(ConsumeQueueDataSource, {"path": str(links), "recursiveFileLookup": "true"})
    assert len(units) == len(api_queue_units(a)) + len(api_queue_units(b))


# -- filter pushdown -----------------------------------------------------------------------------------

try:  # the filter classes are Spark 4.1's; on 4.0 the pushdown tests are skipped
    from pyspark.sql.datasource import (EqualNullSafe, EqualTo, GreaterThan, GreaterThanOrEqual, In, IsNotNull,
                                        IsNull, LessThan, LessThanOrEqual, Not, StringContains, StringEndsWith,
                                        StringStartsWith)
    HAS_PUSHDOWN = True
except ImportError:
    HAS_PUSHDOWN = False

needs_pushdown = pytest.mark.skipif(not HAS_PUSHDOWN, reason="filter pushdown needs Spark 4.1+")


def _utc(ms: int):
    from datetime import datetime, timezone
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def filter_cases(msgs: list[dict]) -> dict[str, tuple[list, object, dict | None]]:
    """Named filter sets over a store's messages: (Spark filters, the same test in Python, the API's filter)."""
    store_ts = sorted(m["storeTimestamp"] for m in msgs)
    born_ts = sorted(m["bornTimestamp"] for m in msgs)
    offsets = sorted(m["commitLogOffset"] for m in msgs)
    t0, t1 = store_ts[len(store_ts) // 3], store_ts[2 * len(store_ts) // 3]
    b0, b1 = born_ts[len(born_ts) // 4], born_ts[len(born_ts) // 2]
    o0, o1 = offsets[len(offsets) // 5], offsets[3 * len(offsets) // 5]
    topics = sorted({m["topic"] for m in msgs})
    topic = max(topics, key=lambda t: sum(m["topic"] == t for m in msgs))
    tagged = next(m for m in msgs if m["tags"])
    keyed = next(m for m in msgs[len(msgs) // 2:] if m["uniqKey"])
    qoff = sorted(m["queueOffset"] for m in msgs)[len(msgs) // 2]
    return {
        "one topic": ([EqualTo(("topic",), topic)], lambda m: m["topic"] == topic, {"topic": topic}),
        "topic and queue": ([EqualTo(("topic",), topic), EqualTo(("queueId",), 1)],
                            lambda m: m["topic"] == topic and m["queueId"] == 1, {"topic": topic, "queue_id": 1}),
        "time window": ([GreaterThanOrEqual(("storeTimestamp",), _utc(t0)), LessThan(("storeTimestamp",), _utc(t1))],
                        lambda m: t0 <= m["storeTimestamp"] < t1, {"since": t0, "until": t1}),
        "time window, inclusive": ([GreaterThan(("storeTimestamp",), _utc(t0)),
                                    LessThanOrEqual(("storeTimestamp",), _utc(t1))],
                                   lambda m: t0 < m["storeTimestamp"] <= t1, {"since": t0 + 1, "until": t1 + 1}),
        "born window": ([GreaterThanOrEqual(("bornTimestamp",), _utc(b0)), LessThan(("bornTimestamp",), _utc(b1))],
                        lambda m: b0 <= m["bornTimestamp"] < b1, None),
        "offset range": ([GreaterThanOrEqual(("commitLogOffset",), o0), LessThan(("commitLogOffset",), o1)],
                         lambda m: o0 <= m["commitLogOffset"] < o1, {"from_offset": o0, "to_offset": o1}),
        "one offset": ([EqualTo(("commitLogOffset",), o1)], lambda m: m["commitLogOffset"] == o1,
                       {"from_offset": o1, "to_offset": o1 + 1}),
        "queue offsets": ([In(("queueId",), (0, 2)), GreaterThan(("queueOffset",), qoff)],
                          lambda m: m["queueId"] in (0, 2) and m["queueOffset"] > qoff, None),
        "tag": ([EqualTo(("tags",), tagged["tags"])], lambda m: m["tags"] == tagged["tags"], {"tag": tagged["tags"]}),
        "unique key": ([EqualNullSafe(("uniqKey",), keyed["uniqKey"])], lambda m: m["uniqKey"] == keyed["uniqKey"],
                       None),
        "no tags": ([IsNull(("tags",))], lambda m: m["tags"] is None, None),
        "not a topic, with tags": ([Not(EqualTo(("topic",), topic)), IsNotNull(("tags",))],
                                   lambda m: m["topic"] != topic and m["tags"] is not None, None),
        "topic text": ([StringStartsWith(("topic",), topic[:3]), StringEndsWith(("topic",), topic[-2:]),
                        StringContains(("topic",), topic[1:4])],
                       lambda m: m["topic"].startswith(topic[:3]) and m["topic"].endswith(topic[-2:])
                       and topic[1:4] in m["topic"], None),
        "segment and tags in": ([EqualTo(("segment",), msgs[-1]["segment"]), In(("tags",), ("TagA", "TagB", None))],
                                lambda m: m["segment"] == msgs[-1]["segment"] and m["tags"] in ("TagA", "TagB"), None),
        "nothing": ([EqualTo(("topic",), "no such topic")], lambda m: False, {"topic": "no such topic"}),
    }


def read_pushed(options: dict, filters: list) -> tuple[object, list, list[dict]]:
    """Plan and read with ``filters`` pushed down, in this process: (reader, rejected filters, rows)."""
    ds = CommitLogDataSource(options={**options, "filterPushdown": "true"})
    reader = ds.reader(ds.schema())
    rejected = list(reader.pushFilters(filters))
    parts = reader.partitions()
    return reader, rejected, arrow_dicts([b for p in parts for b in reader.read(p)])


@needs_pushdown
@pytest.mark.parametrize("split", [1, 97, 4096, None])
def test_pushed_filters_equal_spark_filtering_and_the_api(version, split):
    root = root_of(version)
    log = rmqformats.open_store(root).commitlog
    everything = [message_dict(m, root) for m in log.scan()]
    for row in everything:
        row["properties"] = list(row["properties"].items())
    options = {"path": root} | ({} if split is None else {"splitSize": str(split)})
    for name, (filters, test, api) in filter_cases(everything).items():
        reader, rejected, rows = read_pushed(options, filters)
        assert rejected == [], name  # every filter here is applied by the source
        want = canon([m for m in everything if test(m)], MESSAGE_COLUMNS)
        assert_same(canon(rows, MESSAGE_COLUMNS), want)
        if api is not None:  # the Python API's own filter agrees
            offsets = log.to_arrow(["commitLogOffset"], **api).column(0).to_pylist()
            assert sorted(offsets) == sorted(r[0] for r in want), name


@needs_pushdown
def test_filters_the_sources_cannot_apply_go_back_to_spark():
    root = root_of("rocketmq-5.1.4")
    keep = [EqualTo(("keys",), ["a"]), EqualTo(("body",), b"x"), GreaterThan(("queueId",), 1.5),
            EqualTo(("properties",), {}), IsNull(("_corrupt",))]
    ds = CommitLogDataSource(options={"path": root, "filterPushdown": "true", "columnNameOfCorruptRecord": "_corrupt"})
    reader = ds.reader(ds.schema())
    null_true = IsNull(("tags",))  # true on a corrupt-record row, which the decoder's filter may never see
    rejected = list(reader.pushFilters(keep + [null_true, EqualTo(("topic",), "TopicTest")]))
    assert rejected == keep + [null_true] and all(a is b for a, b in zip(rejected, keep + [null_true]))


@needs_pushdown
def test_a_time_window_reads_only_the_splits_that_can_hold_it(version):
    root = root_of(version)
    msgs = sorted(rmqformats.open_store(root).commitlog.scan(), key=lambda m: m.store_timestamp)
    t0, t1 = msgs[len(msgs) // 2].store_timestamp, msgs[len(msgs) // 2 + 10].store_timestamp
    options = {"path": root, "splitSize": "8k"}
    ds = CommitLogDataSource(options=options)
    plain = ds.reader(ds.schema())
    every = plain.partitions()
    window = [GreaterThanOrEqual(("storeTimestamp",), _utc(t0)), LessThanOrEqual(("storeTimestamp",), _utc(t1))]
    reader, rejected, rows = read_pushed(options, window)
    planned = reader.partitions()
    assert 0 < len(planned) < len(every) / 3
    chosen = {(p.path, p.begin) for p in planned}
    for p in every:  # every split left out holds no message of the window
        if (p.path, p.begin) not in chosen:
            times = [r["storeTimestamp"] for r in arrow_dicts(list(plain.read(p)))]
            assert not any(t0 <= t <= t1 for t in times)
    assert sorted(r["commitLogOffset"] for r in rows) == sorted(m.commitlog_offset for m in msgs
                                                                 if t0 <= m.store_timestamp <= t1)
    offsets = [GreaterThanOrEqual(("commitLogOffset",), msgs[0].commitlog_offset + 300_000),
               LessThan(("commitLogOffset",), msgs[0].commitlog_offset + 310_000)]
    reader, rejected, rows = read_pushed(options, offsets)
    assert len(reader.partitions()) <= 3


@needs_pushdown
def test_queue_and_index_filters(version):
    root = root_of(version)
    units = [dict(zip(QUEUE_COLUMNS, r)) for r in api_queue_units(root)]
    topic = units[0]["topic"]
    cases = [([EqualTo(("topic",), topic), In(("queueId",), (0, 1))],
              lambda u: u["topic"] == topic and u["queueId"] in (0, 1)),
             ([GreaterThanOrEqual(("cqOffset",), 3), Not(EqualTo(("queueType",), "BatchCQ"))],
              lambda u: u["cqOffset"] >= 3 and u["queueType"] != "BatchCQ")]
    for filters, test in cases:
        ds = ConsumeQueueDataSource(options={"path": root, "filterPushdown": "true", "splitSize": "100"})
        reader = ds.reader(ds.schema())
        assert list(reader.pushFilters(filters)) == []
        rows = arrow_dicts([b for p in reader.partitions() for b in reader.read(p)])
        assert_same(canon(rows, QUEUE_COLUMNS), canon([u for u in units if test(u)], QUEUE_COLUMNS))
    entries = [dict(zip(INDEX_COLUMNS, r)) for r in api_index_entries(root)]
    mid = sorted(e["storeTime"] for e in entries)[len(entries) // 2]
    ds = IndexDataSource(options={"path": root, "filterPushdown": "true"})
    reader = ds.reader(ds.schema())
    assert list(reader.pushFilters([GreaterThanOrEqual(("storeTime",), _utc(mid))])) == []
    rows = arrow_dicts([b for p in reader.partitions() for b in reader.read(p)])
    assert_same(canon(rows, INDEX_COLUMNS), canon([e for e in entries if e["storeTime"] >= mid], INDEX_COLUMNS))


PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def test_spark_rows_with_pushdown_on_equal_rows_with_it_off(spark, version):
    from pyspark.sql import functions as F

    root = root_of(version)
    msgs = sorted(rmqformats.open_store(root).commitlog.scan(), key=lambda m: m.store_timestamp)
    t0, t1 = msgs[len(msgs) // 4].store_timestamp, msgs[3 * len(msgs) // 4].store_timestamp
    topic = msgs[0].topic
    middle = sorted(m.commitlog_offset for m in msgs)[len(msgs) // 2]
    queries = [
        lambda df: df.where((F.col("topic") == topic) & (F.col("storeTimestamp") >= F.lit(_utc(t0)))
                            & (F.col("storeTimestamp") < F.lit(_utc(t1)))),
        lambda df: df.where((F.col("queueId") == 1) & (F.col("commitLogOffset") > middle)
                            & F.col("tags").isNotNull() & (F.col("topic") != "x")),
    ]
    for query in queries:
        results = []
        for on in (False, True):
            spark.conf.set(PUSHDOWN_CONF, str(on).lower())
            try:
                reader = spark.read.format("rocketmq_commitlog").option("splitSize", "16k")
                df = query(reader.option("filterPushdown", str(on).lower()).load(root))
                results.append((canon(spark_dicts(df), MESSAGE_COLUMNS), df.rdd.getNumPartitions()))
            finally:
                spark.conf.unset(PUSHDOWN_CONF)
        assert results[0][0] and results[0][0] == results[1][0]
        if HAS_PUSHDOWN:
            assert results[1][1] < results[0][1]  # splits left out


def test_pushdown_option_without_spark_pushdown_fails_clearly(spark):
    if not HAS_PUSHDOWN:
        pytest.skip("Spark 4.0 has no filter pushdown for Python sources")
    df = spark.read.format("rocketmq_commitlog").option("filterPushdown", "true").load(root_of("rocketmq-5.1.4"))
    with pytest.raises(Exception, match="filterPushdown"):
        df.where("topic = 'TopicTest'").count()


@needs_pushdown
def test_formatted_explain_lists_the_pushed_filters(spark, capsys):
    """Spark's PythonScan reports the filters the reader kept as ``PushedFilters``; the others stay above it."""
    from pyspark.sql import functions as F

    def scan_and_filter(pushdown: bool) -> tuple[list[str], str]:
        spark.conf.set(PUSHDOWN_CONF, str(pushdown).lower())
        try:
            df = (spark.read.format("rocketmq_commitlog").option("filterPushdown", str(pushdown).lower())
                  .load(root_of("rocketmq-5.1.4"))
                  .where((F.col("topic") == "TopicTest") & (F.col("queueId") > 1) & F.col("body").isNotNull()))
            capsys.readouterr()
            df.explain(mode="formatted")
            plan = capsys.readouterr().out
        finally:
            spark.conf.unset(PUSHDOWN_CONF)
        pushed = [line for line in plan.splitlines() if line.startswith("PushedFilters: ")]
        condition = [line for line in plan.splitlines() if line.startswith("Condition : ")]
        assert len(pushed) <= 1 and len(condition) == 1, plan
        return pushed, condition[0]

    pushed, condition = scan_and_filter(True)
    assert pushed == ["PushedFilters: [IsNotNull(topic), IsNotNull(queueId), EqualTo(topic,TopicTest), "
                      "GreaterThan(queueId,1)]"]
    assert condition.startswith("Condition : isnotnull(body#")  # a body filter goes back to Spark
    pushed, condition = scan_and_filter(False)
    assert pushed == []  # Spark leaves out an empty list
    assert "topic#" in condition and "queueId#" in condition and "isnotnull(body#" in condition


# -- columns -----------------------------------------------------------------------------------------


def test_columns_option_decodes_only_those_columns(spark):
    root = root_of("rocketmq-5.3.3")
    cols = ["topic", "queueId", "commitLogOffset"]
    ds = CommitLogDataSource(options={"path": root, "columns": ", ".join(cols)})
    assert ds.schema().fieldNames() == cols
    reader = ds.reader(ds.schema())
    assert reader.converter().columns == tuple(cols)  # what the decoder builds
    assert set(reader.split_reader().columns) == set(cols) | {"storeSize"}  # and the split's walk position
    df = spark.read.format("rocketmq_commitlog").option("columns", ",".join(cols)).load(root)
    assert df.columns == cols
    assert_same(canon(spark_dicts(df), cols), api_messages(root, columns=cols))
    with pytest.raises(OptionError, match="names no column 'nope'"):
        CommitLogDataSource(options={"path": root, "columns": "topic,nope"})
    ds = ConsumeQueueDataSource(options={"path": root, "columns": "cqOffset,topic"})
    reader = ds.reader(ds.schema())
    rows = arrow_dicts([b for p in reader.partitions() for b in reader.read(p)])
    assert list(rows[0]) == ["cqOffset", "topic"] and len(rows) == len(api_queue_units(root))


def test_property_columns_by_name(spark):
    """``property.NAME`` columns, named by the ``columns`` option or a read's schema: each message's value of
    that property (null without it), decoded by the walk as the API's ``property.NAME`` columns are."""
    from pyspark.sql.types import LongType, StructField, StructType, StringType

    root = root_of("rocketmq-5.3.3")
    cols = ["commitLogOffset", "property.KEYS", "topic", "property.CLUSTER", "property.NO_SUCH"]
    msgs = list(rmqformats.open_store(root).commitlog.scan())
    want = [{"commitLogOffset": m.commitlog_offset, "property.KEYS": m.properties.get("KEYS"), "topic": m.topic,
             "property.CLUSTER": m.properties.get("CLUSTER"), "property.NO_SUCH": None} for m in msgs]
    assert {m["property.KEYS"] for m in want} - {None} and {m["property.KEYS"] for m in want} & {None}
    ds = CommitLogDataSource(options={"path": root, "columns": ",".join(cols)})
    assert ds.schema().fieldNames() == cols
    assert ds.schema()["property.KEYS"].dataType == StringType()
    df = spark.read.format("rocketmq_commitlog").option("columns", ",".join(cols)).load(root)
    assert df.columns == cols
    assert sorted(map(tuple, df.collect())) == sorted(tuple(m.values()) for m in want)
    schema = StructType([StructField("commitLogOffset", LongType()), StructField("property.KEYS", StringType()),
                         StructField("store", StringType())])
    df = spark.read.format("rocketmq_commitlog").schema(schema).load(root)
    rows = {r["commitLogOffset"]: r["property.KEYS"] for r in df.collect()}
    assert rows == {m["commitLogOffset"]: m["property.KEYS"] for m in want}
    assert df.where("`property.KEYS` = 'key-1 order-0'").count() == sum(
        m["property.KEYS"] == "key-1 order-0" for m in want) > 0
    # A property column is the commit log's alone, and a string.
    with pytest.raises(OptionError, match="names no column 'property.X'"):
        ConsumeQueueDataSource(options={"path": root, "columns": "cqOffset,property.X"})
    with pytest.raises(OptionError, match="names no column 'property.'"):
        CommitLogDataSource(options={"path": root, "columns": "topic,property."})
    bad = StructType([StructField("property.KEYS", LongType())])
    with pytest.raises(OptionError, match="column property.KEYS is string, not bigint"):
        CommitLogDataSource(options={"path": root}).reader(bad)
    # With filterPushdown, filters on them are left to Spark (a name with a dot, as Spark quotes it).
    from rmqformats.spark.commitlogreader import PushdownCommitLogReader
    ds = CommitLogDataSource(options={"path": root, "columns": ",".join(cols)})
    reader = PushdownCommitLogReader(ds.name(), ds.read_options, ds.schema(), ds.full_schema(ds.schema()))
    assert {"property.KEYS", "property.CLUSTER", "property.NO_SUCH"} <= reader.unfiltered()
    assert "topic" not in reader.unfiltered()


@pytest.fixture(scope="module")
def priority_store(tmp_path_factory) -> str:
    """5.4 priority and 5.5 lite-topic messages, built through the specs (the vectors hold none)."""
    from rmqformats import synth

    root = tmp_path_factory.mktemp("priority")
    specs = [synth.priority_message("TopicPriority", p, body=b"p") for p in ("3", "12", "-1", "high")]
    specs += [synth.lite_message("TopicParent", lite, body=b"l") for lite in ("user-1", "user-2")]
    specs.append(synth.MessageSpec("TopicPlain", b"x", {"TAGS": "t"}))
    synth.write_commitlog(root / "commitlog", specs, segment_size=4096)
    return str(root)


def test_priority_and_lite_topic_columns(spark, priority_store):
    """The schema's types, every batch exactly on the Arrow schema Spark derives from it, Spark's rows the
    object API's."""
    from pyspark.sql.types import IntegerType, StringType

    from rmqformats.spark.schema import arrow_schema

    root = priority_store
    schema = message_schema()
    assert schema["priority"].dataType == IntegerType() and schema["liteTopic"].dataType == StringType()
    assert MESSAGE_COLUMNS.index("liteTopic") == MESSAGE_COLUMNS.index("priority") + 1
    ds = CommitLogDataSource(options={"path": root, "splitSize": "512"})
    reader = ds.reader(ds.schema())
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    assert batches and all(b.schema.equals(arrow_schema(ds.schema())) for b in batches)
    df = spark.read.format("rocketmq_commitlog").load(root)
    assert_same(canon(spark_dicts(df), MESSAGE_COLUMNS), api_messages(root))
    rows = df.select("topic", "queueId", "priority", "liteTopic").orderBy("commitLogOffset").collect()
    assert [tuple(r) for r in rows] == [("TopicPriority", 3, 3, None), ("TopicPriority", 7, 12, None),
                                        ("TopicPriority", 0, -1, None), ("TopicPriority", 0, None, None),
                                        ("TopicParent", 0, None, "user-1"), ("TopicParent", 0, None, "user-2"),
                                        ("TopicPlain", 0, None, None)]
    picked = spark.read.format("rocketmq_commitlog").option("columns", "priority,liteTopic").load(root)
    assert sorted(map(tuple, picked.collect()), key=str) == sorted(
        [(3, None), (12, None), (-1, None), (None, None), (None, "user-1"), (None, "user-2"), (None, None)], key=str)
    assert spark.read.format("rocketmq_commitlog").load(root).where("priority >= 3").count() == 2


@needs_pushdown
def test_priority_and_lite_topic_filters_are_pushed_down(priority_store):
    for filters, want in (([GreaterThanOrEqual(("priority",), 3)], {3, 12}),
                          ([IsNotNull(("liteTopic",))], {None}),
                          ([EqualTo(("liteTopic",), "user-2"), IsNull(("priority",))], {None})):
        reader, rejected, rows = read_pushed({"path": priority_store, "splitSize": "300"}, filters)
        assert rejected == [] and {r["priority"] for r in rows} == want
    _, _, rows = read_pushed({"path": priority_store}, [IsNotNull(("liteTopic",))])
    assert sorted(r["liteTopic"] for r in rows) == ["user-1", "user-2"]


# -- streaming ---------------------------------------------------------------------------------------


def append_messages(root: str, count: int, *, topic: str = "TopicStream", roll: bool = False,
                    half: bool = False) -> list[int]:
    """Write ``count`` messages at the data end of the store's commit log (built by the package's builders).

    ``roll`` ends the last segment with a BLANK record and writes them into a
    new segment, as the broker does when a segment is full; ``half`` writes a
    last record's first half only (a record the broker is writing). Returns
    the commit-log offsets of the complete messages written.
    """
    from rmqformats.synth.commitlog import MessageSpec, encode_blank, encode_message

    log = rmqformats.open_store(root).commitlog
    scan = log.scan(live=True)
    last = max((m.queue_offset for m in scan if m.topic == topic), default=-1)
    end = scan.end
    seg = log.segments[-1]
    pos = end.file_offset
    if roll:
        with open(seg.path, "r+b") as f:
            f.seek(pos)
            f.write(encode_blank(seg.size - pos))
        start = seg.start_offset + seg.size
        path = os.path.join(os.path.dirname(seg.path), f"{start:020d}")
        with open(path, "wb") as f:
            f.truncate(seg.size)
        seg_path, pos, base = path, 0, start
    else:
        seg_path, base = seg.path, seg.start_offset
    written = []
    with open(seg_path, "r+b") as f:
        for i in range(count + (1 if half else 0)):
            spec = MessageSpec(topic=topic, body=f"message {last + 1 + i}".encode() * 3, queue_id=0,
                               queue_offset=last + 1 + i, properties={"UNIQ_KEY": f"K{base + pos:016X}"},
                               store_timestamp=1_800_000_000_000 + i, born_timestamp=1_800_000_000_000 + i)
            data = encode_message(spec, base + pos)
            f.seek(pos)
            if i == count:  # the record being written: its first half
                f.write(data[:len(data) // 2])
                break
            f.write(data)
            written.append(base + pos)
            pos += len(data)
    return written


def lake(spark, out: str) -> list[tuple]:
    """The (commit-log offset, topic, queue offset) of every message a streaming query wrote to ``out``."""
    if not (os.path.isdir(out) and any(n.endswith(".parquet") for n in os.listdir(out))):
        return []
    return list(spark.read.parquet(out).select("commitLogOffset", "topic", "queueOffset")
                .toPandas().itertuples(index=False, name=None))


def run_stream(spark, root: str, out: str, checkpoint: str, *, progress: list | None = None, **options) -> list[int]:
    """An ``availableNow`` query into Parquet; returns the commit-log offsets of the rows the run wrote.

    A message is the triple (commit-log offset, topic, queue offset): after a
    store was cut and written again, two messages of the lake can share an
    offset, but no message may be written twice. ``progress`` gets the
    query's progress reports.
    """
    before = collections.Counter(lake(spark, out))
    reader = spark.readStream.format("rocketmq_commitlog")
    for k, v in options.items():
        reader = reader.option(k, v)
    query = (reader.load(root).select("commitLogOffset", "topic", "queueOffset")
             .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination()
    finally:
        if progress is not None:
            progress.extend(query.recentProgress)
    every = collections.Counter(lake(spark, out))
    assert max(every.values(), default=1) == 1, "a message was written twice"
    return sorted(m[0] for m in every - before)


def test_streaming_reads_each_message_once(spark, tmp_path, version):
    root = str(tmp_path / "store")
    shutil.copytree(root_of(version), root)
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    first = run_stream(spark, root, out, checkpoint)
    assert first == sorted(m.commitlog_offset for m in rmqformats.open_store(root).commitlog.scan())
    added = append_messages(root, 5, half=True)  # four complete and one half-written at the end
    second = run_stream(spark, root, out, checkpoint)
    assert second == added  # the half-written record is not read
    assert run_stream(spark, root, out, checkpoint) == []  # a restart returns nothing again
    finished = append_messages(root, 1)  # the broker finishes the record it was writing
    assert run_stream(spark, root, out, checkpoint) == finished
    log = rmqformats.open_store(root).commitlog
    scan = log.scan(live=True)
    every = [m.commitlog_offset for m in scan]
    assert sorted(first + second + finished) == sorted(every)


def test_streaming_after_a_segment_roll_and_a_finished_record(spark, tmp_path):
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.3.3"), root)
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    first = run_stream(spark, root, out, checkpoint, startingOffsets="earliest")
    rolled = append_messages(root, 4, roll=True)
    assert run_stream(spark, root, out, checkpoint) == rolled
    api = sorted(m.commitlog_offset for m in rmqformats.open_store(root).commitlog.scan())
    assert sorted(first + rolled) == api


def test_streaming_reports_segments_deleted_before_they_were_read(tmp_path, caplog):
    from rmqformats.spark.streaming import CommitLogStreamReader, DataLossError

    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    segments = rmqformats.open_store(root).commitlog.segments
    aside = tmp_path / "aside"
    aside.mkdir()
    for s in segments[2:]:  # the broker has written two segments so far
        shutil.move(s.path, aside / os.path.basename(s.path))

    def reader(**options):
        ds = CommitLogDataSource(options={"path": root, "failOnDataLoss": "false", **options})
        return ds.streamReader(ds.schema())

    r = reader()
    start = r.initialOffset()
    end = r.latestOffset(start, None)
    first = arrow_dicts([b for p in r.partitions(start, end) for b in r.read(p)])
    assert sorted(x["commitLogOffset"] for x in first) == sorted(
        m.commitlog_offset for m in rmqformats.open_store(root).commitlog.scan())
    for s in segments[2:]:  # the broker writes three more and retention deletes the first three
        shutil.move(aside / os.path.basename(s.path), s.path)
    for s in segments[:3]:
        os.remove(s.path)
    r = reader()
    with caplog.at_level("WARNING"):
        later = r.latestOffset(end, None)
        second = arrow_dicts([b for p in r.partitions(end, later) for b in r.read(p)])
    lost = segments[3].start_offset - list(end["stores"].values())[0]["offset"]
    assert list(later["stores"].values())[0]["lost"] == lost > 0
    assert any("were deleted" in rec.getMessage() and str(lost) in rec.getMessage() for rec in caplog.records)
    assert sorted(x["commitLogOffset"] for x in second) == sorted(
        m.commitlog_offset for m in rmqformats.open_store(root).commitlog.scan())
    with pytest.raises(DataLossError, match="failOnDataLoss"):
        reader(failOnDataLoss="true").latestOffset(end, None)


def store_offsets(root: str, *, since: int = 0) -> list[int]:
    """The commit-log offsets of the messages of the store's commit log from ``since`` on (live-store rules)."""
    return sorted(m.commitlog_offset for m in rmqformats.open_store(root).commitlog.scan(live=True)
                  if m.commitlog_offset >= since)


def stream_fails(spark, root: str, out: str, checkpoint: str, match: str, **options) -> None:
    """The ``availableNow`` query fails with a message matching ``match`` and writes nothing."""
    from pyspark.errors import StreamingQueryException

    before = lake(spark, out)
    with pytest.raises(StreamingQueryException, match=re.escape(match)) as failed:
        run_stream(spark, root, out, checkpoint, **options)
    assert "DataLossError" in str(failed.value) and "failOnDataLoss=true" in str(failed.value)
    assert lake(spark, out) == before


#: Spark hands latestOffset() the start of a micro-batch from 4.2 on; before, the first micro-batch after a
#: restart finds a loss when planning, and its offset (made before) does not count it in ``lost``.
SPARK_PASSES_START = tuple(int(p) for p in __import__("pyspark").__version__.split(".")[:2]) >= (4, 2)


def lost_in_progress(progress: list) -> int:
    """The ``lost`` count of the store in the last progress report's end offset."""
    end = progress[-1]["sources"][0]["endOffset"]
    if isinstance(end, str):  # JSON on Spark 4.3; Spark 4.0 shows a Python source's offset as the dict's repr
        end = json.loads(end) if end.startswith('{"') else ast.literal_eval(end)
    (state,) = end["stores"].values()
    return state["lost"]


def test_streaming_unread_segment_deleted_fails_or_is_skipped(spark, tmp_path):
    """Run 1 reads segments 0-1; 2-4 are written and 2 (unread, one message) is deleted; run 2 names the gap."""
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    segments = rmqformats.open_store(root).commitlog.segments
    aside = tmp_path / "aside"
    aside.mkdir()
    for s in segments[2:]:
        shutil.move(s.path, aside / s.name)
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    assert run_stream(spark, root, out, checkpoint) == store_offsets(root)
    for s in segments[2:]:
        shutil.move(aside / s.name, s.path)
    unread = store_offsets(root, since=segments[2].start_offset)
    assert len([o for o in unread if o < segments[3].start_offset]) == 1  # one message starts in segment 2
    os.remove(segments[2].path)
    gap = f"offsets {segments[2].start_offset} to {segments[3].start_offset} ({segments[2].size} bytes) were deleted"
    stream_fails(spark, root, out, checkpoint, gap)  # failOnDataLoss is true by default, as Kafka's
    stream_fails(spark, root, out, checkpoint, gap, failOnDataLoss="true")
    progress: list = []
    second = run_stream(spark, root, out, checkpoint, failOnDataLoss="false", progress=progress)
    assert second == store_offsets(root, since=segments[3].start_offset) == unread[1:]
    if SPARK_PASSES_START:
        assert lost_in_progress(progress) == segments[2].size
    assert run_stream(spark, root, out, checkpoint, failOnDataLoss="true") == []  # the loss is reported once


def cut_and_write_again(root: str, keep: int, count: int) -> tuple[int, int, list[int]]:
    """Cut the last segment at its ``keep``-th last message (zeros from there, as a recovery that dropped
    unflushed pages leaves it) and write ``count`` new messages from there with the package's builders.

    Returns the cut offset, the data end before the cut and the new messages' offsets.
    """
    log = rmqformats.open_store(root).commitlog
    scan = log.scan(live=True)
    messages = list(scan)
    end = scan.end.offset
    cut = messages[-keep].commitlog_offset
    seg = log.segments[-1]
    assert cut >= seg.start_offset
    with open(seg.path, "r+b") as f:
        f.seek(cut - seg.start_offset)
        f.write(bytes(seg.start_offset + seg.size - cut))
    return cut, end, append_messages(root, count)


def test_streaming_data_end_moved_back_and_written_again(spark, tmp_path):
    """Run 1 reads everything; the last segment is cut below the offset and six records written from there."""
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    first = run_stream(spark, root, out, checkpoint)
    assert first == store_offsets(root)
    cut, end, new = cut_and_write_again(root, 3, 6)
    assert len(new) == 6 and new[0] == cut < new[-1] < end  # all six start below the offset run 1 reached
    moved = f"offsets {cut} to {end} ({end - cut} bytes) were read by this streaming query but the store no longer"
    stream_fails(spark, root, out, checkpoint, moved)
    progress: list = []
    assert run_stream(spark, root, out, checkpoint, failOnDataLoss="false", progress=progress) == new
    if SPARK_PASSES_START:
        assert lost_in_progress(progress) == end - cut
    assert run_stream(spark, root, out, checkpoint) == []
    assert sorted(m[0] for m in lake(spark, out)) == sorted(first + new)


def test_streaming_retention_of_read_segments_and_growth_lose_nothing(spark, tmp_path):
    """Read segments deleted by retention, new segments and appended records: every message once, lost 0."""
    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    segments = rmqformats.open_store(root).commitlog.segments
    aside = tmp_path / "aside"
    aside.mkdir()
    for s in segments[3:]:
        shutil.move(s.path, aside / s.name)
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    first = run_stream(spark, root, out, checkpoint, failOnDataLoss="true")
    assert first == store_offsets(root)
    for s in segments[3:]:  # the broker writes on, and retention deletes every segment read so far
        shutil.move(aside / s.name, s.path)
    for s in segments[:3]:
        os.remove(s.path)
    progress: list = []
    second = run_stream(spark, root, out, checkpoint, failOnDataLoss="true", progress=progress)
    assert second == store_offsets(root)
    assert lost_in_progress(progress) == 0
    added = append_messages(root, 3)
    assert run_stream(spark, root, out, checkpoint, failOnDataLoss="true", progress=progress) == added
    assert lost_in_progress(progress) == 0


def _stream_reader(root: str, **options):
    ds = CommitLogDataSource(options={"path": root, **options})
    return ds.streamReader(ds.schema())


def _batch(reader, start: dict, end: dict) -> list[int]:
    return sorted(x["commitLogOffset"] for x in arrow_dicts([b for p in reader.partitions(start, end)
                                                              for b in reader.read(p)]))


def test_stream_reader_checks_the_start_where_spark_passes_none(tmp_path):
    """Spark 4.0 and 4.1 call latestOffset() without the start: after a restart the loss is found in planning."""
    from rmqformats.spark.streaming import DataLossError

    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    r = _stream_reader(root)
    start = r.initialOffset()
    committed = r.latestOffset()  # no start: the first call of a query
    assert _batch(r, start, committed) == store_offsets(root)
    assert _stream_reader(root).latestOffset(committed, None) is committed  # nothing new: the same offset
    cut, end, new = cut_and_write_again(root, 3, 6)
    restarted = _stream_reader(root)
    later = restarted.latestOffset()  # a restarted query: Spark hands only the committed start to partitions()
    assert "from" not in later["stores"][root]
    with pytest.raises(DataLossError, match=re.escape(f"offsets {cut} to {end} ")):
        restarted.partitions(committed, later)
    lenient = _stream_reader(root, failOnDataLoss="false")
    assert _batch(lenient, committed, lenient.latestOffset()) == new


def test_stream_reader_truncation_and_a_rewrite_past_the_dense_marks(tmp_path, caplog):
    """A plain cut below the offset is a loss with nothing to read; growth from the cut is read once; a rewrite
    reaching past the 32 dense fingerprints re-reads the records after the last unchanged one, and says so."""
    from rmqformats.spark.continuity import DENSE

    root = str(tmp_path / "store")
    shutil.copytree(root_of("rocketmq-5.1.4"), root)
    r = _stream_reader(root, failOnDataLoss="false")
    start = r.initialOffset()
    first = r.latestOffset(start, None)
    assert _batch(r, start, first) == store_offsets(root)
    # The data end moves back below the offset; nothing written since.
    log = rmqformats.open_store(root).commitlog
    seg = log.segments[-1]
    cut = store_offsets(root)[-2]
    with open(seg.path, "r+b") as f:
        f.seek(cut - seg.start_offset)
        f.write(bytes(seg.start_offset + seg.size - cut))
    with caplog.at_level("WARNING"):
        moved = r.latestOffset(first, None)
    state = moved["stores"][root]
    old_end = first["stores"][root]["offset"]
    assert (state["from"], state["offset"], state["lost"]) == (cut, cut, old_end - cut)
    assert _batch(r, first, moved) == []
    assert any(f"offsets {cut} to {old_end} " in rec.getMessage() for rec in caplog.records)
    grown = append_messages(root, DENSE + 8)  # the broker writes on from the cut
    more = r.latestOffset(moved, None)
    assert more["stores"][root]["lost"] == old_end - cut  # growth is no loss
    assert _batch(r, moved, more) == grown
    # A rewrite from below the 32 records the offset remembers one by one.
    caplog.clear()
    read = store_offsets(root)
    cut2, end2, again = cut_and_write_again(root, DENSE + 4, 5)
    with caplog.at_level("WARNING"):
        rewound = r.latestOffset(more, None)
    state = rewound["stores"][root]
    assert state["from"] <= cut2 and state["offset"] == again[-1] + (again[-1] - again[-2])
    reread = [o for o in read if state["from"] <= o < cut2]
    assert _batch(r, more, rewound) == sorted(reread + again)
    assert state["lost"] == old_end - cut + end2 - state["from"]
    text = " ".join(rec.getMessage() for rec in caplog.records)
    assert f"offsets {state['from']} to {end2} " in text and ("read again" in text) == bool(reread)


# -- decoded system columns (decodeSystem) ------------------------------------------------------------


def api_system_rows(root: str) -> list[dict]:
    """``commitLogOffset``, ``store`` and the decoded system columns of every message, by the Python API
    (:func:`rmqformats.systopics.with_system_columns`, held to the truth files in tests/test_systopics.py)."""
    from rmqformats.systopics import with_system_columns
    from rmqformats.systopics.batches import NEEDED
    rows = []
    for batch in rmqformats.open_store(root).commitlog.batches(columns=["commitLogOffset", *NEEDED]):
        rows += [{**r, "store": root} for r in arrow_dicts([with_system_columns(batch, ["commitLogOffset"])])]
    return rows


def test_decoded_system_columns_equal_the_python_api(spark, version):
    from pyspark.sql.pandas.types import from_arrow_type

    from rmqformats.systopics import DECODED_SCHEMA, SYSTEM_COLUMNS
    root = root_of(version)
    columns = ["commitLogOffset", *SYSTEM_COLUMNS, "store"]
    want = canon(api_system_rows(root), columns)
    assert {r[1] for r in want} >= {"scheduled", "transactionHalf", "retry", "deadLetter"}
    # Split by split in this process, every column and only the system ones.
    for split in ("4096", None):
        options = {"path": root, "decodeSystem": "true", **({"splitSize": split} if split else {})}
        _, rows = read_in_process(CommitLogDataSource, options)
        assert_same(canon(rows, columns), want)
        _, rows = read_in_process(CommitLogDataSource, {**options, "columns": ",".join(columns)})
        assert_same(canon(rows, columns), want)
    # By Spark: the types are the Arrow batches' (Spark 4.2+ checks the first batch's schema to the letter).
    df = spark.read.format("rocketmq_commitlog").option("decodeSystem", "true").load(root)
    assert df.columns == MESSAGE_COLUMNS[:-1] + list(SYSTEM_COLUMNS) + ["store"]
    for f in DECODED_SCHEMA:
        t = df.schema[f.name].dataType
        assert t.simpleString() == ("timestamp" if pa.types.is_timestamp(f.type) else
                                    from_arrow_type(f.type).simpleString()), f.name
    assert_same(canon(arrow_dicts(df.select(*columns).toArrow().to_batches()), columns), want)
    assert "kind" not in spark.read.format("rocketmq_commitlog").load(root).columns


def test_streaming_gives_the_decoded_system_columns_of_the_batch_source(spark, tmp_path):
    """The stream reader (micro-batch by micro-batch, and by Spark in an availableNow query) gives the decoded
    system columns, with the types and values of the batch source, the source's options applied."""
    from rmqformats.systopics import SYSTEM_COLUMNS
    root = root_of("rocketmq-5.3.3")
    options = {"decodeSystem": "true", "messageDelayLevel": "2s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m"}
    columns = ["commitLogOffset", *SYSTEM_COLUMNS, "store"]
    _, rows = read_in_process(CommitLogDataSource, {"path": root, **options})
    want = canon(rows, columns)
    assert {r[1] for r in want} >= {"scheduled", "timer", "timerCancel", "transactionHalf", "retry", "deadLetter"}
    # In this process, in two micro-batches split at a message in the middle of the commit log.
    r = _stream_reader(root, **options)
    start, end = r.initialOffset(), r.latestOffset()
    offsets = store_offsets(root)
    middle = {"stores": {root: {"offset": offsets[len(offsets) // 2], "lost": 0, "marks": []}}}
    got = [arrow_dicts([b for p in r.partitions(a, b) for b in r.read(p)]) for a, b in ((start, middle),
                                                                                        (middle, end))]
    assert got[0] and got[1]
    assert_same(canon(got[0] + got[1], columns), want)
    # By Spark: a streaming query reads the same rows, with the batch source's types.
    reader = spark.readStream.format("rocketmq_commitlog")
    for k, v in options.items():
        reader = reader.option(k, v)
    query = (reader.load(root).select(*columns).writeStream.format("memory").queryName("decoded_stream")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    streamed = spark.table("decoded_stream")
    batch = spark.read.format("rocketmq_commitlog").options(**options).load(root).select(*columns)
    assert streamed.schema == batch.schema
    assert_same(canon(arrow_dicts(streamed.toArrow().to_batches()), columns), want)


def test_decode_system_options():
    root = root_of("rocketmq-5.3.3")
    with pytest.raises(OptionError, match="decodeSystem"):
        CommitLogDataSource(options={"path": root, "messageDelayLevel": "1s"})
    with pytest.raises(OptionError, match="messageDelayLevel"):
        CommitLogDataSource(options={"path": root, "decodeSystem": "true", "messageDelayLevel": "1q"})
    with pytest.raises(OptionError, match="no column 'kind'"):
        CommitLogDataSource(options={"path": root, "columns": "kind"})
    levels = "2s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
    _, rows = read_in_process(CommitLogDataSource, {"path": root, "decodeSystem": "true", "messageDelayLevel": levels,
                                                    "columns": "storeTimestamp,properties,kind,dueTime"})
    scheduled = [r for r in rows if r["kind"] == "scheduled"]
    assert len(scheduled) == 4
    from rmqformats.systopics import parse_delay_levels
    delays = parse_delay_levels(levels)
    for r in scheduled:
        assert r["dueTime"] == r["storeTimestamp"] + delays[int(dict(r["properties"])["DELAY"]) - 1]


def test_split_decoder_gives_the_decoded_system_columns():
    from rmqformats.systopics import SYSTEM_COLUMNS, SystemDecoding
    root = root_of("rocketmq-5.3.3")
    columns = ["commitLogOffset", *SYSTEM_COLUMNS, "store"]
    decode = SplitDecoder(columns=columns, system=SystemDecoding())
    assert decode.schema.fieldNames() == columns
    ranges = pa.RecordBatch.from_pylist([{"path": p, "start": b, "end": e}
                                         for p, b, e in segment_splits(root, split_size=4096)])
    assert_same(canon(arrow_dicts(list(decode([ranges]))), columns), canon(api_system_rows(root), columns))


@needs_pushdown
def test_filters_on_decoded_columns_go_back_to_spark():
    root = root_of("rocketmq-5.3.3")
    reader, rejected, rows = read_pushed({"path": root, "decodeSystem": "true"},
                                         [EqualTo(("topic",), "rmq_sys_wheel_timer"), EqualTo(("kind",), "timer")])
    assert [f.attribute for f in rejected] == [("kind",)]
    assert {r["kind"] for r in rows} == {"timer", "timerCancel"} and len(rows) == 9


# -- body decoders (bodyDecoder, bodyFields) -----------------------------------------------------------


@pytest.fixture
def typed_store(tmp_path):
    import bodystores
    bodystores.need_packages()
    root = tmp_path / "typed"
    return str(root), bodystores.write_store(root)


def test_body_fields_equal_the_built_bodies_split_by_split(typed_store):
    import bodystores
    root, specs = typed_store
    names = [f"body.{f}" for f in bodystores.FIELDS.split(",")]
    for topic, spec in specs.items():
        for split in ("64", None):
            options = {"path": root, "topics": topic, "bodyDecoder": spec, "bodyFields": bodystores.FIELDS,
                       **({"splitSize": split} if split else {})}
            _, rows = read_in_process(CommitLogDataSource, options)
            rows.sort(key=lambda r: r["commitLogOffset"])
            assert [{k: r[k] for k in names} for r in rows[:2]] == bodystores.EXPECTED, (topic, split)
            assert rows[2]["body"] == bodystores.BAD and rows[2]["bodyDecodeError"]
            assert all(rows[2][k] is None for k in names)
        # Only the columns named: the body is read for the decoder, not given.
        _, rows = read_in_process(CommitLogDataSource, {"path": root, "topics": topic, "bodyDecoder": spec,
                                                        "columns": "commitLogOffset,bodyDecoded,bodyDecodeError"})
        assert [list(r) for r in rows] == [["commitLogOffset", "bodyDecoded", "bodyDecodeError"]] * 3
        rows.sort(key=lambda r: r["commitLogOffset"])
        assert [json.loads(r["bodyDecoded"]) for r in rows[:2]] == bodystores.ORDERS
        assert rows[2]["bodyDecoded"] is None and rows[2]["bodyDecodeError"]
    assert "bodyDecoded" not in read_in_process(CommitLogDataSource, {"path": root, "topics": "Json"})[1][0]


def test_body_decoder_options_are_checked_at_load(typed_store):
    root, specs = typed_store
    for options, words in (({"bodyFields": "order"}, "option bodyFields: body fields need a body decoder"),
                           ({"bodyDecoder": "nope"}, "option bodyDecoder: unknown body decoder 'nope'"),
                           ({"bodyDecoder": specs["Proto"] + "x"}, "has no message 'shop.Orderx'"),
                           ({"bodyDecoder": "text:utf-8", "bodyFields": "a"}, "gives text, which has no fields"),
                           ({"bodyDecoder": "json", "columns": "body.order"}, "no column 'body.order'")):
        with pytest.raises(OptionError, match=re.escape(words)):
            CommitLogDataSource(options={"path": root, **options})


def test_split_decoder_gives_the_body_fields(typed_store):
    import bodystores
    root, specs = typed_store
    columns = ["commitLogOffset", "topic", "body.order", "body.customer.id", "bodyDecodeError"]
    decode = SplitDecoder(columns=columns, body_decoder=specs["Proto"], body_fields="order,customer.id")
    assert decode.schema.fieldNames() == columns
    ranges = pa.RecordBatch.from_pylist([{"path": p, "start": b, "end": e}
                                         for p, b, e in segment_splits(root, split_size=256)])
    rows = sorted((r for r in arrow_dicts(list(decode([ranges]))) if r["topic"] == "Proto"),
                  key=lambda r: r["commitLogOffset"])
    assert [(r["body.order"], r["body.customer.id"]) for r in rows] == [("1", "c1"), ("2", "c2"), (None, None)]
    assert rows[2]["bodyDecodeError"].startswith("DecodeError")
    with pytest.raises(OptionError, match="need a body_decoder"):
        SplitDecoder(body_fields="order")


@needs_pushdown
def test_filters_on_body_columns_go_back_to_spark(typed_store):
    root, specs = typed_store
    reader, rejected, rows = read_pushed({"path": root, "bodyDecoder": specs["Avro"], "bodyFields": "sku"},
                                         [EqualTo(("topic",), "Avro"), EqualTo(("body.sku",), "a-1")])
    assert [f.attribute for f in rejected] == [("body.sku",)]
    assert sorted(r["body.sku"] or "" for r in rows) == ["", "a-1", "b-2"]


def test_body_fields_by_spark(spark, typed_store):
    import bodystores
    root, specs = typed_store
    for topic in ("Proto", "Avro"):
        df = (spark.read.format("rocketmq_commitlog").option("bodyDecoder", specs[topic])
              .option("bodyFields", bodystores.FIELDS).option("topics", topic).load(root))
        assert df.columns[-6:] == [f"body.{f}" for f in bodystores.FIELDS.split(",")] + ["bodyDecodeError", "store"]
        df.createOrReplaceTempView("typed")
        rows = [r.asDict() for r in spark.sql(
            "SELECT CAST(`body.order` AS INT) AS o, `body.customer.id` AS c, `body.tags.1` AS t, bodyDecodeError AS e "
            "FROM typed ORDER BY commitLogOffset").collect()]
        assert rows[:2] == [{"o": 1, "c": "c1", "t": "y", "e": None}, {"o": 2, "c": "c2", "t": None, "e": None}]
        assert rows[2]["o"] is None and rows[2]["e"]


# -- the same SQL on DuckDB (rmqformats sql) and on Spark ---------------------------------------------


def sql_queries(root: str) -> list[str]:
    """A few queries both engines read alike: counts and bytes per topic and queue, a filter on tags and
    time, a key and a property lookup, the decoded system columns."""
    msgs = sorted(rmqformats.open_store(root).commitlog.scan(), key=lambda m: m.store_timestamp)
    middle = msgs[len(msgs) // 2].store_timestamp
    since = f"{_utc(middle):%Y-%m-%d %H:%M:%S}.{middle % 1000:03d}"
    key = next(m.keys[0] for m in msgs[len(msgs) // 3:] if m.keys)
    return [
        "SELECT topic, queueId, count(*) AS n, CAST(sum(storeSize) AS BIGINT) AS bytes FROM messages "
        "GROUP BY topic, queueId",
        "SELECT commitLogOffset, topic, tags, keys, storeTimestamp FROM messages "
        f"WHERE tags IN ('TagA', 'TagB') AND storeTimestamp >= TIMESTAMP '{since}'",
        "SELECT commitLogOffset, msgId, properties['UNIQ_KEY'] AS uniq, properties['KEYS'] AS keyText "
        f"FROM messages WHERE array_contains(keys, '{key}')",
        "SELECT kind, realTopic, count(*) AS n, min(dueTime) AS firstDue, max(transactionCheckTimes) AS checks, "
        "max(retryCount) AS retries FROM messages GROUP BY kind, realTopic",
    ]


def test_sql_on_duckdb_and_on_spark_give_the_same_rows(spark, version):
    pytest.importorskip("duckdb")
    root = root_of(version)
    store = rmqformats.open_store(root)
    spark.read.format("rocketmq_commitlog").option("decodeSystem", "true").load(root) \
        .createOrReplaceTempView("messages")
    try:
        for query in sql_queries(root):
            duck = store.sql(query).read_all()
            sp = spark.sql(query).toArrow()
            assert sp.column_names == duck.column_names, query
            got, want = canon(arrow_dicts(sp.to_batches()), sp.column_names), \
                canon(arrow_dicts(duck.to_batches()), duck.column_names)
            assert got, query
            assert got == want, query
    finally:
        spark.catalog.dropTempView("messages")
