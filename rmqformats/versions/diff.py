"""What changed on disk between two RocketMQ releases, and whether a reader of one reads the other's stores.

``diff(a, b)`` lists the changes going from release ``a`` to release ``b`` (either
order: ``b`` older than ``a`` is a downgrade). An element that ``b`` has and ``a``
lacks is ``*_ADDED``, one that ``a`` has and ``b`` lacks is ``*_REMOVED``; a change
of meaning or width at a release between the two is reported with its own rule.

Each change says whether **a reader of ``a`` reads a store written by ``b``**
(``compatible``): a reader does not know what was added after it (a new magic
code, switch case, flag bit, enum value, field or file), unless the element is
marked as harmless for older readers (``-rmq-compatible: true``, JSON keys, which
fastjson ignores); a reader knows everything that was removed after the data's
release. A format is compatible when all of its changes are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import annotations as ann
from .releases import Release, all_releases, release


@dataclass(frozen=True)
class SchemaChange:
    """One change between two releases."""

    rule: str
    format: str
    location: str
    description: str
    citation: str | None
    compatible: bool
    release: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "format": self.format, "location": self.location,
                "description": self.description, "citation": self.citation,
                "compatible": self.compatible, "release": self.release}


@dataclass(frozen=True)
class FormatVerdict:
    """The reading verdict for one format: can a reader of ``a`` read what ``b`` wrote?"""

    format: str
    compatible: bool
    changes: int
    incompatible: int


@dataclass(frozen=True)
class SchemaDiff:
    """The changes between releases ``a`` and ``b``, and the verdicts per format."""

    a: Release
    b: Release
    changes: tuple[SchemaChange, ...]

    @property
    def compatible(self) -> bool:
        """True when a reader of ``a`` reads every format as ``b`` writes it."""
        return all(c.compatible for c in self.changes)

    @property
    def unverified(self) -> tuple[Release, ...]:
        """Releases after the older of the two, up to the newer, that the tagged source here lacks: what
        they changed is known from their release threads only, so the list may be incomplete."""
        lo, hi = min(self.a, self.b), max(self.a, self.b)
        return tuple(r for r in all_releases() if lo < r <= hi and r.established)

    def formats(self) -> list[FormatVerdict]:
        out: dict[str, list[SchemaChange]] = {}
        for c in self.changes:
            out.setdefault(c.format, []).append(c)
        return [FormatVerdict(f, all(c.compatible for c in cs), len(cs), sum(not c.compatible for c in cs))
                for f, cs in out.items()]

    def rules(self) -> set[tuple[str, str, str]]:
        """``(rule, format, location)`` of every change, for comparisons."""
        return {(c.rule, c.format, c.location) for c in self.changes}

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.a.version, "to": self.b.version,
            "fromTag": self.a.tag, "toTag": self.b.tag,
            "question": f"can a reader of {self.a.version} read a store written by {self.b.version}?",
            "compatible": self.compatible,
            "formats": [{"format": v.format, "compatible": v.compatible, "changes": v.changes,
                         "incompatibleChanges": v.incompatible} for v in self.formats()],
            "changes": [c.to_json() for c in self.changes],
            "unverifiedReleases": [r.version for r in self.unverified],
        }


def _sentence(text: str) -> str:
    """The first sentence of a doc string."""
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


def _describe(e: ann.Element, added: bool) -> str:
    what = {"file": "file kind", "type": "type", "field": "field", "flag_bit": "bit field",
            "instance": "derived value", "case": "switch case", "magic": "magic code",
            "enum_value": "enum value", "json_key": "JSON key"}[e.kind]
    name = e.name
    if e.kind == "file" and e.source.endswith(".ksy"):
        what = "format"
    if e.kind in ("magic", "enum_value"):
        name = f"{e.name} ({e.detail})"
    elif e.kind == "case":
        name = f"{e.name} -> {e.detail}"
    elif e.kind in ("field", "flag_bit") and e.detail:
        name = f"{e.name} ({e.detail})"
    span = (f"since {e.since}" if e.since else "") + (f", until {e.until} excluded" if e.until else "")
    if e.writer != "broker":
        span += f"; written by the {'producer client' if e.writer == 'client' else e.writer}, whatever the broker"
    doc = f": {_sentence(e.doc)}" if e.doc else ""
    return f"{what} {name} {'added' if added else 'removed'} ({span.lstrip(', ')}){doc}"


def diff(a: str | Release, b: str | Release) -> SchemaDiff:
    """The changes from release ``a`` to release ``b``, in format order."""
    a, b = release(a), release(b)
    facts = ann.load()
    changes: list[SchemaChange] = []
    for e in facts.elements:
        pa, pb = e.present(a), e.present(b)
        if pa == pb:
            continue
        added = pb and not pa
        rule = ann.RULES[e.kind][0 if added else 1]
        if added:
            compatible = e.compatible if e.compatible is not None else e.kind in ann.TOLERANT_KINDS
        else:
            compatible = True
        boundary = e.since if (added and b >= a) or (not added and a > b) else e.until
        changes.append(SchemaChange(rule, e.format, e.location, _describe(e, added), e.ref, bool(compatible),
                                    str(boundary or "")))
    lo, hi = min(a, b), max(a, b)
    for c in facts.changes:
        if not (lo < c.release <= hi):
            continue
        upgrade = b > a
        compatible = c.old_reader_ok if upgrade else c.new_reader_ok
        text = c.doc if upgrade else f"back to before {c.release}: {c.doc}"
        changes.append(SchemaChange(c.rule, c.format, c.location, f"{text} ({c.release})", c.ref,
                                    bool(compatible), c.release.version))
    order = {f: i for i, f in enumerate(facts.formats())}
    changes.sort(key=lambda c: (order.get(c.format, len(order)), c.location, c.rule))
    return SchemaDiff(a, b, tuple(changes))


def format_text(d: SchemaDiff) -> str:
    """The diff as text for people."""
    lines = [f"schema-diff {d.a} -> {d.b}: can a reader of {d.a} read a store written by {d.b}? "
             f"{'yes' if d.compatible else 'no'}"]
    if not d.changes:
        lines.append("no changes")
    if d.unverified:
        lines.append(f"note: {', '.join(r.version for r in d.unverified)} not in the tagged source; known from "
                     "release threads (formats/releases.yaml), so changes may be missing")
    by_format: dict[str, list[SchemaChange]] = {}
    for c in d.changes:
        by_format.setdefault(c.format, []).append(c)
    for v in d.formats():
        verdict = "compatible" if v.compatible else f"INCOMPATIBLE ({v.incompatible} of {v.changes} changes)"
        lines.append("")
        lines.append(f"{v.format}: {verdict}")
        for c in by_format[v.format]:
            mark = " " if c.compatible else "!"
            lines.append(f" {mark} {c.rule:<19} {c.location}")
            lines.append(f"      {c.description}")
            if c.citation:
                lines.append(f"      cited: {c.citation}")
    return "\n".join(lines) + "\n"
