# Generated from formats/rocketmq_commitlog.ksy by `python -m rmqformats.codegen`; do not edit.
"""Fixed-width layouts and constants of rocketmq_commitlog, derived from its .ksy spec."""

ENDIAN = ">"

MAGIC_CODE = {
    "zero_fill": 0,
    "message_v1": -626843481,
    "message_v2": -626843477,
    "blank": -875286124,
}
COMPRESSION_TYPE = {
    "unspecified": 0,
    "lz4": 1,
    "zstd": 2,
    "zlib": 3,
}
TRANSACTION_TYPE = {
    "not_type": 0,
    "prepared": 1,
    "commit": 2,
    "rollback": 3,
}

ROCKETMQ_COMMITLOG_SEQ = (
    "records",
)
ROCKETMQ_COMMITLOG_RUNS = (
)

RECORD_SEQ = (
    "len_record",
    "magic",
    "body",
)
RECORD_RUNS = (
    (("len_record", "magic"), ">ii"),
)

MESSAGE_SEQ = (
    "body_crc",
    "queue_id",
    "flag",
    "queue_offset",
    "ofs_physical",
    "sys_flag",
    "born_timestamp",
    "born_host",
    "store_timestamp",
    "store_host",
    "reconsume_times",
    "ofs_prepared_transaction",
    "len_body",
    "body",
    "len_topic",
    "topic",
    "len_properties",
    "properties",
)
MESSAGE_RUNS = (
    (("body_crc", "queue_id", "flag", "queue_offset", "ofs_physical", "sys_flag", "born_timestamp"), ">iiiqqIq"),
    (("store_timestamp",), ">q"),
    (("reconsume_times", "ofs_prepared_transaction", "len_body"), ">iqi"),
    (("len_properties",), ">h"),
)
MESSAGE_LEN_TOPIC_CASES = {'magic_code::message_v2': '>h', '_': '>b'}
MESSAGE_PROPERTIES_NAMES = {
    "tags": "TAGS",
    "keys": "KEYS",
    "uniq_key": "UNIQ_KEY",
    "delay": "DELAY",
    "crc32": "__CRC32#",
    "priority": "_SYS_MSG_PRIORITY_",
    "lite_topic": "__LITE_TOPIC",
}

SYS_FLAG_BITS = {
    "reserved": (0xfffff800, 11),
    "compression_type": (0x700, 8),
    "is_inner_batch": (0x80, 7),
    "needs_unwrap": (0x40, 6),
    "is_store_host_v6": (0x20, 5),
    "is_born_host_v6": (0x10, 4),
    "transaction_type": (0xc, 2),
    "is_multi_tags": (0x2, 1),
    "is_compressed": (0x1, 0),
}
SYS_FLAG_SIZE = 4

HOST_V4_SEQ = (
    "address",
    "port",
)
HOST_V4_RUNS = (
    (("port",), ">i"),
)
HOST_V4_VALUES = {
    "len_address": lambda u: 4,
}

HOST_V6_SEQ = (
    "address",
    "port",
)
HOST_V6_RUNS = (
    (("port",), ">i"),
)
HOST_V6_VALUES = {
    "len_address": lambda u: 16,
}
