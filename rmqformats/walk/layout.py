"""Byte positions of the commit-log record fields, derived from the generated layout tables.

The compiled kernels need plain integer constants (the position of each
fixed-width field in a record, the widths that depend on the version and host
flags). They are computed here, at import, from
``generated/layouts/rocketmq_commitlog.py``, which the code generator derives
from ``formats/rocketmq_commitlog.ksy``; nothing about the layout is written
down twice. The DLedger entry header's positions come the same way from
``generated/layouts/rocketmq_dledger_data.py`` (``formats/rocketmq_dledger_data.ksy``).
"""

from __future__ import annotations

import struct

from ..generated.layouts import rocketmq_commitlog as _L

# The derivation below walks the fields in the spec's order; fail at import if it changes.
assert _L.RECORD_SEQ == ("len_record", "magic", "body")
assert _L.MESSAGE_SEQ == (
    "body_crc", "queue_id", "flag", "queue_offset", "ofs_physical", "sys_flag", "born_timestamp",
    "born_host", "store_timestamp", "store_host", "reconsume_times", "ofs_prepared_transaction",
    "len_body", "body", "len_topic", "topic", "len_properties", "properties",
)
assert _L.HOST_V4_SEQ == _L.HOST_V6_SEQ == ("address", "port")
assert _L.ENDIAN == ">"


def _positions(runs, start: int) -> dict[str, tuple[int, int, bool]]:
    """``id -> (position, width, signed)`` for the fields of struct ``runs`` laid end to end from ``start``."""
    out = {}
    pos = start
    for ids, fmt in runs:
        for name, code in zip(ids, fmt[1:]):
            width = struct.calcsize(">" + code)
            out[name] = (pos, width, code.islower())
            pos += width
    return out


_head = _positions(_L.RECORD_RUNS, 0)
_fixed = _positions(_L.MESSAGE_RUNS[:1], _head["magic"][0] + _head["magic"][1])
_store_ts = _positions(_L.MESSAGE_RUNS[1:2], 0)
_tail = _positions(_L.MESSAGE_RUNS[2:3], 0)
_props = _positions(_L.MESSAGE_RUNS[3:4], 0)
_port = _positions(_L.HOST_V4_RUNS, 0)
assert _positions(_L.HOST_V6_RUNS, 0) == _port

#: TOTALSIZE and MAGICCODE: the 8-byte header every record (BLANK included) starts with.
HEADER = _head["magic"][0] + _head["magic"][1]
assert _head["len_record"][:2] == (0, 4) and _head["magic"][:2] == (4, 4)

# Fields at fixed positions, from BODYCRC to BORNTIMESTAMP.
POS_BODY_CRC = _fixed["body_crc"][0]
POS_QUEUE_ID = _fixed["queue_id"][0]
POS_FLAG = _fixed["flag"][0]
POS_QUEUE_OFFSET = _fixed["queue_offset"][0]
POS_PHYSICAL = _fixed["ofs_physical"][0]
POS_SYS_FLAG = _fixed["sys_flag"][0]
POS_BORN_TS = _fixed["born_timestamp"][0]
#: BORNHOST starts right after BORNTIMESTAMP.
POS_BORN_HOST = _fixed["born_timestamp"][0] + _fixed["born_timestamp"][1]
assert [w for _, w, _ in _fixed.values()] == [4, 4, 4, 8, 8, 4, 8]

#: Address widths of a host, by its IPv6 flag; the port follows the address.
ADDRESS_V4 = _L.HOST_V4_VALUES["len_address"]({})
ADDRESS_V6 = _L.HOST_V6_VALUES["len_address"]({})
PORT_WIDTH = _port["port"][1]
STORE_TS_WIDTH = _store_ts["store_timestamp"][1]
# RECONSUMETIMES, PREPAREDTRANSACTIONOFFSET, BODYLENGTH after the store host.
REL_RECONSUME = _tail["reconsume_times"][0]
REL_PREPARED = _tail["ofs_prepared_transaction"][0]
REL_LEN_BODY = _tail["len_body"][0]
TAIL_WIDTH = REL_LEN_BODY + _tail["len_body"][1]
assert (_tail["reconsume_times"][1], _tail["ofs_prepared_transaction"][1], _tail["len_body"][1]) == (4, 8, 4)

#: TOPICLENGTH width by record version (1: V1, the switch's default; 2: V2); both signed.
_LEN_TOPIC_V1_FMT = _L.MESSAGE_LEN_TOPIC_CASES["_"]
_LEN_TOPIC_V2_FMT = _L.MESSAGE_LEN_TOPIC_CASES["magic_code::message_v2"]
LEN_TOPIC_V1 = struct.calcsize(_LEN_TOPIC_V1_FMT)
LEN_TOPIC_V2 = struct.calcsize(_LEN_TOPIC_V2_FMT)
assert _LEN_TOPIC_V1_FMT[1:].islower() and _LEN_TOPIC_V2_FMT[1:].islower()
LEN_PROPERTIES = _props["len_properties"][1]
assert _props["len_properties"][2]  # signed

MAGIC_V1 = _L.MAGIC_CODE["message_v1"]
MAGIC_V2 = _L.MAGIC_CODE["message_v2"]
MAGIC_BLANK = _L.MAGIC_CODE["blank"]

BORN_V6 = _L.SYS_FLAG_BITS["is_born_host_v6"][0]
STORE_V6 = _L.SYS_FLAG_BITS["is_store_host_v6"][0]
COMPRESSED = _L.SYS_FLAG_BITS["is_compressed"][0]
INNER_BATCH = _L.SYS_FLAG_BITS["is_inner_batch"][0]
COMPRESSION_MASK, COMPRESSION_SHIFT = _L.SYS_FLAG_BITS["compression_type"]
COMPRESSION_NAMES = {v: k for k, v in _L.COMPRESSION_TYPE.items()}

# -- DLedger entries (formats/rocketmq_dledger_data.ksy): a header, then one message record ----------------

from ..generated.layouts import rocketmq_dledger_data as _D  # noqa: E402

assert _D.RECORD_SEQ == ("magic", "len_entry", "body")
assert _D.ENTRY_BODY_SEQ == ("index", "term", "ofs_entry", "channel", "chain_crc", "body_crc", "len_body", "body")
assert _D.ENDIAN == ">"
_entry_head = _positions(_D.RECORD_RUNS, 0)
_entry_body = _positions(_D.ENTRY_BODY_RUNS, _entry_head["len_entry"][0] + _entry_head["len_entry"][1])
#: Positions of the entry header's fields (``DLedgerEntryCoder``); all signed.
ENTRY_POS_MAGIC = _entry_head["magic"][0]
ENTRY_POS_SIZE = _entry_head["len_entry"][0]
ENTRY_POS_INDEX = _entry_body["index"][0]
ENTRY_POS_TERM = _entry_body["term"][0]
ENTRY_POS_POS = _entry_body["ofs_entry"][0]
ENTRY_POS_CHANNEL = _entry_body["channel"][0]
ENTRY_POS_CHAIN_CRC = _entry_body["chain_crc"][0]
ENTRY_POS_BODY_CRC = _entry_body["body_crc"][0]
ENTRY_POS_LEN_BODY = _entry_body["len_body"][0]
#: Magic code and size: what an entry and the BLANK filler both start with.
ENTRY_PREFIX = ENTRY_POS_SIZE + _entry_head["len_entry"][1]
#: ``DLedgerEntry.BODY_OFFSET``: bytes of an entry before its message record.
ENTRY_HEADER = ENTRY_POS_LEN_BODY + _entry_body["len_body"][1]
assert all(signed for _, _, signed in (*_entry_head.values(), *_entry_body.values()))
assert [w for _, w, _ in _entry_head.values()] == [4, 4]
assert [w for _, w, _ in _entry_body.values()] == [8, 8, 8, 4, 4, 4, 4]
ENTRY_MAGIC = _D.ENTRY_MAGIC["normal"]
ENTRY_MAGIC_BLANK = _D.ENTRY_MAGIC["blank"]
