# Generated from formats/rocketmq_dledger_index.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_dledger_index, derived from its .ksy spec."""

ENDIAN = ">"

UNIT_MAGIC = {
    "zero_fill": 0,
    "normal": 1,
}

ROCKETMQ_DLEDGER_INDEX_SEQ = (
    "units",
)
ROCKETMQ_DLEDGER_INDEX_RUNS = (
)

UNIT_SEQ = (
    "magic",
    "ofs_entry",
    "len_entry",
    "index",
    "term",
)
UNIT_RUNS = (
    (("magic", "ofs_entry", "len_entry", "index", "term"), ">Iqiqq"),
)
