"""The ``.ksy`` specs as one release wrote its files.

``project(spec, release)`` keeps what ``release`` has: elements outside their
``-rmq-since`` / ``-rmq-until`` range are dropped (a dropped bit field becomes
unused bits, merged into the ``reserved*`` bits in front of it, so the other
bits keep their place), switch cases outside their ``-rmq-cases`` range are
dropped, and the values of ``-rmq-before`` entries replace the newer ones (an
expression or a representation that names a dropped element). The result has no
``-rmq-*`` keys but ``-rmq-release``, and is a spec the Kaitai Struct compiler
and the Web IDE accept. ``None`` when the release does not have the file kind.

``project_schema`` does the same for a config JSON Schema: keys outside their
``x-since`` / ``x-until`` range are left out.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from . import annotations as ann
from .releases import Release, at_or_after, release

_BITS = re.compile(r"^b([0-9]+)$")


def _present(node: dict, r: Release, since_key: str = "-rmq-since", until_key: str = "-rmq-until") -> bool:
    since, until = node.get(since_key), node.get(until_key)
    return (since is None or r >= at_or_after(str(since))) and (until is None or r < at_or_after(str(until)))


def _apply_before(node: dict, r: Release) -> dict:
    """``node`` with the values of the oldest ``-rmq-before`` entry that applies to ``r``."""
    entries = [e for e in node.get("-rmq-before") or [] if r < at_or_after(str(e["until"]))]
    if not entries:
        return node
    entry = min(entries, key=lambda e: at_or_after(str(e["until"])))
    out = dict(node)
    for key, value in entry.items():
        if key not in ann.BEFORE_META:
            out[key] = value
    return out


def _strip(node: Any) -> Any:
    """``node`` without ``-rmq-*`` keys, at every depth."""
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if not (isinstance(k, str) and k.startswith("-rmq-"))}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _case_key(key: Any) -> str:
    return str(key).lower() if isinstance(key, bool) else str(key)


def _project_field(f: dict, r: Release) -> dict:
    f = _apply_before(f, r)
    ftype = f.get("type")
    if isinstance(ftype, dict) and ftype.get("-rmq-cases"):
        marks = {str(k): v for k, v in ftype["-rmq-cases"].items()}
        cases = {k: v for k, v in ftype["cases"].items()
                 if _case_key(k) not in marks or _present(marks[_case_key(k)], r, "since", "until")}
        f = dict(f)
        f["type"] = {**ftype, "cases": cases}
    return f


def _project_type(t: dict, r: Release) -> dict:
    t = _apply_before(t, r)
    out = dict(t)
    if "seq" in t:
        seq: list[dict] = []
        for f in t["seq"]:
            if _present(f, r):
                seq.append(_project_field(f, r))
                continue
            m = _BITS.match(str(f.get("type", "")))
            if not m:
                continue
            width = int(m.group(1))
            prev = seq[-1] if seq else None
            pm = _BITS.match(str(prev.get("type", ""))) if prev else None
            if prev is not None and pm and str(prev["id"]).startswith("reserved"):
                note = f"Also bits of `{f['id']}` ({f.get('-rmq-since')}+), unused in {r}."
                seq[-1] = {**prev, "type": f"b{int(pm.group(1)) + width}",
                           "doc": f"{str(prev.get('doc', '')).rstrip()} {note}".strip()}
            else:
                seq.append({"id": f"reserved_{f['id']}", "type": f"b{width}",
                            "doc": f"Unused in {r} (`{f['id']}` from {f.get('-rmq-since')})."})
        out["seq"] = seq
    if "instances" in t:
        out["instances"] = {name: _apply_before(inst, r) for name, inst in t["instances"].items()
                            if _present(inst, r)}
    if "types" in t:
        out["types"] = {name: _project_type(sub, r) for name, sub in t["types"].items() if _present(sub, r)}
    if "enums" in t:
        out["enums"] = {name: {v: m for v, m in values.items() if not isinstance(m, dict) or _present(m, r)}
                        for name, values in t["enums"].items()}
    return out


def project(spec: dict, r: str | Release) -> dict | None:
    """The spec as release ``r`` writes the file; ``None`` when ``r`` does not have the file kind."""
    r = release(r)
    if not _present(spec, r):
        return None
    out = _strip(_project_type(copy.deepcopy(spec), r))
    result = {"meta": out.pop("meta")}
    result["-rmq-release"] = r.version
    result.update(out)
    return result


def dump(spec: dict) -> str:
    """A projected spec as YAML text."""
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=80, default_flow_style=False)


def project_schema(schema: dict, r: str | Release) -> dict | None:
    """A config JSON Schema with only the keys release ``r`` writes; ``None`` when ``r`` has no such file."""
    r = release(r)

    def present(node: dict) -> bool:
        since = node.get("x-since")
        until = ann.json_until(node.get("x-until"), "schema")
        return (since is None or r >= at_or_after(str(since))) and (until is None or r < until)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                if k == "properties" and isinstance(v, dict):
                    out[k] = {name: walk(sub) for name, sub in v.items() if not isinstance(sub, dict) or present(sub)}
                else:
                    out[k] = walk(v)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    if schema.get("x-files") and not present(schema):
        return None
    out = walk(schema)
    out["x-release"] = r.version
    return out


def export(r: str | Release, folder: str | os.PathLike[str], *, schemas: bool = True) -> list[Path]:
    """Write every ``.ksy`` spec projected onto ``r`` into ``folder`` (and, with ``schemas``, the
    config JSON Schemas into ``folder/config``); returns the files written."""
    r = release(r)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ann.ksy_names():
        projected = project(ann.load_ksy(name), r)
        if projected is None:
            continue
        path = out / name
        path.write_text(dump(projected), encoding="utf-8")
        written.append(path)
    if schemas:
        for name, _ in ann._schema_files():
            schema = project_schema(ann.load_schema(name), r)
            if schema is None:
                continue
            path = out / "config" / name
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(schema, indent=2, ensure_ascii=True) + "\n", encoding="utf-8")
            written.append(path)
    return written
