"""A decoded commit-log message and the values derived from its fields."""

from __future__ import annotations

import base64
import zlib
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

from . import properties as props
from .compression import DEFAULT_MAX_BODY_SIZE, BodyDecompressionError, decompress
from .errors import CrcMismatchError, DecompressionError
from .generated.layouts import rocketmq_commitlog as layout

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_BITS = layout.SYS_FLAG_BITS
_COMPRESSED = _BITS["is_compressed"][0]
_INNER_BATCH = _BITS["is_inner_batch"][0]
_COMPRESSION_MASK, _COMPRESSION_SHIFT = _BITS["compression_type"]
_TRANSACTION_MASK, _TRANSACTION_SHIFT = _BITS["transaction_type"]
_COMPRESSION_NAMES = {v: k for k, v in layout.COMPRESSION_TYPE.items()}
_TRANSACTION_NAMES = {v: k for k, v in layout.TRANSACTION_TYPE.items()}


def crc32(data: bytes) -> int:
    """RocketMQ's ``UtilAll.crc32``: CRC-32 masked with ``0x7fffffff``."""
    return zlib.crc32(data) & 0x7FFFFFFF


#: The epoch milliseconds a :class:`datetime` can hold: years 1 to 9999.
MIN_DATETIME_MS = -62135596800000
MAX_DATETIME_MS = 253402300799999


def millis_in_range(ms: int) -> bool:
    """Whether epoch milliseconds ``ms`` lie in the years 1 to 9999 that a datetime can hold.

    The broker never checks its time fields, so a damaged file can hold any
    64-bit value; callers show the others as raw numbers (:func:`format_millis`).
    """
    return MIN_DATETIME_MS <= ms <= MAX_DATETIME_MS


def millis_to_datetime(ms: int) -> datetime:
    """A timezone-aware UTC datetime for milliseconds since the Unix epoch.

    Raises ``ValueError`` for a value outside the years 1 to 9999; see
    :func:`millis_to_datetime_or_none` and :func:`format_millis` for values read from files.
    """
    if not MIN_DATETIME_MS <= ms <= MAX_DATETIME_MS:
        raise ValueError(f"{ms} ms since the epoch is outside the years 1 to 9999")
    return _EPOCH + timedelta(milliseconds=ms)


#: What :func:`format_millis` appends to a value it cannot show as a time.
OUT_OF_RANGE_MARK = " (out of range)"


def format_millis(ms: int) -> str:
    """ISO 8601 UTC text with milliseconds (``2026-11-21T09:53:22.457Z``) for epoch ms.

    A value outside the years 1 to 9999 (a damaged field) is shown as the
    raw number, flagged: ``-9187201950435737472 (out of range)``.
    """
    if not MIN_DATETIME_MS <= ms <= MAX_DATETIME_MS:
        return f"{ms}{OUT_OF_RANGE_MARK}"
    return (_EPOCH + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_millis(value: int | str | datetime) -> int:
    """Epoch milliseconds of a time given as epoch ms, an ISO 8601 text or a datetime (UTC when naive).

    Raises ``ValueError`` for a text that is not ISO 8601.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str, datetime)) and not hasattr(value, "__index__"):
        raise TypeError(f"a time is epoch milliseconds (int), ISO 8601 text or a datetime, not {type(value).__name__}")
    if not isinstance(value, (str, datetime)):
        return int(value.__index__())
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 time (nor epoch milliseconds)") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return (value - _EPOCH) // timedelta(milliseconds=1)


def millis_to_datetime_or_none(ms: int) -> datetime | None:
    """:func:`millis_to_datetime`, or ``None`` for a value out of datetime's range (damaged data)."""
    if not MIN_DATETIME_MS <= ms <= MAX_DATETIME_MS:
        return None
    return _EPOCH + timedelta(milliseconds=ms)


def format_address(address: bytes) -> str:
    """An IPv4 or IPv6 address as Java's ``InetAddress.getHostAddress`` prints it."""
    if len(address) == 4:
        return ".".join(str(b) for b in address)
    if len(address) == 16:
        return ":".join(format(int.from_bytes(address[i:i + 2], "big"), "x") for i in range(0, 16, 2))
    return address.hex()


def format_host(address: bytes, port: int) -> str:
    """``ip:port`` for IPv4 and ``[ip]:port`` for IPv6."""
    text = format_address(address)
    return f"[{text}]:{port}" if len(address) == 16 else f"{text}:{port}"


def offset_msg_id(store_address: bytes, store_port: int, physical_offset: int) -> str:
    """The offset message id: store address, port and commit-log offset in upper-case hex."""
    return (store_address + store_port.to_bytes(4, "big", signed=True)
            + physical_offset.to_bytes(8, "big", signed=True)).hex().upper()


class MessageFields(NamedTuple):
    """The stored fields of a message record, with RocketMQ's Java values."""

    #: Commit-log offset of the record (segment start + position in the file).
    commitlog_offset: int
    #: TOTALSIZE, the record's size in bytes.
    store_size: int
    #: Record version: 1 (magic 0xdaa320a7) or 2 (magic 0xdaa320ab).
    version: int
    body_crc: int
    queue_id: int
    flag: int
    queue_offset: int
    #: PHYSICALOFFSET as stored (normally equal to ``commitlog_offset``).
    physical_offset: int
    sys_flag: int
    born_timestamp: int
    born_address: bytes
    born_port: int
    store_timestamp: int
    store_address: bytes
    store_port: int
    reconsume_times: int
    prepared_transaction_offset: int
    #: The body as stored (compressed when ``is_compressed``).
    body_raw: bytes
    topic: str
    #: The properties string as stored.
    properties_raw: str
    #: Path of the segment file that holds the record.
    segment: str | None = None
    #: Position of the record in its segment file.
    file_offset: int = 0
    #: CRC of the record bytes before ``__CRC32#`` when that property is present.
    record_crc: int | None = None


class Message(MessageFields):
    """One message record of the commit log: its stored fields and the values derived from them.

    The fields are an immutable named tuple. Derived values (properties,
    hosts as text, datetimes, ids, the decompressed body) are computed on
    first use; the two costly ones (properties, body) are kept.
    """

    # No __slots__: each message keeps a small dict for the values kept after first use.

    # -- properties ---------------------------------------------------------
    @property
    def properties(self) -> dict[str, str]:
        """The properties as a mapping (see :func:`rmqformats.properties.parse_properties`)."""
        cache = self.__dict__
        value = cache.get("_properties")
        if value is None:
            value = cache["_properties"] = props.parse_properties(self.properties_raw)
        return value

    @property
    def tags(self) -> str | None:
        """The ``TAGS`` property."""
        return self.properties.get(props.TAGS)

    @property
    def keys(self) -> list[str]:
        """The ``KEYS`` property split on spaces, empty keys dropped."""
        value = self.properties.get(props.KEYS)
        return [k for k in value.split(props.KEY_SEPARATOR) if k] if value else []

    @property
    def uniq_key(self) -> str | None:
        """The client message id, property ``UNIQ_KEY``."""
        return self.properties.get(props.UNIQ_KEY)

    @property
    def priority(self) -> int | None:
        """The priority of a priority message (5.4.0+), property ``_SYS_MSG_PRIORITY_`` as an int.

        ``None`` without the property, or where its value is not one Java's
        ``Integer.parseInt`` reads (see :func:`rmqformats.properties.parse_java_int`).
        The broker stores the message in queue ``min(priority, writeQueueNums - 1)``.
        """
        return props.priority_of(self.properties)

    @property
    def lite_topic(self) -> str | None:
        """The lite topic (5.5.0+), property ``__LITE_TOPIC``; the broker also dispatches the
        message to the queue ``%LMQ%$<topic>$<lite topic>``."""
        return props.lite_topic_of(self.properties)

    # -- flags ---------------------------------------------------------------
    @property
    def is_compressed(self) -> bool:
        """SYSFLAG bit 0."""
        return bool(self.sys_flag & _COMPRESSED)

    @property
    def compression(self) -> str | None:
        """``zlib``, ``lz4`` or ``zstd`` for a compressed body (type 0 means zlib), else ``None``."""
        if not self.is_compressed:
            return None
        code = (self.sys_flag & _COMPRESSION_MASK) >> _COMPRESSION_SHIFT
        name = _COMPRESSION_NAMES.get(code, f"unknown({code})")
        return "zlib" if name == "unspecified" else name

    @property
    def transaction_type(self) -> str:
        """``not_type``, ``prepared``, ``commit`` or ``rollback`` (SYSFLAG bits 2-3)."""
        return _TRANSACTION_NAMES[(self.sys_flag & _TRANSACTION_MASK) >> _TRANSACTION_SHIFT]

    def has_flag(self, name: str) -> bool:
        """Whether the SYSFLAG bit named as in the spec (``is_inner_batch`` …) is set."""
        return bool(self.sys_flag & _BITS[name][0])

    # -- hosts, times, ids ---------------------------------------------------
    @property
    def born_host(self) -> str:
        """The producer address as ``ip:port`` (``[ip]:port`` for IPv6)."""
        return format_host(self.born_address, self.born_port)

    @property
    def store_host(self) -> str:
        """The broker address as ``ip:port`` (``[ip]:port`` for IPv6)."""
        return format_host(self.store_address, self.store_port)

    @property
    def born_time(self) -> datetime | None:
        """BORNTIMESTAMP as a UTC datetime; ``None`` outside the years 1 to 9999 (see :func:`millis_in_range`)."""
        return millis_to_datetime_or_none(self.born_timestamp)

    @property
    def store_time(self) -> datetime | None:
        """STORETIMESTAMP as a UTC datetime; ``None`` outside the years 1 to 9999 (see :func:`millis_in_range`)."""
        return millis_to_datetime_or_none(self.store_timestamp)

    @property
    def msg_id(self) -> str:
        """The offset message id (32 hex characters for an IPv4 store host, 56 for IPv6)."""
        return offset_msg_id(self.store_address, self.store_port, self.physical_offset)

    # -- body ------------------------------------------------------------------
    def decompressed_body(self, max_size: int = DEFAULT_MAX_BODY_SIZE) -> bytes:
        """The body after decompression by SYSFLAG; raises :class:`DecompressionError`."""
        kind = self.compression
        if kind is None:
            return self.body_raw
        try:
            return decompress(self.body_raw, kind, max_size)
        except BodyDecompressionError as exc:
            raise DecompressionError(self.segment, self.file_offset, str(exc)) from None

    @property
    def body(self) -> bytes:
        """The body after decompression, bounded by the default limit."""
        if not self.sys_flag & _COMPRESSED:
            return self.body_raw
        cache = self.__dict__
        value = cache.get("_body")
        if value is None:
            value = cache["_body"] = self.decompressed_body()
        return value

    @property
    def body_error(self) -> str | None:
        """Why the compressed body does not decompress (then :attr:`body` raises), or ``None``."""
        if not self.sys_flag & _COMPRESSED:
            return None
        try:
            self.body
        except DecompressionError as exc:
            return exc.reason
        return None

    @property
    def shown_body(self) -> bytes:
        """:attr:`body`, or the stored bytes when the compressed body does not decompress (see :attr:`body_error`)."""
        return self.body_raw if self.body_error is not None else self.body

    def inner_messages(self) -> list:
        """The messages of an inner-batch record (SYSFLAG ``is_inner_batch``), else ``[]``.

        Each is a :class:`rmqformats.batch.InnerMessage`; its queue offset is
        this record's ``INNER_BASE`` (= ``queue_offset``) plus its index.
        """
        if not self.sys_flag & _INNER_BATCH:
            return []
        from .batch import decode_batch

        return decode_batch(self.body, self.segment, self.file_offset)

    @property
    def delay_time_level(self) -> int:
        """The ``DELAY`` property as an int (0 without it), as ``MessageExt.getDelayTimeLevel``."""
        value = self.properties.get(props.DELAY)
        try:
            return int(value) if value else 0
        except ValueError:
            return 0

    # -- checks ----------------------------------------------------------------
    @property
    def body_crc_ok(self) -> bool:
        """Whether BODYCRC matches the stored body bytes."""
        return crc32(self.body_raw) == self.body_crc

    @property
    def record_crc_ok(self) -> bool | None:
        """Whether the ``__CRC32#`` property matches the record bytes; ``None`` without it."""
        value = self.properties.get(props.CRC32)
        if value is None or self.record_crc is None:
            return None
        return props.decode_crc32_property(value) == self.record_crc

    def verify_crc(self, *, force_verify_prop_crc: bool = False) -> None:
        """Raise :class:`CrcMismatchError` where the broker's recovery with ``checkCRCOnRecover`` fails the record.

        By default, as the broker's default configuration does, BODYCRC only,
        and only for a body longer than 0 bytes (an empty body passes
        whatever BODYCRC holds). ``force_verify_prop_crc`` is the broker's
        ``forceVerifyPropCRC=true`` (5.2.0 on): the record's bytes against its
        ``__CRC32#`` property instead, and a record without one fails.
        """
        if force_verify_prop_crc:
            value = self.properties.get(props.CRC32)
            expected = None if value is None else props.broker_crc32_property(value)
            if expected is None:
                raise CrcMismatchError(self.segment, self.file_offset,
                                       f"no {props.CRC32} property to check (forceVerifyPropCRC)" if value is None
                                       else f"property {props.CRC32}={value} holds no CRC (forceVerifyPropCRC)")
            actual = self.record_crc
            if actual is None:  # no property CRC was computed: a record shorter than the reserved tail
                actual = -1
            if actual != expected:
                raise CrcMismatchError(self.segment, self.file_offset,
                                       f"record CRC 0x{actual & 0xFFFFFFFF:08x} does not match property "
                                       f"{props.CRC32}={value} (forceVerifyPropCRC)")
            return
        actual = crc32(self.body_raw)
        if self.body_raw and actual != self.body_crc:
            raise CrcMismatchError(self.segment, self.file_offset,
                                   f"body CRC 0x{actual:08x} does not match BODYCRC 0x{self.body_crc:08x}")

    # -- output ------------------------------------------------------------------
    def to_json_dict(self) -> dict:
        """The message with RocketMQ's own field names; ``body`` is base64 after decompression.

        A compressed body that does not decompress is given as stored, and
        ``bodyError`` (only then) says why. ``priority`` and ``liteTopic``
        follow only for a message that has them.
        """
        d = {
            "commitLogOffset": self.commitlog_offset,
            "storeSize": self.store_size,
            "bodyCRC": self.body_crc,
            "queueId": self.queue_id,
            "flag": self.flag,
            "queueOffset": self.queue_offset,
            "sysFlag": self.sys_flag,
            "bornTimestamp": self.born_timestamp,
            "bornHost": self.born_host,
            "storeTimestamp": self.store_timestamp,
            "storeHost": self.store_host,
            "reconsumeTimes": self.reconsume_times,
            "preparedTransactionOffset": self.prepared_transaction_offset,
            "topic": self.topic,
            "properties": self.properties,
            "msgId": self.msg_id,
        }
        error = self.body_error
        # A body that does not decompress is shown as stored, with the reason (as the columnar batches do).
        d["body"] = base64.b64encode(self.shown_body).decode("ascii")
        if error is not None:
            d["bodyError"] = error
        add_derived_json(d, self.properties)
        return d


def add_derived_json(d: dict, properties: dict[str, str]) -> dict:
    """``d`` with the ``priority`` and ``liteTopic`` keys of a message with ``properties``, where it has them."""
    for key, value in (("priority", props.priority_of(properties)), ("liteTopic", props.lite_topic_of(properties))):
        d.pop(key, None)
        if value is not None:
            d[key] = value
    return d
