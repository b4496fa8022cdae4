"""The ``rmqformats`` command: one module per command group, each adding its commands to the parser."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import InvalidMessageIdError, RmqFormatError
from . import config, cut, inspect, messages, queues, status

#: The command groups, in the order of ``--help``.
GROUPS = (inspect, messages, queues, config, cut)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``rmqformats`` command."""
    p = argparse.ArgumentParser(prog="rmqformats", description="Read Apache RocketMQ broker store files.",
                                epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (RmqFormatError, InvalidMessageIdError) as exc:
        sys.stderr.write(f"rmqformats: error: {exc}\n")
        return status.ERROR
    except BrokenPipeError:
        return status.OK


if __name__ == "__main__":
    sys.exit(main())
