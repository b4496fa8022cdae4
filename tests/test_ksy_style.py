"""The specs follow the Kaitai format gallery's conventions (its KSY style guide).

Keys starting with ``-`` other than ``-orig-id`` (``-webide-representation``,
``-rmq-since``, ...) are not the compiler's and may stand anywhere.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from rmqformats.codegen import kexpr

REPO = Path(__file__).resolve().parents[1]
KSC = REPO / "tools" / "ksc"
SPECS = sorted((REPO / "formats").glob("*.ksy"))
META_ORDER = ["id", "title", "application", "file-extension", "xref", "tags", "license", "ks-version",
              "imports", "encoding", "endian", "bit-endian"]
SPDX = {"Apache-2.0", "CC0-1.0", "MIT", "BSD-3-Clause"}
#: Fields with no RocketMQ Java name (containers and unused bits); all others carry -orig-id.
NO_JAVA_NAME = {"records", "messages", "units", "slots", "body@record", "body@unit", "reserved", "address", "port", "hash_slots@index_tables", "entries@index_tables",
                "hash_slots@inferred_tables", "entries@inferred_tables"}
#: Magic fields RocketMQ itself never checks (batch items: clients write 0, decoders skip it).
UNCHECKED_MAGIC = {"rocketmq_message_batch:item.magic"}


def _types(spec):
    yield spec["meta"]["id"], spec
    stack = list((spec.get("types") or {}).items())
    while stack:
        name, t = stack.pop()
        yield name, t
        stack.extend((t.get("types") or {}).items())


@pytest.fixture(params=SPECS, ids=lambda p: p.name)
def spec(request):
    return yaml.safe_load(request.param.read_text(encoding="utf-8"))


def test_meta(spec):
    keys = list(spec["meta"])
    assert keys == [k for k in META_ORDER if k in keys], "meta keys out of the gallery's order"
    assert spec["meta"]["license"] in SPDX
    assert spec.get("doc") and spec.get("doc-ref")
    xref = spec["meta"].get("xref") or {}
    assert list(xref) == sorted(xref), "xref keys go in alphabetic order"


def test_every_type_and_field_is_documented(spec):
    missing = []
    for name, t in _types(spec):
        if t is not spec:
            for key in ("doc", "doc-ref", "-webide-representation"):
                if not t.get(key):
                    missing.append(f"{name}: {key}")
        for f in t.get("seq") or []:
            if not f.get("doc"):
                missing.append(f"{name}.{f['id']}: doc")
            if "-orig-id" not in f and f["id"] not in NO_JAVA_NAME and f"{f['id']}@{name}" not in NO_JAVA_NAME:
                missing.append(f"{name}.{f['id']}: -orig-id")
        for iid, inst in (t.get("instances") or {}).items():
            if not inst.get("doc"):
                missing.append(f"{name}.{iid}: doc")
        for p in t.get("params") or []:
            if not p.get("doc"):
                missing.append(f"{name}({p['id']}): doc")
    for ename, values in (spec.get("enums") or {}).items():
        for value, info in values.items():
            if not isinstance(info, dict) or not info.get("doc"):
                missing.append(f"enum {ename}::{value}: doc")
    assert missing == []


def test_magic_codes_are_validated(spec):
    for name, t in _types(spec):
        for f in t.get("seq") or []:
            if "magic" in f["id"] and f"{spec['meta']['id']}:{name}.{f['id']}" not in UNCHECKED_MAGIC:
                assert "valid" in f or "contents" in f, f"{name}.{f['id']} has no valid:"


def test_field_names_use_gallery_prefixes(spec):
    """Lengths are len_*, offsets ofs_*, counts num_* (not *_length, *_offset, *_count)."""
    bad = [f"{name}.{f['id']}" for name, t in _types(spec) for f in t.get("seq") or []
           if f["id"].endswith(("_length", "_len", "_size", "_count", "_num")) or f["id"].startswith("length_")]
    assert bad == []


# -- key order, line width, ks-version, enums -------------------------------------------------

#: The guide's order of keys in a sequence attribute (``valid`` after the type-related keys).
ATTR_ORDER = ["id", "-orig-id", "size", "size-eos", "type", "enum", "contents", "pad-right", "terminator",
              "include", "consume", "eos-error", "encoding", "process", "valid", "repeat", "repeat-expr",
              "repeat-until", "if", "doc", "doc-ref"]
#: Instances: ``-orig-id``, ``io``, ``pos`` or ``value``, then the attribute order.
INSTANCE_ORDER = ["-orig-id", "io", "pos", "value"] + [k for k in ATTR_ORDER if k not in ("id", "-orig-id")]
#: Types: meta, doc, doc-ref, then params and seq; instances, types and enums in any order after.
TYPE_ORDER = ["meta", "doc", "doc-ref", "params", "seq", "instances|types|enums"]
ENUM_VALUE_ORDER = ["id", "-orig-id", "doc", "doc-ref"]
PARAM_ORDER = ["id", "type", "enum", "doc", "doc-ref"]
URL_LINE = re.compile(r"^\s*(- |[a-z-]+: )?https?://\S+$")


def _out_of_order(keys, order: list[str]) -> list[str]:
    """Keys that come before one that the order puts ahead of them (free ``-`` keys skipped)."""
    rank = {}
    for i, group in enumerate(order):
        for k in group.split("|"):
            rank[k] = i
    checked = [k for k in keys if not (str(k).startswith("-") and k not in rank)]
    unknown = [k for k in checked if k not in rank]
    bad = [f"{a} before {b}" for a, b in zip(checked, checked[1:]) if a in rank and b in rank and rank[a] > rank[b]]
    return [f"unknown key {k!r}" for k in unknown] + bad


def _attributes(spec):
    """(where, attribute, is_instance) for every seq attribute and instance of every type."""
    for name, t in _types(spec):
        for i, attr in enumerate(t.get("seq") or []):
            yield f"{name}/seq/{i} ({attr.get('id')})", attr, False
        for iid, inst in (t.get("instances") or {}).items():
            yield f"{name}/instances/{iid}", inst, True


def test_keys_follow_the_guides_order(spec):
    problems = []
    for name, t in _types(spec):
        problems += [f"{name}: {p}" for p in _out_of_order(list(t), TYPE_ORDER)
                     if not p.startswith("unknown")]
        for p in t.get("params") or []:
            problems += [f"{name} param {p.get('id')}: {x}" for x in _out_of_order(list(p), PARAM_ORDER)]
    for where, attr, is_instance in _attributes(spec):
        order = INSTANCE_ORDER if is_instance else ATTR_ORDER
        problems += [f"{where}: {p}" for p in _out_of_order(list(attr), order)]
    for ename, values in (spec.get("enums") or {}).items():
        for value, info in values.items():
            if isinstance(info, dict):
                problems += [f"enum {ename}::{value}: {p}" for p in _out_of_order(list(info), ENUM_VALUE_ORDER)]
    assert problems == []


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_lines_fit_in_80_columns(path):
    """Only a line that is one URL (a ``doc-ref``) may be longer; long ``doc`` strings are blocks."""
    long_lines = [f"{path.name}:{n}: {len(line)} columns" for n, line in
                  enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                  if len(line) > 80 and not URL_LINE.match(line)]
    assert long_lines == []


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_ks_version_is_quoted(path):
    """YAML reads an unquoted 0.10 as the number 0.1."""
    assert re.search(r"^  ks-version: '\d+\.\d+'$", path.read_text(encoding="utf-8"), re.M)


@lru_cache(maxsize=1)
def _lowest_versions() -> dict:
    proc = subprocess.run(["node", str(KSC / "lowest.js"), *map(str, SPECS)], capture_output=True, text=True,
                          env={"NODE_PATH": str(KSC / "node_modules"), "PATH": "/usr/bin:/bin:/usr/local/bin"})
    assert proc.returncode == 0, proc.stderr
    return {Path(k).name: v for k, v in json.loads(proc.stdout).items()}


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_ks_version_is_the_lowest_that_compiles_every_target(path):
    """The lowest release among 0.9, 0.10 and the pinned 0.11 whose every target compiles the spec."""
    found = _lowest_versions()[path.name]
    declared = yaml.safe_load(path.read_text(encoding="utf-8"))["meta"]["ks-version"]
    assert found["lowest"] is not None, found["failures"]
    assert declared == found["lowest"], f"ks-version {declared!r}; lower releases fail: {found['failures']}"


def _enum_uses(spec) -> set[str]:
    used = set()

    def scan(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "enum" and isinstance(value, str):
                    used.add(value.split("::")[-1])
                elif key in ("value", "if", "size", "pos", "repeat-expr", "repeat-until", "switch-on"):
                    text = str(value)
                    used.update(m.group(1) for m in re.finditer(r"([a-z_][a-z0-9_]*)::[a-z_]", text))
                elif key == "cases" and isinstance(value, dict):
                    for case in value:
                        used.update(m.group(1) for m in re.finditer(r"([a-z_][a-z0-9_]*)::[a-z_]", str(case)))
                if key == "valid" and isinstance(value, dict):
                    used.update(m.group(1) for m in re.finditer(r"([a-z_][a-z0-9_]*)::[a-z_]", str(value)))
                if key not in ("doc", "doc-ref"):
                    scan(value)
        elif isinstance(node, list):
            for item in node:
                scan(item)

    scan({k: v for k, v in spec.items() if k != "enums"})
    return used


def test_every_enum_is_used(spec):
    """An enum that no field or expression refers to is dead weight in every generated parser."""
    defined = set((spec.get("enums") or {}))
    for _name, t in _types(spec):
        defined |= set(t.get("enums") or {})
    assert sorted(defined - _enum_uses(spec)) == []


def test_enum_literals_parse(spec):
    """The scan above reads enum literals from expressions; every expression must parse for it to be right."""
    for where, attr, _ in _attributes(spec):
        for key in ("value", "if", "size", "pos", "repeat-expr", "repeat-until"):
            if key in attr:
                kexpr.to_node(attr[key])


def test_webide_labels_name_what_the_ide_shows(spec):
    """Each ``{name}`` of a label is a seq field, a param or a value instance (the IDE computes
    those at once; a ``pos`` instance shows nothing until opened), with a format the IDE knows."""
    bad = []
    for name, t in _types(spec):
        label = t.get("-webide-representation")
        if not label:
            continue
        shown = {f["id"] for f in t.get("seq") or [] if "id" in f}
        shown |= {k for k, v in (t.get("instances") or {}).items() if "value" in v}
        shown |= {p["id"] for p in t.get("params") or []}  # kept on the object as fields
        for ref in re.findall(r"{(.*?)}", label):
            path, _, fmt = ref.partition(":")
            head = path.split(".")[0]
            if head not in shown and head not in ("this", "_parent"):
                bad.append(f"{name}: {{{ref}}} is not a seq field or value instance")
            for option in filter(None, fmt.split(",")):
                if option.split("=")[0] not in ("dec", "hex", "str", "flags", "sep", "uuid"):
                    bad.append(f"{name}: {{{ref}}}: unknown format {option!r}")
    assert bad == []
