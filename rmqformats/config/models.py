"""Typed views of the config files: topics, consumer groups, consumer and delay offsets.

Each model is a frozen dataclass whose fields carry the JSON name they come
from (``metadata["json"]``). The JSON Schemas in ``formats/config/`` stay the
single source of truth: when this module is imported, every model's JSON
names are checked against the properties of the schema node it models
(:func:`_checked`), so a field added to or removed from a schema without the
model following fails at import, not silently at run time.

Keys that the schema does not know (a newer broker's fields) are kept in
``extra`` and written back, so ``Model.from_json(d).to_json() == d`` for
every valid ``d`` whose bean keys are in fastjson's (alphabetical) order.
Optional fields are ``None`` when the file does not have them (older
versions), which is not the same as a default value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, NamedTuple

from .schema import pointer

# -- machinery ------------------------------------------------------------------------------


def _j(name: str | tuple[str, ...], load: Callable[[Any], Any] | None = None,
       dump: Callable[[Any], Any] | None = None, default: Any = None) -> Any:
    """A model field read from the JSON key ``name`` (optional converters)."""
    return field(default=default, metadata={"json": name, "load": load, "dump": dump})


def _json_names(cls: type) -> set[str]:
    names: set[str] = set()
    for f in fields(cls):
        j = f.metadata.get("json")
        if j is not None:
            names.update((j,) if isinstance(j, str) else j)
    return names


def _checked(schema: str, *path: str | int) -> Callable[[type], type]:
    """Class decorator: the model's JSON names must equal the schema node's properties."""
    def deco(cls: type) -> type:
        node = pointer(schema, *path)
        props = set(node["properties"])
        names = _json_names(cls)
        if names != props:
            raise AssertionError(f"{cls.__name__} fields {sorted(names ^ props)} disagree with "
                                 f"{schema}.schema.json {'/'.join(map(str, path))}")
        cls.SCHEMA = (schema, tuple(path))
        return cls
    return deco


def _load(cls: type, data: Mapping[str, Any], **overrides: Any) -> Any:
    kwargs: dict[str, Any] = {}
    known = _json_names(cls)
    for f in fields(cls):
        j = f.metadata.get("json")
        if j is None or f.name in overrides:
            continue
        if isinstance(j, str) and j in data:
            load = f.metadata.get("load")
            kwargs[f.name] = load(data[j]) if load else data[j]
    kwargs.update(overrides)
    kwargs["extra"] = {k: v for k, v in data.items() if k not in known}
    return cls(**kwargs)


def _dump(obj: Any, **overrides: Any) -> dict[str, Any]:
    """Bean properties in fastjson's order (sorted by name), ``None`` left out as fastjson does."""
    out: dict[str, Any] = {}
    for f in fields(obj):
        j = f.metadata.get("json")
        if not isinstance(j, str):
            continue
        v = getattr(obj, f.name)
        if v is None:
            continue
        dump = f.metadata.get("dump")
        out[j] = dump(v) if dump else v
    out.update(overrides)
    out.update(obj.extra)
    # A kept unknown key may be an unquoted integer (fastjson's dialect): a bean writes every name as
    # text, so it sorts by its text among the others.
    return dict(sorted(out.items(), key=lambda item: str(item[0])))


def _map(load: Callable[[Any], Any]) -> Callable[[Mapping], dict]:
    """A String-keyed table: fastjson reads an unquoted (integer) key of such a map as its text."""
    return lambda m: {str(k): load(v) for k, v in m.items()}


def _int_keys(m: Mapping) -> dict:
    """Integer keys from a map whether they were written unquoted (fastjson) or quoted (strict JSON)."""
    return {int(k): v for k, v in m.items()}


def _to_json(v: Any) -> Any:
    return v.to_json()


# -- DataVersion ----------------------------------------------------------------------------

@_checked("common", "$defs", "dataVersion")
@dataclass(frozen=True)
class DataVersion:
    """``DataVersion``: change counter and time of a config table."""

    counter: int = _j("counter")
    #: Epoch ms of the last change; from ``timestatmp`` in 4.0.0 files.
    timestamp: int | None = _j(("timestamp", "timestatmp"))
    #: 5.0.0+ only.
    state_version: int | None = _j("stateVersion")
    #: The file spells the timestamp ``timestatmp`` (RocketMQ 4.0.0).
    misspelled: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DataVersion:
        misspelled = "timestatmp" in d and "timestamp" not in d
        ts = d.get("timestatmp") if misspelled else d.get("timestamp")
        rest = {k: v for k, v in d.items() if not (misspelled and k == "timestatmp")}
        return _load(cls, rest, timestamp=ts, misspelled=misspelled)

    def to_json(self) -> dict[str, Any]:
        # ``timestamp`` has two JSON names, so _dump leaves it to this method.
        if self.timestamp is None:
            return _dump(self)
        return _dump(self, **{"timestatmp" if self.misspelled else "timestamp": self.timestamp})


_DV = {"load": DataVersion.from_json, "dump": _to_json}

# -- topics.json ----------------------------------------------------------------------------

#: ``PermName`` bits.
PERM_PRIORITY, PERM_READ, PERM_WRITE, PERM_INHERIT = 8, 4, 2, 1
#: ``TopicSysFlag`` bits.
FLAG_UNIT, FLAG_UNIT_SUB = 1, 2


@_checked("topics", "$defs", "topicConfig")
@dataclass(frozen=True)
class TopicConfig:
    """One topic of ``topics.json`` (``TopicConfig``)."""

    topic_name: str | None = _j("topicName")
    read_queue_nums: int | None = _j("readQueueNums")
    write_queue_nums: int | None = _j("writeQueueNums")
    perm: int | None = _j("perm")
    topic_filter_type: str | None = _j("topicFilterType")
    topic_sys_flag: int | None = _j("topicSysFlag")
    order: bool | None = _j("order")
    #: 5.0.0+; ``None`` in 4.x files.
    attributes: Mapping[str, str] | None = _j("attributes")
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TopicConfig:
        return _load(cls, d)

    def to_json(self) -> dict[str, Any]:
        return _dump(self)

    @property
    def readable(self) -> bool:
        return bool((self.perm or 0) & PERM_READ)

    @property
    def writable(self) -> bool:
        return bool((self.perm or 0) & PERM_WRITE)

    @property
    def inherited(self) -> bool:
        return bool((self.perm or 0) & PERM_INHERIT)

    @property
    def priority(self) -> bool:
        return bool((self.perm or 0) & PERM_PRIORITY)

    @property
    def perm_string(self) -> str:
        """``PermName.perm2String``: ``RW-``, ``R--``, ``RWX`` (X = inherit)."""
        return ("R" if self.readable else "-") + ("W" if self.writable else "-") + ("X" if self.inherited else "-")

    @property
    def unit(self) -> bool:
        """``TopicSysFlag.hasUnitFlag``."""
        return bool((self.topic_sys_flag or 0) & FLAG_UNIT)

    @property
    def unit_sub(self) -> bool:
        """``TopicSysFlag.hasUnitSubFlag``."""
        return bool((self.topic_sys_flag or 0) & FLAG_UNIT_SUB)

    @property
    def queue_type(self) -> str:
        """``queue.type`` attribute: ``SimpleCQ`` (default) or ``BatchCQ``."""
        return (self.attributes or {}).get("queue.type", "SimpleCQ")


@_checked("topics")
@dataclass(frozen=True)
class TopicsFile:
    """``topics.json`` (``TopicConfigSerializeWrapper``)."""

    topic_config_table: dict[str, TopicConfig] = _j("topicConfigTable", _map(TopicConfig.from_json),
                                                    lambda m: {k: v.to_json() for k, v in m.items()})
    data_version: DataVersion | None = _j("dataVersion", **_DV)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TopicsFile:
        return _load(cls, d)

    def to_json(self) -> dict[str, Any]:
        return _dump(self)


# -- subscriptionGroup.json -----------------------------------------------------------------

@_checked("subscriptionGroup", "$defs", "subscriptionGroupConfig")
@dataclass(frozen=True)
class SubscriptionGroupConfig:
    """One consumer group of ``subscriptionGroup.json`` (``SubscriptionGroupConfig``)."""

    group_name: str | None = _j("groupName")
    consume_enable: bool | None = _j("consumeEnable")
    consume_from_min_enable: bool | None = _j("consumeFromMinEnable")
    consume_broadcast_enable: bool | None = _j("consumeBroadcastEnable")
    retry_queue_nums: int | None = _j("retryQueueNums")
    retry_max_times: int | None = _j("retryMaxTimes")
    broker_id: int | None = _j("brokerId")
    which_broker_when_consume_slowly: int | None = _j("whichBrokerWhenConsumeSlowly")
    notify_consumer_ids_changed_enable: bool | None = _j("notifyConsumerIdsChangedEnable")
    #: 5.0.0+
    consume_message_orderly: bool | None = _j("consumeMessageOrderly")
    #: 5.0.0+
    consume_timeout_minute: int | None = _j("consumeTimeoutMinute")
    #: 5.0.0+: ``{"type": "CUSTOMIZED"|"EXPONENTIAL", …}`` as in the file.
    group_retry_policy: Mapping[str, Any] | None = _j("groupRetryPolicy")
    #: 5.0.0+
    group_sys_flag: int | None = _j("groupSysFlag")
    #: 5.1.1+: ``[{"expression", "expressionType", "topic", "version"}, …]``.
    subscription_data_set: list[Mapping[str, Any]] | None = _j("subscriptionDataSet")
    #: 5.1.3+
    attributes: Mapping[str, str] | None = _j("attributes")
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SubscriptionGroupConfig:
        return _load(cls, d)

    def to_json(self) -> dict[str, Any]:
        return _dump(self)


@_checked("subscriptionGroup")
@dataclass(frozen=True)
class SubscriptionGroupsFile:
    """``subscriptionGroup.json`` (``SubscriptionGroupManager``)."""

    subscription_group_table: dict[str, SubscriptionGroupConfig] = _j(
        "subscriptionGroupTable", _map(SubscriptionGroupConfig.from_json),
        lambda m: {k: v.to_json() for k, v in m.items()})
    data_version: DataVersion | None = _j("dataVersion", **_DV)
    #: 5.0.0+: group → topic → forbidden bits.
    forbidden_table: Mapping[str, Mapping[str, int]] | None = _j("forbiddenTable")
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SubscriptionGroupsFile:
        return _load(cls, d)

    def to_json(self) -> dict[str, Any]:
        return _dump(self)


# -- consumerOffset.json / lmqConsumerOffset.json -------------------------------------------

#: ``ConsumerOffsetManager.TOPIC_GROUP_SEPARATOR``.
TOPIC_GROUP_SEPARATOR = "@"


def split_topic_group(key: str) -> tuple[str, str]:
    """``topic@group`` → (topic, group), split at the first ``@`` (topics cannot contain one)."""
    key = str(key)  # an unquoted integer key of a hand-edited file
    topic, sep, group = key.partition(TOPIC_GROUP_SEPARATOR)
    return (topic, group) if sep else (key, "")


class ConsumerOffset(NamedTuple):
    """One committed offset: the next queue offset the group will consume."""

    topic: str
    group: str
    queue_id: int
    offset: int


@_checked("consumerOffset")
@dataclass(frozen=True)
class ConsumerOffsetsFile:
    """``consumerOffset.json`` or ``lmqConsumerOffset.json`` (``ConsumerOffsetManager``)."""

    #: ``"topic@group"`` → {queue id → offset}, in file order.
    offset_table: dict[str, dict[int, int]] = _j("offsetTable", _map(_int_keys))
    #: 5.0.0+
    data_version: DataVersion | None = _j("dataVersion", **_DV)
    #: 5.0.0+: derived by the broker from offsetTable; kept as written.
    group_topic_map: Mapping[str, list[str]] | None = _j("groupTopicMap")
    #: ``lmqConsumerOffset.json`` only: ``"topic@group"`` → offset of queue 0.
    lmq_offset_table: Mapping[str, int] | None = _j("lmqOffsetTable")
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ConsumerOffsetsFile:
        return _load(cls, d)

    def to_json(self) -> dict[str, Any]:
        return _dump(self)

    def entries(self) -> list[ConsumerOffset]:
        """Every (topic, group, queue id, offset), LMQ offsets as queue 0."""
        out = [ConsumerOffset(*split_topic_group(key), qid, off)
               for key, queues in self.offset_table.items() for qid, off in queues.items()]
        for key, off in (self.lmq_offset_table or {}).items():
            out.append(ConsumerOffset(*split_topic_group(key), 0, off))
        return out

    @property
    def offsets(self) -> dict[tuple[str, str, int], int]:
        """(topic, group, queue id) → committed offset."""
        return {(e.topic, e.group, e.queue_id): e.offset for e in self.entries()}


# -- delayOffset.json -----------------------------------------------------------------------

#: ``TopicValidator.RMQ_SYS_SCHEDULE_TOPIC``: delay level ``n`` uses its queue ``n - 1``.
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"


@_checked("delayOffset")
@dataclass(frozen=True)
class DelayOffsetsFile:
    """``delayOffset.json`` (``DelayOffsetSerializeWrapper``)."""

    #: delay level (1-based) → next offset in ``SCHEDULE_TOPIC_XXXX`` queue ``level - 1``.
    offset_table: dict[int, int] = _j("offsetTable", _int_keys)
    #: 5.0.0+
    data_version: DataVersion | None = _j("dataVersion", **_DV)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DelayOffsetsFile:
        return _load(cls, d)

    def to_json(self) -> dict[str, Any]:
        return _dump(self)

    @property
    def by_level(self) -> dict[int, int]:
        """Delay level → offset, sorted by level."""
        return dict(sorted(self.offset_table.items()))

    def queue_of(self, level: int) -> tuple[str, int]:
        """The schedule topic and queue id that hold messages of a delay level."""
        return SCHEDULE_TOPIC, level - 1


# -- files without a typed model --------------------------------------------------------------

@dataclass(frozen=True)
class RawConfig:
    """A validated file that has no typed model (5.x extras): its parsed value as is."""

    schema: str
    data: Any

    def to_json(self) -> Any:
        return self.data


#: Schema name → model class.
MODELS: dict[str, Any] = {
    "topics": TopicsFile,
    "subscriptionGroup": SubscriptionGroupsFile,
    "consumerOffset": ConsumerOffsetsFile,
    "delayOffset": DelayOffsetsFile,
}


def model_for(schema: str, data: Any) -> Any:
    """The typed model of a validated document, or :class:`RawConfig`."""
    cls = MODELS.get(schema)
    return cls.from_json(data) if cls else RawConfig(schema, data)


assert all(f.default is not MISSING or f.default_factory is not MISSING
           for cls in MODELS.values() for f in fields(cls)), "models must be constructible from partial files"
