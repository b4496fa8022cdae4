"""The ``rmqformats`` command: one module per command group, each adding its commands to the parser."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import InvalidMessageIdError, RmqFormatError
from . import config, cut, dump, inspect, layouts, messages, queues, report, schema, status, tables
from .common import Unknown, UsageError

#: The command groups, in the order of ``--help``.
GROUPS = (inspect, messages, queues, config, dump, cut, report, layouts, schema)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``rmqformats`` command."""
    p = argparse.ArgumentParser(prog="rmqformats", description="Read Apache RocketMQ broker store files.",
                                epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_commands(sub)
    for command in sub.choices.values():  # every command's tables fit the terminal unless --wide
        if "--wide" not in command._option_string_actions:
            command.add_argument("--wide", action="store_true",
                                 help="tables: every column and whole values (default: fitted to the terminal "
                                      "or COLUMNS; plain when the output is not a terminal)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    tables.set_wide(getattr(args, "wide", False))
    if hasattr(sys.stdout, "reconfigure"):
        # Text read from files can hold what no encoding writes (a lone surrogate from a \ud800
        # escape in a config file): written as that escape, which is also valid inside JSON strings.
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        return args.func(args)
    except UsageError as exc:
        sys.stderr.write(f"rmqformats {args.command}: error: {exc}\n")
        return status.ERROR
    except Unknown as exc:
        sys.stderr.write(f"rmqformats: error: {exc}\n")
        return status.ERROR
    except RmqFormatError as exc:
        sys.stderr.write(f"rmqformats: error: {exc.whole()}\n")
        return status.ERROR
    except InvalidMessageIdError as exc:
        sys.stderr.write(f"rmqformats: error: {exc}\n")
        return status.ERROR
    except BrokenPipeError:
        return status.OK


if __name__ == "__main__":
    sys.exit(main())
