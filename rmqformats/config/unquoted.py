"""Object names without quotes in a config file: the integer map keys fastjson 1 writes (``{0:123}``).

Brokers to 5.4.0 write config JSON with fastjson 1, whose ``Map<Integer, Long>`` keys (queue ids in
``consumerOffset.json``, delay levels in ``delayOffset.json``) have no quotes. fastjson2, which reads them
from 5.5.0 on, refused such names (apache/rocketmq #10284). :func:`unquoted_names` finds the first such name
of every config file of a folder, reading each file in bounded chunks, so that ``check`` and ``preflight``
can name the key and its byte.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

#: A name without quotes: an integer map key as fastjson 1 writes ``Map<Integer, Long>`` (``{0:123}``).
_UNQUOTED = re.compile(rb"[{,]\s*(-?\d+)\s*:")
#: The quoted name of the object that holds a match (``"topic@group":{``), searched before it.
_QUOTED_NAME = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:\s*\{[^{}]*$')
#: Bytes read at a time; a name is short, so 64 bytes carried over from one chunk to the next suffice.
_CHUNK = 1 << 20
_OVERLAP = 64


@dataclass(frozen=True)
class UnquotedName:
    """The first name without quotes in a config file: the file, the byte the name starts at, the name, and
    the quoted name of the object holding it (``topic@group`` in ``consumerOffset.json``) when found."""

    path: str
    offset: int
    key: str
    owner: str | None


def first_unquoted(path: str) -> UnquotedName | None:
    """The first unquoted object name in ``path`` (``None`` when every name is quoted); the holding object's
    name is given when it lies in the same chunk. Raises :class:`OSError` when the file cannot be read."""
    with open(path, "rb") as f:
        base, tail = 0, b""
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                return None
            buf = tail + chunk
            m = _UNQUOTED.search(buf)
            if m is not None:
                owner = _QUOTED_NAME.search(buf[:m.start(1)])
                return UnquotedName(path, base - len(tail) + m.start(1), m.group(1).decode("ascii"),
                                    owner.group(1).decode("utf-8", "replace") if owner else None)
            tail = buf[-_OVERLAP:]
            base += len(chunk)


def unquoted_names(folder: str) -> list[UnquotedName]:
    """The first unquoted name of every ``*.json`` and ``*.json.bak`` file in ``folder``, by file name; files
    that cannot be read are left to the config readers, which say why."""
    if not os.path.isdir(folder):
        return []
    out = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not (name.endswith(".json") or name.endswith(".json.bak")) or not os.path.isfile(path):
            continue
        try:
            found = first_unquoted(path)
        except OSError:
            continue
        if found is not None:
            out.append(found)
    return out
