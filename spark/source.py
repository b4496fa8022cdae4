"""What the three ``rocketmq_*`` data sources share: options checked at ``load()``, schemas, readers.

Spark builds a data source from its class and the options when ``load()``
is called, so an unknown option or a bad value fails there, before any
planning. ``reader()`` gets the schema of the read: the source's own, or the
subset of its columns a user named with ``.schema(...)`` or the ``columns``
option; only those columns are decoded. With ``filterPushdown`` the reader
is a :class:`FilterPushdown` one, which Spark hands the query's filters.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader
from pyspark.sql.types import StructType

from .filters import RowFilter, split_filters
from .malformed import Malformed
from .options import OptionError, ReadOptions, parse_options
from .schema import Converter, check_schema, with_corrupt_column


class RocketMQSource(DataSource):
    """Base of the sources: ``options`` are parsed and checked when Spark creates the source."""

    def __init__(self, options):
        super().__init__(options)
        self.read_options: ReadOptions = parse_options(self.name(), options)
        corrupt = self.read_options.corrupt_column
        if corrupt is not None and corrupt in self.full_schema().fieldNames():
            raise OptionError(f"{self.name()}: columnNameOfCorruptRecord {corrupt!r} is one of the source's own "
                              "columns; name another")
        if self.read_options.columns is not None:
            known = self.full_schema().fieldNames() + ([corrupt] if corrupt else [])
            unknown = [c for c in self.read_options.columns if c not in known]
            if unknown:
                raise OptionError(f"{self.name()}: option columns names no column {', '.join(map(repr, unknown))}; "
                                  f"the columns are {', '.join(known)}")
        if not self.read_options.paths:
            raise OptionError(f"{self.name()}: give load() the store path(s): a store root, a folder in one, "
                              "a folder of stores (with recursiveFileLookup), globs or file: URIs")

    @classmethod
    def full_schema(cls, schema: StructType | None = None) -> StructType:
        """Every column the source gives, without the corrupt-record column (with those a read's ``schema``
        may add: the commit log's ``property.NAME`` columns)."""
        raise NotImplementedError

    def schema(self) -> StructType:
        full = with_corrupt_column(self.full_schema(), self.read_options.corrupt_column)
        columns = self.read_options.columns
        if columns is None:
            return full
        by_name = {f.name: f for f in full.fields}
        return StructType([by_name[c] for c in columns])

    def reader(self, schema: StructType) -> DataSourceReader:
        full = self.full_schema(schema)
        check_schema(schema, full, self.read_options.corrupt_column, self.name())
        # Only a reader asked for overrides pushFilters: Spark refuses to plan a reader that does
        # while spark.sql.python.filterPushdown.enabled is off (DATA_SOURCE_PUSHDOWN_DISABLED).
        cls = self.pushdown_reader_class if self.read_options.pushdown else self.reader_class
        return cls(self.name(), self.read_options, schema, full)

    #: The :class:`SourceReader` subclass of the source, and the same with :class:`FilterPushdown`.
    reader_class: type
    pushdown_reader_class: type


class SourceReader(DataSourceReader):
    """Base of the readers: the options, the schema of the read and its converter."""

    def __init__(self, source: str, options: ReadOptions, schema: StructType, full: StructType):
        self.source = source
        self.options = options
        self.schema = schema
        self.full = full
        #: The filters Spark pushed down and this reader applies (none unless ``filterPushdown``).
        self.row_filter = RowFilter(())

    def converter(self) -> Converter:
        return Converter(self.schema, self.full, self.options.corrupt_column)

    def malformed(self, converter: Converter) -> Malformed:
        return Malformed(self.source, self.options.mode, converter, self.row_filter)

    #: Groups of columns from the cheapest to filter on (see :class:`RowFilter`).
    filter_order: tuple[tuple[str, ...], ...] = ()

    def unfiltered(self) -> frozenset[str]:
        """Columns of the read whose filters are left to Spark."""
        return frozenset()


class FilterPushdown:
    """``pushFilters`` for a :class:`SourceReader`: keeps the filters it applies exactly (:mod:`.filters`)."""

    def pushFilters(self, filters):
        null_rows = self.options.corrupt_column is not None and self.options.corrupt_column in self.schema.fieldNames()
        skip = self.unfiltered()
        columns = [n for n in self.schema.fieldNames() if n not in skip]
        kept, rejected = split_filters(filters, self.schema, columns=columns, null_rows=null_rows)
        self.row_filter = RowFilter(kept, order=self.filter_order)
        return rejected
