"""PySpark adapter of rmqformats (``pip install rmqformats[spark]``, Spark 4+): store files as DataFrames.

::

    from rmqformats.spark import register
    register(spark)
    messages = spark.read.format("rocketmq_commitlog").load("/data/rocketmq/store")
    units = spark.read.format("rocketmq_consumequeue").load("/data/rocketmq/store")
    entries = spark.read.format("rocketmq_index").load("/data/rocketmq/store")
    new = spark.readStream.format("rocketmq_commitlog").load("/data/rocketmq/store")   # a live store

With ``spark.sql.python.filterPushdown.enabled`` (Spark 4.1+) and the option
``filterPushdown``, the sources apply a query's filters while decoding and
leave out the splits that cannot hold a row (:mod:`.filters`).

Executors run the interpreter named by ``PYSPARK_PYTHON``; it needs
rmqformats and pyarrow, and the store must be at the same path on the driver
and every executor (a shared or mounted file system). The core package never
imports this one.
"""

try:
    import pyspark  # noqa: F401
except ImportError as _exc:
    raise ModuleNotFoundError("rmqformats.spark needs PySpark, which rmqformats installs with its [spark] "
                              "extra: pip install 'rmqformats[spark]'", name="pyspark") from _exc

from .commitlog import CommitLogDataSource
from .functions import BinaryFileDecoder, SplitDecoder, segment_splits
from .index import IndexDataSource
from .malformed import MalformedRecordError
from .options import OptionError
from .paths import PathError
from .queues import ConsumeQueueDataSource
from .schema import index_schema, message_schema, queue_schema
from .streaming import CommitLogStreamReader, DataLossError

#: The data sources :func:`register` registers.
SOURCES = (CommitLogDataSource, ConsumeQueueDataSource, IndexDataSource)


def register(spark) -> None:
    """Register ``rocketmq_commitlog``, ``rocketmq_consumequeue`` and ``rocketmq_index`` with a SparkSession."""
    for source in SOURCES:
        spark.dataSource.register(source)


__all__ = [
    "SOURCES", "BinaryFileDecoder", "CommitLogDataSource", "CommitLogStreamReader", "ConsumeQueueDataSource",
    "DataLossError", "IndexDataSource",
    "MalformedRecordError", "OptionError", "PathError", "SplitDecoder", "index_schema", "message_schema",
    "queue_schema", "register", "segment_splits",
]
