meta:
  id: rocketmq_tiered_index
  title: Apache RocketMQ tiered-store index file
  application: Apache RocketMQ broker, tiered-store plugin (5.1.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
-rmq-since: '5.1.0'
-rmq-ref: "rocketmq-all-5.1.0:tieredstore/src/main/java/org/apache/rocketmq/\
  tieredstore/container/TieredIndexFile.java"
-rmq-changes:
  - in: '5.2.0'
    rule: MEANING_CHANGED
    doc: |
      Files named by their begin timestamp instead of 0000, 1111 and 2222;
      slots start at 0 and items are numbered from 1; `time_diff` in
      seconds instead of milliseconds; no end marker after the items.
    ref: "rocketmq-all-5.2.0:tieredstore/src/main/java/org/apache/rocketmq/\
      tieredstore/index/IndexStoreFile.java"
    old-reader-ok: false
doc: |
  An index file of the tiered-store plugin (`IndexStoreFile`): message keys
  and UNIQ_KEYs hashed into slots, each slot leading to the items of its
  keys. The file comes in two forms.

  The writing form, `<store>/tiered_index_file/<begin timestamp>`, is
  pre-allocated at `28 + maxHashSlots * 8 + maxItems * 32` bytes
  (`tieredStoreIndexFileMaxHashSlotNum`, 5,000,000, and
  `tieredStoreIndexFileMaxIndexNum`, 20,000,000, by default; neither is in
  the file). A slot's first 4 bytes hold the number of the newest item of
  its keys (0 for none); items are numbered from 1 and each names the
  previous item of its slot, so a slot leads to a chain. A lookup follows
  at most 512 items.

  The compacted form, written when the file is full to
  `tiered_index_file/compacting/<begin timestamp>` and uploaded as the
  tiered INDEX segment, has the same header and slot table, then every
  slot's items in one run of 28-byte items (no chain link); a slot holds
  the run's byte position and length. Its size is `28 + maxHashSlots * 8
  + itemCount * 28`. All integers are big-endian.

  The 5.1.x plugin (`TieredIndexFile`) used the same header, slot and item
  layouts with other conventions; 5.2.0 converts its files on start. Its
  writing form, `tiered_index_file/0000` (and `1111` while the previous one
  is compacted), is `40 + maxHashSlots * 8 + maxItems * 32` bytes: slots
  start at -1 (none), items are numbered from 0, a chain ends at -1,
  `time_diff` is in milliseconds, and the last 4 bytes are -1 until the
  file is full, then the END magic. Its compacted form (`2222`, uploaded as
  the INDEX segment) has the END magic, the slot count in
  `num_used_slots`, runs of 28-byte items and the BEGIN magic in the 4
  bytes after them. Its key hash is `Math.abs(hashCode)`, 0 for
  `Integer.MIN_VALUE`.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/file/TieredIndexFile.java
seq:
  - id: header
    -orig-id: flushNewMetadata
    type: index_header
    doc: |
      The 28-byte header (`INDEX_HEADER_SIZE`), as `flushNewMetadata`
      writes it.
  - id: slots
    size-eos: true
    doc: |
      The slot table (`slot`) and then the items (`item` or
      `compact_item`); where one ends depends on the hash slot count
      configured when the file was made, which is not in the file.
types:
  index_header:
    doc: The header, rewritten by `flushNewMetadata` after each put.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
    -webide-representation: '{magic} {num_items:dec} items'
    seq:
      - id: magic
        -orig-id: INDEX_MAGIC_CODE
        type: s4
        enum: file_magic
        valid:
          in-enum: true
        doc: |
          BEGIN while the file takes items, END once it is full or
          compacted; signed, as RocketMQ's Java holds it (`int`).
      - id: begin_timestamp
        -orig-id: INDEX_BEGIN_TIME_STAMP
        type: s8
        doc: Store time (ms) the file was created for; also its name.
      - id: end_timestamp
        -orig-id: INDEX_END_TIME_STAMP
        type: s8
        doc: Newest store time (ms) of an item put.
      - id: num_used_slots
        -orig-id: INDEX_SLOT_COUNT
        type: s4
        doc: |
          Slots that hold at least one item; in the 5.1.x compacted form,
          the slot count (`maxHashSlotNum`), and 0 in its writing form.
      - id: num_items
        -orig-id: INDEX_ITEM_INDEX
        type: s4
        doc: Items put; the newest item's number in the writing form.
  slot:
    doc: |
      One slot (`HASH_SLOT_SIZE` = 8 bytes) of the table after the header;
      key hash modulo the slot count picks it.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
    -webide-representation: '{value:dec} {len_run:dec}'
    seq:
      - id: value
        -orig-id: slotValue
        type: s4
        doc: |
          Writing form: number of the newest item of this slot (0 or less:
          none). Compacted form: byte position of the slot's run of items.
      - id: len_run
        -orig-id: length
        type: s4
        doc: |
          Writing form, 0 (unused). Compacted form, bytes of the slot's
          run of items.
  item:
    doc: |
      An item of the writing form (`INDEX_ITEM_SIZE` = 32 bytes), item
      `n` at `28 + slots * 8 + n * 32`.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
    -webide-representation: '@{ofs_commitlog:dec} prev {prev_item:dec}'
    seq:
      - id: key_hash
        -orig-id: hashCode
        type: s4
        doc: |
          `String.hashCode` of `topic#key`, negated when negative
          (`Integer.MIN_VALUE` stays negative).
      - id: topic_id
        -orig-id: topicId
        type: s4
        doc: The topic's id in `config/tieredStoreMetadata.json`.
      - id: queue_id
        -orig-id: queueId
        type: s4
        doc: Queue id.
      - id: ofs_commitlog
        -orig-id: offset
        type: s8
        doc: Offset of the message in the queue's tiered commit log.
      - id: len_message
        -orig-id: size
        type: s4
        doc: Size of the message record.
      - id: time_diff
        -orig-id: timeDiff
        type: s4
        doc: Seconds from `begin_timestamp` to the message's store time.
      - id: prev_item
        -orig-id: itemIndex
        type: s4
        doc: Number of the slot's previous item (0 or less ends the chain).
  compact_item:
    doc: |
      An item of the compacted form (`COMPACT_INDEX_ITEM_SIZE` = 28
      bytes), without the chain link.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
    -webide-representation: 'q{queue_id:dec} @{ofs_commitlog:dec}'
    seq:
      - id: key_hash
        -orig-id: hashCode
        type: s4
        doc: As in `item`.
      - id: topic_id
        -orig-id: topicId
        type: s4
        doc: As in `item`.
      - id: queue_id
        -orig-id: queueId
        type: s4
        doc: As in `item`.
      - id: ofs_commitlog
        -orig-id: offset
        type: s8
        doc: As in `item`.
      - id: len_message
        -orig-id: size
        type: s4
        doc: As in `item`.
      - id: time_diff
        -orig-id: timeDiff
        type: s4
        doc: As in `item`.
enums:
  file_magic:
    -1127939447:
      id: begin_marker
      -orig-id: BEGIN_MAGIC_CODE
      doc: |
        The file takes items (`0xCCDDEEFF ^ 1880681586 + 4`, 0xBCC50289 as
        an unsigned value).
    -1127939451:
      id: end_marker
      -orig-id: END_MAGIC_CODE
      doc: |
        The file is full, or compacted (`0xCCDDEEFF ^ 1880681586 + 8`,
        0xBCC50285 as an unsigned value).
