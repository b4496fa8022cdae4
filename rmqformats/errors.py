"""Typed errors raised when store files cannot be read as RocketMQ wrote them.

Every error names the file (as ``<folder>/<file name>``), the byte offset in
that file and the reason, so that a message such as
``commitlog/00000000001073741824 @ 0x3f2a10: bad magic 0x00000000`` is enough
to find the bytes with a hex viewer.
"""

from __future__ import annotations

import os


def display_path(path: str | os.PathLike[str] | None) -> str:
    """The last two components of ``path`` (``commitlog/0000…``), or ``<memory>``."""
    if path is None:
        return "<memory>"
    path = os.fspath(path)
    parent, name = os.path.split(os.path.normpath(path))
    folder = os.path.basename(parent)
    return f"{folder}/{name}" if folder else name


class RmqFormatError(Exception):
    """Base class: a store file that does not hold what the format says.

    ``path`` is the file, ``offset`` the byte position in that file (``None``
    when the problem is not at one place) and ``reason`` the explanation.
    """

    def __init__(self, path: str | os.PathLike[str] | None, offset: int | None, reason: str):
        self.path = None if path is None else os.fspath(path)
        self.offset = offset
        self.reason = reason
        where = display_path(self.path)
        if offset is not None:
            where = f"{where} @ 0x{offset:x}"
        super().__init__(f"{where}: {reason}")


class StoreNotFoundError(RmqFormatError):
    """The path is not a store root, a commit-log folder or a commit-log segment."""


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


class DecompressionError(RecordError):
    """A compressed body is corrupt, of an unknown type, or over the size limit."""


class MessageNotFoundError(RmqFormatError):
    """No message starts at the requested commit-log offset or message id."""


class InvalidMessageIdError(ValueError):
    """A message id that is not 32 or 56 hexadecimal characters."""
