# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RocketmqMessageBatch(KaitaiStruct):
    """Messages encoded one after the other by `MessageDecoder.encodeMessage`:
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
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
    
    
    .. seealso::
       Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RocketmqMessageBatch, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.messages = []
        i = 0
        while not self._io.is_eof():
            self.messages.append(RocketmqMessageBatch.Item(self._io, self, self._root))
            i += 1



    def _fetch_instances(self):
        pass
        for i in range(len(self.messages)):
            pass
            self.messages[i]._fetch_instances()


    class Item(KaitaiStruct):
        """One message of a batch, as `MessageDecoder.encodeMessage` writes it.
        
        .. seealso::
           Source - https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(RocketmqMessageBatch.Item, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_item = self._io.read_s4be()
            self.magic = self._io.read_s4be()
            self.body_crc = self._io.read_s4be()
            self.flag = self._io.read_s4be()
            self.len_body = self._io.read_s4be()
            if not self.len_body >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.len_body, self._io, u"/types/item/seq/4")
            self.body = self._io.read_bytes(self.len_body)
            self.len_properties = self._io.read_s2be()
            if not self.len_properties >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.len_properties, self._io, u"/types/item/seq/6")
            self.properties = (self._io.read_bytes(self.len_properties)).decode(u"UTF-8")


        def _fetch_instances(self):
            pass

        @property
        def len_item_computed(self):
            """The item size the fields add up to; the encoder writes it as
            `len_item`.
            """
            if hasattr(self, '_m_len_item_computed'):
                return self._m_len_item_computed

            self._m_len_item_computed = (22 + self.len_body) + self.len_properties
            return getattr(self, '_m_len_item_computed', None)



