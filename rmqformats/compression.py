"""Decompression of message bodies by sysFlag, with a bound on the output size."""

from __future__ import annotations

import threading
import zlib

import lz4.frame
import numpy as np
import zstandard

#: Default upper bound of a decompressed body. The broker limits the stored
#: (compressed) body to ``maxMessageSize`` (4 MiB by default, configurable);
#: the decompressed size has no limit in RocketMQ, so this guards memory.
DEFAULT_MAX_BODY_SIZE = 256 * 1024 * 1024


_local = threading.local()


def _zstd() -> zstandard.ZstdDecompressor:
    """This thread's ZSTD decompressor: making one costs more than decompressing a small body."""
    d = getattr(_local, "zstd", None)
    if d is None:
        d = _local.zstd = zstandard.ZstdDecompressor()
    return d


class BodyDecompressionError(ValueError):
    """Raised by :func:`decompress`; the caller adds the file and offset."""


#: Bytes of a zlib body inflated at a time by :func:`decompress_large`.
_PIECE = 8 << 20


def decompress_large(data, compression: str, max_size: int = DEFAULT_MAX_BODY_SIZE):
    """:func:`decompress` for bodies of any size, holding little more than the result: a bytes-like object.

    zlib does not say how large its output is, and inflating into a growing
    buffer holds up to twice the result (the pieces and their join). A zlib
    body that inflates to more than one piece is inflated into a numpy array
    of ``max_size`` bytes, a piece at a time: the array is only reserved
    address space (a block this large is mapped, and its pages become memory
    when they are written), so the memory held is the result and a piece; a
    view of the written part is returned.
    """
    return body_decompressor(compression)(data, max_size)


def body_decompressor(compression: str):
    """The function ``(data, max_size) -> bytes-like`` that :func:`decompress_large` calls for ``compression``.

    A scan that decompresses many small bodies calls it directly, saving the
    dispatch on the name for every body. It raises
    :class:`BodyDecompressionError` as :func:`decompress` does, and for an
    unknown name.
    """
    return _LARGE.get(compression) or _unknown(compression)


def _unknown(compression: str):
    """The decompressor of a compression name that is none of ``zlib``, ``lz4`` and ``zstd``: it refuses."""
    def refuse(data, max_size: int):
        raise BodyDecompressionError(f"unknown compression type {compression!r}")
    return refuse


def _zlib_large(data, max_size: int):
    """A zlib body inflated by :func:`decompress_large`'s rule (one piece as bytes, more into an array)."""
    d = zlib.decompressobj()
    try:
        piece = d.decompress(data, _PIECE)
        if d.eof and len(piece) <= max_size:  # nearly every body: one piece
            return piece
        if len(piece) > max_size:
            raise BodyDecompressionError(f"zlib body decompresses to more than {max_size} bytes")
        if not d.unconsumed_tail and len(piece) < _PIECE:
            raise BodyDecompressionError("zlib body is incomplete")
        out = np.empty(max_size, np.uint8)
        out[:len(piece)] = np.frombuffer(piece, np.uint8)
        at = len(piece)
        for piece in _inflate_rest(d, at, max_size):
            out[at:at + len(piece)] = np.frombuffer(piece, np.uint8)
            at += len(piece)
        return out[:at]
    except BodyDecompressionError:
        raise
    except (zlib.error, ValueError, MemoryError) as exc:
        raise BodyDecompressionError(f"zlib body is corrupt: {exc}") from exc


def _inflate_rest(d, done: int, max_size: int):
    """The remaining output of a zlib decompressor that gave ``done`` bytes, a piece at a time, up to ``max_size``."""
    while not d.eof:
        tail = d.unconsumed_tail
        piece = d.decompress(tail, _PIECE) if tail else d.decompress(b"", _PIECE)
        if not piece and not tail:
            raise BodyDecompressionError("zlib body is incomplete")
        done += len(piece)
        if done > max_size:
            raise BodyDecompressionError(f"zlib body decompresses to more than {max_size} bytes")
        yield piece


#: Output asked of the lz4 decompressor by its first call, per compressed byte (and at least 64 KiB).
_LZ4_FIRST_RATIO = 8


def _lz4_context():
    """This thread's lz4 frame decompression context: making one (and its buffers) for each small body costs
    more than decompressing it. It is ready for a new frame after one ends; :func:`_lz4` drops it otherwise."""
    c = getattr(_local, "lz4", None)
    if c is None:
        c = _local.lz4 = lz4.frame.create_decompression_context()
    return c


def _lz4(data, max_size: int) -> bytes:
    """An lz4 frame decompressed, up to ``max_size`` bytes.

    The decompressor reserves all the output it is allowed at once, so it is
    asked for a few times the input first (most bodies fit), then for the
    rest a piece at a time: asking for ``max_size`` would map and unmap that
    much for every body.
    """
    context = _lz4_context()
    limit = max_size + 1  # one byte over the bound tells a body that passes it
    done = False
    try:
        out, read, done = lz4.frame.decompress_chunk(
            context, data, max_length=min(limit, max(1 << 16, _LZ4_FIRST_RATIO * len(data))))
        if not done and read < len(data):  # more output: the rest in pieces of up to _PIECE bytes
            pieces = [out]
            total = len(out)
            rest = memoryview(data)[read:]
            while not done and len(rest) and total < limit:
                piece, read, done = lz4.frame.decompress_chunk(context, rest, max_length=min(limit - total, _PIECE))
                rest = rest[read:]
                pieces.append(piece)
                total += len(piece)
                if not piece and not read:
                    break
            out = b"".join(pieces)
    except (RuntimeError, ValueError, MemoryError) as exc:
        raise BodyDecompressionError(f"lz4 body is corrupt: {exc}") from exc
    finally:
        if not done:
            # The frame not finished (an error, a cut body, or past the bound): the next body gets a new
            # context. Resetting this one is not enough: it keeps the content size a frame header
            # declared, and fails the next frame that declares none.
            _local.lz4 = None
    if len(out) > max_size:
        raise BodyDecompressionError(f"lz4 body decompresses to more than {max_size} bytes")
    if not done:
        raise BodyDecompressionError("lz4 frame is incomplete")
    return out


def decompress(data: bytes, compression: str, max_size: int = DEFAULT_MAX_BODY_SIZE) -> bytes:
    """Decompress ``data`` with ``compression`` (``zlib``, ``lz4`` or ``zstd``).

    Raises :class:`BodyDecompressionError` when the data is corrupt or
    incomplete, or when the output would exceed ``max_size`` bytes.
    """
    return (_SMALL.get(compression) or _unknown(compression))(data, max_size)


def _zlib(data, max_size: int) -> bytes:
    """A zlib body inflated in one call, up to ``max_size`` bytes."""
    try:
        d = zlib.decompressobj()
        out = d.decompress(data, max_size + 1)
    except (zlib.error, ValueError, MemoryError) as exc:
        raise BodyDecompressionError(f"zlib body is corrupt: {exc}") from exc
    if len(out) > max_size:
        raise BodyDecompressionError(f"zlib body decompresses to more than {max_size} bytes")
    if not d.eof:
        raise BodyDecompressionError("zlib body is incomplete")
    return out


def _zstd_body(data, max_size: int) -> bytes:
    """A zstd frame decompressed, up to ``max_size`` bytes (its declared size is checked first)."""
    try:
        declared = zstandard.frame_content_size(bytes(data[:18]))
        if declared > max_size:
            raise BodyDecompressionError(f"zstd body decompresses to more than {max_size} bytes "
                                         f"(its frame declares {declared})")
        try:
            # Without a declared size, max_output_size caps the output buffer.
            return _zstd().decompress(data, max_output_size=max_size)
        except zstandard.ZstdError as exc:
            if declared == -1:
                raise BodyDecompressionError(f"zstd body is corrupt or decompresses to more than "
                                             f"{max_size} bytes: {exc}") from None
            raise
    except BodyDecompressionError:
        raise
    except (zstandard.ZstdError, RuntimeError, ValueError, MemoryError) as exc:
        raise BodyDecompressionError(f"zstd body is corrupt: {exc}") from exc


#: Decompressors by name: for :func:`decompress` (the result in one bytes object) and for
#: :func:`decompress_large` (a large zlib body inflated into an array).
_SMALL = {"zlib": _zlib, "lz4": _lz4, "zstd": _zstd_body}
_LARGE = {**_SMALL, "zlib": _zlib_large}
