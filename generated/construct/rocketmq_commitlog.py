# Generated from formats/rocketmq_commitlog.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ commit log segment: construct schema generated from formats/rocketmq_commitlog.ksy.

``rocketmq_commitlog`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "MagicCode",
    "CompressionType",
    "TransactionType",
    "sys_flag",
    "host_v6",
    "host_v4",
    "message",
    "record",
    "rocketmq_commitlog",
]


class MagicCode(enum.IntEnum):
    """Kaitai enum magic_code (enums/magic_code)."""

    # Zero-filled tail of a pre-allocated segment; the data of the segment
    # ends here.
    zero_fill = 0

    # Message record, version 1 (1-byte topic length), all releases;
    # 0xDAA320A7 as an unsigned value.
    message_v1 = -626843481

    # Message record, version 2 (2-byte topic length), 5.1.0+;
    # 0xDAA320AB as an unsigned value.
    message_v2 = -626843477

    # End-of-segment record; the rest of the segment is padding.
    # 0xCBD43194 as an unsigned value.
    blank = -875286124


class CompressionType(enum.IntEnum):
    """Kaitai enum compression_type (enums/compression_type)."""

    # No type bits, as written before 4.9.4; a compressed body is then zlib.
    unspecified = 0

    # LZ4 frame format (lz4-java `LZ4FrameOutputStream`).
    lz4 = 1

    # Zstandard frame (zstd-jni).
    zstd = 2

    # zlib stream (RFC 1950, `java.util.zip.Deflater`).
    zlib = 3


class TransactionType(enum.IntEnum):
    """Kaitai enum transaction_type (enums/transaction_type)."""

    # Not a transaction record (also transaction half messages since 4.3.0).
    not_type = 0

    # Prepared (half) message, as stored by 4.0.0 to 4.2.0 and by raw puts.
    prepared = 1

    # Commit record; `ofs_prepared_transaction` points at the half message.
    commit = 2

    # Rollback record; `ofs_prepared_transaction` points at the half message.
    rollback = 3


# The 32-bit SYSFLAG field, most significant bit first. Bit 0 marks a
# compressed body, bits 2-3 the transaction type, bits 4 and 5 IPv6
# hosts (4.6.0+), bits 6 and 7 an inner batch (5.0.0+), and bits 8-10
# the compression type (set by 4.9.4+ producer clients).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java
sys_flag = c.Bitwise(ka.Struct(
    # Bits 11-31, unused by every release.
    "reserved" / c.BitsInteger(21),
    # Bits 8-10, the body compression algorithm when `is_compressed` is
    # set. The producer client sets them (4.9.4+ clients) and the broker
    # stores them as sent, so a broker of any release stores them when a
    # newer client sends them: they date the client, not the broker.
    "compression_type" / c.Enum(c.BitsInteger(3), CompressionType),
    # Bit 7, the record is an inner batch (5.0.0+; 4.9.4 to 4.9.8 declare
    # the constant but never set it).
    "is_inner_batch" / c.Flag,
    # Bit 6, the body is a batch the consumer must unwrap (5.0.0+; 4.9.4
    # to 4.9.8 declare the constant but never set it).
    "needs_unwrap" / c.Flag,
    # Bit 5, the store host field is 20 bytes (IPv6, 4.6.0+).
    "is_store_host_v6" / c.Flag,
    # Bit 4, the born host field is 20 bytes (IPv6, 4.6.0+).
    "is_born_host_v6" / c.Flag,
    # Bits 2-3, the transaction role of the record.
    "transaction_type" / c.Enum(c.BitsInteger(2), TransactionType),
    # Bit 1, the topic's filter type is MULTI_TAG.
    "is_multi_tags" / c.Flag,
    # Bit 0, the body is compressed.
    "is_compressed" / c.Flag,
    # The name of every set bit or bit group, lowest bit first, each
    # after a space; empty when no bit is set.
    "flag_list" / c.Computed(lambda this: (
        (" COMPRESSED" if this["is_compressed"] else "")
        + (" MULTI_TAGS" if this["is_multi_tags"] else "")
        + (" PREPARED" if ka.enum_value(this["transaction_type"], TransactionType) == TransactionType.prepared else "")
        + (" COMMIT" if ka.enum_value(this["transaction_type"], TransactionType) == TransactionType.commit else "")
        + (" ROLLBACK" if ka.enum_value(this["transaction_type"], TransactionType) == TransactionType.rollback else "")
        + (" BORNHOST_V6" if this["is_born_host_v6"] else "")
        + (" STOREHOST_V6" if this["is_store_host_v6"] else "")
        + (" NEED_UNWRAP" if this["needs_unwrap"] else "")
        + (" INNER_BATCH" if this["is_inner_batch"] else "")
        + (" LZ4" if ka.enum_value(this["compression_type"], CompressionType) == CompressionType.lz4 else "")
        + (" ZSTD" if ka.enum_value(this["compression_type"], CompressionType) == CompressionType.zstd else "")
        + (" ZLIB" if ka.enum_value(this["compression_type"], CompressionType) == CompressionType.zlib else "")
        + (" RESERVED_BITS" if this["reserved"] != 0 else "")
    )),
    # `flag_list` without its leading space, or `none`: what the Web IDE
    # shows for the field.
    "flag_names" / c.Computed(lambda this: (
        "none"
        if this["flag_list"] == ""
        else this["flag_list"][1:len(this["flag_list"])]
    )),
))


# An IPv6 socket address as `MessageExt.socketAddress2ByteBuffer` writes
# it: the 16 address bytes in network order, then the port as a 4-byte
# int (20 bytes).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageExt.java
host_v6 = ka.Struct(
    # Width of the address bytes.
    "len_address" / c.Computed(16),
    # IPv6 address bytes.
    "address" / c.Bytes(16),
    # High four bits of byte 0 of an IPv6 address.
    "nibble_0" / c.Computed(lambda this: (this["address"][0] >> 4) & 15),
    # Low four bits of byte 0 of an IPv6 address.
    "nibble_1" / c.Computed(lambda this: this["address"][0] & 15),
    # High four bits of byte 1 of an IPv6 address.
    "nibble_2" / c.Computed(lambda this: (this["address"][1] >> 4) & 15),
    # Low four bits of byte 1 of an IPv6 address.
    "nibble_3" / c.Computed(lambda this: this["address"][1] & 15),
    # Bytes 0 and 1 of an IPv6 address as four hex digits.
    "ipv6_group_0" / c.Computed(lambda this: (
        (str(this["nibble_0"]) if this["nibble_0"] < 10 else ("a" if this["nibble_0"] == 10 else ("b" if this["nibble_0"] == 11 else ("c" if this["nibble_0"] == 12 else ("d" if this["nibble_0"] == 13 else ("e" if this["nibble_0"] == 14 else "f"))))))
        + (str(this["nibble_1"]) if this["nibble_1"] < 10 else ("a" if this["nibble_1"] == 10 else ("b" if this["nibble_1"] == 11 else ("c" if this["nibble_1"] == 12 else ("d" if this["nibble_1"] == 13 else ("e" if this["nibble_1"] == 14 else "f"))))))
        + (str(this["nibble_2"]) if this["nibble_2"] < 10 else ("a" if this["nibble_2"] == 10 else ("b" if this["nibble_2"] == 11 else ("c" if this["nibble_2"] == 12 else ("d" if this["nibble_2"] == 13 else ("e" if this["nibble_2"] == 14 else "f"))))))
        + (str(this["nibble_3"]) if this["nibble_3"] < 10 else ("a" if this["nibble_3"] == 10 else ("b" if this["nibble_3"] == 11 else ("c" if this["nibble_3"] == 12 else ("d" if this["nibble_3"] == 13 else ("e" if this["nibble_3"] == 14 else "f"))))))
    )),
    # High four bits of byte 2 of an IPv6 address.
    "nibble_4" / c.Computed(lambda this: (this["address"][2] >> 4) & 15),
    # Low four bits of byte 2 of an IPv6 address.
    "nibble_5" / c.Computed(lambda this: this["address"][2] & 15),
    # High four bits of byte 3 of an IPv6 address.
    "nibble_6" / c.Computed(lambda this: (this["address"][3] >> 4) & 15),
    # Low four bits of byte 3 of an IPv6 address.
    "nibble_7" / c.Computed(lambda this: this["address"][3] & 15),
    # Bytes 2 and 3 of an IPv6 address as four hex digits.
    "ipv6_group_1" / c.Computed(lambda this: (
        (str(this["nibble_4"]) if this["nibble_4"] < 10 else ("a" if this["nibble_4"] == 10 else ("b" if this["nibble_4"] == 11 else ("c" if this["nibble_4"] == 12 else ("d" if this["nibble_4"] == 13 else ("e" if this["nibble_4"] == 14 else "f"))))))
        + (str(this["nibble_5"]) if this["nibble_5"] < 10 else ("a" if this["nibble_5"] == 10 else ("b" if this["nibble_5"] == 11 else ("c" if this["nibble_5"] == 12 else ("d" if this["nibble_5"] == 13 else ("e" if this["nibble_5"] == 14 else "f"))))))
        + (str(this["nibble_6"]) if this["nibble_6"] < 10 else ("a" if this["nibble_6"] == 10 else ("b" if this["nibble_6"] == 11 else ("c" if this["nibble_6"] == 12 else ("d" if this["nibble_6"] == 13 else ("e" if this["nibble_6"] == 14 else "f"))))))
        + (str(this["nibble_7"]) if this["nibble_7"] < 10 else ("a" if this["nibble_7"] == 10 else ("b" if this["nibble_7"] == 11 else ("c" if this["nibble_7"] == 12 else ("d" if this["nibble_7"] == 13 else ("e" if this["nibble_7"] == 14 else "f"))))))
    )),
    # High four bits of byte 4 of an IPv6 address.
    "nibble_8" / c.Computed(lambda this: (this["address"][4] >> 4) & 15),
    # Low four bits of byte 4 of an IPv6 address.
    "nibble_9" / c.Computed(lambda this: this["address"][4] & 15),
    # High four bits of byte 5 of an IPv6 address.
    "nibble_10" / c.Computed(lambda this: (this["address"][5] >> 4) & 15),
    # Low four bits of byte 5 of an IPv6 address.
    "nibble_11" / c.Computed(lambda this: this["address"][5] & 15),
    # Bytes 4 and 5 of an IPv6 address as four hex digits.
    "ipv6_group_2" / c.Computed(lambda this: (
        (str(this["nibble_8"]) if this["nibble_8"] < 10 else ("a" if this["nibble_8"] == 10 else ("b" if this["nibble_8"] == 11 else ("c" if this["nibble_8"] == 12 else ("d" if this["nibble_8"] == 13 else ("e" if this["nibble_8"] == 14 else "f"))))))
        + (str(this["nibble_9"]) if this["nibble_9"] < 10 else ("a" if this["nibble_9"] == 10 else ("b" if this["nibble_9"] == 11 else ("c" if this["nibble_9"] == 12 else ("d" if this["nibble_9"] == 13 else ("e" if this["nibble_9"] == 14 else "f"))))))
        + (str(this["nibble_10"]) if this["nibble_10"] < 10 else ("a" if this["nibble_10"] == 10 else ("b" if this["nibble_10"] == 11 else ("c" if this["nibble_10"] == 12 else ("d" if this["nibble_10"] == 13 else ("e" if this["nibble_10"] == 14 else "f"))))))
        + (str(this["nibble_11"]) if this["nibble_11"] < 10 else ("a" if this["nibble_11"] == 10 else ("b" if this["nibble_11"] == 11 else ("c" if this["nibble_11"] == 12 else ("d" if this["nibble_11"] == 13 else ("e" if this["nibble_11"] == 14 else "f"))))))
    )),
    # High four bits of byte 6 of an IPv6 address.
    "nibble_12" / c.Computed(lambda this: (this["address"][6] >> 4) & 15),
    # Low four bits of byte 6 of an IPv6 address.
    "nibble_13" / c.Computed(lambda this: this["address"][6] & 15),
    # High four bits of byte 7 of an IPv6 address.
    "nibble_14" / c.Computed(lambda this: (this["address"][7] >> 4) & 15),
    # Low four bits of byte 7 of an IPv6 address.
    "nibble_15" / c.Computed(lambda this: this["address"][7] & 15),
    # Bytes 6 and 7 of an IPv6 address as four hex digits.
    "ipv6_group_3" / c.Computed(lambda this: (
        (str(this["nibble_12"]) if this["nibble_12"] < 10 else ("a" if this["nibble_12"] == 10 else ("b" if this["nibble_12"] == 11 else ("c" if this["nibble_12"] == 12 else ("d" if this["nibble_12"] == 13 else ("e" if this["nibble_12"] == 14 else "f"))))))
        + (str(this["nibble_13"]) if this["nibble_13"] < 10 else ("a" if this["nibble_13"] == 10 else ("b" if this["nibble_13"] == 11 else ("c" if this["nibble_13"] == 12 else ("d" if this["nibble_13"] == 13 else ("e" if this["nibble_13"] == 14 else "f"))))))
        + (str(this["nibble_14"]) if this["nibble_14"] < 10 else ("a" if this["nibble_14"] == 10 else ("b" if this["nibble_14"] == 11 else ("c" if this["nibble_14"] == 12 else ("d" if this["nibble_14"] == 13 else ("e" if this["nibble_14"] == 14 else "f"))))))
        + (str(this["nibble_15"]) if this["nibble_15"] < 10 else ("a" if this["nibble_15"] == 10 else ("b" if this["nibble_15"] == 11 else ("c" if this["nibble_15"] == 12 else ("d" if this["nibble_15"] == 13 else ("e" if this["nibble_15"] == 14 else "f"))))))
    )),
    # High four bits of byte 8 of an IPv6 address.
    "nibble_16" / c.Computed(lambda this: (this["address"][8] >> 4) & 15),
    # Low four bits of byte 8 of an IPv6 address.
    "nibble_17" / c.Computed(lambda this: this["address"][8] & 15),
    # High four bits of byte 9 of an IPv6 address.
    "nibble_18" / c.Computed(lambda this: (this["address"][9] >> 4) & 15),
    # Low four bits of byte 9 of an IPv6 address.
    "nibble_19" / c.Computed(lambda this: this["address"][9] & 15),
    # Bytes 8 and 9 of an IPv6 address as four hex digits.
    "ipv6_group_4" / c.Computed(lambda this: (
        (str(this["nibble_16"]) if this["nibble_16"] < 10 else ("a" if this["nibble_16"] == 10 else ("b" if this["nibble_16"] == 11 else ("c" if this["nibble_16"] == 12 else ("d" if this["nibble_16"] == 13 else ("e" if this["nibble_16"] == 14 else "f"))))))
        + (str(this["nibble_17"]) if this["nibble_17"] < 10 else ("a" if this["nibble_17"] == 10 else ("b" if this["nibble_17"] == 11 else ("c" if this["nibble_17"] == 12 else ("d" if this["nibble_17"] == 13 else ("e" if this["nibble_17"] == 14 else "f"))))))
        + (str(this["nibble_18"]) if this["nibble_18"] < 10 else ("a" if this["nibble_18"] == 10 else ("b" if this["nibble_18"] == 11 else ("c" if this["nibble_18"] == 12 else ("d" if this["nibble_18"] == 13 else ("e" if this["nibble_18"] == 14 else "f"))))))
        + (str(this["nibble_19"]) if this["nibble_19"] < 10 else ("a" if this["nibble_19"] == 10 else ("b" if this["nibble_19"] == 11 else ("c" if this["nibble_19"] == 12 else ("d" if this["nibble_19"] == 13 else ("e" if this["nibble_19"] == 14 else "f"))))))
    )),
    # High four bits of byte 10 of an IPv6 address.
    "nibble_20" / c.Computed(lambda this: (this["address"][10] >> 4) & 15),
    # Low four bits of byte 10 of an IPv6 address.
    "nibble_21" / c.Computed(lambda this: this["address"][10] & 15),
    # High four bits of byte 11 of an IPv6 address.
    "nibble_22" / c.Computed(lambda this: (this["address"][11] >> 4) & 15),
    # Low four bits of byte 11 of an IPv6 address.
    "nibble_23" / c.Computed(lambda this: this["address"][11] & 15),
    # Bytes 10 and 11 of an IPv6 address as four hex digits.
    "ipv6_group_5" / c.Computed(lambda this: (
        (str(this["nibble_20"]) if this["nibble_20"] < 10 else ("a" if this["nibble_20"] == 10 else ("b" if this["nibble_20"] == 11 else ("c" if this["nibble_20"] == 12 else ("d" if this["nibble_20"] == 13 else ("e" if this["nibble_20"] == 14 else "f"))))))
        + (str(this["nibble_21"]) if this["nibble_21"] < 10 else ("a" if this["nibble_21"] == 10 else ("b" if this["nibble_21"] == 11 else ("c" if this["nibble_21"] == 12 else ("d" if this["nibble_21"] == 13 else ("e" if this["nibble_21"] == 14 else "f"))))))
        + (str(this["nibble_22"]) if this["nibble_22"] < 10 else ("a" if this["nibble_22"] == 10 else ("b" if this["nibble_22"] == 11 else ("c" if this["nibble_22"] == 12 else ("d" if this["nibble_22"] == 13 else ("e" if this["nibble_22"] == 14 else "f"))))))
        + (str(this["nibble_23"]) if this["nibble_23"] < 10 else ("a" if this["nibble_23"] == 10 else ("b" if this["nibble_23"] == 11 else ("c" if this["nibble_23"] == 12 else ("d" if this["nibble_23"] == 13 else ("e" if this["nibble_23"] == 14 else "f"))))))
    )),
    # High four bits of byte 12 of an IPv6 address.
    "nibble_24" / c.Computed(lambda this: (this["address"][12] >> 4) & 15),
    # Low four bits of byte 12 of an IPv6 address.
    "nibble_25" / c.Computed(lambda this: this["address"][12] & 15),
    # High four bits of byte 13 of an IPv6 address.
    "nibble_26" / c.Computed(lambda this: (this["address"][13] >> 4) & 15),
    # Low four bits of byte 13 of an IPv6 address.
    "nibble_27" / c.Computed(lambda this: this["address"][13] & 15),
    # Bytes 12 and 13 of an IPv6 address as four hex digits.
    "ipv6_group_6" / c.Computed(lambda this: (
        (str(this["nibble_24"]) if this["nibble_24"] < 10 else ("a" if this["nibble_24"] == 10 else ("b" if this["nibble_24"] == 11 else ("c" if this["nibble_24"] == 12 else ("d" if this["nibble_24"] == 13 else ("e" if this["nibble_24"] == 14 else "f"))))))
        + (str(this["nibble_25"]) if this["nibble_25"] < 10 else ("a" if this["nibble_25"] == 10 else ("b" if this["nibble_25"] == 11 else ("c" if this["nibble_25"] == 12 else ("d" if this["nibble_25"] == 13 else ("e" if this["nibble_25"] == 14 else "f"))))))
        + (str(this["nibble_26"]) if this["nibble_26"] < 10 else ("a" if this["nibble_26"] == 10 else ("b" if this["nibble_26"] == 11 else ("c" if this["nibble_26"] == 12 else ("d" if this["nibble_26"] == 13 else ("e" if this["nibble_26"] == 14 else "f"))))))
        + (str(this["nibble_27"]) if this["nibble_27"] < 10 else ("a" if this["nibble_27"] == 10 else ("b" if this["nibble_27"] == 11 else ("c" if this["nibble_27"] == 12 else ("d" if this["nibble_27"] == 13 else ("e" if this["nibble_27"] == 14 else "f"))))))
    )),
    # High four bits of byte 14 of an IPv6 address.
    "nibble_28" / c.Computed(lambda this: (this["address"][14] >> 4) & 15),
    # Low four bits of byte 14 of an IPv6 address.
    "nibble_29" / c.Computed(lambda this: this["address"][14] & 15),
    # High four bits of byte 15 of an IPv6 address.
    "nibble_30" / c.Computed(lambda this: (this["address"][15] >> 4) & 15),
    # Low four bits of byte 15 of an IPv6 address.
    "nibble_31" / c.Computed(lambda this: this["address"][15] & 15),
    # Bytes 14 and 15 of an IPv6 address as four hex digits.
    "ipv6_group_7" / c.Computed(lambda this: (
        (str(this["nibble_28"]) if this["nibble_28"] < 10 else ("a" if this["nibble_28"] == 10 else ("b" if this["nibble_28"] == 11 else ("c" if this["nibble_28"] == 12 else ("d" if this["nibble_28"] == 13 else ("e" if this["nibble_28"] == 14 else "f"))))))
        + (str(this["nibble_29"]) if this["nibble_29"] < 10 else ("a" if this["nibble_29"] == 10 else ("b" if this["nibble_29"] == 11 else ("c" if this["nibble_29"] == 12 else ("d" if this["nibble_29"] == 13 else ("e" if this["nibble_29"] == 14 else "f"))))))
        + (str(this["nibble_30"]) if this["nibble_30"] < 10 else ("a" if this["nibble_30"] == 10 else ("b" if this["nibble_30"] == 11 else ("c" if this["nibble_30"] == 12 else ("d" if this["nibble_30"] == 13 else ("e" if this["nibble_30"] == 14 else "f"))))))
        + (str(this["nibble_31"]) if this["nibble_31"] < 10 else ("a" if this["nibble_31"] == 10 else ("b" if this["nibble_31"] == 11 else ("c" if this["nibble_31"] == 12 else ("d" if this["nibble_31"] == 13 else ("e" if this["nibble_31"] == 14 else "f"))))))
    )),
    # An IPv6 address, uncompressed, in lower-case hex.
    "ipv6_text" / c.Computed(lambda this: (
        this["ipv6_group_0"]
        + ":"
        + this["ipv6_group_1"]
        + ":"
        + this["ipv6_group_2"]
        + ":"
        + this["ipv6_group_3"]
        + ":"
        + this["ipv6_group_4"]
        + ":"
        + this["ipv6_group_5"]
        + ":"
        + this["ipv6_group_6"]
        + ":"
        + this["ipv6_group_7"]
    )),
    # The address as eight groups of four hex digits
    # (`2001:0db8:0000:...`).
    "address_text" / c.Computed(lambda this: this["ipv6_text"]),
    # TCP port.
    "port" / c.Int32sb,
)


# An IPv4 socket address as `MessageExt.socketAddress2ByteBuffer` writes
# it: the 4 address bytes in network order, then the port as a 4-byte
# int (8 bytes).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageExt.java
host_v4 = ka.Struct(
    # Width of the address bytes.
    "len_address" / c.Computed(4),
    # IPv4 address bytes.
    "address" / c.Bytes(4),
    # The address in dotted decimal.
    "address_text" / c.Computed(lambda this: (
        str((this["address"][0] & 255))
        + "."
        + str((this["address"][1] & 255))
        + "."
        + str((this["address"][2] & 255))
        + "."
        + str((this["address"][3] & 255))
    )),
    # TCP port.
    "port" / c.Int32sb,
)


# The fields of a message record after TOTALSIZE and MAGICCODE, in the
# order `MessageExtEncoder.encode` writes them.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/MessageExtEncoder.java
message = ka.Struct(
    # True for a V2 record (2-byte topic length), false for V1 (1-byte topic
    # length), from the record's magic code.
    "is_v2" / c.Computed(
        lambda this: ka.enum_value(this["_"]["magic"], MagicCode) == MagicCode.message_v2,
    ),
    # CRC-32 (zlib polynomial) of the stored body bytes, masked with
    # `0x7fffffff`; the compressed bytes when the body is compressed.
    "body_crc" / c.Int32sb,
    # Queue id within the topic.
    "queue_id" / c.Int32sb,
    # Opaque integer set by the producer (`Message.flag`).
    "flag" / c.Int32sb,
    # Logical offset of the message in its consume queue (0 for
    # transaction PREPARED and ROLLBACK records; the base offset for an
    # inner batch).
    "queue_offset" / c.Int64sb,
    # Commit-log offset of this record (segment start plus position).
    "ofs_physical" / c.Int64sb,
    # Message system flags; they choose the host widths and the body
    # encoding.
    "sys_flag" / sys_flag,
    # True when the born host is IPv6 (20 bytes), the SYSFLAG bit 4.
    "born_host_v6" / c.Computed(lambda this: this["sys_flag"]["is_born_host_v6"]),
    # True when the store host is IPv6 (20 bytes), the SYSFLAG bit 5.
    "store_host_v6" / c.Computed(lambda this: this["sys_flag"]["is_store_host_v6"]),
    # Bytes taken by the two host fields (8 or 20 each).
    "len_host_fields" / c.Computed(
        lambda this: (16 if this["sys_flag"]["is_born_host_v6"] else 4) + (16 if this["sys_flag"]["is_store_host_v6"] else 4) + 8,
    ),
    # Time the producer created the message, in milliseconds since the Unix
    # epoch.
    "born_timestamp" / c.Int64sb,
    # Address of the producer connection as the broker saw it.
    "born_host" / c.Switch(lambda this: this["born_host_v6"], {True: host_v6, False: host_v4}),
    # Time the broker appended the record, in milliseconds since the Unix
    # epoch.
    "store_timestamp" / c.Int64sb,
    # Address and listen port of the broker that stored the record.
    "store_host" / c.Switch(lambda this: this["store_host_v6"], {True: host_v6, False: host_v4}),
    # Number of times the message was sent back for redelivery.
    "reconsume_times" / c.Int32sb,
    # For a transaction COMMIT or ROLLBACK record, the commit-log offset
    # of the prepared (half) message; 0 otherwise.
    "ofs_prepared_transaction" / c.Int64sb,
    # Length of the stored body; no body bytes follow when it is 0 or less.
    "len_body" / c.Int32sb,
    # The body as stored: compressed when `sys_flag.is_compressed` is
    # set, and a batch of encoded messages for an inner batch.
    "body" / c.Bytes(lambda this: this["len_body"] if this["len_body"] > 0 else 0),
    # Byte length of the topic: a signed byte in V1, a signed short in
    # V2. A negative value is corrupt data.
    "len_topic" / ka.Valid(
        c.Switch(
            lambda this: ka.enum_value(this["_"]["magic"], MagicCode),
            {MagicCode.message_v2: c.Int16sb},
            default=c.Int8sb,
        ),
        ("min 0", lambda value, this: value >= 0),
    ),
    # Topic name as stored (after broker rewrites such as
    # `SCHEDULE_TOPIC_XXXX`).
    "topic" / c.StringEncoded(c.Bytes(lambda this: this["len_topic"]), "UTF-8"),
    # Byte length of the properties; none follow when it is 0 or less.
    "len_properties" / c.Int16sb,
    # The record size the broker's `calMsgLength` gives for these
    # fields; recovery rejects a record whose TOTALSIZE differs.
    "len_record_computed" / c.Computed(lambda this: (
        74
        + this["len_host_fields"]
        + (2 if this["is_v2"] else 1)
        + (this["len_body"] if this["len_body"] > 0 else 0)
        + this["len_topic"]
        + (this["len_properties"] if this["len_properties"] > 0 else 0)
    )),
    # Raw properties: `name U+0001 value` pairs separated by U+0002, with
    # or without a trailing separator depending on the writer's version.
    "properties" / c.StringEncoded(
        c.Bytes(lambda this: this["len_properties"] if this["len_properties"] > 0 else 0),
        "UTF-8",
    ),
)


# One commit-log record: a message (V1 or V2), the BLANK end-of-segment
# record, or the start of the zero-filled tail.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
record = ka.Struct(
    # Size of the whole record in bytes, this field included. For a
    # BLANK record, the number of bytes from this record to the end of
    # the segment.
    "len_record" / c.Int32sb,
    # Kind and version of the record; signed, as RocketMQ's Java holds
    # the magic codes (`int`), so the enum values are negative.
    "magic" / ka.Valid(
        c.Enum(c.Int32sb, MagicCode),
        ("in-enum magic_code", lambda value, this: ka.in_enum(value, MagicCode)),
    ),
    # True for a message record, false for BLANK and the zero-filled tail.
    "is_message" / c.Computed(lambda this: (
        ka.enum_value(this["magic"], MagicCode) == MagicCode.message_v1
        or ka.enum_value(this["magic"], MagicCode) == MagicCode.message_v2
    )),
    # Bytes of a BLANK record after its 8-byte header, up to the end of
    # the segment. Their content is unspecified (brokers before 4.9.1
    # left stale bytes of an earlier message there), so they are never
    # parsed.
    "len_padding" / c.Computed(lambda this: (
        this["len_record"] - 8
        if ka.enum_value(this["magic"], MagicCode) == MagicCode.blank
        else 0
    )),
    # The message fields that follow the size and the magic code.
    "body" / ka.If(
        lambda this: this["is_message"],
        c.FixedSized(lambda this: this["len_record"] - 8, message),
    ),
)


# One segment of an Apache RocketMQ broker commit log: the file
# `<store>/commitlog/<20-digit start offset>` that holds every message of
# every topic in arrival order. The commit log is one logical byte stream cut
# into equally sized segments (1 GiB by default, `mappedFileSizeCommitLog`,
# spelled `mapedFileSizeCommitLog` before 4.5.2);
# a segment's file name is the decimal commit-log offset of its first byte,
# and the commit-log offset of a record is that number plus the record's
# position in the file.
#
# A segment is a sequence of length-prefixed records. A message record
# starts with its total size and the magic code of its version: V1
# (`0xdaa320a7`, all releases) has a 1-byte topic length, V2 (`0xdaa320ab`,
# 5.1.0+, written when a topic is longer than 127 characters) a 2-byte one.
# A record never crosses the end of a segment: when the next message does
# not fit, the broker writes a BLANK record (magic `0xcbd43194`) whose size
# covers the rest of the segment, and only its first 8 bytes are
# meaningful. Segments are pre-allocated, so the newest one ends in a
# zero-filled tail that reads as a record of size 0 and magic 0.
#
# The sequence below stops at the first record that is not a message: a
# BLANK record (the rest of the segment is padding) or the zero-filled
# tail. This is where the broker's recovery (`CommitLog.recoverNormally`)
# stops reading a segment. All integers are big-endian and signed, as
# Java writes them.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/MessageExtEncoder.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
rocketmq_commitlog = ka.Struct(
    # Records up to the end of the valid data of this segment. The last
    # element is the BLANK record or the zero-filled tail, unless the file
    # ends right after a message.
    "records" / ka.RepeatUntil(lambda item, this: not item["is_message"] or ka.io_eof(this), record),
)
