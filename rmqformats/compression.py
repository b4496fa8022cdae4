"""Decompression of message bodies by sysFlag, with a bound on the output size."""

from __future__ import annotations

import threading
import zlib

import lz4.frame
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


def decompress(data: bytes, compression: str, max_size: int = DEFAULT_MAX_BODY_SIZE) -> bytes:
    """Decompress ``data`` with ``compression`` (``zlib``, ``lz4`` or ``zstd``).

    Raises :class:`BodyDecompressionError` when the data is corrupt or
    incomplete, or when the output would exceed ``max_size`` bytes.
    """
    try:
        if compression == "zlib":
            d = zlib.decompressobj()
            out = d.decompress(data, max_size + 1)
            if len(out) > max_size:
                raise BodyDecompressionError(f"zlib body decompresses to more than {max_size} bytes")
            if not d.eof:
                raise BodyDecompressionError("zlib body is incomplete")
            return out
        if compression == "lz4":
            d = lz4.frame.LZ4FrameDecompressor()
            out = d.decompress(data, max_length=max_size + 1)
            if len(out) > max_size:
                raise BodyDecompressionError(f"lz4 body decompresses to more than {max_size} bytes")
            if not d.eof:
                raise BodyDecompressionError("lz4 frame is incomplete")
            return out
        if compression == "zstd":
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
    except (zlib.error, RuntimeError, zstandard.ZstdError, ValueError, MemoryError) as exc:
        raise BodyDecompressionError(f"{compression} body is corrupt: {exc}") from exc
    raise BodyDecompressionError(f"unknown compression type {compression!r}")
