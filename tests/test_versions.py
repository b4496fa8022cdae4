"""The version annotations in formats/: well-formed, cited, invisible to the compilers and generators."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from rmqformats.codegen import construct_gen, layout_gen
from rmqformats.versions import annotations as ann
from rmqformats.versions import releases as rel
from rmqformats.versions.project import project

REPO = Path(__file__).resolve().parents[1]
SPECS = sorted((REPO / "formats").glob("*.ksy"))
KSY_SCHEMA = json.loads((REPO / "tests" / "fixtures" / "kaitai" / "ksy_schema.json").read_text())
TAGS = {r.tag for r in rel.RELEASES}
CITATION = re.compile(r"^(?P<tag>[a-z0-9.-]+):(?P<path>[A-Za-z0-9_./-]+\.(java|xml))$")


def _json_keys(node):
    """YAML reads `true:` case keys as booleans; the JSON form the Web IDE sees has strings."""
    if isinstance(node, dict):
        return {(str(k).lower() if isinstance(k, bool) else str(k)): _json_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_json_keys(v) for v in node]
    return node


#: Annotations that are layout data, not release data: the layout generator writes them out.
LAYOUT_KEYS = frozenset({"-rmq-property-names"})


def _strip(node, keep: frozenset = frozenset()):
    if isinstance(node, dict):
        return {k: _strip(v, keep) for k, v in node.items() if not str(k).startswith("-rmq-") or k in keep}
    if isinstance(node, list):
        return [_strip(v, keep) for v in node]
    return node


def test_releases_are_ordered_and_tagged():
    versions = [r.version for r in rel.RELEASES]
    assert versions[0] == "4.0.0" and versions[-1] == "5.5.1"
    assert "4.5.0" not in versions  # no such tag
    assert list(rel.RELEASES) == sorted(rel.RELEASES)
    assert rel.release("rocketmq-all-4.9.7").version == "4.9.7"
    assert rel.release("4.0.0").tag == "rocketmq-4.0.0-incubating"
    assert rel.release("4.1.0").tag == "rocketmq-all-4.1.0-incubating"
    assert rel.following("4.9.8").version == "5.0.0"
    with pytest.raises(rel.UnknownReleaseError, match="4.5.0"):
        rel.release("4.5.0")


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_annotated_specs_are_valid_for_kaitai(spec):
    """The extension keys sit where Kaitai's JSON Schema allows `-` keys (the Web IDE checks it too)."""
    errors = list(jsonschema.Draft7Validator(KSY_SCHEMA).iter_errors(_json_keys(yaml.safe_load(spec.read_text()))))
    assert [e.message for e in errors] == []


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_every_spec_says_when_its_file_kind_appeared(spec):
    data = yaml.safe_load(spec.read_text())
    assert rel.at_or_after(data["-rmq-since"])  # a version without a tag (4.5.0) stands for the next tag
    assert CITATION.match(data["-rmq-ref"])


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_generators_ignore_the_annotations(spec):
    """construct and layout generators give the same code with and without the -rmq- release keys (the layout
    generator writes out the property names, which are layout data)."""
    data = yaml.safe_load(spec.read_text())
    source = f"formats/{spec.name}"
    assert construct_gen.generate(data, source) == construct_gen.generate(_strip(data), source)
    assert layout_gen.generate(data, source) == layout_gen.generate(_strip(data, LAYOUT_KEYS), source)


def test_every_fact_is_cited_with_a_release_tag_and_path():
    facts = ann.load()
    assert len(facts.elements) > 40 and len(facts.changes) > 15
    bad = []
    for location, ref in ann.iter_citations():
        for one in ref.split("; "):
            m = CITATION.match(one)
            if not m or m["tag"] not in TAGS:
                bad.append((location, ref))
    for kind in facts.files:
        if not kind.ref or not CITATION.match(kind.ref):
            bad.append((kind.id, kind.ref))
    assert bad == []


def test_ranges_are_well_formed():
    facts = ann.load()
    for e in facts.elements:
        assert e.since is None or e.until is None or e.since < e.until, e.location
    for c in facts.changes:
        assert c.rule in ann.CHANGE_RULES, c.location


def test_json_until_is_the_last_release_with_the_key():
    """x-until in the schemas names the last release that writes a key (timestatmp: 4.0.0 only)."""
    e = ann.load().element("config/common", "/$defs/dataVersion/properties/timestatmp")
    assert [r.version for r in rel.RELEASES if e.present(r)] == ["4.0.0"]
    e = ann.load().element("config/common", "/$defs/dataVersion/properties/timestamp")
    assert not e.present(rel.release("4.0.0")) and e.present(rel.release("4.1.0"))


def test_the_issues_changes_are_annotated():
    """The changes the specs must carry, each found where it belongs."""
    facts = ann.load()
    cl = "rocketmq_commitlog"
    since = {(e.format, e.path): e.since.version for e in facts.elements if e.since}
    assert since[(cl, "types/sys_flag/seq/is_born_host_v6")] == "4.6.0"
    assert since[(cl, "types/sys_flag/seq/is_store_host_v6")] == "4.6.0"
    assert since[(cl, "types/sys_flag/seq/compression_type")] == "4.9.4"
    # 4.9.4 declares bits 6-7, but only 5.0.0's SendMessageProcessor sets them.
    assert since[(cl, "types/sys_flag/seq/needs_unwrap")] == "5.0.0"
    assert since[(cl, "types/sys_flag/seq/is_inner_batch")] == "5.0.0"
    writers = {e.path: e.writer for e in facts.elements if e.format == cl}
    assert writers["types/sys_flag/seq/compression_type"] == "client"  # set by the producer
    assert writers["types/sys_flag/seq/is_inner_batch"] == "broker"
    assert since[(cl, "enums/magic_code/0xdaa320ab")] == "5.1.0"
    assert since[(cl, "types/message/seq/len_topic/type/cases/magic_code::message_v2")] == "5.1.0"
    assert since[("rocketmq_checkpoint", "seq/ofs_master_flushed")] == "5.0.0"
    assert since[("rocketmq_checkpoint", "seq/ofs_confirm_phy")] == "5.1.1"
    assert since[("rocketmq_consumequeue_ext", "")] == "4.1.0"
    assert since[("rocketmq_batch_consumequeue", "")] == "5.0.0"
    for timer in ("rocketmq_timer_log", "rocketmq_timer_wheel", "rocketmq_timer_check"):
        assert since[(timer, "")] == "5.0.0"
    kinds = {k.id: (k.since and k.since.version, k.until and k.until.version) for k in facts.files}
    assert kinds["compaction"] == ("5.1.0", None)
    assert kinds["rocksdb_consumequeue"] == ("5.2.0", None)
    assert kinds["rocksdb_topics"] == ("5.1.4", None)
    assert kinds["tiered_index"] == ("5.1.0", None)
    changes = {(c.format, c.path, c.release.version, c.rule) for c in facts.changes}
    props = (cl, "types/message/seq/properties")
    assert (*props, "4.9.1", "MEANING_CHANGED") in changes  # trailing separator dropped
    assert (*props, "5.2.0", "MEANING_CHANGED") in changes  # and restored
    assert (*props, "5.2.0", "PROPERTY_ADDED") in changes  # __CRC32#
    assert (cl, "types/record/seq/len_record", "4.9.4", "MEANING_CHANGED") in changes  # body bounded only
    assert (cl, "types/record/seq/len_record", "4.9.5", "MEANING_CHANGED") in changes  # record <= max + 64 KiB
    assert ("rocketmq_index_file", "types/index_header/seq/num_hash_slots_used", "4.7.1", "MEANING_CHANGED") in changes
    crc = next(c for c in facts.changes if c.path == props[1] and c.rule == "PROPERTY_ADDED" and
               c.release.version == "5.2.0")
    assert "least significant first" in crc.doc and "ten" in crc.doc
    keys = {(e.format, e.name): e.since.version for e in facts.elements if e.kind == "json_key" and e.since}
    assert keys[("config/common", "stateVersion")] == "5.0.0"
    assert keys[("config/subscriptionGroup.json", "forbiddenTable")] == "5.0.0"
    assert keys[("config/topics.json", "attributes")] == "5.0.0"


def test_projected_specs_are_valid_for_kaitai():
    for r in ("4.0.0", "4.5.2", "5.3.3"):
        for spec in SPECS:
            projected = project(yaml.safe_load(spec.read_text()), r)
            if projected is None:
                continue
            assert not any(str(k).startswith("-rmq-") and k != "-rmq-release" for k in projected)
            errors = list(jsonschema.Draft7Validator(KSY_SCHEMA).iter_errors(_json_keys(projected)))
            assert [e.message for e in errors] == [], (r, spec.name)


def test_a_bound_that_was_never_tagged_is_the_next_tagged_release():
    """4.5.0 has no tag: "first release with X" at 4.5.0 is 4.5.1 among the known releases."""
    assert rel.at_or_after("4.5.0").version == "4.5.1"
    assert rel.at_or_after("4.9.7").version == "4.9.7"
    with pytest.raises(rel.UnknownReleaseError):
        rel.at_or_after("9.0.0")
