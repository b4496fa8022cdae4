"""The known Apache RocketMQ releases, oldest first, as listed in ``formats/releases.yaml``.

4.9.x and 5.x were released side by side; the order is by version number, and a
change first released in 4.9.4 is in every 5.x release too.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from . import yamltext

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True, order=True)
class Release:
    """One release: its number as a tuple (for ordering), its text and its git tag; the day of the
    tagged commit and, for a release newer than the source mirror, how it is known (neither is compared)."""

    key: tuple[int, int, int]
    version: str
    tag: str
    date: str = field(default="", compare=False)
    established: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.version


class UnknownReleaseError(ValueError):
    """A release number that is not in ``formats/releases.yaml``."""


@functools.lru_cache(maxsize=None)
def catalog() -> dict[str, Any]:
    """``formats/releases.yaml`` as a dict."""
    text = (resources.files("rmqformats.formats") / "releases.yaml").read_text(encoding="utf-8")
    return yamltext.load(text)


@functools.lru_cache(maxsize=None)
def _releases() -> tuple[Release, ...]:
    out = []
    for entry in catalog()["releases"]:
        m = _VERSION.fullmatch(str(entry["version"]))
        if not m:
            raise ValueError(f"formats/releases.yaml: bad version {entry['version']!r}")
        out.append(Release(tuple(int(x) for x in m.groups()), str(entry["version"]), entry["tag"],
                           str(entry.get("date") or ""), " ".join(str(entry.get("established") or "").split())))
    if out != sorted(out):
        raise ValueError("formats/releases.yaml: releases are not in version order")
    return tuple(out)



def all_releases() -> tuple[Release, ...]:
    """Every known release, oldest first."""
    return _releases()


RELEASES = _releases()


def release(text: str | Release) -> Release:
    """The release for ``'5.1.4'`` (or its tag ``'rocketmq-all-5.1.4'``); raises :class:`UnknownReleaseError`."""
    if isinstance(text, Release):
        return text
    m = _VERSION.search(str(text))
    if m:
        key = tuple(int(x) for x in m.groups())
        for r in RELEASES:
            if r.key == key:
                return r
    known = ", ".join(r.version for r in RELEASES)
    raise UnknownReleaseError(f"unknown RocketMQ release {text!r} (known: {known})")


#: A broker release as ``--release`` takes it: ``5.5.1``, ``5.5`` or the tag ``rocketmq-all-5.5.1``.
_BROKER_RELEASE = re.compile(r"(?:rocketmq-all-)?(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def broker_release(text: str) -> str:
    """``text`` as the broker release a rule set follows (``preflight --release``, ``check --release``): a
    version of one to three numbers, or a tag, at or after the oldest known release; a newer one than
    every known release is kept (its rules are extrapolated). Raises :class:`UnknownReleaseError`."""
    m = _BROKER_RELEASE.fullmatch(str(text).strip())
    if not m:
        raise UnknownReleaseError(f"{text!r} is no RocketMQ release: give a version such as "
                                  f"{RELEASES[-1].version} (known: {RELEASES[0].version} to {RELEASES[-1].version})")
    key = tuple(int(x or 0) for x in m.groups())
    if key < RELEASES[0].key:
        raise UnknownReleaseError(f"release {text} is older than every release rmqformats reads (the oldest: "
                                  f"{RELEASES[0].version})")
    return ".".join(map(str, key))


def at_or_after(text: str) -> Release:
    """The first known release numbered ``text`` or later (``4.5.0``, which has no tag, gives 4.5.1).

    A range bound in the specs ("first release with", "first release without") may name a version
    that was never tagged; the first tagged release at or after it is the same bound.
    """
    m = _VERSION.search(str(text))
    if not m:
        raise UnknownReleaseError(f"not a release number: {text!r}")
    key = tuple(int(x) for x in m.groups())
    for r in RELEASES:
        if r.key >= key:
            return r
    raise UnknownReleaseError(f"{text!r} is newer than every known release (newest: {RELEASES[-1]})")


def following(r: str | Release) -> Release | None:
    """The release after ``r``; ``None`` for the newest."""
    r = release(r)
    i = RELEASES.index(r)
    return RELEASES[i + 1] if i + 1 < len(RELEASES) else None


def oldest() -> Release:
    return RELEASES[0]


def newest() -> Release:
    return RELEASES[-1]


def cite(version: str | Release, path: str) -> str:
    """A citation ``<tag>:<path>`` of ``path`` at ``version``'s tag."""
    return f"{release(version).tag}:{path}"
