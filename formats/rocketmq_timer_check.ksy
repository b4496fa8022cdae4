meta:
  id: rocketmq_timer_check
  title: Apache RocketMQ timer checkpoint
  application: Apache RocketMQ broker (5.0.0 and later)
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.9'
  endian: be
doc: |
  The file `<store>/config/timercheck` (`TimerCheckpoint`, 5.0.0+): the
  progress of the timer message store (the timer wheel and timer log kept
  for messages sent with a delivery time, see rocketmq_timer_log and
  rocketmq_timer_wheel). Despite its folder it is binary, not JSON: the
  broker maps one 4096-byte page of the file and rewrites the fields in
  place on every timer flush and on shutdown; the bytes after them stay
  zero. The layout is the same from 5.0.0 to 5.3.x.

  On start the timer store recovers the timer log from one segment before
  `ofs_last_timer_log_flush`, resumes reading the timer topic's queue near
  `last_timer_queue_offset` and resumes delivery at `last_read_time_ms`
  (but not earlier than the wheel can hold).
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerCheckpoint.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/broker/src/main/java/org/apache/rocketmq/broker/BrokerPathConfigHelper.java
-rmq-since: '5.0.0'
-rmq-ref: "rocketmq-all-5.0.0:store/src/main/java/org/apache/rocketmq/store/\
  timer/TimerCheckpoint.java"
seq:
  - id: last_read_time_ms
    -orig-id: lastReadTimeMs
    type: s8
    doc: |
      Delivery time (ms since the epoch, a multiple of the timer precision)
      up to which the wheel's slots have been read and their messages
      delivered.
  - id: ofs_last_timer_log_flush
    -orig-id: lastTimerLogFlushPos
    type: s8
    doc: Timer-log offset up to which the timer log had been flushed.
  - id: last_timer_queue_offset
    -orig-id: lastTimerQueueOffset
    type: s8
    doc: |
      Consume offset in queue 0 of the timer topic `rmq_sys_wheel_timer`
      (the commit-log copies of timer messages) up to which the timer store
      had committed its progress, capped at `master_timer_queue_offset`.
  - id: master_timer_queue_offset
    -orig-id: masterTimerQueueOffset
    type: s8
    doc: |
      On the broker that delivers timer messages (a master), its own
      committed queue offset; on a slave, the master's value as last
      synchronised.
  - id: data_version
    -orig-id: dataVersion
    type: timer_data_version
    doc: |
      Version stamp of this checkpoint, changed whenever the timer store commits
      progress.
  - id: reserved
    size-eos: true
    doc: Rest of the 4096-byte page; never written, so zero.
types:
  timer_data_version:
    doc: |
      A `DataVersion` (the version stamp the broker's JSON config files also
      carry), stored as three longs.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/remoting/src/main/java/org/apache/rocketmq/remoting/protocol/DataVersion.java
    -webide-representation: >-
      state {state_version:dec} counter {counter:dec} at {timestamp:dec}
    seq:
      - id: state_version
        -orig-id: stateVersion
        type: s8
        doc: |
          The message store's state-machine version when the stamp last changed
          (0 unless in controller mode).
      - id: timestamp
        -orig-id: timestamp
        type: s8
        doc: Time of the last change, in ms since the epoch.
      - id: counter
        -orig-id: counter
        type: s8
        doc: Number of changes since the version was created.
