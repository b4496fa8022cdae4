"""Text widths in terminal display cells, for every table the package writes.

A terminal draws an East Asian wide character (``标``, ``键``) in two cells
and a combining mark in none; padding or cutting by code points misaligns a
column of such text. :func:`cells` measures by ``wcwidth``; :func:`pad`,
:func:`cut_middle` and the Arrow forms :func:`pad_array` and
:func:`cut_array` pad and cut by it. The values of a column that are plain
printable ASCII are measured, padded and cut by Arrow's kernels (a cell a
character); the others a value at a time.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc
from wcwidth import wcswidth, wcwidth

from .frames import from_strings, scalar


#: Control characters, which a table shows as escapes (:func:`one_line`).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_ARROW = "[\\x00-\\x1f\\x7f]"
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match) -> str:
    c = m.group()
    return _SHORT.get(c) or f"\\x{ord(c):02x}"


def one_line(text: str) -> str:
    """``text`` as a table cell shows it: each control character as ``\\t``, ``\\n``, ``\\r`` or ``\\xNN``, so that
    a row stays one line (JSON and CSV keep the text as it is)."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def one_line_array(arr: pa.Array) -> pa.Array:
    """:func:`one_line` of each value of a string array (the array itself when none holds a control)."""
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) or len(arr) == 0:
        return arr
    found = pc.match_substring_regex(arr, _CONTROL_ARROW)
    if not pc.any(found).as_py():
        return arr
    values = arr.to_pylist()
    return from_strings([v if v is None else one_line(v) for v in values]).cast(arr.type)


def cells(text: str) -> int:
    """The display width of ``text`` in terminal cells (a wide character 2, a combining mark 0).

    A character a terminal does not draw (a control) counts one cell: the
    tables show escapes in its place, never the character itself.
    """
    if text.isascii() and text.isprintable():
        return len(text)
    n = wcswidth(text)
    if n >= 0:
        return n
    return sum(w if w >= 0 else 1 for w in map(wcwidth, text))


def _take(text: str, width: int, *, from_end: bool = False) -> str:
    """The longest start (or end) of ``text`` at most ``width`` cells wide."""
    out: list[str] = []
    used = 0
    for c in (reversed(text) if from_end else text):
        w = cells(c)
        if used + w > width:
            break
        out.append(c)
        used += w
    return "".join(reversed(out) if from_end else out)


def cut_middle(text: str, width: int) -> str:
    """``text`` cut in the middle to at most ``width`` cells, with ``…`` where it was cut."""
    if cells(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    half = (width - 1) // 2
    return f"{_take(text, half)}…{_take(text, width - 1 - half, from_end=True)}"


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces to ``width`` cells (``str.ljust`` counts code points, not cells)."""
    return text + " " * max(width - cells(text), 0)


def _plain_values(arr: pa.Array) -> pa.Array:
    """Which values of a string array are printable ASCII (one cell a character); a null counts as one."""
    return pc.fill_null(pc.and_(pc.string_is_ascii(arr), pc.invert(pc.match_substring_regex(arr, r"[\x00-\x1f\x7f]"))),
                        scalar(True))


def _others(arr: pa.Array) -> tuple[pa.Array, list[str | None]] | None:
    """``None`` when every value of a string array is printable ASCII; else which values are not, and
    those values (measured, padded and cut a value at a time, the others by Arrow's kernels)."""
    plain = _plain_values(arr)
    if pc.all(plain).as_py():
        return None
    other = pc.invert(plain)
    return other, pc.filter(arr, other).to_pylist()


def widest(arr: pa.Array) -> int:
    """The widest value of a string array, in cells (0 when empty or all null)."""
    others = _others(arr)
    if others is None:
        return pc.max(pc.utf8_length(arr)).as_py() or 0
    other, values = others
    plain = pc.max(pc.utf8_length(pc.filter(arr, pc.invert(other)))).as_py() or 0
    return max(plain, max((cells(v) for v in values), default=0))


def cut_array(arr: pa.Array, width: int) -> pa.Array:
    """Each string wider than ``width`` cells cut in the middle with ``…``, as :func:`cut_middle`."""
    others = _others(arr)
    long = pc.fill_null(pc.greater(pc.utf8_length(arr), scalar(width)), scalar(False))
    if others is None and not pc.any(long).as_py():
        return arr
    if width <= 1:  # no room around the mark
        cut = scalar("…"[:max(width, 0)], arr.type)
    else:
        half = (width - 1) // 2
        tail = width - 1 - half
        empty = scalar("", arr.type)
        cut = pc.binary_join_element_wise(pc.utf8_slice_codeunits(arr, 0, half), scalar("…", arr.type),
                                          pc.utf8_slice_codeunits(arr, -tail), empty)
    done = pc.if_else(long, cut, arr)
    if others is None:
        return done
    other, values = others
    return pc.replace_with_mask(done, other, from_strings([cut_middle(v, width) for v in values]))


def pad_array(arr: pa.Array, width: int) -> pa.Array:
    """Each string padded with spaces to ``width`` cells, as :func:`pad`."""
    done = pc.utf8_rpad(arr, width)
    others = _others(arr)
    if others is None:
        return done
    other, values = others
    return pc.replace_with_mask(done, other, from_strings([pad(v, width) for v in values]))


__all__ = ["cells", "cut_array", "cut_middle", "pad", "pad_array", "widest"]
