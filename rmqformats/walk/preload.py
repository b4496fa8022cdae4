"""Imported first by the fork server the walk's worker processes are forked from: it loads the compiled
kernels once there, so that every worker starts with them instead of loading them itself.

It also makes the server's and its workers' uncaught exceptions silent. The reader already handles a
worker that fails (it walks that range itself, or the pool is dropped), and a worker forked while the
reader is being stopped (Ctrl-C) fails in its start-up because the reader's semaphores are already gone;
its traceback would reach the terminal after the command's one line.
"""

import sys

from .kernels import warm_up


def _quiet(*exc_info) -> None:
    """``sys.excepthook`` of the server and its workers: the reader reports what went wrong."""


sys.excepthook = _quiet
warm_up()
