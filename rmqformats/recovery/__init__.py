"""Incident recovery: checking a store in both directions and explaining what the broker's recovery would do.

* :mod:`rmqformats.recovery.crosscheck`: from the commit log's side, the
  consume-queue units, index entries and timer-log units each message should
  have (by the broker's dispatch rules), and the units and entries that point
  at nothing; what a restart or an abnormal recovery would truncate or
  dispatch again, given the checkpoint.
* :mod:`rmqformats.recovery.report`: a self-contained HTML page about a store.
* :mod:`rmqformats.recovery.salvage`: every intact message of a damaged commit
  log, and the damaged ranges skipped.
"""

from .crosscheck import CrossCheck, Finding, Kind, Place, RecoveryPlan, Severity, cross_check, undispatched

__all__ = ["CrossCheck", "Finding", "Kind", "Place", "RecoveryPlan", "Severity", "cross_check", "undispatched"]
