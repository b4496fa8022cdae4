"""Filters pushed down by Spark, kept when the sources can apply them exactly, and applied while reading.

Spark 4.1+ hands a Python source's reader the conjuncts of a query's
``WHERE`` as :mod:`pyspark.sql.datasource` filters (with
``spark.sql.python.filterPushdown.enabled``); a filter the reader keeps
leaves the plan, so it must be applied to the letter. The sources keep a
filter when its column is one they give with a type compared here exactly as
Spark compares it: whole numbers, times (Spark's microseconds) and strings
(Spark's default collation compares UTF-8 bytes, as Arrow does); a filter on
a body, a map, a list or the corrupt-record column goes back to Spark.

A kept filter becomes a :class:`Cond`, a plain picklable tuple (the
filter classes do not exist before Spark 4.1), and :class:`RowFilter`
evaluates them with Spark's three-valued logic (a comparison with null is
null, ``NOT null`` is null, a row is kept when every filter is true):

* on the commit log, inside the columnar decoder (:data:`rmqformats.walk.scan.Predicate`):
  the filters on fixed-width fields first, so a record they reject never has its
  topic, properties, body or message id built;
* on a batch already converted to the read's schema (queue units, index
  entries, corrupt-record rows);
* on constants, to leave out whole splits: :meth:`RowFilter.keeps` (a
  segment's name, a store, a queue's topic and id) and :meth:`RowFilter.bounds`
  (the range of commit-log offsets or store times a split can hold).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import DataType, IntegerType, LongType, StringType, StructType, TimestampType

#: Comparison operators of the Spark filters kept.
EQ, EQ_NULL_SAFE, GT, GE, LT, LE, IN = "=", "<=>", ">", ">=", "<", "<=", "in"
IS_NULL, IS_NOT_NULL, STARTS, ENDS, CONTAINS, NOT = "is null", "is not null", "starts", "ends", "contains", "not"
_SPARK_NAMES = {"EqualTo": EQ, "EqualNullSafe": EQ_NULL_SAFE, "GreaterThan": GT, "GreaterThanOrEqual": GE,
                "LessThan": LT, "LessThanOrEqual": LE, "In": IN, "IsNull": IS_NULL, "IsNotNull": IS_NOT_NULL,
                "StringStartsWith": STARTS, "StringEndsWith": ENDS, "StringContains": CONTAINS, "Not": NOT}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICRO = timedelta(microseconds=1)
_INT64 = (-(1 << 63), (1 << 63) - 1)


@dataclass(frozen=True)
class Cond:
    """One kept filter: ``op`` on ``column`` with ``value`` (times as epoch microseconds), or ``NOT child``."""

    op: str
    column: str | None = None
    value: object = None
    child: Cond | None = None

    @property
    def columns(self) -> set[str]:
        return self.child.columns if self.child is not None else {self.column}


def _kind(t: DataType) -> str | None:
    if isinstance(t, (IntegerType, LongType)):
        return "int"
    if isinstance(t, TimestampType):
        return "time"
    if isinstance(t, StringType):
        return "string"
    return None


def _literal(kind: str, value):
    """The filter's literal as compared here, or raise ``ValueError`` when it cannot be compared exactly."""
    if value is None:
        return None
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "time" and isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return (moment - _EPOCH) // _MICRO
    raise ValueError(value)


def to_cond(f, kinds: dict[str, str]) -> Cond | None:
    """The :class:`Cond` of a Spark filter when it can be applied exactly, else ``None``."""
    op = _SPARK_NAMES.get(type(f).__name__)
    if op is None:
        return None
    if op == NOT:
        child = to_cond(f.child, kinds)
        return None if child is None else Cond(NOT, child=child)
    attribute = tuple(getattr(f, "attribute", ()))
    if len(attribute) != 1 or attribute[0] not in kinds:
        return None
    column, kind = attribute[0], kinds[attribute[0]]
    if op in (IS_NULL, IS_NOT_NULL):
        return Cond(op, column)
    if op in (STARTS, ENDS, CONTAINS) and kind != "string":
        return None
    try:
        if op == IN:
            values = tuple(_literal(kind, v) for v in f.value)
            return Cond(op, column, values)
        value = _literal(kind, f.value)
    except (ValueError, TypeError):
        return None
    if value is None and op != EQ_NULL_SAFE:
        return Cond(op, column, None)  # null whatever the row: no row is kept
    return Cond(op, column, value)


def _accepts_null(c: Cond) -> bool:
    """Whether ``c`` can be true on a row whose ``c`` column is null."""
    if c.op == NOT:
        return c.child.op in (IS_NOT_NULL, EQ_NULL_SAFE)
    return c.op == IS_NULL or (c.op == EQ_NULL_SAFE and c.value is None)


def split_filters(filters: Iterable, schema: StructType, *, columns: Iterable[str] | None = None,
                  null_rows: bool = False) -> tuple[list[Cond], list]:
    """``(kept, rejected)``: the filters the sources apply, as :class:`Cond`, and the ones Spark keeps.

    ``columns`` limits the columns filters are kept on; ``null_rows``: the
    read gives rows whose fields are all null (corrupt-record rows) that a
    decoder filter may never see, so a filter true on null goes back to Spark.
    """
    allowed = set(schema.fieldNames()) if columns is None else set(columns) & set(schema.fieldNames())
    kinds = {f.name: k for f in schema.fields if f.name in allowed and (k := _kind(f.dataType)) is not None}
    kept, rejected = [], []
    for f in filters:
        c = to_cond(f, kinds)
        if c is None or (null_rows and _accepts_null(c)):
            rejected.append(f)
        else:
            kept.append(c)
    return kept, rejected


# -- evaluation ---------------------------------------------------------------------------------


def _values(arr: pa.Array) -> pa.Array:
    """A column as compared: times as int64 epoch microseconds (wrapping as the sources' conversion does)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_timestamp(arr.type):
        raw = arr.cast(pa.int64())
        scale = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": None}[arr.type.unit]
        if scale is None:
            return pc.divide(raw, 1000)
        if scale == 1:
            return raw
        numbers = raw.to_numpy(zero_copy_only=False).astype(np.int64)
        with np.errstate(over="ignore"):
            scaled = numbers * np.int64(scale)
        return pa.array(scaled, pa.int64(), mask=np.asarray(arr.is_null()) if arr.null_count else None)
    if pa.types.is_integer(arr.type):
        return arr.cast(pa.int64())
    return arr


def _scalar(arr: pa.Array, value):
    return pa.scalar(value, arr.type)


def evaluate(c: Cond, get: Callable[[str], pa.Array], n: int) -> pa.Array:
    """``c`` on ``n`` rows as a nullable boolean array (Spark's three-valued logic)."""
    if c.op == NOT:
        return pc.invert(evaluate(c.child, get, n))
    arr = _values(get(c.column))
    if c.op == IS_NULL:
        return arr.is_null()
    if c.op == IS_NOT_NULL:
        return arr.is_valid()
    if c.op == EQ_NULL_SAFE:
        if c.value is None:
            return arr.is_null()
        return pc.fill_null(pc.equal(arr, _scalar(arr, c.value)), False)
    if c.op == IN:
        present = [v for v in c.value if v is not None]
        if not present:
            return pa.nulls(n, pa.bool_())
        hit = pc.is_in(arr, value_set=pa.array(present, arr.type))
        hit = pc.if_else(arr.is_null(), pa.scalar(None, pa.bool_()), hit)
        if len(present) < len(c.value):  # x IN (.., NULL) is null, not false, where no value matches
            hit = pc.if_else(hit, True, pa.scalar(None, pa.bool_()))
        return hit
    if c.value is None:
        return pa.nulls(n, pa.bool_())
    if c.op in (STARTS, ENDS, CONTAINS):
        fn = {STARTS: pc.starts_with, ENDS: pc.ends_with, CONTAINS: pc.match_substring}[c.op]
        return fn(arr, pattern=c.value)
    if c.op in (GT, GE, LT, LE) and isinstance(c.value, int) and pa.types.is_integer(arr.type):
        # A literal past int64 still compares (a Spark long never reaches it, but an int column may be
        # filtered with a long literal).
        if c.value > _INT64[1] or c.value < _INT64[0]:
            above = c.value > _INT64[1]
            result = (c.op in (LT, LE)) == above
            return pc.if_else(arr.is_null(), pa.scalar(None, pa.bool_()), pa.scalar(result))
    if isinstance(c.value, int) and pa.types.is_integer(arr.type) and not _INT64[0] <= c.value <= _INT64[1]:
        return pc.if_else(arr.is_null(), pa.scalar(None, pa.bool_()), pa.scalar(False))
    fn = {EQ: pc.equal, GT: pc.greater, GE: pc.greater_equal, LT: pc.less, LE: pc.less_equal}[c.op]
    return fn(arr, _scalar(arr, c.value))


def _true(mask: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)


class RowFilter:
    """The AND of the kept filters of a read; picklable (it travels to the executors with the reader)."""

    def __init__(self, conds: Sequence[Cond], *, order: Sequence[Iterable[str]] = ()):
        #: ``order``: groups of columns from the cheapest to build; a filter is evaluated after those on
        #: cheaper columns (fixed-width fields before the topic, the topic before the properties).
        groups = [set(g) for g in order]

        def cost(c: Cond) -> int:
            return next((i for i in range(len(groups)) if c.columns <= set().union(*groups[:i + 1])), len(groups))
        self.conds = tuple(sorted(conds, key=cost))
        self.columns = tuple(dict.fromkeys(col for c in self.conds for col in sorted(c.columns)))

    def __bool__(self) -> bool:
        return bool(self.conds)

    def __repr__(self) -> str:
        return f"RowFilter({list(self.conds)!r})"

    def on(self, column: str) -> list[Cond]:
        return [c for c in self.conds if c.columns == {column}]

    # -- whole splits ---------------------------------------------------------------------------

    def keeps(self, constants: dict[str, object], types: dict[str, pa.DataType]) -> bool:
        """False when a row whose ``constants`` columns hold these values cannot pass (a split to leave out)."""
        for c in self.conds:
            if not c.columns <= set(constants):
                continue
            if not _true(evaluate(c, lambda name: pa.array([constants[name]], types[name]), 1))[0]:
                return False
        return True

    def bounds(self, column: str) -> tuple[int | None, int | None]:
        """Inclusive ``(low, high)`` bounds a kept row's ``column`` lies within (``None``: unbounded).

        Times are epoch microseconds. ``(1, 0)`` (empty) when the filters
        contradict or compare with null.
        """
        low: int | None = None
        high: int | None = None

        def up(v):
            nonlocal low
            low = v if low is None else max(low, v)

        def down(v):
            nonlocal high
            high = v if high is None else min(high, v)
        for c in self.on(column):
            v = c.value
            if c.op in (EQ, GT, GE, LT, LE, IN) and (v is None or (c.op == IN and all(x is None for x in v))):
                return 1, 0
            if c.op in (EQ, EQ_NULL_SAFE) and isinstance(v, int):
                up(v)
                down(v)
            elif c.op == GT:
                up(v + 1)
            elif c.op == GE:
                up(v)
            elif c.op == LT:
                down(v - 1)
            elif c.op == LE:
                down(v)
            elif c.op == IN:
                present = [x for x in v if isinstance(x, int)]
                up(min(present))
                down(max(present))
        return low, high

    # -- rows -----------------------------------------------------------------------------------

    def batch_mask(self, batch: pa.RecordBatch) -> np.ndarray:
        """Which rows of ``batch`` (columns by the filters' names) pass every filter."""
        keep = np.ones(batch.num_rows, bool)
        for c in self.conds:
            keep &= _true(evaluate(c, batch.column, batch.num_rows))
        return keep

    def filter_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if not self.conds or not batch.num_rows:
            return batch
        keep = self.batch_mask(batch)
        return batch if keep.all() else batch.filter(pa.array(keep))

    def __call__(self, columns: Callable[[Sequence[str], np.ndarray], pa.RecordBatch], rows: np.ndarray) -> np.ndarray:
        """The decoder's predicate: each filter narrows ``rows`` before the next builds its column."""
        for c in self.conds:
            if not len(rows):
                break
            batch = columns(sorted(c.columns), rows)
            rows = rows[_true(evaluate(c, batch.column, len(rows)))]
        return rows
