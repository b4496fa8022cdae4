meta:
  id: rocketmq_batch_consumequeue
  title: Apache RocketMQ batch consume queue file
  application: Apache RocketMQ broker (5.0.0 and later)
  tags:
    - database
    - log
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  One file of the batch consume queue of a topic queue:
  `<store>/batchconsumequeue/<topic>/<queueId>/<20-digit start offset>`,
  used for topics whose attribute `queue.type` is `BatchCQ` (5.0.0+). The
  queue is one logical stream of 46-byte units cut into equally sized
  files (300 000 units, 13 800 000 bytes by default,
  `mapperFileSizeBatchConsumeQueue`); a file's name is the byte offset of
  its first unit in that stream, not a message offset.

  Each unit points at one commit-log record and covers `num_messages`
  consecutive queue offsets starting at `msg_base_offset`: 1 for a plain
  message, `INNER_NUM` for an inner-batch record whose body holds several
  messages. Units are in queue-offset order, so a queue offset is found by
  a binary search on `msg_base_offset`. The queue's minimum offset is the
  first unit's base offset and its maximum (exclusive) the last unit's
  base offset plus its message count.

  Files are pre-allocated, so the newest one ends in zero-filled units.
  Recovery (`BatchConsumeQueue.recover`) accepts a unit only when its
  commit-log offset and base offset are not negative and its size and
  message count are positive; the first other unit ends the queue, and the
  sequence below stops there. The same 46-byte unit is used by the
  compaction consume queue (`SparseConsumeQueue`, 5.1.0+), which closes a
  file early with an end-of-file unit: commit-log offset -1, size 0,
  tags 0, time 0, base 0, count 0, compacted offset -1, reserved 0
  (`putEndPositionInfo`); recovery rejects it like the zero tail. All
  integers are big-endian and signed, as Java writes them.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/SparseConsumeQueue.java
-rmq-since: '5.0.0'
-rmq-ref: "rocketmq-all-5.0.0:store/src/main/java/org/apache/rocketmq/store/\
  queue/BatchConsumeQueue.java"
seq:
  - id: units
    type: unit
    repeat: until
    repeat-until: not _.is_accepted or _io.eof
    doc: |
      Units up to the end of the queue's data in this file. The last
      element is the first unit recovery rejects (the zero-filled tail or
      an end-of-file unit), unless the file ends right after an accepted
      unit.
types:
  unit:
    doc: |
      One 46-byte unit, in the order `putBatchMessagePositionInfo` writes
      it (`CQ_STORE_UNIT_SIZE`).
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/queue/BatchConsumeQueue.java
    -webide-representation: >-
      #{msg_base_offset:dec}+{num_messages:dec} @{ofs_commitlog:dec}
      ({len_message:dec} bytes)
    seq:
      - id: ofs_commitlog
        -orig-id: offset
        type: s8
        doc: Commit-log offset of the record (its PHYSICALOFFSET).
      - id: len_message
        -orig-id: size
        type: s4
        doc: TOTALSIZE of the record.
      - id: tags_code
        -orig-id: MSG_TAG_OFFSET_INDEX
        type: s8
        doc: |
          The record's tags hash (Java `String.hashCode` of TAGS,
          sign-extended; 0 without tags). An inner-batch record has no TAGS
          of its own, so 0.
      - id: store_timestamp
        -orig-id: MSG_STORE_TIME_OFFSET_INDEX
        type: s8
        doc: STORETIMESTAMP of the record, in milliseconds since the Unix epoch.
      - id: msg_base_offset
        -orig-id: MSG_BASE_OFFSET_INDEX
        type: s8
        doc: |
          Queue offset of the first message of the record (its QUEUEOFFSET,
          and `INNER_BASE` for an inner batch).
      - id: num_messages
        -orig-id: MSG_BATCH_SIZE_INDEX
        type: s2
        doc: |
          Number of queue offsets the record covers: `INNER_NUM` for an
          inner batch, 1 otherwise.
      - id: compacted_offset
        -orig-id: MSG_COMPACT_OFFSET_INDEX
        type: s4
        doc: |
          Written as -1 (`INVALID_POS`). Readers copy it into `CqUnit`, but
          no release up to 5.3.3 uses it.
      - id: reserved
        type: s4
        doc: Written as 0.
    instances:
      is_accepted:
        # The s8 fields compared with s8 zeros: Rust compares operands of
        # different types as i32.
        value: >-
          ofs_commitlog.as<s8> >= (0).as<s8> and len_message > 0
          and msg_base_offset.as<s8> >= (0).as<s8> and num_messages > 0
        doc: |
          Whether recovery keeps this unit; the first unit it rejects ends the
          queue.
      is_end_of_file:
        value: >-
          ofs_commitlog.as<s8> == (-1).as<s8> and len_message == 0
          and num_messages == 0 and compacted_offset == -1
        doc: |
          The end-of-file unit of a compaction consume queue (5.1.0+
          `SparseConsumeQueue`).
      msg_end_offset:
        # Both operands and the sum cast to s8 (see rocketmq_timer_log's
        # delayed_time_ms).
        value: (msg_base_offset.as<s8> + num_messages.as<s8>).as<s8>
        doc: Queue offset after the last message of the record.
