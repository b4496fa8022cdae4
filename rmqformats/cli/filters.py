"""Message filters beyond those the columnar scan takes: RocketMQ tag expressions, ``--property K=V``,
topic lists and a consumer group's outstanding messages, applied to each record batch with pyarrow.compute.

A tag expression is read as a subscription's is, by RocketMQ's ``FilterAPI.buildSubscriptionData``
(``org.apache.rocketmq.common.filter.FilterAPI`` to 4.9.x, ``org.apache.rocketmq.remoting.protocol.filter``
from 5.0.0): ``*`` (or nothing) subscribes to every message; otherwise the text is split at ``||`` (Java's
``String.split``, which drops empty strings at the end), each part trimmed of the characters Java's
``String.trim`` removes (code points up to U+0020) and the empty ones dropped. A message matches when its
TAGS value is one of them (the client's exact check after the broker's tags-code match,
``PullAPIWrapper.processPullResult``); a message without tags matches only ``*``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import NamedTuple

#: The tag expression of a subscription to every message (``SubscriptionData.SUB_ALL``).
SUB_ALL = "*"
#: What Java's ``String.trim`` removes at both ends.
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def tag_expression(text: str) -> frozenset[str] | None:
    """The tags a subscription's tag expression selects; ``None`` for every message (``*`` or empty).

    An argparse type: an expression with no tag in it (``||``, blanks) is refused, as
    ``FilterAPI.buildSubscriptionData`` refuses the first ("subString split error") and the broker's
    tags-code match selects nothing for the second."""
    if text == "" or text == SUB_ALL:
        return None
    parts = text.split("||")
    while parts and parts[-1] == "":  # Java's String.split drops empty strings at the end
        parts.pop()
    tags = frozenset(t for t in (p.strip(_JAVA_TRIM) for p in parts) if t)
    if not tags:
        raise argparse.ArgumentTypeError(f"tag expression {text!r} names no tag: give tags separated by '||' "
                                         f"(TagA || TagB), or '*' for every message")
    return tags


def property_filter(text: str) -> tuple[str, str]:
    """``K=V`` as ``(K, V)`` (the value may hold ``=``); an argparse type."""
    name, eq, value = text.partition("=")
    if not eq or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return name, value


def topic_list(text: str) -> list[str]:
    """The topics of a comma-separated list (a topic name cannot hold a comma: ``TopicValidator`` allows
    ``[%|a-zA-Z0-9_-]``); an argparse type."""
    topics = [t.strip() for t in text.split(",") if t.strip()]
    if not topics:
        raise argparse.ArgumentTypeError(f"no topic in {text!r}")
    return topics


def topics_of(values: Iterable[list[str]] | None) -> list[str] | None:
    """The topics of repeated ``--topic`` options (each a list), in order, without repeats; ``None`` for none."""
    if values is None:
        return None
    return list(dict.fromkeys(t for v in values for t in v))


class Outstanding(NamedTuple):
    """A group's committed position per topic queue: the queue offset its next message will have."""

    group: str
    #: (topic, queue id) → the first queue offset the group has not consumed that the queue still holds.
    starts: dict[tuple[str, int], int]

    @property
    def topics(self) -> list[str]:
        return sorted({t for t, _ in self.starts})


def outstanding(store, group: str) -> Outstanding:
    """``group``'s outstanding positions from its committed offsets (see :func:`rmqformats.lag.unconsumed`)."""
    from ..lag import consumer_lag, unconsumed
    from .usage import Unknown
    found = unconsumed(store, group)
    if not found:
        groups = sorted({r.group for r in consumer_lag(store, with_store_time=False)})
        raise Unknown(f"unknown consumer group {group!r}: no committed offset of it in "
                      f"{store.path('config')} (groups there: {', '.join(groups) or 'none'})")
    return Outstanding(group, {(t, q): start for (t, q), (start, _) in found.items()})


class BatchFilter:
    """The filters a record batch is cut down by: a tag set, properties, a group's outstanding messages.

    :attr:`columns` are those the batch must hold for them.
    """

    def __init__(self, *, tags: frozenset[str] | None = None, properties: Iterable[tuple[str, str]] = (),
                 outstanding: Outstanding | None = None):
        self.tags = tags
        self.properties = list(properties)
        self.outstanding = outstanding
        cols: list[str] = []
        if tags is not None:
            cols.append("tags")
        #: The column of each property looked at: its values, found as the properties are split (no map of
        #: every pair is built for it).
        self._property_values: list[tuple[str, str]] = []
        if self.properties:
            from ..walk.arrow import property_column
            self._property_values = [(property_column(name), value) for name, value in self.properties]
            cols += sorted({column for column, _ in self._property_values})
        if outstanding is not None:
            cols += ["topic", "queueId", "queueOffset"]
            import numpy as np

            from ..frames import from_numpy, from_strings
            keys = list(outstanding.starts)
            self._keys = from_strings([f"{t}\x00{q}" for t, q in keys])
            self._starts = from_numpy(np.array([outstanding.starts[k] for k in keys], np.int64))
        self.columns = tuple(cols)

    def __bool__(self) -> bool:
        return bool(self.columns)

    def mask(self, batch):
        """A boolean array: which rows of ``batch`` pass, or ``None`` when every row does."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from ..frames import from_strings, scalar
        masks = []
        if self.tags is not None:
            masks.append(pc.is_in(batch.column("tags"), value_set=from_strings(sorted(self.tags))))
        for column, value in self._property_values:
            masks.append(pc.equal(batch.column(column), scalar(value)))
        if self.outstanding is not None:
            # A queue is named by topic NUL queue id: a queue id's digits hold no NUL, so the pair is one key.
            key = pc.binary_join_element_wise(batch.column("topic"), pc.cast(batch.column("queueId"), pa.string()),
                                              scalar("\x00"))
            start = pc.take(self._starts, pc.index_in(key, value_set=self._keys))
            masks.append(pc.greater_equal(batch.column("queueOffset"), start))
        if not masks:
            return None
        keep = masks[0]
        for m in masks[1:]:
            keep = pc.and_kleene(keep, m)
        return pc.fill_null(keep, scalar(False))

    def __call__(self, batch):
        """``batch`` with only the rows that pass."""
        keep = self.mask(batch)
        return batch if keep is None else batch.filter(keep)

    def matches(self, topic: str, queue_id: int, queue_offset: int, properties: dict) -> bool:
        """Whether one message passes (for the object API's walk, item by item in inner batches)."""
        if self.tags is not None and properties.get("TAGS") not in self.tags:
            return False
        if any(properties.get(k) != v for k, v in self.properties):
            return False
        if self.outstanding is not None:
            start = self.outstanding.starts.get((topic, queue_id))
            if start is None or queue_offset < start:
                return False
        return True
