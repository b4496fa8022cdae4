"""The fastjson dialect: parsing unquoted integer keys, and writing byte for byte as fastjson 1.2.x does."""

from __future__ import annotations

import json

import pytest

from rmqformats.config.fastjson import FastjsonSyntaxError, dumps, format_path, java_double, parse, quote
from rmqformats.config.schema import child, load_schema, schema_for_file

from conftest import FIXTURES, VERSIONS


#: Files in config/ that are not JSON: the timer store's binary TimerCheckpoint (read by rmqformats.timer).
NOT_JSON = {"timercheck"}


def _fixture_files():
    for v in VERSIONS:
        store = FIXTURES / v / "store"
        for folder in ("config", "compaction"):
            if (store / folder).is_dir():
                for p in sorted((store / folder).iterdir()):
                    if p.name not in NOT_JSON:
                        yield pytest.param(p, id=f"{v}/{folder}/{p.name}")


def _schema_name(path) -> str:
    """The schema of a config file; a ``.bak`` (MixAll.string2File's previous copy) has its file's schema."""
    name = schema_for_file(path.name.removesuffix(".bak"))
    assert name is not None, path.name
    return name


def test_unquoted_integer_keys_stay_ints_and_tabs_are_whitespace():
    text = '{\n\t"offsetTable":{\n\t\t"TopicTest@GroupA":{0:29,1:31,-1:5\n\t\t}\n\t}\n}'
    value = parse(text).value
    assert value == {"offsetTable": {"TopicTest@GroupA": {0: 29, 1: 31, -1: 5}}}
    assert all(type(k) is int for k in value["offsetTable"]["TopicTest@GroupA"])


def test_quoted_keys_stay_strings():
    assert parse('{"0":1}').value == {"0": 1}
    assert parse('{0:1}').value == {0: 1}


def test_values():
    v = parse('[true,false,null,-12,1.5,2e3,"a\\u00e9\\n\\t\\"\\\\\\/",{},[]]').value
    assert v == [True, False, None, -12, 1.5, 2000.0, 'aé\n\t"\\/', {}, []]
    assert type(v[3]) is int and type(v[4]) is float


def test_surrogate_pair_escapes_join():
    assert parse('"\\ud83d\\ude80"').value == "🚀"


def test_positions_by_json_path():
    text = '{\n\t"a":{1:[10,20]}\n}'
    parsed = parse(text)
    assert text[parsed.positions[("a", 1, 1)]:].startswith("20")
    assert text[parsed.positions[("a",)]:].startswith("{1:")


@pytest.mark.parametrize("text,pos,path,words", [
    ('{\n\t"offsetTable":{1:2,2:', 24, ("offsetTable", 2), "end of text"),
    ('{"a":tru}', 5, ("a",), "expected a value"),
    ('{"a" 1}', 5, ("a",), "expected ':'"),
    ('{"a":1 "b":2}', 7, (), "expected ','"),
    ('{"a":"abc', 5, ("a",), "unterminated string"),
    ('{"a":1}x', 7, (), "after the end"),
    ('{a:1}', 1, (), "expected a key"),
    ('', 0, (), "end of text"),
])
def test_syntax_errors_have_position_and_path(text, pos, path, words):
    with pytest.raises(FastjsonSyntaxError) as info:
        parse(text)
    assert info.value.pos == pos
    assert info.value.path == path
    assert words in info.value.reason


def test_nesting_is_bounded():
    with pytest.raises(FastjsonSyntaxError, match="nesting"):
        parse("[" * 100 + "]" * 100)


def test_format_path():
    assert format_path(("topicConfigTable", "TopicTest", "perm")) == "$.topicConfigTable.TopicTest.perm"
    assert format_path(("offsetTable", "%RETRY%G@G", 0)) == "$.offsetTable['%RETRY%G@G'][0]"


# -- writer ---------------------------------------------------------------------------

def test_quote_like_serialize_writer():
    # SerializeWriter.writeStringWithDoubleQuote: short escapes, \u00XX for other controls, U+007F..U+009F
    # and U+2028/2029 as \uXXXX (upper-case hex); other non-ASCII and '/' as they are.
    assert quote('a"b\\c/d') == '"a\\"b\\\\c/d"'
    assert quote("\b\t\n\f\r\x00\x0b\x1f") == '"\\b\\t\\n\\f\\r\\u0000\\u000B\\u001F"'
    assert quote("\x7f\x9f\xa0é标签\u2028🚀") == '"\\u007F\\u009F\xa0é标签\\u2028🚀"'


def test_quote_browser_compatible():
    assert quote("a/é标🚀\x7f", browser_compatible=True) == '"a\\/\\u00E9\\u6807\\uD83D\\uDE80\\u007F"'


@pytest.mark.parametrize("value,text", [
    (1.0, "1.0"), (0.5, "0.5"), (123.456, "123.456"), (1e7, "1.0E7"), (1.5e-4, "1.5E-4"),
    (0.001, "0.001"), (-2.5, "-2.5"), (0.0, "0.0"), (9999999.0, "9999999.0"), (float("nan"), "null"),
])
def test_java_double(value, text):
    assert java_double(value) == text


def test_map_bean_list_and_set_layout():
    schema = {"type": "object", "x-java-class": "Bean", "properties": {
        "bean": {"type": "object", "x-java-class": "Inner", "properties": {}},
        "list": {"type": "array", "x-java-type": "List"},
        "map": {"type": "object"},
        "set": {"type": "array", "x-java-type": "Set"},
    }}
    value = {"bean": {}, "list": [1, 2], "map": {}, "set": ["x", "y"], "ints": {0: 1, 1: 2}}
    text = dumps(value, schema=schema, walker=child)
    assert text == ('{\n\t"bean":{\n\t\t\n\t},\n\t"list":[\n\t\t1,\n\t\t2\n\t],\n\t"map":{},\n'
                    '\t"set":["x","y"],\n\t"ints":{0:1,1:2\n\t}\n}')
    assert dumps(value, pretty=False) == '{"bean":{},"list":[1,2],"map":{},"set":["x","y"],"ints":{0:1,1:2}}'
    # BrowserCompatible (timermetrics) quotes non-string keys (WriteNonStringKeyAsString).
    assert dumps({0: {"a": "é"}}, pretty=False, browser_compatible=True) == '{"0":{"a":"\\u00E9"}}'


def test_null_properties_are_left_out():
    assert dumps({"a": None, "b": 1}) == '{\n\t"b":1\n}'


@pytest.mark.parametrize("path", list(_fixture_files()))
def test_every_vector_file_is_written_back_byte_for_byte(path):
    raw = path.read_bytes()
    schema = load_schema(_schema_name(path))
    opts = schema.get("x-fastjson", {})  # timermetrics: compact and BrowserCompatible
    assert dumps(parse(raw.decode("utf-8")).value, schema=schema, walker=child, pretty=opts.get("prettyFormat", True),
                 browser_compatible=opts.get("browserCompatible", False)).encode("utf-8") == raw


def test_non_json_config_files_are_timer_checkpoints():
    found = [p for v in VERSIONS for p in (FIXTURES / v / "store" / "config").iterdir() if p.name in NOT_JSON]
    assert found and all(p.stat().st_size == 4096 for p in found)


@pytest.mark.parametrize("path", list(_fixture_files()))
def test_parse_agrees_with_strict_json_after_quoting_keys(path):
    import re
    text = path.read_text(encoding="utf-8")
    strict = json.loads(re.sub(r"([{,])(-?\d+):", r'\1"\2":', text))
    value = parse(text).value

    def stringify(v):
        if isinstance(v, dict):
            return {str(k): stringify(x) for k, x in v.items()}
        if isinstance(v, list):
            return [stringify(x) for x in v]
        return v
    assert stringify(value) == strict


def test_fastjson2_quoted_queue_ids_read_as_fastjson_1_unquoted_ones(tmp_path):
    """fastjson2 (5.5.0 on) refuses unquoted names (apache/rocketmq #10284) and writes queue ids quoted. No
    5.5 file is at hand: the 5.3.3 vector's consumerOffset.json with its integer keys quoted reads to the same
    model, through the same schema."""
    import re

    from rmqformats.config import read_config_file
    src = FIXTURES / "rocketmq-5.3.3" / "store" / "config" / "consumerOffset.json"
    if not src.exists():
        pytest.skip("no 5.3.3 consumerOffset.json fixture")
    text = src.read_text(encoding="utf-8")
    quoted = re.sub(r"([{,]\s*)(\d+)(\s*:)", r'\1"\2"\3', text)
    assert quoted != text and re.search(r"[{,]\s*\d+\s*:", quoted) is None
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "consumerOffset.json").write_text(quoted, encoding="utf-8")
    a, b = read_config_file(str(src)), read_config_file(str(folder / "consumerOffset.json"))
    assert a.model == b.model and b.model.offset_table and not b.unknown_keys
