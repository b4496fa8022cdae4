"""The PySpark data source returns the same messages as RocketMQ's ground truth."""

from __future__ import annotations

import base64
import os
import sys

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from conftest import store_path, truth_records  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    from rmqformats.spark import register

    # Executors must run this interpreter, which has rmqformats and pyarrow.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("rmqformats-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


def test_reads_every_message(spark, version):
    truth = {t["commitlogOffset"]: t for t in truth_records(version) if t["kind"] == "MESSAGE"}
    df = spark.read.format("rocketmq_commitlog").option("batchSize", 64).load(str(store_path(version)))
    rows = df.collect()
    assert df.rdd.getNumPartitions() == 5  # one per segment
    assert sorted(r.commitLogOffset for r in rows) == sorted(truth)
    bad = 0
    for r in rows:
        t = truth[r.commitLogOffset]
        body = base64.b64decode(t.get("bodyDecompressedBase64", t["bodyRawBase64"]))
        bad += (r.storeSize, r.bodyCRC, r.queueId, r.queueOffset, r.sysFlag, r.storeTimestamp, r.topic,
                dict(r.properties), r.msgId, r.uniqKey, r.tags, bytes(r.body), r.segment) != (
            t["storeSize"], t["bodyCRC"], t["queueId"], t["queueOffset"], t["sysFlag"], t["storeTimestamp"],
            t["topic"], t["properties"], t["msgId"], t["uniqKey"], t["tags"], body, t["file"])
    assert bad == 0


def test_sql_over_the_commit_log(spark):
    df = spark.read.format("rocketmq_commitlog").load(str(store_path("rocketmq-5.1.4")))
    df.createOrReplaceTempView("commitlog")
    counts = {r.queueId: r.n for r in spark.sql(
        "SELECT queueId, count(*) AS n FROM commitlog WHERE topic = 'TopicTest' GROUP BY queueId").collect()}
    assert counts == {0: 32, 1: 34, 2: 34, 3: 31}
