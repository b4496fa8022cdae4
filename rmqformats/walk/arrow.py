"""Arrow columns of commit-log messages, built in bulk from the record positions a walk found.

The columns carry RocketMQ's own field names, as ``rmqformats messages
--format jsonl`` prints them, plus values derived from the properties
(``tags``, ``keys``, ``uniqKey``, and the 5.4+ ``priority`` and 5.5+
``liteTopic``), the properties string as stored and the segment file's
name. Strings are built from offset buffers filled by the
compiled kernels; UTF-8 is checked by Arrow, and a batch holding invalid
UTF-8 (damaged or foreign data) is decoded in Python with U+FFFD for the bad
bytes, exactly as the object API decodes it.

A column may also be one property's value, asked for by name
(:func:`property_column`: ``property.DELAY`` holds each message's ``DELAY``
value, null where it has none). The kernel that splits the properties finds
those values' places as it finds ``TAGS`` and ``KEYS``, so such a column
costs one copy of its values, not the map of every pair.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa

from .. import properties as props
from ..compression import DEFAULT_MAX_BODY_SIZE, BodyDecompressionError, body_decompressor
from ..errors import DecompressionError
from ..frames import from_numpy
from . import kernels as K
from . import layout as L
from .crc import first_body_mismatch

TIMESTAMP = pa.timestamp("ms", tz="UTC")

#: The message columns, in order, with their Arrow types.
SCHEMA = pa.schema([
    ("commitLogOffset", pa.int64()),
    ("storeSize", pa.int32()),
    ("bodyCRC", pa.int32()),
    ("queueId", pa.int32()),
    ("flag", pa.int32()),
    ("queueOffset", pa.int64()),
    ("sysFlag", pa.int32()),
    ("bornTimestamp", TIMESTAMP),
    ("bornHost", pa.string()),
    ("storeTimestamp", TIMESTAMP),
    ("storeHost", pa.string()),
    ("reconsumeTimes", pa.int32()),
    ("preparedTransactionOffset", pa.int64()),
    ("topic", pa.string()),
    ("properties", pa.map_(pa.string(), pa.string())),
    ("propertiesString", pa.string()),
    ("msgId", pa.string()),
    ("body", pa.binary()),
    # Why a compressed body does not decompress (its stored bytes are then the body); null otherwise.
    ("bodyError", pa.string()),
    ("tags", pa.string()),
    ("keys", pa.list_(pa.string())),
    ("uniqKey", pa.string()),
    # _SYS_MSG_PRIORITY_ as Java's Integer.parseInt reads it (5.4.0+); null without one it reads.
    ("priority", pa.int32()),
    # __LITE_TOPIC (5.5.0+): the lite topic, dispatched to %LMQ%$topic$liteTopic.
    ("liteTopic", pa.string()),
    ("segment", pa.string()),
])
COLUMNS: tuple[str, ...] = tuple(SCHEMA.names)

_I32 = {"storeSize": K.I32_SIZE, "bodyCRC": K.I32_BODY_CRC, "queueId": K.I32_QUEUE_ID, "flag": K.I32_FLAG,
        "sysFlag": K.I32_SYS_FLAG, "reconsumeTimes": K.I32_RECONSUME}
_I64 = {"queueOffset": K.I64_QUEUE_OFFSET, "preparedTransactionOffset": K.I64_PREPARED}
_TIMES = {"bornTimestamp": K.I64_BORN_TS, "storeTimestamp": K.I64_STORE_TS}
#: Columns made from the parsed properties.
_FROM_PROPERTIES = frozenset(("properties", "tags", "keys", "uniqKey", "priority", "liteTopic"))
#: Property names whose values get their own columns (and the record CRC check), in this order.
_NAMED = (props.TAGS, props.KEYS, props.UNIQ_KEY, props.CRC32, props.PRIORITY, props.LITE_TOPIC)
NAMED_TAGS, NAMED_KEYS, NAMED_UNIQ, NAMED_CRC, NAMED_PRIORITY, NAMED_LITE = range(len(_NAMED))
#: The names after the first four are looked for only when their columns are asked for (each name
#: looked for costs every property pair a comparison).
_NAMED_ALWAYS = NAMED_CRC + 1
_NAMED_ON_REQUEST = frozenset(("priority", "liteTopic"))

#: Largest data buffer of one binary column in one batch (Arrow ``binary`` has 32-bit offsets).
MAX_COLUMN_BYTES = (1 << 31) - 1


#: A column named this prefix and a property name holds that property's value (see :func:`property_column`).
PROPERTY_PREFIX = "property."


def property_column(name: str) -> str:
    """The column of property ``name``'s value in each message (null where the message has none).

    A repeated name gives its last value, as ``MessageDecoder.string2messageProperties`` keeps it and as
    the ``properties`` map holds it.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a property column needs a property name, not {name!r}")
    return PROPERTY_PREFIX + name


def property_of(column: str) -> str | None:
    """The property name of a :func:`property_column`, or ``None`` for any other column."""
    return column[len(PROPERTY_PREFIX):] if column.startswith(PROPERTY_PREFIX) else None


def field(column: str) -> pa.Field:
    """The Arrow field of a column: one of :data:`SCHEMA`'s, or a property's (a string)."""
    if column.startswith(PROPERTY_PREFIX):
        return pa.field(column, pa.string())
    return SCHEMA.field(column)


def resolve_columns(columns) -> tuple[str, ...]:
    """The requested column names (a name, or an iterable of names): :data:`SCHEMA`'s in schema order, then
    the property columns (:func:`property_column`) in the order asked.

    Raises ``ValueError`` for an unknown name and ``TypeError`` for anything but names.
    """
    if columns is None:
        return COLUMNS
    if isinstance(columns, str):
        columns = (columns,)
    try:
        wanted = list(columns)
    except TypeError:
        raise TypeError(f"columns must be a column name or an iterable of names, not {type(columns).__name__}") \
            from None
    wrong = [c for c in wanted if not isinstance(c, str)]
    if wrong:
        raise TypeError(f"columns must be names (str), not {', '.join(sorted({type(c).__name__ for c in wrong}))}")
    unknown = [c for c in wanted if c not in COLUMNS and not (c.startswith(PROPERTY_PREFIX) and c != PROPERTY_PREFIX)]
    if unknown:
        raise ValueError(f"unknown column(s) {', '.join(map(repr, unknown))}; the columns are {', '.join(COLUMNS)}, "
                         f"and {PROPERTY_PREFIX}NAME for the value of property NAME")
    return tuple(c for c in COLUMNS if c in wanted) + tuple(dict.fromkeys(c for c in wanted
                                                                          if c.startswith(PROPERTY_PREFIX)))


@dataclass
class Window:
    """Kernel output for the records of one window: the bytes and the per-record matrices."""

    buf: np.ndarray
    i32: np.ndarray
    i64: np.ndarray
    #: Commit-log offset of the segment's first byte.
    seg_start: int
    #: Position in the segment file of ``buf[0]``.
    file_pos: int
    #: Segment path and file name (for the ``segment`` column and error texts).
    path: str
    name: str

    @property
    def base(self) -> int:
        """Commit-log offset of ``buf[0]``."""
        return self.seg_start + self.file_pos


def _sel(rows: np.ndarray):
    """``rows`` (ascending window row numbers) as an index: a slice where they are consecutive (the usual
    case, no filter), so that the kernels' inputs are views of the field matrices, not gathered copies."""
    n = len(rows)
    if n and int(rows[-1]) - int(rows[0]) + 1 == n:
        return slice(int(rows[0]), int(rows[0]) + n)
    return rows


def _pick(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values[rows]`` as an array of its own (a column's memory: the field matrices are reused)."""
    sel = _sel(rows)
    return values[sel].copy() if isinstance(sel, slice) else values[sel]


@lru_cache(maxsize=64)
def _names_to_find(on_request: bool, extra: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, int]:
    """The names the kernel looks for, laid end to end, and their bounds: the first four of ``_NAMED`` (all
    six ``on_request``), then ``extra``; and where ``extra`` begins among them."""
    named = _NAMED if on_request else _NAMED[:_NAMED_ALWAYS]
    encoded = [n.encode("utf-8") for n in named + extra]
    data = np.frombuffer(b"".join(encoded), np.uint8).copy()
    return data, np.cumsum([0] + [len(n) for n in encoded]).astype(np.int64), len(named)


def _extra_names(wanted) -> tuple[str, ...]:
    return tuple(sorted(c[len(PROPERTY_PREFIX):] for c in wanted if c.startswith(PROPERTY_PREFIX)))


def parse_properties(w: Window, rows: np.ndarray, wanted: set[str] | frozenset[str] = frozenset()) -> tuple:
    """The kernel's split of the properties strings of ``rows``: the value positions of the first four
    names of ``_NAMED``, of the others too when ``wanted`` holds ``priority`` or ``liteTopic``, then of the
    property columns' names (sorted) it holds; the names and values of every pair when it holds
    ``properties`` (else that map is left empty)."""
    names, bounds, _ = _names_to_find(bool(wanted & _NAMED_ON_REQUEST), _extra_names(wanted))
    sel = _sel(rows)
    return K.split_properties(w.buf, w.i64[K.I64_PROPS_POS][sel], w.i64[K.I64_PROPS_LEN][sel],
                              names, bounds, "properties" in wanted)


def _validity(mask: np.ndarray) -> pa.Buffer | None:
    if mask.all():
        return None
    return pa.py_buffer(np.packbits(mask, bitorder="little"))


def _text(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string array on offset and data buffers a kernel built as text (ASCII, no check needed)."""
    return pa.Array.from_buffers(pa.string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _string(offsets: np.ndarray, data: np.ndarray, ascii_only: bool, valid: np.ndarray | None = None) -> pa.Array:
    """A string array from buffers; ``None`` when the data is not valid UTF-8."""
    m = len(offsets) - 1
    arr = pa.Array.from_buffers(pa.string(), m, [None if valid is None else _validity(valid),
                                                  pa.py_buffer(offsets), pa.py_buffer(data)])
    if not ascii_only:
        try:
            arr.validate(full=True)
        except pa.ArrowInvalid:
            return None
    return arr


def _text_slices(w: Window, pos: np.ndarray, length: np.ndarray) -> pa.Array:
    """Strings of ``buf`` slices, decoded like the object API (invalid bytes become U+FFFD)."""
    arr = _string(*K.gather(w.buf, pos, length))
    if arr is None:
        buf = w.buf
        arr = pa.array([bytes(buf[p:p + n]).decode("utf-8", "replace") for p, n in zip(pos.tolist(), length.tolist())],
                       pa.string())
    return arr


def _named_value(w: Window, found_pos: np.ndarray, found_len: np.ndarray) -> pa.Array | None:
    valid = found_pos >= 0
    offsets, data, ascii_only = K.gather(w.buf, np.where(valid, found_pos, 0), np.where(valid, found_len, 0))
    return _string(offsets, data, ascii_only, valid)


def _priorities(w: Window, found_pos: np.ndarray, found_len: np.ndarray) -> pa.Array:
    """The ``priority`` column: each ``_SYS_MSG_PRIORITY_`` value as Java's ``Integer.parseInt`` reads it."""
    values, status = K.parse_int32(w.buf, found_pos, found_len)
    for i in np.flatnonzero(status == K.INT_OTHER).tolist():  # digits of other scripts (rare): Python reads them
        p, n = int(found_pos[i]), int(found_len[i])
        number = props.parse_java_int(bytes(w.buf[p:p + n]).decode("utf-8", "replace"))
        status[i] = K.INT_NONE if number is None else K.INT_OK
        values[i] = 0 if number is None else number
    ok = status == K.INT_OK
    return pa.Array.from_buffers(pa.int32(), len(values), [_validity(ok), pa.py_buffer(values)])


def _property_columns(w: Window, rows: np.ndarray, parsed: tuple, wanted: set[str]) -> dict[str, pa.Array] | None:
    """``properties``, ``tags``, ``keys``, ``uniqKey``, ``priority``, ``liteTopic`` from the kernel's split;
    ``None`` on invalid UTF-8."""
    map_off, key_off, key_data, val_off, val_data, ascii_only, fpos, flen = parsed
    out: dict[str, pa.Array] = {}
    if "properties" in wanted:
        keys = _string(key_off, key_data, ascii_only)
        values = _string(val_off, val_data, ascii_only)
        if keys is None or values is None:
            return None
        out["properties"] = pa.MapArray.from_arrays(from_numpy(map_off), keys, values)
    if "tags" in wanted:
        out["tags"] = _named_value(w, fpos[NAMED_TAGS], flen[NAMED_TAGS])
    if "uniqKey" in wanted:
        out["uniqKey"] = _named_value(w, fpos[NAMED_UNIQ], flen[NAMED_UNIQ])
    if "liteTopic" in wanted:
        out["liteTopic"] = _named_value(w, fpos[NAMED_LITE], flen[NAMED_LITE])
    if "priority" in wanted:
        out["priority"] = _priorities(w, fpos[NAMED_PRIORITY], flen[NAMED_PRIORITY])
    if "keys" in wanted:
        list_off, kp, kl = K.split_keys(w.buf, fpos[NAMED_KEYS], flen[NAMED_KEYS])
        items = _string(*K.gather(w.buf, kp, kl))
        out["keys"] = None if items is None else pa.ListArray.from_arrays(from_numpy(list_off), items)
    extra = _extra_names(wanted)
    if extra:
        first = _names_to_find(bool(wanted & _NAMED_ON_REQUEST), extra)[2]
        for k, name in enumerate(extra):
            out[PROPERTY_PREFIX + name] = _named_value(w, fpos[first + k], flen[first + k])
    if any(v is None for v in out.values()):
        return None
    return out


def _property_columns_slow(w: Window, rows: np.ndarray, wanted: set[str]) -> dict[str, pa.Array]:
    """The same columns through the object API's parser (for batches with invalid UTF-8)."""
    pos = w.i64[K.I64_PROPS_POS][rows].tolist()
    length = w.i64[K.I64_PROPS_LEN][rows].tolist()
    parsed = [props.parse_properties(bytes(w.buf[p:p + n]).decode("utf-8", "replace")) for p, n in zip(pos, length)]
    out: dict[str, pa.Array] = {}
    if "properties" in wanted:
        out["properties"] = pa.array([list(d.items()) for d in parsed], SCHEMA.field("properties").type)
    if "tags" in wanted:
        out["tags"] = pa.array([d.get(props.TAGS) for d in parsed], pa.string())
    if "uniqKey" in wanted:
        out["uniqKey"] = pa.array([d.get(props.UNIQ_KEY) for d in parsed], pa.string())
    if "priority" in wanted:
        out["priority"] = pa.array([props.priority_of(d) for d in parsed], pa.int32())
    if "liteTopic" in wanted:
        out["liteTopic"] = pa.array([props.lite_topic_of(d) for d in parsed], pa.string())
    if "keys" in wanted:
        out["keys"] = pa.array([[k for k in d.get(props.KEYS, "").split(props.KEY_SEPARATOR) if k] for d in parsed],
                               pa.list_(pa.string()))
    for name in _extra_names(wanted):
        out[PROPERTY_PREFIX + name] = pa.array([d.get(name) for d in parsed], pa.string())
    return out


def compressed_rows(w: Window, rows: np.ndarray) -> np.ndarray:
    """Indices into ``rows`` of the messages whose SYSFLAG marks the body compressed."""
    return np.flatnonzero(w.i32[K.I32_SYS_FLAG][_sel(rows)] & L.COMPRESSED)


def decompress_row(w: Window, row: int, max_body: int) -> bytes | np.ndarray | BodyError:
    """The decompressed body of the message ``row`` of the window, or why it does not decompress."""
    p, n = int(w.i64[K.I64_BODY_POS][row]), int(w.i64[K.I64_BODY_LEN][row])
    code = (int(w.i32[K.I32_SYS_FLAG][row]) & L.COMPRESSION_MASK) >> L.COMPRESSION_SHIFT
    try:
        return body_decompressor_of(code)(memoryview(w.buf)[p:p + n], max_body)
    except BodyDecompressionError as exc:
        return BodyError(str(exc))


def compression_codes(w: Window, rows: np.ndarray) -> np.ndarray:
    """The compression type code (SYSFLAG bits 8-10) of the messages ``rows``."""
    return (w.i32[K.I32_SYS_FLAG][rows] & L.COMPRESSION_MASK) >> L.COMPRESSION_SHIFT


def body_decompressor_of(code: int):
    """The decompressor (see :func:`rmqformats.compression.body_decompressor`) of compression type ``code``."""
    fn = DECOMPRESSORS.get(code)
    return fn if fn is not None else body_decompressor(f"unknown({code})")


class BodyError(str):
    """Why a compressed body does not decompress (the ``bodyError`` column's text)."""


def decompression_error(w: Window, row: int, reason: str) -> DecompressionError:
    """The typed error of a body that does not decompress: segment file, record position, reason."""
    return DecompressionError(w.path, w.file_pos + int(w.i64[K.I64_POS][row]), reason)


def _bodies(w: Window, rows: np.ndarray, decompress_bodies: bool, max_body: int,
            decoded: list | None = None) -> tuple[pa.Array, list[BodyError | None] | None]:
    """The ``body`` column: stored bytes, decompressed by SYSFLAG when asked; and the per-row decompression errors.

    ``decoded`` holds, per row, what :func:`decompress_row` gave for a
    compressed body (``None`` for the others), when the caller decompressed
    already. A body that does not decompress keeps its stored bytes; its row
    of the returned list (``None`` when every body decompressed) says why.
    """
    sel = _sel(rows)
    pos = w.i64[K.I64_BODY_POS][sel]
    length = w.i64[K.I64_BODY_LEN][sel]
    compressed = compressed_rows(w, rows) if decompress_bodies else np.empty(0, np.int64)
    if len(compressed) == 0:
        offsets, data, _ = K.gather(w.buf, pos, length)
        return pa.Array.from_buffers(pa.binary(), len(rows), [None, pa.py_buffer(offsets), pa.py_buffer(data)]), None
    # Decompress the compressed bodies in Python (one library call each), then copy the stored
    # bodies in one compiled pass and the decompressed ones into their places.
    idx = compressed.tolist()
    plain = [decoded[i] if decoded is not None else decompress_row(w, int(rows[i]), max_body) for i in idx]
    errors: list[BodyError | None] | None = None
    bad = [k for k, b in enumerate(plain) if isinstance(b, BodyError)]
    if bad:  # kept as stored, with the reason
        errors = [None] * len(rows)
        for k in bad:
            errors[idx[k]] = plain[k]
        failed = set(bad)
        idx = [i for k, i in enumerate(idx) if k not in failed]
        plain = [b for k, b in enumerate(plain) if k not in failed]
    sizes = length.copy()
    plain_sizes = np.fromiter(map(len, plain), np.int64, len(plain))
    sizes[idx] = plain_sizes
    skip = np.zeros(len(rows), np.bool_)
    skip[idx] = True
    if len(rows) == 1 and skip[0]:  # one body: the decompressed bytes are the column's data, not copied
        offsets = np.array([0, sizes[0]], np.int64)
        if offsets[-1] > MAX_COLUMN_BYTES:
            raise OverflowError("bodies of one batch exceed 2 GiB")
        return pa.Array.from_buffers(pa.binary(), 1, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                       pa.py_buffer(plain[0])]), errors
    offsets = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    if offsets[-1] > MAX_COLUMN_BYTES:
        raise OverflowError("bodies of one batch exceed 2 GiB")  # the caller splits the batch
    data = np.empty(int(offsets[-1]), np.uint8)
    K.gather_into(w.buf, pos, length, skip, offsets, data)
    if int(plain_sizes.sum()) <= _JOINED_BODIES:  # the usual case: one join, one compiled copy
        starts = np.zeros(len(plain), np.int64)
        np.cumsum(plain_sizes[:-1], out=starts[1:])
        K.scatter(np.frombuffer(b"".join(plain), np.uint8), starts, plain_sizes, offsets[idx], data)
    else:  # large bodies: each copied into place, never all twice
        for i, b in zip(idx, plain):
            if len(b):
                data[offsets[i]:offsets[i + 1]] = np.frombuffer(b, np.uint8)
    return pa.Array.from_buffers(pa.binary(), len(rows), [None, pa.py_buffer(offsets.astype(np.int32)),
                                                           pa.py_buffer(data)]), errors


#: Decompressed bodies of a batch up to this many bytes are joined into one buffer and copied into
#: the column in one compiled pass; larger ones are copied one by one (no second copy of them all).
_JOINED_BODIES = 16 << 20


def _body_errors(w: Window, rows: np.ndarray, max_body: int) -> list[BodyError | None] | None:
    """The per-row decompression errors alone (for ``bodyError`` without ``body``)."""
    errors = None
    for i in compressed_rows(w, rows).tolist():
        b = decompress_row(w, int(rows[i]), max_body)
        if isinstance(b, BodyError):
            if errors is None:
                errors = [None] * len(rows)
            errors[i] = b
    return errors


#: Compression type code -> its decompressor (type 0, "unspecified", is zlib).
DECOMPRESSORS = {code: body_decompressor("zlib" if name == "unspecified" else name)
                  for code, name in L.COMPRESSION_NAMES.items()}


def decompressed_runs(w: Window, rows: np.ndarray, compressed: np.ndarray, *, max_body: int, want_body: bool,
                      bound: int, stop_at_bad_body: bool = False) -> Iterator[tuple[int, int, list]]:
    """The ``rows`` (of which those at ``compressed`` hold compressed bodies) in runs whose bodies, after
    decompression, stay under ``bound`` bytes (a run of one row may pass it): ``(start, stop, decoded)``
    for ``rows[start:stop]``, ``decoded`` holding each row's decompressed body (its :class:`BodyError`
    where it does not decompress; ``None`` for a row not compressed, and for every row unless
    ``want_body``), for :func:`build`.

    Bodies are decompressed one at a time, in order, and a run is handed
    on as soon as it is full, so the bodies held are one run's whatever the
    compression ratio. With ``stop_at_bad_body`` a body that does not
    decompress raises :class:`DecompressionError` instead.
    """
    # Only the compressed rows are visited one by one (their fields taken as lists once); between
    # them the bound is tested on the running total of the stored sizes, and where it is reached,
    # the row is found by a binary search.
    n = len(rows)
    total = np.zeros(n + 1, np.int64)
    np.cumsum(w.i64[K.I64_BODY_LEN][rows], out=total[1:])
    picked = rows[compressed]
    at_total = total[compressed].tolist()  # stored bytes before each compressed row
    stored = w.i64[K.I64_BODY_LEN][picked].tolist()
    where = w.i64[K.I64_BODY_POS][picked].tolist()
    known = DECOMPRESSORS.get
    decompressors = [known(code) or body_decompressor_of(code) for code in compression_codes(w, picked).tolist()]
    view = memoryview(w.buf)
    start = 0  # first row of the run being filled
    held = 0  # body bytes of rows[start:at], always below the bound here
    at = 0  # next row to account for
    base = 0  # stored bytes before row ``at`` (total[at])
    decoded: dict[int, object] = {}  # row index -> decompressed body (or its BodyError) in the run

    def run(stop: int) -> tuple[int, int, list]:
        """The run ``rows[start:stop]`` with its bodies, which ``decoded`` then holds no more."""
        part: list = [None] * (stop - start)
        for i, value in decoded.items():
            part[i - start] = value
        decoded.clear()
        return start, stop, part

    for i, c in enumerate([*compressed.tolist(), n]):
        upto = at_total[i] if c < n else int(total[n])
        while at < c:  # stored bodies rows[at:c]
            if held + upto - base < bound:
                held += upto - base
                at, base = c, upto
                break
            end = int(np.searchsorted(total, bound - held + base))  # the row reaching it is end - 1
            yield run(end)
            start = at = end
            held, base = 0, int(total[end])
        if c == n:
            break
        p = where[i]
        try:
            value = decompressors[i](view[p:p + stored[i]], max_body)
            size = len(value)
            if not want_body:
                value = None  # only whether it decompresses was needed
        except BodyDecompressionError as exc:
            if stop_at_bad_body:
                raise decompression_error(w, int(rows[c]), str(exc)) from None
            value = BodyError(str(exc))
            size = stored[i]  # kept as stored
        decoded[c] = value
        value = None
        held += size
        at, base = c + 1, upto + stored[i]
        if held >= bound:  # full: handed on now, so that no later body is held beside it
            yield run(at)
            start, held = at, 0
    if start < n:
        yield run(n)


def build(w: Window, rows: np.ndarray, columns: tuple[str, ...], decompress_bodies: bool = True,
          max_body: int = DEFAULT_MAX_BODY_SIZE, decoded: list | None = None) -> pa.RecordBatch:
    """A record batch of ``columns`` for the messages ``rows`` of the window.

    ``decoded``: the compressed bodies already decompressed (see :func:`_bodies`).
    """
    wanted = set(columns)
    arrays: dict[str, pa.Array] = {}
    i32, i64 = w.i32, w.i64
    m = len(rows)
    sel = _sel(rows)
    if "commitLogOffset" in wanted:
        arrays["commitLogOffset"] = from_numpy(i64[K.I64_POS][sel] + w.base)
    for name, k in _I32.items():
        if name in wanted:
            arrays[name] = from_numpy(_pick(i32[k], rows))
    for name, k in _I64.items():
        if name in wanted:
            arrays[name] = from_numpy(_pick(i64[k], rows))
    for name, k in _TIMES.items():
        if name in wanted:
            arrays[name] = from_numpy(_pick(i64[k], rows), TIMESTAMP)
    if "bornHost" in wanted:
        v6 = (i32[K.I32_SYS_FLAG][sel] & L.BORN_V6) != 0
        arrays["bornHost"] = _text(*K.format_hosts(w.buf, i64[K.I64_BORN_ADDR][sel], v6, i32[K.I32_BORN_PORT][sel]))
    store_v6 = None
    if "storeHost" in wanted or "msgId" in wanted:
        store_v6 = (i32[K.I32_SYS_FLAG][sel] & L.STORE_V6) != 0
    if "storeHost" in wanted:
        arrays["storeHost"] = _text(*K.format_hosts(w.buf, i64[K.I64_STORE_ADDR][sel], store_v6,
                                                    i32[K.I32_STORE_PORT][sel]))
    if "msgId" in wanted:
        arrays["msgId"] = _text(*K.format_msg_ids(w.buf, i64[K.I64_STORE_ADDR][sel], store_v6,
                                                  i32[K.I32_STORE_PORT][sel], i64[K.I64_PHYSICAL][sel]))
    if "topic" in wanted:
        arrays["topic"] = _text_slices(w, i64[K.I64_TOPIC_POS][sel], i64[K.I64_TOPIC_LEN][sel])
    if "propertiesString" in wanted:
        arrays["propertiesString"] = _text_slices(w, i64[K.I64_PROPS_POS][sel], i64[K.I64_PROPS_LEN][sel])
    if wanted & _FROM_PROPERTIES or _extra_names(wanted):
        cols = _property_columns(w, rows, parse_properties(w, rows, wanted), wanted)
        arrays.update(cols if cols is not None else _property_columns_slow(w, rows, wanted))
    errors = None
    if "body" in wanted:
        arrays["body"], errors = _bodies(w, rows, decompress_bodies, max_body, decoded)
    elif "bodyError" in wanted and decompress_bodies:
        if decoded is None:
            errors = _body_errors(w, rows, max_body)
        elif any(isinstance(v, BodyError) for v in decoded):
            errors = [v if isinstance(v, BodyError) else None for v in decoded]
    if "bodyError" in wanted:
        arrays["bodyError"] = pa.nulls(m, pa.string()) if errors is None else pa.array(errors, pa.string())
    if "segment" in wanted:
        arrays["segment"] = _text(*K.repeat_string(np.frombuffer(w.name.encode(), np.uint8), m))
    return pa.RecordBatch.from_arrays([arrays[c] for c in columns], schema=pa.schema([field(c) for c in columns]))


def body_crc_mismatch(w: Window, rows: np.ndarray) -> int:
    """Index in ``rows`` of the first message whose BODYCRC does not match its body, or -1."""
    return first_body_mismatch(w.buf, w.i64[K.I64_BODY_POS][rows], w.i64[K.I64_BODY_LEN][rows],
                               w.i32[K.I32_BODY_CRC][rows])


def record_crc_mismatch(w: Window, rows: np.ndarray, parsed: tuple) -> int:
    """Index in ``rows`` of the first message the broker's ``forceVerifyPropCRC`` check fails, or -1.

    Its bytes (but the reserved tail) against its ``__CRC32#`` property, read
    as the broker reads it (:func:`rmqformats.properties.broker_crc32_property`);
    a message without the property fails.
    """
    fpos, flen = parsed[6][NAMED_CRC], parsed[7][NAMED_CRC]
    size = w.i32[K.I32_SIZE][rows]
    reserved = props.CRC32_RESERVED
    missing = np.flatnonzero(fpos < 0)
    first_missing = int(missing[0]) if len(missing) else -1
    buf = memoryview(w.buf)
    start = w.i64[K.I64_POS][rows]
    for j in range(len(rows) if first_missing < 0 else first_missing):
        p = int(start[j])
        value = bytes(buf[int(fpos[j]):int(fpos[j]) + int(flen[j])]).decode("utf-8", "replace")
        expected = props.broker_crc32_property(value)
        if expected is None or int(size[j]) < reserved \
                or expected != zlib.crc32(buf[p:p + int(size[j]) - reserved]) & 0x7FFFFFFF:
            return j
    return first_missing
