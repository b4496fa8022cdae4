"""Memory of the running process, and a sink counting a command's output, as the benchmarks report them.

``VmHWM`` is the process's own peak since ``exec``. ``ru_maxrss`` alone
would start at the parent's size on Linux (it is inherited through fork
and exec), so it is only the fallback where /proc is missing.
"""

from __future__ import annotations

import resource
import sys


def _status_kib(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status``, or ``None`` where there is none."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def max_rss_kib() -> int:
    """``ru_maxrss`` of this process in KiB (the platform reports bytes on macOS)."""
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return value // 1024 if sys.platform == "darwin" else value


def peak_rss_kib() -> int:
    """Peak RSS of this process since ``exec`` (``VmHWM``); ``ru_maxrss`` where /proc is missing."""
    peak = _status_kib("VmHWM")
    return max_rss_kib() if peak is None else peak


def rss_kib() -> int:
    """Current RSS of this process (``VmRSS``), 0 where /proc is missing."""
    return _status_kib("VmRSS") or 0


class LineCounter:
    """A text sink that counts what is written to it (lines and characters) and keeps nothing: a command's
    output measured without holding it."""

    def __init__(self) -> None:
        self.lines = self.chars = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        self.chars += len(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
