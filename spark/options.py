"""The options of the ``rocketmq_*`` data sources: their names, values and checks.

Spark hands a data source its options as a case-insensitive map of strings
(``.option("verifyCrc", True)`` arrives as ``verifycrc -> "true"``); this
module turns that map into a typed :class:`ReadOptions` and rejects what it
does not know, naming the option and listing the ones that exist. Where
Spark has a word for an option (``mode``, ``columnNameOfCorruptRecord``,
``pathGlobFilter``, ``recursiveFileLookup``, ``modifiedBefore``,
``modifiedAfter``, ``timeZone``) the name and the meaning are Spark's.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

#: Spark's parse modes (``DataFrameReader`` options of the file sources).
PERMISSIVE, DROPMALFORMED, FAILFAST = "PERMISSIVE", "DROPMALFORMED", "FAILFAST"
MODES = (PERMISSIVE, DROPMALFORMED, FAILFAST)

#: Options every source takes (``path``/``paths`` are set by ``load()``).
COMMON = ("path", "paths", "mode", "columnNameOfCorruptRecord", "pathGlobFilter", "recursiveFileLookup",
          "modifiedBefore", "modifiedAfter", "timeZone", "splitSize", "batchSize", "columns", "filterPushdown")
#: The options of each source, by its short name.
KNOWN = {
    "rocketmq_commitlog": COMMON + ("decompress", "verifyCrc", "topics", "salvage", "startingOffsets",
                                    "failOnDataLoss", "decodeSystem", "messageDelayLevel", "traceTopics",
                                    "bodyDecoder", "bodyFields"),
    "rocketmq_consumequeue": COMMON + ("topics",),
    "rocketmq_index": COMMON + ("hashSlots", "indexNum"),
}

#: Rows per Arrow batch handed to Spark unless ``batchSize`` says otherwise.
DEFAULT_BATCH_SIZE = 8192
#: Bytes of queue units or index entries per partition unless ``splitSize`` says otherwise
#: (Spark's ``spark.sql.files.maxPartitionBytes`` default).
DEFAULT_UNIT_SPLIT = 128 << 20

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)i?b?\s*$", re.IGNORECASE)
_POWERS = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}


class OptionError(ValueError):
    """An option that the source does not know, or a value it cannot use."""


@dataclass(frozen=True)
class ReadOptions:
    """The options of one read, checked and typed."""

    source: str
    #: The paths given to ``load()``, as given (globs and URIs resolved later).
    paths: tuple[str, ...]
    mode: str = PERMISSIVE
    #: Name of the column that holds what was wrong with a malformed record (PERMISSIVE only).
    corrupt_column: str | None = None
    path_glob_filter: str | None = None
    recursive: bool = False
    #: Bounds on the files' modification times, in seconds since the epoch.
    modified_before: float | None = None
    modified_after: float | None = None
    #: Bytes per partition: byte ranges of a segment, or units and entries packed together.
    split_size: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    decompress: bool = True
    verify_crc: bool = False
    topics: tuple[str, ...] | None = None
    salvage: bool = False
    hash_slots: int | None = None
    index_num: int | None = None
    #: The columns to give (and decode), in this order; ``None``: every column.
    columns: tuple[str, ...] | None = None
    #: Take the filters Spark pushes down (``spark.sql.python.filterPushdown.enabled``, Spark 4.1+).
    pushdown: bool = False
    #: Streaming: where a query with no checkpoint starts (``earliest`` or ``latest``).
    starting_offsets: str = "earliest"
    #: Streaming: fail when messages were lost (unread segments deleted, read bytes gone or rewritten),
    #: as Spark's Kafka source does by default; else a warning and the ``lost`` count.
    fail_on_data_loss: bool = True
    #: Add the decoded system columns (:data:`rmqformats.systopics.DECODED_SCHEMA`) to the messages.
    decode_system: bool = False
    #: With ``decode_system``: the broker's delay levels in ms (``messageDelayLevel``) and custom trace topics.
    delay_levels_ms: tuple[int, ...] | None = None
    trace_topics: tuple[str, ...] = ()
    #: A body decoder spec (:mod:`rmqformats.body_decoders`): ``bodyDecoded`` (or the body fields' columns)
    #: and ``bodyDecodeError`` after the message columns.
    body_decoder: str | None = None
    #: With ``body_decoder``: the body fields picked out of each decoded body, as ``body.FIELD`` columns.
    body_fields: tuple[str, ...] | None = None


def _bool(name: str, value: str) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise OptionError(f"option {name} must be true or false, not {value!r}")


def _int(name: str, value: str, minimum: int = 1) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        raise OptionError(f"option {name} must be a whole number, not {value!r}") from None
    if n < minimum:
        raise OptionError(f"option {name} must be at least {minimum}, not {n}")
    return n


def parse_size(name: str, value: str) -> int:
    """Bytes from ``"1048576"``, ``"64k"``, ``"128m"``, ``"1g"`` or ``"1GiB"`` (binary units, as Spark's)."""
    m = _SIZE.match(str(value))
    if not m:
        raise OptionError(f"option {name} must be a size in bytes such as 134217728, 128m or 1g, not {value!r}")
    n = int(m.group(1)) << _POWERS[m.group(2).lower()]
    if n < 1:
        raise OptionError(f"option {name} must be at least 1 byte, not {value!r}")
    return n


def parse_time(name: str, value: str, zone: str | None) -> float:
    """Seconds since the epoch of ``YYYY-MM-DDTHH:mm:ss`` (Spark's format).

    A time without a zone is read in ``zone`` (the ``timeZone`` option), else
    in the local time zone of the driver, which is Spark's default session
    time zone (a session zone set with ``spark.sql.session.timeZone`` does not
    reach Python data sources: give ``timeZone`` then).
    """
    text = str(value).strip()
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        raise OptionError(f"option {name} must be a time such as 2020-06-01T13:00:00, not {value!r}") from None
    if moment.tzinfo is None and zone is not None:
        moment = moment.replace(tzinfo=_zone(zone))
    return moment.timestamp()  # a naive time is local time here


def _zone(name: str) -> timezone:
    """A time zone from an IANA name or an offset such as ``+02:00`` (Spark's ``timeZone`` values)."""
    if name.upper() in ("UTC", "Z", "GMT"):
        return timezone.utc
    m = re.match(r"^(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?$", name)
    if m:
        from datetime import timedelta
        sign = -1 if m.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0)))
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(name)  # type: ignore[return-value]
    except Exception:  # noqa: BLE001 - zoneinfo raises several types for a bad name
        raise OptionError(f"option timeZone: unknown time zone {name!r}") from None


def _paths(options: Mapping[str, str]) -> tuple[str, ...]:
    paths: list[str] = []
    if options.get("path"):
        paths.append(options["path"])
    if options.get("paths"):
        try:
            more = json.loads(options["paths"])
        except ValueError:
            more = [options["paths"]]
        paths += [p for p in (more if isinstance(more, list) else [more]) if p]
    return tuple(dict.fromkeys(paths))  # the same path twice is read once


def parse_options(source: str, options: Mapping[str, str]) -> ReadOptions:
    """Check ``options`` (any letter case) for the source named ``source`` and type their values.

    Raises :class:`OptionError` for an unknown option (listing the known
    ones) or a value that cannot be used.
    """
    known = {k.lower(): k for k in KNOWN[source]}
    given = {str(k).lower(): v for k, v in options.items()}
    unknown = sorted(k for k in given if k not in known)
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise OptionError(f"{source}: unknown option{'s' if len(unknown) > 1 else ''} {names}; "
                          f"the options are: {', '.join(sorted(KNOWN[source], key=str.lower))}")
    v = {known[k]: val for k, val in given.items() if val is not None}

    mode = str(v.get("mode", PERMISSIVE)).strip().upper()
    if mode not in MODES:
        raise OptionError(f"option mode must be one of {', '.join(MODES)}, not {v['mode']!r}")
    zone = None if v.get("timeZone") is None else str(v["timeZone"])
    if zone is not None:
        _zone(zone)
    topics = None
    if v.get("topics") is not None:
        topics = tuple(t.strip() for t in str(v["topics"]).split(",") if t.strip())
        if not topics:
            raise OptionError("option topics must name at least one topic (comma-separated)")
    columns = None
    if v.get("columns") is not None:
        columns = tuple(dict.fromkeys(c.strip() for c in str(v["columns"]).split(",") if c.strip()))
        if not columns:
            raise OptionError("option columns must name at least one column (comma-separated)")
    starting = str(v.get("startingOffsets", "earliest")).strip().lower()
    if starting not in ("earliest", "latest"):
        raise OptionError(f"option startingOffsets must be earliest or latest, not {v['startingOffsets']!r}")
    delay_levels = None
    if v.get("messageDelayLevel") is not None:
        from rmqformats.systopics import parse_delay_levels
        try:
            delay_levels = parse_delay_levels(str(v["messageDelayLevel"]))
        except ValueError as exc:
            raise OptionError(f"option {exc}") from None
    trace_topics = tuple(t.strip() for t in str(v.get("traceTopics") or "").split(",") if t.strip())
    decode_system = _bool("decodeSystem", v.get("decodeSystem", "false"))
    if not decode_system and (delay_levels is not None or trace_topics):
        raise OptionError("options messageDelayLevel and traceTopics go with decodeSystem=true")
    body_decoder = None if v.get("bodyDecoder") is None else str(v["bodyDecoder"]).strip()
    body_fields = None
    if v.get("bodyFields") is not None:
        body_fields = tuple(f.strip() for f in str(v["bodyFields"]).split(","))
    if body_decoder is not None or body_fields is not None:
        from rmqformats.body_decoders import BodyDecoderError, decoding
        try:  # the spec and its schema file are checked on the driver, before any planning
            decoding(body_decoder, body_fields)
        except BodyDecoderError as exc:
            raise OptionError(f"option {'bodyDecoder' if body_decoder is not None else 'bodyFields'}: {exc}") \
                from None
    corrupt = v.get("columnNameOfCorruptRecord")
    if corrupt is not None and not str(corrupt).strip():
        raise OptionError("option columnNameOfCorruptRecord must not be empty")
    out = ReadOptions(
        source=source,
        paths=_paths(v),
        mode=mode,
        corrupt_column=None if corrupt is None else str(corrupt).strip(),
        path_glob_filter=v.get("pathGlobFilter") or None,
        recursive=_bool("recursiveFileLookup", v.get("recursiveFileLookup", "false")),
        modified_before=None if v.get("modifiedBefore") is None else parse_time("modifiedBefore",
                                                                                  v["modifiedBefore"], zone),
        modified_after=None if v.get("modifiedAfter") is None else parse_time("modifiedAfter",
                                                                                v["modifiedAfter"], zone),
        split_size=None if v.get("splitSize") is None else parse_size("splitSize", v["splitSize"]),
        batch_size=_int("batchSize", v.get("batchSize", DEFAULT_BATCH_SIZE)),
        decompress=_bool("decompress", v.get("decompress", "true")),
        verify_crc=_bool("verifyCrc", v.get("verifyCrc", "false")),
        topics=topics,
        salvage=_bool("salvage", v.get("salvage", "false")),
        hash_slots=None if v.get("hashSlots") is None else _int("hashSlots", v["hashSlots"]),
        index_num=None if v.get("indexNum") is None else _int("indexNum", v["indexNum"]),
        columns=columns,
        pushdown=_bool("filterPushdown", v.get("filterPushdown", "false")),
        starting_offsets=starting,
        fail_on_data_loss=_bool("failOnDataLoss", v.get("failOnDataLoss", "true")),
        decode_system=decode_system,
        delay_levels_ms=delay_levels,
        trace_topics=trace_topics,
        body_decoder=body_decoder,
        body_fields=body_fields,
    )
    if out.salvage and out.mode == FAILFAST:
        raise OptionError("options salvage=true and mode=FAILFAST contradict each other: salvage reads past "
                          "damaged records, FAILFAST stops at the first one")
    return out


def body_columns(options: ReadOptions) -> tuple[str, ...]:
    """The columns the body decoder of a read adds: ``bodyDecoded`` (or ``body.FIELD`` per body field) and
    ``bodyDecodeError``; none without ``bodyDecoder``."""
    if options.body_decoder is None:
        return ()
    from rmqformats.body_decoders.values import FIELD_PREFIX, parse_fields
    if options.body_fields is None:
        return ("bodyDecoded", "bodyDecodeError")
    return tuple(FIELD_PREFIX + f.path for f in parse_fields(options.body_fields)) + ("bodyDecodeError",)


@functools.lru_cache(maxsize=8)
def _decoding(spec: str, fields: tuple[str, ...] | None):
    from rmqformats.body_decoders import decoding
    return decoding(spec, fields)


def body_decoding(options: ReadOptions):
    """The :class:`rmqformats.body_decoders.BodyDecoding` of a read (``None`` without ``bodyDecoder``), built
    once per process: an executor reads the schema file once, not once per split."""
    return None if options.body_decoder is None else _decoding(options.body_decoder, options.body_fields)
