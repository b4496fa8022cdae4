"""DLedger commit logs (brokers with ``enableDLegerCommitLog``): entries, their messages, the entry index.

:func:`rmqformats.open_store` opens a DLedger store with a
:class:`DLedgerCommitLog`, which reads like a plain commit log.
"""

from .commitlog import BODY_OFFSET, DLedgerCommitLog, DLedgerEndReason, DLedgerEntry, DLedgerScan
from .detect import dledger_data_folder, is_dledger

__all__ = ["BODY_OFFSET", "DLedgerCommitLog", "DLedgerEndReason", "DLedgerEntry", "DLedgerScan",
           "dledger_data_folder", "is_dledger"]
