meta:
  id: rocketmq_index_file
  title: Apache RocketMQ message index file
  application: Apache RocketMQ broker (4.0.0 and later)
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  One file of the broker's message-key index, `<store>/index/<name>`, where
  the name is the file's creation time as `yyyyMMddHHmmssSSS` (broker local
  time). The broker answers "find messages by key" (`queryMessage`) from
  these files: for every dispatched message it indexes `topic#UNIQ_KEY` and
  `topic#key` for each non-empty key of the `KEYS` property (split on
  spaces), except for transaction ROLLBACK records.

  The file is a fixed-size hash table with chaining:

  * a 40-byte header;
  * `num_hash_slots` hash slots of 4 bytes; the slot of a key is
    `indexKeyHashMethod(key) % num_hash_slots` and holds the number of the
    newest entry whose key falls in it (0 = empty);
  * `num_index` entries of 20 bytes, numbered from 0; entry 0 is never
    written, so entry numbers start at 1 and 0 can mean "none". Each entry
    holds the key hash, the commit-log offset of the message, its store
    time in seconds after the header's begin time, and the number of the
    previous entry of the same slot, so a lookup walks newest to oldest.
    The key itself is not stored: different keys with equal hashes, and
    keys of other topics, come back from a lookup too, and a reader must
    compare each message's keys.

  Entries are appended in order; `header.next_index` is the next entry
  number to write. Unwritten slots and entries are zero (the file is
  created at full size, sparse). A file is full when `next_index` reaches
  `num_index`; the broker then starts a new file.

  Counts. `num_hash_slots` and `num_index` are not stored in the file: they
  are the broker settings `maxHashSlotNum` (default 5,000,000) and
  `maxIndexNum` (default 20,000,000) at the time the file was made, and
  the file size is `40 + 4 * num_hash_slots + 20 * num_index` (420,000,040
  bytes with the defaults). The size alone does not give both counts. The
  top-level type assumes the default ratio of four entries per slot, which
  the defaults themselves have: `num_hash_slots = (size - 40) / 84`. For a
  broker configured with another ratio, read `tables` at position 40 with
  the counts from the broker configuration: `tables(num_hash_slots,
  num_index)`. `is_size_consistent` tells whether the default ratio fits
  the file at all.

  Slot and entry tables are instances, read only when used, so a
  full-size file opens without parsing 25 million items. All integers are
  big-endian and signed, as Java writes them.

  The layout is the same in every release from 4.0.0 to 5.3.x; only the
  meaning of `header.num_hash_slots_used` changed (in 4.7.1, see there).
  The 5.x tiered-store plugin keeps a different index format
  (`tiered_index_file/`), not described here.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexHeader.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexService.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
-rmq-since: '4.0.0'
-rmq-ref: "rocketmq-4.0.0-incubating:store/src/main/java/org/apache/rocketmq/\
  store/index/IndexFile.java"
seq:
  - id: header
    -orig-id: indexHeader
    type: index_header
    doc: Time and commit-log ranges covered by the file, and its fill level.
instances:
  num_hash_slots:
    value: (_io.size - 40) / 84
    doc: |
      Number of hash slots (`maxHashSlotNum`), inferred from the file size
      assuming four entries per slot, as with the default settings
      (5,000,000 slots for a 420,000,040-byte file). Wrong when the broker
      used another ratio; see `is_size_consistent`.
  num_index:
    value: num_hash_slots * 4
    doc: |
      Number of entries the file has room for (`maxIndexNum`), entry 0
      included, under the same four-entries-per-slot assumption.
  is_size_consistent:
    value: _io.size > 40 and (_io.size - 40) % 84 == 0
    doc: |
      True when the file size fits four entries per slot. When false, the
      inferred counts are wrong: read the type `index_tables` at position 40
      with the counts from the broker configuration.
  tables:
    pos: 40
    type: inferred_tables
    doc: |
      The hash slots and the entries, with the inferred counts. Reading it
      parses every slot and entry of the file.
  last_entry:
    pos: 40 + num_hash_slots.as<s8> * 4 + (header.next_index.as<s8> - 1) * 20
    type: entry
    if: header.next_index > 1 and header.next_index.as<s8> <= num_index.as<s8>
    doc: The most recently written entry, number `header.next_index - 1`.
types:
  index_header:
    doc: |
      The 40-byte file header (`IndexHeader.INDEX_HEADER_SIZE`). The broker
      keeps it in memory and writes it through on every change.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexHeader.java
    -webide-representation: >-
      {begin_timestamp:dec}..{end_timestamp:dec} ms, next entry {next_index:dec}
    seq:
      - id: begin_timestamp
        -orig-id: beginTimestamp
        type: s8
        doc: |
          Store time (ms since the Unix epoch) of the first indexed message.
          A new file first copies the previous file's `end_timestamp` (0 for
          the first file) and replaces it when its first entry is written.
          Entry times are seconds after this value.
      - id: end_timestamp
        -orig-id: endTimestamp
        type: s8
        doc: Store time (ms since the Unix epoch) of the last indexed message.
      - id: ofs_begin_physical
        -orig-id: beginPhyOffset
        type: s8
        doc: |
          Commit-log offset of the first indexed message (first the previous
          file's `ofs_end_physical`, replaced by the first entry's).
      - id: ofs_end_physical
        -orig-id: endPhyOffset
        type: s8
        doc: |
          Commit-log offset of the last indexed message. Messages below it
          are not indexed again when the commit log is replayed.
      - id: num_hash_slots_used
        -orig-id: hashSlotCount
        type: s4
        doc: |
          Brokers 4.7.1 and later count the slots that have been used (it
          grows when an entry goes into an empty slot). Brokers 4.0.0 to
          4.7.0 grew it on every entry, so there it equals the number of
          entries. Nothing reads it back.
        -rmq-changes:
          - in: '4.7.1'
            rule: MEANING_CHANGED
            doc: |
              Counts the hash slots used instead of the entries written.
            ref: "rocketmq-all-4.7.1:store/src/main/java/org/apache/rocketmq/\
              store/index/IndexFile.java"
            old-reader-ok: true
      - id: next_index
        -orig-id: indexCount
        type: s4
        doc: |
          Number of the next entry to write: 1 in a new file (entry 0 is
          never used), so the file holds `next_index - 1` entries. The
          broker reads a value of 0 or less as 1. Lookups ignore slots and
          chain links above it.
    instances:
      num_entries:
        value: 'next_index > 1 ? (next_index - 1).as<s4> : 0'
        doc: Number of entries written.
  inferred_tables:
    doc: |
      The hash slots and the entries, with the counts inferred from the
      file size (`num_hash_slots`, `num_index`). Starts at byte 40 of the
      file, right after the header. It takes no parameters, so that every
      Kaitai target reads it (the Perl target ignores parameters); for other
      counts, read `index_tables` at the same position.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
    -webide-representation: >-
      {num_hash_slots:dec} slots, {num_index:dec} entries
    seq:
      - id: hash_slots
        type: hash_slot
        repeat: expr
        repeat-expr: num_hash_slots
        doc: |
          The hash table. The slot of a key is its `indexKeyHashMethod` hash
          modulo `num_hash_slots`.
      - id: entries
        type: entry
        repeat: expr
        repeat-expr: num_index
        doc: Entries by number; entry 0 is never written.
    instances:
      num_hash_slots:
        value: _root.num_hash_slots
        doc: Number of hash slots, inferred from the file size.
      num_index:
        value: _root.num_index
        doc: Number of entries, entry 0 included, inferred from the file size.
  index_tables:
    doc: |
      The hash slots and the entries, for given counts: for a file whose
      broker used another ratio of entries to slots than the default (see
      `is_size_consistent`). Starts at byte 40 of the file, right after the
      header. Not read by the Perl target, which ignores parameters.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
    -webide-representation: >-
      {num_hash_slots:dec} slots, {num_index:dec} entries
    params:
      - id: num_hash_slots
        type: u4
        doc: Number of hash slots, the broker setting `maxHashSlotNum`.
      - id: num_index
        type: u4
        doc: |
          Number of entries, entry 0 included, the broker setting `maxIndexNum`.
    seq:
      - id: hash_slots
        type: hash_slot
        repeat: expr
        repeat-expr: num_hash_slots
        doc: |
          The hash table. The slot of a key is its `indexKeyHashMethod` hash
          modulo `num_hash_slots`.
      - id: entries
        type: entry
        repeat: expr
        repeat-expr: num_index
        doc: Entries by number; entry 0 is never written.
  hash_slot:
    doc: |
      One hash slot: the head of the chain of entries whose keys fall in
      it.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
    -webide-representation: 'newest entry {latest_index:dec}'
    seq:
      - id: latest_index
        -orig-id: slotValue
        type: s4
        doc: |
          Number of the newest entry whose key falls in this slot; 0
          (`invalidIndex`) for an empty slot. A value above
          `header.next_index` or below 1 is treated as empty.
  entry:
    doc: |
      One index entry (`indexSize` = 20 bytes), written by
      `IndexFile.putKey` for one key of one message.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
    -webide-representation: >-
      hash {key_hash:dec} @{ofs_physical:dec} +{time_diff:dec}s prev
      {prev_index:dec}
    seq:
      - id: key_hash
        -orig-id: keyHashRead
        type: s4
        doc: |
          `indexKeyHashMethod` of the key `topic#key`: the Java
          `String.hashCode` of the key (UTF-16 code units, 32-bit
          wrap-around), made non-negative with `Math.abs`, and 0 for
          `Integer.MIN_VALUE`.
      - id: ofs_physical
        -orig-id: phyOffsetRead
        type: s8
        doc: Commit-log offset of the message.
      - id: time_diff
        -orig-id: timeDiff
        type: s4
        doc: |
          Store time of the message in whole seconds after
          `header.begin_timestamp` (rounded toward zero, negative values
          written as 0, 0 while the header's begin time is 0 or less). The
          first entry of a file is measured from the begin time the file
          inherited from the previous one, before it is replaced. A lookup
          takes the entry's time as `begin_timestamp + time_diff * 1000`
          and stops at a negative value.
      - id: prev_index
        -orig-id: prevIndexRead
        type: s4
        doc: |
          Number of the previous entry in the same slot (the slot's value
          before this entry was written); 0 ends the chain.
