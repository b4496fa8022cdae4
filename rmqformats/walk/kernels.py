"""Compiled loops of the columnar decoder (numba): record boundaries, properties, hosts, ids, gathers.

Each kernel works on a window of a segment file held in a ``uint8`` array
and on positions relative to that window. The record walk repeats the
broker's ``checkMessageAndReturnSize`` structure checks; the object API's
messages are made from its rows (:mod:`rmqformats.walk.record`), and
:func:`check_record` says why a check rejects a record (the typed errors are
worded from its answer); everything else (the Arrow arrays,
decompression, record CRCs, error texts) stays in Python, where it costs per
batch or per rare record, not per message. Body CRCs are checked by :mod:`.crc`.

The walk of DLedger entries (:func:`walk_entries`) lives here too and decodes
each entry's message with the same :func:`decode_record`, inlined: numba's
cache keys each module's machine code on that module's source only, so a
kernel in another file would keep the old decoder after it changes. That is
why this module is one piece past 800 lines.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..jit import jit_options
from . import layout as L

# Constants are module globals so that numba folds them into the machine code.
_HEADER = L.HEADER
_POS_BODY_CRC = L.POS_BODY_CRC
_POS_QUEUE_ID = L.POS_QUEUE_ID
_POS_FLAG = L.POS_FLAG
_POS_QUEUE_OFFSET = L.POS_QUEUE_OFFSET
_POS_PHYSICAL = L.POS_PHYSICAL
_POS_SYS_FLAG = L.POS_SYS_FLAG
_POS_BORN_TS = L.POS_BORN_TS
_POS_BORN_HOST = L.POS_BORN_HOST
_ADDRESS_V4 = L.ADDRESS_V4
_ADDRESS_V6 = L.ADDRESS_V6
_PORT_WIDTH = L.PORT_WIDTH
_STORE_TS_WIDTH = L.STORE_TS_WIDTH
_REL_RECONSUME = L.REL_RECONSUME
_REL_PREPARED = L.REL_PREPARED
_REL_LEN_BODY = L.REL_LEN_BODY
_TAIL_WIDTH = L.TAIL_WIDTH
_LEN_TOPIC_V1 = L.LEN_TOPIC_V1
_LEN_TOPIC_V2 = L.LEN_TOPIC_V2
_LEN_PROPERTIES = L.LEN_PROPERTIES
_MAGIC_V1 = L.MAGIC_V1
_MAGIC_V2 = L.MAGIC_V2
_MAGIC_BLANK = L.MAGIC_BLANK
_BORN_V6 = L.BORN_V6
_STORE_V6 = L.STORE_V6

# Why the record walk stopped.
STOP_FULL = 0        # the output arrays are full
STOP_WINDOW = 1      # the next record does not lie wholly in the window, and the file goes on
STOP_EOF = 2         # exactly at the end of the file
STOP_HEADER_CUT = 3  # fewer bytes than a record header before the end of the file
STOP_BLANK = 4       # a BLANK record
STOP_ZERO = 5        # the zero-filled tail (TOTALSIZE and MAGICCODE both 0)
STOP_BAD_MAGIC = 6   # a magic code that is neither a message version nor BLANK
STOP_BAD_RECORD = 7  # a message record the broker's check rejects (size, lengths, cut by the file end)
STOP_LIMIT = 8       # the next record starts at or after ``stop_at`` (the end of a byte range)
STOP_FRONTIER = 9    # a valid record followed by zero fill or the file's end: checked more strictly by the caller

# Why :func:`check_record` rejects a record (its second value says more, as noted).
REC_OK = 0              # a message record whose lengths agree (value: TOTALSIZE)
REC_HEADER_CUT = 1      # fewer bytes than a record header before the limit (value: the bytes left)
REC_BAD_MAGIC = 2       # a magic code that is not a message version (value: the magic code)
REC_SMALL = 3           # TOTALSIZE smaller than a record header (value: TOTALSIZE)
REC_PAST_END = 4        # TOTALSIZE runs past the limit (value: the bytes left)
REC_NEGATIVE_TOPIC = 5  # a negative TOPICLENGTH (value: it)
REC_LENGTHS = 6         # TOTALSIZE disagrees with the field lengths (value: the fields' bytes, -1 when a
                        # length runs past TOTALSIZE or a field past the limit)

# DLedger entries: a header (``DLedgerEntryCoder``), then one message record.
_ENTRY_POS_SIZE = L.ENTRY_POS_SIZE
_ENTRY_POS_INDEX = L.ENTRY_POS_INDEX
_ENTRY_POS_TERM = L.ENTRY_POS_TERM
_ENTRY_POS_POS = L.ENTRY_POS_POS
_ENTRY_POS_CHANNEL = L.ENTRY_POS_CHANNEL
_ENTRY_POS_CHAIN_CRC = L.ENTRY_POS_CHAIN_CRC
_ENTRY_POS_BODY_CRC = L.ENTRY_POS_BODY_CRC
_ENTRY_POS_LEN_BODY = L.ENTRY_POS_LEN_BODY
_ENTRY_PREFIX = L.ENTRY_PREFIX
_ENTRY_HEADER = L.ENTRY_HEADER
_ENTRY_MAGIC = L.ENTRY_MAGIC
_ENTRY_MAGIC_BLANK = L.ENTRY_MAGIC_BLANK
_I64_MAX = np.iinfo(np.int64).max

# Why the entry walk stopped (:func:`walk_entries`), in the order DLedger's recovery tests an entry.
ESTOP_FULL = 0          # the output arrays are full
ESTOP_WINDOW = 1        # the next entry does not lie wholly in the window, and the file goes on
ESTOP_EOF = 2           # exactly at the end of the file
ESTOP_SHORT = 3         # fewer bytes than magic code and size before the end of the file
ESTOP_BLANK = 4         # the BLANK filler
ESTOP_SIZE_ZERO = 5     # an entry size of 0 (the zero-filled tail when the magic code is 0 too)
ESTOP_HEADER_CUT = 6    # fewer bytes than an entry header before the end of the file
ESTOP_BAD_POSITION = 7  # the pos field is not the entry's position
ESTOP_BAD_BODY_SIZE = 8  # the body length is not the size less the header
ESTOP_PAST_END = 9      # the entry runs past the end of the file
ESTOP_BAD_MAGIC = 10    # a magic code other than an entry's
ESTOP_INDEX_GAP = 11    # the index does not follow the previous entry's
ESTOP_TERM_DECREASE = 12  # the term is smaller than the previous entry's
ESTOP_BAD_RECORD = 13   # the message record inside is not one the broker's check takes

# Rows of the walk's ``e64`` entry matrix (one column per entry, and one for the entry it stopped at).
E_MAGIC, E_SIZE, E_INDEX, E_TERM, E_POS, E_CHANNEL, E_CHAIN_CRC, E_BODY_CRC, E_LEN_BODY, E_AT = range(10)
N_E = 10

# Rows of the ``i32`` and ``i64`` output matrices (one contiguous row per field).
I32_SIZE, I32_BODY_CRC, I32_QUEUE_ID, I32_FLAG, I32_SYS_FLAG, I32_BORN_PORT, I32_STORE_PORT, \
    I32_RECONSUME, I32_VERSION = range(9)
N_I32 = 9
I64_POS, I64_QUEUE_OFFSET, I64_PHYSICAL, I64_BORN_TS, I64_STORE_TS, I64_PREPARED, I64_BODY_POS, \
    I64_BODY_LEN, I64_TOPIC_POS, I64_TOPIC_LEN, I64_PROPS_POS, I64_PROPS_LEN, I64_BORN_ADDR, \
    I64_STORE_ADDR = range(14)
N_I64 = 14

_JIT = jit_options(__file__, nogil=True, boundscheck=False)
# Unsigned positions: numba adds no negative-index wraparound to indexing with them.
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing
_HEX_LOWER = np.frombuffer(b"0123456789abcdef", np.uint8).copy()
_HEX_UPPER = np.frombuffer(b"0123456789ABCDEF", np.uint8).copy()
#: Decimal text of each byte value, for IPv4 addresses.
_OCTET_TEXT = np.array([list(str(b).encode().ljust(3, b"\0")) for b in range(256)], np.uint8)
_OCTET_LEN = np.array([len(str(b)) for b in range(256)], np.int64)
_HOST_CACHE_BITS = 6
_HOST_CACHE = 1 << _HOST_CACHE_BITS
#: Slots a host's text is looked for in, from its own.
_HOST_PROBES = 4


def _big_endian_load(bits: int, signed: bool):
    """An intrinsic reading a ``bits``-wide big-endian integer at any byte position of a uint8 array.

    One unaligned load and a byte swap, where a loop of byte reads and
    shifts would cost a negative-index check per byte.
    """
    @intrinsic
    def load(typingctx, arr, pos):
        def codegen(context, builder, signature, args):
            a = context.make_array(signature.args[0])(context, builder, args[0])
            at = context.cast(builder, args[1], signature.args[1], types.intp)
            ity = ir.IntType(bits)
            ptr = builder.bitcast(builder.gep(a.data, [at]), ity.as_pointer())
            value = builder.bswap(builder.load(ptr, align=1))
            if bits == 64:
                return value
            return (builder.sext if signed else builder.zext)(value, ir.IntType(64))
        return types.int64(arr, pos), codegen
    return load


_s16 = _big_endian_load(16, True)
_s32 = _big_endian_load(32, True)
_u32 = _big_endian_load(32, False)
_s64 = _big_endian_load(64, True)


@intrinsic
def _le64(typingctx, arr, pos):
    """Eight bytes at any position of a uint8 array as a little-endian uint64 (one unaligned load)."""
    def codegen(context, builder, signature, args):
        a = context.make_array(signature.args[0])(context, builder, args[0])
        at = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(a.data, [at]), ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)
    return types.uint64(arr, pos), codegen


@intrinsic
def _ctz(typingctx, x):
    """Trailing zero bits of a non-zero uint64."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.uint64(x), codegen


@intrinsic
def _st64(typingctx, arr, pos, value):
    """Store a uint64 at any position of a uint8 array, little-endian (one unaligned store)."""
    def codegen(context, builder, signature, args):
        a = context.make_array(signature.args[0])(context, builder, args[0])
        at = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(a.data, [at]), ir.IntType(64).as_pointer())
        builder.store(args[2], ptr, align=1)
        return context.get_dummy_value()
    return types.void(arr, pos, types.uint64), codegen


@intrinsic
def _bswap64(typingctx, x):
    """The bytes of a uint64 in the reverse order."""
    def codegen(context, builder, signature, args):
        return builder.bswap(args[0])
    return types.uint64(x), codegen


_NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)
_SIXES = np.uint64(0x0606060606060606)
_ZEROS_TEXT = np.uint64(0x3030303030303030)


@njit(inline="always", **_JIT)
def _hex8(v):
    """The 8 upper-case hex digits of the low 32 bits of ``v``, most significant first, as a uint64 whose
    little-endian bytes are the text (eight digits at once, no table)."""
    x = np.uint64(v) & np.uint64(0xFFFFFFFF)
    x = ((x & np.uint64(0xFFFF0000)) << np.uint64(16)) | (x & np.uint64(0xFFFF))
    x = ((x & np.uint64(0x0000FF000000FF00)) << np.uint64(8)) | (x & np.uint64(0x000000FF000000FF))
    x = ((x & np.uint64(0x00F000F000F000F0)) << np.uint64(4)) | (x & np.uint64(0x000F000F000F000F))
    # Each byte holds one digit value, the most significant in the highest byte; 10-15 become A-F.
    letters = ((x + _SIXES) >> np.uint64(4)) & _ONES
    return _bswap64(x + _ZEROS_TEXT + letters * np.uint64(7))


_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_THREES = np.uint64(0x0303030303030303)
_TWOS = np.uint64(0x0202020202020202)


@njit(inline="always", **_JIT)
def _next_separator(buf, j, e):
    """The first position in ``[j, e)`` holding U+0001 or U+0002 (``e`` when none); eight bytes a step."""
    while j + _U8 <= e:
        x = _le64(buf, j)
        hit = (x - _THREES) & ~x & _HIGHS  # the lowest flagged byte is the first byte below 3
        if hit:
            k = j + (_ctz(hit) >> np.uint64(3))
            if buf[k] != 0:
                return k
            j = k + _U1  # a NUL byte is an ordinary character here
        else:
            j += _U8
    while j < e:
        b = buf[j]
        if b == 1 or b == 2:
            return j
        j += _U1
    return e


@njit(inline="always", **_JIT)
def _next_pair_end(buf, j, e):
    """The first position in ``[j, e)`` holding U+0002 (``e`` when none); eight bytes a step."""
    while j + _U8 <= e:
        v = _le64(buf, j) ^ _TWOS
        hit = (v - _ONES) & ~v & _HIGHS  # the lowest flagged byte is the first byte equal to 2
        if hit:
            return j + (_ctz(hit) >> np.uint64(3))
        j += _U8
    while j < e:
        if buf[j] == 2:
            return j
        j += _U1
    return e


@njit(inline="always", **_JIT)
def _s8(b, p):
    v = np.int64(b[p])
    return v - ((v >> 7) << 8)


@njit(inline="always", **_JIT)
def decode_record(buf, pos, rend, size, magic, n, i32, i64):
    """Decode the message record at ``pos`` (TOTALSIZE ``size``, ending at ``rend``, message magic ``magic``)
    into column ``n`` of ``i32``/``i64``: the one decoder of message records, inlined into every walk.

    Returns ``False`` where the broker's ``checkMessageAndReturnSize`` length
    checks reject the record (the column then holds nothing of use). Every
    read stays inside ``[pos, rend)``, which the caller has checked lies in ``buf``.
    """
    # Every read below stays inside [pos, rend): a record whose fields run
    # past its TOTALSIZE is rejected, as the broker's length check does.
    p = pos + _POS_BORN_HOST
    if p > rend:
        return False
    sys_flag = _s32(buf, pos + _POS_SYS_FLAG)
    born_w = _ADDRESS_V6 if sys_flag & _BORN_V6 else _ADDRESS_V4
    store_w = _ADDRESS_V6 if sys_flag & _STORE_V6 else _ADDRESS_V4
    born_addr = p
    p += born_w + _PORT_WIDTH
    store_ts_pos = p
    p += _STORE_TS_WIDTH
    store_addr = p
    p += store_w + _PORT_WIDTH
    tail = p
    p += _TAIL_WIDTH
    if p > rend:
        return False
    len_body = _s32(buf, tail + _REL_LEN_BODY)
    body_pos = p
    body_len = 0
    if len_body > 0:
        body_len = len_body
        p += len_body
        if p > rend:
            return False
    v2 = magic == _MAGIC_V2
    if v2:
        if p + _LEN_TOPIC_V2 > rend:
            return False
        len_topic = _s16(buf, p)
        p += _LEN_TOPIC_V2
    else:
        if p + _LEN_TOPIC_V1 > rend:
            return False
        len_topic = _s8(buf, p)
        p += _LEN_TOPIC_V1
    if len_topic < 0:
        return False
    topic_pos = p
    p += len_topic
    if p + _LEN_PROPERTIES > rend:
        return False
    len_props = _s16(buf, p)
    p += _LEN_PROPERTIES
    props_pos = p
    props_len = 0
    if len_props > 0:
        props_len = len_props
        p += len_props
    if p != rend:
        return False
    i32[I32_SIZE, n] = size
    i32[I32_BODY_CRC, n] = _s32(buf, pos + _POS_BODY_CRC)
    i32[I32_QUEUE_ID, n] = _s32(buf, pos + _POS_QUEUE_ID)
    i32[I32_FLAG, n] = _s32(buf, pos + _POS_FLAG)
    i32[I32_SYS_FLAG, n] = sys_flag
    i32[I32_BORN_PORT, n] = _s32(buf, born_addr + born_w)
    i32[I32_STORE_PORT, n] = _s32(buf, store_addr + store_w)
    i32[I32_RECONSUME, n] = _s32(buf, tail + _REL_RECONSUME)
    i32[I32_VERSION, n] = 2 if v2 else 1
    i64[I64_POS, n] = pos
    i64[I64_QUEUE_OFFSET, n] = _s64(buf, pos + _POS_QUEUE_OFFSET)
    i64[I64_PHYSICAL, n] = _s64(buf, pos + _POS_PHYSICAL)
    i64[I64_BORN_TS, n] = _s64(buf, pos + _POS_BORN_TS)
    i64[I64_STORE_TS, n] = _s64(buf, store_ts_pos)
    i64[I64_PREPARED, n] = _s64(buf, tail + _REL_PREPARED)
    i64[I64_BODY_POS, n] = body_pos
    i64[I64_BODY_LEN, n] = body_len
    i64[I64_TOPIC_POS, n] = topic_pos
    i64[I64_TOPIC_LEN, n] = len_topic
    i64[I64_PROPS_POS, n] = props_pos
    i64[I64_PROPS_LEN, n] = props_len
    i64[I64_BORN_ADDR, n] = born_addr
    i64[I64_STORE_ADDR, n] = store_addr
    return True


@njit(**_JIT)
def walk_records(buf, start, end, at_eof, stop_at, cap, i32, i64, trusted=-1):
    """Walk the records of ``buf[start:end]`` and store the fields of each valid message.

    ``at_eof`` says that ``end`` is the end of the file (a record cut there is
    damage, not a window edge); the walk also stops before a record that
    starts at or after ``stop_at``. Returns ``(n, stop, pos)``: the number of
    messages stored in the first ``n`` columns of ``i32``/``i64``, why the walk
    stopped (``STOP_*``) and the window position of the record where it did.

    A record followed by an all-zero header or the end of the file may be
    one the broker is still copying in: the walk stops before it
    (``STOP_FRONTIER``) unless it starts at ``trusted``, the position the
    caller has checked.
    """
    pos = start
    n = 0
    while True:
        if pos >= stop_at:
            return n, STOP_LIMIT, pos
        if n == cap:
            return n, STOP_FULL, pos
        if pos == end:
            return n, (STOP_EOF if at_eof else STOP_WINDOW), pos
        if pos + _HEADER > end:
            return n, (STOP_HEADER_CUT if at_eof else STOP_WINDOW), pos
        size = _s32(buf, pos)
        magic = _s32(buf, pos + 4)
        if magic == _MAGIC_BLANK:
            return n, STOP_BLANK, pos
        if magic == 0 and size == 0:
            return n, STOP_ZERO, pos
        if magic != _MAGIC_V1 and magic != _MAGIC_V2:
            return n, STOP_BAD_MAGIC, pos
        if size < _HEADER:
            return n, STOP_BAD_RECORD, pos
        rend = pos + size
        if rend > end:
            return n, (STOP_BAD_RECORD if at_eof else STOP_WINDOW), pos
        if not decode_record(buf, pos, rend, size, magic, n, i32, i64):
            return n, STOP_BAD_RECORD, pos
        if pos != trusted:
            # One load of the next header, which the next step reads anyway: free on the clean path.
            if rend + _HEADER <= end:
                if _le64(buf, rend) == _U0:
                    return n, STOP_FRONTIER, pos
            elif at_eof:
                return n, STOP_FRONTIER, pos
            else:
                return n, STOP_WINDOW, pos
        n += 1
        pos = rend


@njit(**_JIT)
def records_at(buf, positions, ends, i32, i64, ok):
    """Decode the message record at each of ``positions`` of ``buf``, the one at ``positions[k]`` within
    ``buf[:ends[k]]``, as :func:`walk_records` takes a record it is told starts there (no frontier check).

    The fields of each record it accepts go to the next column of
    ``i32``/``i64``, in the order of ``positions``, and ``ok[k]`` is set; a
    position where no whole message record lies leaves ``ok[k]`` false.
    Returns how many records it stored.
    """
    n = 0
    for k in range(positions.shape[0]):
        ok[k] = False
        pos = positions[k]
        end = ends[k]
        if pos < 0 or pos + _HEADER > end:
            continue
        size = _s32(buf, pos)
        magic = _s32(buf, pos + 4)
        if (magic != _MAGIC_V1 and magic != _MAGIC_V2) or size < _HEADER or pos + size > end:
            continue
        if decode_record(buf, pos, pos + size, size, magic, n, i32, i64):
            ok[k] = True
            n += 1
    return n


@njit(**_JIT)
def store_times(buf, i64, n, target, out):
    """What :func:`time_bounds` keeps of the first ``n`` records :func:`walk_records` stored in ``i64`` (their
    fields in ``buf``): ``out[0]``, ``out[1]`` widened to their least and greatest STORETIMESTAMP, ``out[2]``
    added their records whose topic is ``target``."""
    t = target.shape[0]
    low = out[0]
    high = out[1]
    count = 0
    for k in range(n):
        ts = i64[I64_STORE_TS, k]
        if ts < low:
            low = ts
        if ts > high:
            high = ts
        if i64[I64_TOPIC_LEN, k] == t:
            p = i64[I64_TOPIC_POS, k]
            same = True
            for j in range(t):
                if buf[p + j] != target[j]:
                    same = False
                    break
            if same:
                count += 1
    out[0] = low
    out[1] = high
    out[2] += count


@njit(**_JIT)
def time_bounds(buf, start, end, at_eof, low, high, target, i32, i64, out):
    """:func:`walk_records`' walk of ``buf[start:end]``, keeping only what decides whether a segment can hold
    a store-time window: the least and greatest STORETIMESTAMP (``out[0]``, ``out[1]``, widened), the
    records whose topic is ``target`` (``out[2]``, added to) and whether a record's time lies in
    ``[low, high)`` (``out[3]`` set to 1, and the walk stops after that record's batch of rows).

    The records are those :func:`walk_records` takes, found by it (``i32``/``i64`` are its scratch
    columns, of any width), so the walk stops exactly where the decoding walk does. Returns ``(n, stop,
    pos)`` as :func:`walk_records` does, ``stop`` never ``STOP_FULL``; after a hit, ``STOP_LIMIT`` at the
    record to go on from.
    """
    pos = start
    total = 0
    cap = i32.shape[1]
    while True:
        n, stop, spos = walk_records(buf, pos, end, at_eof, end + 1, cap, i32, i64, -1)
        store_times(buf, i64, n, target, out)
        hit = False
        for k in range(n):
            ts = i64[I64_STORE_TS, k]
            if low <= ts < high:
                hit = True
                break
        total += n
        if hit:
            out[3] = 1
            return total, STOP_LIMIT, spos
        if stop != STOP_FULL:
            return total, stop, spos
        pos = spos


@njit(inline="always", **_JIT)
def entry_header(buf, pos, e64, n, whole):
    """Store the header fields of the DLedger entry at ``pos`` in column ``n`` of ``e64`` (rows ``E_*``): the
    magic code, size and position, and with ``whole`` the rest (``buf`` then holds the whole header).
    The one decoder of entry headers: the walk and the reading of one entry use it."""
    e64[E_MAGIC, n] = _s32(buf, pos)
    e64[E_SIZE, n] = _s32(buf, pos + _ENTRY_POS_SIZE)
    e64[E_AT, n] = pos
    if whole:
        e64[E_INDEX, n] = _s64(buf, pos + _ENTRY_POS_INDEX)
        e64[E_TERM, n] = _s64(buf, pos + _ENTRY_POS_TERM)
        e64[E_POS, n] = _s64(buf, pos + _ENTRY_POS_POS)
        e64[E_CHANNEL, n] = _s32(buf, pos + _ENTRY_POS_CHANNEL)
        e64[E_CHAIN_CRC, n] = _s32(buf, pos + _ENTRY_POS_CHAIN_CRC)
        e64[E_BODY_CRC, n] = _s32(buf, pos + _ENTRY_POS_BODY_CRC)
        e64[E_LEN_BODY, n] = _s32(buf, pos + _ENTRY_POS_LEN_BODY)


@njit(**_JIT)
def walk_entries(buf, start, end, file_end, base, cap, i32, i64, e64, last_index, last_term):
    """Walk the DLedger entries of ``buf[start:end]``, checked as ``DLedgerMmapFileStore.recover`` does,
    and decode the message record inside each with :func:`decode_record`.

    ``file_end`` is the window position of the end of the file (``end`` or
    beyond: the file goes on past the window), ``base`` the stream position
    of ``buf[0]``; ``last_index`` and ``last_term`` are those of the entry
    before ``start`` (-1 for none). Returns ``(n, stop, pos, last_index,
    last_term)``: ``n`` messages in the first columns of ``i32``/``i64`` and
    their entries' header fields in ``e64`` (rows ``E_*``; ``e64`` has
    ``cap + 1`` columns), why the walk stopped (``ESTOP_*``) and the window
    position of the entry where it did. Column ``n`` of ``e64`` holds the
    header fields of that entry that were read (magic code and size from
    ``ESTOP_BLANK`` on, all of them from ``ESTOP_BAD_POSITION`` on).
    """
    pos = start
    n = 0
    while True:
        if n == cap:
            return n, ESTOP_FULL, pos, last_index, last_term
        left = file_end - pos
        if left == 0:
            return n, ESTOP_EOF, pos, last_index, last_term
        if left < _ENTRY_PREFIX:
            return n, ESTOP_SHORT, pos, last_index, last_term
        if pos + min(_ENTRY_HEADER, left) > end:
            return n, ESTOP_WINDOW, pos, last_index, last_term
        entry_header(buf, pos, e64, n, False)
        magic = e64[E_MAGIC, n]
        size = e64[E_SIZE, n]
        if magic == _ENTRY_MAGIC_BLANK:
            return n, ESTOP_BLANK, pos, last_index, last_term
        if size == 0:
            return n, ESTOP_SIZE_ZERO, pos, last_index, last_term
        if left < _ENTRY_HEADER:
            return n, ESTOP_HEADER_CUT, pos, last_index, last_term
        entry_header(buf, pos, e64, n, True)
        index = e64[E_INDEX, n]
        term = e64[E_TERM, n]
        len_body = e64[E_LEN_BODY, n]
        if e64[E_POS, n] != base + pos:
            return n, ESTOP_BAD_POSITION, pos, last_index, last_term
        if len_body + _ENTRY_HEADER != size:
            return n, ESTOP_BAD_BODY_SIZE, pos, last_index, last_term
        if size > left:
            return n, ESTOP_PAST_END, pos, last_index, last_term
        if magic != _ENTRY_MAGIC:
            return n, ESTOP_BAD_MAGIC, pos, last_index, last_term
        if last_index != -1 and (last_index == _I64_MAX or index != last_index + 1):
            return n, ESTOP_INDEX_GAP, pos, last_index, last_term
        if term < last_term:
            return n, ESTOP_TERM_DECREASE, pos, last_index, last_term
        if pos + size > end:
            return n, ESTOP_WINDOW, pos, last_index, last_term
        # The message record fills the entry's body: its TOTALSIZE is the body length.
        p = pos + _ENTRY_HEADER
        if len_body < _HEADER:
            return n, ESTOP_BAD_RECORD, pos, last_index, last_term
        rsize = _s32(buf, p)
        rmagic = _s32(buf, p + 4)
        if (rmagic != _MAGIC_V1 and rmagic != _MAGIC_V2) or rsize != len_body \
                or not decode_record(buf, p, p + rsize, rsize, rmagic, n, i32, i64):
            return n, ESTOP_BAD_RECORD, pos, last_index, last_term
        last_index = index
        last_term = term
        n += 1
        pos += size


@njit(**_JIT)
def check_record(buf, pos, limit):
    """Why the message record at ``pos`` is rejected, checked against ``limit`` (the bytes that exist).

    The broker's ``checkMessageAndReturnSize`` structure checks, in the
    order it reads the fields: returns ``(REC_*, value)``. Fixed-width fields
    and length fields may lie past TOTALSIZE (then the lengths cannot add up
    to it) but not past ``limit``; a body, topic or properties length must
    stay within TOTALSIZE. A record :func:`walk_records` stores passes; a
    record it rejects gets its reason here.
    """
    if pos + _HEADER > limit:
        return REC_HEADER_CUT, limit - pos
    size = _s32(buf, pos)
    magic = _s32(buf, pos + 4)
    if magic != _MAGIC_V1 and magic != _MAGIC_V2:
        return REC_BAD_MAGIC, magic
    if size < _HEADER:
        return REC_SMALL, size
    rend = pos + size
    if rend > limit:
        return REC_PAST_END, limit - pos
    p = pos + _POS_BORN_HOST
    if p > limit:
        return REC_LENGTHS, -1
    sys_flag = _s32(buf, pos + _POS_SYS_FLAG)
    p += (_ADDRESS_V6 if sys_flag & _BORN_V6 else _ADDRESS_V4) + _PORT_WIDTH + _STORE_TS_WIDTH
    p += (_ADDRESS_V6 if sys_flag & _STORE_V6 else _ADDRESS_V4) + _PORT_WIDTH
    tail = p
    p += _TAIL_WIDTH
    if p > limit:
        return REC_LENGTHS, -1
    len_body = _s32(buf, tail + _REL_LEN_BODY)
    if len_body > 0:
        p += len_body
        if p > rend:
            return REC_LENGTHS, -1
    if magic == _MAGIC_V2:
        if p + _LEN_TOPIC_V2 > limit:
            return REC_LENGTHS, -1
        len_topic = _s16(buf, p)
        p += _LEN_TOPIC_V2
    else:
        if p + _LEN_TOPIC_V1 > limit:
            return REC_LENGTHS, -1
        len_topic = _s8(buf, p)
        p += _LEN_TOPIC_V1
    if len_topic < 0:
        return REC_NEGATIVE_TOPIC, len_topic
    p += len_topic
    if p > rend or p + _LEN_PROPERTIES > limit:
        return REC_LENGTHS, -1
    len_props = _s16(buf, p)
    p += _LEN_PROPERTIES
    if len_props > 0:
        p += len_props
        if p > rend:
            return REC_LENGTHS, -1
    if p != rend:
        return REC_LENGTHS, p - pos
    return REC_OK, size


@intrinsic
def _memcpy(typingctx, dst, o, src, p, n):
    """``dst[o:o+n] = src[p:p+n]`` as LLVM's memcpy (uint8 arrays; no checks)."""
    sig = types.void(dst, o, src, p, n)

    def codegen(context, builder, signature, args):
        d_ty, o_ty, s_ty, p_ty, n_ty = signature.args
        d = context.make_array(d_ty)(context, builder, args[0])
        s = context.make_array(s_ty)(context, builder, args[2])
        at = [context.cast(builder, v, t, types.intp) for v, t in ((args[1], o_ty), (args[3], p_ty), (args[4], n_ty))]
        cgutils.raw_memcpy(builder, builder.gep(d.data, [at[0]]), builder.gep(s.data, [at[1]]), at[2], 1)
        return context.get_dummy_value()

    return sig, codegen


@njit(inline="always", **_JIT)
def _copy(dst, o, src, p, n):
    # One memcpy per string: several times faster than a compiled byte loop over short strings.
    _memcpy(dst, o, src, p, n)


@njit(**_JIT)
def find_record(buf, start, end, at_eof, stop_at, base, i32, i64):
    """The first position in ``[start, stop_at)`` where a message record starts, for a scan that begins mid-file.

    A position qualifies when its magic code is a message version, the
    PHYSICALOFFSET it stores equals its own commit-log offset (``base`` is
    that of ``buf[0]``) and the whole record passes the walk's checks.
    Returns ``(pos, found)``: ``found`` is 1 for a record, 0 when there is
    none before ``stop_at``, and -1 when a candidate at ``pos`` runs past the
    window (read more from ``pos`` and call again).
    """
    p = start
    need = _POS_PHYSICAL + 8
    last = min(stop_at, end - (_HEADER if at_eof else need))
    while p < last:
        # Zero runs (a preallocated tail) are passed eight positions a step: a record starting at
        # p..p+7 would have the first byte of its magic code in the eight zero bytes at p+4.
        if p + 12 <= end and _le64(buf, p + 4) == _U0:
            p += 8
            continue
        magic = _s32(buf, p + 4)
        if (magic == _MAGIC_V1 or magic == _MAGIC_V2) and p + need <= end \
                and _s64(buf, p + _POS_PHYSICAL) == base + p:
            n, stop, _ = walk_records(buf, p, end, at_eof, p + 1, 1, i32, i64, p)
            if n == 1:
                return p, 1
            if stop == STOP_WINDOW:
                return p, -1
        p += 1
    if not at_eof and last < stop_at:
        return last, -1
    return p, 0


@njit(**_JIT)
def gather_into(buf, pos, length, skip, offsets, data):
    """Copy ``buf[pos[i]:pos[i]+length[i]]`` to ``data[offsets[i]:]`` for the rows not marked in ``skip``."""
    for i in range(pos.shape[0]):
        if not skip[i] and length[i] > 0:
            _copy(data, offsets[i], buf, pos[i], length[i])


@njit(**_JIT)
def scatter(src, pos, length, dst_pos, data):
    """Copy ``src[pos[i]:pos[i]+length[i]]`` to ``data[dst_pos[i]:]`` for each ``i``."""
    for i in range(pos.shape[0]):
        if length[i] > 0:
            _copy(data, dst_pos[i], src, pos[i], length[i])


@njit(**_JIT)
def gather(buf, pos, length):
    """Concatenate ``buf[pos[i]:pos[i]+length[i]]``: (int32 offsets, uint8 data) of an Arrow binary array.

    A third value tells whether every byte is ASCII (then the data is valid
    UTF-8 without a further check).
    """
    m = pos.shape[0]
    offsets = np.empty(m + 1, np.int32)
    total = 0
    offsets[0] = 0
    for i in range(m):
        total += length[i]
        offsets[i + 1] = total
    data = np.empty(total, np.uint8)
    for i in range(m):
        if length[i] > 0:
            _copy(data, offsets[i], buf, pos[i], length[i])
    high = np.uint8(0)
    for j in range(np.uint64(total)):
        high |= data[j]
    return offsets, data, high < 128


@njit(**_JIT)
def equals_each(buf, pos, length, target):
    """Whether each slice ``buf[pos[i]:pos[i]+length[i]]`` equals ``target`` (bytes as uint8)."""
    m = pos.shape[0]
    out = np.zeros(m, np.bool_)
    t = target.shape[0]
    for i in range(m):
        if length[i] != t:
            continue
        p = pos[i]
        same = True
        for j in range(t):
            if buf[p + j] != target[j]:
                same = False
                break
        out[i] = same
    return out


@njit(**_JIT)
def split_properties(buf, pos, length, names, name_offsets, pairs):
    """Parse each properties string as ``MessageDecoder.string2messageProperties`` does.

    Pairs are separated by U+0002 (a trailing one or not), a name runs to its
    first U+0001, pairs with an empty name or value are dropped, and a
    repeated name keeps its first place and takes the last value (batch
    messages carry ``WAIT`` twice). Names are copied into the data buffer of
    an Arrow string array while the string is scanned; values are copied
    after, once the repeats are resolved. Returns ``(map offsets, key
    offsets, key data, value offsets, value data, ascii, found_pos,
    found_len)``: ``ascii`` says every byte was ASCII, and for each name of
    ``names`` (laid end to end, bounded by ``name_offsets``) the window
    position and length of its value per row (-1 when absent). Without
    ``pairs`` no name or value is copied: the key and value arrays come back
    empty (the map offsets still count the pairs), for a caller that wants
    the named values' places alone.
    """
    m = pos.shape[0]
    total = 0
    for i in range(m):
        total += length[i]
    cap = m + total // 4 + 1  # a pair takes 4 bytes at least: name, U+0001, value, U+0002
    map_off = np.empty(m + 1, np.int32)
    key_off = np.empty(cap + 1, np.int32)
    key_data = np.empty(total if pairs else 0, np.uint8)
    kpos = np.empty(cap, np.int64)
    vpos = np.empty(cap, np.int64)
    vlen = np.empty(cap, np.int64)
    nn = name_offsets.shape[0] - 1
    name_sigs = np.zeros(nn, np.uint64)
    for t in range(nn):
        for u in range(min(name_offsets[t + 1] - name_offsets[t], 8)):
            name_sigs[t] |= np.uint64(names[name_offsets[t] + u]) << np.uint64(8 * u)
    ksig = np.empty(cap, np.uint64)
    nbuf = np.uint64(buf.shape[0])
    found_pos = np.full((nn, m), -1, np.int64)
    found_len = np.zeros((nn, m), np.int64)
    k = 0          # pairs kept so far
    ko = _U0       # bytes of key_data used
    map_off[0] = 0
    key_off[0] = 0
    for i in range(m):
        first = k
        seen = _U0
        j = np.uint64(pos[i])
        e = j + np.uint64(length[i])
        while j < e:
            # one pair: the name up to the first U+0001, the value up to U+0002
            name_at = j
            j = _next_separator(buf, j, e)
            name_len = j - name_at
            if name_len == _U0 or j >= e or buf[j] != 1:
                j = _next_pair_end(buf, j, e) + _U1  # no name or no value: the pair is dropped
                continue
            value_at = j + _U1
            j = _next_pair_end(buf, value_at, e)
            value_len = j - value_at
            j += _U1  # past the U+0002
            if value_len == _U0:
                continue
            # A name's first 8 bytes and its length tell names apart without comparing bytes
            # (the well-known names are all that short); longer equal prefixes are compared whole.
            sig = _U0
            if name_at + _U8 <= nbuf:
                sig = _le64(buf, name_at)  # one load
                if name_len < 8:
                    sig &= (_U1 << np.uint64(8 * name_len)) - _U1
            else:
                for t in range(min(name_len, 8)):
                    sig |= np.uint64(buf[name_at + np.uint64(t)]) << np.uint64(8 * t)
            for t in range(nn):
                if name_sigs[t] == sig and name_offsets[t + 1] - name_offsets[t] == np.int64(name_len):
                    n0 = name_offsets[t]
                    same = True
                    for u in range(8, name_len):
                        if buf[name_at + np.uint64(u)] != names[n0 + u]:
                            same = False
                            break
                    if same:
                        found_pos[t, i] = np.int64(value_at)
                        found_len[t, i] = np.int64(value_len)
            # A repeated name is looked for only when a 64-bit filter of the row's names says it may be one.
            bit = _U1 << ((sig * _MIX + np.uint64(name_len)) >> np.uint64(58))
            slot = -1
            if seen & bit:
                for q in range(first, k):
                    if ksig[q] == sig and key_off[q + 1] - key_off[q] == np.int64(name_len):
                        a = np.uint64(kpos[q])
                        same = True
                        for t in range(8, name_len):
                            if buf[a + np.uint64(t)] != buf[name_at + np.uint64(t)]:
                                same = False
                                break
                        if same:
                            slot = q
                            break
            seen |= bit
            if slot >= 0:  # the name again: its first place, this value
                vpos[slot] = np.int64(value_at)
                vlen[slot] = np.int64(value_len)
                continue
            if pairs:
                _copy(key_data, ko, buf, name_at, name_len)
            ko += name_len
            ksig[k] = sig
            kpos[k] = np.int64(name_at)
            vpos[k] = np.int64(value_at)
            vlen[k] = np.int64(value_len)
            k += 1
            key_off[k] = np.int64(ko)
        map_off[i + 1] = k
    if not pairs:
        k = 0
        ko = _U0
    val_off, val_data, values_ascii = gather(buf, vpos[:k], vlen[:k])
    high = np.uint8(0)
    for q in range(ko):
        high |= key_data[q]
    return (map_off, key_off[:k + 1], key_data[:ko], val_off, val_data, values_ascii and high < 128,
            found_pos, found_len)


@njit(**_JIT)
def split_keys(buf, pos, length):
    """``KEYS`` values split on spaces, empty keys dropped: list offsets and key positions and lengths."""
    m = pos.shape[0]
    cap = 0
    for i in range(m):
        if pos[i] >= 0:
            cap += length[i] // 2 + 1
    offs = np.empty(m + 1, np.int32)
    kp = np.empty(cap, np.int64)
    kl = np.empty(cap, np.int64)
    k = 0
    offs[0] = 0
    for i in range(m):
        p = pos[i]
        if p >= 0:
            e = p + length[i]
            s = p
            while s <= e:
                if s == e or buf[s] == 32:
                    if s > p:
                        kp[k] = p
                        kl[k] = s - p
                        k += 1
                    p = s + 1
                s += 1
        offs[i + 1] = k
    return offs, kp[:k], kl[:k]


# What :func:`parse_int32` found for a value.
INT_NONE = 0    # no value, or one Java's Integer.parseInt refuses
INT_OK = 1      # a 32-bit decimal
INT_OTHER = 2   # a byte past ASCII: decoded in Python (Java takes every script's decimal digits)


@njit(**_JIT)
def parse_int32(buf, pos, length):
    """Values at ``pos`` (-1: none) read as Java's ``Integer.parseInt`` reads ASCII text.

    Returns the values (0 where there is none) and, per row, ``INT_NONE``,
    ``INT_OK`` or ``INT_OTHER``.
    """
    m = pos.shape[0]
    values = np.zeros(m, np.int32)
    status = np.zeros(m, np.uint8)
    for i in range(m):
        p = pos[i]
        if p < 0:
            continue
        e = p + length[i]
        negative = False
        if p < e and (buf[p] == 45 or buf[p] == 43):  # '-', '+'
            negative = buf[p] == 45
            p += 1
        if p >= e:
            continue
        acc = np.int64(0)
        ok = True
        other = False
        while p < e:
            b = buf[p]
            if b >= 128:
                other = True
                break
            if b < 48 or b > 57:
                ok = False
                break
            acc = acc * 10 + (b - 48)
            if acc > 2147483648:  # past 32 bits (checked per digit: never overflows 64)
                ok = False
                break
            p += 1
        if other:
            status[i] = INT_OTHER
        elif ok and (acc <= 2147483647 or (negative and acc == 2147483648)):
            values[i] = -acc if negative else acc
            status[i] = INT_OK
    return values, status


@njit(inline="always", **_JIT)
def _put_decimal(out, o, value):
    """Write ``value`` (an int of at most 32 bits) in decimal at ``out[o:]``; returns the new end."""
    v = np.int64(value)
    if v < 0:
        out[o] = 45  # '-'
        o += 1
        v = -v
    d = 1
    t = v // 10
    while t:
        d += 1
        t //= 10
    e = o + d
    for j in range(e - 1, o - 1, -1):
        out[j] = 48 + v % 10
        v //= 10
    return e


@njit(**_JIT)
def format_hosts(buf, addr, v6, port):
    """``ip:port`` (``[ip]:port`` for IPv6) as Java's ``InetAddress`` prints it: string offsets and data.

    A batch holds few distinct IPv4 hosts (the broker, its producers): each
    is formatted once and copied from its first text after that, through a
    small direct-mapped cache keyed by address and port.
    """
    m = addr.shape[0]
    data = np.empty(m * 56, np.uint8)
    offs = np.empty(m + 1, np.int32)
    offs[0] = 0
    o = 0
    hexd = _HEX_LOWER
    cache_key = np.full(_HOST_CACHE, -1, np.int64)
    cache_at = np.zeros(_HOST_CACHE, np.int64)
    cache_len = np.zeros(_HOST_CACHE, np.int64)
    for i in range(m):
        a = addr[i]
        if v6[i]:
            data[o] = 91  # '['
            o += 1
            for g in range(8):
                if g:
                    data[o] = 58  # ':'
                    o += 1
                w = _s16(buf, a + 2 * g) & 0xFFFF
                started = False
                for sh in range(12, -4, -4):
                    nib = (w >> sh) & 15
                    if nib or started or sh == 0:
                        data[o] = hexd[nib]
                        o += 1
                        started = True
            data[o] = 93  # ']'
            o += 1
            data[o] = 58
            o += 1
            o = _put_decimal(data, o, port[i])
        else:
            key = (_u32(buf, a) << 32) | (np.int64(port[i]) & 0xFFFFFFFF)
            home = ((np.uint64(key) * _MIX) >> np.uint64(64 - _HOST_CACHE_BITS))
            # Up to four slots from its own: two hosts of a batch that share a slot would otherwise push each
            # other out at every turn (a text formatted again for a fifth of the rows, with ten producers).
            slot = home
            for probe in range(_HOST_PROBES):
                s = (home + np.uint64(probe)) & np.uint64(_HOST_CACHE - 1)
                if cache_key[s] == key or cache_key[s] == -1:
                    slot = s
                    break
            if cache_key[slot] == key:
                # At most 27 bytes (255.255.255.255:-2147483648), copied as four words: the buffer has room
                # past ``o`` (56 bytes a row), and the text copied lies wholly before ``o``.
                c = cache_at[slot]
                x0 = _le64(data, c)
                x1 = _le64(data, c + 8)
                x2 = _le64(data, c + 16)
                x3 = _le64(data, c + 24)
                _st64(data, o, x0)
                _st64(data, o + 8, x1)
                _st64(data, o + 16, x2)
                _st64(data, o + 24, x3)
                o += cache_len[slot]
            else:
                start = o
                for j in range(4):
                    if j:
                        data[o] = 46  # '.'
                        o += 1
                    b = buf[a + j]
                    for t in range(_OCTET_LEN[b]):
                        data[o + t] = _OCTET_TEXT[b, t]
                    o += _OCTET_LEN[b]
                data[o] = 58
                o += 1
                o = _put_decimal(data, o, port[i])
                cache_key[slot] = key
                cache_at[slot] = start
                cache_len[slot] = o - start
        offs[i + 1] = o
    return offs, data[:o]


@njit(**_JIT)
def format_msg_ids(buf, addr, v6, port, physical):
    """Offset message ids: store address, port and PHYSICALOFFSET in upper-case hex."""
    m = addr.shape[0]
    data = np.empty(m * 56, np.uint8)
    offs = np.empty(m + 1, np.int32)
    offs[0] = 0
    o = 0
    for i in range(m):
        a = addr[i]
        for j in range(0, 16 if v6[i] else 4, 4):
            _st64(data, o, _hex8(_u32(buf, a + j)))
            o += 8
        _st64(data, o, _hex8(port[i]))  # the port as 4 bytes, two's complement
        ph = physical[i]
        _st64(data, o + 8, _hex8(ph >> 32))
        _st64(data, o + 16, _hex8(ph))
        o += 24
        offs[i + 1] = o
    return offs, data[:o]


@njit(**_JIT)
def repeat_string(text, m):
    """Offsets and data of an Arrow string array holding ``text`` (uint8) ``m`` times."""
    t = text.shape[0]
    offs = np.empty(m + 1, np.int32)
    data = np.empty(m * t, np.uint8)
    for i in range(m + 1):
        offs[i] = i * t
    if m and t:
        # The text once, then the filled part copied after itself: a few large copies, not one per row.
        _memcpy(data, 0, text, 0, t)
        done = t
        total = m * t
        while done < total:
            n = min(done, total - done)
            _memcpy(data, done, data, 0, n)
            done += n
    return offs, data


def warm_up() -> None:
    """Load every kernel's machine code now (from numba's cache, or compiled on the first run).

    The first call of each kernel in a process costs a few tens of
    milliseconds; a long-lived worker (a Spark executor, a benchmark) calls
    this once before its timed or latency-sensitive work.
    """
    buf = np.zeros(64, np.uint8)
    i32 = np.empty((N_I32, 1), np.int32)
    i64 = np.empty((N_I64, 1), np.int64)
    walk_records(buf, 0, 64, True, 65, 1, i32, i64, -1)
    records_at(buf, np.zeros(1, np.int64), np.full(1, 64, np.int64), i32, i64, np.zeros(1, np.bool_))
    time_bounds(buf, 0, 64, True, 0, 1, buf[:1], i32, i64, np.zeros(4, np.int64))
    store_times(buf, i64, 0, buf[:1], np.zeros(3, np.int64))
    walk_entries(buf, 0, 64, 64, 0, 1, i32, i64, np.empty((N_E, 2), np.int64), -1, -1)
    entry_header(buf, 0, np.empty((N_E, 1), np.int64), 0, True)
    find_record(buf, 0, 64, True, 64, 0, i32, i64)
    check_record(buf, 0, 64)
    pos = np.zeros(1, np.int64)
    length = np.ones(1, np.int64)
    gather(buf, pos, length)
    gather_into(buf, pos, length, np.zeros(1, np.bool_), np.zeros(2, np.int64), np.empty(1, np.uint8))
    scatter(buf, pos, length, pos, np.empty(1, np.uint8))
    equals_each(buf, pos, length, buf[:1])
    names = np.frombuffer(b"TAGS", np.uint8).copy()
    split_properties(buf, pos, length, names, np.array([0, 4], np.int64), True)
    split_keys(buf, pos, length)
    parse_int32(buf, pos, length)
    flags = np.zeros(1, np.bool_)
    ports = np.zeros(1, np.int32)
    format_hosts(buf, pos, flags, ports)
    format_msg_ids(buf, pos, flags, ports, pos)
    repeat_string(buf[:1], 1)
