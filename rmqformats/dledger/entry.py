"""What a DLedger entry is to a reader: its header fields with its message, and the ends of the data only
the DLedger framing has."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..message import Message


class DLedgerEndReason(enum.Enum):
    """Ends of the data that only the DLedger framing has (the others are :class:`EndReason`)."""

    BAD_POSITION = "entry's pos field is not its position"
    BAD_BODY_SIZE = "entry's body length disagrees with its size"
    INDEX_GAP = "entry index does not follow the previous one"
    TERM_DECREASE = "entry term smaller than the previous one"

    @property
    def is_clean(self) -> bool:
        """Never: a broker does not leave these after a clean write."""
        return False


@dataclass(frozen=True)
class DLedgerEntry:
    """One DLedger entry and the message inside it."""

    #: The entry's number in the DLedger log.
    index: int
    term: int
    #: Position of the entry in the data files' byte stream (its ``pos`` field).
    position: int
    #: Size of the whole entry (header and message record).
    size: int
    channel: int
    chain_crc: int
    body_crc: int
    #: The data file and the entry's position in it.
    segment: str
    file_offset: int
    message: Message
