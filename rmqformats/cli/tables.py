"""Text tables that fit the terminal.

A table is fitted to a width when one is known: ``--wide`` turns fitting
off; otherwise the width is ``COLUMNS`` when set, else the terminal's when
the output is a terminal. Output that is neither (a pipe, a file) is laid
out plainly with every column and whole values, for pagers and scripts.

To fit, text values are cut in the middle with ``…`` down to a floor,
then the least useful columns are left out (see :data:`LEAST_USEFUL`, then
from the right), and the width freed goes back to the cut columns.
Numbers, times and message ids are never cut: a column of them is left
out whole or shown whole. A note on stderr names the columns left out,
once per command.

Widths are display cells as a terminal draws them (:mod:`rmqformats.cells`,
by ``wcwidth``): an East Asian wide character such as ``标`` takes two, a
combining mark none, so columns of such text line up.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..cells import cells, cut_middle, one_line, one_line_array, pad

#: Set from ``--wide``: every column, whole values.
_state = {"wide": False, "noted": False}

#: Column names left out first when a table does not fit, least useful first; the other columns are
#: left out from the right. The first column is always kept.
#: A message table at 80 columns drops msgId (32 hex digits, made from the store host and the offset
#: already shown), then bodyBytes and the store time, and keeps what a person finds a message by:
#: its offset, topic, queue, tags and keys.
LEAST_USEFUL = (
    "msgId", "bodyBytes", "tagsCode", "unknownKeys", "encoding", "topicSysFlag", "brokerId", "retryMaxTimes",
    "retryQueueNums", "msgBaseOffset", "batchSize", "entry", "indexFile", "files", "commitLogFiles", "size",
    "attributes", "storeTimestamp", "storeTime", "storeTimeFromIndex", "nextMessageStoreTime", "flag", "properties",
    "storeSize", "keys",
)
#: Columns left out last (asked for, as ``body`` with ``--body``, what a row is about, or ``lag``'s answer).
MOST_USEFUL = ("lag", "body", "topic", "group")
#: Separator between columns.
GAP = "  "
#: Text columns are not cut narrower than this (or their header).
MIN_TEXT = 12

#: Numbers, ISO times and hexadecimal ids (message ids): shown whole or not at all.
_UNCUT = re.compile(r"^([-+]?\d[\d,.]*|\d{4}-\d\d-\d\d[T ][\d:.]+(Z|[+-]\d\d:?\d\d)?|[0-9A-Fa-f]{16,})$")


def set_wide(on: bool) -> None:
    """``--wide``: tables keep every column and whole values (set once per command)."""
    _state["wide"] = bool(on)
    _state["noted"] = False


def is_wide() -> bool:
    return _state["wide"]


def table_width(out) -> int | None:
    """The width to fit tables written to ``out`` to, or ``None`` for no limit."""
    if _state["wide"]:
        return None
    env = os.environ.get("COLUMNS", "")
    if env.strip().isdigit() and int(env) > 0:
        return int(env)
    try:
        if out.isatty():
            return os.get_terminal_size(out.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


def _priority(header: Sequence[str]) -> list[int]:
    """Column indexes in the order they are left out (never the first)."""
    named = [header.index(h) for h in LEAST_USEFUL if h in header and header.index(h) > 0]
    last = [header.index(h) for h in MOST_USEFUL if h in header and header.index(h) > 0]
    rest = [i for i in range(len(header) - 1, 0, -1) if i not in named and i not in last]
    return named + rest + last[::-1]


def fit_layout(header: Sequence[str], widths: Sequence[int], cuttable: Sequence[bool], limit: int | None,
               indent: int = 0) -> list[tuple[int, int]]:
    """``(column index, width)`` of the columns to show so a line is at most ``limit`` characters."""
    every = list(range(len(header)))
    if limit is None:
        return [(i, widths[i]) for i in every]
    floors = [min(widths[i], max(cells(header[i]), MIN_TEXT)) if cuttable[i] else widths[i] for i in every]
    drop = _priority(header)
    kept = every[:]
    while True:
        room = limit - indent - len(GAP) * (len(kept) - 1)
        if sum(floors[i] for i in kept) <= room or len(kept) == 1:
            break
        kept.remove(drop.pop(0))
    room = limit - indent - len(GAP) * (len(kept) - 1)
    if sum(widths[i] for i in kept) <= room:
        return [(i, widths[i]) for i in kept]
    # The widest cuttable columns give way first: the largest cap that fits.
    lo, hi = 0, max(widths[i] for i in kept)
    while lo < hi:
        cap = (lo + hi + 1) // 2
        if sum(max(floors[i], min(widths[i], cap)) for i in kept) <= room:
            lo = cap
        else:
            hi = cap - 1
    return [(i, max(floors[i], min(widths[i], lo))) for i in kept]


def note_left_out(header: Sequence[str], layout: list[tuple[int, int]], limit: int | None) -> None:
    """Say on stderr (once per command) which columns were left out to fit."""
    shown = {i for i, _ in layout}
    gone = [h for i, h in enumerate(header) if i not in shown]
    if gone and not _state["noted"]:
        _state["noted"] = True
        sys.stderr.write(f"rmqformats: column{'s' if len(gone) > 1 else ''} {', '.join(gone)} left out to fit "
                         f"{limit} columns; --wide shows all\n")


def _is_cuttable(values: list) -> bool:
    return any(isinstance(v, str) and v and not _UNCUT.match(v) for v in values)


def print_table(rows: list[list], header: list[str], out, indent: str = "", *,
                width: int | None | Callable[[object], int | None] = table_width) -> None:
    """Write ``rows`` under ``header`` as aligned columns, fitted to the output's width."""
    rendered = [[one_line(str(c)) for c in r] for r in rows]
    widths = [max(cells(r[i]) for r in [header, *rendered]) for i in range(len(header))]
    cuttable = [_is_cuttable([r[i] for r in rendered]) for i in range(len(header))]
    limit = width(out) if callable(width) else width
    layout = fit_layout(header, widths, cuttable, limit, len(indent))
    note_left_out(header, layout, limit)
    for r in [list(header), *rendered]:
        line = GAP.join(pad(cut_middle(r[i], w), w) for i, w in layout)
        out.write(indent + line.rstrip() + "\n")


def print_columns(columns: Sequence, header: list[str], out, indent: str = "", *,
                  width: int | None | Callable[[object], int | None] = table_width) -> None:
    """:func:`print_table` of rows given as one string array per column (pyarrow, no nulls): the same text,
    the cells padded and cut in compiled code."""
    import pyarrow.compute as pc

    from ..cells import cut_array, pad_array, widest
    from ..frames import scalar
    columns = [one_line_array(c) for c in columns]
    widths = [max(cells(h), widest(c)) for h, c in zip(header, columns)]
    limit = width(out) if callable(width) else width
    # Whether a column may be cut only matters when the table is fitted; its distinct values tell.
    cuttable = [_is_cuttable(pc.unique(c).to_pylist()) if limit is not None else False for c in columns]
    layout = fit_layout(header, widths, cuttable, limit, len(indent))
    note_left_out(header, layout, limit)
    out.write(indent + GAP.join(pad(cut_middle(header[i], w), w) for i, w in layout).rstrip() + "\n")
    parts: list = []
    for k, (i, w) in enumerate(layout):
        parts.append(pad_array(cut_array(columns[i], w), w))
        if k < len(layout) - 1:
            parts.append(scalar(GAP))
    lines = pc.binary_join_element_wise(*parts, scalar(""))
    out.write("".join(indent + line.rstrip() + "\n" for line in lines.to_pylist()))


def write_wrapped(text: str, out, indent: int = 11, *, break_after: str = "") -> None:
    """One line of text, broken at spaces to the output's width (later lines indented by ``indent``).

    A word longer than a line is kept whole, unless ``break_after`` names characters after which it may
    be broken (``"/"`` for a path or a citation, which have no space to break at).
    """
    limit = table_width(out)
    if limit is None or cells(text) <= limit:
        out.write(text + "\n")
        return
    wrapper = _Wrapper(limit, subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False)
    wrapper.break_after = break_after
    out.write("\n".join(wrapper.wrap(text)) + "\n")


class _Wrapper(textwrap.TextWrapper):
    """``textwrap``'s wrapper, with words longer than a line split after the characters in ``break_after``."""

    break_after = ""

    def _split(self, text: str) -> list[str]:
        chunks = super()._split(text)
        if not self.break_after:
            return chunks
        room = max(self.width - len(self.subsequent_indent), 1)
        after = re.compile(f"(?<=[{re.escape(self.break_after)}])")
        return [piece for chunk in chunks
                for piece in (after.split(chunk) if len(chunk) > room else (chunk,)) if piece]


class ColumnWidths:
    """Widths and cuttable columns of a table gathered row by row, for :func:`print_table_streamed`."""

    def __init__(self, header: Sequence[str]):
        self.header = list(header)
        self.widths = [cells(h) for h in header]
        self.cuttable = [False] * len(header)

    def add(self, row: Sequence) -> None:
        for i, c in enumerate(row):
            s = one_line(str(c))
            w = cells(s)
            if w > self.widths[i]:
                self.widths[i] = w
            if not self.cuttable[i] and s and not _UNCUT.match(s):
                self.cuttable[i] = True


def print_table_streamed(columns: ColumnWidths, rows, out, indent: str = "", *,
                         width: int | None | Callable[[object], int | None] = table_width) -> None:
    """Write ``rows`` (an iterable, read once) as :func:`print_table` would, with widths gathered beforehand.

    For tables too long to hold: a first pass over the rows fills ``columns``
    (:meth:`ColumnWidths.add`), this second pass writes them line by line.
    """
    header = columns.header
    limit = width(out) if callable(width) else width
    layout = fit_layout(header, columns.widths, columns.cuttable, limit, len(indent))
    note_left_out(header, layout, limit)
    out.write(indent + GAP.join(pad(cut_middle(header[i], w), w) for i, w in layout).rstrip() + "\n")
    for r in rows:
        values = [one_line(str(c)) for c in r]
        out.write(indent + GAP.join(pad(cut_middle(values[i], w), w) for i, w in layout).rstrip() + "\n")


def print_rows_streamed(rows: Iterable[Sequence], header: Sequence[str], out, indent: str = "", *,
                        cut: Iterable[int] | None = None, min_widths: dict[int, int] | None = None,
                        block: int = 1000) -> int:
    """Write ``rows`` (an iterable of rows, read once) as a table fitted to the output, holding one block of
    ``block`` rows at a time; returns how many rows it wrote.

    The widths are those of the header and the first block (at least
    ``min_widths``), and the columns that may be cut are ``cut``, by default
    those :func:`print_table` would cut, judged on the first block
    (:class:`rmqformats.export.TableStream` writes the lines). Past the first
    block, a text value wider than its column is cut in the middle; numbers
    overflow their column rather than lose digits. While the rows fit in one
    block, the table is :func:`print_table`'s.
    """
    return print_columns_streamed(row_blocks(rows, block), header, out, indent, cut=cut, min_widths=min_widths,
                                  block=block)


def row_blocks(rows: Iterable[Sequence], block: int = 1000) -> Iterator[list]:
    """``rows`` (read once) as :func:`print_columns_streamed`'s blocks: ``block`` rows at a time, each
    column an Arrow string array of the values' text."""
    import itertools

    from ..frames import from_strings
    it = iter(rows)
    while pending := [[str(v) for v in r] for r in itertools.islice(it, block)]:
        yield [from_strings(col) for col in zip(*pending)]


def column_blocks(blocks: Iterable[list], size: int) -> Iterator[list]:
    """Column blocks of any sizes as blocks of exactly ``size`` rows (the last one fewer), so that a table
    writes its rows at the same places whatever the pieces it was given."""
    import pyarrow as pa
    held: list[list] = []
    count = 0
    for columns in blocks:
        held.append(columns)
        count += len(columns[0])
        if count < size:
            continue
        joined = held[0] if len(held) == 1 else [pa.concat_arrays([b[i] for b in held]) for i in range(len(columns))]
        at = 0
        while count - at >= size:
            yield [c.slice(at, size) for c in joined]
            at += size
        count -= at
        held = [[c.slice(at) for c in joined]] if count else []
    if count:
        yield held[0] if len(held) == 1 else [pa.concat_arrays([b[i] for b in held]) for i in range(len(held[0]))]


def print_columns_streamed(blocks: Iterable[list], header: Sequence[str], out, indent: str = "", *,
                           cut: Iterable[int] | None = None, min_widths: dict[int, int] | None = None,
                           block: int = 1000) -> int:
    """:func:`print_rows_streamed` of rows given a block at a time as columns: one Arrow string array per
    column, of any number of rows (the first ``block`` rows fix the widths whatever the blocks' sizes)."""
    import itertools

    from ..export import TableStream
    limit = table_width(out)

    def layout(h, w, c):
        chosen = fit_layout(h, w, c, limit, len(indent))
        note_left_out(h, chosen, limit)
        return chosen

    it = iter(blocks)
    head: list[list] = []  # the first ``block`` rows, in the blocks they came in
    tail: list[list] = []  # the rest of the block that reached past them
    n = 0
    for columns in it:
        m = len(columns[0]) if columns else 0
        if n + m > block:
            head.append([c.slice(0, block - n) for c in columns])
            tail.append([c.slice(block - n) for c in columns])
            break
        head.append(columns)
        n += m
        if n == block:
            break
    if cut is None:
        cut = [i for i in range(len(header)) if any(_is_cuttable(cols[i].to_pylist()) for cols in head)]
    table = TableStream(list(header), out, block=block, cut=cut, min_widths=min_widths, indent=indent,
                        layout=layout)
    total = 0
    for columns in itertools.chain(head, tail, it):
        total += len(columns[0]) if columns else 0
        table.write(columns)
    table.close()
    return total
