"""Spark schemas of the sources, and the decoders' Arrow batches converted to exactly those types.

The columns are the columnar decoders' (:data:`rmqformats.columnar.SCHEMA`
for messages, :mod:`rmqformats.columnar.queues` for queue units and index
entries) with the Spark type of each Arrow type, so a column added to a
decoder appears here too. Times become ``TimestampType`` (Spark holds
microseconds; the decoders give milliseconds), and every row carries the
``store`` it came from. Spark checks each batch against its schema to the
letter (field names of lists included), so :class:`Converter` builds every
batch on the Arrow schema Spark derives from the Spark one.

A read may name a subset of the columns with ``.schema(...)``: only those
are decoded (Python data sources get no column pruning otherwise), which
makes a ``topic``/``storeTimestamp`` aggregation several times faster than
decoding bodies it never looks at.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema
from pyspark.sql.types import DataType, LongType, StringType, StructField, StructType, TimestampType

from rmqformats.columnar import SCHEMA as MESSAGE_ARROW
from rmqformats.columnar.queues import INDEX_SCHEMA as INDEX_ARROW
from rmqformats.columnar.queues import QUEUE_UNITS_SCHEMA as QUEUE_ARROW
from rmqformats.frames import repeated

from .options import OptionError

#: The column every row carries: the store root it was read from.
STORE = "store"
#: The queue type of a queue unit (``SimpleCQ`` or ``BatchCQ``, as ``rmqformats lag`` names them).
QUEUE_TYPE = "queueType"
#: The value of the corrupt-record column: where the malformed record is and what is wrong with it.
CORRUPT_TYPE = StructType([StructField("file", StringType()), StructField("offset", LongType()),
                           StructField("reason", StringType())])
_TIMESTAMP_US = pa.timestamp("us", tz="UTC")


def _spark_type(arrow: pa.DataType) -> DataType:
    if pa.types.is_timestamp(arrow):
        return TimestampType()
    return from_arrow_type(arrow)


def _from_arrow(schema: pa.Schema, extra: list[StructField]) -> StructType:
    return StructType([StructField(f.name, _spark_type(f.type), True) for f in schema] + extra)


def message_schema(*, decode_system: bool = False, body_columns: Sequence[str] = (),
                   property_columns: Sequence[str] = ()) -> StructType:
    """Messages: the columnar decoder's columns, then ``store``; with ``decode_system`` the decoded
    system columns (:data:`rmqformats.systopics.DECODED_SCHEMA`) between them, then the string columns
    of a body decoder (``body_columns``: ``bodyDecoded`` or ``body.FIELD``…, and ``bodyDecodeError``),
    then the ``property.NAME`` columns named (``property_columns``: each one property's value, a string,
    null where a message has none)."""
    schema = MESSAGE_ARROW
    if decode_system:
        from rmqformats.systopics import system_schema
        schema = system_schema(schema)
    return _from_arrow(schema, [StructField(c, StringType(), True) for c in (*body_columns, *property_columns)]
                       + [StructField(STORE, StringType(), True)])


def property_columns(names) -> tuple[str, ...]:
    """The ``property.NAME`` columns among ``names`` (column names), in order."""
    from rmqformats.walk.arrow import property_of
    return tuple(n for n in names if property_of(n))


def queue_schema() -> StructType:
    """Queue units: ``topic``, ``queueId``, ``cqOffset``, ``commitLogOffset``, ``size``, ``tagsCode``,
    ``batchSize`` (1 for a consume-queue unit), ``queueType``, ``store``."""
    return _from_arrow(QUEUE_ARROW, [StructField(QUEUE_TYPE, StringType(), True), StructField(STORE, StringType(), True)])


def index_schema() -> StructType:
    """Index entries: ``file``, ``entry``, ``slot``, ``keyHash``, ``commitLogOffset``, ``timeDiff``,
    ``prevIndex``, ``storeTime``, ``store``."""
    return _from_arrow(INDEX_ARROW, [StructField(STORE, StringType(), True)])


def with_corrupt_column(schema: StructType, corrupt_column: str | None) -> StructType:
    """``schema`` with the corrupt-record column appended (when the option names one)."""
    if corrupt_column is None or corrupt_column in schema.fieldNames():
        return schema
    return StructType(schema.fields + [StructField(corrupt_column, CORRUPT_TYPE, True)])


def check_schema(schema: StructType, full: StructType, corrupt_column: str | None, source: str) -> None:
    """Raise :class:`OptionError` unless every column of a user's ``schema`` is one the source gives.

    The corrupt-record column may be the struct (file, offset, reason) or a
    string, as Spark's file sources declare theirs.
    """
    known = {f.name: f.dataType for f in full.fields}
    for f in schema.fields:
        if f.name == corrupt_column and f.dataType in (CORRUPT_TYPE, StringType()):
            continue
        if f.name not in known:
            extra = f", or {corrupt_column} (columnNameOfCorruptRecord)" if corrupt_column else ""
            raise OptionError(f"{source}: no column {f.name!r}; the columns are {', '.join(known)}{extra}")
        if f.dataType != known[f.name]:
            raise OptionError(f"{source}: column {f.name} is {known[f.name].simpleString()}, "
                              f"not {f.dataType.simpleString()}")


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects batches of ``schema`` to have (times in UTC, as Spark reads them)."""
    try:
        return to_arrow_schema(schema, timezone="UTC")
    except TypeError:  # earlier Spark 4 releases take no time zone (their times are UTC)
        return to_arrow_schema(schema)


def repeat_string(value: str, n: int) -> pa.Array:
    """A string column holding ``value`` ``n`` times (:func:`rmqformats.frames.repeated`)."""
    if len(value.encode("utf-8")) * n >= 1 << 31:
        return pa.array([value] * n, pa.large_string()).cast(pa.string())
    return repeated(value, n)


class Converter:
    """Turns a decoder's record batches into batches of a Spark schema, and makes corrupt-record rows.

    ``schema`` is the schema of the read (all columns, or the user's
    subset), ``columns`` the decoder columns it needs.
    """

    def __init__(self, schema: StructType, full: StructType, corrupt_column: str | None):
        self.schema = schema
        self.target = arrow_schema(schema)
        self.corrupt_column = corrupt_column if corrupt_column in schema.fieldNames() else None
        own = {STORE, QUEUE_TYPE, self.corrupt_column}
        decoded = set(full.fieldNames())
        self.columns: tuple[str, ...] = tuple(n for n in schema.fieldNames() if n in decoded and n not in own)

    def convert(self, batch: pa.RecordBatch, store: str, extra: dict[str, str] | None = None) -> pa.RecordBatch:
        """``batch`` (decoder columns) as a batch of the read's schema; ``extra`` fills constant string columns."""
        n = batch.num_rows
        arrays = []
        for field in self.target:
            name = field.name
            if name == STORE:
                arr = repeat_string(store, n)
            elif extra is not None and name in extra:
                arr = repeat_string(extra[name], n)
            elif name == self.corrupt_column:
                arr = pa.nulls(n, field.type)
            else:
                arr = batch.column(name)
                if not arr.type.equals(field.type) or str(arr.type) != str(field.type):
                    # Milliseconds to Spark's microseconds without overflow checks: a damaged
                    # record's time is kept as the broker stored it, not refused.
                    arr = arr.cast(field.type, safe=not pa.types.is_timestamp(field.type))
            arrays.append(arr)
        return pa.RecordBatch.from_arrays(arrays, schema=self.target)

    def corrupt(self, store: str, path: str | None, offset: int | None, reason: str) -> pa.RecordBatch:
        """One row with every field null but ``store`` and the corrupt-record column."""
        arrays = []
        for field in self.target:
            if field.name == STORE:
                arrays.append(pa.array([store], pa.string()))
            elif field.name == self.corrupt_column:
                if pa.types.is_string(field.type):
                    where = path if offset is None else f"{path} @ {offset}"
                    arrays.append(pa.array([f"{where}: {reason}"], pa.string()))
                else:
                    arrays.append(pa.array([{"file": path, "offset": offset, "reason": reason}], field.type))
            else:
                arrays.append(pa.nulls(1, field.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.target)
