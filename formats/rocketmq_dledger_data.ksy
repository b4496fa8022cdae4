meta:
  id: rocketmq_dledger_data
  title: Apache RocketMQ DLedger commit-log data file
  application: Apache RocketMQ broker in DLedger mode (4.5.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
    - log
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
-rmq-since: '4.5.0'
-rmq-ref: "rocketmq-all-4.5.1:store/src/main/java/org/apache/rocketmq/store/\
  dledger/DLedgerCommitLog.java"
-rmq-changes:
  - in: '5.5.1'
    id: broker_dledger_deprecated
    rule: DEPRECATED
    doc: |
      Broker DLedger mode (`enableDLegerCommitLog=true`) is deprecated:
      the broker logs a warning at startup and still writes this layout;
      controller mode is the recommended failover.
    ref: "rocketmq-all-5.5.1:store/src/main/java/org/apache/rocketmq/store/\
      dledger/DLedgerCommitLog.java"
    old-reader-ok: true
  - in: '5.5.1'
    id: dledger_library_0334
    rule: MEANING_CHANGED
    doc: |
      The DLedger library goes from 0.3.2 to 0.3.3.4 (maintenance line,
      API-compatible, dependency fixes only): the same layout.
    ref: "rocketmq-all-5.5.1:pom.xml"
    old-reader-ok: true
doc: |
  One data file of the commit log of a broker in DLedger mode
  (`enableDLegerCommitLog=true`): `<store>/dledger-<selfId>/data/<20-digit
  start position>` unless `storePathDLedgerCommitLog` (4.9.4+) names other
  folders. The file store of the DLedger library (`DLedgerMmapFileStore`)
  keeps the log as one byte stream cut into files of
  `mappedFileSizeCommitLog` bytes (`mapedFileSizeCommitLog` before 4.5.2),
  named like commit-log segments by the position of their first byte.

  Every entry wraps one commit-log message record (the same bytes as in a
  plain commit log, see rocketmq_commitlog) in a 48-byte header. The
  broker rewrites the message's PHYSICALOFFSET to the entry's position plus
  48, so consume queues and message ids point at the record inside the
  entry. When the next entry does not fit, the rest of the file is a BLANK
  filler whose first 8 bytes are the magic -1 and the filler's length; a
  pre-allocated file ends in a zero-filled tail.

  The library's recovery (`DLedgerMmapFileStore.recover`) reads entries
  until one is not valid: a zero size (the tail), a `pos` other than the
  entry's position, a body length other than the size minus 48, an entry
  running past the end of the file, a magic other than 1, an index that
  does not follow the previous one, a term smaller than the previous one.
  The data ends at the start of that entry (DLedger 0.1 and 0.2 have no
  zero-size test, but the `pos` test ends the data at the same place).
  RocketMQ uses DLedger 0.1 (4.5.0 to 4.7.1), 0.2.2 (4.8.0 to 4.9.2),
  0.2.3 (4.9.3), 0.2.6 (4.9.4), 0.3.1 (5.0.0, 5.1.0) and 0.3.1.2 (4.9.5 to
  4.9.8, 5.1.1 to 5.3.3), 0.3.2 from a release after 5.3.3 to 5.5.0
  (which one is not established: issue #10651 of 2026-07-23 reports the
  develop branch on 0.3.2) and 0.3.3.4 from 5.5.1 (PR #10958); all write
  this same layout. `channel`,
  `chain_crc` and `body_crc` are reserved and written as 0.

  Broker DLedger mode is deprecated from 5.5.1 on (apache/rocketmq issue
  #10641, pull request #10642: the broker warns at startup with
  `enableDLegerCommitLog=true`; controller mode is the recommended
  failover). Brokers still write this layout; the DLedger-based controller
  is not deprecated.
doc-ref:
  - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
  - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/DLedgerMmapFileStore.java
  - https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/store/file/MmapFileList.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/dledger/DLedgerCommitLog.java
seq:
  - id: records
    type: record
    repeat: until
    repeat-until: not _.is_entry or _io.eof
    doc: |
      Entries up to the end of the valid data of this file. The last
      element is the BLANK filler or the zero-filled tail, unless the file
      ends right after an entry.
types:
  record:
    doc: |
      One DLedger entry (`DLedgerEntry`), the BLANK filler at the end of a
      file, or the start of the zero-filled tail.
    doc-ref: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntry.java
    -webide-representation: '{magic}: {len_entry:dec} bytes'
    seq:
      - id: magic
        -orig-id: magic
        type: s4
        enum: entry_magic
        valid:
          in-enum: true
        doc: Kind of the entry; signed, as DLedger's Java holds it (`int`).
      - id: len_entry
        -orig-id: size
        type: s4
        doc: |
          Size of the whole entry in bytes, the 48-byte header included.
          For the BLANK filler, the bytes from the filler to the end of the
          file.
      - id: body
        size: len_entry - 8
        type: entry_body
        if: is_entry
        doc: The entry's fields after the magic and the size.
    instances:
      is_entry:
        value: magic == entry_magic::normal
        doc: |
          True for an entry, false for the BLANK filler and the
          zero-filled tail.
  entry_body:
    doc: |
      The fields of an entry after its magic and size, in the order
      `DLedgerEntryCoder.encode` writes them; the 44-byte `HEADER_SIZE`
      ends with `body_crc`, and the message record starts at byte 48
      (`BODY_OFFSET`).
    doc-ref: https://github.com/openmessaging/dledger/blob/dledger-all-0.3.1.2/dledger/src/main/java/io/openmessaging/storage/dledger/entry/DLedgerEntryCoder.java
    -webide-representation: 'index {index:dec} term {term:dec} @{ofs_entry:dec}'
    seq:
      - id: index
        -orig-id: index
        type: s8
        doc: |
          Number of the entry in the DLedger log, from 0; each entry's is
          the previous one's plus 1.
      - id: term
        -orig-id: term
        type: s8
        doc: Raft term of the leader that appended the entry; never decreases.
      - id: ofs_entry
        -orig-id: pos
        type: s8
        doc: |
          Position of the entry in the log's byte stream (file start plus
          position in the file); the recovery ends the data where it
          differs.
      - id: channel
        -orig-id: channel
        type: s4
        doc: Reserved; 0.
      - id: chain_crc
        -orig-id: chainCrc
        type: s4
        doc: |
          Reserved for a CRC chained over the previous entries; 0 (never
          computed).
      - id: body_crc
        -orig-id: bodyCrc
        type: s4
        doc: Reserved for a CRC of the body; 0 (never computed).
      - id: len_body
        -orig-id: bodySize
        type: s4
        doc: Size of the body; the entry's size minus 48 in a valid entry.
      - id: body
        -orig-id: body
        size: len_body
        doc: |
          The commit-log message record (see rocketmq_commitlog), its
          PHYSICALOFFSET set to `ofs_entry + 48`.
enums:
  entry_magic:
    0x0:
      id: zero_fill
      doc: Zero-filled tail of a pre-allocated file; the data ends here.
    0x1:
      id: normal
      -orig-id: MAGIC_1
      doc: An entry (`CURRENT_MAGIC`, the only magic DLedger 0.2 and 0.3 write).
    -1:
      id: blank
      -orig-id: BLANK_MAGIC_CODE
      doc: BLANK filler (-1, 0xFFFFFFFF); the rest of the file is padding.
