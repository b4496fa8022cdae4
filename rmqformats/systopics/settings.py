"""The broker settings that decide how its own messages are decoded: its delay levels.

A broker persists every setting to its ``brokerConfigPath``
(``Configuration.persist``), ``config/broker.properties`` under a store
root in the default layout (see :mod:`rmqformats.brokerconfig`); its
``messageDelayLevel`` gives the delay of each level of a scheduled message
(``ScheduleMessageService.parseDelayLevel``). A file given by the caller (a
broker ``.properties`` or a JSON store config, ``--config``) wins over the
store's own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..preflight.release_rules import StoreConfigError, read_settings
from .names import DEFAULT_DELAY_LEVELS_MS, parse_delay_levels

#: Where a broker persists its settings under the store root (the default ``brokerConfigPath``).
BROKER_PROPERTIES = os.path.join("config", "broker.properties")
#: The setting read.
KEY = "messageDelayLevel"


class DelayLevelError(StoreConfigError):
    """A ``messageDelayLevel`` that is not a list of numbers with a unit."""


@dataclass(frozen=True)
class DelayLevels:
    """The delay of each level in ms and where it was read (``None``: the broker's default)."""

    levels_ms: tuple[int, ...]
    source: str | None


def delay_levels(*, config: str | os.PathLike[str] | None = None, root: str | os.PathLike[str] | None = None
                 ) -> DelayLevels:
    """``messageDelayLevel`` from ``config`` when given, else from ``ROOT/config/broker.properties`` when
    ``root`` (a store root) holds one, else the broker's default.

    A file that cannot be read raises
    :class:`~rmqformats.preflight.release_rules.StoreConfigError`, one whose
    value is not a list of numbers with a unit :class:`DelayLevelError`, each
    naming the file.
    """
    if config is not None:
        path = os.path.abspath(os.fspath(config))
    elif root is not None and os.path.isfile(os.path.join(os.fspath(root), BROKER_PROPERTIES)):
        path = os.path.abspath(os.path.join(os.fspath(root), BROKER_PROPERTIES))
    else:
        return DelayLevels(DEFAULT_DELAY_LEVELS_MS, None)
    text = read_settings(path).get(KEY)
    if not text:
        return DelayLevels(DEFAULT_DELAY_LEVELS_MS, None)
    try:
        return DelayLevels(parse_delay_levels(text), path)
    except ValueError as exc:
        raise DelayLevelError(path, None, f"{KEY}: {exc}") from None
