"""Every spec compiles for every target of the pinned compiler, and no expression mixes integer widths.

No Go toolchain (nor Kaitai's Go runtime) is assumed, so the Go target is
guarded by :mod:`rmqformats.codegen.widths`, which flags what the Go compiler
would refuse: integer operands of different widths meeting without a cast.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from rmqformats.codegen import kexpr
from rmqformats.codegen.__main__ import compile_ksy
from rmqformats.codegen.widths import check_spec

REPO = Path(__file__).resolve().parents[1]
KSC = REPO / "tools" / "ksc"
SPECS = sorted((REPO / "formats").glob("*.ksy"))


def _languages() -> list[str]:
    script = "console.log(JSON.stringify(require('kaitai-struct-compiler').languages))"
    proc = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True,
                          env={"NODE_PATH": str(KSC / "node_modules"), "PATH": "/usr/bin:/bin:/usr/local/bin"})
    return json.loads(proc.stdout)


def test_the_compiler_offers_the_usual_targets():
    assert {"go", "java", "cpp_stl", "javascript", "python", "rust", "csharp"} <= set(_languages())


@pytest.mark.parametrize("lang", _languages())
def test_every_spec_compiles_for(tmp_path, lang):
    compile_ksy(lang, SPECS, tmp_path, KSC)
    produced = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(produced) >= len(SPECS)


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_no_expression_mixes_integer_widths(spec):
    assert [str(f) for f in check_spec(yaml.safe_load(spec.read_text(encoding="utf-8")))] == []


def _planted(seq_types: dict, instances: dict, types: dict | None = None) -> dict:
    return {
        "meta": {"id": "planted", "endian": "be"},
        "seq": [{"id": name, "type": ty} for name, ty in seq_types.items()],
        "instances": {name: {"value": v} if isinstance(v, str) else v for name, v in instances.items()},
        "types": types or {},
    }


# The shapes that broke the Go output before the specs got their casts, and their fixes.
PLANTED = [
    # rocketmq_batch_consumequeue.go: MsgBaseOffset + NumMessages (int64 and int16)
    ({"base": "s8", "num": "s2"}, "base + num", "base + num.as<s8>", "`+` mixes int64 and int16"),
    # rocketmq_commitlog.go: (74 + tmp31) + tmp32 (int and int8): an instance is `int`, a ?: of
    # small literals `int8`
    ({"a": "s4", "b": "s4", "v2": "u1"}, "74 + sum_ab + (v2 == 1 ? 2 : 1)",
     "74 + sum_ab.as<s4> + (v2 == 1 ? 2 : 1).as<s4>", "mixes int and int8"),
    # a ?: is stored in a temporary typed after its first branch (`int` for `x - 8`)
    ({"x": "s4"}, "x > 8 ? x - 8 : 0", "x > 8 ? (x - 8).as<s4> : 0", "first branch of ?: is int32"),
    # comparisons mix widths too; _io.size is int64 in Go
    ({"n": "s4"}, "n < _io.size", "n.as<s8> < _io.size", "`<` mixes int32 and int64"),
    # a literal outside the int32 range is typed (int64(...)): it does not adapt
    ({"n": "u4"}, "n == 4294967296", "n.as<s8> == 4294967296", "`==` mixes uint32 and int64"),
]


def _go(findings):
    """The findings about Go (the others are about Java, C++, C# and Rust: tests/test_codegen_guard.py)."""
    return [f for f in findings if "Rust" not in f.message and "Java" not in f.message]


@pytest.mark.parametrize("fields,bad,good,message", PLANTED, ids=[p[1] for p in PLANTED])
def test_the_check_flags_a_planted_mix_and_accepts_its_cast(fields, bad, good, message):
    extra = {"sum_ab": "a + b"} if "a" in fields else {}  # an instance: `int` in Go
    found = _go(check_spec(_planted(fields, {**extra, "v": bad})))
    assert found and any(message in f.message for f in found), found
    assert found[0].path == "/instances/v/value" and found[0].expr == bad
    assert _go(check_spec(_planted(fields, {**extra, "v": good}))) == []


def test_the_check_covers_type_arguments_and_positions():
    types = {"t": {"params": [{"id": "n", "type": "u4"}], "seq": []}}
    bad = _planted({"a": "s4"}, {"w": {"pos": "a + _io.pos", "type": "t(a)"}}, types)
    messages = [f"{f.path}: {f.message}" for f in _go(check_spec(bad))]
    assert any("/instances/w/pos" in m and "mixes int32 and int64" in m for m in messages), messages
    assert any("/instances/w/type" in m and "argument 1 is int32" in m for m in messages), messages
    good = _planted({"a": "s4"}, {"w": {"pos": "a.as<s8> + _io.pos", "type": "t(a.as<u4>)"}}, types)
    assert _go(check_spec(good)) == []


def test_generation_refuses_a_spec_that_mixes_widths(tmp_path):
    from rmqformats.codegen.__main__ import generate
    formats = tmp_path / "formats"
    formats.mkdir()
    spec = _planted({"base": "s8", "num": "s2"}, {"end": "base + num"})
    (formats / "planted.ksy").write_text(yaml.safe_dump(spec))
    with pytest.raises(SystemExit, match=r"planted.ksy/instances/end/value: 'base \+ num'"):
        generate(tmp_path / "out", formats, KSC)


def test_casts_parse_and_translate_to_python():
    node = kexpr.parse("(len_body > 0 ? len_body : 0).as<s4> + x.y.as<foo::bar>")
    assert isinstance(node.left, kexpr.Cast) and node.left.type_name == "s4"
    assert node.right.type_name == "foo::bar"
    assert kexpr.translate("a + b.as<s8>") == 'this["a"] + this["b"]'
    assert kexpr.evaluate("(a - 3).as<s4> * 2", {"a": 5}) == 4


#: The specs whose Go output the Go compiler refused before they had casts (pinned compiler, Go
#: 1.x, Kaitai's Go runtime): `(74 + tmp31) + tmp32 (mismatched types int and int8)` and the like.
GO_FAILED_WITHOUT_CASTS = {"rocketmq_batch_consumequeue", "rocketmq_checkpoint", "rocketmq_commitlog",
                           "rocketmq_index_file", "rocketmq_message_batch", "rocketmq_timer_log"}
GO_COMPILED = {"rocketmq_consumequeue", "rocketmq_consumequeue_ext", "rocketmq_timer_check",
               "rocketmq_timer_wheel"}


def test_without_their_casts_the_check_flags_exactly_the_specs_go_refused():
    import re
    flagged = set()
    for path in SPECS:
        if path.stem not in GO_FAILED_WITHOUT_CASTS | GO_COMPILED:
            continue
        text = re.sub(r"\.as<[a-z0-9_:]+>", "", path.read_text(encoding="utf-8"))
        if _go(check_spec(yaml.safe_load(text))):
            flagged.add(path.stem)
    assert flagged == GO_FAILED_WITHOUT_CASTS
