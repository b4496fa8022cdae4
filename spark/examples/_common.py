"""What the example jobs share: their command line and a SparkSession with the sources registered."""

from __future__ import annotations

import argparse
import os
import sys


def parser(description: str) -> argparse.ArgumentParser:
    """The jobs' command line: the store (default: the sample bundled with rmqformats) and ``--master``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("store", nargs="?", help="store root, commitlog/ folder, glob or file: URI "
                                            "(default: the bundled sample store)")
    p.add_argument("--master", help="Spark master when run with python (spark-submit sets its own); "
                                    "default local[*]")
    p.add_argument("--split-size", help="splitSize option, e.g. 256m")
    return p


def session(app: str, master: str | None):
    """A SparkSession (spark-submit's, or a local one) with the rocketmq sources registered."""
    from pyspark.sql import SparkSession

    from rmqformats.spark import register

    builder = SparkSession.builder.appName(app)
    # spark-submit starts the JVM first and hands its port to Python: its master and Python stand.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    if not submitted:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors run this interpreter
    if master or not submitted:
        builder = builder.master(master or "local[*]")
    spark = builder.getOrCreate()
    register(spark)
    return spark


def store_path(given: str | None) -> str:
    """The store to read: the one given, or the bundled sample."""
    if given:
        return given
    import rmqformats
    return rmqformats.sample_store_path()
