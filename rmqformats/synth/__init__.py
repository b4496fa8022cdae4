"""Store builders: commit logs, queues, index and timer files written through the construct schemas.

Tests and benchmarks build the stores the real vectors lack with these. ``rmqformats.synth`` itself
holds the commit-log and consume-queue builders; ``.index``, ``.queues`` and ``.timer`` the others.
"""

from .commitlog import (CQ_PLACEHOLDER, V1_MAX_TOPIC, MessageSpec, encode_batch, encode_blank, encode_cq_units, encode_message,
                        lite_message, priority_message, write_commitlog, write_consume_queue)

__all__ = ["CQ_PLACEHOLDER", "V1_MAX_TOPIC", "MessageSpec", "encode_batch", "encode_blank", "encode_cq_units", "encode_message",
           "lite_message", "priority_message", "write_commitlog", "write_consume_queue"]
