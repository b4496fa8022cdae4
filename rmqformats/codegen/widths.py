"""Integer arithmetic that mixes widths: the check that keeps the Go target compiling.

Kaitai Struct types every integer expression as one "calculated" integer, and
most targets (Python, JavaScript, Java, C++) are happy with that. The Go
target is not: it emits each field with its own Go type (``s1`` is ``int8``,
``s4`` ``int32``, ``s8`` ``int64``, a value instance ``int``, ``_io.size``
``int64``, a conditional a temporary typed after its first branch) and
writes ``a + b`` as it stands, and Go refuses an operator or an assignment
between two different integer types (``mismatched types int and int8``).
Untyped literals adapt to the other side, so only typed values count.

:func:`check_spec` walks every expression of a spec (``value``, ``if``,
``size``, ``pos``, ``repeat-*``, ``valid``, ``switch-on``, type arguments),
works out the Go type of each operand the way the pinned compiler's Go
translator emits it, and reports each place where two different integer
types meet without an explicit cast (``.as<s4>``, ``.as<s8>``): arithmetic
and bitwise operators, comparisons, the branches of ``?:`` and arguments
passed to typed parameters. An empty list means the Go output type-checks
as far as integers go.

The same walk checks what broke other targets' integer arithmetic, each
found by building the generated parsers (``tests/test_targets.py``):

* Go keeps an enum's own type under ``.to_i``, so ``&`` (or any arithmetic)
  between an enum and an integer or another enum does not compile: each
  operand needs ``.to_i.as<u4>`` (or another integer cast).
* Java, C++, C# and Rust type a computed value instance (arithmetic, ``?:``)
  as a 32-bit integer unless the whole expression is cast: one whose
  operands are 64-bit (``s8``, ``u8``, ``u4``) needs an outer ``.as<s8>``.
* Rust casts both operands of an arithmetic operator or a comparison to
  ``i32`` unless they have one Kaitai type (two fields of one type, or two
  ``.as<>`` casts to one type): with a 64-bit operand that truncates, and a
  literal outside the ``i32`` range does not compile.
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple, Optional

from . import kexpr

#: An untyped Go constant: adapts to the other operand.
CONST = "const"
UNKNOWN = "unknown"

_INT_GO = {8: "uint64", 4: "uint32", 2: "uint16", 1: "uint8", -8: "int64", -4: "int32", -2: "int16", -1: "int8"}
_INT_TYPE_RE = re.compile(r"^([su])([1248])(le|be)?$")
_BITS_RE = re.compile(r"^b([0-9]+)(le|be)?$")
_ARITH = ("+", "-", "*", "/", "%", "&", "|", "^")


class Finding(NamedTuple):
    """One place where integer widths mix: spec path, expression text and what is wrong."""

    path: str
    expr: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.expr!r}: {self.message}"


def _primitive(name: str) -> Optional[str]:
    """Go type of a primitive Kaitai type name, or None for a user type."""
    m = _INT_TYPE_RE.match(name)
    if m:
        n = int(m.group(2))
        return _INT_GO[n if m.group(1) == "u" else -n]
    m = _BITS_RE.match(name)
    if m:
        return "bool" if m.group(1) == "1" else "uint64"
    if name in ("f4", "f4le", "f4be"):
        return "float32"
    if name in ("f8", "f8le", "f8be"):
        return "float64"
    if name in ("str", "strz"):
        return "string"
    if name == "bool":
        return "bool"
    if name == "bytes":
        return "bytes"
    return None


def _is_int(t: str) -> bool:
    return t == "int" or t in _INT_GO.values()


def _combine(t1: str, t2: str) -> str:
    """Kaitai's ``combineTypes`` on Go type names (the type of a ``?:`` or a switch)."""
    if t1 == t2:
        return t1
    if UNKNOWN in (t1, t2):
        return UNKNOWN
    if _is_int(t1) and _is_int(t2):
        if {t1, t2} == {"int8", "uint8"}:
            return "uint8"
        if t1 in ("int8", "uint8") and t2 != "int":
            return t2
        if t2 in ("int8", "uint8") and t1 != "int":
            return t1
        if t1 != "int" and t2 != "int" and t1[0] == t2[0]:  # same signedness: the wider one
            return max(t1, t2, key=lambda t: int(re.sub(r"\D", "", t)))
        return "int"
    return UNKNOWN


class _Type(NamedTuple):
    name: str
    spec: dict
    parent: Optional["_Type"]


class _Checker:
    def __init__(self, spec: dict):
        self.spec = spec
        self.root = _Type(spec["meta"]["id"], spec, None)
        self.findings: list[Finding] = []
        self._busy: set = set()
        self._where = ""

    # -- types of the spec
    def find_type(self, where: _Type, name: str) -> Optional[_Type]:
        path = name.split("::")
        t: Optional[_Type] = where
        while t is not None:
            found = self._descend(t, path)
            if found is not None:
                return found
            t = t.parent
        return None

    @staticmethod
    def _descend(t: _Type, path: list) -> Optional[_Type]:
        for part in path:
            sub = (t.spec.get("types") or {}).get(part)
            if sub is None:
                return None
            t = _Type(part, sub, t)
        return t

    def all_types(self) -> Iterator[tuple[str, _Type]]:
        stack = [("", self.root)]
        while stack:
            path, t = stack.pop(0)
            yield path, t
            for name, sub in (t.spec.get("types") or {}).items():
                stack.append((f"{path}types/{name}/", _Type(name, sub, t)))

    def type_ref(self, where: _Type, text: str) -> str:
        """Go type name of a ``type:`` value (primitive, or ``user:<name>``)."""
        prim = _primitive(text)
        if prim is not None:
            return prim
        path, _ = kexpr.parse_type_ref(text)
        return "user:" + "::".join(path)

    def field_type(self, where: _Type, f: dict) -> str:
        if "enum" in f:
            base = f"enum:{f['enum']}"
        else:
            ty = f.get("type")
            if ty is None:
                base = "bytes"
            elif isinstance(ty, dict):
                cases = [self.type_ref(where, str(v)) for v in (ty.get("cases") or {}).values()]
                base = cases[0] if cases else UNKNOWN
                for c in cases[1:]:
                    base = _combine(base, c)
            else:
                base = self.type_ref(where, str(ty))
        return f"array:{base}" if f.get("repeat") else base

    def member(self, t: _Type, name: str) -> Optional[str]:
        """Go type of a field, param or instance of ``t``."""
        for f in t.spec.get("seq") or []:
            if f.get("id") == name:
                return self.field_type(t, f)
        for p in t.spec.get("params") or []:
            if p.get("id") == name:
                return self.type_ref(t, str(p.get("type", "")))
        inst = (t.spec.get("instances") or {}).get(name)
        if inst is not None:
            if "value" in inst:
                key = (id(t.spec), name)
                if key in self._busy:
                    return UNKNOWN
                self._busy.add(key)
                try:
                    return self.kaitai_type(t, kexpr.to_node(inst["value"]))
                except kexpr.ExprError:
                    return UNKNOWN
                finally:
                    self._busy.discard(key)
            return self.field_type(t, inst)
        return None

    def user(self, where: _Type, go_type: str) -> Optional[_Type]:
        if go_type.startswith("user:"):
            return self.find_type(where, go_type[5:])
        return None

    # -- Kaitai's own type of an expression (what it declares temporaries and instances with)
    def kaitai_type(self, t: _Type, node: kexpr.Node, item: str = UNKNOWN) -> str:
        if isinstance(node, kexpr.IntLit):
            v = node.value
            return "int8" if 0 <= v <= 127 else "uint8" if 128 <= v <= 255 else "int"
        if isinstance(node, kexpr.Binary):
            lt, rt = self.kaitai_type(t, node.left, item), self.kaitai_type(t, node.right, item)
            return "int" if _is_int(lt) and _is_int(rt) else UNKNOWN if UNKNOWN in (lt, rt) else "float64"
        if isinstance(node, kexpr.Unary):
            inner = self.kaitai_type(t, node.operand, item)
            if node.op == "not":
                return "bool"
            return inner if inner in ("int64", "uint64") or not _is_int(inner) else "int"
        if isinstance(node, kexpr.Ternary):
            return _combine(self.kaitai_type(t, node.then, item), self.kaitai_type(t, node.other, item))
        if isinstance(node, kexpr.Attr) and node.name in ("size", "pos") and self._is_io(node.obj):
            return "int"
        if isinstance(node, kexpr.Call) or (isinstance(node, kexpr.Attr) and node.name in ("to_i", "length")):
            return {"to_i": "int", "length": "int", "size": "int", "substring": "string"}.get(node.name, UNKNOWN)
        return self.go_type(t, node, item, check=False)

    @staticmethod
    def _is_io(node: kexpr.Node) -> bool:
        return (isinstance(node, kexpr.Name) and node.name == "_io") or (
            isinstance(node, kexpr.Attr) and node.name == "_io")

    # -- the Go type of the code the Go translator emits for an expression
    def go_type(self, t: _Type, node: kexpr.Node, item: str = UNKNOWN, *, check: bool = True,
                path: str = "", text: str = "") -> str:
        def sub(n: kexpr.Node) -> str:
            return self.go_type(t, n, item, check=check, path=path, text=text)

        def report(message: str) -> None:
            if check:
                self.findings.append(Finding(path, text, message))

        if isinstance(node, kexpr.Unary) and node.op == "-" and isinstance(node.operand, kexpr.IntLit):
            # The Go translator writes a negated literal as one literal.
            node = kexpr.IntLit(-node.operand.value, "-" + node.operand.text)
        if isinstance(node, kexpr.IntLit):
            v = node.value
            if -2**31 <= v <= 2**31 - 1:
                return CONST
            return "uint32" if 0 <= v <= 2**32 - 1 else "int64" if -2**63 <= v <= 2**63 - 1 else "uint64"
        if isinstance(node, kexpr.FloatLit):
            return CONST
        if isinstance(node, kexpr.BoolLit):
            return "bool"
        if isinstance(node, kexpr.StrLit):
            return "string"
        if isinstance(node, kexpr.EnumLit):
            return "enum:" + node.path[-1]
        if isinstance(node, kexpr.Name):
            if node.name == "_":
                return item
            if node.name == "_index":
                return "int"
            if node.name in ("_io", "_parent"):
                return UNKNOWN
            if node.name == "_root":
                return "user:" + self.root.name
            found = self.member(t, node.name)
            return UNKNOWN if found is None else found
        if isinstance(node, kexpr.Attr):
            if self._is_io(node.obj):
                return "int64" if node.name in ("size", "pos") else "bool" if node.name == "eof" else UNKNOWN
            base = sub(node.obj)
            if node.name == "to_i" and base.startswith("enum:"):
                return base  # the Go translator drops .to_i: the value keeps its enum type
            if node.name in ("to_i", "length", "size") and not base.startswith("user:"):
                return "int"
            if node.name == "to_s" and not base.startswith("user:"):
                return "string"
            if node.name == "_io":
                return UNKNOWN
            if base == "user:" + self.root.name:
                owner: Optional[_Type] = self.root
            else:
                owner = self.user(t, base)
            if owner is None:
                return UNKNOWN
            found = self.member(owner, node.name)
            return UNKNOWN if found is None else found
        if isinstance(node, kexpr.Call):
            sub(node.obj)
            for a in node.args:
                sub(a)
            return {"to_i": "int", "substring": "string", "to_s": "string"}.get(node.name, UNKNOWN)
        if isinstance(node, kexpr.Index):
            base, _ = sub(node.obj), sub(node.index)
            return base[6:] if base.startswith("array:") else "uint8" if base == "bytes" else UNKNOWN
        if isinstance(node, kexpr.Cast):
            sub(node.obj)
            prim = _primitive(node.type_name)
            return prim if prim is not None else "user:" + node.type_name
        if isinstance(node, kexpr.Unary):
            inner = sub(node.operand)
            return "bool" if node.op == "not" else inner
        if isinstance(node, kexpr.BoolOp):
            sub(node.left)
            sub(node.right)
            return "bool"
        if isinstance(node, kexpr.Compare):
            lt, rt = sub(node.left), sub(node.right)
            self._unify(lt, rt, node.op, report)
            self._check_rust_operands(t, node, lt, rt, report)
            return "bool"
        if isinstance(node, kexpr.Binary):
            lt, rt = sub(node.left), sub(node.right)
            for side in (lt, rt):
                if side.startswith("enum:"):
                    report(f"`{node.op}` has an enum operand ({side[5:]}), which Go keeps typed as the enum: "
                           f"cast each operand to one integer type with .to_i.as<u4>")
                    return "int"
            self._check_rust_operands(t, node, lt, rt, report)
            if node.op in ("<<", ">>"):
                return lt if lt != CONST else ("int" if rt != CONST else CONST)
            return self._unify(lt, rt, node.op, report)
        if isinstance(node, kexpr.Ternary):
            sub(node.cond)
            declared = self.kaitai_type(t, node.then, item)
            for branch, which in ((node.then, "first"), (node.other, "second")):
                bt = sub(branch)
                if _is_int(declared) and _is_int(bt) and bt != declared:
                    report(f"the {which} branch of ?: is {bt} but the conditional is stored as {declared} "
                           f"(the type of its first branch); cast the branches to one type with .as<>")
            return declared
        return UNKNOWN

    # -- Rust: operands of one operator need one Kaitai type
    def rust_key(self, t: _Type, node: kexpr.Node) -> tuple:
        """What the Rust translator compares to decide whether to cast an operand to i32."""
        if isinstance(node, kexpr.Cast):
            return ("cast", _primitive(node.type_name) or node.type_name)
        if isinstance(node, kexpr.Name) and node.name not in ("_", "_io", "_parent", "_root", "_index"):
            for f in t.spec.get("seq") or []:
                if f.get("id") == node.name:
                    return ("field", self.field_type(t, f))
            for p in t.spec.get("params") or []:
                if p.get("id") == node.name:
                    return ("field", self.type_ref(t, str(p.get("type", ""))))
            inst = (t.spec.get("instances") or {}).get(node.name)
            if inst is not None and "value" in inst:
                try:
                    top = kexpr.to_node(inst["value"])
                except kexpr.ExprError:
                    return ("calc",)
                if isinstance(top, kexpr.Cast):
                    return ("cast", _primitive(top.type_name) or top.type_name)
                return ("calc",)
            if inst is not None:
                return ("field", self.field_type(t, inst))
        return ("calc",)

    def _check_rust_operands(self, t: _Type, node, lt: str, rt: str, report) -> None:
        def literal(n: kexpr.Node) -> Optional[int]:
            if isinstance(n, kexpr.Unary) and n.op == "-" and isinstance(n.operand, kexpr.IntLit):
                return -n.operand.value
            return n.value if isinstance(n, kexpr.IntLit) else None

        for n in (node.left, node.right):
            v = literal(n)
            if v is not None and not -2**31 <= v <= 2**31 - 1:
                report(f"`{node.op}` has the literal {v} outside the i32 range, which Rust refuses where it casts "
                       f"the operands to i32: cast both operands to one type with .as<s8> (or .as<u4>)")
                return
        if "/pos" in self._where:
            return  # positions: every RocketMQ file is smaller than 2 GiB
        wide = [side for n, side in ((node.left, lt), (node.right, rt)) if self._wide(t, n, side)]
        if wide:
            if self.rust_key(t, node.left) != self.rust_key(t, node.right):
                report(f"`{node.op}` between operands of different Kaitai types, one of them {wide[0]}: Rust "
                       f"computes it as i32; cast both operands with .as<s8>")

    def _wide(self, t: _Type, node: kexpr.Node, go: str, widths=("int64", "uint64")) -> bool:
        """A 64-bit operand (not ``_io.size``/``pos``, nor a bit field of 32 bits or fewer)."""
        if go not in widths or (isinstance(node, kexpr.Attr) and self._is_io(node.obj)):
            return False
        if isinstance(node, kexpr.Name):
            for f in t.spec.get("seq") or []:
                m = _BITS_RE.match(str(f.get("type", ""))) if f.get("id") == node.name else None
                if m and int(m.group(1)) <= 32:
                    return False
        return True

    def check_value_width(self, t: _Type, path: str, expr) -> None:
        """A computed value instance with 64-bit operands needs an outer cast (Java, C++, C#, Rust)."""
        try:
            node = kexpr.to_node(expr)
        except kexpr.ExprError:
            return
        if isinstance(node, kexpr.Cast) or not isinstance(node, (kexpr.Binary, kexpr.Ternary, kexpr.Unary)):
            return
        if isinstance(node, kexpr.Unary) and node.op == "not":
            return
        if not _is_int(self.kaitai_type(t, node)):
            return  # strings, booleans
        if isinstance(node, kexpr.Ternary):
            operands = [node.then, node.other]
        else:
            operands = [n for n in kexpr.walk(node) if isinstance(n, (kexpr.Name, kexpr.Attr, kexpr.Index, kexpr.Cast))]
        wide = set()
        for n in operands:
            ty = self.go_type(t, n, check=False)
            if self._wide(t, n, ty, ("int64", "uint64", "uint32")):
                wide.add(ty)
        if wide:
            self.findings.append(Finding(path, str(expr), f"a computed value with {sorted(wide)[0]} operands is typed "
                                         f"32-bit in Java, C++, C# and Rust: wrap the whole expression in .as<s8>"))

    @staticmethod
    def _unify(lt: str, rt: str, op: str, report) -> str:
        if lt == CONST:
            return rt
        if rt == CONST:
            return lt
        if lt == rt:
            return lt
        if _is_int(lt) and _is_int(rt):
            report(f"`{op}` mixes {lt} and {rt}; make both sides one width with .as<s4> or .as<s8>")
            return "int64"
        return UNKNOWN

    # -- walking the spec
    def check_expr(self, t: _Type, path: str, expr, item: str = UNKNOWN) -> str:
        self._where = path
        try:
            node = kexpr.to_node(expr)
        except kexpr.ExprError:
            # Outside the subset kexpr reads; the construct generator reports it.
            return UNKNOWN
        return self.go_type(t, node, item, path=path, text=str(expr))

    def check_args(self, t: _Type, path: str, type_text: str) -> None:
        try:
            ref, args = kexpr.parse_type_ref(type_text)
        except kexpr.ExprError:
            return
        if not args:
            return
        target = self.find_type(t, "::".join(ref))
        params = (target.spec.get("params") or []) if target else []
        for i, arg in enumerate(args):
            got = self.go_type(t, arg, path=path, text=type_text)
            if i < len(params):
                want = self.type_ref(target, str(params[i].get("type", "")))
                if _is_int(want) and _is_int(got) and got != want:
                    self.findings.append(Finding(path, type_text, f"argument {i + 1} is {got} but parameter "
                                                 f"{params[i]['id']!r} is {want}; cast it with .as<>"))

    def check_attr(self, t: _Type, path: str, attr: dict) -> None:
        own = self.field_type(t, attr) if "id" in attr or "type" in attr else UNKNOWN
        elem = own[6:] if own.startswith("array:") else own
        for key in ("if", "size", "pos", "repeat-expr", "io"):
            if key in attr:
                self.check_expr(t, f"{path}/{key}", attr[key])
        if "repeat-until" in attr:
            self.check_expr(t, f"{path}/repeat-until", attr["repeat-until"], item=elem)
        ty = attr.get("type")
        if isinstance(ty, dict):
            self.check_expr(t, f"{path}/type/switch-on", ty.get("switch-on"))
            for key, case in (ty.get("cases") or {}).items():
                self.check_args(t, f"{path}/type/cases/{key}", str(case))
        elif isinstance(ty, str):
            self.check_args(t, f"{path}/type", ty)
        valid = attr.get("valid")
        if isinstance(valid, dict):
            for key in ("eq", "min", "max"):
                if key in valid:
                    self._check_valid(t, f"{path}/valid/{key}", elem, valid[key])
            if "expr" in valid:
                self.check_expr(t, f"{path}/valid/expr", valid["expr"], item=elem)
            for i, v in enumerate(valid.get("any-of") or []):
                self._check_valid(t, f"{path}/valid/any-of/{i}", elem, v)
        elif valid is not None and not isinstance(valid, list):
            self._check_valid(t, f"{path}/valid", elem, valid)

    def _check_valid(self, t: _Type, path: str, field_type: str, expr) -> None:
        """``valid`` compares the field with the expression (``==``, ``<``, ``>``)."""
        got = self.check_expr(t, path, expr)
        self._unify(field_type, got, "valid", lambda message: self.findings.append(Finding(path, str(expr), message)))

    def run(self) -> list[Finding]:
        for tpath, t in self.all_types():
            for i, attr in enumerate(t.spec.get("seq") or []):
                self.check_attr(t, f"/{tpath}seq/{i}", attr)
            for name, inst in (t.spec.get("instances") or {}).items():
                ipath = f"/{tpath}instances/{name}"
                if "value" in inst:
                    self.check_expr(t, f"{ipath}/value", inst["value"])
                    self.check_value_width(t, f"{ipath}/value", inst["value"])
                    if "if" in inst:
                        self.check_expr(t, f"{ipath}/if", inst["if"])
                else:
                    self.check_attr(t, ipath, inst)
        return self.findings


def check_spec(spec: dict) -> list[Finding]:
    """Every place in ``spec`` where integers of different Go widths meet without a cast."""
    return _Checker(spec).run()
