"""The release audit: every release claim in ``formats/`` and the row of ``formats/audit.yaml`` that establishes it.

A *claim* is one release annotation as written in the files, before any
interpretation: a ``-rmq-since`` / ``-rmq-until`` (spec, type, field, instance,
enum value), a ``since`` / ``until`` of a ``-rmq-cases`` entry, an entry of
``-rmq-changes`` or a ``-rmq-before`` entry with a ``rule``; in the JSON
Schemas an ``x-since`` / ``x-until`` / ``x-changes`` entry; in
``formats/releases.yaml`` a file kind's ``since`` / ``until`` / ``changes``
entry. Claims are found by walking the files, so an annotation added anywhere
is a claim, including annotations :mod:`.annotations` leaves out (a key as old
as its file).

A claim is identified by where it is (``at``: ``<file>:<path>``, the path built
from mapping keys, with ``seq`` entries named by their ``id``), its ``key``,
its ``release`` and its citation (``ref``; ``None`` when it has none). The
table's rows carry the same four values; :func:`check` lists the claims without
a row and the rows without a claim.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterator

from . import releases as rel
from . import yamltext
from .annotations import enum_key

#: Keys whose value is a release (the claim's ``key`` is the key itself).
_RELEASE_KEYS = ("-rmq-since", "-rmq-until", "x-since", "x-until")
#: Keys whose value is a list of change entries (``in`` or ``until`` names the release).
_CHANGE_LISTS = ("-rmq-changes", "x-changes", "-rmq-before")
#: How a row's fact was established.
HOW = ("source", "pr-thread", "issue-thread", "release-notes")
#: The row keys every row has, and the ones a row may have.
ROW_KEYS = ("at", "key", "release", "ref", "how", "evidence", "before")
ROW_OPTIONAL = ("rule", "note")


@dataclass(frozen=True)
class Claim:
    """One release annotation as written in ``formats/``."""

    at: str
    key: str
    release: str
    ref: str | None
    rule: str | None = None

    @property
    def ident(self) -> tuple[str, str, str, str | None]:
        return (self.at, self.key, self.release, self.ref)


def _join(path: str, part: str) -> str:
    return f"{path}/{part}" if path else part


def _walk(source: str, node: Any, path: str, out: list[Claim]) -> None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            name = str(item["id"]) if isinstance(item, dict) and isinstance(item.get("id"), str) else str(i)
            _walk(source, item, _join(path, name), out)
        return
    if not isinstance(node, dict):
        return
    at = f"{source}:{path}" if path else source
    for key in _RELEASE_KEYS:
        if node.get(key) is not None:
            out.append(Claim(at, key, str(node[key]), node.get("-rmq-ref") or node.get("x-ref")))
    for key in _CHANGE_LISTS:
        for entry in node.get(key) or []:
            if key == "-rmq-before" and not entry.get("rule"):
                continue  # a projection detail, not a claim about a change
            where = f"{source}:{entry['at']}" if entry.get("at") else at
            release = entry.get("in", entry.get("until"))
            out.append(Claim(where, key, str(release), entry.get("ref"), entry.get("rule", "MEANING_CHANGED")))
    cases = node.get("-rmq-cases")
    if isinstance(cases, dict):
        for case, entry in cases.items():
            for bound in ("since", "until"):
                if entry.get(bound) is not None:
                    out.append(Claim(f"{source}:{_join(path, f'cases/{case}')}", f"-rmq-cases/{bound}",
                                     str(entry[bound]), entry.get("ref")))
    for key, sub in node.items():
        if key in _CHANGE_LISTS or key == "-rmq-cases":
            continue
        if isinstance(sub, (dict, list)):
            # Enum values are integers: named in hex, as the annotations name them.
            name = enum_key(key) if isinstance(key, int) and not isinstance(key, bool) else str(key)
            _walk(source, sub, _join(path, name), out)


def _releases_yaml_claims(doc: dict, out: list[Claim]) -> None:
    source = "formats/releases.yaml"
    for entry in doc.get("files") or []:
        at = f"{source}:files/{entry['id']}"
        for bound in ("since", "until"):
            if entry.get(bound) is not None:
                out.append(Claim(at, bound, str(entry[bound]), entry.get("ref")))
        for ch in entry.get("changes") or []:
            out.append(Claim(at, "changes", str(ch["in"]), ch.get("ref"), ch.get("rule", "MEANING_CHANGED")))


@functools.lru_cache(maxsize=None)
def claims() -> tuple[Claim, ...]:
    """Every release claim in ``formats/`` (specs, JSON Schemas, ``releases.yaml``), in file order."""
    folder = resources.files("rmqformats.formats")
    out: list[Claim] = []
    for p in sorted(folder.iterdir(), key=lambda p: p.name):
        if p.name.endswith(".ksy"):
            _walk(f"formats/{p.name}", yamltext.load(p.read_text(encoding="utf-8")), "", out)
    for p in sorted((folder / "config").iterdir(), key=lambda p: p.name):
        if p.name.endswith(".schema.json"):
            _walk(f"formats/config/{p.name}", json.loads(p.read_text(encoding="utf-8")), "", out)
    _releases_yaml_claims(rel.catalog(), out)
    return tuple(out)


def table() -> list[dict]:
    """The rows of ``formats/audit.yaml``."""
    text = (resources.files("rmqformats.formats") / "audit.yaml").read_text(encoding="utf-8")
    return list(yamltext.load(text).get("claims") or [])


def _row_ident(row: dict) -> tuple[str, str, str, str | None]:
    return (row["at"], row["key"], str(row["release"]), row.get("ref"))


@dataclass(frozen=True)
class AuditResult:
    """Claims without a row, rows without a claim, and rows that are malformed (with why)."""

    missing: tuple[Claim, ...]
    orphans: tuple[dict, ...]
    malformed: tuple[tuple[dict, str], ...]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.orphans or self.malformed)


def _problems(row: dict) -> Iterator[str]:
    for key in ROW_KEYS:
        if key not in row or (key != "ref" and not row[key]):
            yield f"no {key}"
    for key in row:
        if key not in ROW_KEYS + ROW_OPTIONAL:
            yield f"unknown key {key}"
    if row.get("how") and row["how"] not in HOW:
        yield f"how is {row['how']!r}, not one of {', '.join(HOW)}"
    try:
        r = rel.at_or_after(str(row.get("release")))
    except rel.UnknownReleaseError as exc:
        yield str(exc)
        return
    i = rel.RELEASES.index(r)
    evidence, before = str(row.get("evidence") or ""), str(row.get("before") or "")
    if row.get("how") == "source" and not evidence.startswith(r.tag + ":"):
        yield f"evidence of a source check must be at {r.tag}: (the claim's release)"
    if i > 0 and row.get("how") == "source" and not before.startswith(rel.RELEASES[i - 1].tag):
        yield f"before must name the tag before, {rel.RELEASES[i - 1].tag}"


def check(rows: list[dict] | None = None) -> AuditResult:
    """The audit of ``rows`` (default: ``formats/audit.yaml``) against the claims in ``formats/``."""
    rows = table() if rows is None else rows
    have = {c.ident for c in claims()}
    idents = [_row_ident(r) for r in rows]
    missing = tuple(c for c in claims() if c.ident not in set(idents))
    orphans = tuple(r for r, i in zip(rows, idents) if i not in have)
    malformed = tuple((r, p) for r in rows for p in _problems(r))
    seen: set = set()
    dupes = []
    for r, i in zip(rows, idents):
        if i in seen:
            dupes.append((r, "a second row for the same claim"))
        seen.add(i)
    return AuditResult(missing, orphans, malformed + tuple(dupes))
