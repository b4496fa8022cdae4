meta:
  id: rocketmq_message_batch
  title: Apache RocketMQ message batch
  application: Apache RocketMQ clients and broker (4.1.0 and later)
  tags:
    - database
  license: Apache-2.0
  ks-version: '0.11'
  endian: be
doc: |
  Messages encoded one after the other by `MessageDecoder.encodeMessage`:
  the body a producer sends for a batch, and the body of an inner-batch
  commit-log record (SYSFLAG `INNER_BATCH_FLAG | NEED_UNWRAP_FLAG`, 5.0.0+).

  For an ordinary topic the broker splits a batch into one commit-log record
  per message. For a topic whose attribute `queue.type` is `BatchCQ` it
  keeps the whole batch as the body of one record, with properties
  `INNER_NUM` (the number of messages) and `INNER_BASE` (the queue offset of
  the first), and consumers unwrap it. The items carry no topic, queue or
  host: those are the record's. Decoders (`MessageDecoder.decodeMessage`)
  read the fields in order and do not check the item size, magic or CRC,
  which clients write as 0.
doc-ref:
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
  - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java
-rmq-since: '4.1.0'
-rmq-ref: "rocketmq-all-4.1.0-incubating:common/src/main/java/org/apache/\
  rocketmq/common/message/MessageDecoder.java"
seq:
  - id: messages
    type: item
    repeat: eos
    doc: The messages of the batch, in order.
types:
  item:
    doc: One message of a batch, as `MessageDecoder.encodeMessage` writes it.
    doc-ref: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
    -webide-representation: >-
      {len_item:dec} bytes, flag {flag:dec}, {len_body:dec}-byte body,
      properties {properties}
    seq:
      - id: len_item
        -orig-id: TOTALSIZE
        type: s4
        doc: |
          Size of the item in bytes, this field included; decoders do not use
          it.
      - id: magic
        -orig-id: MAGICCODE
        type: s4
        doc: Written as 0 by clients; not checked.
      - id: body_crc
        -orig-id: BODYCRC
        type: s4
        doc: Written as 0 by clients; not checked.
      - id: flag
        -orig-id: FLAG
        type: s4
        doc: Opaque integer set by the producer (`Message.flag`).
      - id: len_body
        -orig-id: BODYLEN
        type: s4
        valid:
          min: 0
        doc: Length of the body.
      - id: body
        -orig-id: BODY
        size: len_body
        doc: The message body.
      - id: len_properties
        -orig-id: PROPERTIESLENGTH
        type: s2
        valid:
          min: 0
        doc: Byte length of the properties.
      - id: properties
        -orig-id: PROPERTIES
        size: len_properties
        type: str
        encoding: UTF-8
        doc: Raw properties, `name U+0001 value` pairs separated by U+0002.
    instances:
      len_item_computed:
        value: 22 + len_body + len_properties.as<s4>
        doc: |
          The item size the fields add up to; the encoder writes it as
          `len_item`.
