"""config/ JSON files: schemas, models, write-back, bad files, .bak and charset fallback."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from rmqformats import open_store
from rmqformats.config import (
    ConsumerOffsetsFile,
    DataVersion,
    DelayOffsetsFile,
    RawConfig,
    SubscriptionGroupsFile,
    TopicsFile,
    load_config,
    read_config_file,
    write_config,
)
from rmqformats.config import models as models_mod
from rmqformats.config.schema import (
    known_files,
    load_schema,
    pointer,
    schema_names,
    to_json_model,
    unknown_keys,
    validate,
)
from rmqformats.errors import ConfigError, ConfigSchemaError, ConfigSyntaxError

from conftest import FIXTURES, VERSIONS, store_path

EXPECTED_FILES = {
    "rocketmq-4.9.7": ["topics.json", "subscriptionGroup.json", "consumerOffset.json", "delayOffset.json"],
    "rocketmq-5.1.4": ["topics.json", "subscriptionGroup.json", "consumerOffset.json", "position-checkpoint"],
    "rocketmq-5.3.3": ["topics.json", "consumerOffset.json", "timermetrics", "position-checkpoint"],
}


def strict(text: str):
    """An independent parse: Python's json after quoting fastjson's bare integer keys."""
    return json.loads(re.sub(r"([{,])(-?\d+):", r'\1"\2":', text))


def fixture_path(version: str, name: str):
    folder = "compaction" if name == "position-checkpoint" else "config"
    return store_path(version) / folder / name


# -- schemas --------------------------------------------------------------------------

def test_schemas_are_valid_draft_2020_12_and_cover_every_file():
    import jsonschema
    for name in schema_names():
        s = load_schema(name)
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    files = {f for _, f, _ in known_files()}
    assert files == {"topics.json", "subscriptionGroup.json", "consumerOffset.json", "lmqConsumerOffset.json",
                     "delayOffset.json", "consumerOrderInfo.json", "consumerFilter.json", "messageRequestMode.json",
                     "topicQueueMapping.json", "timermetrics", "transactionMetrics", "position-checkpoint"}


def test_every_property_has_title_description_and_version():
    def walk(node, where):
        if isinstance(node, dict):
            for key, prop in node.get("properties", {}).items():
                assert prop.get("title") and prop.get("description"), f"{where}.{key}"
                assert "x-since" in prop or "$ref" in prop and prop["$ref"].endswith("int64"), f"{where}.{key}"
            for k, v in node.items():
                walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for v in node:
                walk(v, where)
    for name in schema_names():
        walk(load_schema(name), name)


def test_data_version_variants_are_in_the_schema():
    dv = pointer("common", "$defs", "dataVersion")
    assert dv["properties"]["timestatmp"]["x-until"] == "4.0.0"
    assert dv["properties"]["stateVersion"]["x-since"] == "5.0.0"
    doc = {"offsetTable": {}}
    assert validate("delayOffset", {**doc, "dataVersion": {"counter": 1, "timestatmp": 5}}) == []
    assert validate("delayOffset", {**doc, "dataVersion": {"counter": 1, "timestamp": 5}}) == []
    assert validate("delayOffset", {**doc, "dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 5}}) == []
    assert validate("delayOffset", {**doc, "dataVersion": {"counter": 1, "timestamp": 5, "timestatmp": 5}})
    assert validate("delayOffset", {**doc, "dataVersion": {"counter": 1}})


def test_models_fields_map_to_schema_properties():
    """Every model field names a schema property and every schema property has a field."""
    for cls in [TopicsFile, SubscriptionGroupsFile, ConsumerOffsetsFile, DelayOffsetsFile, DataVersion,
                models_mod.TopicConfig, models_mod.SubscriptionGroupConfig]:
        schema, path = cls.SCHEMA
        props = set(pointer(schema, *path)["properties"])
        names = set()
        for f in dataclasses.fields(cls):
            j = f.metadata.get("json")
            if j:
                names.update([j] if isinstance(j, str) else j)
        assert names == props, cls.__name__

    @dataclasses.dataclass(frozen=True)
    class Wrong:
        counter: int = models_mod._j("counter")
        extra: dict = dataclasses.field(default_factory=dict)
    with pytest.raises(AssertionError, match="disagree"):
        models_mod._checked("common", "$defs", "dataVersion")(Wrong)


# -- the vectors ----------------------------------------------------------------------

def test_every_vector_file_parses_validates_and_round_trips(version):
    config = load_config(store_path(version) / "config")
    assert list(config.files) == EXPECTED_FILES[version]
    for name, f in config.files.items():
        raw = fixture_path(version, name).read_bytes()
        assert f.source == "file" and f.encoding == "utf-8" and f.warnings == () and f.unknown_keys == ()
        assert f.raw == raw
        assert validate(f.schema, f.data) == []
        assert to_json_model(f.model.to_json()) == strict(raw.decode("utf-8"))
        assert f.to_bytes() == raw
        assert write_config(f.data, f.schema).encode() == raw


def test_topics_model_equals_file(version):
    text = fixture_path(version, "topics.json").read_text(encoding="utf-8")
    expected = strict(text)
    topics = open_store(store_path(version)).config().topics
    assert topics.data_version.counter == expected["dataVersion"]["counter"]
    assert topics.data_version.timestamp == expected["dataVersion"]["timestamp"]
    assert topics.data_version.state_version == expected["dataVersion"].get("stateVersion")
    assert list(topics.topic_config_table) == list(expected["topicConfigTable"])
    for name, t in topics.topic_config_table.items():
        e = expected["topicConfigTable"][name]
        assert (t.topic_name, t.read_queue_nums, t.write_queue_nums, t.perm, t.order, t.topic_sys_flag,
                t.topic_filter_type, t.attributes) == (e["topicName"], e["readQueueNums"], e["writeQueueNums"],
                                                       e["perm"], e["order"], e["topicSysFlag"],
                                                       e["topicFilterType"], e.get("attributes"))
        assert (t.readable, t.writable, t.inherited, t.perm_string) == (True, True, False, "RW-")
        assert not t.unit and not t.unit_sub
    if version.startswith("rocketmq-5."):
        assert topics.topic_config_table["TopicBatchCQ"].queue_type == "BatchCQ"
        assert topics.topic_config_table["TopicTest"].queue_type == "SimpleCQ"


def test_subscription_groups_model_equals_file(version):
    if "subscriptionGroup.json" not in EXPECTED_FILES[version]:  # 5.3.3: the store has none
        path = fixture_path(version, "subscriptionGroup.json")
        assert not path.exists() and not path.with_name(path.name + ".bak").exists()
        assert load_config(store_path(version) / "config").subscription_groups is None
        return
    expected = strict(fixture_path(version, "subscriptionGroup.json").read_text(encoding="utf-8"))
    groups = load_config(store_path(version) / "config").subscription_groups
    for name, g in groups.subscription_group_table.items():
        e = expected["subscriptionGroupTable"][name]
        assert g.group_name == e["groupName"] and g.retry_max_times == e["retryMaxTimes"]
        assert g.consume_message_orderly == e.get("consumeMessageOrderly")
        assert g.group_retry_policy == e.get("groupRetryPolicy")
    assert groups.forbidden_table == expected.get("forbiddenTable")
    assert set(groups.subscription_group_table) == set(expected["subscriptionGroupTable"])


def test_consumer_and_delay_offsets_equal_file(version):
    expected = strict(fixture_path(version, "consumerOffset.json").read_text(encoding="utf-8"))
    offsets = load_config(store_path(version) / "config").consumer_offsets
    flat = {(k.split("@", 1)[0], k.split("@", 1)[1], int(q)): o
            for k, qs in expected["offsetTable"].items() for q, o in qs.items()}
    assert offsets.offsets == flat
    assert offsets.group_topic_map == expected.get("groupTopicMap")
    if version == "rocketmq-4.9.7":
        delay = load_config(store_path(version) / "config").delay_offsets
        assert delay.by_level == {1: 2, 2: 1}
        assert delay.queue_of(2) == ("SCHEDULE_TOPIC_XXXX", 1)


# -- bad files ------------------------------------------------------------------------

def write(tmp_path, name, data: bytes | str, encoding="utf-8"):
    p = tmp_path / "config" / name
    p.parent.mkdir(exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode(encoding))
    return p


def test_truncated_file_names_file_offset_and_path(tmp_path):
    raw = fixture_path("rocketmq-4.9.7", "consumerOffset.json").read_bytes()
    cut = raw.index(b"1:31") + 2
    p = write(tmp_path, "consumerOffset.json", raw[:cut])
    with pytest.raises(ConfigSyntaxError) as info:
        read_config_file(p)
    msg = str(info.value)
    assert msg.startswith(f"config/consumerOffset.json @ 0x{cut:x} ($.offsetTable['TopicTest@GroupA'][1]): ")
    assert "truncated" in msg
    assert info.value.offset == cut and info.value.json_path == "$.offsetTable['TopicTest@GroupA'][1]"
    # Cut inside a string: the error points at the string's opening quote.
    cut = raw.index(b"TopicTest@") + 4
    with pytest.raises(ConfigSyntaxError) as info:
        read_config_file(write(tmp_path, "consumerOffset.json", raw[:cut]))
    assert info.value.offset == cut - 5 and "unterminated string" in info.value.reason


def test_wrong_type_names_the_json_path(tmp_path):
    text = fixture_path("rocketmq-4.9.7", "topics.json").read_text(encoding="utf-8")
    i = text.index('"perm":6', text.index('"TopicTest":{'))
    bad = text[:i] + '"perm":"6"' + text[i + len('"perm":6'):]
    p = write(tmp_path, "topics.json", bad)
    with pytest.raises(ConfigSchemaError) as info:
        read_config_file(p)
    assert info.value.json_path == "$.topicConfigTable.TopicTest.perm"
    assert info.value.offset == i + len('"perm":')
    assert str(info.value) == (f"config/topics.json @ 0x{i + 7:x} ($.topicConfigTable.TopicTest.perm): "
                               "'6' is not of type 'integer'")


@pytest.mark.parametrize("text,path,words", [
    ('{"offsetTable":{"T@G":{0:"29"}}}', "$.offsetTable['T@G'][0]", "not of type 'integer'"),
    ('{"offsetTable":{"T@G":{"0":"29"}}}', "$.offsetTable['T@G']['0']", "not of type 'integer'"),
    ('{"offsetTable":{"T@G":{"x":29}}}', "$.offsetTable['T@G']", "key 'x' is not an integer"),
    ('{"offsetTable":[]}', "$.offsetTable", "not of type 'object'"),
    ('{"offsetTable":{"T@G":{0:9223372036854775808}}}', "$.offsetTable['T@G'][0]", "maximum"),
    ('{"groupTopicMap":{}}', "$", "'offsetTable' is a required property"),
])
def test_wrong_types_fastjson_and_strict_variants(tmp_path, text, path, words):
    p = write(tmp_path, "consumerOffset.json", text)
    with pytest.raises(ConfigSchemaError) as info:
        read_config_file(p)
    assert info.value.json_path == path
    assert words in info.value.reason
    assert str(info.value).startswith("config/consumerOffset.json")


def test_strict_json_variant_gives_the_same_model(tmp_path):
    raw = fixture_path("rocketmq-4.9.7", "consumerOffset.json").read_text(encoding="utf-8")
    quoted = re.sub(r"([{,])(-?\d+):", r'\1"\2":', raw)
    a = read_config_file(write(tmp_path, "consumerOffset.json", quoted))
    b = read_config_file(fixture_path("rocketmq-4.9.7", "consumerOffset.json"))
    assert a.model == b.model
    assert a.to_bytes() == raw.encode()  # written back as fastjson writes it


def test_unknown_keys_are_kept_reported_and_written_back(tmp_path):
    text = fixture_path("rocketmq-5.1.4", "topics.json").read_text(encoding="utf-8")
    # A key from a newer broker, at its alphabetical place (fastjson sorts bean properties).
    text = text.replace('\t\t\t"order":false,\n\t\t\t"perm":6,\n\t\t\t"readQueueNums":4,',
                        '\t\t\t"order":false,\n\t\t\t"perm":6,\n\t\t\t"queueMode":{\n\t\t\t\t"x":[1,2]\n\t\t\t},\n'
                        '\t\t\t"readQueueNums":4,', 1)
    text = text.replace('\t"topicConfigTable":{', '\t"tableVersion":7,\n\t"topicConfigTable":{', 1)
    f = read_config_file(write(tmp_path, "topics.json", text))
    assert f.unknown_keys == ("$.tableVersion", "$.topicConfigTable.TopicTest.queueMode")
    assert any("unknown" in w for w in f.warnings)
    assert f.model.extra == {"tableVersion": 7}
    assert f.model.topic_config_table["TopicTest"].extra == {"queueMode": {"x": [1, 2]}}
    assert f.to_bytes() == text.encode()
    assert unknown_keys("topics", f.data) == [("tableVersion",), ("topicConfigTable", "TopicTest", "queueMode")]


# -- .bak and charset fallback ----------------------------------------------------------

def test_empty_main_file_falls_back_to_bak(tmp_path):
    raw = fixture_path("rocketmq-4.9.7", "delayOffset.json").read_bytes()
    p = write(tmp_path, "delayOffset.json", b"")
    write(tmp_path, "delayOffset.json.bak", raw)
    f = read_config_file(p)
    assert f.source == "bak" and f.path.endswith("delayOffset.json.bak")
    assert f.model.by_level == {1: 2, 2: 1}
    assert "empty" in f.warnings[0] and ".bak" in f.warnings[0]


def test_corrupt_main_file_falls_back_to_bak(store_copy):
    cfg = store_copy / "config"
    good = (cfg / "topics.json").read_bytes()
    (cfg / "topics.json.bak").write_bytes(good)
    (cfg / "topics.json").write_bytes(good[:100])
    config = open_store(store_copy).config()
    f = config.files["topics.json"]
    assert f.source == "bak" and f.to_bytes() == good
    assert "unreadable" in f.warnings[0] and "config/topics.json @ 0x" in f.warnings[0]
    assert "unterminated string (truncated file?)" in f.warnings[0]
    assert config.warnings and config.warnings[0].startswith("topics.json: ")


def test_missing_main_file_uses_bak(tmp_path):
    raw = fixture_path("rocketmq-4.9.7", "consumerOffset.json").read_bytes()
    write(tmp_path, "consumerOffset.json.bak", raw)
    config = load_config(tmp_path / "config")
    assert config.files["consumerOffset.json"].source == "bak"
    assert config.consumer_offsets.offsets[("TopicTest", "GroupA", 1)] == 31


def test_corrupt_main_without_bak_raises(tmp_path):
    p = write(tmp_path, "topics.json", "{")
    with pytest.raises(ConfigSyntaxError, match=r"^config/topics.json @ 0x1 \(\$\): unexpected end"):
        read_config_file(p)


def test_corrupt_main_and_bak_raises_with_both(tmp_path):
    p = write(tmp_path, "topics.json", "{")
    write(tmp_path, "topics.json.bak", '{"topicConfigTable":5}')
    with pytest.raises(ConfigError) as info:
        read_config_file(p)
    assert str(info.value).startswith("config/topics.json @ 0x1 ($): ")
    assert "the .bak copy fails too: config/topics.json.bak @ 0x14 ($.topicConfigTable)" in str(info.value)


def test_empty_without_bak_is_an_empty_table(tmp_path):
    f = read_config_file(write(tmp_path, "subscriptionGroup.json", b""))
    assert f.model is None and "empty tables" in f.warnings[0]


def test_gbk_file_from_a_4x_broker(tmp_path):
    text = ('{\n\t"dataVersion":{\n\t\t"counter":1,\n\t\t"timestamp":1700000000000\n\t},\n\t"topicConfigTable":{\n'
            '\t\t"订单":{\n\t\t\t"order":false,\n\t\t\t"perm":7,\n\t\t\t"readQueueNums":4,\n'
            '\t\t\t"topicFilterType":"MULTI_TAG",\n\t\t\t"topicName":"订单",\n\t\t\t"topicSysFlag":3,\n'
            '\t\t\t"writeQueueNums":4\n\t\t}\n\t}\n}')
    raw = text.encode("gbk")
    f = read_config_file(write(tmp_path, "topics.json", raw))
    assert f.encoding == "gb18030"
    assert "decoded as GB18030" in f.warnings[0]
    t = f.model.topic_config_table["订单"]
    assert (t.topic_name, t.perm_string, t.inherited, t.unit, t.unit_sub) == ("订单", "RWX", True, True, True)
    assert f.to_bytes() == raw
    # A type error in the same file: the offset counts GBK bytes (2 per Chinese character).
    bad = text.replace('"readQueueNums":4', '"readQueueNums":true').encode("gbk")
    with pytest.raises(ConfigSchemaError) as info:
        read_config_file(write(tmp_path, "topics.json", bad))
    assert info.value.json_path == "$.topicConfigTable['订单'].readQueueNums"
    assert info.value.offset == bad.index(b"true")
    assert "decoded" not in str(info.value)


def test_latin1_is_the_last_resort(tmp_path):
    raw = b'{"offsetTable":{"T\xff@G":{0:1}}}'  # not UTF-8, not GB18030
    f = read_config_file(write(tmp_path, "consumerOffset.json", raw), encodings=("utf-8", "iso-8859-1"))
    assert f.encoding == "iso-8859-1" and f.model.offsets == {("T\xff", "G", 0): 1}


def test_unknown_file_name_and_oversize_are_errors(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="no schema"):
        read_config_file(write(tmp_path, "mystery.json", "{}"))
    import rmqformats.config as config_mod
    monkeypatch.setattr(config_mod, "MAX_CONFIG_BYTES", 10)
    with pytest.raises(ConfigError, match=r"^config/topics.json: 15 bytes, more than the 10 read"):
        read_config_file(write(tmp_path, "topics.json", '{"a":"bcdefgh"}'))


# -- synthetic files of other versions, built from the schemas' shapes ----------------

def _round_trip(tmp_path, name, value, *, folder="config"):
    schema = {f: s for _, f, s in known_files()}[name]
    assert validate(schema, value) == []
    text = write_config(value, schema)
    p = tmp_path / folder / name
    p.parent.mkdir(exist_ok=True)
    p.write_bytes(text.encode())
    f = read_config_file(p)
    assert f.data == value and f.unknown_keys == () and f.warnings == ()
    assert f.to_bytes() == text.encode()
    return f, text


def test_rocketmq_4_0_data_version_timestatmp(tmp_path):
    dv = DataVersion(counter=3, timestamp=1490000000000, misspelled=True)
    topics = TopicsFile(topic_config_table={}, data_version=dv)
    f, text = _round_trip(tmp_path, "topics.json", topics.to_json())
    assert text == '{\n\t"dataVersion":{\n\t\t"counter":3,\n\t\t"timestatmp":1490000000000\n\t},\n\t"topicConfigTable":{}\n}'
    assert f.model.data_version == dv and f.model.data_version.timestamp == 1490000000000


def test_lmq_consumer_offsets(tmp_path):
    value = {"dataVersion": {"counter": 2, "stateVersion": 0, "timestamp": 1},
             "groupTopicMap": {"G": ["T"]}, "lmqOffsetTable": {"%LMQ%123@G": 4},
             "offsetTable": {"T@G": {0: 5, 1: 6}}}
    f, text = _round_trip(tmp_path, "lmqConsumerOffset.json", value)
    assert '"lmqOffsetTable":{\n\t\t"%LMQ%123@G":4\n\t}' in text
    assert f.model.offsets == {("T", "G", 0): 5, ("T", "G", 1): 6, ("%LMQ%123", "G", 0): 4}


def test_consumer_order_info(tmp_path):
    info = {"a": "attempt-1", "cm": 0, "i": 30000, "l": 1700000000500, "o": [100, 1, 2],
            "oc": {101: 1}, "ot": {100: 1700000030000}, "popTime": 1700000000000}
    value = {"table": {"T@G": {0: info, 3: {"cm": 1, "l": 2, "o": [7], "popTime": 3}}}}
    f, text = _round_trip(tmp_path, "consumerOrderInfo.json", value)
    assert isinstance(f.model, RawConfig)
    # OrderInfo.offsetList is a java.util.List: one item per line; its integer-keyed maps stay on one line.
    assert '"o":[\n\t\t\t\t\t100,\n\t\t\t\t\t1,\n\t\t\t\t\t2\n\t\t\t\t],' in text
    assert '"oc":{101:1\n\t\t\t\t},' in text
    assert text.startswith('{\n\t"table":{\n\t\t"T@G":{0:{\n\t\t\t\t"a":"attempt-1",')


def test_topic_queue_mapping(tmp_path):
    item = {"bname": "broker-a", "endOffset": -1, "gen": 0, "logicOffset": 0, "queueId": 0,
            "startOffset": 0, "timeOfEnd": -1, "timeOfStart": -1}
    detail = {"bname": "broker-a", "currIdMap": {0: 0, 1: 1}, "dirty": False, "epoch": 1700000000000,
              "hostedQueues": {0: [item], 1: [dict(item, queueId=1)]}, "scope": "__global__",
              "topic": "StaticTopic", "totalQueues": 2}
    value = {"dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 1},
             "topicQueueMappingInfoMap": {"StaticTopic": detail}}
    _, text = _round_trip(tmp_path, "topicQueueMapping.json", value)
    # Integer key on the map's line; the List (one more level) puts each item on its own line.
    assert '"hostedQueues":{0:[\n\t\t\t\t\t{\n\t\t\t\t\t\t"bname":"broker-a",' in text


def test_message_request_mode_and_consumer_filter(tmp_path):
    mode = {"consumerGroup": "G", "mode": "POP", "popShareQueueNum": 0, "topic": "T"}
    _round_trip(tmp_path, "messageRequestMode.json", {"messageRequestModeMap": {"T": {"G": mode}}})
    data = {"bloomFilterData": {"bitNum": 64, "bitPos": [1, 5, 9]}, "bornTime": 1, "clientVersion": 2,
            "consumerGroup": "G", "dead": False, "deadTime": 0, "expression": "a > 5", "expressionType": "SQL92",
            "topic": "T"}
    value = {"bloomFilter": {"f": 10, "k": 7, "m": 64, "n": 128},
             "filterDataByTopic": {"T": {"groupFilterData": {"G": data}, "topic": "T"}}}
    _, text = _round_trip(tmp_path, "consumerFilter.json", value)
    assert '"bitPos":[1,5,9]' in text  # int[]: one line


def test_timer_and_transaction_metrics_are_compact_and_browser_compatible(tmp_path):
    value = {"dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 2},
             "timingCount": {"定时/Topic": {"count": 3, "timeStamp": 4}}}
    _, text = _round_trip(tmp_path, "timermetrics", value)
    assert text == ('{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":2},'
                    '"timingCount":{"\\u5B9A\\u65F6\\/Topic":{"count":3,"timeStamp":4}}}')
    value = {"dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 2},
             "transactionCount": {"TopicTx": {"count": 9, "timeStamp": 4}}}
    _round_trip(tmp_path, "transactionMetrics", value)


def test_position_checkpoint_is_read_from_the_compaction_folder():
    config = load_config(store_path("rocketmq-5.1.4") / "config")
    f = config.files["position-checkpoint"]
    assert f.path.endswith("compaction/position-checkpoint")
    assert f.data == {"empty": True, "queueOffsetMap": {}}


def test_subscription_group_5x_fields(tmp_path):
    raw = fixture_path("rocketmq-5.1.4", "subscriptionGroup.json").read_text(encoding="utf-8")
    value = strict(raw)
    g = value["subscriptionGroupTable"]["GroupA"]
    g["subscriptionDataSet"] = [{"expression": "*", "expressionType": "TAG", "topic": "TopicTest", "version": 1}]
    g["groupRetryPolicy"] = {"exponentialRetryPolicy": {"initial": 5000, "max": 7200000, "multiplier": 2},
                             "type": "EXPONENTIAL"}
    value["subscriptionGroupTable"]["GroupA"] = dict(sorted(g.items()))
    value["forbiddenTable"] = {"GroupA": {"TopicTest": 1}}
    f, text = _round_trip(tmp_path, "subscriptionGroup.json", value)
    m = f.model.subscription_group_table["GroupA"]
    assert m.subscription_data_set[0]["topic"] == "TopicTest"
    assert m.group_retry_policy["type"] == "EXPONENTIAL"
    assert f.model.forbidden_table == {"GroupA": {"TopicTest": 1}}
    assert '"subscriptionDataSet":[{\n' in text  # a Set: items on the same line as the bracket
    assert f.model.to_json() == value


def test_vectors_in_repo_only():
    assert all((FIXTURES / v / "store" / "config").is_dir() for v in VERSIONS)
