meta:
  id: rocketmq_checkpoint
  title: Apache RocketMQ store checkpoint
  application: Apache RocketMQ broker (4.0.0 and later)
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  The file `<store>/checkpoint` (`StoreCheckpoint`): how far the broker had
  flushed the commit log, the consume queues and the index when it last
  wrote this file. The broker maps one 4096-byte page of the file
  (`OS_PAGE_SIZE`), so the file is 4096 bytes long. It rewrites the fields
  in place after each complete consume-queue flush and each index-file
  flush, once a second in 5.x, and on shutdown; it never writes the bytes
  after them, which stay zero.

  What each release writes:

  * 4.0.0 to 4.9.x: the three timestamps (bytes 0 to 23). A file created by
    these releases has zeros at bytes 24 to 39; a 4.x broker running on a
    file written by 5.x leaves whatever is there.
  * 5.0.0 to 5.1.0: also `masterFlushedOffset` (bytes 24 to 31).
  * 5.1.1 and later: also `confirmPhyOffset` (bytes 32 to 39).

  The timestamps are milliseconds since the Unix epoch. They are flush
  marks, not "last message" times: `physicMsgTimestamp` is the store time
  of the message at the flush position when a flush started, so it is
  normally older than the newest messages even after a clean shutdown.
  When a broker restarts after an unclean shutdown (an `abort` file is in
  the store root), its recovery uses them to choose where to start: it
  walks the commit-log segments back from the newest and starts at the
  first whose first message was stored no later than `min_timestamp`
  (`min_timestamp_index` when `messageIndexSafe` is set).
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.1/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.0.0/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
-rmq-since: '4.0.0'
-rmq-ref: "rocketmq-4.0.0-incubating:store/src/main/java/org/apache/rocketmq/\
  store/StoreCheckpoint.java"
seq:
  - id: physic_msg_timestamp
    -orig-id: physicMsgTimestamp
    type: s8
    doc: |
      Store time (ms since the epoch) of the commit-log message at the
      position where the last commit-log flush began; 0 before the first.
      On a slave or with `duplicationEnable`, the store time of the last
      message dispatched to a consume queue. All releases.
  - id: logics_msg_timestamp
    -orig-id: logicsMsgTimestamp
    type: s8
    doc: |
      Store time (ms since the epoch) of the last message dispatched to a
      consume queue, as of the last write of this file (to 5.4.0: written
      to the queue in memory, flushed or not). From 5.5.0 the store time
      of the last message whose consume-queue unit was flushed to disk;
      the in-memory value is kept apart (`tmpLogicsMsgTimestamp`) and
      copied here when FlushConsumeQueueService flushes the queues, after
      which it always writes the checkpoint.
    -rmq-changes:
      - in: '5.5.0'
        id: checkpoint_logics_flushed
        rule: MEANING_CHANGED
        doc: |
          logicsMsgTimestamp is the store time of the last message whose
          consume-queue unit is flushed, not the last one written to a
          queue in memory; abnormal recovery (which starts at the older of
          the commit-log and consume-queue times) therefore starts no later
          than the flushed queues, never after them (apache/rocketmq
          #10073, PR #10074; #10079, PR #10080: the checkpoint is written
          after every consume-queue flush pass).
        ref: "rocketmq-all-5.5.0:store/src/main/java/org/apache/rocketmq/\
          store/StoreCheckpoint.java"
        old-reader-ok: true
  - id: index_msg_timestamp
    -orig-id: indexMsgTimestamp
    type: s8
    doc: |
      End timestamp (ms since the epoch) of the last index file flushed,
      as recorded in its header. All releases.
  - id: ofs_master_flushed
    -orig-id: masterFlushedOffset
    type: s8
    doc: |
      Commit-log offset up to which the master had flushed, as told to a
      slave (controller mode); 0 on a master or standalone broker. Written
      by 5.0.0 and later; zero in a file created by 4.x.
    -rmq-since: '5.0.0'
    -rmq-ref: "rocketmq-all-5.0.0:store/src/main/java/org/apache/rocketmq/\
      store/StoreCheckpoint.java"
    -rmq-compatible: true
  - id: ofs_confirm_phy
    -orig-id: confirmPhyOffset
    type: s8
    doc: |
      The commit log's confirm offset. In controller mode, the offset up
      to which data is confirmed replicated; otherwise the recovery at
      startup sets it to the offset of the last valid message it found (0
      for a store that was empty). Written by 5.1.1 and later; zero in a
      file created by an older release.
    -rmq-since: '5.1.1'
    -rmq-ref: "rocketmq-all-5.1.1:store/src/main/java/org/apache/rocketmq/\
      store/StoreCheckpoint.java"
    -rmq-compatible: true
  - id: reserved
    size-eos: true
    doc: Rest of the 4096-byte page; never written, so zero.
instances:
  min_flush_timestamp:
    # Rust compares and computes operands of different integer types (a
    # field and a literal or a computed value) as 32-bit values, so both
    # sides of each operator below have one type, and each value is cast to
    # s8 as a whole
    # (Java, C++, C# and Rust type an uncast computed value as 32-bit).
    value: >-
      (physic_msg_timestamp < logics_msg_timestamp
      ? physic_msg_timestamp : logics_msg_timestamp).as<s8>
    doc: The older of the commit-log and consume-queue timestamps.
  min_timestamp:
    value: >-
      (min_flush_timestamp >= (3000).as<s8>
      ? (min_flush_timestamp - (3000).as<s8>).as<s8> : (0).as<s8>).as<s8>
    doc: |
      `StoreCheckpoint.getMinTimestamp`: the older of the commit-log and
      consume-queue timestamps, minus 3 seconds, not below 0. Abnormal
      recovery starts at the newest commit-log segment whose first message
      was stored at or before this time.
  min_timestamp_index:
    value: >-
      (min_timestamp < index_msg_timestamp.as<s8>
      ? min_timestamp : index_msg_timestamp).as<s8>
    doc: |
      `StoreCheckpoint.getMinTimestampIndex`: `min_timestamp`, or the index
      timestamp when older; the recovery start time with `messageIndexSafe`.
