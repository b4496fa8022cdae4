meta:
  id: rocketmq_consumequeue_ext
  title: Apache RocketMQ consume queue extension file
  application: Apache RocketMQ broker (4.1.0 to 5.3.x, enableConsumeQueueExt)
  tags:
    - database
    - log
  license: Apache-2.0
  ks-version: '0.9'
  endian: be
doc: |
  One file of the consume queue extension of a topic queue:
  `<store>/consumequeue_ext/<topic>/<queueId>/<20-digit start offset>`,
  written only when the broker runs with `enableConsumeQueueExt=true`.
  It keeps what does not fit in a 20-byte consume-queue unit: the real
  tags hash, the store time and the bloom-filter bitmap that SQL92
  filtering checks. Like the other mapped file queues it is one logical
  byte stream cut into equally sized files (48 MiB by default,
  `mappedFileSizeConsumeQueueExt`); a file's name is the stream offset of
  its first byte.

  A file is a sequence of length-prefixed units of 20 bytes plus the
  bitmap. A unit never crosses the end of a file: when the next one does
  not fit in the space left minus 4 bytes (`END_BLANK_DATA_LENGTH`), the
  broker writes the 2-byte size -1 as an end-of-file marker and continues
  in the next file. Files are pre-allocated, so the newest one ends in a
  zero-filled tail that reads as a unit of size 0. Readers
  (`ConsumeQueueExt.recover`, `CqExtUnit.read`) treat any size below 1 as
  the end of the file's data; the sequence below stops there.

  Address encoding. When a unit is written, the consume-queue unit of the
  same message gets, instead of the tags hash, the unit's stream offset
  plus `Long.MIN_VALUE` (`ConsumeQueueExt.decorate`): a negative 64-bit
  value. A consume-queue tagsCode is such an address when it is at most
  `MAX_ADDR` = `Integer.MIN_VALUE - 1` = -2147483649, and the stream
  offset is then `tagsCode - Long.MIN_VALUE` (`unDecorate`). Tags hashes
  are sign-extended 32-bit ints and delay delivery times are positive,
  so the ranges never overlap. The stream offset selects the file
  (the one whose start offset is at most the stream offset) and the
  position in it (the offset modulo the file size). All integers are
  big-endian and signed, as Java writes them.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
-rmq-since: '4.1.0'
-rmq-ref: "rocketmq-all-4.1.0-incubating:store/src/main/java/org/apache/\
  rocketmq/store/ConsumeQueueExt.java"
seq:
  - id: units
    type: unit
    repeat: until
    repeat-until: not _.is_unit or _io.eof
    doc: |
      Units up to the end of the file's data. The last element is the
      end-of-file marker or the zero-filled tail, unless the file ends
      right after a unit.
types:
  unit:
    doc: |
      One `CqExtUnit`, or the 2-byte end-of-file marker, or the start of
      the zero-filled tail.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
    -webide-representation: '{len_unit:dec} bytes {body}'
    seq:
      - id: len_unit
        -orig-id: size
        type: s2
        doc: |
          Size of the whole unit in bytes, this field included: 20 plus the
          bitmap length (`MIN_EXT_UNIT_SIZE + bitMapSize`, at most
          `Short.MAX_VALUE`). -1 marks the end of a full file, 0 the
          unwritten tail.
      - id: body
        size: len_unit - 2
        type: unit_body
        if: is_unit
        doc: The fields that follow the size.
    instances:
      is_unit:
        value: len_unit > 0
        doc: |
          True for a unit, false for the end-of-file marker and the zero-filled
          tail.
      is_end_marker:
        value: len_unit == -1
        doc: |
          The marker written when the next unit did not fit (`fullFillToEnd`).
  unit_body:
    doc: |
      The fields of a unit after its size, in the order `CqExtUnit.write` puts
      them.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java
    -webide-representation: >-
      tags {tags_code:dec} @{msg_store_time:dec}, {len_filter_bit_map:dec}-byte
      bitmap
    seq:
      - id: tags_code
        -orig-id: tagsCode
        type: s8
        doc: |
          The message's tags hash (Java `String.hashCode` of TAGS,
          sign-extended; 0 without tags), which the consume-queue unit
          no longer holds.
      - id: msg_store_time
        -orig-id: msgStoreTime
        type: s8
        doc: |
          STORETIMESTAMP of the message, in milliseconds since the Unix epoch.
      - id: len_filter_bit_map
        -orig-id: bitMapSize
        type: s2
        valid:
          min: 0
        doc: |
          Length of the filter bitmap in bytes (`bitMapLengthConsumeQueueExt`
          bits / 8, 8 by default; 0 when the message has none).
      - id: filter_bit_map
        -orig-id: filterBitMap
        size: len_filter_bit_map
        doc: Bloom-filter bitmap of the message's SQL92 filter properties.
    instances:
      len_unit_computed:
        value: 20 + len_filter_bit_map
        doc: |
          The unit size the writer derives from the bitmap; `len_unit` must
          equal it.
