"""Topic names, property names and tags of the broker's own messages.

The names that other modules already declare (the schedule topic, the
``DELAY``, ``UNIQ_KEY``, ``TAGS`` and ``__LITE_TOPIC`` properties, the LMQ
dispatch properties, the default ``messageDelayLevel``) are imported from
there; the SYSFLAG transaction bits come from the commit-log spec in
``formats/``. The rest are
the RocketMQ constants, checked at ``rocketmq-all-5.3.3``:

* ``TopicValidator``: ``RMQ_SYS_TRANS_HALF_TOPIC``, ``RMQ_SYS_TRANS_OP_HALF_TOPIC``,
  ``RMQ_SYS_TRACE_TOPIC``, the ``rmq_sys_`` prefix;
* ``TimerMessageStore.TIMER_TOPIC``: ``rmq_sys_wheel_timer`` (5.0.0+);
* ``MixAll``: ``%RETRY%``, ``%DLQ%``, ``%LMQ%``, ``CID_RMQ_SYS_TRANS``;
* ``PopAckConstants``: the revive topic prefix ``rmq_sys_REVIVE_LOG_`` and the
  tags ``ck``, ``ack``, ``bAck`` (5.0.0+);
* ``TraceConstants``: ``rmq_sys_TRACE_DATA_`` (a trace topic per region);
* ``TransactionalMessageUtil``: the op tag ``d`` and the op body separator ``,``;
* ``MessageConst``: the property names below (``DLQ_ORIGIN_*`` since 5.1.0,
  ``TIMER_*`` since 5.0.0). ``__LITE_TOPIC`` (5.5.0) comes from the commit-log
  spec in ``formats/``, as the other properties decoded into columns do.
"""

from __future__ import annotations

from .. import properties as props
from ..consumequeue import DEFAULT_DELAY_LEVELS_MS, INNER_MULTI_DISPATCH, SCHEDULE_TOPIC
from ..generated.layouts import rocketmq_commitlog as _layout

__all__ = ["DEFAULT_DELAY_LEVELS_MS", "INNER_MULTI_DISPATCH", "SCHEDULE_TOPIC"]

# -- topics --------------------------------------------------------------------------------
TIMER_TOPIC = "rmq_sys_wheel_timer"
TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
#: 5.4+: the half and op topics of a broker keeping transactions in RocksDB (``transRocksDBEnable``).
ROCKSDB_TRANS_HALF_TOPIC = "RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC"
ROCKSDB_TRANS_OP_HALF_TOPIC = "RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC"
TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
TRACE_TOPIC_PREFIX = "rmq_sys_TRACE_DATA_"
REVIVE_TOPIC_PREFIX = "rmq_sys_REVIVE_LOG_"
RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"
LMQ_PREFIX = "%LMQ%"
#: 5.5+ ``LiteUtil``: a lite topic's queue is the LMQ ``%LMQ%$<parent topic>$<lite topic>``.
LITE_SEPARATOR = "$"
LITE_QUEUE_PREFIX = LMQ_PREFIX + LITE_SEPARATOR
#: ``MixAll.CID_SYS_RMQ_TRANS``: the group whose offset in the half topic is the check's progress.
TRANS_CHECK_GROUP = "CID_RMQ_SYS_TRANS"

# -- tags ----------------------------------------------------------------------------------
POP_CK_TAG = "ck"
POP_ACK_TAG = "ack"
POP_BATCH_ACK_TAG = "bAck"
TRANS_OP_REMOVE_TAG = "d"
TRANS_OP_SEPARATOR = ","

# -- properties (MessageConst) -------------------------------------------------------------
TAGS = props.TAGS
UNIQ_KEY = props.UNIQ_KEY
DELAY = props.DELAY
REAL_TOPIC = "REAL_TOPIC"
REAL_QUEUE_ID = "REAL_QID"
TRANSACTION_PREPARED = "TRAN_MSG"
PRODUCER_GROUP = "PGROUP"
TRANSACTION_ID = "__transactionId__"
TRANSACTION_CHECK_TIMES = "TRANSACTION_CHECK_TIMES"
TRANSACTION_PREPARED_QUEUE_OFFSET = "TRAN_PREPARED_QUEUE_OFFSET"
RETRY_TOPIC = "RETRY_TOPIC"
ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
RECONSUME_TIME = "RECONSUME_TIME"
DLQ_ORIGIN_TOPIC = "DLQ_ORIGIN_TOPIC"
DLQ_ORIGIN_MESSAGE_ID = "DLQ_ORIGIN_MESSAGE_ID"
TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
TIMER_DELAY_SEC = "TIMER_DELAY_SEC"
TIMER_DELAY_MS = "TIMER_DELAY_MS"
TIMER_OUT_MS = "TIMER_OUT_MS"
TIMER_DEL_UNIQKEY = "TIMER_DEL_UNIQKEY"
TIMER_ROLL_TIMES = "TIMER_ROLL_TIMES"
POP_CK = "POP_CK"
LITE_TOPIC = props.LITE_TOPIC

# -- SYSFLAG transaction bits (formats/rocketmq_commitlog.ksy) -----------------------------
TRANSACTION_MASK, TRANSACTION_SHIFT = _layout.SYS_FLAG_BITS["transaction_type"]
#: SYSFLAG transaction type code → name (``not_type``, ``prepared``, ``commit``, ``rollback``).
TRANSACTION_TYPES = {v: k for k, v in _layout.TRANSACTION_TYPE.items()}


def parse_delay_levels(text: str) -> tuple[int, ...]:
    """The delay of each level (1-based) in ms from a ``messageDelayLevel`` value, as
    ``ScheduleMessageService.parseDelayLevel`` reads it (units ``s``, ``m``, ``h``, ``d``)."""
    units = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    out = []
    for word in text.split():
        unit = units.get(word[-1:])
        if unit is None or not word[:-1].isdigit():
            raise ValueError(f"messageDelayLevel {text!r}: {word!r} is not a number with a unit s, m, h or d")
        out.append(int(word[:-1]) * unit)
    if not out:
        raise ValueError(f"messageDelayLevel {text!r} names no level")
    return tuple(out)


def lite_queue(parent_topic: str, lite_topic: str) -> str:
    """The LMQ a message of ``parent_topic`` with the ``__LITE_TOPIC`` ``lite_topic`` is dispatched to
    (``LiteUtil.toLmqName``)."""
    return f"{LITE_QUEUE_PREFIX}{parent_topic}{LITE_SEPARATOR}{lite_topic}"
