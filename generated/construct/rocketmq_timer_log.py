# Generated from formats/rocketmq_timer_log.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ timer log segment: construct schema generated from formats/rocketmq_timer_log.ksy.

``rocketmq_timer_log`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "UnitMagic",
    "MagicFlag",
    "unit_body",
    "unit",
    "rocketmq_timer_log",
]


class UnitMagic(enum.IntEnum):
    """Kaitai enum unit_magic (enums/unit_magic)."""

    # Zero-filled tail of a pre-allocated segment; the data of the timer log
    # ends here.
    zero_fill = 0

    # A timer message to deliver at its due time.
    enqueue = 1

    # A message due beyond the roll window (`timerRollWindowSlot`, two
    # days by default): when this unit comes due the message is put back
    # into the timer topic and enqueued again, not delivered.
    roll = 3

    # A cancellation (the message carries the `TIMER_DEL_UNIQKEY`
    # property): when due, the timer message of the same slot whose
    # unique key that property names is dropped instead of delivered.
    delete = 5

    # A cancellation whose due time is beyond the roll window; it is rolled
    # like a roll unit.
    roll_delete = 7

    # Blank marker: the rest of the segment is unused and the timer log
    # goes on in the next segment. The same value as the commit log's
    # BLANK magic code (0xCBD43194 as an unsigned value).
    blank = -875286124


class MagicFlag(enum.IntEnum):
    """Kaitai enum magic_flag (enums/magic_flag)."""

    # Set in every unit a broker writes.
    enqueue_bit = 1

    # The unit only moves the message closer to its delivery time
    # (re-enqueue).
    roll_bit = 2

    # The unit cancels an earlier timer message.
    delete_bit = 4


# The fields of a unit after its 16-byte header.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
unit_body = ka.Struct(
    # The timer store's write clock (ms since the epoch, a multiple of
    # the timer precision) when the unit was appended.
    "curr_write_time_ms" / c.Int64sb,
    # Due time minus `curr_write_time_ms`, in ms. For a unit with the
    # roll bit this is the time of the next roll (within the roll
    # window), not the message's delivery time.
    "delay_ms" / c.Int32sb,
    # The due time in ms since the epoch: the wheel slot this unit is
    # linked into is the one for this time.
    "delayed_time_ms" / c.Computed(lambda this: this["curr_write_time_ms"] + this["delay_ms"]),
    # Commit-log offset of the message's record in topic
    # `rmq_sys_wheel_timer`.
    "ofs_commitlog" / c.Int64sb,
    # Size of that commit-log record (its TOTALSIZE).
    "len_message" / c.Int32sb,
    # Java `String.hashCode` of the message's real topic (its
    # `REAL_TOPIC` property), or 0 without one; used for timer metrics.
    "topic_hash" / c.Int32sb,
    # Written as 0 ("reserved value, just in case").
    "reserved" / c.Int64sb,
)


# One timer-log entry: a 52-byte unit (`UNIT_SIZE`), as
# `TimerMessageStore.doEnqueue` writes it, or the blank marker that ends
# a segment, or the start of the zero-filled tail. All three start with
# the same 16-byte header.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
unit = ka.Struct(
    # 52 for a unit. For the blank marker, the number of bytes from the
    # marker to the end of the segment.
    "len_unit" / c.Int32sb,
    # Timer-log offset of the unit put into the same wheel slot just
    # before this one, or -1 for the slot's first unit. 0 in the blank
    # marker.
    "ofs_prev" / c.Int64sb,
    # What the unit asks for (a combination of `magic_flag` bits), or the
    # blank marker; signed, as RocketMQ's Java holds it (`int`).
    "magic" / ka.Valid(
        c.Enum(c.Int32sb, UnitMagic),
        ("in-enum unit_magic", lambda value, this: ka.in_enum(value, UnitMagic)),
    ),
    # True for a unit, false for the blank marker and the zero-filled tail.
    "is_unit" / c.Computed(lambda this: (
        ka.enum_value(this["magic"], UnitMagic) != UnitMagic.blank
        and ka.enum_value(this["magic"], UnitMagic) != UnitMagic.zero_fill
    )),
    # The unit only moves its message closer to the delivery time
    # (`roll` and `roll_delete`).
    "is_roll" / c.Computed(lambda this: (
        this["is_unit"]
        and (int(ka.enum_value(this["magic"], UnitMagic)) & int(ka.enum_value(MagicFlag.roll_bit, MagicFlag))) != 0
    )),
    # The unit cancels a timer message (`delete` and `roll_delete`).
    "is_delete" / c.Computed(lambda this: (
        this["is_unit"]
        and (int(ka.enum_value(this["magic"], UnitMagic)) & int(ka.enum_value(MagicFlag.delete_bit, MagicFlag))) != 0
    )),
    # Bytes after the 16-byte blank marker up to the end of the segment
    # (0 with the default segment size); never written, so zero.
    "len_padding" / c.Computed(lambda this: (
        this["len_unit"] - 16
        if ka.enum_value(this["magic"], UnitMagic) == UnitMagic.blank
        else 0
    )),
    # The rest of a unit.
    "body" / ka.If(lambda this: this["is_unit"], unit_body),
)


# One segment of the timer log, `<store>/timerlog/<20-digit start offset>`
# (`TimerLog`, 5.0.0+). A message sent with a delivery time is first stored
# in the commit log under the topic `rmq_sys_wheel_timer`; the timer store
# then appends a 52-byte unit here that points at that record, and links
# the unit into the slot of the timer wheel (rocketmq_timer_wheel) for its
# due time. When the slot comes due the broker walks the slot's list back
# from the wheel's `ofs_last` through each unit's `ofs_prev` and delivers
# (or re-enqueues, or cancels) the messages.
#
# Like the commit log, the timer log is one logical byte stream cut into
# equally sized segments (`mappedFileSizeTimerLog`, 100 MiB by default),
# each named by the offset of its first byte as 20 decimal digits; unit
# offsets (`ofs_prev`, the wheel's `ofs_first` and `ofs_last`) are offsets
# in that stream. Units are at multiples of 52 bytes in a segment. When a
# unit and a 16-byte blank would not both fit in the rest of a segment, the
# broker writes a blank marker instead (size = bytes left in the segment,
# then 8 zero bytes, then the commit log's BLANK magic code) and continues
# in the next segment; with the default segment size the blank takes
# exactly the last 16 bytes. Segments are pre-allocated, so the newest one
# ends in a zero-filled tail. Expired segments are deleted from the head.
#
# The sequence below stops at the first entry that is not a unit: the blank
# marker or the zero-filled tail. This is where the broker's recovery
# (`TimerMessageStore.recoverAndRevise`) stops: it accepts an entry as a
# unit when its size is 52 and its magic has no bit above the four low ones
# (`(magic | 0xf) == 0xf`), goes on in the next segment after a blank, and
# truncates the timer log at the first other entry. Brokers only write the
# magic values listed in `unit_magic`.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
rocketmq_timer_log = ka.Struct(
    # Units up to the end of the valid data of this segment. The last
    # element is the blank marker or the zero-filled tail, unless the file
    # ends right after a unit.
    "units" / ka.RepeatUntil(lambda item, this: not item["is_unit"] or ka.io_eof(this), unit),
)
