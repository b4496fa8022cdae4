"""The broker's own messages: what kind each message is, what its properties and body mean, what is pending.

* :func:`decode` / :func:`classify` (:mod:`.columns`): per batch of
  :meth:`CommitLog.batches <rmqformats.commitlog.CommitLog.batches>`, the
  kind of each message and the values of its system properties (real topic
  and queue, due time, transaction id and check count, origin of retry and
  dead-letter copies) as Arrow columns;
* :func:`with_system_columns` / :func:`system_batches` (:mod:`.batches`):
  the message batches of a walk with those columns appended, as
  ``--decode-system``, ``sql`` and the Spark option ``decodeSystem`` give them;
* :class:`SystemInfo`, :func:`decode_message` / :func:`decode_messages` /
  :func:`system_messages` (:mod:`.objects`): the same values for
  :class:`~rmqformats.message.Message` objects, as typed records
  (:meth:`Store.system_messages <rmqformats.store.Store.system_messages>`
  pairs each message of a scan with its record);
* :mod:`.bodies`: the bodies of transaction op messages, POP checkpoints and
  acks, and trace messages, as records;
* :func:`pending` (:mod:`.pending`): what was still in flight when the store
  was written.
"""

from __future__ import annotations

from .batches import SYSTEM_COLUMNS, SystemDecoding, system_batches, system_rows, system_schema, with_system_columns
from .columns import DECODE_COLUMNS, DECODED_SCHEMA, KINDS, classify, decode
from .names import parse_delay_levels
from .objects import SystemInfo, SystemScan, decode_message, decode_messages, system_messages

__all__ = ["DECODED_SCHEMA", "DECODE_COLUMNS", "KINDS", "SYSTEM_COLUMNS", "SystemDecoding", "SystemInfo", "SystemScan",
           "classify", "decode", "decode_message", "decode_messages", "parse_delay_levels", "system_batches",
           "system_messages", "system_rows", "system_schema", "with_system_columns"]
