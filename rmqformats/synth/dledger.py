"""Building DLedger commit logs through the generated construct schemas.

:func:`write_dledger` lays commit-log records out as the DLedger file store
does (``DLedgerMmapFileStore.appendAsLeader`` with the append hook of
RocketMQ's ``DLedgerCommitLog``): each record becomes the body of an entry
with the next index, the entry goes where the previous one ended, unless it
does not leave 8 bytes free in its file (then a BLANK filler of magic -1
covers the rest and the entry starts the next file), and the record's
PHYSICALOFFSET is set to the entry position plus 48. The entry bytes, the
filler and the index units are built by ``generated/construct`` from
``formats/rocketmq_dledger_data.ksy`` and ``rocketmq_dledger_index.ksy``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from .. import properties as props
from ..errors import with_article
from ..generated.construct import rocketmq_commitlog as cs_log
from ..generated.construct import rocketmq_dledger_data as cs
from ..generated.construct import rocketmq_dledger_index as cs_index
from ..message import crc32

BODY_OFFSET = 48
#: ``MmapFileList.MIN_BLANK_LEN``: an entry must leave this many bytes free in its file.
MIN_BLANK = 8
_CRC_TAIL = len(props.CRC32) + 1 + 10 + 1


@dataclass(frozen=True)
class PlacedEntry:
    """Where :func:`write_dledger` put a record."""

    index: int
    term: int
    #: Entry position in the data files' byte stream.
    position: int
    #: Entry size (record size + 48).
    size: int
    #: The record as written (PHYSICALOFFSET rewritten).
    record: bytes

    @property
    def message_offset(self) -> int:
        """The message's commit-log offset: the entry position plus 48."""
        return self.position + BODY_OFFSET


def relocate_record(record: bytes, physical_offset: int, *, recompute_crc: bool = True) -> bytes:
    """``record`` (a commit-log message record) with PHYSICALOFFSET set.

    With ``recompute_crc`` a ``__CRC32#`` property gets the CRC of the new
    bytes; the compaction log and the tiered store copy records without
    recomputing it, so their ``__CRC32#`` no longer matches.
    """
    parsed = cs_log.record.parse(record)
    parsed.body.ofs_physical = physical_offset
    data = cs_log.record.build(parsed)
    text = parsed.body.properties
    if recompute_crc and props.CRC32 + props.NAME_VALUE_SEPARATOR in text and len(data) >= _CRC_TAIL:
        crc = crc32(data[: len(data) - _CRC_TAIL])
        digits = "".join(str(crc // 10 ** i % 10) for i in range(10))
        parsed.body.properties = text[:-11] + digits + props.PROPERTY_SEPARATOR
        data = cs_log.record.build(parsed)
    return data


def encode_entry(body: bytes, index: int, term: int, position: int, *, magic: str = "normal",
                 channel: int = 0, chain_crc: int = 0, body_crc: int = 0) -> bytes:
    """The bytes of one DLedger entry holding ``body``."""
    return cs.record.build({"magic": magic, "len_entry": len(body) + BODY_OFFSET, "body": {
        "index": index, "term": term, "ofs_entry": position, "channel": channel, "chain_crc": chain_crc,
        "body_crc": body_crc, "len_body": len(body), "body": body}})


def encode_filler(length: int) -> bytes:
    """The 8 bytes of a BLANK filler covering ``length`` bytes."""
    return cs.record.build({"magic": "blank", "len_entry": length, "body": None})


def encode_index_unit(position: int, size: int, index: int, term: int) -> bytes:
    """One 32-byte unit of the entry index."""
    return cs_index.unit.build({"magic": "normal", "ofs_entry": position, "len_entry": size, "index": index,
                                "term": term})


def write_dledger(base: str | os.PathLike[str], records: Iterable[bytes], file_size: int, *,
                  self_id: str = "n0", terms: Iterable[int] | None = None, first_index: int = 0,
                  start_position: int = 0, index_file_units: int = 64,
                  data_folders: list[str] | None = None, recompute_crc: bool = True,
                  keep_records: bool = True) -> list[PlacedEntry]:
    """Write ``records`` as ``<base>/dledger-<self_id>/data`` and ``index`` files; returns the entries.

    ``terms`` gives each entry's term (default 0). Data files are named by
    their start position and zero-filled to ``file_size``; with
    ``data_folders`` they go round-robin into those folders instead (as a
    multi-path DLedger store spreads them). Index files hold
    ``index_file_units`` units of 32 bytes. Files are written as they fill,
    so memory holds one data file; ``keep_records=False`` leaves the record
    bytes out of the returned entries (for large logs).
    """
    root = os.path.join(os.fspath(base), f"dledger-{self_id}")
    data_dirs = data_folders or [os.path.join(root, "data")]
    index_dir = os.path.join(root, "index")
    for d in [*data_dirs, index_dir]:
        os.makedirs(d, exist_ok=True)
    term_iter = iter(terms) if terms is not None else None
    placed: list[PlacedEntry] = []
    position = start_position
    index = first_index
    written = [0]  # data files written so far (for the round-robin over folders)
    current: list = [None, None]  # start, buffer of the data file being filled

    def flush() -> None:
        if current[0] is not None:
            folder = data_dirs[written[0] % len(data_dirs)]
            with open(os.path.join(folder, f"{current[0]:020d}"), "wb") as f:
                f.write(current[1])
            written[0] += 1

    def file_at(pos: int) -> bytearray:
        start = pos - pos % file_size
        if current[0] != start:
            flush()
            current[0], current[1] = start, bytearray(file_size)
        return current[1]

    unit_size = 32
    per_file = index_file_units * unit_size
    index_file: list = [None, None]

    def put_unit(e: PlacedEntry) -> None:
        at = e.index * unit_size
        start = at - at % per_file
        if index_file[0] != start:
            if index_file[0] is not None:
                with open(os.path.join(index_dir, f"{index_file[0]:020d}"), "wb") as f:
                    f.write(index_file[1])
            index_file[0], index_file[1] = start, bytearray(per_file)
        index_file[1][at - start:at - start + unit_size] = encode_index_unit(e.position, e.size, e.index, e.term)

    for record in records:
        size = len(record) + BODY_OFFSET
        if size + MIN_BLANK > file_size:
            raise ValueError(f"{with_article(size)}-byte entry does not fit {with_article(file_size)}-byte file")
        left = file_size - position % file_size
        if size + MIN_BLANK > left:
            file_at(position)[file_size - left:file_size - left + 8] = encode_filler(left)
            position += left
        term = next(term_iter) if term_iter is not None else 0
        body = relocate_record(record, position + BODY_OFFSET, recompute_crc=recompute_crc)
        data = encode_entry(body, index, term, position)
        buf = file_at(position)
        at = position % file_size
        buf[at:at + len(data)] = data
        e = PlacedEntry(index, term, position, len(data), body if keep_records else b"")
        placed.append(e)
        put_unit(e)
        position += len(data)
        index += 1
    file_at(position if placed else start_position)
    flush()
    if index_file[0] is not None:
        with open(os.path.join(index_dir, f"{index_file[0]:020d}"), "wb") as f:
            f.write(index_file[1])
    return placed


def write_checkpoint(base: str | os.PathLike[str], end_index: int, committed_index: int, self_id: str = "n0") -> str:
    """The library's ``checkpoint`` properties file (``endIndex``, ``committedIndex``)."""
    path = os.path.join(os.fspath(base), f"dledger-{self_id}", "checkpoint")
    with open(path, "w", encoding="latin-1") as f:
        f.write(f"#\n{'endIndex'}={end_index}\ncommittedIndex={committed_index}\n")
    return path
