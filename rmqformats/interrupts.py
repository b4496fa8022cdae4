"""SIGINT and SIGTERM in the ``rmqformats`` command: noted when they arrive, acted on where it is safe.

The command installs :func:`install`'s handlers before it imports anything
heavy. A handler notes the first signal (it decides the exit status, 130 or
143) and raises :class:`Interrupted` in the main thread, so that work stops
at once and outputs being written are removed as for any error. Where an
interruption must not land, the handler only notes it:

- inside :func:`deferred` (an output's commit, from its last check to the
  rename, and the removal of a temporary output): :class:`Interrupted` is
  raised when the block ends, so an output is either renamed complete (and
  reported as such) or removed, never half-renamed;
- while the main thread compiles or loads a numba kernel (:func:`defer` and
  :func:`resume`, called by :mod:`rmqformats.jit` around numba's compiler
  lock): llvmlite hands objects between Python and LLVM in steps that an
  exception between them leaves owned twice, which the interpreter's exit
  then frees twice (an abort or a segmentation fault after the command's
  last line);
- after :func:`hold` (the command has decided what to report): the signal
  changes nothing more; the program then ignores both (:func:`ignore`)
  until it has exited.

Whatever exception a signal leaves behind (one raised inside a compiled
kernel or a half-finished import surfaces as some other exception, is
swallowed by a finalizer, or printed by an extension), :func:`received`
still says a signal came, nothing of it is printed, and
the command turns it into its one line and 130 or 143. :func:`check` is the
safe point that acts on a signal that was noted but swallowed: the commit of
an output calls it, so a signal that arrived while the output was written
never lets it be renamed.

A program using the API installs nothing: :func:`received` is then ``None``
and :func:`check` and :func:`deferred` do nothing.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: The signals the command handles, with the exit status each ends it with (128 + the signal number).
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
#: Their names, as the command's last line says them.
NAMES = {signal.SIGINT: "interrupted (SIGINT)", signal.SIGTERM: "terminated (SIGTERM)"}


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: unwinds like Ctrl-C, so outputs being written are removed."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _State:
    received: int | None = None  # the first signal: it decides the exit status
    shield = 0  # depth of deferred() blocks
    pending: int | None = None  # a signal that arrived inside deferred()
    held = False  # hold() was called
    installed = False


_state = _State()


def _handler(signum, frame) -> None:
    if _state.received is None:
        _state.received = signum
    if _state.held:
        return
    if _state.shield:
        _state.pending = signum
        return
    raise Interrupted(signum)


def _unraisable(hook):
    """``sys.unraisablehook`` that stays silent once a signal came: an exception a finalizer swallowed is the
    signal's, and the command says so in its one line."""
    def quiet(unraisable) -> None:
        if _state.received is not None or isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        hook(unraisable)
    return quiet


def _excepthook(hook):
    """``sys.excepthook`` that stays silent for a signal's exception: a compiled extension that prints what
    went wrong in its own call (``PyErr_Print``, as numpy's C API import in an extension's start-up does
    when it fails) prints nothing, as :func:`_unraisable` does for a finalizer's; the command's one line
    says it."""
    def quiet(exc_type, exc_value, exc_tb) -> None:
        if _state.received is not None or isinstance(exc_value, KeyboardInterrupt):
            return
        hook(exc_type, exc_value, exc_tb)
    return quiet


def install() -> Callable[[], None]:
    """Handle SIGINT and SIGTERM as the module docstring says; returns what puts the previous handlers back.

    In a thread other than the main one (where Python cannot install
    handlers) nothing is installed and the returned callable does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {}
    for signum in STATUS:
        try:
            previous[signum] = signal.signal(signum, _handler)
        except (ValueError, OSError):
            pass
    old_hook, old_excepthook = sys.unraisablehook, sys.excepthook
    sys.unraisablehook = _unraisable(old_hook)
    sys.excepthook = _excepthook(old_excepthook)
    _state.received = _state.pending = None
    _state.shield = 0
    _state.held = False
    _state.installed = True

    def restore() -> None:
        _state.installed = False
        _state.held = False
        _state.received = _state.pending = None  # the command is over: later writes in this process commit
        sys.unraisablehook, sys.excepthook = old_hook, old_excepthook
        for signum, handler in previous.items():
            try:
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
            except (ValueError, OSError):
                pass
    return restore



def unblock() -> None:
    """Lift a block of SIGINT and SIGTERM inherited from the parent (one that holds them until the program
    can handle them): a signal sent while the interpreter started is delivered now, to the handlers."""
    if _state.installed:
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, list(STATUS))
        except (AttributeError, OSError, ValueError):
            pass


def received() -> int | None:
    """The first SIGINT or SIGTERM that arrived since :func:`install`; ``None`` when none did."""
    return _state.received


def check() -> None:
    """Raise :class:`Interrupted` when a signal arrived (even one whose exception something swallowed)."""
    if _state.received is not None and not _state.held:
        raise Interrupted(_state.received)


def hold() -> None:
    """From now on a signal is only noted: the command has decided what it reports."""
    _state.held = True


def ignore() -> None:
    """Ignore SIGINT and SIGTERM from now on, through the interpreter's exit: the program has its exit status.
    (Python puts back the default action of every signal it handles while it shuts down, and a signal then
    would kill the process after its last line; an ignored one it leaves ignored.)"""
    hold()
    for signum in STATUS:
        try:
            signal.signal(signum, signal.SIG_IGN)
        except (ValueError, OSError):
            pass


def defer() -> None:
    """Start a stretch no signal interrupts (:func:`deferred` without the block): :func:`resume` ends it."""
    _state.shield += 1


def resume() -> None:
    """End the stretch :func:`defer` started: a signal that arrived in it raises :class:`Interrupted` now,
    unless an exception is already on its way out (the signal still decides the exit status)."""
    _state.shield -= 1
    if not _state.shield and _state.pending is not None and not _state.held:
        signum, _state.pending = _state.pending, None
        if sys.exc_info()[0] is None:
            raise Interrupted(signum)


@contextmanager
def deferred() -> Iterator[None]:
    """A block no signal interrupts: one arriving inside raises :class:`Interrupted` when it ends."""
    defer()
    try:
        yield
    finally:
        resume()


__all__ = ["Interrupted", "NAMES", "STATUS", "check", "defer", "deferred", "hold", "ignore", "install", "received",
           "resume", "unblock"]
