"""Java ``String.hashCode``, which the broker uses for tags codes and index keys."""

from __future__ import annotations

import operator
import sys

_POW31_MAX = 1024
#: 31**(k-1) ... 31**0 modulo 2**32, for strings of up to _POW31_MAX UTF-16 units.
_POW31 = [pow(31, _POW31_MAX - 1 - i, 1 << 32) for i in range(_POW31_MAX)]
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def java_string_hash(text: str) -> int:
    """Java ``String.hashCode`` of ``text`` as a signed 32-bit int.

    The hash runs over UTF-16 code units (a character outside the BMP, such
    as an emoji, counts as two), with 32-bit wrap-around.
    """
    # hashCode = sum(unit[i] * 31**(n-1-i)) mod 2**32, summed in C by map/sum.
    if text.isascii():
        units = text.encode("ascii")
    else:
        units = memoryview(text.encode(_UTF16_NATIVE)).cast("H")
    n = len(units)
    if n <= _POW31_MAX:
        h = sum(map(operator.mul, units, _POW31[_POW31_MAX - n:])) & 0xFFFFFFFF
    else:
        h = 0
        for unit in units:
            h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def tags_code(tags: str | None) -> int:
    """The tags code the broker stores for ``tags`` (``tagsString2tagsCode``): its hash, or 0."""
    return java_string_hash(tags) if tags else 0
