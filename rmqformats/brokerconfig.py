"""The broker configuration a broker persists in ``<store>/config/broker.properties``.

``Configuration.persist`` writes every broker, store and network setting
as ``key=value`` lines (``MixAll.properties2String``) to the broker's
``brokerConfigPath``: ``~/store/config/broker.properties`` unless the broker
was started with ``-c FILE``, so in a store whose root is the default
``~/store`` it is ``config/broker.properties`` (and admin commands such as
``updateBrokerConfig`` or ``switchTimerEngine`` persist their changes
there). The keys read here tell how the 5.4+ RocksDB parts of a store were
configured.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import RmqFormatError

#: Keys whose value says where a 5.4+ broker keeps what: ``MessageStoreConfig`` names.
ROCKSDB_KEYS = ("storeType", "timerRocksDBEnable", "transRocksDBEnable", "indexRocksDBEnable",
                "useSeparateStorePathForRocksdbCQ", "rocksdbCQDoubleWriteEnable", "timerUseRocksDB")
#: ``timerUseRocksDB``: the key ``switchTimerEngine`` persisted before apache/rocketmq#10086 was fixed
#: (PR #10085, 2026-02); the broker reads ``timerRocksDBEnable``, so the switch did not survive a restart.
STALE_TIMER_KEY = "timerUseRocksDB"


class BrokerConfigError(RmqFormatError):
    """``broker.properties`` that cannot be read."""


@dataclass(frozen=True)
class BrokerProperties:
    """The settings of a ``broker.properties`` file, as text."""

    path: str
    values: dict[str, str]

    def flag(self, key: str) -> bool | None:
        """A boolean setting (``None`` when absent), as ``Boolean.parseBoolean`` reads it."""
        value = self.values.get(key)
        return None if value is None else value.strip().lower() == "true"

    def timer_engine(self) -> str:
        """``rocksdb`` (``timerRocksDBEnable=true``) or ``file`` (the time wheel, the default)."""
        return "rocksdb" if self.flag("timerRocksDBEnable") else "file"

    def notes(self) -> list[str]:
        """What a reader of the store should know from these settings."""
        out = []
        stale = self.flag(STALE_TIMER_KEY)
        if stale is not None and self.flag("timerRocksDBEnable") != stale:
            engine = "RocksDB timeline" if self.timer_engine() == "rocksdb" else "file time wheel"
            out.append(f"{STALE_TIMER_KEY}={self.values[STALE_TIMER_KEY]} was written by switchTimerEngine before "
                       f"apache/rocketmq#10086 was fixed; the broker reads timerRocksDBEnable "
                       f"({self.values.get('timerRocksDBEnable', 'absent: false')}), so after a restart the "
                       f"timer engine is the {engine}")
        return out


def _unescape(text: str) -> str:
    """``java.util.Properties`` escapes: ``\\t``, ``\\n``, ``\\r``, ``\\f``, ``\\uXXXX``, and ``\\x`` as ``x``."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "u" and i + 6 <= len(text):
                try:
                    out.append(chr(int(text[i + 2:i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def read_broker_properties(path: str | os.PathLike[str], *, max_bytes: int = 1 << 20) -> BrokerProperties:
    """Read ``path`` as ``java.util.Properties.load`` does (ISO-8859-1, logical lines, ``=``/``:``/space).

    A file larger than ``max_bytes`` (a broker writes a few KiB) raises
    :class:`BrokerConfigError`, as does one that cannot be read.
    """
    path = os.path.abspath(os.fspath(path))
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            raise BrokerConfigError(path, None, f"{size} bytes: larger than a broker's configuration ({max_bytes})")
        with open(path, "rb") as f:
            text = f.read().decode("latin-1")
    except OSError as exc:
        raise BrokerConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
    values: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if not pending and (not line or line[0] in "#!"):
            continue
        # A line ending in an odd number of backslashes continues on the next one.
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        line, pending = pending + line, ""
        key_end = len(line)
        i = 0
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] in "=: \t\f":
                key_end = i
                break
            i += 1
        rest = line[key_end:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        values[_unescape(line[:key_end])] = _unescape(rest)
    if pending:
        values.setdefault(_unescape(pending), "")
    return BrokerProperties(path, values)
