meta:
  id: rocketmq_timer_wheel
  title: Apache RocketMQ timer wheel
  application: Apache RocketMQ broker (5.0.0 and later)
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  The file `<store>/timerwheel` (`TimerWheel`, 5.0.0+): the slot table of
  the timer message store. Messages sent with a delivery time are indexed
  in the timer log (rocketmq_timer_log); the wheel has one slot per tick of
  `timerPrecisionMs` (1000 ms by default; 100, 200, 500 or 1000) that holds
  the ends of the linked list of timer-log units due at that tick.

  The wheel has `2 * slotsTotal` slots of 32 bytes, where `slotsTotal` is
  the constant `TIMER_WHEEL_TTL_DAY * DAY_SECS` = 7 * 86400 = 604800
  (`TIMER_WHELL_TTL_DAY` in 5.0.0 and 5.1.0, the same value), so
  the file is always 1,209,600 slots = 38,707,200 bytes, whatever the
  precision; a broker refuses to start when an existing non-empty file has
  another length. The slot of a delivery time `t` (ms since the epoch) is
  `(t / timerPrecisionMs) % (2 * slotsTotal)` with integer division, so the
  wheel wraps around every 14 days (at the default precision) and a slot is
  reused: it belongs to `t` only when its `time_units` equals
  `t / timerPrecisionMs`. Otherwise the broker treats it as empty. Slots
  never written are all zeros. The layout is the same from 5.0.0 to 5.3.x.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerWheel.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/Slot.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
-rmq-since: '5.0.0'
-rmq-ref: "rocketmq-all-5.0.0:store/src/main/java/org/apache/rocketmq/store/\
  timer/TimerWheel.java"
seq:
  - id: slots
    type: slot
    repeat: eos
    doc: The slots, in slot-index order.
types:
  slot:
    doc: |
      One wheel slot (`Slot.SIZE` = 32 bytes), written by
      `TimerWheel.putSlot`. Enqueuing a message writes all five fields;
      the recovery of the timer log rewrites only the first three, so
      `num_messages` may be left over from an earlier use of the slot.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerWheel.java
    -webide-representation: >-
      t={time_units:dec} first {ofs_first:dec} last {ofs_last:dec}
      n={num_messages:dec}
    seq:
      - id: time_units
        -orig-id: timeMs
        type: s8
        doc: |
          The delivery time this slot holds, in units of `timerPrecisionMs`
          (`t / timerPrecisionMs`: epoch seconds at the default precision).
          `Slot.timeMs` in memory is this value times the precision.
      - id: ofs_first
        -orig-id: firstPos
        type: s8
        doc: Timer-log offset of the first unit put into this slot.
      - id: ofs_last
        -orig-id: lastPos
        type: s8
        doc: |
          Timer-log offset of the last unit put into this slot: the head of
          the list that runs back through each unit's `ofs_prev` to -1.
      - id: num_messages
        -orig-id: num
        type: s4
        doc: |
          Messages in the slot: plus one for each message enqueued, minus one
          for each cancellation (a unit with the delete bit).
      - id: reserved
        -orig-id: magic
        type: s4
        doc: |
          `Slot.magic`, unused ("no use now"): copied from the slot's previous
          value on every write, so always 0.
    instances:
      is_used:
        # Both sides s8: Rust compares operands of different types as i32.
        value: time_units.as<s8> != (0).as<s8>
        doc: False for a slot that was never written (all zeros).
