meta:
  id: rocketmq_commitlog
  title: Apache RocketMQ commit log segment
  application: Apache RocketMQ broker (4.0.0 and later)
  tags:
    - database
    - log
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  One segment of an Apache RocketMQ broker commit log: the file
  `<store>/commitlog/<20-digit start offset>` that holds every message of
  every topic in arrival order. The commit log is one logical byte stream cut
  into equally sized segments (1 GiB by default, `mappedFileSizeCommitLog`,
  spelled `mapedFileSizeCommitLog` before 4.5.2);
  a segment's file name is the decimal commit-log offset of its first byte,
  and the commit-log offset of a record is that number plus the record's
  position in the file.

  A segment is a sequence of length-prefixed records. A message record
  starts with its total size and the magic code of its version: V1
  (`0xdaa320a7`, all releases) has a 1-byte topic length, V2 (`0xdaa320ab`,
  5.1.0+, written when a topic is longer than 127 characters) a 2-byte one.
  A record never crosses the end of a segment: when the next message does
  not fit, the broker writes a BLANK record (magic `0xcbd43194`) whose size
  covers the rest of the segment, and only its first 8 bytes are
  meaningful. Segments are pre-allocated, so the newest one ends in a
  zero-filled tail that reads as a record of size 0 and magic 0.

  The sequence below stops at the first record that is not a message: a
  BLANK record (the rest of the segment is padding) or the zero-filled
  tail. This is where the broker's recovery (`CommitLog.recoverNormally`)
  stops reading a segment. All integers are big-endian and signed, as
  Java writes them.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/MessageExtEncoder.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
-rmq-since: '4.0.0'
-rmq-ref: "rocketmq-4.0.0-incubating:store/src/main/java/org/apache/rocketmq/\
  store/CommitLog.java"
-rmq-changes:
  - in: '5.1.3'
    rule: MEANING_CHANGED
    doc: |
      Recovery: a zero-length last segment is deleted when the store loads,
      instead of failing the load.
    ref: "rocketmq-all-5.1.3:store/src/main/java/org/apache/rocketmq/store/\
      MappedFileQueue.java"
    old-reader-ok: true
  - in: '5.3.2'
    rule: MEANING_CHANGED
    doc: |
      Recovery checks record bounds before reading a record, and normal
      recovery starts from the largest commit-log offset in the consume
      queues.
    ref: "rocketmq-all-5.3.2:store/src/main/java/org/apache/rocketmq/store/\
      CommitLog.java"
    old-reader-ok: true
  - in: '5.4.0'
    id: dispatch_start_all_stores
    rule: MEANING_CHANGED
    doc: |
      Recovery: the segment from which messages are dispatched again is the
      one that every dispatch store has reached: besides the consume
      queues, the RocksDB message store's index (`lastOffsetPy` of the
      `default` column family, with indexRocksDBEnable) and transactions
      (`lastOffsetPy` of `trans`, with transRocksDBEnable), each asked by
      its `isMappedFileMatchedRecover`; a store that is behind moves the
      start back.
    ref: "rocketmq-all-5.4.0:store/src/main/java/org/apache/rocketmq/store/\
      index/rocksdb/IndexRocksDBStore.java"
    old-reader-ok: true
  - in: '5.5.0'
    id: recover_abnormally_phy_offset
    rule: MEANING_CHANGED
    doc: |
      Abnormal recovery, with checkCommitLogOffsetOnRecover (default false),
      ends the data at a record whose stored PHYSICALOFFSET lies outside
      the segment it is in (old bytes of a reused file that pass the CRC
      and magic checks); BLANK records are not checked (#10038, PR #10039).
    ref: "rocketmq-all-5.5.0:store/src/main/java/org/apache/rocketmq/store/\
      CommitLog.java"
    old-reader-ok: true
  - in: '4.9.1'
    rule: MEANING_CHANGED
    at: types/record/instances/len_padding
    doc: |
      A single-message BLANK record writes only its 8-byte header; before,
      the broker copied `maxBlank` bytes, leaving stale data as padding.
    ref: "rocketmq-all-4.9.1:store/src/main/java/org/apache/rocketmq/store/\
      CommitLog.java"
    old-reader-ok: true
  - in: '4.9.4'
    rule: MEANING_CHANGED
    at: types/record/seq/len_record
    doc: |
      Maximum message size: the encoder checks only the body against
      `maxMessageSize`, so a record may be longer than `maxMessageSize`;
      before, the whole record had to fit `maxMessageSize`.
    ref: "rocketmq-all-4.9.4:store/src/main/java/org/apache/rocketmq/store/\
      CommitLog.java"
  - in: '4.9.5'
    rule: MEANING_CHANGED
    at: types/record/seq/len_record
    doc: |
      Maximum record size: besides the body (up to `maxMessageSize`), the
      whole record must fit `maxMessageSize` + 64 KiB; 4.9.4 bounded only
      the body.
    ref: "rocketmq-all-4.9.5:store/src/main/java/org/apache/rocketmq/store/\
      CommitLog.java"
seq:
  - id: records
    type: record
    repeat: until
    repeat-until: not _.is_message or _io.eof
    doc: |
      Records up to the end of the valid data of this segment. The last
      element is the BLANK record or the zero-filled tail, unless the file
      ends right after a message.
types:
  record:
    doc: |
      One commit-log record: a message (V1 or V2), the BLANK end-of-segment
      record, or the start of the zero-filled tail.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/CommitLog.java
    -webide-representation: '{magic} {len_record:dec} bytes {body}'
    seq:
      - id: len_record
        -orig-id: TOTALSIZE
        type: s4
        doc: |
          Size of the whole record in bytes, this field included. For a
          BLANK record, the number of bytes from this record to the end of
          the segment.
      - id: magic
        -orig-id: MAGICCODE
        type: s4
        enum: magic_code
        valid:
          in-enum: true
        doc: |
          Kind and version of the record; signed, as RocketMQ's Java holds
          the magic codes (`int`), so the enum values are negative.
      - id: body
        size: len_record - 8
        # One type for V1 and V2, no parameter: the Perl target ignores type
        # parameters. The message reads its version from this record's magic.
        type: message
        if: is_message
        doc: The message fields that follow the size and the magic code.
    instances:
      is_message:
        value: >-
          magic == magic_code::message_v1 or magic == magic_code::message_v2
        -rmq-before:
          - until: '5.1.0'
            value: magic == magic_code::message_v1
        doc: |
          True for a message record, false for BLANK and the zero-filled tail.
      len_padding:
        value: 'magic == magic_code::blank ? (len_record - 8).as<s4> : 0'
        doc: |
          Bytes of a BLANK record after its 8-byte header, up to the end of
          the segment. Their content is unspecified (brokers before 4.9.1
          left stale bytes of an earlier message there), so they are never
          parsed.
  message:
    doc: |
      The fields of a message record after TOTALSIZE and MAGICCODE, in the
      order `MessageExtEncoder.encode` writes them.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/MessageExtEncoder.java
    -webide-representation: >-
      {topic} q{queue_id:dec} #{queue_offset:dec} @{ofs_physical:dec}
      {len_body:dec}-byte body, flags {sys_flag}, born {born_host},
      store {store_host}
    seq:
      - id: body_crc
        -orig-id: BODYCRC
        type: s4
        doc: |
          CRC-32 (zlib polynomial) of the stored body bytes, masked with
          `0x7fffffff`; the compressed bytes when the body is compressed.
      - id: queue_id
        -orig-id: QUEUEID
        type: s4
        doc: Queue id within the topic.
      - id: flag
        -orig-id: FLAG
        type: s4
        doc: Opaque integer set by the producer (`Message.flag`).
      - id: queue_offset
        -orig-id: QUEUEOFFSET
        type: s8
        doc: |
          Logical offset of the message in its consume queue (0 for
          transaction PREPARED and ROLLBACK records; the base offset for an
          inner batch).
      - id: ofs_physical
        -orig-id: PHYSICALOFFSET
        type: s8
        doc: Commit-log offset of this record (segment start plus position).
      - id: sys_flag
        -orig-id: SYSFLAG
        type: sys_flag
        doc: |
          Message system flags; they choose the host widths and the body
          encoding.
      - id: born_timestamp
        -orig-id: BORNTIMESTAMP
        type: s8
        doc: |
          Time the producer created the message, in milliseconds since the Unix
          epoch.
      - id: born_host
        -orig-id: BORNHOST
        type:
          # Through a value instance, not `sys_flag.is_born_host_v6`: Rust
          # drops the borrow of `sys_flag` before the switch reads it.
          switch-on: born_host_v6
          cases:
            true: host_v6
            false: host_v4
        -rmq-before:
          - until: '4.6.0'
            type: host_v4
            rule: FIELD_WIDTH_CHANGED
            doc: 8 bytes before 4.6.0; 8 or 20 bytes (IPv6) since.
            ref: "rocketmq-all-4.6.0:store/src/main/java/org/apache/rocketmq/\
              store/CommitLog.java"
        doc: Address of the producer connection as the broker saw it.
      - id: store_timestamp
        -orig-id: STORETIMESTAMP
        type: s8
        doc: |
          Time the broker appended the record, in milliseconds since the Unix
          epoch.
      - id: store_host
        -orig-id: STOREHOSTADDRESS
        type:
          # Through a value instance, not `sys_flag.is_store_host_v6`: Rust
          # drops the borrow of `sys_flag` before the switch reads it.
          switch-on: store_host_v6
          cases:
            true: host_v6
            false: host_v4
        -rmq-before:
          - until: '4.6.0'
            type: host_v4
            rule: FIELD_WIDTH_CHANGED
            doc: 8 bytes before 4.6.0; 8 or 20 bytes (IPv6) since.
            ref: "rocketmq-all-4.6.0:store/src/main/java/org/apache/rocketmq/\
              store/CommitLog.java"
        doc: Address and listen port of the broker that stored the record.
      - id: reconsume_times
        -orig-id: RECONSUMETIMES
        type: s4
        doc: Number of times the message was sent back for redelivery.
      - id: ofs_prepared_transaction
        -orig-id: PREPAREDTRANSACTIONOFFSET
        type: s8
        doc: |
          For a transaction COMMIT or ROLLBACK record, the commit-log offset
          of the prepared (half) message; 0 otherwise.
      - id: len_body
        -orig-id: BODYLENGTH
        type: s4
        doc: |
          Length of the stored body; no body bytes follow when it is 0 or less.
      - id: body
        -orig-id: BODY
        size: 'len_body > 0 ? len_body : 0'
        doc: |
          The body as stored: compressed when `sys_flag.is_compressed` is
          set, and a batch of encoded messages for an inner batch.
      - id: len_topic
        -orig-id: TOPICLENGTH
        type:
          switch-on: _parent.magic
          # V1 as the default case, so that a release without V2 keeps one.
          cases:
            'magic_code::message_v2': s2
            _: s1
          -rmq-cases:
            'magic_code::message_v2':
              since: '5.1.0'
              ref: "rocketmq-all-5.1.0:store/src/main/java/org/apache/\
                rocketmq/store/CommitLog.java"
        valid:
          min: 0
        doc: |
          Byte length of the topic: a signed byte in V1, a signed short in
          V2. A negative value is corrupt data.
      - id: topic
        -orig-id: TOPIC
        size: len_topic
        type: str
        encoding: UTF-8
        doc: |
          Topic name as stored (after broker rewrites such as
          `SCHEDULE_TOPIC_XXXX`).
        -rmq-changes:
          - in: '5.1.0'
            rule: MEANING_CHANGED
            doc: |
              Retry topics of up to 255 bytes are accepted (stored as V2
              records when longer than 127 characters).
            ref: "rocketmq-all-5.1.0:broker/src/main/java/org/apache/rocketmq/\
              broker/util/HookUtils.java"
            old-reader-ok: false
      - id: len_properties
        -orig-id: PROPERTIESLENGTH
        type: s2
        doc: Byte length of the properties; none follow when it is 0 or less.
      - id: properties
        -orig-id: PROPERTIES
        size: 'len_properties > 0 ? len_properties : 0'
        type: str
        encoding: UTF-8
        doc: |
          Raw properties: `name U+0001 value` pairs separated by U+0002, with
          or without a trailing separator depending on the writer's version.
        -rmq-property-names:
          # The properties the readers decode into values of their own (the
          # columns tags, keys, uniqKey, priority, liteTopic; the delay level
          # and the record CRC), by their MessageConst names. Each id added
          # after 4.0.0 is also the id of its PROPERTY_ADDED change below.
          tags: TAGS
          keys: KEYS
          uniq_key: UNIQ_KEY
          delay: DELAY
          crc32: '__CRC32#'
          priority: _SYS_MSG_PRIORITY_
          lite_topic: __LITE_TOPIC
        -rmq-changes:
          - in: '4.6.0'
            rule: MEANING_CHANGED
            doc: |
              UNIQ_KEY ids may hold an IPv6 address; their process-id field
              holds the high 16 bits of the pid (a bug).
            ref: "rocketmq-all-4.6.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageClientIDSetter.java"
            old-reader-ok: true
          - in: '4.7.0'
            rule: MEANING_CHANGED
            doc: |
              The process-id field of UNIQ_KEY ids holds `(short) pid`.
            ref: "rocketmq-all-4.7.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageClientIDSetter.java"
            old-reader-ok: true
          - in: '4.9.1'
            rule: MEANING_CHANGED
            doc: |
              The `WAIT` property is stripped before the message is stored
              (4.9.1 to 4.9.8 only).
            ref: "rocketmq-all-4.9.1:broker/src/main/java/org/apache/rocketmq/\
              broker/processor/SendMessageProcessor.java"
            old-reader-ok: true
          - in: '5.0.0'
            rule: MEANING_CHANGED
            doc: |
              The `WAIT` property is stored again.
            ref: "rocketmq-all-5.0.0:broker/src/main/java/org/apache/rocketmq/\
              broker/processor/SendMessageProcessor.java"
            old-reader-ok: true
          - in: '4.3.0'
            rule: PROPERTY_ADDED
            doc: |
              Transaction properties `TRAN_PREPARED_QUEUE_OFFSET`,
              `TRANSACTION_CHECK_TIMES`, `CHECK_IMMUNITY_TIME_IN_SECONDS`.
            ref: "rocketmq-all-4.3.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageConst.java"
            old-reader-ok: true
          - in: '4.5.1'
            rule: PROPERTY_ADDED
            doc: |
              `INSTANCE_ID`, set by clients that use a namespace.
            ref: "rocketmq-all-4.5.1:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageConst.java"
            old-reader-ok: true
          - in: '4.6.0'
            rule: PROPERTY_ADDED
            doc: |
              The broker adds `CLUSTER` to every message it stores. 4.6.0
              clients send requests with `CORRELATION_ID`, `REPLY_TO_CLIENT`
              and `TTL` (`request()`), and replies with those and `MSG_TYPE`
              (the reply helper). `PUSH_REPLY_TIME` and `ARRIVE_TIME` are
              declared too but never stored: the broker sets the first after
              the record is encoded, the requesting client the second on
              receipt.
            ref: "rocketmq-all-4.6.0:broker/src/main/java/org/apache/rocketmq/\
              broker/processor/SendMessageProcessor.java"
            old-reader-ok: true
          - in: '4.8.0'
            rule: MEANING_CHANGED
            doc: |
              The properties of a message batch are appended to those of each
              of its records.
            ref: "rocketmq-all-4.8.0:store/src/main/java/org/apache/rocketmq/\
              store/CommitLog.java"
            old-reader-ok: true
          - in: '4.9.3'
            rule: PROPERTY_ADDED
            doc: |
              LMQ multi-dispatch properties `INNER_MULTI_DISPATCH`,
              `INNER_MULTI_QUEUE_OFFSET`.
            ref: "rocketmq-all-4.9.3:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageConst.java"
            old-reader-ok: true
          - in: '5.0.0'
            rule: PROPERTY_ADDED
            doc: |
              Inner-batch `INNER_NUM` / `INNER_BASE`, timer `TIMER_*`, POP
              (`POP_CK`, `1ST_POP_TIME`) and 5.0 proxy and client properties
              (`__BORNHOST`, `BORN_TIMESTAMP`, `__SHARDINGKEY`,
              `TRACE_CONTEXT`). Also declared, but set by no code up to 5.3.3:
              `POP_CK_OFFSET`, `TIMER_DELAY_LEVEL`, `EXTEND_UNIQ_INFO`,
              `REDIRECT`, `PROPERTY_FORWARD_QUEUE_ID`. `__transactionId__`
              only gets a constant here: clients have set it since 4.0.0, on
              their own copy after the half message is sent, so it is not
              stored.
            ref: "rocketmq-all-5.0.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageConst.java"
            old-reader-ok: true
          - in: '5.1.0'
            rule: PROPERTY_ADDED
            doc: |
              Dead-letter properties `DLQ_ORIGIN_TOPIC`,
              `DLQ_ORIGIN_MESSAGE_ID`: declared and read by the proxy; no
              Apache broker, client or proxy code up to 5.3.3 sets them, so
              they come from other writers only.
            ref: "rocketmq-all-5.1.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageConst.java"
            old-reader-ok: true
          - in: '4.9.1'
            id: trailing_separator_dropped
            rule: MEANING_CHANGED
            doc: |
              Written without the trailing U+0002 separator (4.9.1 to 5.1.x);
              the parser skips empty names and values.
            ref: "rocketmq-all-4.9.1:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageDecoder.java"
            old-reader-ok: true
          - in: '5.2.0'
            id: trailing_separator_restored
            rule: MEANING_CHANGED
            doc: The trailing U+0002 separator is written again.
            ref: "rocketmq-all-5.2.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageDecoder.java"
            old-reader-ok: true
          - in: '5.2.0'
            id: crc32
            rule: PROPERTY_ADDED
            doc: |
              Optional `__CRC32#` property (`enabledAppendPropCRC`), last in
              the string: the CRC32 of the record bytes before it as ten
              ASCII digits, least significant first, then U+0002.
            ref: "rocketmq-all-5.2.0:store/src/main/java/org/apache/rocketmq/\
              store/CommitLog.java"
            old-reader-ok: true
          - in: '5.4.0'
            id: priority
            rule: PROPERTY_ADDED
            doc: |
              Priority messages (RIP-80): `_SYS_MSG_PRIORITY_`, a decimal
              priority set by the producer. The broker stores such a message
              in queue min(priority, writeQueueNums - 1) of its topic (the
              queue id is the priority; nothing else on disk changes) and
              drops the property from a message of another type
              (transactional, delayed, FIFO).
            ref: "rocketmq-all-5.4.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageConst.java"
            old-reader-ok: true
          - in: '5.4.0'
            id: trans_offset_property
            rule: PROPERTY_ADDED
            doc: |
              Transactions in RocksDB (transRocksDBEnable): half messages
              are stored under `RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC`, and a
              commit or rollback writes an operation message (body one 0
              byte, tag `d`) under `RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC`
              with `TRANS_OFFSET`, the decimal commit-log offset of its
              half message, `__transactionId__` and `REAL_TOPIC`.
            ref: "rocketmq-all-5.4.0:store/src/main/java/org/apache/rocketmq/\
              store/transaction/TransMessageRocksDBStore.java"
            old-reader-ok: true
          - in: '5.5.0'
            id: lite_topic
            rule: PROPERTY_ADDED
            doc: |
              Lite topics (Lite mode): `__LITE_TOPIC`, the lite topic a
              message of a parent topic belongs to, set by the producer.
              The broker keeps it and adds `INNER_MULTI_DISPATCH` naming
              the LMQ `%LMQ%$parent$lite` (`LiteUtil.toLmqName`), so the
              message is dispatched to that queue as well.
            ref: "rocketmq-all-5.5.0:common/src/main/java/org/apache/rocketmq/\
              common/message/MessageConst.java"
            old-reader-ok: true
    instances:
      born_host_v6:
        value: sys_flag.is_born_host_v6
        -rmq-before:
          - until: '4.6.0'
            value: false
        doc: True when the born host is IPv6 (20 bytes), the SYSFLAG bit 4.
      store_host_v6:
        value: sys_flag.is_store_host_v6
        -rmq-before:
          - until: '4.6.0'
            value: false
        doc: True when the store host is IPv6 (20 bytes), the SYSFLAG bit 5.
      is_v2:
        value: _parent.magic == magic_code::message_v2
        -rmq-before:
          - until: '5.1.0'
            value: false
        doc: |
          True for a V2 record (2-byte topic length), false for V1 (1-byte topic
          length), from the record's magic code.
      len_host_fields:
        value: >-
          ((sys_flag.is_born_host_v6 ? 16 : 4) + (sys_flag.is_store_host_v6
          ? 16 : 4) + 8).as<s4>
        -rmq-before:
          - until: '4.6.0'
            value: (16).as<s4>
        doc: Bytes taken by the two host fields (8 or 20 each).
      len_record_computed:
        value: >-
          74 + len_host_fields + (is_v2 ? 2 : 1).as<s4>
          + (len_body > 0 ? len_body : 0) + len_topic.as<s4>
          + (len_properties > 0 ? len_properties : 0).as<s4>
        doc: |
          The record size the broker's `calMsgLength` gives for these
          fields; recovery rejects a record whose TOTALSIZE differs.
  sys_flag:
    doc: |
      The 32-bit SYSFLAG field, most significant bit first. Bit 0 marks a
      compressed body, bits 2-3 the transaction type, bits 4 and 5 IPv6
      hosts (4.6.0+), bits 6 and 7 an inner batch (5.0.0+), and bits 8-10
      the compression type (set by 4.9.4+ producer clients).
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java
    -webide-representation: '{flag_names}'
    seq:
      - id: reserved
        type: b21
        doc: Bits 11-31, unused by every release.
      - id: compression_type
        -orig-id: COMPRESSION_TYPE_COMPARATOR
        type: b3
        enum: compression_type
        doc: |
          Bits 8-10, the body compression algorithm when `is_compressed` is
          set. The producer client sets them (4.9.4+ clients) and the broker
          stores them as sent, so a broker of any release stores them when a
          newer client sends them: they date the client, not the broker.
        -rmq-since: '4.9.4'
        -rmq-writer: client
        -rmq-ref: "rocketmq-all-4.9.4:client/src/main/java/org/apache/\
          rocketmq/client/impl/producer/DefaultMQProducerImpl.java"
      - id: is_inner_batch
        -orig-id: INNER_BATCH_FLAG
        type: b1
        doc: |
          Bit 7, the record is an inner batch (5.0.0+; 4.9.4 to 4.9.8 declare
          the constant but never set it).
        -rmq-since: '5.0.0'
        -rmq-ref: "rocketmq-all-5.0.0:broker/src/main/java/org/apache/\
          rocketmq/broker/processor/SendMessageProcessor.java"
      - id: needs_unwrap
        -orig-id: NEED_UNWRAP_FLAG
        type: b1
        doc: |
          Bit 6, the body is a batch the consumer must unwrap (5.0.0+; 4.9.4
          to 4.9.8 declare the constant but never set it).
        -rmq-since: '5.0.0'
        -rmq-ref: "rocketmq-all-5.0.0:broker/src/main/java/org/apache/\
          rocketmq/broker/processor/SendMessageProcessor.java"
      - id: is_store_host_v6
        -orig-id: STOREHOSTADDRESS_V6_FLAG
        type: b1
        doc: Bit 5, the store host field is 20 bytes (IPv6, 4.6.0+).
        -rmq-since: '4.6.0'
        -rmq-ref: "rocketmq-all-4.6.0:common/src/main/java/org/apache/\
          rocketmq/common/sysflag/MessageSysFlag.java"
      - id: is_born_host_v6
        -orig-id: BORNHOST_V6_FLAG
        type: b1
        doc: Bit 4, the born host field is 20 bytes (IPv6, 4.6.0+).
        -rmq-since: '4.6.0'
        -rmq-ref: "rocketmq-all-4.6.0:common/src/main/java/org/apache/\
          rocketmq/common/sysflag/MessageSysFlag.java"
      - id: transaction_type
        -orig-id: TRANSACTION_TYPE
        type: b2
        enum: transaction_type
        doc: Bits 2-3, the transaction role of the record.
        -rmq-changes:
          - in: '4.3.0'
            rule: MEANING_CHANGED
            doc: |
              Transaction half messages are stored as `not_type` under
              `RMQ_SYS_TRANS_HALF_TOPIC`; before, as `prepared`.
            ref: "rocketmq-all-4.3.0:broker/src/main/java/org/apache/rocketmq/\
              broker/transaction/queue/TransactionalMessageBridge.java"
            old-reader-ok: true
      - id: is_multi_tags
        -orig-id: MULTI_TAGS_FLAG
        type: b1
        doc: Bit 1, the topic's filter type is MULTI_TAG.
      - id: is_compressed
        -orig-id: COMPRESSED_FLAG
        type: b1
        doc: Bit 0, the body is compressed.
    instances:
      flag_list:
        value: >-
          (is_compressed ? " COMPRESSED" : "")
          + (is_multi_tags ? " MULTI_TAGS" : "")
          + (transaction_type == transaction_type::prepared ? " PREPARED" : "")
          + (transaction_type == transaction_type::commit ? " COMMIT" : "")
          + (transaction_type == transaction_type::rollback ? " ROLLBACK" : "")
          + (is_born_host_v6 ? " BORNHOST_V6" : "")
          + (is_store_host_v6 ? " STOREHOST_V6" : "")
          + (needs_unwrap ? " NEED_UNWRAP" : "")
          + (is_inner_batch ? " INNER_BATCH" : "")
          + (compression_type == compression_type::lz4 ? " LZ4" : "")
          + (compression_type == compression_type::zstd ? " ZSTD" : "")
          + (compression_type == compression_type::zlib ? " ZLIB" : "")
          + (reserved != 0 ? " RESERVED_BITS" : "")
        -rmq-before:
          - until: '4.6.0'
            value: >-
              (is_compressed ? " COMPRESSED" : "")
              + (is_multi_tags ? " MULTI_TAGS" : "")
              + (transaction_type == transaction_type::prepared
              ? " PREPARED" : "")
              + (transaction_type == transaction_type::commit
              ? " COMMIT" : "")
              + (transaction_type == transaction_type::rollback
              ? " ROLLBACK" : "")
              + (reserved != 0 ? " RESERVED_BITS" : "")
          - until: '4.9.4'
            value: >-
              (is_compressed ? " COMPRESSED" : "")
              + (is_multi_tags ? " MULTI_TAGS" : "")
              + (transaction_type == transaction_type::prepared
              ? " PREPARED" : "")
              + (transaction_type == transaction_type::commit
              ? " COMMIT" : "")
              + (transaction_type == transaction_type::rollback
              ? " ROLLBACK" : "")
              + (is_born_host_v6 ? " BORNHOST_V6" : "")
              + (is_store_host_v6 ? " STOREHOST_V6" : "")
              + (reserved != 0 ? " RESERVED_BITS" : "")
          - until: '5.0.0'
            value: >-
              (is_compressed ? " COMPRESSED" : "")
              + (is_multi_tags ? " MULTI_TAGS" : "")
              + (transaction_type == transaction_type::prepared
              ? " PREPARED" : "")
              + (transaction_type == transaction_type::commit
              ? " COMMIT" : "")
              + (transaction_type == transaction_type::rollback
              ? " ROLLBACK" : "")
              + (is_born_host_v6 ? " BORNHOST_V6" : "")
              + (is_store_host_v6 ? " STOREHOST_V6" : "")
              + (compression_type == compression_type::lz4 ? " LZ4" : "")
              + (compression_type == compression_type::zstd ? " ZSTD" : "")
              + (compression_type == compression_type::zlib ? " ZLIB" : "")
              + (reserved != 0 ? " RESERVED_BITS" : "")
        doc: |
          The name of every set bit or bit group, lowest bit first, each
          after a space; empty when no bit is set.
      flag_names:
        value: >-
          flag_list == "" ? "none" : flag_list.substring(1, flag_list.length)
        doc: |
          `flag_list` without its leading space, or `none`: what the Web IDE
          shows for the field.
  host_v4:
    doc: |
      An IPv4 socket address as `MessageExt.socketAddress2ByteBuffer` writes
      it: the 4 address bytes in network order, then the port as a 4-byte
      int (8 bytes).
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageExt.java
    -webide-representation: '{address_text} port {port:dec}'
    seq:
      - id: address
        size: 4
        doc: IPv4 address bytes.
      - id: port
        type: s4
        doc: TCP port.
    instances:
      len_address:
        value: 4
        doc: Width of the address bytes.
      address_text:
        value: >-
          (address[0] & 255).to_s + "." + (address[1] & 255).to_s + "."
          + (address[2] & 255).to_s + "." + (address[3] & 255).to_s
        doc: The address in dotted decimal.
  host_v6:
    doc: |
      An IPv6 socket address as `MessageExt.socketAddress2ByteBuffer` writes
      it: the 16 address bytes in network order, then the port as a 4-byte
      int (20 bytes).
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageExt.java
    -webide-representation: '{address_text} port {port:dec}'
    seq:
      - id: address
        size: 16
        doc: IPv6 address bytes.
      - id: port
        type: s4
        doc: TCP port.
    instances:
      len_address:
        value: 16
        doc: Width of the address bytes.
      address_text:
        value: ipv6_text
        doc: |
          The address as eight groups of four hex digits
          (`2001:0db8:0000:...`).
      ipv6_text:
        value: >-
          ipv6_group_0 + ":" + ipv6_group_1 + ":" + ipv6_group_2 + ":"
          + ipv6_group_3 + ":" + ipv6_group_4 + ":" + ipv6_group_5 + ":"
          + ipv6_group_6 + ":" + ipv6_group_7
        doc: An IPv6 address, uncompressed, in lower-case hex.
      ipv6_group_0:
        # Each nibble through a chain of conditionals, not a `substring` of
        # "0123456789abcdef": Rust cannot index a string by an integer
        # expression.
        value: >-
          (nibble_0 < 10 ? nibble_0.to_s : nibble_0 == 10 ? "a"
          : nibble_0 == 11 ? "b" : nibble_0 == 12 ? "c"
          : nibble_0 == 13 ? "d" : nibble_0 == 14 ? "e" : "f")
          + (nibble_1 < 10 ? nibble_1.to_s : nibble_1 == 10 ? "a"
          : nibble_1 == 11 ? "b" : nibble_1 == 12 ? "c"
          : nibble_1 == 13 ? "d" : nibble_1 == 14 ? "e" : "f")
          + (nibble_2 < 10 ? nibble_2.to_s : nibble_2 == 10 ? "a"
          : nibble_2 == 11 ? "b" : nibble_2 == 12 ? "c"
          : nibble_2 == 13 ? "d" : nibble_2 == 14 ? "e" : "f")
          + (nibble_3 < 10 ? nibble_3.to_s : nibble_3 == 10 ? "a"
          : nibble_3 == 11 ? "b" : nibble_3 == 12 ? "c"
          : nibble_3 == 13 ? "d" : nibble_3 == 14 ? "e" : "f")
        doc: Bytes 0 and 1 of an IPv6 address as four hex digits.
      ipv6_group_1:
        value: >-
          (nibble_4 < 10 ? nibble_4.to_s : nibble_4 == 10 ? "a"
          : nibble_4 == 11 ? "b" : nibble_4 == 12 ? "c"
          : nibble_4 == 13 ? "d" : nibble_4 == 14 ? "e" : "f")
          + (nibble_5 < 10 ? nibble_5.to_s : nibble_5 == 10 ? "a"
          : nibble_5 == 11 ? "b" : nibble_5 == 12 ? "c"
          : nibble_5 == 13 ? "d" : nibble_5 == 14 ? "e" : "f")
          + (nibble_6 < 10 ? nibble_6.to_s : nibble_6 == 10 ? "a"
          : nibble_6 == 11 ? "b" : nibble_6 == 12 ? "c"
          : nibble_6 == 13 ? "d" : nibble_6 == 14 ? "e" : "f")
          + (nibble_7 < 10 ? nibble_7.to_s : nibble_7 == 10 ? "a"
          : nibble_7 == 11 ? "b" : nibble_7 == 12 ? "c"
          : nibble_7 == 13 ? "d" : nibble_7 == 14 ? "e" : "f")
        doc: Bytes 2 and 3 of an IPv6 address as four hex digits.
      ipv6_group_2:
        value: >-
          (nibble_8 < 10 ? nibble_8.to_s : nibble_8 == 10 ? "a"
          : nibble_8 == 11 ? "b" : nibble_8 == 12 ? "c"
          : nibble_8 == 13 ? "d" : nibble_8 == 14 ? "e" : "f")
          + (nibble_9 < 10 ? nibble_9.to_s : nibble_9 == 10 ? "a"
          : nibble_9 == 11 ? "b" : nibble_9 == 12 ? "c"
          : nibble_9 == 13 ? "d" : nibble_9 == 14 ? "e" : "f")
          + (nibble_10 < 10 ? nibble_10.to_s : nibble_10 == 10 ? "a"
          : nibble_10 == 11 ? "b" : nibble_10 == 12 ? "c"
          : nibble_10 == 13 ? "d" : nibble_10 == 14 ? "e" : "f")
          + (nibble_11 < 10 ? nibble_11.to_s : nibble_11 == 10 ? "a"
          : nibble_11 == 11 ? "b" : nibble_11 == 12 ? "c"
          : nibble_11 == 13 ? "d" : nibble_11 == 14 ? "e" : "f")
        doc: Bytes 4 and 5 of an IPv6 address as four hex digits.
      ipv6_group_3:
        value: >-
          (nibble_12 < 10 ? nibble_12.to_s : nibble_12 == 10 ? "a"
          : nibble_12 == 11 ? "b" : nibble_12 == 12 ? "c"
          : nibble_12 == 13 ? "d" : nibble_12 == 14 ? "e" : "f")
          + (nibble_13 < 10 ? nibble_13.to_s : nibble_13 == 10 ? "a"
          : nibble_13 == 11 ? "b" : nibble_13 == 12 ? "c"
          : nibble_13 == 13 ? "d" : nibble_13 == 14 ? "e" : "f")
          + (nibble_14 < 10 ? nibble_14.to_s : nibble_14 == 10 ? "a"
          : nibble_14 == 11 ? "b" : nibble_14 == 12 ? "c"
          : nibble_14 == 13 ? "d" : nibble_14 == 14 ? "e" : "f")
          + (nibble_15 < 10 ? nibble_15.to_s : nibble_15 == 10 ? "a"
          : nibble_15 == 11 ? "b" : nibble_15 == 12 ? "c"
          : nibble_15 == 13 ? "d" : nibble_15 == 14 ? "e" : "f")
        doc: Bytes 6 and 7 of an IPv6 address as four hex digits.
      ipv6_group_4:
        value: >-
          (nibble_16 < 10 ? nibble_16.to_s : nibble_16 == 10 ? "a"
          : nibble_16 == 11 ? "b" : nibble_16 == 12 ? "c"
          : nibble_16 == 13 ? "d" : nibble_16 == 14 ? "e" : "f")
          + (nibble_17 < 10 ? nibble_17.to_s : nibble_17 == 10 ? "a"
          : nibble_17 == 11 ? "b" : nibble_17 == 12 ? "c"
          : nibble_17 == 13 ? "d" : nibble_17 == 14 ? "e" : "f")
          + (nibble_18 < 10 ? nibble_18.to_s : nibble_18 == 10 ? "a"
          : nibble_18 == 11 ? "b" : nibble_18 == 12 ? "c"
          : nibble_18 == 13 ? "d" : nibble_18 == 14 ? "e" : "f")
          + (nibble_19 < 10 ? nibble_19.to_s : nibble_19 == 10 ? "a"
          : nibble_19 == 11 ? "b" : nibble_19 == 12 ? "c"
          : nibble_19 == 13 ? "d" : nibble_19 == 14 ? "e" : "f")
        doc: Bytes 8 and 9 of an IPv6 address as four hex digits.
      ipv6_group_5:
        value: >-
          (nibble_20 < 10 ? nibble_20.to_s : nibble_20 == 10 ? "a"
          : nibble_20 == 11 ? "b" : nibble_20 == 12 ? "c"
          : nibble_20 == 13 ? "d" : nibble_20 == 14 ? "e" : "f")
          + (nibble_21 < 10 ? nibble_21.to_s : nibble_21 == 10 ? "a"
          : nibble_21 == 11 ? "b" : nibble_21 == 12 ? "c"
          : nibble_21 == 13 ? "d" : nibble_21 == 14 ? "e" : "f")
          + (nibble_22 < 10 ? nibble_22.to_s : nibble_22 == 10 ? "a"
          : nibble_22 == 11 ? "b" : nibble_22 == 12 ? "c"
          : nibble_22 == 13 ? "d" : nibble_22 == 14 ? "e" : "f")
          + (nibble_23 < 10 ? nibble_23.to_s : nibble_23 == 10 ? "a"
          : nibble_23 == 11 ? "b" : nibble_23 == 12 ? "c"
          : nibble_23 == 13 ? "d" : nibble_23 == 14 ? "e" : "f")
        doc: Bytes 10 and 11 of an IPv6 address as four hex digits.
      ipv6_group_6:
        value: >-
          (nibble_24 < 10 ? nibble_24.to_s : nibble_24 == 10 ? "a"
          : nibble_24 == 11 ? "b" : nibble_24 == 12 ? "c"
          : nibble_24 == 13 ? "d" : nibble_24 == 14 ? "e" : "f")
          + (nibble_25 < 10 ? nibble_25.to_s : nibble_25 == 10 ? "a"
          : nibble_25 == 11 ? "b" : nibble_25 == 12 ? "c"
          : nibble_25 == 13 ? "d" : nibble_25 == 14 ? "e" : "f")
          + (nibble_26 < 10 ? nibble_26.to_s : nibble_26 == 10 ? "a"
          : nibble_26 == 11 ? "b" : nibble_26 == 12 ? "c"
          : nibble_26 == 13 ? "d" : nibble_26 == 14 ? "e" : "f")
          + (nibble_27 < 10 ? nibble_27.to_s : nibble_27 == 10 ? "a"
          : nibble_27 == 11 ? "b" : nibble_27 == 12 ? "c"
          : nibble_27 == 13 ? "d" : nibble_27 == 14 ? "e" : "f")
        doc: Bytes 12 and 13 of an IPv6 address as four hex digits.
      ipv6_group_7:
        value: >-
          (nibble_28 < 10 ? nibble_28.to_s : nibble_28 == 10 ? "a"
          : nibble_28 == 11 ? "b" : nibble_28 == 12 ? "c"
          : nibble_28 == 13 ? "d" : nibble_28 == 14 ? "e" : "f")
          + (nibble_29 < 10 ? nibble_29.to_s : nibble_29 == 10 ? "a"
          : nibble_29 == 11 ? "b" : nibble_29 == 12 ? "c"
          : nibble_29 == 13 ? "d" : nibble_29 == 14 ? "e" : "f")
          + (nibble_30 < 10 ? nibble_30.to_s : nibble_30 == 10 ? "a"
          : nibble_30 == 11 ? "b" : nibble_30 == 12 ? "c"
          : nibble_30 == 13 ? "d" : nibble_30 == 14 ? "e" : "f")
          + (nibble_31 < 10 ? nibble_31.to_s : nibble_31 == 10 ? "a"
          : nibble_31 == 11 ? "b" : nibble_31 == 12 ? "c"
          : nibble_31 == 13 ? "d" : nibble_31 == 14 ? "e" : "f")
        doc: Bytes 14 and 15 of an IPv6 address as four hex digits.
      nibble_0:
        # Masked (`& 15`) because some targets (C++) index bytes as signed
        # chars.
        value: address[0] >> 4 & 15
        doc: High four bits of byte 0 of an IPv6 address.
      nibble_1:
        value: address[0] & 15
        doc: Low four bits of byte 0 of an IPv6 address.
      nibble_2:
        value: address[1] >> 4 & 15
        doc: High four bits of byte 1 of an IPv6 address.
      nibble_3:
        value: address[1] & 15
        doc: Low four bits of byte 1 of an IPv6 address.
      nibble_4:
        value: address[2] >> 4 & 15
        doc: High four bits of byte 2 of an IPv6 address.
      nibble_5:
        value: address[2] & 15
        doc: Low four bits of byte 2 of an IPv6 address.
      nibble_6:
        value: address[3] >> 4 & 15
        doc: High four bits of byte 3 of an IPv6 address.
      nibble_7:
        value: address[3] & 15
        doc: Low four bits of byte 3 of an IPv6 address.
      nibble_8:
        value: address[4] >> 4 & 15
        doc: High four bits of byte 4 of an IPv6 address.
      nibble_9:
        value: address[4] & 15
        doc: Low four bits of byte 4 of an IPv6 address.
      nibble_10:
        value: address[5] >> 4 & 15
        doc: High four bits of byte 5 of an IPv6 address.
      nibble_11:
        value: address[5] & 15
        doc: Low four bits of byte 5 of an IPv6 address.
      nibble_12:
        value: address[6] >> 4 & 15
        doc: High four bits of byte 6 of an IPv6 address.
      nibble_13:
        value: address[6] & 15
        doc: Low four bits of byte 6 of an IPv6 address.
      nibble_14:
        value: address[7] >> 4 & 15
        doc: High four bits of byte 7 of an IPv6 address.
      nibble_15:
        value: address[7] & 15
        doc: Low four bits of byte 7 of an IPv6 address.
      nibble_16:
        value: address[8] >> 4 & 15
        doc: High four bits of byte 8 of an IPv6 address.
      nibble_17:
        value: address[8] & 15
        doc: Low four bits of byte 8 of an IPv6 address.
      nibble_18:
        value: address[9] >> 4 & 15
        doc: High four bits of byte 9 of an IPv6 address.
      nibble_19:
        value: address[9] & 15
        doc: Low four bits of byte 9 of an IPv6 address.
      nibble_20:
        value: address[10] >> 4 & 15
        doc: High four bits of byte 10 of an IPv6 address.
      nibble_21:
        value: address[10] & 15
        doc: Low four bits of byte 10 of an IPv6 address.
      nibble_22:
        value: address[11] >> 4 & 15
        doc: High four bits of byte 11 of an IPv6 address.
      nibble_23:
        value: address[11] & 15
        doc: Low four bits of byte 11 of an IPv6 address.
      nibble_24:
        value: address[12] >> 4 & 15
        doc: High four bits of byte 12 of an IPv6 address.
      nibble_25:
        value: address[12] & 15
        doc: Low four bits of byte 12 of an IPv6 address.
      nibble_26:
        value: address[13] >> 4 & 15
        doc: High four bits of byte 13 of an IPv6 address.
      nibble_27:
        value: address[13] & 15
        doc: Low four bits of byte 13 of an IPv6 address.
      nibble_28:
        value: address[14] >> 4 & 15
        doc: High four bits of byte 14 of an IPv6 address.
      nibble_29:
        value: address[14] & 15
        doc: Low four bits of byte 14 of an IPv6 address.
      nibble_30:
        value: address[15] >> 4 & 15
        doc: High four bits of byte 15 of an IPv6 address.
      nibble_31:
        value: address[15] & 15
        doc: Low four bits of byte 15 of an IPv6 address.
enums:
  magic_code:
    0x0:
      id: zero_fill
      doc: |
        Zero-filled tail of a pre-allocated segment; the data of the segment
        ends here.
    -626843481:
      id: message_v1
      -orig-id: MESSAGE_MAGIC_CODE
      doc: |
        Message record, version 1 (1-byte topic length), all releases;
        0xDAA320A7 as an unsigned value.
    -626843477:
      id: message_v2
      -orig-id: MESSAGE_MAGIC_CODE_V2
      doc: |
        Message record, version 2 (2-byte topic length), 5.1.0+;
        0xDAA320AB as an unsigned value.
      -rmq-since: '5.1.0'
      -rmq-ref: "rocketmq-all-5.1.0:common/src/main/java/org/apache/rocketmq/\
        common/message/MessageDecoder.java"
    -875286124:
      id: blank
      -orig-id: BLANK_MAGIC_CODE
      doc: |
        End-of-segment record; the rest of the segment is padding.
        0xCBD43194 as an unsigned value.
  compression_type:
    0:
      id: unspecified
      doc: |
        No type bits, as written before 4.9.4; a compressed body is then zlib.
    1:
      id: lz4
      -orig-id: COMPRESSION_LZ4_TYPE
      doc: LZ4 frame format (lz4-java `LZ4FrameOutputStream`).
      -rmq-since: '4.9.4'
      -rmq-writer: client
      -rmq-ref: "rocketmq-all-4.9.4:common/src/main/java/org/apache/rocketmq/\
        common/compression/CompressionType.java"
    2:
      id: zstd
      -orig-id: COMPRESSION_ZSTD_TYPE
      doc: Zstandard frame (zstd-jni).
      -rmq-since: '4.9.4'
      -rmq-writer: client
      -rmq-ref: "rocketmq-all-4.9.4:common/src/main/java/org/apache/rocketmq/\
        common/compression/CompressionType.java"
    3:
      id: zlib
      -orig-id: COMPRESSION_ZLIB_TYPE
      doc: zlib stream (RFC 1950, `java.util.zip.Deflater`).
      -rmq-since: '4.9.4'
      -rmq-writer: client
      -rmq-ref: "rocketmq-all-4.9.4:common/src/main/java/org/apache/rocketmq/\
        common/compression/CompressionType.java"
  transaction_type:
    0:
      id: not_type
      -orig-id: TRANSACTION_NOT_TYPE
      doc: |
        Not a transaction record (also transaction half messages since 4.3.0).
    1:
      id: prepared
      -orig-id: TRANSACTION_PREPARED_TYPE
      doc: Prepared (half) message, as stored by 4.0.0 to 4.2.0 and by raw puts.
    2:
      id: commit
      -orig-id: TRANSACTION_COMMIT_TYPE
      doc: Commit record; `ofs_prepared_transaction` points at the half message.
    3:
      id: rollback
      -orig-id: TRANSACTION_ROLLBACK_TYPE
      doc: |
        Rollback record; `ofs_prepared_transaction` points at the half message.
