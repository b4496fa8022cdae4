# Generated from formats/rocketmq_message_batch.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ message batch: construct schema generated from formats/rocketmq_message_batch.ksy.

``rocketmq_message_batch`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "item",
    "rocketmq_message_batch",
]


# One message of a batch, as `MessageDecoder.encodeMessage` writes it.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
item = ka.Struct(
    # Size of the item in bytes, this field included; decoders do not use
    # it.
    "len_item" / c.Int32sb,
    # Written as 0 by clients; not checked.
    "magic" / c.Int32sb,
    # Written as 0 by clients; not checked.
    "body_crc" / c.Int32sb,
    # Opaque integer set by the producer (`Message.flag`).
    "flag" / c.Int32sb,
    # Length of the body.
    "len_body" / ka.Valid(c.Int32sb, ("min 0", lambda value, this: value >= 0)),
    # The message body.
    "body" / c.Bytes(lambda this: this["len_body"]),
    # Byte length of the properties.
    "len_properties" / ka.Valid(c.Int16sb, ("min 0", lambda value, this: value >= 0)),
    # The item size the fields add up to; the encoder writes it as
    # `len_item`.
    "len_item_computed" / c.Computed(lambda this: 22 + this["len_body"] + this["len_properties"]),
    # Raw properties, `name U+0001 value` pairs separated by U+0002.
    "properties" / c.StringEncoded(c.Bytes(lambda this: this["len_properties"]), "UTF-8"),
)


# Messages encoded one after the other by `MessageDecoder.encodeMessage`:
# the body a producer sends for a batch, and the body of an inner-batch
# commit-log record (SYSFLAG `INNER_BATCH_FLAG | NEED_UNWRAP_FLAG`, 5.0.0+).
#
# For an ordinary topic the broker splits a batch into one commit-log record
# per message. For a topic whose attribute `queue.type` is `BatchCQ` it
# keeps the whole batch as the body of one record, with properties
# `INNER_NUM` (the number of messages) and `INNER_BASE` (the queue offset of
# the first), and consumers unwrap it. The items carry no topic, queue or
# host: those are the record's. Decoders (`MessageDecoder.decodeMessage`)
# read the fields in order and do not check the item size, magic or CRC,
# which clients write as 0.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java
rocketmq_message_batch = ka.Struct(
    # The messages of the batch, in order.
    "messages" / ka.RepeatEos(item),
)
