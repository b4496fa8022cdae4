"""Fast-path layout tables derived from a ``.ksy`` spec.

The hot path of :mod:`rmqformats.commitlog` decodes records with
``struct.unpack_from``. Everything it needs to know about the bytes (field
order, integer widths and signedness, enum values, the masks of bit fields,
widths chosen by a boolean parameter) is read here from the spec and written
to ``generated/layouts/<id>.py``, so that the spec stays the only place where
the layout is written down.

For each type ``T`` of the spec the module gets:

* ``T_SEQ``: the ids of its ``seq`` fields, in order;
* ``T_RUNS``: runs of consecutive fixed-width fields as ``(ids, struct format)``;
  a field is fixed-width when it is an integer, or a user type made only of
  bit fields, and has no ``if``, ``repeat`` or ``size``;
* ``T_<FIELD>_FORMATS``: for an integer field whose type switches on a
  boolean parameter, the struct format per parameter value;
* ``T_<FIELD>_SIZES``: for a ``size`` that depends only on boolean
  parameters, the size per parameter value;
* ``T_<FIELD>_NAMES``: for a field holding named values (the message
  properties), its ``-rmq-property-names``: ``id -> name`` of the names the
  readers decode;
* ``T_BITS``: for a type made only of bit fields, ``id -> (mask, shift)``;
* ``T_VALUES``: value instances computed only from the type's integer
  fields, as functions of a record ``u`` that indexes by field id. They use
  ``&``/``|`` for ``and``/``or``, so they work elementwise on a numpy
  structured array as well as on one record (``u["ofs_commitlog"] >= 0``).

Enums become ``NAME = {"id": value}`` dicts.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import yaml

from . import kexpr

_INT_FORMATS = {"u1": "B", "u2": "H", "u4": "I", "u8": "Q", "s1": "b", "s2": "h", "s4": "i", "s8": "q"}
_UNSIGNED_BY_BYTES = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _int_type(t, default_endian: str) -> tuple[str, str] | None:
    """(endian char, struct char) of an integer type name, or ``None``."""
    if not isinstance(t, str):
        return None
    endian = default_endian
    if t.endswith("be") or t.endswith("le"):
        endian, t = (">" if t.endswith("be") else "<"), t[:-2]
    fmt = _INT_FORMATS.get(t)
    return (endian, fmt) if fmt else None


def _bit_width(t) -> int | None:
    if isinstance(t, str) and t.startswith("b") and t[1:].isdigit():
        return int(t[1:])
    return None


def _bits_layout(tspec: dict) -> tuple[int, dict[str, tuple[int, int]]] | None:
    """(total bits, id -> (mask, shift)) for a type made only of big-endian bit fields."""
    seq = tspec.get("seq") or []
    widths = [_bit_width(f.get("type")) for f in seq]
    if not seq or None in widths or any("if" in f or "repeat" in f for f in seq):
        return None
    total = sum(widths)
    out, pos = {}, total
    for f, w in zip(seq, widths):
        pos -= w
        out[f["id"]] = (((1 << w) - 1) << pos, pos)
    return total, out


def _const(value) -> str:
    return "0x%x" % value if isinstance(value, int) and value > 9 else repr(value)


def _eval_on_params(expr, params: list[str]):
    """{param values: value} of an expression that depends only on boolean params, else ``None``."""
    if isinstance(expr, int):
        return None
    names = kexpr.names_in(str(expr))
    if not names or not names <= set(params):
        return None
    used = [p for p in params if p in names]
    table = {}
    for values in itertools.product([False, True], repeat=len(used)):
        table[values[0] if len(values) == 1 else values] = kexpr.evaluate(str(expr), dict(zip(used, values)))
    return table


_VECTOR_BOOL = {"and": "&", "or": "|"}
_VECTOR_BINARY = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%", "&": "&", "|": "|", "^": "^",
                  "<<": "<<", ">>": ">>"}


def _vector_source(node: kexpr.Node, fields: set[str]) -> str | None:
    """Elementwise Python source of an expression over ``fields``, or ``None`` if it uses anything else."""
    if isinstance(node, kexpr.IntLit):
        return repr(node.value)
    if isinstance(node, kexpr.Name):
        return f'u["{node.name}"]' if node.name in fields else None
    if isinstance(node, kexpr.Cast) and node.type_name in kexpr.INT_WIDTHS:
        # Casts exist for typed targets (Go); numpy widens mixed operands itself.
        return _vector_source(node.obj, fields)
    if isinstance(node, kexpr.Unary) and node.op in ("-", "~"):
        inner = _vector_source(node.operand, fields)
        return None if inner is None else f"({node.op}{inner})"
    if isinstance(node, (kexpr.Compare, kexpr.BoolOp, kexpr.Binary)):
        op = (node.op if isinstance(node, kexpr.Compare) else
              _VECTOR_BOOL.get(node.op) if isinstance(node, kexpr.BoolOp) else _VECTOR_BINARY.get(node.op))
        left, right = _vector_source(node.left, fields), _vector_source(node.right, fields)
        if op is None or left is None or right is None:
            return None
        return f"({left} {op} {right})"
    return None


def _value_instances(tspec: dict, fields: set[str]) -> list[tuple[str, str]]:
    out = []
    for iid, inst in (tspec.get("instances") or {}).items():
        if "value" in inst and not any(k in inst for k in ("pos", "io", "if")):
            source = _vector_source(kexpr.parse(str(inst["value"])), fields)
            if source is not None:
                out.append((iid, source))
    return out


def generate(spec: dict, source_name: str) -> str:
    """Python source of the layout module for ``spec``."""
    meta = spec.get("meta", {})
    endian = {"be": ">", "le": "<"}[meta.get("endian", "be")]
    types = dict(spec.get("types") or {})
    types[meta["id"]] = {k: v for k, v in spec.items() if k in ("seq", "params", "instances")}
    bits = {name: _bits_layout(t) for name, t in types.items()}

    lines = [
        f"# Generated from {source_name} by `python -m rmqformats.codegen`; do not edit.",
        f'"""Fixed-width layouts and constants of {meta["id"]}, derived from its .ksy spec."""',
        "",
        f'ENDIAN = "{endian}"',
        "",
    ]
    for ename, values in (spec.get("enums") or {}).items():
        lines.append(f"{ename.upper()} = {{")
        for value, info in values.items():
            ident = info["id"] if isinstance(info, dict) else info
            lines.append(f'    "{ident}": {_const(value)},')
        lines.append("}")
    if spec.get("enums"):
        lines.append("")

    for name in sorted(types, key=lambda n: (n != meta["id"], list(types).index(n))):
        tspec = types[name]
        prefix = name.upper()
        seq = tspec.get("seq") or []
        params = [p["id"] for p in tspec.get("params") or []]
        if bits[name]:
            total, table = bits[name]
            lines.append(f"{prefix}_BITS = {{")
            for fid, (mask, shift) in table.items():
                lines.append(f'    "{fid}": (0x{mask:x}, {shift}),')
            lines.append("}")
            lines.append(f"{prefix}_SIZE = {total // 8}")
            lines.append("")
            continue
        if not seq:
            continue
        lines.append(f"{prefix}_SEQ = (")
        for f in seq:
            lines.append(f'    "{f["id"]}",')
        lines.append(")")
        runs, run = [], []
        extras = []
        for f in seq:
            t = f.get("type")
            fmt = None
            if not any(k in f for k in ("if", "repeat", "size", "size-eos", "contents")):
                it = _int_type(t, endian)
                if it:
                    fmt = it[1]
                elif isinstance(t, str) and t in bits and bits[t] and bits[t][0] % 8 == 0:
                    fmt = _UNSIGNED_BY_BYTES[bits[t][0] // 8]
            if fmt:
                run.append((f["id"], fmt))
                continue
            if run:
                runs.append(run)
                run = []
            if isinstance(t, dict) and "switch-on" in t:
                cases = t["cases"]
                on = _eval_on_params(t["switch-on"], params)
                if on is not None and all(_int_type(v, endian) for v in cases.values()):
                    formats = {}
                    for key, value in on.items():
                        case = cases.get(value, cases.get(str(value).lower()))
                        e, c = _int_type(case, endian)
                        formats[key] = e + c
                    extras.append(f"{prefix}_{f['id'].upper()}_FORMATS = {formats!r}")
                elif on is None and all(_int_type(v, endian) for v in cases.values()):
                    # A switch on a value outside the type (a parent's enum): the format of each
                    # case, by its key as the spec spells it.
                    formats = {str(k): "".join(_int_type(v, endian)) for k, v in cases.items()}
                    extras.append(f"{prefix}_{f['id'].upper()}_CASES = {formats!r}")
            if f.get("-rmq-property-names"):
                extras.append(f"{prefix}_{f['id'].upper()}_NAMES = {{")
                extras.extend(f'    "{k}": {json.dumps(v)},' for k, v in f["-rmq-property-names"].items())
                extras.append("}")
            if "size" in f:
                sizes = _eval_on_params(f["size"], params)
                if sizes is not None:
                    extras.append(f"{prefix}_{f['id'].upper()}_SIZES = {sizes!r}")
        if run:
            runs.append(run)
        lines.append(f"{prefix}_RUNS = (")
        for r in runs:
            ids = ", ".join(f'"{i}"' for i, _ in r) + ("," if len(r) == 1 else "")
            lines.append(f'    (({ids}), "{endian}{"".join(c for _, c in r)}"),')
        lines.append(")")
        lines.extend(extras)
        int_fields = {i for r in runs for i, _ in r}
        values = _value_instances(tspec, int_fields)
        if values:
            lines.append(f"{prefix}_VALUES = {{")
            for iid, source in values:
                lines.append(f'    "{iid}": lambda u: {source},')
            lines.append("}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m rmqformats.codegen.layout_gen SPEC.ksy... --out DIR``."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[args.index("--out") + 1])
    specs = [a for i, a in enumerate(args) if a != "--out" and (i == 0 or args[i - 1] != "--out")]
    out.mkdir(parents=True, exist_ok=True)
    for path in specs:
        spec = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        (out / f"{spec['meta']['id']}.py").write_text(generate(spec, f"formats/{Path(path).name}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
