"""The generator's guard catches what broke the Go, Java, C++, C#, Rust, Lua and Nim builds.

Each planted spec has the shape that broke a target when its parsers were built with the
official runtime (``tests/test_targets.py``), and its fix; the guard
(:mod:`rmqformats.codegen.widths`, :mod:`rmqformats.codegen.names`) flags the first and accepts
the second, and ``make generate`` refuses a spec it flags.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rmqformats.codegen import names, widths

REPO = Path(__file__).resolve().parents[1]
KSC = REPO / "tools" / "ksc"


def _spec(seq: dict, instances: dict, enums: dict | None = None, types: dict | None = None) -> dict:
    return {"meta": {"id": "planted", "endian": "be"},
            "seq": [{"id": k, "type": v} if isinstance(v, str) else {"id": k, **v} for k, v in seq.items()],
            "instances": {k: {"value": v} for k, v in instances.items()}, "enums": enums or {}, "types": types or {}}


MAGIC = {"magic": {"type": "u4", "enum": "unit_magic"}}
ENUMS = {"unit_magic": {1: "enqueue", 3: "roll"}, "magic_flag": {1: "enqueue_bit", 2: "roll_bit"}}

#: (fields, bad expression, fixed expression, what the finding says): each broke a target's build or values.
WIDTHS = [
    # Go: `this.Magic & RocketmqTimerLog_MagicFlag__Roll` (mismatched enum types), rocketmq_timer_log
    (MAGIC, "(magic.to_i & magic_flag::roll_bit.to_i) != 0",
     "(magic.to_i.as<u4> & magic_flag::roll_bit.to_i.as<u4>) != 0", "enum operand"),
    # Java, C++, C#: delayed_time_ms typed int (80692662 instead of 1795377022390), rocketmq_timer_log
    ({"t": "s8", "d": "s4"}, "t.as<s8> + d.as<s8>", "(t.as<s8> + d.as<s8>).as<s8>", "typed 32-bit in Java"),
    # Java, C++: min_timestamp_index, a ?: of two s8 values typed int, rocketmq_checkpoint
    ({"a": "s8", "b": "s8"}, "a < b ? a : b", "(a < b ? a : b).as<s8>", "typed 32-bit in Java"),
    # Rust: `(curr_write_time_ms as i32) + (delay_ms as i64 as i32)`, rocketmq_timer_log
    ({"t": "s8", "d": "s4"}, "(t + d.as<s8>).as<s8>", "(t.as<s8> + d.as<s8>).as<s8>", "Rust computes it as i32"),
    # Rust: `(ofs_commitlog as i32) == (-1 as i32)`, rocketmq_batch_consumequeue
    ({"ofs": "s8"}, "ofs == -1", "ofs.as<s8> == (-1).as<s8>", "Rust computes it as i32"),
    # Rust: `(tags_code as i32) <= (-2147483649 as i32)` does not compile, rocketmq_consumequeue
    ({"tags": "s8"}, "tags <= -2147483649", "tags.as<s8> <= (-2147483649).as<s8>", "outside the i32 range"),
]


@pytest.mark.parametrize("fields,bad,good,message", WIDTHS, ids=[w[1] for w in WIDTHS])
def test_widths_flags_the_planted_shape_and_accepts_its_fix(fields, bad, good, message):
    found = widths.check_spec(_spec(fields, {"v": bad}, ENUMS))
    assert any(message in f.message and f.path == "/instances/v/value" for f in found), found
    assert widths.check_spec(_spec(fields, {"v": good}, ENUMS)) == []


def test_two_fields_of_one_type_need_no_cast_for_rust():
    assert widths.check_spec(_spec({"a": "s8", "b": "s8"}, {"v": "a < b"})) == []


NAMES = [
    # Lua and Nim: an enum value named `end` (rocketmq_tiered_index's file_magic)
    (_spec({}, {}, {"file_magic": {1: "begin_marker", 2: "end"}}), "/enums/file_magic/2", "keyword in lua, nim"),
    # Nim: the same value name in two enums (rocketmq_timer_log before its magic_flag values took _bit)
    (_spec({}, {}, {"unit_magic": {1: "roll"}, "magic_flag": {2: "roll"}}), "/enums", "Nim puts them in one scope"),
    # C#: a field named like a type declared in the same type (rocketmq_index_file's header)
    (_spec({"header": "header"}, {}, types={"header": {"seq": [{"id": "x", "type": "u1"}]}}), "/seq/0",
     "like a type or enum declared in the same type"),
    # C#: a field named like an enum of the same type (rocketmq_rocksdb_config_key's table_id)
    (_spec({"table_id": {"type": "u1", "enum": "table_id"}}, {}, {"table_id": {1: "topic"}}), "/seq/0",
     "like a type or enum declared"),
    # C#: an enum value of 2^31 or more (the BLANK magic 0xcbd43194)
    (_spec({}, {}, {"magic_code": {0xCBD43194: "blank"}}), "/enums/magic_code/3419681172", "int range of C#"),
    # C++ (and others): a field named like a keyword
    (_spec({"delete": "u1"}, {}), "/seq/0", "keyword in cpp_stl"),
]


@pytest.mark.parametrize("spec,path,message", NAMES, ids=[n[2] for n in NAMES])
def test_names_flags_what_a_target_cannot_build(spec, path, message):
    found = names.check_spec(spec)
    assert any(f.path == path and message in f.message for f in found), found


def test_names_accepts_the_renamed_forms():
    spec = _spec({"header": "index_header"}, {}, {"file_magic": {1: "begin_marker", 2: "end_marker"},
                                                  "magic_flag": {4: "roll_bit"}, "unit_magic": {3: "roll"}},
                 types={"index_header": {"seq": [{"id": "x", "type": "u1"}]}})
    assert names.check_spec(spec) == []


def test_every_spec_passes_the_name_check_but_the_open_ones():
    for path in sorted((REPO / "formats").glob("*.ksy")):
        found = names.check_spec(yaml.safe_load(path.read_text(encoding="utf-8")))
        assert [str(f) for f in found if f"{path.stem}{f.path}" not in names.OPEN] == [], path.name
    flagged = {f"{p.stem}{f.path}" for p in (REPO / "formats").glob("*.ksy")
               for f in names.check_spec(yaml.safe_load(p.read_text(encoding="utf-8")))}
    assert names.OPEN <= flagged, "an open finding is fixed: remove it from names.OPEN"


def test_generation_refuses_a_name_a_target_cannot_build(tmp_path):
    from rmqformats.codegen.__main__ import generate
    formats = tmp_path / "formats"
    formats.mkdir()
    (formats / "planted.ksy").write_text(yaml.safe_dump(_spec({"a": "u1"}, {}, {"kind": {1: "end"}})))
    with pytest.raises(SystemExit, match=r"names that some target cannot build:\n.*'end' is a keyword in lua"):
        generate(tmp_path / "out", formats, KSC)
