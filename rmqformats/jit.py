"""Options of the package's numba-compiled functions: keep their machine code where a cache can be written.

numba caches compiled code beside the module (``__pycache__``) or in the
user's cache folder (``~/.cache/numba``); with neither writable (a service
account without a home, a read-only container or package) a function marked
``cache=True`` fails at its first call with "cannot cache function … no
locator available". :func:`jit_options` checks those places the way numba
does and falls back to a private folder under the system's temporary folder
(``NUMBA_CACHE_DIR``), then to no cache at all: the code is compiled in every
process, which is slower to start and otherwise the same.

Importing the module also makes numba's compiler lock, in the main thread,
a stretch no SIGINT or SIGTERM interrupts (see :mod:`rmqformats.interrupts`):
compiling or loading a kernel hands LLVM objects over in steps that an
exception between them leaves freed twice when the interpreter exits.
"""

from __future__ import annotations

import functools
import os
import stat
import tempfile
import threading
from typing import Any

from numba.core import config, event
from numba.misc.appdirs import AppDirs

from . import interrupts


def _writable(path: str) -> bool:
    """Whether numba could keep cache files in ``path`` (made if missing), tested as numba tests it."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _private_folder(path: str) -> bool:
    """Whether ``path`` is a folder of this user that no one else can write (cached code is loaded from it)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
        return False
    return not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and _writable(path)


@functools.lru_cache(maxsize=None)
def _cache_for(folder: str) -> bool:
    """Whether functions of modules in ``folder`` can be cached (pointing numba at a temporary folder if needed)."""
    if config.CACHE_DIR and _writable(config.CACHE_DIR):
        return True
    if _writable(os.path.join(folder, "__pycache__")):
        return True
    if _writable(AppDirs(appname="numba", appauthor=False).user_cache_dir):
        return True
    uid = os.getuid() if hasattr(os, "getuid") else 0
    try:
        fallback = os.path.join(tempfile.gettempdir(), f"rmqformats-numba-cache-{uid}")
    except OSError:  # no usable temporary folder either
        return False
    if _private_folder(fallback):
        config.CACHE_DIR = fallback
        return True
    return False


def jit_options(module_file: str, **options: Any) -> dict[str, Any]:
    """``numba.njit`` keyword arguments for the functions of the module at ``module_file``: ``options`` and ``cache``."""
    return {**options, "cache": _cache_for(os.path.dirname(os.path.abspath(module_file)))}


class _NoSignalWhileCompiling(event.Listener):
    """Holds a signal back while the main thread holds numba's compiler lock (compiling, or loading from the
    cache): it acts when the lock is let go, with the kernel whole."""

    def __init__(self) -> None:
        self._depth = 0  # the main thread's holds begun since the listener was registered

    def on_start(self, ev: event.Event) -> None:
        if threading.current_thread() is threading.main_thread():
            self._depth += 1
            interrupts.defer()

    def on_end(self, ev: event.Event) -> None:
        if threading.current_thread() is threading.main_thread() and self._depth:
            self._depth -= 1
            interrupts.resume()


event.register("numba:compiler_lock", _NoSignalWhileCompiling())

__all__ = ["jit_options"]
