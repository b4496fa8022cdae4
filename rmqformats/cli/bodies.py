"""Message bodies shown as text, hex or base64, whole or cut to a number of bytes (``--body``, ``--body-limit``)."""

from __future__ import annotations

import argparse
import base64

from .present import escape_text

#: ``--body`` views.
VIEWS = ("text", "hex", "base64", "none")
#: Bytes of a body shown in a table cell unless ``--body-limit`` says otherwise.
TABLE_LIMIT = 256


def _at_least(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {low} or more, not {value}")
    return value


def non_negative(text: str) -> int:
    """An argparse type: an integer >= 0."""
    return _at_least(text, 0)


def positive(text: str) -> int:
    """An argparse type: an integer >= 1."""
    return _at_least(text, 1)


def add_body_args(sp: argparse.ArgumentParser, what: str = "message bodies") -> None:
    """``--body`` and ``--body-limit``."""
    sp.add_argument("--body", choices=VIEWS, default=None,
                    help=f"show {what} as UTF-8 text (bytes that are not text and control characters escaped as "
                         "\\xNN, \\t, \\n, \\r; a backslash as \\\\), hex or base64 "
                         "(default: base64 in JSON, none in tables)")
    sp.add_argument("--body-limit", type=non_negative, metavar="N",
                    help=f"show at most N bytes of each body (default: all in JSON, {TABLE_LIMIT} in tables)")


def render(data: bytes, view: str, limit: int | None, *, table: bool = False) -> str:
    """``data`` in the ``view`` asked for, cut to ``limit`` bytes (a table cell ends in ``…`` when cut)."""
    if view == "none":
        return ""
    cut = limit is not None and len(data) > limit
    part = data[:limit] if cut else data
    if view == "hex":
        text = part.hex()
    elif view == "base64":
        text = base64.b64encode(part).decode("ascii")
    else:  # the same escapes in a table cell and in JSON (see rmqformats.cli.present)
        text = escape_text(part)
    return text + "…" if cut and table else text


def render_array(data, view: str, limit: int | None, *, table: bool = False):
    """:func:`render` of each value of a binary array (no nulls): a string array of the same texts, made in
    compiled code (a body with bytes over 0x7f shown as ``text`` is escaped by :func:`render`'s own rule)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .. import export
    from ..frames import from_numpy, from_strings, repeated, scalar
    n = len(data)
    if view == "none":
        return repeated("", n).cast(pa.large_string())
    part, cut = data, None
    if limit is not None:
        cut = pc.greater(pc.binary_length(data), scalar(limit))
        part = pc.binary_slice(data, 0, limit) if pc.any(cut).as_py() else data
    if view == "base64":
        text = export.base64_text(part)
    else:
        text, other = export.mapped_text(part, export.HEX_BYTES if view == "hex" else export.TEXT_BYTES_ASCII)
        rows = np.flatnonzero(other)
        if len(rows):  # text with bytes over 0x7f: Python's view of what is printable
            values = from_strings([escape_text(part[int(r)].as_py()) for r in rows]).cast(pa.large_string())
            mask = np.zeros(n, np.bool_)
            mask[rows] = True
            text = pc.replace_with_mask(text, from_numpy(mask), values)
    if table and cut is not None and pc.any(cut).as_py():
        mark = scalar("…", pa.large_string())
        text = pc.if_else(cut, pc.binary_join_element_wise(text, mark, scalar("", pa.large_string())), text)
    return text


#: The keys :func:`json_fields` gives only for a body it cut.
CUT_KEYS = frozenset(("bodyTruncated", "bodyBytes"))


def json_columns(columns: dict, data, view: str | None, limit: int | None) -> tuple[dict, frozenset[str]]:
    """:func:`apply_json` over columns: ``columns`` (a record's JSON fields as Arrow columns, in order) with
    the fields :func:`json_fields` gives for the bodies ``data`` (a binary array) in their place, last; and
    the keys among them to write only where not null (:data:`CUT_KEYS`, but a ``bodyBytes`` the record
    had, whose value a cut body's length replaces)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..frames import repeated, scalar
    out = {name: column for name, column in columns.items() if name != "body"}
    view = view or "base64"
    if view == "none":
        return out, frozenset()
    out["body"] = data if view == "base64" and limit is None else render_array(data, view, limit)
    if view != "base64":
        out["bodyView"] = repeated(view, len(data))
    if limit is None:
        return out, frozenset()
    length = pc.binary_length(data).cast(pa.int64())
    cut = pc.greater(length, scalar(limit))
    out["bodyTruncated"] = pc.if_else(cut, scalar(True), scalar(None, pa.bool_()))
    out["bodyBytes"] = pc.if_else(cut, length, columns.get("bodyBytes", scalar(None, pa.int64())))
    return out, CUT_KEYS - set(columns)


def json_fields(data: bytes, view: str | None, limit: int | None) -> dict:
    """The JSON fields for a body: ``body`` in the view (base64 by default), ``bodyView``/``bodyTruncated``
    when they differ from the default; nothing for ``none``."""
    view = view or "base64"
    if view == "none":
        return {}
    out: dict = {"body": render(data, view, limit)}
    if view != "base64":
        out["bodyView"] = view
    if limit is not None and len(data) > limit:
        out["bodyTruncated"] = True
        out["bodyBytes"] = len(data)
    return out


def apply_json(d: dict, data: bytes, view: str | None, limit: int | None) -> dict:
    """``d`` (a message's JSON) with its ``body`` field replaced for the view asked for."""
    if view in (None, "base64") and limit is None:
        return d
    d.pop("body", None)
    d.update(json_fields(data, view, limit))
    return d
