"""What a target's driver prints for each spec, derived from ``formats/*.ksy`` (the "plan").

``python tests/targets/plan.py OUT_DIR`` writes ``OUT_DIR/<spec id>.json`` for every spec;
:func:`plan` returns one spec's plan. The plan is language-neutral: dynamic languages walk
parsed objects with it, static languages generate their dumper code from it. Its shape
(see README.md beside this file)::

    {"id": "rocketmq_timer_log", "root": "rocketmq_timer_log",
     "classes": {"<type name>": {"path": ["rocketmq_timer_log", "unit"],
                                 "members": [{"name": "len_unit", "kind": "seq", "type": "s4",
                                              "repeat": false, "optional": false,
                                              "enum": null, "classes": []}, ...]}},
     "enums": {"rocketmq_timer_log::unit_magic": {"path": ["rocketmq_timer_log", "unit_magic"],
                                                  "values": {"zero_fill": 0, "blank": -875286124}}}}

``kind`` is ``seq`` (a seq field), ``value`` (a value instance) or ``pos`` (a positioned
instance, printed only when a job names it). ``type`` is an integer type (``u1`` ... ``s8``;
``int`` for a switch between integer types, whose ``classes`` lists them),
``f4``/``f8``, ``bool``, ``bits`` (an unsigned bit field wider than one bit), ``str``, ``bytes``,
``user`` (one type, named in ``classes``), ``switch`` (one of ``classes``, or ``bytes`` when a
case has no type) or, for value instances, ``value`` (the type the compiler infers).
``enum`` is a key of ``enums`` or null. Type names are unique within each spec.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

FORMATS = Path(__file__).resolve().parents[2] / "formats"

_INT = re.compile(r"^([us][1248])(be|le)?$")
_FLOAT = re.compile(r"^(f[48])(be|le)?$")
_BITS = re.compile(r"^b(\d+)(be|le)?$")


def _walk_types(spec: dict, path: list[str], out: dict[tuple, dict]) -> None:
    out[tuple(path)] = spec
    for name, sub in (spec.get("types") or {}).items():
        _walk_types(sub, path + [name], out)


def _resolve(ref: str, scope: list[str], known: set[tuple]) -> tuple:
    """Kaitai's lookup: ``a::b`` or ``b`` from the innermost enclosing type outwards."""
    parts = ref.split("::")
    for depth in range(len(scope), 0, -1):
        candidate = tuple(scope[:depth] + parts)
        if candidate in known:
            return candidate
    if tuple(parts) in known:
        return tuple(parts)
    raise KeyError(f"{'::'.join(scope)}: cannot resolve {ref!r}")


def _type_of(attr: dict, scope: list[str], types: dict[tuple, dict]) -> tuple[str, list[str]]:
    """(plan type, user classes) of a seq field or positioned instance."""
    t = attr.get("type")
    if isinstance(t, dict):  # switch-on
        classes, has_bytes, kinds = [], False, set()
        for case in (t.get("cases") or {}).values():
            if case is None:
                has_bytes = True
                continue
            sub, cls = _type_of({"type": case}, scope, types)
            kinds.add(sub)
            if sub == "user":
                classes.extend(c for c in cls if c not in classes)
            elif sub == "bytes":
                has_bytes = True
        if kinds and all(_INT.match(k) for k in kinds) and not has_bytes:
            return "int", sorted(kinds)  # an integer of a width chosen at run time
        if ("size" in attr or "size-eos" in attr) and "_" not in (t.get("cases") or {}):
            has_bytes = True  # no matching case (no default): the raw bytes
        return "switch", classes + (["bytes"] if has_bytes else [])
    if t is None:
        return "bytes", []
    t = str(t)
    if m := _INT.match(t):
        return m.group(1), []
    if m := _FLOAT.match(t):
        return m.group(1), []
    if m := _BITS.match(t):
        return ("bool" if m.group(1) == "1" else "bits"), []
    if t in ("str", "strz"):
        return "str", []
    name = t.split("(", 1)[0].strip()
    return "user", [_resolve(name, scope, set(types))[-1]]


def plan(spec: dict) -> dict:
    """The plan of one parsed ``.ksy`` document."""
    root = spec["meta"]["id"]
    types: dict[tuple, dict] = {}
    _walk_types(spec, [root], types)
    enum_paths = {path + (name,): values for path, t in types.items()
                  for name, values in (t.get("enums") or {}).items()}
    enums = {}
    for path, values in enum_paths.items():
        enums["::".join(path)] = {
            "path": list(path),
            "values": {(v["id"] if isinstance(v, dict) else v): int(k) for k, v in values.items()},
        }

    classes = {}
    for path, t in types.items():
        scope = list(path)
        members = []
        for f in t.get("seq") or []:
            if "id" not in f:
                continue
            kind_type, cls = _type_of(f, scope, types)
            members.append(_member(f["id"], "seq", kind_type, cls, f, scope, enum_paths))
        for name, inst in (t.get("instances") or {}).items():
            if "value" in inst:
                members.append(_member(name, "value", "value", [], inst, scope, enum_paths))
            else:
                kind_type, cls = _type_of(inst, scope, types)
                members.append(_member(name, "pos", kind_type, cls, inst, scope, enum_paths))
        if path[-1] in classes:
            raise ValueError(f"{root}: type name {path[-1]!r} is not unique")
        classes[path[-1]] = {"path": list(path), "members": members}
    return {"id": root, "root": root, "classes": classes, "enums": enums}


def _member(name, kind, kind_type, classes, attr, scope, enum_paths) -> dict:
    enum = None
    if "enum" in attr:
        enum = "::".join(_resolve(attr["enum"], scope, set(enum_paths)))
    return {"name": name, "kind": kind, "type": kind_type, "classes": classes,
            "repeat": "repeat" in attr, "optional": "if" in attr, "enum": enum}


def plan_file(path: Path) -> dict:
    return plan(yaml.safe_load(path.read_text(encoding="utf-8")))


def write_plans(out: Path, specs: list[Path] | None = None) -> list[Path]:
    """One ``<spec id>.json`` per spec in ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in specs or sorted(FORMATS.glob("*.ksy")):
        p = plan_file(path)
        target = out / f"{p['id']}.json"
        target.write_text(json.dumps(p, indent=1), encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python tests/targets/plan.py OUT_DIR")
    for p in write_plans(Path(sys.argv[1])):
        print(p)
