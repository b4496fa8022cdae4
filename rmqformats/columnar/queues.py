"""The units of every consume queue of a store as one stream of Arrow record batches.

The conversion of one queue or index file is :mod:`rmqformats.queuearrow`, which the readers call for
their ``to_arrow()``; this module walks every queue of a store with it (its names are importable from
here too)::

    store = rmqformats.open_store("/data/rocketmq/store")
    for batch in store.queue_batches(batch_queues=True):    # every queue of the store
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import numpy as np

from ..errors import RmqFormatError
from ..queuearrow import (  # noqa: F401  (every name of the per-file conversion, importable from here)
    BCQ_SCHEMA,
    CQ_SCHEMA,
    DEFAULT_BATCH_SIZE,
    INDEX_HEADER_SCHEMA,
    INDEX_SCHEMA,
    QUEUE_UNITS_SCHEMA,
    TIMESTAMP,
    _BATCH_SIZE_TYPE,
    _CQ_FIELDS,
    Batches,
    _batches,
    _bcq_parts,
    _bcq_steps,
    _check_batch_size,
    _cq_parts,
    _cq_steps,
    _Part,
    batch_consume_queue_batches,
    batch_consume_queue_table,
    consume_queue_batches,
    consume_queue_table,
    index_batches,
    index_headers,
    index_table,
)
from ..queuefiles import list_queue_dirs
from ..storeview import StoreView

# -- every queue of a store ---------------------------------------------------------------------


def _store_parts(store: StoreView, parent: str, make: Callable, steps_of: Callable, parts_of: Callable,
                 topic: str | None, queue_id: int | None, errors: str, batch_size: int,
                 unreadable: list[tuple[str, int, str]]) -> Iterator[_Part]:
    for t, q, _folder in list_queue_dirs(store.path(parent)):
        if (topic is not None and t != topic) or (queue_id is not None and q != queue_id):
            continue
        queue = make(t, q)
        try:
            # Every error of the queue's files but a file cut while being read is raised
            # here, before any of its rows, so a skipped queue leaves no rows behind.
            steps = steps_of(queue, None, None, batch_size)
        except RmqFormatError as exc:
            if errors == "raise":
                raise
            unreadable.append((t, q, exc.whole()))
            continue
        yield from parts_of(queue, steps)


def _rocksdb_parts(store: StoreView, topic: str | None, queue_id: int | None, errors: str, with_batch_size: bool,
                   unreadable: list[tuple[str, int, str]]) -> Iterator[_Part]:
    """The queues of a RocksDB consume queue (5.2.0+) in ``consumequeue/``, after the file ones.

    The value layout names its fields as the file unit does, so the same
    columns come out. A value that cannot be read mid-queue raises (or, with
    ``errors="skip"``, ends that queue and lists it as unreadable).
    """
    rocks = store.rocksdb_queues()
    if rocks is None:
        return
    for info in rocks.queues():
        t, q = info.topic, info.queue_id
        if (topic is not None and t != topic) or (queue_id is not None and q != queue_id):
            continue
        try:
            if info.error:
                raise RmqFormatError(rocks.path, None, info.error)
            label = t.encode("utf-8")
            for offsets, rows in rocks.consume_queue(t, q)._rows(0, info.max_offset):
                columns = {"cqOffset": offsets}
                columns.update((col, rows[name].astype(dt)) for name, col, dt in _CQ_FIELDS)
                if with_batch_size:
                    columns["batchSize"] = np.ones(len(offsets), _BATCH_SIZE_TYPE)
                yield _Part(label, q, columns)
        except RmqFormatError as exc:
            if errors == "raise":
                raise
            unreadable.append((t, q, exc.whole()))


def _check_errors(errors: str) -> str:
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', not {errors!r}")
    return errors


def store_queue_batches(store: StoreView, *, batch_queues: bool = False, topic: str | None = None,
                        queue_id: int | None = None, placeholders: bool = False, errors: str = "raise",
                        batch_size: int = DEFAULT_BATCH_SIZE) -> Batches:
    """The units of every consume queue of ``store`` as one stream of record batches.

    Queues in the order of :meth:`Store.queues` (topic, then queue id), each
    as :func:`consume_queue_batches` reads it; batches span queues. The
    schema is :data:`CQ_SCHEMA`; with ``batch_queues=True`` the batch
    consume queues follow and the schema is :data:`QUEUE_UNITS_SCHEMA`
    (``batchSize`` added; a batch unit's ``cqOffset`` is its
    ``msgBaseOffset``; :func:`store_batch_queue_batches` has all their
    fields). ``topic`` and ``queue_id`` pick queues. With ``errors="skip"``
    a queue whose files cannot be read is left out and listed in the
    result's :attr:`Batches.unreadable` instead of raising.
    """
    _check_batch_size(batch_size)
    _check_errors(errors)
    schema = QUEUE_UNITS_SCHEMA if batch_queues else CQ_SCHEMA
    result = Batches(schema, iter(()))

    def parts() -> Iterator[_Part]:
        yield from _store_parts(store, "consumequeue", store.consume_queue, _cq_steps,
                                lambda cq, steps: _cq_parts(cq, steps, placeholders, None, batch_queues),
                                topic, queue_id, errors, batch_size, result.unreadable)
        yield from _rocksdb_parts(store, topic, queue_id, errors, batch_queues, result.unreadable)
        if batch_queues:
            yield from _store_parts(store, "batchconsumequeue", store.batch_consume_queue, _bcq_steps,
                                    lambda bcq, steps: _bcq_parts(bcq, steps, as_queue_units=True),
                                    topic, queue_id, errors, batch_size, result.unreadable)

    result._gen = _batches(schema, parts(), batch_size)
    return result


def store_batch_queue_batches(store: StoreView, *, topic: str | None = None, queue_id: int | None = None,
                              errors: str = "raise", batch_size: int = DEFAULT_BATCH_SIZE) -> Batches:
    """Every batch consume queue of ``store`` with all its fields (:data:`BCQ_SCHEMA`); options as
    :func:`store_queue_batches`."""
    _check_batch_size(batch_size)
    _check_errors(errors)
    result = Batches(BCQ_SCHEMA, iter(()))
    parts = _store_parts(store, "batchconsumequeue", store.batch_consume_queue, _bcq_steps, _bcq_parts,
                         topic, queue_id, errors, batch_size, result.unreadable)
    result._gen = _batches(BCQ_SCHEMA, parts, batch_size)
    return result


__all__ = [
    "BCQ_SCHEMA", "CQ_SCHEMA", "DEFAULT_BATCH_SIZE", "INDEX_HEADER_SCHEMA", "INDEX_SCHEMA", "QUEUE_UNITS_SCHEMA",
    "Batches", "batch_consume_queue_batches", "batch_consume_queue_table", "consume_queue_batches",
    "consume_queue_table", "index_batches", "index_headers", "index_table", "store_batch_queue_batches",
    "store_queue_batches",
]
