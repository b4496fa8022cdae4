"""Tests of the .ksy -> construct schema generator (rmqformats.codegen.construct_gen).

Each test writes a small spec as YAML, generates its module, executes it and
checks that known bytes parse to the expected values and build back to the
same bytes. The last tests run the generator on the real commit-log spec and
a real RocketMQ 5.1.4 segment.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import construct as c
import pytest
import yaml

from rmqformats.codegen import kexpr
from rmqformats.codegen.construct_gen import GenError, generate, main

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "formats" / "rocketmq_commitlog.ksy"
SEGMENT = ROOT / "tests" / "fixtures" / "rocketmq-5.1.4" / "store" / "commitlog" / "00000000000000000000"


def gen_source(ksy: str) -> str:
    return generate(yaml.safe_load(textwrap.dedent(ksy)), "test.ksy")


def load(ksy: str) -> dict:
    """Generate the module of a spec and execute it; returns its namespace."""
    namespace: dict = {}
    exec(compile(gen_source(ksy), "<generated>", "exec"), namespace)
    return namespace


def roundtrip(schema: c.Construct, data: bytes):
    """Parse ``data``, check that building the result gives ``data`` back, return the result."""
    parsed = schema.parse(data)
    assert schema.build(parsed) == data
    return parsed


# ---------------------------------------------------------------------------
# Expressions


@pytest.mark.parametrize("expr, python", [
    ("a + b * c", 'this["a"] + this["b"] * this["c"]'),
    ("(a + b) * c", '(this["a"] + this["b"]) * this["c"]'),
    ("a - (b - c)", 'this["a"] - (this["b"] - this["c"])'),
    ("x & 0x80 != 0", '(this["x"] & 0x80) != 0'),
    ("1_000 + 0b1010 + 0o17", "1000 + 10 + 15"),
    ("a ? b : c ? d : e", 'this["b"] if this["a"] else (this["d"] if this["c"] else this["e"])'),
    ("not a and b or c", 'not this["a"] and this["b"] or this["c"]'),
    ("-x.y.z", '-this["x"]["y"]["z"]'),
    ("~7 << 2", "~7 << 2"),
    ("_parent.len / 2", 'ka.div(this["_"]["len"], 2)'),
    ("7 / 2 % 3", "7 // 2 % 3"),
    ("_root.items[_index].tag", 'this["_root"]["items"][this["_index"]]["tag"]'),
    ("items.size + items.last.len", 'len(this["items"]) + this["items"][-1]["len"]'),
    ("not _io.eof and _io.pos < _io.size", "not ka.io_eof(this) and ka.io_pos(this) < ka.io_size(this)"),
    ("k == e::v", 'ka.enum_value(this["k"], E) == E.v'),
    ("k.to_i + 1", 'ka.to_i(this["k"]) + 1'),
    ("\"a\\tb\" == 'c\\d'", '"a\\tb" == "c\\\\d"'),
    ("true != false", "True != False"),
])
def test_expression_translation(expr, python):
    assert kexpr.translate(expr) == python


def test_expression_underscore_and_errors():
    assert kexpr.translate("_.len == 0", item="item") == 'item["len"] == 0'
    for bad in ("a < b < c", "[1, 2]", "a ?", "(a", "a b", "_ == 1", "sizeof<u4>", "_io"):
        with pytest.raises(kexpr.ExprError):
            kexpr.translate(bad)


def test_type_ref_parsing():
    path, args = kexpr.parse_type_ref("a::b(x.y, 1 + 2)")
    assert path == ("a", "b")
    assert [kexpr.translate(arg) for arg in args] == ['this["x"]["y"]', "1 + 2"]
    assert kexpr.parse_type_ref("u4") == (("u4",), None)


# ---------------------------------------------------------------------------
# Features


def test_if_and_instances_used_before_their_declaration():
    ns = load("""
        meta: {id: cond_test, endian: be}
        seq:
          - id: hdr
            type: u1
          - id: body
            size: body_len
            if: has_body
          - id: trailer
            type: u1
            if: not _io.eof
        instances:
          has_body:
            value: hdr & 0x80 != 0
          body_len:
            value: 'hdr & 0x7f'
          at_end:
            value: _io.pos
          body_tail:
            value: 'body_len > 1 ? body[body_len - 1] : 0'
            if: has_body
    """)
    schema = ns["cond_test"]
    parsed = roundtrip(schema, b"\x83abc\x09")
    assert (parsed.hdr, parsed.has_body, parsed.body_len, parsed.body, parsed.trailer) == (0x83, True, 3, b"abc", 9)
    assert parsed.at_end == 5  # an instance reading _io comes after the fields
    assert parsed.body_tail == ord("c")
    parsed = schema.parse(b"\x03")
    assert (parsed.has_body, parsed.body, parsed.trailer, parsed.body_tail) == (False, None, None, None)
    # Instances are computed, never given; a field whose condition is false may be left out.
    assert schema.build({"hdr": 0x82, "body": b"xy", "trailer": 1}) == b"\x82xy\x01"
    assert schema.build({"hdr": 0x02, "trailer": 1}) == b"\x02\x01"


def test_switch_on_integer():
    ns = load("""
        meta: {id: sw_int, endian: le}
        seq:
          - id: code
            type: u1
          - id: value
            type:
              switch-on: code
              cases:
                1: u1
                2: u2
                0x10: point
                _: u4be
        types:
          point:
            seq:
              - id: x
                type: s1
              - id: y
                type: s1
    """)
    schema = ns["sw_int"]
    assert roundtrip(schema, b"\x01\x07").value == 7
    assert roundtrip(schema, b"\x02\x01\x02").value == 0x0201
    point = roundtrip(schema, b"\x10\xff\x01").value
    assert (point.x, point.y) == (-1, 1)
    assert roundtrip(schema, b"\x09\x00\x00\x00\x05").value == 5


def test_switch_on_enum_with_size():
    ns = load("""
        meta: {id: sw_enum, endian: be}
        seq:
          - id: kind
            type: u1
            enum: kind
          - id: len_payload
            type: u1
          - id: payload
            size: len_payload
            type:
              switch-on: kind
              cases:
                'kind::number': u2
                'kind::text': text
        types:
          text:
            seq:
              - id: value
                type: str
                size-eos: true
                encoding: ASCII
        enums:
          kind:
            1: number
            2: text
            3: other
    """)
    schema, kind = ns["sw_enum"], ns["Kind"]
    parsed = roundtrip(schema, b"\x01\x02\x01\x00")
    assert parsed.kind == "number" and parsed.kind.intvalue == 1 and parsed.payload == 256
    assert roundtrip(schema, b"\x02\x03abc").payload.value == "abc"
    assert roundtrip(schema, b"\x03\x02xy").payload == b"xy"  # no case: raw bytes, as in Kaitai
    unknown = roundtrip(schema, b"\x09\x01z")
    assert unknown.kind == 9 and unknown.payload == b"z"
    # Building takes the enum as a name, an int or an IntEnum member.
    for value in ("text", 2, kind.text):
        assert schema.build({"kind": value, "len_payload": 3, "payload": {"value": "abc"}}) == b"\x02\x03abc"
    with pytest.raises(c.MappingError):
        schema.build({"kind": "nope", "len_payload": 0, "payload": b""})


def test_switch_on_bool():
    ns = load("""
        meta: {id: sw_bool, endian: be}
        seq:
          - id: flags
            type: u1
          - id: num
            type:
              switch-on: flags & 1 == 1
              cases:
                true: u2
                false: u1
    """)
    schema = ns["sw_bool"]
    assert roundtrip(schema, b"\x01\x00\x05").num == 5
    assert roundtrip(schema, b"\x00\x05").num == 5
    assert schema.build({"flags": 3, "num": 258}) == b"\x03\x01\x02"


def test_repeat_expr_and_until():
    ns = load("""
        meta: {id: reps, endian: be}
        seq:
          - id: count
            type: u1
          - id: fixed
            type: u2
            repeat: expr
            repeat-expr: count
          - id: zero_term
            type: u1
            repeat: until
            repeat-until: _ == 0
          - id: chunks
            type: chunk
            repeat: until
            repeat-until: _.tag == 0xff or _io.eof
        types:
          chunk:
            seq:
              - id: tag
                type: u1
    """)
    schema = ns["reps"]
    parsed = roundtrip(schema, b"\x02\x00\x01\x00\x02\x05\x06\x00\x07\x08")
    assert parsed.fixed == [1, 2]
    assert parsed.zero_term == [5, 6, 0]
    assert [chunk.tag for chunk in parsed.chunks] == [7, 8]  # stopped at the end of the stream
    parsed = schema.parse(b"\x00\x00\x07\xff\x09")
    assert [chunk.tag for chunk in parsed.chunks] == [7, 0xff]  # stopped at the 0xff tag
    assert schema.build(parsed) == b"\x00\x00\x07\xff"
    # A list whose condition holds before its end would not parse back.
    with pytest.raises(c.RepeatError):
        schema.build({"count": 0, "fixed": [], "zero_term": [0], "chunks": [{"tag": 0xff}, {"tag": 1}]})
    with pytest.raises(c.RepeatError):
        schema.build({"count": 0, "fixed": [], "zero_term": [1], "chunks": [{"tag": 1}]})
    with pytest.raises(c.RangeError):
        schema.build({"count": 2, "fixed": [1], "zero_term": [0], "chunks": [{"tag": 1}]})


def test_repeat_eos():
    ns = load("""
        meta: {id: reps_eos, endian: le}
        seq:
          - id: items
            type: u2
            repeat: eos
    """)
    schema = ns["reps_eos"]
    # "items" is also a dict method: read it by key.
    assert roundtrip(schema, b"\x01\x00\x02\x00")["items"] == [1, 2]
    assert roundtrip(schema, b"")["items"] == []
    with pytest.raises(c.StreamError):
        schema.parse(b"\x01\x00\x02")  # a truncated element is an error, not the end of the list


def test_size_expressions_with_ternaries():
    ns = load("""
        meta: {id: sizes, endian: be}
        seq:
          - id: mode
            type: u1
          - id: len_data
            type: u1
          - id: data
            size: 'mode == 0 ? 0 : mode == 1 ? 2 : len_data > 3 ? len_data - 1 : len_data'
          - id: boxed
            size: 'mode == 0 ? 1 : 3'
            type: box
          - id: rest
            size-eos: true
        types:
          box:
            seq:
              - id: a
                type: u1
            instances:
              pos_after_a:
                value: _io.pos
              left:
                value: _io.size - _io.pos
    """)
    schema = ns["sizes"]
    # The same schema object evaluates the ternary again on every parse.
    cases = [
        (b"\x00\x09" + b"\x01" + b"zz", b"", 0),
        (b"\x01\x09" + b"ab" + b"\x01\x00\x00" + b"zz", b"ab", 2),
        (b"\x02\x05" + b"abcd" + b"\x01\x00\x00" + b"z", b"abcd", 2),
        (b"\x02\x02" + b"ab" + b"\x01\x00\x00", b"ab", 2),
    ]
    for data, expected, left in cases:
        parsed = roundtrip(schema, data)
        assert parsed.data == expected
        assert (parsed.boxed.a, parsed.boxed.pos_after_a, parsed.boxed.left) == (1, 1, left)
    assert schema.build({"mode": 1, "len_data": 0, "data": b"xy", "boxed": {"a": 7}, "rest": b""}) \
        == b"\x01\x00xy\x07\x00\x00"
    with pytest.raises(c.StreamError):
        schema.build({"mode": 1, "len_data": 0, "data": b"xyz", "boxed": {"a": 7}, "rest": b""})


def test_str_and_contents():
    ns = load("""
        meta: {id: strs, endian: be, encoding: UTF-8}
        seq:
          - id: magic
            contents: [0x7f, "KS"]
          - id: len_name
            type: u1
          - id: name
            type: str
            size: len_name
          - id: latin
            type: str
            size: 2
            encoding: ISO-8859-1
          - id: tail
            type: str
            size-eos: true
    """)
    schema = ns["strs"]
    name = "h\u00e9"
    data = b"\x7fKS\x03" + name.encode("utf-8") + "\u00e9\u00e8".encode("latin-1") + b"end"
    parsed = roundtrip(schema, data)
    assert (parsed.magic, parsed.name, parsed.latin, parsed.tail) == (b"\x7fKS", name, "\u00e9\u00e8", "end")
    assert schema.build({"len_name": 1, "name": "x", "latin": "ab", "tail": ""}) == b"\x7fKS\x01xab"
    with pytest.raises(c.ConstError):
        schema.parse(b"\x7fKZ\x00ab")


def test_enums():
    ns = load("""
        meta: {id: enums_test, endian: le}
        seq:
          - id: color
            type: u2
            enum: color
          - id: shade
            type: s1
            enum: color
        instances:
          color_code:
            value: color.to_i * 10
          is_red:
            value: color == color::red
          is_dark:
            value: shade.to_i < 0
        enums:
          color:
            1: red
            2:
              id: green
              doc: The green one.
            0x102: blue
            -1: black
    """)
    schema, color = ns["enums_test"], ns["Color"]
    assert issubclass(color, __import__("enum").IntEnum)
    assert (color.red, color.green, color.blue, color.black) == (1, 2, 0x102, -1)
    parsed = roundtrip(schema, b"\x02\x01\xff")
    assert (parsed.color, parsed.shade) == ("blue", "black")
    assert (parsed.color_code, parsed.is_red, parsed.is_dark) == (2580, False, True)
    parsed = roundtrip(schema, b"\x01\x00\x05")
    assert (parsed.color, parsed.shade, parsed.is_red, parsed.is_dark) == ("red", 5, True, False)
    for value in ("red", 1, color.red):
        assert schema.build({"color": value, "shade": "green"}) == b"\x01\x00\x02"


VALID_SPEC = """
    meta: {id: valids, endian: be}
    seq:
      - id: magic
        type: u2
        valid: 0xcafe
      - id: version
        type: u1
        valid:
          eq: 2
      - id: level
        type: u1
        valid:
          min: 1
          max: 5
      - id: mode
        type: u1
        valid:
          any-of: [1, 3, kind::y.to_i]
      - id: kind
        type: u1
        enum: kind
        valid:
          in-enum: true
      - id: even
        type: u1
        valid:
          expr: _ % 2 == 0 and _ < level * 10
      - id: state
        type: u1
        enum: kind
        valid:
          eq: kind::y
    enums:
      kind:
        1: x
        2: y
"""
VALID_DATA = b"\xca\xfe\x02\x03\x03\x01\x04\x02"


@pytest.mark.parametrize("field, offset, bad_byte, bad_value", [
    ("magic", 1, 0xff, 0xcaff),
    ("version", 2, 3, 3),
    ("level", 3, 0, 0),  # min
    ("level", 3, 6, 6),  # max
    ("mode", 4, 4, 4),
    ("kind", 5, 9, 9),
    ("even", 6, 5, 5),
    ("even", 6, 40, 40),
    ("state", 7, 1, "x"),
])
def test_valid_violations_raise_on_parse_and_build(field, offset, bad_byte, bad_value):
    schema = load(VALID_SPEC)["valids"]
    good = roundtrip(schema, VALID_DATA)
    assert (good.mode, good.kind, good.state) == (3, "x", "y")
    bad = bytearray(VALID_DATA)
    bad[offset] = bad_byte
    with pytest.raises(c.ValidationError):
        schema.parse(bytes(bad))
    values = {key: value for key, value in good.items() if not key.startswith("_")}
    values[field] = bad_value
    with pytest.raises(c.ValidationError):
        schema.build(values)


def test_valid_any_of_accepts_each_value():
    schema = load(VALID_SPEC)["valids"]
    for mode in (1, 2, 3):
        data = VALID_DATA[:4] + bytes([mode]) + VALID_DATA[5:]
        assert roundtrip(schema, data).mode == mode


def test_params():
    ns = load("""
        meta: {id: params_test, endian: be}
        seq:
          - id: len_a
            type: u1
          - id: wide
            type: u1
          - id: a
            type: blob(len_a * 2, wide != 0)
          - id: b
            type: blob(1, false)
        types:
          blob:
            params:
              - id: n
                type: u4
              - id: is_wide
                type: bool
            seq:
              - id: data
                size: n
              - id: num
                type:
                  switch-on: is_wide
                  cases:
                    true: u2
                    false: u1
    """)
    schema, blob = ns["params_test"], ns["blob"]
    parsed = roundtrip(schema, b"\x01\x01ab\x00\x07c\x09")
    assert (parsed.a.n, parsed.a.is_wide, parsed.a.data, parsed.a.num) == (2, True, b"ab", 7)
    assert (parsed.b.n, parsed.b.is_wide, parsed.b.data, parsed.b.num) == (1, False, b"c", 9)
    parsed = roundtrip(schema, b"\x02\x00abcd\x05z\x06")  # same schema, other argument values
    assert (parsed.a.n, parsed.a.is_wide, parsed.a.data, parsed.a.num) == (4, False, b"abcd", 5)
    # Params are computed: building needs only the seq fields.
    built = schema.build({"len_a": 1, "wide": 1, "a": {"data": b"xy", "num": 1}, "b": {"data": b"z", "num": 2}})
    assert built == b"\x01\x01xy\x00\x01z\x02"
    # From outside: a type with params is a function of values or of functions of the parent context.
    assert blob(3, False).parse(b"xyz\x01").num == 1
    assert blob(lambda parent: 1, lambda parent: True).build({"data": b"q", "num": 3}) == b"q\x00\x03"


def test_pos_instances_read_and_build_at_their_position():
    ns = load("""
        meta: {id: t, endian: be}
        seq:
          - {id: n, type: u1}
          - {id: inner, type: inner, size: 4}
        instances:
          tail: {pos: 1 + n, type: u1, repeat: expr, repeat-expr: 2}
          maybe: {pos: 0, type: u1, if: n > 5}
        types:
          inner:
            seq: [{id: a, type: u1}]
            instances:
              third: {pos: 2, type: u1}
    """)
    data = bytes([2, 10, 0, 12, 0])
    parsed = roundtrip(ns["t"], data)
    assert parsed.tail == [12, 0] and parsed.maybe is None
    assert parsed.inner.third == 12  # pos counts from the start of inner's own 4-byte stream


def test_bit_fields_with_enum():
    ns = load("""
        meta: {id: bits_test, endian: be}
        seq:
          - id: flags
            type: flags
          - id: after
            type: u1
        types:
          flags:
            seq:
              - id: version
                type: b3
              - id: color
                type: b2
                enum: color
              - id: is_on
                type: b1
              - id: pad
                type: b2
                valid: 0
              - id: count
                type: b8
        enums:
          color:
            0: red
            1: green
            2: blue
    """)
    schema = ns["bits_test"]
    parsed = roundtrip(schema, bytes([0b101_10_1_00, 0x2A, 0x07]))
    flags = parsed.flags
    assert (flags.version, flags.color, flags.is_on, flags.pad, flags.count) == (5, "blue", True, 0, 0x2A)
    assert flags.is_on is True
    built = schema.build({"flags": {"version": 1, "color": "green", "is_on": False, "pad": 0, "count": 255},
                          "after": 0})
    assert built == bytes([0b001_01_0_00, 0xff, 0x00])
    with pytest.raises(c.ValidationError):
        schema.parse(bytes([0b101_10_1_01, 0x2A, 0x07]))


def test_recursive_type_and_nested_types():
    ns = load("""
        meta: {id: tree, endian: be}
        seq:
          - id: root
            type: node
        types:
          node:
            seq:
              - id: value
                type: u1
              - id: has_next
                type: u1
              - id: next
                type: node
                if: has_next != 0
              - id: extra
                type: extra
            types:
              extra:
                seq:
                  - id: tag
                    type: u1
                  - id: parent_value
                    type: u1
                    valid:
                      expr: _ == _parent.value
    """)
    parsed = roundtrip(ns["tree"], b"\x01\x01\x02\x00\x0a\x02\x0b\x01")
    assert (parsed.root.value, parsed.root.next.value, parsed.root.next.next) == (1, 2, None)
    assert (parsed.root.extra.tag, parsed.root.next.extra.tag) == (0x0b, 0x0a)


def test_nested_types_with_the_same_name():
    ns = load("""
        meta: {id: nested, endian: le}
        seq:
          - id: a
            type: outer_a
          - id: b
            type: outer_b
        types:
          outer_a:
            seq:
              - id: item
                type: item
            types:
              item:
                seq:
                  - id: v
                    type: u1
          outer_b:
            seq:
              - id: item
                type: item
            types:
              item:
                seq:
                  - id: v
                    type: u2
    """)
    assert "outer_a__item" in ns and "outer_b__item" in ns
    parsed = roundtrip(ns["nested"], b"\x01\x02\x00")
    assert (parsed.a.item.v, parsed.b.item.v) == (1, 2)


@pytest.mark.parametrize("ksy, path", [
    ("seq: [{id: x, size: 4, process: xor(0x55)}]", "seq/0/process"),
    ("seq: [{id: x, type: strz, encoding: ASCII}]", "seq/0/type"),
    ("seq: [{id: x, size-eos: true, terminator: 0}]", "seq/0/terminator"),
    ("seq: [{id: x, type: u1}]\ninstances: {y: {pos: 4, io: _root._io, type: u1}}", "instances/y/io"),
    ("seq: [{id: x, type: t}]\ntypes: {t: {seq: [{id: a, type: u1, pad-right: 0}]}}", "types/t/seq/0/pad-right"),
    ("seq: [{id: x, type: b4}, {id: y, type: u1}]", "seq/0/type"),
    ("seq: [{id: x, type: b3}]", "seq"),
    ("seq: [{id: x, size: nope}]", "seq/0/size"),
    ("seq: [{id: x, size: y}, {id: y, type: u1}]", "seq/0"),
    ("seq: [{id: x, size: z}, {id: y, type: u1}]\ninstances: {z: {value: y}}", "seq/0"),
    ("seq: [{id: x, type: u4}]", "seq/0/type"),  # no endianness
    ("seq: [{id: x, type: missing}]", "seq/0/type"),
    ("seq: [{id: x, type: 'u1', repeat: until}]", "seq/0"),
    ("seq: [{id: x, type: 'u1', valid: {in-enum: true}}]", "seq/0/valid/in-enum"),
    ("meta: {id: t, imports: [other]}\nseq: []", "meta/imports"),
    ("meta: {id: t, endian: {switch-on: x, cases: {}}}\nseq: []", "meta/endian"),
    ("seq: []\nfoo: 1", "foo"),
    ("seq: [{id: x, type: u1}]\ninstances: {a: {value: b}, b: {value: a}}", "instances/a"),
    ("seq: [{id: x, type: u1, enum: nope}]", "seq/0/enum"),
    ("seq: [{id: x, type: u1}]\nenums: {e: {1: a}}\ninstances: {y: {value: e::b}}", "instances/y/value"),
])
def test_unsupported_features_raise_with_spec_path(ksy, path):
    spec = yaml.safe_load(ksy)
    spec.setdefault("meta", {"id": "t"})
    with pytest.raises(GenError) as info:
        generate(spec, "bad.ksy")
    assert str(info.value).startswith(f"bad.ksy: {path}")


# ---------------------------------------------------------------------------
# The real commit-log spec and a real segment


@pytest.fixture(scope="module")
def commitlog() -> dict:
    with open(SPEC, encoding="utf-8") as f:
        source = generate(yaml.safe_load(f), "formats/rocketmq_commitlog.ksy")
    namespace: dict = {}
    exec(compile(source, "<rocketmq_commitlog>", "exec"), namespace)
    return namespace


def test_generation_is_deterministic_and_checked_in_module_is_current():
    with open(SPEC, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    source = generate(spec, "formats/rocketmq_commitlog.ksy")
    assert generate(yaml.safe_load(SPEC.read_text(encoding="utf-8")), "formats/rocketmq_commitlog.ksy") == source
    assert source.startswith("# Generated from formats/rocketmq_commitlog.ksy")
    checked_in = ROOT / "generated" / "construct" / "rocketmq_commitlog.py"
    assert checked_in.read_text(encoding="utf-8") == source, "regenerate generated/construct"


def test_cli_writes_module_named_after_meta_id(tmp_path, capsys):
    assert main([str(SPEC), "--out", str(tmp_path)]) == 0
    written = tmp_path / "rocketmq_commitlog.py"
    assert written.read_text(encoding="utf-8") == generate(
        yaml.safe_load(SPEC.read_text(encoding="utf-8")), "formats/rocketmq_commitlog.ksy")
    bad = tmp_path / "bad.ksy"
    bad.write_text("meta: {id: bad}\nseq: [{id: x, size: 1, process: zlib}]\n", encoding="utf-8")
    assert main([str(bad), "--out", str(tmp_path)]) == 1
    assert "seq/0/process" in capsys.readouterr().err


def test_real_segment_parses_and_messages_rebuild(commitlog):
    data = SEGMENT.read_bytes()
    assert len(data) == 256 * 1024
    segment = commitlog["rocketmq_commitlog"].parse(data)
    records = segment.records
    assert len(records) == 279

    first = records[0]
    assert (first.len_record, first.magic, first.is_message) == (233, "message_v1", True)
    msg = first.body
    assert (msg.is_v2, msg.queue_id, msg.topic, msg.body) == (False, 0, "TopicTest", b"Hello RocketMQ 0")
    assert (bytes(msg.born_host.address), msg.born_host.port) == (bytes([192, 0, 2, 10]), 54321)
    assert (bytes(msg.store_host.address), msg.store_host.port) == (bytes([127, 0, 0, 1]), 10911)
    assert msg.sys_flag.transaction_type == "not_type" and msg.sys_flag.is_compressed is False

    offset = 0
    messages = 0
    record = commitlog["record"]
    for rec in records[:-1]:
        assert rec.is_message
        assert rec.body.len_record_computed == rec.len_record
        assert record.build(rec) == data[offset:offset + rec.len_record]
        offset += rec.len_record
        messages += 1
    assert messages == 278

    blank = records[-1]
    assert (blank.magic, blank.is_message, blank.len_record, offset) == ("blank", False, 197486, 64658)
    assert blank.len_padding == 197486 - 8
    assert offset + blank.len_record == len(data)
    # The whole list builds back too: every record, and the 8-byte header of BLANK.
    assert commitlog["rocketmq_commitlog"].build(segment) == data[:offset + 8]


def test_real_spec_builds_from_plain_values(commitlog):
    record, message, magic_code = commitlog["record"], commitlog["message"], commitlog["MagicCode"]
    data = SEGMENT.read_bytes()
    original = data[:233]
    parsed = record.parse(original)
    msg = parsed.body

    def plain(container):
        return {k: plain(v) if isinstance(v, dict) else v for k, v in container.items() if not k.startswith("_")}

    values = plain(parsed)
    for computed in ("is_message", "len_padding"):
        del values[computed]
    for computed in ("is_v2", "len_host_fields", "len_record_computed"):
        del values["body"][computed]
    for host in ("born_host", "store_host"):
        del values["body"][host]["len_address"]
    for magic in ("message_v1", int(magic_code.message_v1), magic_code.message_v1):
        values["magic"] = magic
        assert record.build(values) == original
    # The message type on its own, with the record it belongs to as its parent (it reads its
    # version from the record's magic).
    assert message.build(plain(msg), magic="message_v1") == original[8:]
    assert message.parse(original[8:], magic="message_v1").topic == "TopicTest"


def test_fixture_segment_present():
    """The real-data tests read a copy of the 5.1.4 vector kept in tests/fixtures."""
    assert SEGMENT.is_file()
