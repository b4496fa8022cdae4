"""Reading a config file's bytes and decoding its text: the character sets a broker may have written it in."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import ConfigError

#: Character sets tried in order: UTF-8 (every 5.x broker, most 4.x), GB18030 (superset of GBK,
#: a common 4.x JVM default on Chinese systems), ISO-8859-1 (decodes anything).
DEFAULT_ENCODINGS: tuple[str, ...] = ("utf-8", "gb18030", "iso-8859-1")
#: Largest config file read (a topics.json with 100 000 topics is about 30 MB).
MAX_CONFIG_BYTES = 512 * 1024 * 1024


def _decode_text(raw: bytes, encodings: Sequence[str]) -> tuple[str, str]:
    for enc in encodings:
        try:
            return raw.decode(enc), enc
        except UnicodeDecodeError:
            continue
    raise UnicodeDecodeError(encodings[-1] if encodings else "none", raw, 0, len(raw),
                             "no character set in the list decodes the file")


def _read_bytes(path: str, max_bytes: int | None = None) -> bytes | None:
    """The file's bytes; ``None`` when missing. Raises :class:`ConfigError` when larger than ``max_bytes``
    (default :data:`MAX_CONFIG_BYTES`) or unreadable."""
    limit = MAX_CONFIG_BYTES if max_bytes is None else max_bytes
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if size > limit:
        raise ConfigError(path, None, f"{size:,} bytes, more than the {limit:,} read for a config file")
    try:
        with open(path, "rb") as f:
            # The length found, as MixAll.file2String reads file.length() bytes (read(n) also
            # allocates n bytes up front, so n must not be the limit).
            return f.read(size)
    except OSError as exc:
        raise ConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
