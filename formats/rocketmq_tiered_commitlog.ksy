meta:
  id: rocketmq_tiered_commitlog
  title: Apache RocketMQ tiered-store commit-log segment
  application: Apache RocketMQ broker, tiered-store plugin (5.1.0 and later)
  xref:
    wikidata: Q28975570
  tags:
    - database
    - log
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
-rmq-since: '5.1.0'
-rmq-ref: "rocketmq-all-5.1.0:tieredstore/src/main/java/org/apache/rocketmq/\
  tieredstore/util/MessageBufferUtil.java"
doc: |
  A commit-log segment of one topic queue in the tiered store (POSIX
  backend: `<tieredStoreFilePath>/<md5(cluster)[:8]>_<cluster>/<broker>/
  <topic>/<queueId>/COMMIT_LOG/<md5(offset)[:8]><offset, 20 digits>`).
  It holds that queue's message records, byte for byte as in the broker's
  commit log (see rocketmq_commitlog) except PHYSICALOFFSET, which the
  upload stream (`CommitLogInputStream`) rewrites to the record's offset in
  the tiered commit log; a `__CRC32#` property is not recomputed. Files are
  written by appending, not pre-allocated, and a sealed file may end with
  a 16-byte coda. The queue's tiered consume queue (`CONSUME_QUEUE/`) is a
  stream of rocketmq_consumequeue units whose offsets are tiered
  commit-log offsets, its files named by `queue offset * 20`.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/util/MessageFormatUtil.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/stream/CommitLogInputStream.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/provider/PosixFileSegment.java
seq:
  - id: records
    size-eos: true
    doc: |
      Message records (rocketmq_commitlog `record`), one after the other,
      then the coda if the file was sealed with one.
types:
  coda:
    doc: |
      The end of a sealed segment (`COMMIT_LOG_CODA_SIZE` = 16 bytes): a
      BLANK record header followed by the newest store time.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/util/MessageFormatUtil.java
    -webide-representation: 'coda, newest {max_store_timestamp:dec}'
    seq:
      - id: len_coda
        -orig-id: COMMIT_LOG_CODA_SIZE
        type: s4
        doc: 16, the coda's size.
      - id: magic
        -orig-id: BLANK_MAGIC_CODE
        type: u4
        # The literal cast to u4: Rust compares with an i32 and refuses a
        # literal out of its range.
        valid:
          eq: 0xcbd43194.as<u4>
        doc: The commit log's BLANK magic.
      - id: max_store_timestamp
        -orig-id: maxStoreTimestamp
        type: s8
        doc: Newest store time (ms) of the segment's messages.
