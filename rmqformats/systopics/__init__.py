"""The broker's own messages: what kind each message is, what its properties and body mean, what is pending.

* :func:`decode` / :func:`classify` (:mod:`.columns`): per batch of
  :meth:`CommitLog.batches <rmqformats.commitlog.CommitLog.batches>`, the
  kind of each message and the values of its system properties (real topic
  and queue, due time, transaction id and check count, origin of retry and
  dead-letter copies) as Arrow columns;
* :mod:`.bodies`: the bodies of transaction op messages, POP checkpoints and
  acks, and trace messages, as records;
* :func:`pending` (:mod:`.pending`): what was still in flight when the store
  was written.
"""

from __future__ import annotations

from .columns import DECODE_COLUMNS, DECODED_SCHEMA, KINDS, classify, decode
from .names import parse_delay_levels

__all__ = ["DECODED_SCHEMA", "DECODE_COLUMNS", "KINDS", "classify", "decode", "parse_delay_levels"]
