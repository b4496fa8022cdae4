# Generated from formats/rocketmq_dledger_data.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_dledger_data, derived from its .ksy spec."""

ENDIAN = ">"

ENTRY_MAGIC = {
    "zero_fill": 0,
    "normal": 1,
    "blank": -1,
}

ROCKETMQ_DLEDGER_DATA_SEQ = (
    "records",
)
ROCKETMQ_DLEDGER_DATA_RUNS = (
)

RECORD_SEQ = (
    "magic",
    "len_entry",
    "body",
)
RECORD_RUNS = (
    (("magic", "len_entry"), ">ii"),
)

ENTRY_BODY_SEQ = (
    "index",
    "term",
    "ofs_entry",
    "channel",
    "chain_crc",
    "body_crc",
    "len_body",
    "body",
)
ENTRY_BODY_RUNS = (
    (("index", "term", "ofs_entry", "channel", "chain_crc", "body_crc", "len_body"), ">qqqiiii"),
)
