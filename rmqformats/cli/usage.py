"""The command line's own errors, below every command module: what the user asked that cannot be done (exit 2)."""

from __future__ import annotations


class UsageError(Exception):
    """Options that cannot go together, or a value the command cannot take: exit status 2 (ERROR)."""

    #: Whether the line ends pointing to the command's ``--help`` (its options are what is wrong).
    points_to_help = True


class QueryError(UsageError):
    """A query the engine does not take (its line names the place in the query, not the options)."""

    points_to_help = False


class Unknown(Exception):
    """A topic, queue or group named on the command line that the store does not have: exit status 2."""
