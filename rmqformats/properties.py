"""The message properties string: ``name U+0001 value`` pairs separated by U+0002."""

from __future__ import annotations

NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"

#: Well-known property names (``MessageConst``) that the accessors of a message use.
TAGS = "TAGS"
KEYS = "KEYS"
UNIQ_KEY = "UNIQ_KEY"
DELAY = "DELAY"
CRC32 = "__CRC32#"
KEY_SEPARATOR = " "
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
