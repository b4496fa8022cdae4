"""The ``rmqformats`` command: one module per command group, each adding its commands to the parser."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn

# Only what the signal handlers need is imported before they are installed: the command groups (and
# numpy, pyarrow, numba behind them) are imported by main(), so a signal during those imports is handled.
from .. import interrupts

if TYPE_CHECKING:
    import argparse


#: The commands that walk the commit log with ``--jobs`` worker processes (a test holds this to the parser).
WALKING = frozenset({"check", "dledger", "dump", "export", "inspect", "lag", "messages", "pending", "preflight",
                     "rebuild", "report", "sql"})
#: Modules the folds of a command's walk need in the workers, imported once by their fork server (a worker
#: would import them on its first range). pandas is not among them: the folds turn no column into numpy
#: through pyarrow's own conversions, which would import it (0.3-0.6 s, and tens of MiB in every worker).
_CHECK_FOLD = ("rmqformats.recovery.crosscheck",)
_FOLDS = {"inspect": ("rmqformats.cli.inspect",), "check": _CHECK_FOLD, "preflight": _CHECK_FOLD}


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse

    class Parser(argparse.ArgumentParser):
        """An argument parser whose usage errors are one line on stderr (exit status 2), pointing to ``--help``."""

        def error(self, message: str) -> NoReturn:
            self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
    return Parser


#: The command groups' modules, in the order of ``--help``.
_GROUPS = ("inspect", "messages", "queues", "config", "dump", "cut", "report", "layouts", "schema", "rebuild",
           "preflight", "pending", "sql")
#: The group module of each command: the parser of a run of one command imports that module alone (the
#: others load numpy, pyarrow and numba for nothing). A test holds this to what the groups add.
COMMANDS = {"inspect": "inspect", "messages": "messages", "export": "messages", "queue": "queues",
            "lookup": "queues", "check": "queues", "config": "config", "lag": "config", "dump": "dump", "cut": "cut",
            "report": "report", "tiered": "layouts", "dledger": "layouts", "compaction": "layouts",
            "schema-diff": "schema", "schema": "schema", "rebuild": "rebuild", "preflight": "preflight",
            "pending": "pending", "sql": "sql"}


def _groups(names: tuple[str, ...] = _GROUPS) -> tuple:
    import importlib
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)


def __getattr__(name: str):
    if name == "GROUPS":  # the command groups, in the order of ``--help``
        return _groups()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``rmqformats`` command; given one of its ``command`` names, a parser of
    that command's group alone (which parses a run of that command as the whole parser does)."""
    import argparse

    from .. import __version__
    from . import status
    p = _parser_class()(prog="rmqformats", description="Read Apache RocketMQ broker store files.",
                        epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for group in _groups((COMMANDS[command],) if command in COMMANDS else _GROUPS):
        group.add_commands(sub)
    for command in sub.choices.values():  # every command's tables fit the terminal unless --wide
        if "--wide" not in command._option_string_actions:
            command.add_argument("--wide", action="store_true",
                                 help="tables: every column and whole values (default: fitted to the terminal "
                                      "or COLUMNS; plain when the output is not a terminal)")
    return p


def run() -> NoReturn:
    """The ``rmqformats`` program (the console script and ``python -m rmqformats``): :func:`main` with the
    signal handlers installed first and kept until the process exits, so that no signal after the command
    decided its exit status turns into a traceback on the way out."""
    interrupts.install()
    code = main(_installed=True)
    interrupts.ignore()
    sys.exit(code)


def main(argv: list[str] | None = None, *, _installed: bool = False) -> int:
    """Run the command line; returns the exit status.

    Every failure ends here as one line on stderr and a status of the exit
    table: typed read errors, usage errors and write errors 2; SIGINT
    (Ctrl-C) 130 and SIGTERM 143 at any moment, whatever exception the
    signal left behind, with the outputs being written removed, or, for a
    signal that came after an output was renamed complete, that output
    named as complete; a reader that closed the pipe (``| head``) ends the
    command quietly.
    """
    restore = None if _installed else interrupts.install()
    try:
        return _guarded(argv)
    finally:
        if restore is not None:
            restore()


def _guarded(argv: list[str] | None) -> int:
    from .. import output
    output.take_aborted_note()  # notes of an earlier command in this process are not this one's
    output.take_committed_note()
    name = ["rmqformats"]
    try:
        code = _command(argv, name)
    except SystemExit:
        interrupts.hold()
        if interrupts.received() is None:
            raise
        return _signalled(name[0])
    except BaseException as exc:
        interrupts.hold()
        if interrupts.received() is not None or isinstance(exc, KeyboardInterrupt):
            return _signalled(name[0])
        return _failure(exc, name[0])
    interrupts.hold()
    if interrupts.received() is not None:  # its exception was swallowed, or it came after the work was done
        return _signalled(name[0])
    return code


def _command(argv: list[str] | None, name: list[str]) -> int:
    interrupts.unblock()
    from ..walk import jobs
    # The walk's workers come from a fork server that imports what this process is about to: started
    # first, it does that on another core meanwhile (when the words say the walk will use workers).
    words = sys.argv[1:] if argv is None else [str(a) for a in argv]
    command = next((w for w in words if not w.startswith("-")), None)
    if command in WALKING:
        jobs.prestart(words, preload=_FOLDS.get(command, ()))
    from . import tables
    parser = build_parser(command)
    args, extra = parser.parse_known_args(argv)
    name[0] = f"rmqformats {args.command}"
    if extra:
        return _fail(_unrecognized(build_parser(), args.command, extra))  # (every command: which have them)
    tables.set_wide(getattr(args, "wide", False))
    if hasattr(sys.stdout, "reconfigure"):
        # Text read from files can hold what no encoding writes (a lone surrogate from a \ud800
        # escape in a config file): written as that escape, which is also valid inside JSON strings.
        sys.stdout.reconfigure(errors="backslashreplace")
    code = args.func(args)
    sys.stdout.flush()  # here, not at exit, so that a closed pipe is handled below
    return code


def _signalled(name: str) -> int:
    """The one line of a command that a signal ended, and its exit status (130 or 143)."""
    import signal

    from .. import output
    output.abort_open()  # one made just before the signal, outside the block that would have removed it
    signum = interrupts.received() or signal.SIGINT
    line = f"{name}: {interrupts.NAMES[signum]}"
    committed = output.take_committed_note()
    if committed:
        line += f" after its output was renamed complete: {committed}"
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        _quiet_stdout()
    return _fail(line + _kept(), interrupts.STATUS[signum])


def _failure(exc: BaseException, name: str) -> int:
    """The one line of a failed command and its exit status; an exception no reader raises is re-raised."""
    from .. import output
    from ..errors import InvalidMessageIdError, RmqFormatError
    from . import status
    from .common import Unknown, UsageError
    if isinstance(exc, UsageError):  # as argparse ends its own usage errors
        return _fail(f"{name}: error: {exc}" + (f" (see {name} --help)" if exc.points_to_help else ""))
    if isinstance(exc, Unknown):
        return _fail(f"rmqformats: error: {exc}")
    if isinstance(exc, RmqFormatError):
        return _fail(f"rmqformats: error: {exc.whole()}")
    if isinstance(exc, InvalidMessageIdError):
        return _fail(f"rmqformats: error: {exc}")
    if isinstance(exc, output.OutputError):
        return _fail(f"rmqformats: error: {exc}" + _kept())
    if isinstance(exc, BrokenPipeError):
        # The reader went away (`| head`): point stdout at /dev/null so that the interpreter's last flush
        # raises nothing (as the Python documentation on SIGPIPE recommends), and end quietly.
        _quiet_stdout()
        return status.OK
    if isinstance(exc, OSError):  # a file that cannot be opened or read (permission, I/O error)
        where = f"{os.path.abspath(exc.filename)}: " if exc.filename else ""
        reason = exc.strerror or str(exc)
        return _fail(f"rmqformats: error: {where}{reason}" + _kept())
    raise exc


def _unrecognized(parser: argparse.ArgumentParser, command: str, extra: list[str]) -> str:
    """The error for arguments ``command`` does not take: the options named, and the commands that have them."""
    import argparse
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    options = [a.split("=", 1)[0] for a in extra if a.startswith("-") and len(a) > 1]
    if not options:
        return (f"rmqformats {command}: error: unexpected argument(s) {' '.join(extra)}; "
                f"`rmqformats {command} --help` shows what it takes")
    others = [f"; {o} is an option of {', '.join(names)}" for o in options
              for names in [sorted(n for n, c in commands.items() if o in c._option_string_actions)] if names]
    return (f"rmqformats {command}: error: {command} has no option {', '.join(options)} (given: {' '.join(extra)}"
            f"{''.join(others)}); `rmqformats {command} --help` lists its options")


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _fail(line: str, code: int = 2) -> int:
    sys.stderr.write(line + "\n")
    return code


def _kept() -> str:
    from .. import output
    note = output.take_aborted_note()
    return f"; {note}" if note else ""


if __name__ == "__main__":
    run()
