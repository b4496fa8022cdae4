"""Typed errors raised when store files cannot be read as RocketMQ wrote them.

Every error names the file (as ``<folder>/<file name>``), the byte offset in
that file and the reason, so that a message such as
``commitlog/00000000001073741824 @ 0x3f2a10: bad magic 0x00000000`` is enough
to find the bytes with a hex viewer; :meth:`RmqFormatError.whole` gives the
message with the file's whole path (the command line prints that).
"""

from __future__ import annotations

import os
import re


def display_path(path: str | os.PathLike[str] | None) -> str:
    """The last two components of ``path`` (``commitlog/0000…``), or ``<memory>``."""
    if path is None:
        return "<memory>"
    path = os.fspath(path)
    parent, name = os.path.split(os.path.normpath(path))
    folder = os.path.basename(parent)
    return f"{folder}/{name}" if folder else name


def with_article(text: object) -> str:
    """``text`` after "a" or "an" as it is read aloud: "an index file", "an 8-byte read", "an 11-byte read",
    "a 20-byte read", "a commit-log segment"."""
    text = str(text)
    head = text[:1].lower()
    if head.isdigit():
        digits = re.match(r"\d+", text).group()  # type: ignore[union-attr]
        # eight…, eighty…, eleven…, eighteen… (also as thousands and millions: 11,000, 18,000,000)
        vowel = head == "8" or (digits[:2] in ("11", "18") and len(digits) % 3 == 2)
    else:
        vowel = head in "aeiou"
    return f"{'an' if vowel else 'a'} {text}"


def place(path: str | os.PathLike[str] | None, offset: int | None) -> str:
    """``path @ 0x3f2a10``: where a byte of a file is, as every error, finding and notice names it
    (the whole ``path`` as given; only ``path`` when ``offset`` is ``None``)."""
    where = "<memory>" if path is None else os.fspath(path)
    return where if offset is None else f"{where} @ 0x{offset:x}"


def whole_text(exc: BaseException) -> str:
    """What an error says, with the file's whole path where it is a :class:`RmqFormatError` (its
    :meth:`~RmqFormatError.whole`), else its text."""
    return exc.whole() if isinstance(exc, RmqFormatError) else str(exc)


class RmqFormatError(Exception):
    """Base class: a store file that does not hold what the format says.

    ``path`` is the file, ``offset`` the byte position in that file (``None``
    when the problem is not at one place) and ``reason`` the explanation.
    """

    def __init__(self, path: str | os.PathLike[str] | None, offset: int | None, reason: str):
        self.path = None if path is None else os.fspath(path)
        self.offset = offset
        self.reason = reason
        super().__init__(f"{place(display_path(self.path), offset)}: {reason}")

    def whole(self) -> str:
        """The message with the file's whole path (as the command line prints it)."""
        text = str(self)
        short = display_path(self.path)
        if self.path is None or not text.startswith(short):
            return text
        return os.path.abspath(self.path) + text[len(short):]


class StoreNotFoundError(RmqFormatError):
    """The path is not a store root, a commit-log folder or a commit-log segment."""


class NotASegmentError(StoreNotFoundError):
    """A file given as a commit-log segment that is none: neither its name (a 20-digit offset) nor its
    content (a first message or BLANK record) says it is one, or it is another kind of store file."""


class WrongLayoutError(StoreNotFoundError):
    """A folder of another kind than the command reads (a plain store given to ``tiered``, …): the
    reason says what was expected and what was found."""


class RecordError(RmqFormatError):
    """A commit-log record that the broker's recovery would reject."""


class BadMagicError(RecordError):
    """A record's magic code is neither a message version nor BLANK."""


class TruncatedRecordError(RecordError):
    """A record, or its 8-byte header, runs past the end of the file."""


class RecordSizeError(RecordError):
    """TOTALSIZE is impossible or disagrees with the lengths of the fields."""


class CrcMismatchError(RecordError):
    """The body CRC or the ``__CRC32#`` record CRC does not match the bytes."""


class UnfinishedRecordError(RecordError):
    """The last record before zero-filled bytes whose end is not written yet (a record being written, or torn)."""


class PropertyValueError(RecordError):
    """A property the broker's check parses (``DELAY`` of a ``SCHEDULE_TOPIC_XXXX`` record) that does not parse."""


class DecompressionError(RecordError):
    """A compressed body is corrupt, of an unknown type, or over the size limit."""


class MessageNotFoundError(RmqFormatError):
    """No message starts at the requested commit-log offset or message id."""


class InvalidMessageIdError(ValueError):
    """A message id that is not 32 or 56 hexadecimal characters."""


class QueueFileError(RmqFormatError):
    """A consume-queue (or batch consume-queue) file that cannot hold the units its name says."""


class UnitNotFoundError(RmqFormatError):
    """No unit at the requested logical offset: before the first file or past the queue's end."""


class ExtUnitError(RmqFormatError):
    """A ``consumequeue_ext`` unit with an impossible size or bitmap length, or cut off by its file's end."""


class ExtUnitNotFoundError(RmqFormatError):
    """No ``consumequeue_ext`` unit at an address: no file holds it, or it is the end marker or unwritten tail."""


class UnitMismatchError(RmqFormatError):
    """A batch consume-queue unit that disagrees with the commit-log record it points at."""


class CheckpointError(RmqFormatError):
    """A ``checkpoint`` or ``config/timercheck`` file too short to hold its fields."""


class TimerLogError(RmqFormatError):
    """A timer-log segment or unit that cannot be read as the broker wrote it."""


class TruncatedTimerUnitError(TimerLogError):
    """A timer-log unit cut off by the end of its segment file."""


class TimerWheelError(RmqFormatError):
    """A ``timerwheel`` file whose size is not a whole number of slots, or not the expected size."""


class ConfigError(RmqFormatError):
    """A ``config/`` JSON file that cannot be read as the broker wrote it.

    ``json_path`` (``$.topicConfigTable.TopicTest.perm``) says where in the
    document, when known; the message reads
    ``config/topics.json @ 0x1a2 ($.topicConfigTable.TopicTest.perm): reason``.
    """

    def __init__(self, path, offset: int | None, reason: str, json_path: str | None = None):
        self.json_path = json_path
        super().__init__(path, offset, reason if json_path is None else f"({json_path}): {reason}")
        self.reason = reason
        if json_path is not None:
            # "file @ 0x1a2 ($.a.b): reason" rather than "file @ 0x1a2: ($.a.b): reason"
            self.args = (self.args[0].replace(f": ({json_path}): ", f" ({json_path}): ", 1),)


class ConfigSyntaxError(ConfigError):
    """Text that is neither JSON nor fastjson's dialect of it (truncated, garbled)."""


class ConfigSchemaError(ConfigError):
    """A well-formed document whose values do not have the types and shape of its schema."""


class IndexFileError(RmqFormatError):
    """An ``index/`` file that cannot be read as the broker would read it."""


class IndexSizeError(IndexFileError):
    """An index file shorter than its header, or whose size disagrees with the slot and entry counts."""


class IndexRangeError(IndexFileError):
    """A slot or entry number outside the file: asked for, or found in a slot or a chain link."""


class IndexChainLoopError(IndexFileError):
    """A chain of entries that loops without producing hits: the broker's lookup would never return."""


class FileChangedError(RmqFormatError):
    """A file that shrank or vanished while it was being read (a broker or an operator changed it)."""


class DLedgerEntryError(RecordError):
    """A DLedger entry whose header the DLedger recovery would reject (position, size, index or term)."""


class TieredFileError(RmqFormatError):
    """A tiered-store file (commit-log, consume-queue or index segment) that cannot be read as the plugin wrote it."""


class TieredIndexError(TieredFileError):
    """A tiered index file whose header counts, slots or items point outside the file, or that loops."""


class RocksDBError(RmqFormatError):
    """A RocksDB database of the store (consume queue or config) that cannot be opened or read as the broker wrote it.

    ``path`` is the database folder; ``column_family`` and ``key`` (the raw
    key bytes) say which record, when the problem is in one. The message reads
    ``store/consumequeue: column family 'default', key 00000009 01 … (TopicTest/0/12): value is 20 bytes, expected 28``.
    """

    def __init__(self, path, reason: str, *, column_family: str | None = None, key: bytes | None = None,
                 key_text: str | None = None):
        self.column_family = column_family
        self.key = key
        where = []
        if column_family is not None:
            where.append(f"column family {column_family!r}")
        if key is not None:
            where.append(f"key {key.hex()}" + (f" ({key_text})" if key_text else ""))
        super().__init__(path, None, (", ".join(where) + ": " if where else "") + reason)
        self.reason = reason
