# Generated from formats/rocketmq_consumequeue_ext.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ consume queue extension file: construct schema generated from formats/rocketmq_consumequeue_ext.ksy.

``rocketmq_consumequeue_ext`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "unit_body",
    "unit",
    "rocketmq_consumequeue_ext",
]


# The fields of a unit after its size, in the order `CqExtUnit.write` puts
# them.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
unit_body = ka.Struct(
    # The message's tags hash (Java `String.hashCode` of TAGS,
    # sign-extended; 0 without tags), which the consume-queue unit
    # no longer holds.
    "tags_code" / c.Int64sb,
    # STORETIMESTAMP of the message, in milliseconds since the Unix epoch.
    "msg_store_time" / c.Int64sb,
    # Length of the filter bitmap in bytes (`bitMapLengthConsumeQueueExt`
    # bits / 8, 8 by default; 0 when the message has none).
    "len_filter_bit_map" / ka.Valid(c.Int16sb, ("min 0", lambda value, this: value >= 0)),
    # The unit size the writer derives from the bitmap; `len_unit` must
    # equal it.
    "len_unit_computed" / c.Computed(lambda this: 20 + this["len_filter_bit_map"]),
    # Bloom-filter bitmap of the message's SQL92 filter properties.
    "filter_bit_map" / c.Bytes(lambda this: this["len_filter_bit_map"]),
)


# One `CqExtUnit`, or the 2-byte end-of-file marker, or the start of
# the zero-filled tail.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
unit = ka.Struct(
    # Size of the whole unit in bytes, this field included: 20 plus the
    # bitmap length (`MIN_EXT_UNIT_SIZE + bitMapSize`, at most
    # `Short.MAX_VALUE`). -1 marks the end of a full file, 0 the
    # unwritten tail.
    "len_unit" / c.Int16sb,
    # True for a unit, false for the end-of-file marker and the zero-filled
    # tail.
    "is_unit" / c.Computed(lambda this: this["len_unit"] > 0),
    # The marker written when the next unit did not fit (`fullFillToEnd`).
    "is_end_marker" / c.Computed(lambda this: this["len_unit"] == -1),
    # The fields that follow the size.
    "body" / ka.If(
        lambda this: this["is_unit"],
        c.FixedSized(lambda this: this["len_unit"] - 2, unit_body),
    ),
)


# One file of the consume queue extension of a topic queue:
# `<store>/consumequeue_ext/<topic>/<queueId>/<20-digit start offset>`,
# written only when the broker runs with `enableConsumeQueueExt=true`.
# It keeps what does not fit in a 20-byte consume-queue unit: the real
# tags hash, the store time and the bloom-filter bitmap that SQL92
# filtering checks. Like the other mapped file queues it is one logical
# byte stream cut into equally sized files (48 MiB by default,
# `mappedFileSizeConsumeQueueExt`); a file's name is the stream offset of
# its first byte.
#
# A file is a sequence of length-prefixed units of 20 bytes plus the
# bitmap. A unit never crosses the end of a file: when the next one does
# not fit in the space left minus 4 bytes (`END_BLANK_DATA_LENGTH`), the
# broker writes the 2-byte size -1 as an end-of-file marker and continues
# in the next file. Files are pre-allocated, so the newest one ends in a
# zero-filled tail that reads as a unit of size 0. Readers
# (`ConsumeQueueExt.recover`, `CqExtUnit.read`) treat any size below 1 as
# the end of the file's data; the sequence below stops there.
#
# Address encoding. When a unit is written, the consume-queue unit of the
# same message gets, instead of the tags hash, the unit's stream offset
# plus `Long.MIN_VALUE` (`ConsumeQueueExt.decorate`): a negative 64-bit
# value. A consume-queue tagsCode is such an address when it is at most
# `MAX_ADDR` = `Integer.MIN_VALUE - 1` = -2147483649, and the stream
# offset is then `tagsCode - Long.MIN_VALUE` (`unDecorate`). Tags hashes
# are sign-extended 32-bit ints and delay delivery times are positive,
# so the ranges never overlap. The stream offset selects the file
# (the one whose start offset is at most the stream offset) and the
# position in it (the offset modulo the file size). All integers are
# big-endian and signed, as Java writes them.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
rocketmq_consumequeue_ext = ka.Struct(
    # Units up to the end of the file's data. The last element is the
    # end-of-file marker or the zero-filled tail, unless the file ends
    # right after a unit.
    "units" / ka.RepeatUntil(lambda item, this: not item["is_unit"] or ka.io_eof(this), unit),
)
