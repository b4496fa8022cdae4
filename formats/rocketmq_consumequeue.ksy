meta:
  id: rocketmq_consumequeue
  title: Apache RocketMQ consume queue file
  application: Apache RocketMQ broker (4.0.0 and later)
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  One file of a consume queue, `consumequeue/<topic>/<queueId>/<name>`: the
  per-queue index that consumers read. Each 20-byte unit points at one
  message in the commit log. Unit `n` of the queue (its logical offset, the
  message's QUEUEOFFSET) is at byte `n * 20` of the queue's unit stream;
  files split that stream into pieces of `mappedFileSizeConsumeQueue` bytes
  (`mapedFileSizeConsumeQueue` before 4.5.2; default 6,000,000, i.e.
  300,000 units) and each file is named by the
  stream position of its first byte, as 20 decimal digits.

  Units are written in order and never change. The broker's recovery
  accepts a unit when its commit-log offset is not negative and its size is
  positive; the first unit that fails (normally the zero-filled tail of the
  newest file) ends the queue. Placeholder units `{0, 0x7fffffff, 0}` fill
  a new queue's first file up to its first real unit (`fillPreBlank`) and
  stand for no message. Head files are deleted as the commit log expires,
  so the oldest file is not always named 0 and a unit can point at a
  commit-log range that no longer exists.

  The layout is the same in every release from 4.0.0 to 5.3.x. Transaction
  PREPARED and ROLLBACK records are never put into a consume queue. From
  5.2.0 a broker can keep its consume queues in RocksDB instead
  (`storeType=defaultRocksDB`); those are not files of this format.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
-rmq-since: '4.0.0'
-rmq-ref: "rocketmq-4.0.0-incubating:store/src/main/java/org/apache/rocketmq/\
  store/ConsumeQueue.java"
seq:
  - id: units
    type: unit
    repeat: eos
    doc: The units of this file, zero-filled after the last one written.
types:
  unit:
    doc: |
      One consume-queue entry (`CQ_STORE_UNIT_SIZE` = 20 bytes), written by
      `ConsumeQueue.putMessagePositionInfo`.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java
    -webide-representation: >-
      @{ofs_commitlog:dec} +{len_message:dec} tags {tags_code:dec}
    seq:
      - id: ofs_commitlog
        -orig-id: offsetPy
        type: s8
        doc: Commit-log offset of the message record (its PHYSICALOFFSET).
      - id: len_message
        -orig-id: sizePy
        type: s4
        doc: |
          Size of the message record (its TOTALSIZE); `0x7fffffff` in a
          placeholder unit.
      - id: tags_code
        -orig-id: tagsCode
        type: s8
        doc: |
          For most topics the Java `String.hashCode` of the message's TAGS
          (sign-extended; 0 without tags). For `SCHEDULE_TOPIC_XXXX` the time
          at which the delayed message is due, in milliseconds since the Unix
          epoch. A value at or below -2147483649 (`ConsumeQueueExt.MAX_ADDR`)
          is the address of a unit in `consumequeue_ext` (4.1.0+, with
          `enableConsumeQueueExt`), encoded as that unit's offset plus
          `Long.MIN_VALUE`; see rocketmq_consumequeue_ext.
    instances:
      is_valid:
        # The s8 fields compared with s8 literals: Rust compares operands of
        # different types as i32.
        value: ofs_commitlog.as<s8> >= (0).as<s8> and len_message > 0
        doc: |
          The broker's recovery test: true for a written unit (placeholders
          included), false for the zero-filled tail. The first invalid unit
          ends the queue.
      is_placeholder:
        value: >-
          ofs_commitlog.as<s8> == (0).as<s8> and len_message == 0x7fffffff
          and tags_code.as<s8> == (0).as<s8>
        doc: |
          A placeholder before a queue's first real unit (`fillPreBlank`); it
          stands for no message.
      is_ext_address:
        # Both sides cast to one type: Rust compares operands of different
        # integer types as 32-bit values.
        value: tags_code.as<s8> <= (-2147483649).as<s8>
        doc: |
          True when `tags_code` is the address of a `consumequeue_ext` unit, not
          a tags hash.
