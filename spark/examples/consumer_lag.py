"""Consumer lag per group, topic and queue, from the consume queues and ``config/consumerOffset.json``.

The queues' max offsets come from Spark (``rocketmq_consumequeue``: the unit
after the last, ``cqOffset + batchSize``); the committed offsets from the
store's JSON files, read by rmqformats on the driver. As the broker counts
it (and ``rmqformats lag``): lag = max offset - committed offset, at least 0;
the queues of a topic a group has committed nothing on count from 0::

    python spark/examples/consumer_lag.py
    spark-submit --master yarn spark/examples/consumer_lag.py /data/rocketmq/store
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import parser, session, store_path  # noqa: E402


def committed_offsets(store: str) -> list[tuple[str, str, int, int]]:
    """``(topic, group, queueId, offset)`` from ``consumerOffset.json`` and ``lmqConsumerOffset.json``."""
    import rmqformats

    config = rmqformats.open_store(store).config()
    rows = []
    for offsets in (config.consumer_offsets, config.lmq_consumer_offsets):
        if offsets is not None:
            rows += [(topic, group, qid, offset) for (topic, group, qid), offset in offsets.offsets.items()]
    return rows


def run(spark, store: str):
    """A DataFrame of ``group``, ``topic``, ``queueId``, ``committedOffset``, ``maxOffset``, ``lag``."""
    from pyspark.sql import functions as F

    queues = (spark.read.format("rocketmq_consumequeue").load(store)
              .groupBy("topic", "queueId")
              .agg(F.max(F.col("cqOffset") + F.col("batchSize")).alias("maxOffset")))
    committed = spark.createDataFrame(committed_offsets(store),
                                      "topic string, group string, queueId int, committedOffset long")
    # Every queue of a topic a group consumes, committed or not, and every committed queue.
    wanted = (committed.select("topic", "group").distinct().join(queues.select("topic", "queueId"), "topic")
              .unionByName(committed.select("topic", "group", "queueId")).distinct())
    return (wanted.join(committed, ["topic", "group", "queueId"], "left")
            .join(queues, ["topic", "queueId"], "left")
            .withColumn("maxOffset", F.coalesce("maxOffset", F.lit(0)))
            .withColumn("lag", F.greatest(F.col("maxOffset") - F.coalesce("committedOffset", F.lit(0)), F.lit(0)))
            .select("group", "topic", "queueId", "committedOffset", "maxOffset", "lag")
            .orderBy("group", "topic", "queueId"))


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    spark = session("rocketmq-consumer-lag", args.master)
    lag = run(spark, store_path(args.store))
    lag.show(1000, truncate=False)
    lag.groupBy("group").agg({"lag": "sum"}).show(truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
