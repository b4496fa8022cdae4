"""Text widths in terminal display cells, for every table the package writes.

A terminal draws an East Asian wide character (``标``, ``键``) in two cells
and a combining mark in none; padding or cutting by code points misaligns a
column of such text. :func:`cells` measures by ``wcwidth``; :func:`pad`,
:func:`cut_middle` and the Arrow forms :func:`pad_array` and
:func:`cut_array` pad and cut by it. A column of plain printable ASCII is
measured and padded by Arrow's kernels (a cell a character); any other
column is measured a value at a time.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from wcwidth import wcswidth, wcwidth

from .frames import from_strings, scalar


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


def _plain(arr: pa.Array) -> bool:
    """Whether every value of a string array is printable ASCII (one cell a character)."""
    return bool(pc.all(pc.fill_null(pc.string_is_ascii(arr), scalar(True))).as_py()) and \
        not bool(pc.any(pc.fill_null(pc.match_substring_regex(arr, r"[\x00-\x1f\x7f]"), scalar(False))).as_py())


def widest(arr: pa.Array) -> int:
    """The widest value of a string array, in cells (0 when empty or all null)."""
    if _plain(arr):
        return pc.max(pc.utf8_length(arr)).as_py() or 0
    return max((cells(v) for v in arr.to_pylist() if v is not None), default=0)


def cut_array(arr: pa.Array, width: int) -> pa.Array:
    """Each string wider than ``width`` cells cut in the middle with ``…``, as :func:`cut_middle`."""
    if _plain(arr):
        long = pc.fill_null(pc.greater(pc.utf8_length(arr), scalar(width)), scalar(False))
        if not pc.any(long).as_py():
            return arr
        half = (width - 1) // 2
        tail = width - 1 - half
        empty = scalar("", arr.type)
        cut = pc.binary_join_element_wise(pc.utf8_slice_codeunits(arr, 0, half), scalar("…", arr.type),
                                          pc.utf8_slice_codeunits(arr, -tail) if tail else empty, empty)
        return pc.if_else(long, cut, arr)
    return from_strings([None if v is None else cut_middle(v, width) for v in arr.to_pylist()])


def pad_array(arr: pa.Array, width: int) -> pa.Array:
    """Each string padded with spaces to ``width`` cells, as :func:`pad`."""
    if _plain(arr):
        return pc.utf8_rpad(arr, width)
    return from_strings([None if v is None else pad(v, width) for v in arr.to_pylist()])


__all__ = ["cells", "cut_array", "cut_middle", "pad", "pad_array", "widest"]
