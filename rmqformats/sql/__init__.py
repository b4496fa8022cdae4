"""SQL over a store, without a cluster: DuckDB over the store's tables as Arrow record-batch streams.

::

    import rmqformats
    from rmqformats.sql import query
    store = rmqformats.open_store("/data/rocketmq/store")
    result = query(store, "SELECT topic, count(*) AS n FROM messages GROUP BY topic")   # or store.sql(...)
    table = result.read_all()                 # or iterate: pyarrow.RecordBatch objects

The tables (:data:`rmqformats.sql.tables.TABLES`) are registered only when
the query names them, each as a :class:`pyarrow.RecordBatchReader` that
reads the store as DuckDB pulls batches: a query aggregating a whole store
holds one batch of it at a time. The ``messages`` table reads only the
columns the query names (bodies are not decompressed unless ``body`` is
named), and the topic, queue, store-time and commit-log-offset conjuncts of
its ``WHERE`` reach the walk (:mod:`rmqformats.sql.pushdown`); DuckDB still
applies the whole query, so results are exact.

DuckDB comes with the ``sql`` extra (``pip install 'rmqformats[sql]'``).
The engine runs with external access off: a query reads the store's tables
and nothing else, and writes nothing (``rmqformats sql -o`` writes results
as every other output is written).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from .pushdown import Plan, SqlError, parse, plan
from .tables import TABLES, Source, schema_of

#: The store facade (:class:`rmqformats.store.Store`), which offers ``Store.sql``: named, not imported, so
#: that the arrow points from the facade down to this capability only.
Store = Any

__all__ = ["TABLES", "Plan", "Result", "SqlError", "Source", "query", "explain", "schema_of"]

#: Rows per result batch.
RESULT_BATCH_ROWS = 65536


class Result:
    """The rows of a query as a stream of :class:`pyarrow.RecordBatch` objects.

    :attr:`schema` is the result's schema, :attr:`plan` what was read and
    how it was pre-filtered, :attr:`sources` each table read (its walk
    arguments and the rows it gave the engine, filled in as the result is
    read). Iterate once, or call :meth:`read_all`.
    """

    def __init__(self, connection, reader: pa.RecordBatchReader, plan: Plan, sources: dict[str, Source],
                 text: str):
        self._connection = connection  # the engine lives as long as its result is read
        self._reader = reader
        self._text = text
        self.schema: pa.Schema = reader.schema
        self.plan = plan
        self.sources = sources

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        try:
            while True:
                try:
                    batch = self._reader.read_next_batch()
                except StopIteration:
                    return
                yield batch
        except SqlError:
            raise
        except Exception as exc:
            _raise_engine_error(exc, self._text, self.sources)
        finally:
            self.close()

    def read_all(self) -> pa.Table:
        """Every row as one :class:`pyarrow.Table` (for results that fit in memory)."""
        return pa.Table.from_batches(list(self), schema=self.schema)

    def close(self) -> None:
        """End the query; the engine and the store's tables it read are released."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise SqlError("SQL needs DuckDB: pip install 'rmqformats[sql]'") from None
    return duckdb


def _connect():
    duckdb = _duckdb()
    con = duckdb.connect(":memory:")
    con.execute("SET TimeZone = 'UTC'").fetchall()  # timestamps without a zone are UTC, as everywhere in rmqformats
    # DuckDB draws a progress bar on standard output when a query runs for more than two seconds: in the
    # API's caller's output, and in the rows `rmqformats sql` writes there.
    con.execute("SET enable_progress_bar = false").fetchall()
    try:
        con.execute("SET errors_as_json = true").fetchall()  # errors with their query position
    except duckdb.Error:
        pass
    return con


def explain(text: str) -> Plan:
    """The tables ``text`` reads and the walk's pre-filters of each, without reading the store."""
    con = _connect()
    try:
        return plan(parse(con, text), tuple(TABLES))
    finally:
        con.close()


def _referenced_columns(tree: dict) -> set[str] | None:
    """The column names the query refers to, or ``None`` when it selects ``*`` (every column)."""
    from .pushdown import _walk
    names: set[str] = set()
    for node in _walk(tree):
        if node.get("class") == "STAR":
            return None
        if node.get("class") == "COLUMN_REF":
            parts = node.get("column_names") or []
            if parts:
                names.add(str(parts[-1]).lower())
    return names


def query(store: Store, text: str, *, jobs: int = 1, body_decoder: Any = None, body_fields: Any = None,
          system: Any = None) -> Result:
    """Run the SQL query ``text`` over ``store``'s tables; returns the :class:`Result` stream.

    ``jobs``: the walk of ``messages`` decodes with this many worker processes (see ``CommitLog.batches``).
    ``body_decoder``: a decoder spec or function of :mod:`rmqformats.body_decoders`
    (``"json"``, ``"text:gbk"``, ``"protobuf:shop.desc:shop.Order"``, ``"avro:order.avsc"``,
    ``"python:MODULE:FUNCTION"``); ``messages`` then has the columns ``bodyDecoded`` and
    ``bodyDecodeError``. ``body_fields`` (``"order,customer.id"`` or a list of field paths): in place of
    ``bodyDecoded``, one string column per field, ``body.order`` and ``body.customer.id`` (quote them in
    the query: ``"body.order"``).
    ``system``: how ``messages``' decoded system columns are decoded (a
    :class:`rmqformats.systopics.SystemDecoding`: the broker's delay levels,
    custom trace topics); the defaults when ``None``.
    Raises :class:`SqlError` (one line, with the query position when DuckDB
    gives one) for a query DuckDB does not accept; errors reading the store
    are raised as they are (:class:`rmqformats.errors.RmqFormatError`).
    """
    if not isinstance(text, str) or not text.strip():
        raise SqlError("empty query", 0, text if isinstance(text, str) else None)
    from ..body_decoders import decoding
    body_decoder = decoding(body_decoder, body_fields)  # an unknown decoder is refused before anything is read
    con = _connect()
    try:
        tree = parse(con, text)
        found = plan(tree, tuple(TABLES))
        columns = _referenced_columns(tree)
        sources: dict[str, Source] = {}
        for name in found.tables:
            source = sources[name] = Source(name)
            reader = TABLES[name](store, found.filters.get(name, {}), columns, source, jobs=jobs,
                                  body_decoder=body_decoder, system=system)
            con.register(name, reader)
        con.execute("SET enable_external_access = false").fetchall()  # the store's tables, nothing else
        try:
            relation = con.sql(text)
            if relation is None:
                raise SqlError("not a query: the statement returns no rows (give a SELECT)", 0, text)
            fetch = getattr(relation, "to_arrow_reader", None) or relation.fetch_record_batch  # DuckDB 2, 1
            reader = fetch(RESULT_BATCH_ROWS)
        except SqlError:
            raise
        except Exception as exc:
            _raise_engine_error(exc, text, sources)
        return Result(con, reader, found, sources, text)
    except BaseException:
        con.close()
        raise


def _raise_engine_error(exc: BaseException, text: str, sources: dict[str, Source]) -> None:
    """Re-raise an error of the engine as :class:`SqlError` (one line, its query position), or the error
    that ended the reading of a table (a store read error, an interrupt) as it was raised."""
    for source in sources.values():
        if source.error is not None:
            raise source.error
    duckdb = _duckdb()
    cause = exc
    while cause is not None and not isinstance(cause, duckdb.Error):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        raise exc
    if isinstance(cause, getattr(duckdb, "InterruptException", ())):  # Ctrl-C while the engine ran
        raise KeyboardInterrupt from None
    inner = _store_error(exc)
    if inner is not None:
        raise inner from None
    message = str(cause)
    raise SqlError(_one_line(message), _position(message, text), text) from None


def _store_error(exc: BaseException) -> BaseException | None:
    from ..errors import RmqFormatError
    seen = exc
    while seen is not None:
        if isinstance(seen, RmqFormatError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _position(message: str, text: str) -> int | None:
    """Where in ``text`` the error is: the position DuckDB gives, else the first place the query names
    what the error names (a column, table or function not found)."""
    import re
    found = re.search(r'"position":"(\d+)"', message)
    if found:
        return int(found.group(1))
    for pattern in (r'with name "?([^"\s!]+)', r'column "([^"]+)"', r'"([^"]+)"'):
        found = re.search(pattern, message)
        if found:
            name = found.group(1).split(".")[-1]
            at = re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", text, re.IGNORECASE)
            if at:
                return at.start()
    return None


def _one_line(message: str) -> str:
    """DuckDB's message on one line (its JSON form read back to the words)."""
    import json
    kind, sep, rest = message.partition(": ")
    if sep and rest.startswith("{"):
        try:
            data = json.loads(rest)
            message = f"{kind}: {data.get('exception_message', rest)}"
        except ValueError:
            pass
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())
