# Generated from formats/rocketmq_timer_wheel.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ timer wheel: construct schema generated from formats/rocketmq_timer_wheel.ksy.

``rocketmq_timer_wheel`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "slot",
    "rocketmq_timer_wheel",
]


# One wheel slot (`Slot.SIZE` = 32 bytes), written by
# `TimerWheel.putSlot`. Enqueuing a message writes all five fields;
# the recovery of the timer log rewrites only the first three, so
# `num_messages` may be left over from an earlier use of the slot.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerWheel.java
slot = ka.Struct(
    # The delivery time this slot holds, in units of `timerPrecisionMs`
    # (`t / timerPrecisionMs`: epoch seconds at the default precision).
    # `Slot.timeMs` in memory is this value times the precision.
    "time_units" / c.Int64sb,
    # False for a slot that was never written (all zeros).
    "is_used" / c.Computed(lambda this: this["time_units"] != 0),
    # Timer-log offset of the first unit put into this slot.
    "ofs_first" / c.Int64sb,
    # Timer-log offset of the last unit put into this slot: the head of
    # the list that runs back through each unit's `ofs_prev` to -1.
    "ofs_last" / c.Int64sb,
    # Messages in the slot: plus one for each message enqueued, minus one
    # for each cancellation (a unit with the delete bit).
    "num_messages" / c.Int32sb,
    # `Slot.magic`, unused ("no use now"): copied from the slot's previous
    # value on every write, so always 0.
    "reserved" / c.Int32sb,
)


# The file `<store>/timerwheel` (`TimerWheel`, 5.0.0+): the slot table of
# the timer message store. Messages sent with a delivery time are indexed
# in the timer log (rocketmq_timer_log); the wheel has one slot per tick of
# `timerPrecisionMs` (1000 ms by default; 100, 200, 500 or 1000) that holds
# the ends of the linked list of timer-log units due at that tick.
#
# The wheel has `2 * slotsTotal` slots of 32 bytes, where `slotsTotal` is
# the constant `TIMER_WHEEL_TTL_DAY * DAY_SECS` = 7 * 86400 = 604800
# (`TIMER_WHELL_TTL_DAY` in 5.0.0 and 5.1.0, the same value), so
# the file is always 1,209,600 slots = 38,707,200 bytes, whatever the
# precision; a broker refuses to start when an existing non-empty file has
# another length. The slot of a delivery time `t` (ms since the epoch) is
# `(t / timerPrecisionMs) % (2 * slotsTotal)` with integer division, so the
# wheel wraps around every 14 days (at the default precision) and a slot is
# reused: it belongs to `t` only when its `time_units` equals
# `t / timerPrecisionMs`. Otherwise the broker treats it as empty. Slots
# never written are all zeros. The layout is the same from 5.0.0 to 5.3.x.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerWheel.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/Slot.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
rocketmq_timer_wheel = ka.Struct(
    # The slots, in slot-index order.
    "slots" / ka.RepeatEos(slot),
)
