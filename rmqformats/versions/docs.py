"""``docs/formats.md``, generated from ``formats/``: ``python -m rmqformats.versions.docs --out docs/formats.md``.

One table per type of every ``.ksy`` spec (fields, widths, meanings, the release
range of each), the enums, the changes of meaning, the config JSON keys and the
store's file kinds. ``--check`` exits 1 when the file differs from what the
specs give.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import annotations as ann
from . import releases as rel

REPO = Path(__file__).resolve().parents[2]
HEADER = "<!-- Generated from formats/ by `python -m rmqformats.versions.docs`; do not edit. -->\n"


def _cell(text: Any) -> str:
    return " ".join(str(text if text is not None else "").split()).replace("|", "\\|")


def _sentence(doc: Any) -> str:
    text = " ".join(str(doc or "").split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


def _width(f: dict) -> str:
    t = f.get("type")
    if isinstance(t, dict):
        cases = ", ".join(f"{k if not isinstance(k, bool) else str(k).lower()}: {v}" for k, v in t["cases"].items())
        out = f"switch `{t['switch-on']}` ({cases})"
    elif t:
        out = str(t)
    elif "size" in f:
        out = "bytes"
    elif f.get("size-eos"):
        out = "bytes to the end"
    else:
        out = ""
    if "size" in f:
        out += f", size `{f['size']}`"
    if f.get("enum"):
        out += f", enum {f['enum']}"
    if f.get("repeat"):
        out += f", repeated ({f['repeat']})"
    return out


def _range(e: ann.Element | None, floor: str) -> tuple[str, str]:
    if e is None:
        return floor, ""
    return (str(e.since) if e.since else floor), (str(e.until) if e.until else "")


def _element(facts: ann.Annotations, fmt: str, path: str) -> ann.Element | None:
    try:
        return facts.element(fmt, path)
    except KeyError:
        return None


def spec_types(spec: dict) -> list[tuple[str, str, dict]]:
    """The spec's top level and its types, nested ones after their parents, as (annotation path, name, type);
    the top level's path is empty."""
    types: list[tuple[str, str, dict]] = [("", spec["meta"]["id"], spec)]
    stack = list((spec.get("types") or {}).items())
    while stack:
        tname, t = stack.pop(0)
        types.append((f"types/{tname}", tname, t))
        stack.extend((f"{tname}/types/{n}", s) for n, s in (t.get("types") or {}).items())
    return types


def enum_tables(spec: dict, facts: ann.Annotations, since: str, *, doc: Callable[[Any], Any]) -> list[str]:
    """A table per enum of the spec: value, id, meaning (``doc`` of the member's doc), since, until, Java name."""
    fmt = spec["meta"]["id"]
    lines: list[str] = []
    for ename, values in (spec.get("enums") or {}).items():
        lines += [f"### enum {ename}", "", "| value | id | meaning | since | until | Java name |",
                  "|---|---|---|---|---|---|"]
        for value, member in values.items():
            member = member if isinstance(member, dict) else {"id": member}
            s, u = _range(_element(facts, fmt, f"enums/{ename}/{ann.enum_key(value)}"), since)
            lines.append(f"| `{ann.enum_key(value)}` | `{member['id']}` | {_cell(doc(member.get('doc')))} | {s} | {u} "
                         f"| {_cell(member.get('-orig-id', ''))} |")
        lines.append("")
    return lines


def change_table(fmt: str, facts: ann.Annotations, title: str) -> list[str]:
    """The changes of meaning and width of the format ``fmt``, by release, under the heading ``title``;
    nothing when it has none."""
    changes = [c for c in facts.changes if c.format == fmt]
    if not changes:
        return []
    lines = [f"### {title}", "", "| release | rule | where | change | cited |", "|---|---|---|---|---|"]
    for c in sorted(changes, key=lambda c: (c.release, c.path)):
        lines.append(f"| {c.release} | {c.rule} | `{c.path}` | {_cell(c.doc)} | `{c.ref}` |")
    return lines + [""]


def _spec_section(name: str, facts: ann.Annotations) -> list[str]:
    spec = ann.load_ksy(name)
    fmt = spec["meta"]["id"]
    since = str(spec.get("-rmq-since") or "")
    until = str(spec.get("-rmq-until") or "")
    lines = [f"## {fmt}", "", f"**{spec['meta'].get('title', fmt)}** (`formats/{name}`). "
             f"Written since {since or 'the first release'}" + (f", until {until} (excluded)" if until else "")
             + (f"; cited: `{spec['-rmq-ref']}`" if spec.get("-rmq-ref") else "") + ".", "",
             _sentence(spec.get("doc")), ""]
    for path, tname, t in spec_types(spec):
        seq = t.get("seq") or []
        inst = t.get("instances") or {}
        if not seq and not inst:
            continue
        lines += [f"### {tname}" if path else f"### {fmt} (top level)", ""]
        if path and t.get("doc"):
            lines += [_sentence(t.get("doc")), ""]
        lines += ["| field | type / width | meaning | since | until | Java name |", "|---|---|---|---|---|---|"]
        for f in seq:
            fp = f"{path}/seq/{f['id']}" if path else f"seq/{f['id']}"
            s, u = _range(_element(facts, fmt, fp), since)
            lines.append(f"| `{f['id']}` | {_cell(_width(f))} | {_cell(_sentence(f.get('doc')))} | {s} | {u} "
                         f"| {_cell(f.get('-orig-id', ''))} |")
            t_ = f.get("type")
            if isinstance(t_, dict):
                for case in (t_.get("-rmq-cases") or {}):
                    e = _element(facts, fmt, f"{fp}/type/cases/{case}")
                    cs, cu = _range(e, since)
                    lines.append(f"| `{f['id']}` case `{case}` | {_cell(e.detail if e else '')} | switch case "
                                 f"| {cs} | {cu} | |")
        for iname, i in inst.items():
            ip = f"{path}/instances/{iname}" if path else f"instances/{iname}"
            s, u = _range(_element(facts, fmt, ip), since)
            what = f"value `{i['value']}`" if "value" in i else _width(i) + (f" at `{i['pos']}`" if "pos" in i else "")
            lines.append(f"| `{iname}` (instance) | {_cell(what)} | {_cell(_sentence(i.get('doc')))} | {s} | {u} | |")
        lines.append("")
    lines += enum_tables(spec, facts, since, doc=_sentence)
    lines += change_table(fmt, facts, "changes of meaning and width")
    return lines


def _schema_section(name: str, facts: ann.Annotations) -> list[str]:
    schema = ann.load_schema(name)
    fmt = ann.schema_format(name, schema)
    since = str(schema.get("x-since") or "")
    lines = [f"## {fmt}", "", f"`formats/config/{name}`"
             + (f", written since {since}" if since else "")
             + (f"; cited: `{schema['x-ref']}`" if schema.get("x-ref") else "") + ".", "",
             _cell(schema.get("description")), "",
             "| key | type | meaning | since | until |", "|---|---|---|---|---|"]

    def walk(node: Any, path: str, label: str) -> None:
        if not isinstance(node, dict):
            return
        for key, sub in (node.get("properties") or {}).items():
            if not isinstance(sub, dict):
                continue
            kind = sub.get("type") or (sub.get("$ref", "").rsplit("/", 1)[-1] or "")
            until = sub.get("x-until")
            lines.append(f"| `{label}{key}` | {_cell(kind)} | {_cell(_sentence(sub.get('description')))} "
                         f"| {sub.get('x-since', '')} | {f'after {until}' if until else ''} |")
            walk(sub, f"{path}/properties/{key}", f"{label}{key}.")
            for extra in ("items", "additionalProperties"):
                if isinstance(sub.get(extra), dict):
                    walk(sub[extra], f"{path}/properties/{key}/{extra}", f"{label}{key}[].")

    walk(schema, "", "")
    for dname, d in (schema.get("$defs") or {}).items():
        walk(d, f"/$defs/{dname}", f"{d.get('title', dname)}.")
    lines.append("")
    return lines


def render() -> str:
    """The text of ``docs/formats.md``."""
    facts = ann.load()
    lines = [HEADER, "# Store formats, field by field, release by release", "",
             "Every table below is generated from the Kaitai Struct specs and JSON Schemas in `formats/`. "
             "`since` is the first release that writes a field, value or file; `until` the first that no longer "
             "does (empty: still written by the newest known release). A field without a range is in every "
             "release of its format. `rmqformats schema-diff A B` lists the changes between two releases and "
             "`rmqformats schema export --version X DIR` writes the specs of one release.", "",
             "## Known releases", "",
             "`date` is the day of the tagged commit; releases newer than the source mirror say how they are "
             "known. Every release claim is checked in `formats/audit.yaml`.", "",
             "| release | tag | date | established by |", "|---|---|---|---|",
             *(f"| {r.version} | `{r.tag}` | {r.date} | {_cell(r.established) or 'tagged source'} |"
               for r in rel.RELEASES), "",
             "## File kinds", "", "| kind | path in the store | since | until | cited |", "|---|---|---|---|---|"]
    for k in facts.files:
        where = f"`{k.path}`" if k.path else "(not fixed)"
        name = f"[{k.id}](#{k.spec})" if k.spec else k.id
        lines.append(f"| {name} | {where} | {k.since or ''} | {k.until or ''} | `{k.ref or ''}` |")
    lines.append("")
    for name in ann.ksy_names():
        lines += _spec_section(name, facts)
    for name, _ in ann._schema_files():
        lines += _schema_section(name, facts)
    lines += _audit_section()
    return "\n".join(lines).rstrip("\n") + "\n"


def _audit_section() -> list[str]:
    """The rows of ``formats/audit.yaml``, by release: where each claim was established."""
    from . import audit

    rows = sorted(audit.table(), key=lambda r: (rel.at_or_after(str(r["release"])), r["at"], r["key"]))
    lines = ["## Release audit", "",
             f"Every release claim above ({len(rows)}), from `formats/audit.yaml`: where it is, how it was "
             "established, what shows it at the release and what the release before lacks.", "",
             "| release | where | claim | how | at the release | before |", "|---|---|---|---|---|---|"]
    for r in rows:
        claim = r["key"] + (f" {r['rule']}" if r.get("rule") else "")
        lines.append(f"| {r['release']} | `{r['at']}` | {claim} | {r['how']} | {_cell(r['evidence'])} | "
                     f"{_cell(r['before'])} |")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rmqformats.versions.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "formats.md")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            sys.stderr.write(f"{args.out} is stale: run `make generate`\n")
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    from .. import output
    with output.AtomicFile(args.out, force=True) as f:
        f.stream.write(text.encode("utf-8"))
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
