meta:
  id: rocketmq_dledger_index
  title: Apache RocketMQ DLedger entry index file
  application: Apache RocketMQ broker in DLedger mode (4.5.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
-rmq-since: '4.5.0'
-rmq-ref: "rocketmq-all-4.5.1:store/src/main/java/org/apache/rocketmq/store/\
  dledger/DLedgerCommitLog.java"
doc: |
  One file of the entry index of a DLedger commit log,
  `<store>/dledger-<selfId>/index/<20-digit start position>`: a 32-byte
  unit per entry, unit `n` at byte `n * 32` of the index stream, so the
  index of an entry gives its position in the data files. Files hold
  `mappedFileSizeForEntryIndex` bytes (5,242,880 units by default). The
  DLedger recovery compares each entry with its unit and rewrites the
  index from the data where they differ, so the data files, not this
  index, are authoritative. Broker DLedger mode is deprecated from 5.5.1
  on (see rocketmq_dledger_data).
doc-ref:
  - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
  - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/DLedgerMmapFileStore.java
seq:
  - id: units
    type: unit
    repeat: eos
    doc: The units of this file, zero-filled after the last one written.
types:
  unit:
    doc: |
      One index unit (`INDEX_UNIT_SIZE` = 32 bytes), written by
      `DLedgerEntryCoder.encodeIndex`.
    doc-ref: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
    -webide-representation: '#{index:dec} @{ofs_entry:dec} +{len_entry:dec}'
    seq:
      - id: magic
        -orig-id: magic
        type: u4
        enum: unit_magic
        valid:
          in-enum: true
        doc: The entry's magic; 0 in the zero-filled tail.
      - id: ofs_entry
        -orig-id: pos
        type: s8
        doc: Position of the entry in the data files' byte stream.
      - id: len_entry
        -orig-id: size
        type: s4
        doc: Size of the entry.
      - id: index
        -orig-id: index
        type: s8
        doc: The entry's index (the unit's number).
      - id: term
        -orig-id: term
        type: s8
        doc: The entry's term.
enums:
  unit_magic:
    0x0:
      id: zero_fill
      doc: Zero-filled tail; no entry.
    0x1:
      id: normal
      -orig-id: MAGIC_1
      doc: A unit of an entry.
