"""The command line's own errors, below every command module: what the user asked that cannot be done (exit 2)."""

from __future__ import annotations


class UsageError(Exception):
    """Options that cannot go together, or a value the command cannot take: exit status 2 (ERROR)."""


class Unknown(Exception):
    """A topic, queue or group named on the command line that the store does not have: exit status 2."""
