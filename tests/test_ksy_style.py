"""The specs follow the Kaitai format gallery's conventions."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

SPECS = sorted((Path(__file__).resolve().parents[1] / "formats").glob("*.ksy"))
META_ORDER = ["id", "title", "application", "file-extension", "xref", "tags", "license", "ks-version",
              "imports", "encoding", "endian", "bit-endian"]
SPDX = {"Apache-2.0", "CC0-1.0", "MIT", "BSD-3-Clause"}
#: Fields with no RocketMQ Java name (containers and unused bits); all others carry -orig-id.
NO_JAVA_NAME = {"records", "messages", "units", "slots", "body@record", "body@unit", "reserved", "address", "port", "hash_slots@tables", "entries@tables"}
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
    assert spec["meta"]["ks-version"] == "0.11", "quote ks-version: YAML reads 0.10 as 0.1"
    assert spec.get("doc") and spec.get("doc-ref")


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
