"""PySpark adapter of rmqformats (``pip install rmqformats[spark]``, Spark 4+)."""

from .commitlog import SCHEMA, CommitLogDataSource, register

__all__ = ["SCHEMA", "CommitLogDataSource", "register"]
