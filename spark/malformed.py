"""What a read does with a malformed record or file, by Spark's parse modes.

* ``PERMISSIVE`` (the default): with ``columnNameOfCorruptRecord``, one row
  whose fields are null but ``store`` and that column (file, offset, reason);
  without it the record is left out, as Spark's JSON source leaves out a
  corrupt record when the schema has no such column.
* ``DROPMALFORMED``: the record is left out.
* ``FAILFAST``: the read fails with :class:`MalformedRecordError`, naming the
  file and the offset.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pyarrow as pa

from .options import DROPMALFORMED, FAILFAST
from .schema import Converter

_log = logging.getLogger(__name__)


class MalformedRecordError(Exception):
    """A malformed record in ``FAILFAST`` mode; the text names the file and the byte offset in it."""

    def __init__(self, source: str, path: str | None, offset: int | None, reason: str):
        self.path = path
        self.offset = offset
        self.reason = reason
        where = path if offset is None else f"{path} @ 0x{offset:x} (offset {offset})"
        super().__init__(f"{source}: malformed record in {where}: {reason}. Parse mode: FAILFAST. "
                         "To read the records before it, set the option mode to PERMISSIVE (with "
                         "columnNameOfCorruptRecord to see where it is) or DROPMALFORMED")


class Malformed:
    """Applies the read's mode to each malformed record found."""

    def __init__(self, source: str, mode: str, converter: Converter, row_filter=None):
        self.source = source
        #: The pushed-down filters: a corrupt-record row is given only when it passes them, as Spark would.
        self.row_filter = row_filter
        self.mode = mode
        self.converter = converter
        #: Paths to report under another name (a temporary copy under the file it was made from).
        self.rename: dict[str, str] = {}

    def __call__(self, store: str, path: str | None, offset: int | None, reason: str) -> Iterator[pa.RecordBatch]:
        path = self.rename.get(path, path) if path is not None else None
        if self.mode == FAILFAST:
            raise MalformedRecordError(self.source, path, offset, reason)
        if self.mode != DROPMALFORMED and self.converter.corrupt_column is not None:
            row = self.converter.corrupt(store, path, offset, reason)
            if self.row_filter:
                row = self.row_filter.filter_batch(row)
            if row.num_rows:
                yield row
        else:  # left out, as Spark leaves it out; the executor's log still says where
            _log.warning("%s: malformed record left out (mode %s): %s @ %s: %s", self.source, self.mode, path,
                         offset, reason)
