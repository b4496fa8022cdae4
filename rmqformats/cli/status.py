"""The exit statuses of every ``rmqformats`` command."""

from __future__ import annotations

#: The command did what was asked and the data it read ended cleanly.
OK = 0
#: The command ran and reports findings: ``check`` found problems, ``lag`` flagged a queue,
#: ``schema-diff`` found incompatible changes.
FINDINGS = 1
#: A usage error (a bad option, conflicting options, an invalid value), a typed read error, or a write
#: error (the output cannot be written: read-only, missing folder, full disk, busy, exists).
ERROR = 2
#: ``preflight``: the broker starts on the store but truncates, re-dispatches or changes files.
PREFLIGHT_CHANGES = FINDINGS
#: ``preflight``: the broker refuses to start on the store.
PREFLIGHT_REFUSES = ERROR
#: The data read ended at damage rather than at a clean end (or, with ``--salvage``, damaged
#: ranges were skipped): what was printed is every message before it (or every intact message).
DAMAGED = 3
#: Interrupted by Ctrl-C (SIGINT; 128 + 2, as shells report it): outputs being written were removed.
INTERRUPTED = 130
#: Ended by SIGTERM (128 + 15): outputs being written were removed.
TERMINATED = 143

#: The table shown in ``--help`` and on the site (docs/exit-statuses.md).
TABLE = (
    (OK, "success; the data read ended cleanly"),
    (FINDINGS, "findings: check found problems, lag flagged queues; preflight: the broker starts but "
               "truncates, re-dispatches or changes files (each listed)"),
    (ERROR, "usage error, a typed error reading a file (FILE @ 0xOFFSET: reason, on stderr), "
            "or an output that cannot be written (path and reason); preflight: the broker refuses to start "
            "(each reason with the Java method)"),
    (DAMAGED, "the data ended at damage, or --salvage skipped damaged ranges; rebuild: intact messages past "
              "the data end left out (counted, with the export that keeps them), or empty (0-byte) head segments left "
              "out (the messages the queues referenced there counted), or commit-log bytes no segment file holds (the new "
              "store keeps the hole); `rebuild --salvage` ends 0, its new store "
              "holding every message read past the damage"),
    (INTERRUPTED, "interrupted by Ctrl-C, SIGINT (143: by SIGTERM), at any moment; an output being written "
                  "is removed, never left half-done; one renamed complete before the signal is kept and named "
                  "complete"),
)


def epilog() -> str:
    """The exit-status table as help text."""
    return "exit statuses:\n" + "\n".join(f"  {code}  {text}" for code, text in TABLE)
