# Generated from formats/rocketmq_tiered_commitlog.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_tiered_commitlog, derived from its .ksy spec."""

ENDIAN = ">"

ROCKETMQ_TIERED_COMMITLOG_SEQ = (
    "records",
)
ROCKETMQ_TIERED_COMMITLOG_RUNS = (
)

CODA_SEQ = (
    "len_coda",
    "magic",
    "max_store_timestamp",
)
CODA_RUNS = (
    (("len_coda", "magic", "max_store_timestamp"), ">iIq"),
)
