"""The version facts kept in ``formats/``, read into one list.

Where they live:

* ``.ksy`` specs: ``-rmq-since`` / ``-rmq-until`` (first release with / first
  release without) on the spec itself (when the file kind appeared), on types,
  fields (a ``bN`` field is a flag bit), instances and enum values (values of an
  enum named ``*magic*`` are magic codes); ``-rmq-cases`` inside a ``switch-on``
  type, keyed like ``cases``, with ``since`` / ``until`` per case;
  ``-rmq-changes`` (a list of ``{in, rule, doc, ref, at?, old-reader-ok?,
  new-reader-ok?}``) for changes of meaning at a release; ``-rmq-before`` (a
  list of ``{until, <key>: <value>..., rule?, doc?, ref?}``) for the values a
  spec key had before a release (used by the projection; with a ``rule``, also a
  change); ``-rmq-ref`` (``<git tag>:<path>``) cites the fact; ``-rmq-compatible:
  true`` says a reader of an older release still reads what the element adds;
  ``-rmq-writer: client`` says the producer client, not the broker, writes the
  element (a broker of any release stores it as a newer client sends it, so it
  dates the client); a change entry's ``id`` names it for code that looks it up.
* JSON Schemas (``formats/config/*.schema.json``): ``x-since`` (top level: when
  the file appeared; on a property: when the key appeared), ``x-until`` (the last
  release that writes the key), ``x-ref`` (citation), ``x-changes`` (as
  ``-rmq-changes``), ``x-always-written``
  (every release in the key's range writes it, so its absence is evidence).
* ``formats/releases.yaml``: the releases, and the store's file kinds with their
  paths; a kind with a spec takes its range from the spec.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Iterator

from . import releases as rel
from . import yamltext
from .releases import Release

#: Kinds of annotated elements and their (added, removed) rule ids.
RULES = {
    "file": ("FILE_ADDED", "FILE_REMOVED"),
    "type": ("TYPE_ADDED", "TYPE_REMOVED"),
    "field": ("FIELD_ADDED", "FIELD_REMOVED"),
    "flag_bit": ("FLAG_BIT_ADDED", "FLAG_BIT_REMOVED"),
    "instance": ("INSTANCE_ADDED", "INSTANCE_REMOVED"),
    "case": ("CASE_ADDED", "CASE_REMOVED"),
    "magic": ("MAGIC_ADDED", "MAGIC_REMOVED"),
    "enum_value": ("ENUM_VALUE_ADDED", "ENUM_VALUE_REMOVED"),
    "json_key": ("JSON_KEY_ADDED", "JSON_KEY_REMOVED"),
}
#: Rules of ``-rmq-changes`` / ``-rmq-before`` entries.
CHANGE_RULES = ("MEANING_CHANGED", "FIELD_WIDTH_CHANGED", "PROPERTY_ADDED", "DEPRECATED")
#: Kinds whose addition an older reader still reads (fastjson ignores unknown keys).
TOLERANT_KINDS = frozenset({"json_key"})
#: Keys of a ``-rmq-before`` entry that describe it rather than set a spec key.
BEFORE_META = frozenset({"until", "rule", "doc", "ref", "old-reader-ok", "new-reader-ok"})


@dataclass(frozen=True)
class Element:
    """Something that exists in a range of releases: a file kind, field, flag bit, case, value, key."""

    format: str
    source: str
    path: str
    kind: str
    name: str
    since: Release | None
    until: Release | None
    ref: str | None
    doc: str = ""
    compatible: bool | None = None
    detail: str = ""
    writer: str = "broker"

    @property
    def location(self) -> str:
        return f"{self.source}:{self.path}" if self.path else self.source

    def present(self, r: Release) -> bool:
        """True when release ``r`` has this element."""
        return (self.since is None or r >= self.since) and (self.until is None or r < self.until)


@dataclass(frozen=True)
class Change:
    """A change at one release of something that exists on both sides (a meaning, a width)."""

    format: str
    source: str
    path: str
    release: Release
    rule: str
    doc: str
    ref: str | None
    old_reader_ok: bool = False
    new_reader_ok: bool = True
    id: str | None = None

    @property
    def location(self) -> str:
        return f"{self.source}:{self.path}" if self.path else self.source


@dataclass(frozen=True)
class FileKind:
    """One entry of ``formats/releases.yaml`` ``files``, its range resolved."""

    id: str
    path: str | None
    since: Release | None
    until: Release | None
    ref: str | None
    doc: str
    spec: str | None
    evidence: bool


@dataclass(frozen=True)
class Annotations:
    """Every version fact in ``formats/``."""

    elements: tuple[Element, ...]
    changes: tuple[Change, ...]
    files: tuple[FileKind, ...]
    format_since: dict = field(default_factory=dict)

    def element(self, fmt: str, path: str) -> Element:
        """The element at ``path`` of format ``fmt``; raises ``KeyError``."""
        for e in self.elements:
            if e.format == fmt and e.path == path:
                return e
        raise KeyError(f"{fmt}:{path}")

    def changes_at(self, fmt: str, path: str) -> list[Change]:
        return [c for c in self.changes if c.format == fmt and c.path == path]

    def change(self, fmt: str, change_id: str) -> Change:
        """The change named ``change_id`` (its ``id`` key) of format ``fmt``; raises ``KeyError``."""
        for c in self.changes:
            if c.format == fmt and c.id == change_id:
                return c
        raise KeyError(f"{fmt}: no change {change_id}")

    def formats(self) -> list[str]:
        seen: dict[str, None] = {}
        for e in self.elements:
            seen.setdefault(e.format, None)
        return list(seen)


def enum_key(value: int) -> str:
    """An enum value named in hex as its bytes read: a negative value (a signed magic code such as
    -626843481, the ``int`` RocketMQ's Java holds) by its 32-bit two's complement (``0xdaa320a7``)."""
    return f"{value & 0xFFFFFFFF:#x}" if value < 0 else f"{value:#x}"


def _release(value: Any, where: str) -> Release | None:
    if value is None:
        return None
    try:
        return rel.at_or_after(str(value))
    except rel.UnknownReleaseError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _first_line(doc: Any) -> str:
    text = " ".join(str(doc or "").split())
    return text


def _ksy_files() -> list[tuple[str, Any]]:
    folder = resources.files("rmqformats.formats")
    return sorted((p.name, p) for p in folder.iterdir() if p.name.endswith(".ksy"))


def load_ksy(name: str) -> dict:
    """The spec ``formats/<name>`` (``rocketmq_commitlog.ksy``) as a dict."""
    path = resources.files("rmqformats.formats") / name
    return yamltext.load(path.read_text(encoding="utf-8"))


def ksy_names() -> list[str]:
    """File names of every ``.ksy`` spec in ``formats/``."""
    return [name for name, _ in _ksy_files()]


def _walk_type(fmt: str, source: str, t: dict, path: str, floor: Release | None,
               out: list, changes: list) -> None:
    """Collect the annotations of type ``t`` (at spec ``path``) and its nested types."""

    def add(kind: str, p: str, name: str, node: dict, detail: str = "") -> None:
        since = _release(node.get("-rmq-since"), f"{source}:{p}")
        until = _release(node.get("-rmq-until"), f"{source}:{p}")
        if since is None and until is None:
            return
        if since is not None and floor is not None and since <= floor and until is None:
            return  # as old as its format: nothing to report
        out.append(Element(fmt, source, p, kind, name, since, until, node.get("-rmq-ref"),
                           _first_line(node.get("doc")), node.get("-rmq-compatible"), detail,
                           node.get("-rmq-writer") or "broker"))

    def add_changes(p: str, node: dict) -> None:
        for i, ch in enumerate(node.get("-rmq-changes") or []):
            where = ch.get("at") or p
            changes.append(Change(fmt, source, where, _release(ch["in"], f"{source}:{p}/-rmq-changes/{i}"),
                                  ch.get("rule", "MEANING_CHANGED"), _first_line(ch.get("doc")), ch.get("ref"),
                                  bool(ch.get("old-reader-ok", False)), bool(ch.get("new-reader-ok", True)),
                                  ch.get("id")))
        for i, before in enumerate(node.get("-rmq-before") or []):
            if not before.get("rule"):
                continue  # a projection detail only
            changes.append(Change(fmt, source, p, _release(before["until"], f"{source}:{p}/-rmq-before/{i}"),
                                  before["rule"], _first_line(before.get("doc")), before.get("ref"),
                                  bool(before.get("old-reader-ok", False)), bool(before.get("new-reader-ok", True))))

    if path:
        add("type", path, path.rsplit("/", 1)[-1], t)
    add_changes(path, t)
    for f in t.get("seq") or []:
        fp = f"{path}/seq/{f['id']}" if path else f"seq/{f['id']}"
        ftype = f.get("type")
        is_bits = isinstance(ftype, str) and ftype[:1] == "b" and ftype[1:].isdigit()
        add("flag_bit" if is_bits else "field", fp, f["id"], f, ftype if isinstance(ftype, str) else "")
        add_changes(fp, f)
        if isinstance(ftype, dict):
            for case, node in (ftype.get("-rmq-cases") or {}).items():
                cases = {str(k).lower() if isinstance(k, bool) else str(k): v for k, v in ftype["cases"].items()}
                target = cases.get(str(case))
                node = {"-rmq-since": node.get("since"), "-rmq-until": node.get("until"),
                        "-rmq-ref": node.get("ref"), "doc": node.get("doc") or f"{f['id']}: case {case} -> {target}",
                        "-rmq-compatible": node.get("compatible")}
                add("case", f"{fp}/type/cases/{case}", str(case), node, str(target))
    for name, inst in (t.get("instances") or {}).items():
        ip = f"{path}/instances/{name}" if path else f"instances/{name}"
        add("instance", ip, name, inst)
        add_changes(ip, inst)
    for ename, values in (t.get("enums") or {}).items():
        for value, member in (values or {}).items():
            if not isinstance(member, dict):
                continue
            vp = f"{path}/enums/{ename}/{enum_key(value)}" if path else f"enums/{ename}/{enum_key(value)}"
            kind = "magic" if "magic" in ename else "enum_value"
            add(kind, vp, member.get("id", str(value)), member, enum_key(value))
    for tname, sub in (t.get("types") or {}).items():
        tp = f"{path}/types/{tname}" if path else f"types/{tname}"
        _walk_type(fmt, source, sub, tp, floor, out, changes)


def _schema_files() -> list[tuple[str, Any]]:
    folder = resources.files("rmqformats.formats") / "config"
    return sorted((p.name, p) for p in folder.iterdir() if p.name.endswith(".schema.json"))


def load_schema(name: str) -> dict:
    """``formats/config/<name>`` as a dict."""
    return json.loads((resources.files("rmqformats.formats") / "config" / name).read_text(encoding="utf-8"))


def schema_format(name: str, schema: dict) -> str:
    """The format name of a JSON Schema: ``config/<first file>``, or the title for shared definitions."""
    files = schema.get("x-files")
    if files:
        return f"{schema.get('x-folder', 'config')}/{files[0]}"
    return f"config/{name.removesuffix('.schema.json')}"


def json_until(value: Any, where: str) -> Release | None:
    """``x-until`` is the last release that writes a key: the range ends at the release after it."""
    last = _release(value, where)
    return None if last is None else (rel.following(last) or None)


def _walk_schema(fmt: str, source: str, node: Any, path: str, floor: Release | None,
                 ref: str | None, out: list, changes: list) -> None:
    """Collect the ``x-since`` keys under ``node``; keys as old as their parent (``floor``) are skipped."""
    if not isinstance(node, dict):
        return
    own = _release(node.get("x-since"), f"{source}:{path}")
    if own is not None and (floor is None or own > floor):
        floor, ref = own, node.get("x-ref") or ref
    for key, sub in (node.get("properties") or {}).items():
        p = f"{path}/properties/{key}"
        if not isinstance(sub, dict):
            continue
        since = _release(sub.get("x-since"), f"{source}:{p}")
        until = json_until(sub.get("x-until"), f"{source}:{p}")
        sub_ref = sub.get("x-ref") or (ref if since == floor else None)
        newer = since is not None and (floor is None or since > floor) and since > rel.oldest()
        if newer or until is not None:
            out.append(Element(fmt, source, p, "json_key", key, since, until, sub_ref,
                               _first_line(sub.get("description")), sub.get("x-compatible")))
        for i, ch in enumerate(sub.get("x-changes") or []):
            changes.append(Change(fmt, source, p, _release(ch["in"], f"{source}:{p}/x-changes/{i}"),
                                  ch.get("rule", "MEANING_CHANGED"), _first_line(ch.get("doc")), ch.get("ref"),
                                  bool(ch.get("old-reader-ok", False)), bool(ch.get("new-reader-ok", True))))
        _walk_schema(fmt, source, sub, p, since if newer else floor, sub_ref if newer else ref, out, changes)
    for key in ("$defs", "additionalProperties", "items"):
        sub = node.get(key)
        if key == "$defs" and isinstance(sub, dict):
            for dname, d in sub.items():
                _walk_schema(fmt, source, d, f"{path}/$defs/{dname}", floor, ref, out, changes)
        elif isinstance(sub, dict):
            _walk_schema(fmt, source, sub, f"{path}/{key}", floor, ref, out, changes)


@functools.lru_cache(maxsize=None)
def load() -> Annotations:
    """Every version fact of ``formats/`` (cached)."""
    elements: list[Element] = []
    changes: list[Change] = []
    format_since: dict[str, Release | None] = {}
    spec_since: dict[str, tuple[Release | None, Release | None, str | None]] = {}
    for name, _ in _ksy_files():
        spec = load_ksy(name)
        fmt = spec["meta"]["id"]
        source = f"formats/{name}"
        since = _release(spec.get("-rmq-since"), source)
        until = _release(spec.get("-rmq-until"), source)
        format_since[fmt] = since
        spec_since[fmt] = (since, until, spec.get("-rmq-ref"))
        elements.append(Element(fmt, source, "", "file", fmt, since, until, spec.get("-rmq-ref"),
                                _first_line(spec["meta"].get("title")), spec.get("-rmq-compatible")))
        _walk_type(fmt, source, spec, "", since, elements, changes)
    for name, _ in _schema_files():
        schema = load_schema(name)
        fmt = schema_format(name, schema)
        source = f"formats/config/{name}"
        since = _release(schema.get("x-since"), source)
        format_since[fmt] = since
        if schema.get("x-files"):
            elements.append(Element(fmt, source, "", "file", fmt, since, json_until(schema.get("x-until"), source),
                                    schema.get("x-ref"), _first_line(schema.get("title")), None))
        _walk_schema(fmt, source, schema, "", since, schema.get("x-ref"), elements, changes)
    files = []
    for entry in rel.catalog().get("files") or []:
        where = f"formats/releases.yaml:files/{entry['id']}"
        if entry.get("spec"):
            if entry["spec"] not in spec_since:
                raise ValueError(f"{where}: no spec formats/{entry['spec']}.ksy")
            since, until, ref = spec_since[entry["spec"]]
        else:
            since, until, ref = _release(entry.get("since"), where), _release(entry.get("until"), where), entry.get("ref")
            elements.append(Element(entry["id"], "formats/releases.yaml", f"files/{entry['id']}", "file",
                                    entry.get("path") or entry["id"], since, until, ref,
                                    _first_line(entry.get("doc")), entry.get("compatible")))
            for ch in entry.get("changes") or []:
                changes.append(Change(entry["id"], "formats/releases.yaml", f"files/{entry['id']}",
                                      _release(ch["in"], where), ch.get("rule", "MEANING_CHANGED"),
                                      _first_line(ch.get("doc")), ch.get("ref"),
                                      bool(ch.get("old-reader-ok", False)), bool(ch.get("new-reader-ok", True)),
                                      ch.get("id")))
        files.append(FileKind(entry["id"], entry.get("path"), since, until, ref, _first_line(entry.get("doc")),
                              entry.get("spec"), bool(entry.get("evidence", True))))
    return Annotations(tuple(elements), tuple(changes), tuple(files), format_since)


def iter_citations() -> Iterator[tuple[str, str]]:
    """Every ``(location, citation)`` pair, for checking that each fact is cited."""
    a = load()
    for e in a.elements:
        yield e.location, e.ref or ""
    for c in a.changes:
        yield c.location, c.ref or ""
