"""The ``rmqformats`` command: one module per command group, each adding its commands to the parser."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from .. import __version__, output
from ..errors import InvalidMessageIdError, RmqFormatError
from . import (config, cut, dump, inspect, layouts, messages, preflight, queues, rebuild, report, schema, sql,
               status, tables)
from .common import Unknown, UsageError

#: The command groups, in the order of ``--help``.
GROUPS = (inspect, messages, queues, config, dump, cut, report, layouts, schema, rebuild, preflight, sql)


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


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C, so outputs being written are removed, never left half-done."""


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Every failure ends here as one line on stderr and a status of the exit
    table: typed read errors, usage errors and write errors 2, Ctrl-C 130
    (SIGTERM 143), with the outputs being written removed; a reader that
    closed the pipe (``| head``) ends the command quietly.
    """
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        return _fail(_unrecognized(parser, args.command, extra))
    tables.set_wide(getattr(args, "wide", False))
    if hasattr(sys.stdout, "reconfigure"):
        # Text read from files can hold what no encoding writes (a lone surrogate from a \ud800
        # escape in a config file): written as that escape, which is also valid inside JSON strings.
        sys.stdout.reconfigure(errors="backslashreplace")
    previous = _install_sigterm()
    name = f"rmqformats {args.command}"
    try:
        code = args.func(args)
        sys.stdout.flush()  # here, not at exit, so that a closed pipe is handled below
        return code
    except UsageError as exc:
        return _fail(f"{name}: error: {exc}")
    except Unknown as exc:
        return _fail(f"rmqformats: error: {exc}")
    except RmqFormatError as exc:
        return _fail(f"rmqformats: error: {exc.whole()}")
    except InvalidMessageIdError as exc:
        return _fail(f"rmqformats: error: {exc}")
    except output.OutputError as exc:
        return _fail(f"rmqformats: error: {exc}" + _kept())
    except BrokenPipeError:
        # The reader went away (`| head`): point stdout at /dev/null so that the interpreter's last flush
        # raises nothing (as the Python documentation on SIGPIPE recommends), and end quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return status.OK
    except KeyboardInterrupt:
        return _fail(f"{name}: interrupted" + _kept(), status.INTERRUPTED)
    except Terminated:
        return _fail(f"{name}: terminated (SIGTERM)" + _kept(), status.TERMINATED)
    except OSError as exc:  # a file that cannot be opened or read (permission, I/O error)
        where = f"{os.path.abspath(exc.filename)}: " if exc.filename else ""
        reason = exc.strerror or str(exc)
        return _fail(f"rmqformats: error: {where}{reason}" + _kept())
    finally:
        _restore_sigterm(previous)


def _unrecognized(parser: argparse.ArgumentParser, command: str, extra: list[str]) -> str:
    """The error for arguments ``command`` does not take: the options named, and the commands that have them."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    options = [a.split("=", 1)[0] for a in extra if a.startswith("-") and len(a) > 1]
    if not options:
        return (f"rmqformats {command}: error: unexpected argument(s) {' '.join(extra)}; "
                f"`rmqformats {command} --help` shows what it takes")
    others = [f"; {o} is an option of {', '.join(names)}" for o in options
              for names in [sorted(n for n, c in commands.items() if o in c._option_string_actions)] if names]
    return (f"rmqformats {command}: error: {command} has no option {', '.join(options)} (given: {' '.join(extra)}"
            f"{''.join(others)}); `rmqformats {command} --help` lists its options")


def _fail(line: str, code: int = status.ERROR) -> int:
    sys.stderr.write(line + "\n")
    return code


def _kept() -> str:
    note = output.take_aborted_note()
    return f"; {note}" if note else ""


def _install_sigterm():
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        return None


def _restore_sigterm(previous) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
