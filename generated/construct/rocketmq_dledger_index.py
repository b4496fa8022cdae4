# Generated from formats/rocketmq_dledger_index.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ DLedger entry index file: construct schema generated from formats/rocketmq_dledger_index.ksy.

``rocketmq_dledger_index`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "UnitMagic",
    "unit",
    "rocketmq_dledger_index",
]


class UnitMagic(enum.IntEnum):
    """Kaitai enum unit_magic (enums/unit_magic)."""

    # Zero-filled tail; no entry.
    zero_fill = 0

    # A unit of an entry.
    normal = 1


# One index unit (`INDEX_UNIT_SIZE` = 32 bytes), written by
# `DLedgerEntryCoder.encodeIndex`.
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
unit = ka.Struct(
    # The entry's magic; 0 in the zero-filled tail.
    "magic" / ka.Valid(
        c.Enum(c.Int32ub, UnitMagic),
        ("in-enum unit_magic", lambda value, this: ka.in_enum(value, UnitMagic)),
    ),
    # Position of the entry in the data files' byte stream.
    "ofs_entry" / c.Int64sb,
    # Size of the entry.
    "len_entry" / c.Int32sb,
    # The entry's index (the unit's number).
    "index" / c.Int64sb,
    # The entry's term.
    "term" / c.Int64sb,
)


# One file of the entry index of a DLedger commit log,
# `<store>/dledger-<selfId>/index/<20-digit start position>`: a 32-byte
# unit per entry, unit `n` at byte `n * 32` of the index stream, so the
# index of an entry gives its position in the data files. Files hold
# `mappedFileSizeForEntryIndex` bytes (5,242,880 units by default). The
# DLedger recovery compares each entry with its unit and rewrites the
# index from the data where they differ, so the data files, not this
# index, are authoritative. Broker DLedger mode is deprecated from 5.5.1
# on (see rocketmq_dledger_data).
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/DLedgerMmapFileStore.java
rocketmq_dledger_index = ka.Struct(
    # The units of this file, zero-filled after the last one written.
    "units" / ka.RepeatEos(unit),
)
