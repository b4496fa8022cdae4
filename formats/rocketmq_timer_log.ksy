meta:
  id: rocketmq_timer_log
  title: Apache RocketMQ timer log segment
  application: Apache RocketMQ broker (5.0.0 and later)
  tags:
    - database
    - log
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  One segment of the timer log, `<store>/timerlog/<20-digit start offset>`
  (`TimerLog`, 5.0.0+). A message sent with a delivery time is first stored
  in the commit log under the topic `rmq_sys_wheel_timer`; the timer store
  then appends a 52-byte unit here that points at that record, and links
  the unit into the slot of the timer wheel (rocketmq_timer_wheel) for its
  due time. When the slot comes due the broker walks the slot's list back
  from the wheel's `ofs_last` through each unit's `ofs_prev` and delivers
  (or re-enqueues, or cancels) the messages.

  Like the commit log, the timer log is one logical byte stream cut into
  equally sized segments (`mappedFileSizeTimerLog`, 100 MiB by default),
  each named by the offset of its first byte as 20 decimal digits; unit
  offsets (`ofs_prev`, the wheel's `ofs_first` and `ofs_last`) are offsets
  in that stream. Units are at multiples of 52 bytes in a segment. When a
  unit and a 16-byte blank would not both fit in the rest of a segment, the
  broker writes a blank marker instead (size = bytes left in the segment,
  then 8 zero bytes, then the commit log's BLANK magic code) and continues
  in the next segment; with the default segment size the blank takes
  exactly the last 16 bytes. Segments are pre-allocated, so the newest one
  ends in a zero-filled tail. Expired segments are deleted from the head.

  The sequence below stops at the first entry that is not a unit: the blank
  marker or the zero-filled tail. This is where the broker's recovery
  (`TimerMessageStore.recoverAndRevise`) stops: it accepts an entry as a
  unit when its size is 52 and its magic has no bit above the four low ones
  (`(magic | 0xf) == 0xf`), goes on in the next segment after a blank, and
  truncates the timer log at the first other entry. Brokers only write the
  magic values listed in `unit_magic`.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
-rmq-since: '5.0.0'
-rmq-ref: "rocketmq-all-5.0.0:store/src/main/java/org/apache/rocketmq/store/\
  timer/TimerLog.java"
seq:
  - id: units
    type: unit
    repeat: until
    repeat-until: not _.is_unit or _io.eof
    doc: |
      Units up to the end of the valid data of this segment. The last
      element is the blank marker or the zero-filled tail, unless the file
      ends right after a unit.
types:
  unit:
    doc: |
      One timer-log entry: a 52-byte unit (`UNIT_SIZE`), as
      `TimerMessageStore.doEnqueue` writes it, or the blank marker that ends
      a segment, or the start of the zero-filled tail. All three start with
      the same 16-byte header.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
    -webide-representation: '{magic} prev {ofs_prev:dec} {body}'
    seq:
      - id: len_unit
        -orig-id: size
        type: s4
        doc: |
          52 for a unit. For the blank marker, the number of bytes from the
          marker to the end of the segment.
      - id: ofs_prev
        -orig-id: prevPos
        type: s8
        doc: |
          Timer-log offset of the unit put into the same wheel slot just
          before this one, or -1 for the slot's first unit. 0 in the blank
          marker.
      - id: magic
        -orig-id: magic
        type: s4
        enum: unit_magic
        valid:
          in-enum: true
        doc: |
          What the unit asks for (a combination of `magic_flag` bits), or the
          blank marker; signed, as RocketMQ's Java holds it (`int`).
      - id: body
        type: unit_body
        if: is_unit
        doc: The rest of a unit.
    instances:
      is_unit:
        value: magic != unit_magic::blank and magic != unit_magic::zero_fill
        doc: |
          True for a unit, false for the blank marker and the zero-filled tail.
      is_roll:
        # Both operands cast to one integer type: Go refuses `&` between
        # two enum types (and between an enum and an integer).
        value: >-
          is_unit and (magic.to_i.as<u4>
          & magic_flag::roll_bit.to_i.as<u4>) != 0
        doc: |
          The unit only moves its message closer to the delivery time
          (`roll` and `roll_delete`).
      is_delete:
        value: >-
          is_unit and (magic.to_i.as<u4>
          & magic_flag::delete_bit.to_i.as<u4>) != 0
        doc: The unit cancels a timer message (`delete` and `roll_delete`).
      len_padding:
        value: 'magic == unit_magic::blank ? (len_unit - 16).as<s4> : 0'
        doc: |
          Bytes after the 16-byte blank marker up to the end of the segment
          (0 with the default segment size); never written, so zero.
  unit_body:
    doc: The fields of a unit after its 16-byte header.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerLog.java
    -webide-representation: >-
      due {delayed_time_ms:dec} @{ofs_commitlog:dec} +{len_message:dec}
    seq:
      - id: curr_write_time_ms
        -orig-id: currWriteTimeMs
        type: s8
        doc: |
          The timer store's write clock (ms since the epoch, a multiple of
          the timer precision) when the unit was appended.
      - id: delay_ms
        -orig-id: delayedTime
        type: s4
        doc: |
          Due time minus `curr_write_time_ms`, in ms. For a unit with the
          roll bit this is the time of the next roll (within the roll
          window), not the message's delivery time.
      - id: ofs_commitlog
        -orig-id: offsetPy
        type: s8
        doc: |
          Commit-log offset of the message's record in topic
          `rmq_sys_wheel_timer`.
      - id: len_message
        -orig-id: sizePy
        type: s4
        doc: Size of that commit-log record (its TOTALSIZE).
      - id: topic_hash
        -orig-id: hashTopicForMetrics
        type: s4
        doc: |
          Java `String.hashCode` of the message's real topic (its
          `REAL_TOPIC` property), or 0 without one; used for timer metrics.
      - id: reserved
        type: s8
        doc: Written as 0 ("reserved value, just in case").
    instances:
      delayed_time_ms:
        # Both operands and the sum cast to s8: Rust adds operands of different
        # types as 32-bit values; Java, C++, C# and Rust type an uncast sum as
        # 32-bit.
        value: (curr_write_time_ms.as<s8> + delay_ms.as<s8>).as<s8>
        doc: |
          The due time in ms since the epoch: the wheel slot this unit is
          linked into is the one for this time.
enums:
  unit_magic:
    0x0:
      id: zero_fill
      doc: |
        Zero-filled tail of a pre-allocated segment; the data of the timer log
        ends here.
    0x1:
      id: enqueue
      -orig-id: MAGIC_DEFAULT
      doc: A timer message to deliver at its due time.
    0x3:
      id: roll
      -orig-id: MAGIC_DEFAULT | MAGIC_ROLL
      doc: |
        A message due beyond the roll window (`timerRollWindowSlot`, two
        days by default): when this unit comes due the message is put back
        into the timer topic and enqueued again, not delivered.
    0x5:
      id: delete
      -orig-id: MAGIC_DEFAULT | MAGIC_DELETE
      doc: |
        A cancellation (the message carries the `TIMER_DEL_UNIQKEY`
        property): when due, the timer message of the same slot whose
        unique key that property names is dropped instead of delivered.
    0x7:
      id: roll_delete
      -orig-id: MAGIC_DEFAULT | MAGIC_ROLL | MAGIC_DELETE
      doc: |
        A cancellation whose due time is beyond the roll window; it is rolled
        like a roll unit.
    -875286124:
      id: blank
      -orig-id: BLANK_MAGIC_CODE
      doc: |
        Blank marker: the rest of the segment is unused and the timer log
        goes on in the next segment. The same value as the commit log's
        BLANK magic code (0xCBD43194 as an unsigned value).
  magic_flag:
    0x1:
      id: enqueue_bit
      -orig-id: MAGIC_DEFAULT
      doc: Set in every unit a broker writes.
    0x2:
      id: roll_bit
      -orig-id: MAGIC_ROLL
      doc: |
        The unit only moves the message closer to its delivery time
        (re-enqueue).
    0x4:
      id: delete_bit
      -orig-id: MAGIC_DELETE
      doc: The unit cancels an earlier timer message.
