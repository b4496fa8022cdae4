"""Columnar decoding: commit logs as Arrow record batches, tables and pandas frames.

The record walk (:mod:`rmqformats.walk`, below the readers) runs in compiled
code (numba) and the columns are built in bulk from offset buffers, so the
per-message cost stays out of the interpreter. It is the one walk of the
commit log: the object API's messages are made from its rows
(:mod:`rmqformats.walk.messages`). This package offers its columns and scan,
and what is built on them: queue and index files as batches
(:mod:`.queues`) and the store summary (:mod:`.summary`). Start from a
store::

    import rmqformats
    log = rmqformats.open_store("/data/rocketmq/store").commitlog
    for batch in log.batches(columns=["commitLogOffset", "topic", "body"]):
        ...                                     # pyarrow.RecordBatch
    table = log.to_arrow(topic="TopicTest", since="2026-11-21T09:53:00Z")
"""

from ..walk.arrow import COLUMNS, SCHEMA
from ..walk.kernels import warm_up
from ..walk.scan import DEFAULT_BATCH_BYTES, DEFAULT_BATCH_SIZE, ColumnarScan, find_record_start

__all__ = ["COLUMNS", "DEFAULT_BATCH_BYTES", "DEFAULT_BATCH_SIZE", "SCHEMA", "ColumnarScan", "find_record_start", "warm_up"]
