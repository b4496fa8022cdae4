# Generated from formats/rocketmq_dledger_data.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ DLedger commit-log data file: construct schema generated from formats/rocketmq_dledger_data.ksy.

``rocketmq_dledger_data`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "EntryMagic",
    "entry_body",
    "record",
    "rocketmq_dledger_data",
]


class EntryMagic(enum.IntEnum):
    """Kaitai enum entry_magic (enums/entry_magic)."""

    # Zero-filled tail of a pre-allocated file; the data ends here.
    zero_fill = 0

    # An entry (`CURRENT_MAGIC`, the only magic DLedger 0.2 and 0.3 write).
    normal = 1

    # BLANK filler (-1, 0xFFFFFFFF); the rest of the file is padding.
    blank = -1


# The fields of an entry after its magic and size, in the order
# `DLedgerEntryCoder.encode` writes them; the 44-byte `HEADER_SIZE`
# ends with `body_crc`, and the message record starts at byte 48
# (`BODY_OFFSET`).
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
entry_body = ka.Struct(
    # Number of the entry in the DLedger log, from 0; each entry's is
    # the previous one's plus 1.
    "index" / c.Int64sb,
    # Raft term of the leader that appended the entry; never decreases.
    "term" / c.Int64sb,
    # Position of the entry in the log's byte stream (file start plus
    # position in the file); the recovery ends the data where it
    # differs.
    "ofs_entry" / c.Int64sb,
    # Reserved; 0.
    "channel" / c.Int32sb,
    # Reserved for a CRC chained over the previous entries; 0 (never
    # computed).
    "chain_crc" / c.Int32sb,
    # Reserved for a CRC of the body; 0 (never computed).
    "body_crc" / c.Int32sb,
    # Size of the body; the entry's size minus 48 in a valid entry.
    "len_body" / c.Int32sb,
    # The commit-log message record (see rocketmq_commitlog), its
    # PHYSICALOFFSET set to `ofs_entry + 48`.
    "body" / c.Bytes(lambda this: this["len_body"]),
)


# One DLedger entry (`DLedgerEntry`), the BLANK filler at the end of a
# file, or the start of the zero-filled tail.
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntry.java
record = ka.Struct(
    # Kind of the entry; signed, as DLedger's Java holds it (`int`).
    "magic" / ka.Valid(
        c.Enum(c.Int32sb, EntryMagic),
        ("in-enum entry_magic", lambda value, this: ka.in_enum(value, EntryMagic)),
    ),
    # True for an entry, false for the BLANK filler and the
    # zero-filled tail.
    "is_entry" / c.Computed(
        lambda this: ka.enum_value(this["magic"], EntryMagic) == EntryMagic.normal,
    ),
    # Size of the whole entry in bytes, the 48-byte header included.
    # For the BLANK filler, the bytes from the filler to the end of the
    # file.
    "len_entry" / c.Int32sb,
    # The entry's fields after the magic and the size.
    "body" / ka.If(
        lambda this: this["is_entry"],
        c.FixedSized(lambda this: this["len_entry"] - 8, entry_body),
    ),
)


# One data file of the commit log of a broker in DLedger mode
# (`enableDLegerCommitLog=true`): `<store>/dledger-<selfId>/data/<20-digit
# start position>` unless `storePathDLedgerCommitLog` (4.9.4+) names other
# folders. The file store of the DLedger library (`DLedgerMmapFileStore`)
# keeps the log as one byte stream cut into files of
# `mappedFileSizeCommitLog` bytes (`mapedFileSizeCommitLog` before 4.5.2),
# named like commit-log segments by the position of their first byte.
#
# Every entry wraps one commit-log message record (the same bytes as in a
# plain commit log, see rocketmq_commitlog) in a 48-byte header. The
# broker rewrites the message's PHYSICALOFFSET to the entry's position plus
# 48, so consume queues and message ids point at the record inside the
# entry. When the next entry does not fit, the rest of the file is a BLANK
# filler whose first 8 bytes are the magic -1 and the filler's length; a
# pre-allocated file ends in a zero-filled tail.
#
# The library's recovery (`DLedgerMmapFileStore.recover`) reads entries
# until one is not valid: a zero size (the tail), a `pos` other than the
# entry's position, a body length other than the size minus 48, an entry
# running past the end of the file, a magic other than 1, an index that
# does not follow the previous one, a term smaller than the previous one.
# The data ends at the start of that entry (DLedger 0.1 and 0.2 have no
# zero-size test, but the `pos` test ends the data at the same place).
# RocketMQ uses DLedger 0.1 (4.5.0 to 4.7.1), 0.2.2 (4.8.0 to 4.9.2),
# 0.2.3 (4.9.3), 0.2.6 (4.9.4), 0.3.1 (5.0.0, 5.1.0) and 0.3.1.2 (4.9.5 to
# 4.9.8, 5.1.1 to 5.3.3), 0.3.2 from a release after 5.3.3 to 5.5.0
# (which one is not established: issue #10651 of 2026-07-23 reports the
# develop branch on 0.3.2) and 0.3.3.4 from 5.5.1 (PR #10958); all write
# this same layout. `channel`,
# `chain_crc` and `body_crc` are reserved and written as 0.
#
# Broker DLedger mode is deprecated from 5.5.1 on (apache/rocketmq issue
# #10641, pull request #10642: the broker warns at startup with
# `enableDLegerCommitLog=true`; controller mode is the recommended
# failover). Brokers still write this layout; the DLedger-based controller
# is not deprecated.
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/DLedgerMmapFileStore.java
# See: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/MmapFileList.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/dledger/DLedgerCommitLog.java
rocketmq_dledger_data = ka.Struct(
    # Entries up to the end of the valid data of this file. The last
    # element is the BLANK filler or the zero-filled tail, unless the file
    # ends right after an entry.
    "records" / ka.RepeatUntil(lambda item, this: not item["is_entry"] or ka.io_eof(this), record),
)
