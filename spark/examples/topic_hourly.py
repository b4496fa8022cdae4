"""Messages per topic and hour of a store's commit log.

Only ``topic`` and ``storeTimestamp`` are decoded (the schema given to the
reader names them), so bodies are never copied::

    python spark/examples/topic_hourly.py                       # the bundled sample, local[*]
    spark-submit --master spark://host:7077 spark/examples/topic_hourly.py /data/rocketmq/store --split-size 256m
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import parser, session, store_path  # noqa: E402


def run(spark, store: str, split_size: str | None = None):
    """A DataFrame of ``topic``, ``hour`` (the store time truncated to the hour) and ``messages``."""
    from pyspark.sql import functions as F

    reader = spark.read.format("rocketmq_commitlog").schema("topic string, storeTimestamp timestamp")
    if split_size:
        reader = reader.option("splitSize", split_size)
    return (reader.load(store)
            .groupBy("topic", F.date_trunc("hour", "storeTimestamp").alias("hour"))
            .agg(F.count("*").alias("messages"))
            .orderBy("topic", "hour"))


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    spark = session("rocketmq-topic-hourly", args.master)
    run(spark, store_path(args.store), args.split_size).show(1000, truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
