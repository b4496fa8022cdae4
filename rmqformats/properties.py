"""The message properties string: ``name U+0001 value`` pairs separated by U+0002.

The names of the properties decoded into values of their own come from the
commit-log spec (``-rmq-property-names`` of the ``properties`` field in
``formats/rocketmq_commitlog.ksy``), where each one added after 4.0.0 has its
release and citation.
"""

from __future__ import annotations

import unicodedata

from .generated.layouts import rocketmq_commitlog as _layout

NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"

#: Property id (as the spec names it) -> ``MessageConst`` name, for the properties the readers decode.
NAMES: dict[str, str] = dict(_layout.MESSAGE_PROPERTIES_NAMES)
TAGS = NAMES["tags"]
KEYS = NAMES["keys"]
UNIQ_KEY = NAMES["uniq_key"]
DELAY = NAMES["delay"]
CRC32 = NAMES["crc32"]
#: 5.4.0+: the priority of a priority message (RIP-80), a decimal the producer sets.
PRIORITY = NAMES["priority"]
#: 5.5.0+: the lite topic of a message of a parent topic (RIP-83), dispatched to ``%LMQ%$parent$lite``.
LITE_TOPIC = NAMES["lite_topic"]
KEY_SEPARATOR = " "
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
#: Bytes the ``__CRC32#`` property takes at the end of a record: name, U+0001, 10 digits, U+0002.
CRC32_RESERVED = len(CRC32) + 12


def parse_properties(text: str) -> dict[str, str]:
    """Parse a stored properties string into a dict, as the broker does (4.9.1+).

    Pairs are separated by U+0002, with or without a trailing separator; a
    pair's name runs to its first U+0001 and its value may contain U+0001.
    Pairs with an empty name or an empty value are dropped, and a repeated
    name keeps its last value, as ``MessageDecoder.string2messageProperties``
    does.
    """
    out: dict[str, str] = {}
    if not text:
        return out
    for pair in text.split(PROPERTY_SEPARATOR):
        name, _, value = pair.partition(NAME_VALUE_SEPARATOR)
        if name and value:
            out[name] = value
    return out


def format_properties(props: dict[str, str], *, trailing_separator: bool = False) -> str:
    """The stored form of ``props``; brokers 4.9.1 to 5.1.4 omit the trailing separator."""
    text = PROPERTY_SEPARATOR.join(f"{k}{NAME_VALUE_SEPARATOR}{v}" for k, v in props.items())
    if trailing_separator and text:
        text += PROPERTY_SEPARATOR
    return text


def broker_crc32_property(value: str) -> int | None:
    """The CRC the broker's recovery reads from a ``__CRC32#`` value, or ``None`` where it finds none.

    ``CommitLog.checkMessageAndReturnSize`` (with ``forceVerifyPropCRC``,
    rocketmq-all-5.2.0:store/src/main/java/org/apache/rocketmq/store/CommitLog.java)
    adds ``char - '0'`` of each character, last first, in Java ``int``
    arithmetic, and takes a negative result as no CRC.
    """
    crc = 0
    for ch in reversed(value):
        crc = (crc * 10 + ord(ch) - 48) & 0xFFFFFFFF
    return None if crc >= 1 << 31 else crc


def decode_crc32_property(value: str) -> int | None:
    """The CRC held by a ``__CRC32#`` value: 10 decimal digits, least significant first."""
    if len(value) != 10 or not value.isascii() or not value.isdigit():
        return None
    return int(value[::-1])


def parse_java_int(value: str | None) -> int | None:
    """``value`` as Java's ``Integer.parseInt`` reads it, or ``None`` where that throws (or no value).

    An optional ``+`` or ``-`` then decimal digits (any script's, as
    ``Character.digit`` takes them), within 32 bits; no spaces, no
    underscores. The broker reads ``_SYS_MSG_PRIORITY_`` so
    (``NumberUtils.toInt``), taking a value it cannot read as no priority.
    """
    if not value:
        return None
    digits = value[1:] if value[0] in "+-" else value
    if not digits or not digits.isdecimal():
        return None
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(c)) for c in digits)
    digits = digits.lstrip("0") or "0"
    if len(digits) > 10:  # past 32 bits (and never a long string through int())
        return None
    number = int(digits) if value[0] != "-" else -int(digits)
    return number if _INT32_MIN <= number <= _INT32_MAX else None


def priority_of(properties: dict[str, str]) -> int | None:
    """The priority of a message with these properties: ``_SYS_MSG_PRIORITY_`` as an int, ``None`` without one."""
    return parse_java_int(properties.get(PRIORITY))


def lite_topic_of(properties: dict[str, str]) -> str | None:
    """The lite topic of a message with these properties (``__LITE_TOPIC``), ``None`` without one."""
    return properties.get(LITE_TOPIC)
