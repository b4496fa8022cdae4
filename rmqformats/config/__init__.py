"""The ``config/`` JSON files of a broker store, read as the broker reads them.

:func:`load_config` reads every known file of a ``config/`` folder (and the
store's ``compaction/position-checkpoint``); :func:`read_config_file` reads
one. Each result says which copy was used (the file or its ``.bak``), which
character set decoded it, what failed to validate and which keys the
schemas do not know. :func:`write_config` writes a model or value back in
fastjson's format.

Broker behaviour mirrored (``ConfigManager.load`` / ``loadBak``,
``MixAll.file2String``): a file that is missing, empty or fails to decode is
replaced by ``<file>.bak``. 4.x brokers decode with the JVM default charset
(5.x with UTF-8); this reader tries UTF-8, then GB18030 (a superset of GBK,
the usual default of Chinese systems), then ISO-8859-1, and reports the one
used.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, ConfigSchemaError, ConfigSyntaxError
from .fastjson import FastjsonSyntaxError, Parsed, dumps, format_path, parse
from .models import (
    ConsumerOffset,
    ConsumerOffsetsFile,
    DataVersion,
    DelayOffsetsFile,
    RawConfig,
    SubscriptionGroupConfig,
    SubscriptionGroupsFile,
    TopicConfig,
    TopicsFile,
    model_for,
    split_topic_group,
)
from .schema import check, child, known_files, load_schema, schema_for_file
from .text import DEFAULT_ENCODINGS, MAX_CONFIG_BYTES, _decode_text, _read_bytes  # noqa: F401

__all__ = [
    "DEFAULT_ENCODINGS",
    "COMPACT_BYTES",
    "MAX_CONFIG_BYTES",
    "ConfigFile",
    "ConsumerOffset",
    "ConsumerOffsetsFile",
    "DataVersion",
    "DelayOffsetsFile",
    "RawConfig",
    "StoreConfig",
    "SubscriptionGroupConfig",
    "SubscriptionGroupsFile",
    "TopicConfig",
    "TopicsFile",
    "decode_config",
    "load_config",
    "read_config_file",
    "read_consumer_offsets",
    "read_delay_offsets",
    "read_subscription_groups",
    "read_topics",
    "split_topic_group",
    "write_config",
]



@dataclass(frozen=True)
class ConfigFile:
    """One config file as read: the model, where it came from and what was noticed."""

    #: File name (``topics.json``).
    name: str
    #: Path of the file that was read (the ``.bak`` when that was used), or the main path.
    path: str
    #: ``"file"`` or ``"bak"`` (the broker's fallback copy).
    source: str
    #: Schema name (``topics``, ``consumerOffset``, …).
    schema: str
    #: Character set that decoded the bytes; ``None`` when nothing was read.
    encoding: str | None
    #: The parsed document (integer keys as ``int``).
    data: Any
    #: Typed model (:class:`TopicsFile`, …) or :class:`RawConfig`; ``None`` for an empty file.
    model: Any
    #: The bytes that were parsed.
    raw: bytes = b""
    #: JSON paths of keys the schema does not know (kept in the models' ``extra``).
    unknown_keys: tuple[str, ...] = ()
    #: Things a reader should know: fallback to ``.bak``, charset fallback, …
    warnings: tuple[str, ...] = ()

    def to_bytes(self) -> bytes:
        """The model written back in fastjson's format and the file's character set (``raw`` when empty)."""
        if self.model is None:
            return self.raw
        # Characters the charset cannot hold (a lone surrogate from a \ud800 escape) become "?",
        # as Java's String.getBytes writes them.
        return write_config(self.model, self.schema).encode(self.encoding or "utf-8", "replace")


@dataclass(frozen=True)
class StoreConfig:
    """The config files of a store; missing files are simply absent from ``files``."""

    path: str
    files: Mapping[str, ConfigFile] = field(default_factory=dict)

    def _model(self, name: str) -> Any:
        f = self.files.get(name)
        return f.model if f is not None else None

    @property
    def topics(self) -> TopicsFile | None:
        return self._model("topics.json")

    @property
    def subscription_groups(self) -> SubscriptionGroupsFile | None:
        return self._model("subscriptionGroup.json")

    @property
    def consumer_offsets(self) -> ConsumerOffsetsFile | None:
        return self._model("consumerOffset.json")

    @property
    def lmq_consumer_offsets(self) -> ConsumerOffsetsFile | None:
        return self._model("lmqConsumerOffset.json")

    @property
    def delay_offsets(self) -> DelayOffsetsFile | None:
        return self._model("delayOffset.json")

    @property
    def warnings(self) -> list[str]:
        return [f"{f.name}: {w}" for f in self.files.values() for w in f.warnings]


# -- decoding ---------------------------------------------------------------------------------

def _byte_offset(text: str, pos: int, encoding: str, raw: bytes) -> int:
    try:
        return len(text[:pos].encode(encoding))
    except UnicodeEncodeError:
        return min(pos, len(raw))


def decode_config(raw: bytes, schema: str, *, path: str | None = None,
                  encodings: Sequence[str] = DEFAULT_ENCODINGS) -> tuple[Any, Any, str, list[str], list[str]]:
    """Decode, parse, validate and model one document.

    Returns (data, model, encoding, unknown key paths, warnings); raises
    :class:`ConfigSyntaxError` or :class:`ConfigSchemaError` naming the
    file, the byte offset and the JSON path.
    """
    warnings: list[str] = []
    try:
        text, encoding = _decode_text(raw, encodings)
    except UnicodeDecodeError as exc:
        raise ConfigSyntaxError(path, exc.start, f"cannot decode: {exc.reason}") from None
    if encoding != encodings[0]:
        warnings.append(f"not {encodings[0].upper()}; decoded as {encoding.upper()} "
                        "(a 4.x broker writes with the JVM default charset)")
    try:
        # Positions only place schema problems: found by parsing again when there are some.
        parsed: Parsed = parse(text, positions=False)
    except FastjsonSyntaxError as exc:
        raise ConfigSyntaxError(path, _byte_offset(text, exc.pos, encoding, raw), exc.reason,
                                format_path(exc.path)) from None
    problems, unknown_paths = check(schema, parsed.value)
    if problems:
        first = problems[0]
        pos = parse(text).positions.get(first.path)
        offset = None if pos is None else _byte_offset(text, pos, encoding, raw)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigSchemaError(path, offset, first.reason + more, format_path(first.path))
    unknown = [format_path(p) for p in unknown_paths]
    if unknown:
        warnings.append(f"{len(unknown)} key(s) unknown to the {schema} schema kept: {', '.join(unknown[:5])}"
                        + (" …" if len(unknown) > 5 else ""))
    return parsed.value, model_for(schema, parsed.value), encoding, unknown, warnings


def read_config_file(path: str | os.PathLike[str], *, schema: str | None = None,
                     encodings: Sequence[str] = DEFAULT_ENCODINGS) -> ConfigFile:
    """Read one config file the way ``ConfigManager.load`` does, falling back to ``<path>.bak``.

    The ``.bak`` is used when the file is missing, empty, or does not parse
    or validate; the result's ``source`` and ``warnings`` say so. When the
    ``.bak`` cannot help either, the file's own error is raised
    (:class:`ConfigError`). A missing or empty file without a usable
    ``.bak`` gives a result with ``model=None`` (the broker starts with empty
    tables then).

    A ``consumerOffset.json`` (or ``lmqConsumerOffset.json``) larger than
    :data:`COMPACT_BYTES` is read in one pass into arrays
    (:mod:`rmqformats.config.compact`): its model is a
    :class:`~rmqformats.config.compact.CompactConsumerOffsetsFile` (the same
    API; ``entries()`` a sequence made as it is read), ``data`` holds the
    tables as read-only mappings, ``raw`` is empty (the bytes are not kept),
    and an error in the tables is the first one met, without the count of
    the others. Memory stays within a few times the file's size.
    """
    path = os.fspath(path)
    name = os.path.basename(path)
    schema = schema or schema_for_file(name)
    if schema is None:
        raise ConfigError(path, None, "not a config file this package knows (no schema lists it)")
    main_error: ConfigError | None = None
    compact = _compact(schema, path)
    raw = None if compact else _read_bytes(path, MAX_CONFIG_BYTES)
    if compact:
        from .compact import read_compact
        try:
            got = read_compact(path, schema, encodings)
        except ConfigError as exc:
            got, main_error, why = None, exc, f"unreadable ({exc})"
        else:
            why = None if got else ("missing" if not os.path.exists(path) else "empty")
            raw = b"" if os.path.exists(path) else None
        if got:
            data, model, enc, unknown, warnings = got
            return ConfigFile(name, path, "file", schema, enc, data, model, b"", tuple(unknown), tuple(warnings))
    else:
        why = "missing" if raw is None else ("empty" if not raw else None)
    if why is None:
        try:
            data, model, enc, unknown, warnings = decode_config(raw, schema, path=path, encodings=encodings)
            return ConfigFile(name, path, "file", schema, enc, data, model, raw, tuple(unknown), tuple(warnings))
        except ConfigError as exc:
            main_error = exc
            why = f"unreadable ({exc})"
    bak_path = path + ".bak"
    compact_bak = _compact(schema, bak_path)
    bak = None if compact_bak else _read_bytes(bak_path, MAX_CONFIG_BYTES)
    if compact_bak or bak:
        try:
            if compact_bak:
                from .compact import read_compact
                data, model, enc, unknown, warnings = read_compact(bak_path, schema, encodings)
                bak = b""
            else:
                data, model, enc, unknown, warnings = decode_config(bak, schema, path=bak_path,
                                                                    encodings=encodings)
        except ConfigError as exc:
            if main_error is not None:
                raise ConfigError(main_error.path, main_error.offset, f"{main_error.reason}; "
                                  f"the .bak copy fails too: {exc}", main_error.json_path) from None
            raise
        warnings.insert(0, f"{name} is {why}; read {name}.bak as the broker does (ConfigManager.loadBak)")
        return ConfigFile(name, bak_path, "bak", schema, enc, data, model, bak, tuple(unknown), tuple(warnings))
    if main_error is not None:
        raise main_error
    if raw is None and bak is None:
        raise ConfigError(path, None, "no such file (and no .bak)")
    return ConfigFile(name, path, "file", schema, None, None, None, raw or b"", (),
                      (f"{name} is {why} and there is no usable .bak: the broker starts with empty tables",))


#: Consumer offsets files larger than this are read into arrays (:mod:`rmqformats.config.compact`)
#: instead of a parsed document: memory a small multiple of the file's size, not 30 to 50 times it.
COMPACT_BYTES = 4 << 20


def _compact(schema: str, path: str) -> bool:
    """Whether ``path`` is a consumer offsets file large enough to be read into arrays."""
    if schema != "consumerOffset":
        return False
    try:
        return os.path.getsize(path) > COMPACT_BYTES
    except OSError:
        return False


def write_config(model: Any, schema: str) -> str:
    """A model (or plain value) as the broker's fastjson writes it for the schema ``schema``."""
    value = model.to_json() if hasattr(model, "to_json") else model
    opts = load_schema(schema).get("x-fastjson", {})
    return dumps(value, schema=load_schema(schema), walker=child, pretty=opts.get("prettyFormat", True),
                 browser_compatible=opts.get("browserCompatible", False))


def load_config(config_dir: str | os.PathLike[str], *,
                encodings: Sequence[str] = DEFAULT_ENCODINGS) -> StoreConfig:
    """Read every known file of a ``config/`` folder (and ``../compaction/position-checkpoint``).

    A file is read when it or its ``.bak`` exists. Raises :class:`ConfigError`
    for the first file that neither it nor its ``.bak`` can give.
    """
    config_dir = os.fspath(config_dir)
    root = os.path.dirname(os.path.normpath(config_dir))
    files: dict[str, ConfigFile] = {}
    for folder, name, schema in known_files():
        base = config_dir if folder == "config" else os.path.join(root, folder)
        path = os.path.join(base, name)
        if os.path.exists(path) or os.path.exists(path + ".bak"):
            files[name] = read_config_file(path, schema=schema, encodings=encodings)
    return StoreConfig(config_dir, files)


def _one(config_dir: str | os.PathLike[str], name: str, encodings: Sequence[str]) -> Any:
    return read_config_file(os.path.join(os.fspath(config_dir), name), encodings=encodings).model


def read_topics(config_dir: str | os.PathLike[str], *, encodings: Sequence[str] = DEFAULT_ENCODINGS) -> TopicsFile | None:
    """``topics.json`` of a config folder (``None`` when empty)."""
    return _one(config_dir, "topics.json", encodings)


def read_subscription_groups(config_dir: str | os.PathLike[str], *,
                             encodings: Sequence[str] = DEFAULT_ENCODINGS) -> SubscriptionGroupsFile | None:
    """``subscriptionGroup.json`` of a config folder."""
    return _one(config_dir, "subscriptionGroup.json", encodings)


def read_consumer_offsets(config_dir: str | os.PathLike[str], *, lmq: bool = False,
                          encodings: Sequence[str] = DEFAULT_ENCODINGS) -> ConsumerOffsetsFile | None:
    """``consumerOffset.json`` (or ``lmqConsumerOffset.json`` with ``lmq=True``)."""
    return _one(config_dir, "lmqConsumerOffset.json" if lmq else "consumerOffset.json", encodings)


def read_delay_offsets(config_dir: str | os.PathLike[str], *,
                       encodings: Sequence[str] = DEFAULT_ENCODINGS) -> DelayOffsetsFile | None:
    """``delayOffset.json``."""
    return _one(config_dir, "delayOffset.json", encodings)
