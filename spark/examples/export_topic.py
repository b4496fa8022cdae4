"""A Parquet export of the messages of one topic.

The topic is filtered while decoding (``topics`` option); the Parquet files
hold every column of the message, ``storeTimestamp`` as a timestamp::

    python spark/examples/export_topic.py --topic TopicTest --out /tmp/topictest.parquet
    spark-submit --master yarn spark/examples/export_topic.py /data/rocketmq/store --topic Orders --out hdfs:///exports/orders
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import parser, session, store_path  # noqa: E402


def run(spark, store: str, topic: str, out: str, split_size: str | None = None) -> int:
    """Write the messages of ``topic`` to Parquet at ``out`` (replacing it); returns how many."""
    reader = spark.read.format("rocketmq_commitlog").option("topics", topic)
    if split_size:
        reader = reader.option("splitSize", split_size)
    messages = reader.load(store)
    messages.write.mode("overwrite").parquet(out)
    return spark.read.parquet(out).count()


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--topic", default="TopicTest", help="topic to export (default TopicTest)")
    p.add_argument("--out", default="rocketmq-export.parquet", help="output folder or URI")
    args = p.parse_args(argv)
    spark = session("rocketmq-export-topic", args.master)
    n = run(spark, store_path(args.store), args.topic, args.out, args.split_size)
    print(f"{n} messages of {args.topic} written to {args.out}")
    spark.stop()


if __name__ == "__main__":
    main()
