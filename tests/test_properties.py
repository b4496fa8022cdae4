"""The properties string parses as the broker parses it."""

from __future__ import annotations

import pytest

from rmqformats.properties import decode_crc32_property, format_properties, parse_properties


@pytest.mark.parametrize("text, expected", [
    ("", {}),
    ("TAGS\x01a", {"TAGS": "a"}),
    ("TAGS\x01a\x02", {"TAGS": "a"}),  # 4.0-4.9.0 and 5.2+ end with a separator
    ("TAGS\x01a\x02KEYS\x01k1 k2", {"TAGS": "a", "KEYS": "k1 k2"}),
    ("TAGS\x01a\x02KEYS\x01k1 k2\x02", {"TAGS": "a", "KEYS": "k1 k2"}),
    ("A\x01\x02B\x01b", {"B": "b"}),  # empty value dropped
    ("\x01x\x02B\x01b", {"B": "b"}),  # empty name dropped
    ("A\x01x\x01y", {"A": "x\x01y"}),  # the value keeps later U+0001
    ("A\x011\x02A\x012", {"A": "2"}),  # last wins, as in a Java HashMap
    ("noseparator\x02B\x01b", {"B": "b"}),
    ("城市\x01杭州\x02emoji\x01🚀 rocket", {"城市": "杭州", "emoji": "🚀 rocket"}),
])
def test_parse(text, expected):
    assert parse_properties(text) == expected


def test_format_round_trip():
    props = {"TAGS": "a", "KEYS": "k1 k2"}
    assert format_properties(props) == "TAGS\x01a\x02KEYS\x01k1 k2"
    assert format_properties(props, trailing_separator=True) == "TAGS\x01a\x02KEYS\x01k1 k2\x02"
    assert parse_properties(format_properties(props, trailing_separator=True)) == props


def test_crc32_property_digits_are_reversed():
    # Reference values: crc 123 is written "3210000000", 1774740973 is "3790474771".
    assert decode_crc32_property("3210000000") == 123
    assert decode_crc32_property("3790474771") == 1774740973
    assert decode_crc32_property("12") is None
    assert decode_crc32_property("abcdefghij") is None
