"""Generate construct schemas from Kaitai Struct specs.

kaitai-struct-compiler has a construct target, but it drops ``if``,
``params`` and ``process`` without a word and evaluates ternaries once, at
import time. This generator translates a ``.ksy`` spec into a Python module
of construct objects that keeps those semantics: every expression becomes a
lambda over the construct context, evaluated on each parse and build, and
every spec feature it cannot translate raises :class:`GenError` naming the
spec path instead of being skipped.

Usage::

    python -m rmqformats.codegen.construct_gen formats/x.ksy ... --out generated/construct

writes ``generated/construct/<meta.id>.py`` for each spec. :func:`generate`
returns the source of such a module.

The generated module holds:

* one ``enum.IntEnum`` class per Kaitai enum (``magic_code`` -> ``MagicCode``),
  also given to ``construct.Enum`` for the fields that use it;
* one construct object per Kaitai type, named after the type
  (``record``); a type with ``params`` is a function that takes one argument
  per param, a value or a function of the invoking object's context, and
  returns the construct object (``message(True)``);
* the top-level type under the spec's ``meta/id``.

Supported: ``seq``; nested ``types``; ``params``; ``if``; ``switch-on``
(integers, enums, booleans, strings); ``repeat`` ``eos``/``expr``/``until``;
``size`` and ``size-eos``; ``type: str`` with ``encoding``; ``u1``..``u8``,
``s1``..``s8``, ``f4``/``f8`` with ``meta/endian`` or an explicit ``be``/``le``
suffix; ``bN`` bit fields in a type whose ``seq`` is all bit fields; ``enum``;
``valid`` (``eq``, ``min``, ``max``, ``any-of``, ``in-enum``, ``expr``);
``contents``; value ``instances``; ``pos`` instances. Value instances become
computed fields placed right after the last field they depend on, so that
``if`` and ``size`` of later fields can use them. A ``pos`` instance becomes
a ``Pointer`` member after the last field (or before the first field that
uses it): it is parsed eagerly, and built, at its position in the object's
stream.
"""

from __future__ import annotations

import argparse
import codecs
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from . import kexpr
from .kexpr import BOOL, BYTES, FLOAT, INT, STR, UNKNOWN, ExprError, Kind

__all__ = ["GenError", "generate", "generate_file", "main"]

_LINE_LIMIT = 100
# Module-level names of the generated code, and builtins its lambdas call.
_RESERVED = frozenset({"c", "ka", "enum", "int", "len", "str", "min", "max"})
_ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_INT_RE = re.compile(r"^([us])([1248])(be|le)?$")
_FLOAT_RE = re.compile(r"^f([48])(be|le)?$")
_BITS_RE = re.compile(r"^b([0-9]+)(be|le)?$")

_SPEC_KEYS = {"meta", "doc", "doc-ref", "seq", "types", "instances", "enums", "params"}
_META_KEYS = {
    "id", "title", "application", "file-extension", "xref", "tags", "license", "ks-version",
    "ks-debug", "endian", "bit-endian", "encoding", "imports", "ks-opaque-types",
}
_FIELD_KEYS = {
    "id", "type", "size", "size-eos", "if", "repeat", "repeat-expr", "repeat-until", "enum",
    "valid", "contents", "encoding", "doc", "doc-ref",
}
_BIT_FIELD_KEYS = {"id", "type", "enum", "valid", "doc", "doc-ref"}
_PARAM_KEYS = {"id", "type", "enum", "doc", "doc-ref"}
_INSTANCE_KEYS = {"value", "if", "doc", "doc-ref"}
_POS_INSTANCE_KEYS = (_FIELD_KEYS - {"contents", "id"}) | {"pos"}
_VALID_KEYS = {"eq", "min", "max", "any-of", "in-enum", "expr"}


class GenError(ValueError):
    """A spec the generator cannot translate; the message names the spec path."""


# ---------------------------------------------------------------------------
# Rendering of construct expressions


class _Code:
    """A piece of generated Python that may be laid out on several lines."""

    def flat(self) -> str:
        raise NotImplementedError

    def render(self, col: int, indent: str) -> str:
        """Source text, starting at column ``col`` of a line indented by ``indent``."""
        return self.flat()


@dataclass
class _Raw(_Code):
    text: str

    def flat(self) -> str:
        return self.text


@dataclass
class _Call(_Code):
    func: str
    args: list
    kwargs: list = field(default_factory=list)

    def _parts(self) -> list:
        return list(self.args) + [_Kw(k, v) for k, v in self.kwargs]

    def flat(self) -> str:
        return f"{self.func}({', '.join(p.flat() for p in self._parts())})"

    def render(self, col: int, indent: str) -> str:
        text = self.flat()
        if col + len(text) <= _LINE_LIMIT:
            return text
        parts = self._parts()
        if len(parts) == 1 and isinstance(parts[0], _Lambda) and len(parts[0].parts) > 1:
            # func(lambda this: (\n ...\n)) reads better than one more level of indentation.
            return f"{self.func}(" + parts[0].render(_LINE_LIMIT, indent) + ")"
        inner = indent + "    "
        lines = [f"{self.func}("]
        for part in parts:
            lines.append(inner + part.render(len(inner), inner) + ",")
        lines.append(indent + ")")
        return "\n".join(lines)


@dataclass
class _Lambda(_Code):
    """``lambda params: body``; a long body is broken at its outermost operators."""

    params: str
    parts: tuple

    def flat(self) -> str:
        return f"lambda {self.params}: {' '.join(self.parts)}"

    def render(self, col: int, indent: str) -> str:
        text = self.flat()
        if col + len(text) <= _LINE_LIMIT or len(self.parts) < 2:
            return text
        inner = indent + "    "
        return "\n".join([f"lambda {self.params}: ("] + [inner + part for part in self.parts] + [indent + ")"])


@dataclass
class _Kw(_Code):
    name: str
    value: _Code

    def flat(self) -> str:
        return f"{self.name}={self.value.flat()}"

    def render(self, col: int, indent: str) -> str:
        return f"{self.name}=" + self.value.render(col + len(self.name) + 1, indent)


@dataclass
class _Dict(_Code):
    items: list  # (key source, _Code)

    def flat(self) -> str:
        return "{" + ", ".join(f"{k}: {v.flat()}" for k, v in self.items) + "}"

    def render(self, col: int, indent: str) -> str:
        text = self.flat()
        if col + len(text) <= _LINE_LIMIT:
            return text
        inner = indent + "    "
        lines = ["{"]
        for key, value in self.items:
            prefix = f"{key}: "
            lines.append(inner + prefix + value.render(len(inner) + len(prefix), inner) + ",")
        lines.append(indent + "}")
        return "\n".join(lines)


def _comment(text: Optional[str], indent: str) -> list:
    """``text`` as comment lines; long lines are wrapped."""
    if not text:
        return []
    lines = []
    for line in str(text).rstrip().splitlines():
        line = line.rstrip()
        width = _LINE_LIMIT - len(indent) - 2
        if len(line) > width:
            lines.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""])
        else:
            lines.append(line)
    return [f"{indent}# {line}".rstrip() for line in lines]


def _doc_comment(spec: dict, indent: str) -> list:
    lines = _comment(spec.get("doc"), indent)
    refs = spec.get("doc-ref")
    if refs:
        for ref in refs if isinstance(refs, list) else [refs]:
            lines.append(f"{indent}# See: {ref}")
    return lines


def _docstring(text: str, indent: str) -> list:
    text = str(text).rstrip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines() or [""]
    out = [f'{indent}"""{lines[0].rstrip()}']
    out.extend(f"{indent}{line}".rstrip() for line in lines[1:])
    if len(lines) == 1:
        out[0] += '"""'
    else:
        out.append(f'{indent}"""')
    return out


def _int_literal(value: int) -> str:
    return hex(value) if value > 255 else str(value)


# ---------------------------------------------------------------------------
# Spec model


@dataclass
class _Enum:
    key: tuple
    name: str
    py_name: str
    path: str
    members: list  # (kaitai id, python name, value, spec)

    def py_member(self, kaitai_id: str) -> Optional[str]:
        for member_id, py_name, _, _ in self.members:
            if member_id == kaitai_id:
                return py_name
        return None


@dataclass
class _Type:
    key: tuple  # () for the top-level type
    name: str
    spec: dict
    path: str  # spec path of the type ("" for the top level)
    parent: Optional["_Type"]
    endian: Optional[str]
    encoding: Optional[str]
    py_name: str = ""
    types: dict = field(default_factory=dict)
    enums: dict = field(default_factory=dict)
    params: list = field(default_factory=list)
    seq: list = field(default_factory=list)
    instances: dict = field(default_factory=dict)
    users: list = field(default_factory=list)  # keys of the types whose fields use this one

    def sub(self, *parts: Any) -> str:
        return _join(self.path, *parts)


@dataclass
class _Instance:
    code: str
    kind: Kind
    parts: tuple
    uses: list
    cond: Optional[str]
    uses_io: bool
    is_literal: bool
    #: The construct member of a ``pos`` instance (``None`` for a value instance).
    node: Optional[_Code] = None


def _join(path: str, *parts: Any) -> str:
    """Spec path ``path/part/...``; the top level is the empty path."""
    return "/".join([path] + [str(p) for p in parts]) if path else "/".join(str(p) for p in parts)


def _check_keys(spec: Any, allowed: set, path: str, what: str) -> None:
    if not isinstance(spec, dict):
        raise GenError(f"{path}: expected a mapping for {what}, got {spec!r}")
    for key in spec:
        if isinstance(key, str) and key.startswith("-"):
            continue  # "-" keys are tool extensions (-orig-id, -webide-representation...), not format
        if key not in allowed:
            raise GenError(f"{_join(path, key)}: {key!r} is not supported by the construct generator")


def _py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or name in _RESERVED else name


def _is_literal(node: kexpr.Node) -> bool:
    if isinstance(node, (kexpr.IntLit, kexpr.BoolLit, kexpr.StrLit, kexpr.FloatLit)):
        return True
    return isinstance(node, kexpr.Unary) and node.op == "-" and isinstance(node.operand, (kexpr.IntLit, kexpr.FloatLit))


def _spec_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_spec_text(v) for v in value) + "]"
    return str(value)


class _Scope(kexpr.Scope):
    """Name resolution inside one type of the spec."""

    def __init__(self, gen: "_Generator", t: _Type):
        self.gen = gen
        self.t = t

    def local(self, name: str) -> Optional[Kind]:
        return self.gen.member_kind(self.t, name)

    def member(self, type_ref: object, name: str) -> Optional[Kind]:
        return self.gen.member_kind(self.gen.types_by_key[type_ref], name)

    def enum_literal(self, path: tuple, member: str) -> tuple:
        e = self.gen.resolve_enum(self.t, path)
        if e is None:
            raise ExprError(f"unknown enum {'::'.join(path)!r}")
        py_member = e.py_member(member)
        if py_member is None:
            raise ExprError(f"enum {e.name!r} has no member {member!r}")
        return f"{e.py_name}.{py_member}", e.key

    def enum_class(self, enum_ref: object) -> str:
        return self.gen.enums_by_key[enum_ref].py_name

    def root_kind(self) -> Kind:
        return Kind("user", ())

    def parent_kind(self) -> Kind:
        users = self.t.users
        return Kind("user", users[0]) if len(users) == 1 else UNKNOWN


class _Generator:
    def __init__(self, spec: dict, source_name: str):
        self.spec = spec
        self.source_name = source_name
        self.types_by_key: dict = {}
        self.enums_by_key: dict = {}
        self.instance_cache: dict = {}
        self.instance_busy: set = set()
        self.emitted: set = set()

        _check_keys(spec, _SPEC_KEYS, "", "the spec")
        meta = spec.get("meta") or {}
        _check_keys(meta, _META_KEYS, "meta", "meta")
        self.meta = meta
        meta_id = meta.get("id")
        if not isinstance(meta_id, str) or not _ID_RE.match(meta_id):
            raise GenError(f"meta/id: expected a lower-case identifier, got {meta_id!r}")
        if meta.get("imports"):
            raise GenError("meta/imports: imports are not supported by the construct generator")
        if meta.get("ks-opaque-types"):
            raise GenError("meta/ks-opaque-types: opaque types are not supported by the construct generator")
        self.root = self._collect(meta_id, spec, (), "", None)
        self._name_things()
        self._find_users()

    # -- collection
    def _meta(self, spec: dict, path: str, parent: Optional[_Type]) -> tuple:
        meta = spec.get("meta") or {}
        if path:
            _check_keys(meta, {"endian", "bit-endian", "encoding"}, _join(path, "meta"), "meta")
        endian = parent.endian if parent else None
        encoding = parent.encoding if parent else None
        if "endian" in meta:
            endian = meta["endian"]
            if endian not in ("be", "le"):
                raise GenError(f"{_join(path, 'meta', 'endian')}: only 'be' and 'le' are supported, "
                               f"not {endian!r}")
        if meta.get("bit-endian", "be") != "be":
            raise GenError(f"{_join(path, 'meta', 'bit-endian')}: only 'be' is supported")
        if "encoding" in meta:
            encoding = self._encoding(meta["encoding"], _join(path, "meta", "encoding"))
        return endian, encoding

    @staticmethod
    def _encoding(name: Any, path: str) -> str:
        try:
            codecs.lookup(str(name))
        except LookupError:
            raise GenError(f"{path}: unknown encoding {name!r}") from None
        return str(name)

    def _collect(self, name: str, spec: dict, key: tuple, path: str, parent: Optional[_Type]) -> _Type:
        if path:
            _check_keys(spec, _SPEC_KEYS, path, "a type")
        endian, encoding = self._meta(spec, path, parent)
        t = _Type(key=key, name=name, spec=spec, path=path, parent=parent, endian=endian, encoding=encoding)
        self.types_by_key[key] = t
        seq = spec.get("seq") or []
        if not isinstance(seq, list):
            raise GenError(f"{t.sub('seq')}: expected a list")
        t.seq = seq
        params = spec.get("params") or []
        if not isinstance(params, list):
            raise GenError(f"{t.sub('params')}: expected a list")
        t.params = params
        instances = spec.get("instances") or {}
        if not isinstance(instances, dict):
            raise GenError(f"{t.sub('instances')}: expected a mapping")
        t.instances = instances
        for enum_name, enum_spec in (spec.get("enums") or {}).items():
            epath = t.sub("enums", enum_name)
            if not isinstance(enum_name, str) or not _ID_RE.match(enum_name):
                raise GenError(f"{epath}: bad enum name {enum_name!r}")
            t.enums[enum_name] = self._collect_enum(enum_name, enum_spec, key + (enum_name,), epath)
        for type_name, type_spec in (spec.get("types") or {}).items():
            tpath = t.sub("types", type_name)
            if not isinstance(type_name, str) or not _ID_RE.match(type_name):
                raise GenError(f"{tpath}: bad type name {type_name!r}")
            t.types[type_name] = self._collect(type_name, type_spec or {}, key + (type_name,), tpath, t)
        self._check_members(t)
        return t

    def _collect_enum(self, name: str, spec: Any, key: tuple, path: str) -> _Enum:
        if not isinstance(spec, dict):
            raise GenError(f"{path}: expected a mapping of values to ids")
        members = []
        seen = set()
        for raw_value, member in spec.items():
            mpath = f"{path}/{raw_value}"
            try:
                value = raw_value if isinstance(raw_value, int) and not isinstance(raw_value, bool) \
                    else int(str(raw_value).replace("_", ""), 0)
            except ValueError:
                raise GenError(f"{mpath}: enum keys must be integers") from None
            if isinstance(member, dict):
                _check_keys(member, {"id", "doc", "doc-ref"}, mpath, "an enum member")
                member_id = member.get("id")
            else:
                member_id, member = member, {}
            if not isinstance(member_id, str) or not _ID_RE.match(member_id):
                raise GenError(f"{mpath}: bad enum member id {member_id!r}")
            if member_id in seen:
                raise GenError(f"{mpath}: duplicate enum member id {member_id!r}")
            seen.add(member_id)
            members.append((member_id, _py_name(member_id), value, member))
        return self._register_enum(_Enum(key=key, name=name, py_name="", path=path, members=members))

    def _register_enum(self, e: _Enum) -> _Enum:
        self.enums_by_key[e.key] = e
        return e

    def _check_members(self, t: _Type) -> None:
        seen: dict = {}
        for i, param in enumerate(t.params):
            ppath = t.sub("params", i)
            _check_keys(param, _PARAM_KEYS, ppath, "a param")
            self._member_id(param.get("id"), ppath, seen)
        for i, f in enumerate(t.seq):
            fpath = t.sub("seq", i)
            if not isinstance(f, dict):
                raise GenError(f"{fpath}: expected a mapping")
            if "id" not in f:
                raise GenError(f"{fpath}: seq fields without an id are not supported")
            self._member_id(f["id"], fpath, seen)
        for name in t.instances:
            self._member_id(name, t.sub("instances", name), seen)

    @staticmethod
    def _member_id(name: Any, path: str, seen: dict) -> None:
        if not isinstance(name, str) or not _ID_RE.match(name):
            raise GenError(f"{path}: bad id {name!r}")
        if name in seen:
            raise GenError(f"{path}: id {name!r} is already used at {seen[name]}")
        seen[name] = path

    def _all_types(self, t: Optional[_Type] = None) -> list:
        t = t or self.root
        out = [t]
        for sub in t.types.values():
            out.extend(self._all_types(sub))
        return out

    def _name_things(self) -> None:
        types = self._all_types()
        counts: dict = {}
        for t in types:
            counts[t.name] = counts.get(t.name, 0) + 1
        taken = set()
        for t in types:
            base = t.name if counts[t.name] == 1 or not t.key else "__".join(t.key)
            if t.key and t.name == self.root.name:
                base = "__".join(t.key) + "_type"
            t.py_name = _py_name(base)
            if t.py_name in taken:
                raise GenError(f"{t.path}: generated name {t.py_name!r} clashes with another type")
            taken.add(t.py_name)
        enums = list(self.enums_by_key.values())
        ecounts: dict = {}
        for e in enums:
            ecounts[e.name] = ecounts.get(e.name, 0) + 1
        etaken = set()
        for e in enums:
            e.py_name = kexpr.camel(e.name if ecounts[e.name] == 1 else "_".join(e.key))
            if e.py_name in etaken or e.py_name in taken:
                raise GenError(f"{e.path}: generated name {e.py_name!r} clashes with another name")
            etaken.add(e.py_name)

    def _find_users(self) -> None:
        for t in self._all_types():
            for f in t.seq:
                ty = f.get("type")
                names = []
                if isinstance(ty, str):
                    names.append(ty)
                elif isinstance(ty, dict) and isinstance(ty.get("cases"), dict):
                    names.extend(v for v in ty["cases"].values() if isinstance(v, str))
                for name in names:
                    target = self._user_type(t, name)
                    if target is not None and t.key not in target.users:
                        target.users.append(t.key)

    def _user_type(self, t: _Type, type_text: str) -> Optional[_Type]:
        """The user type a ``type:`` value names, or None for a primitive or unknown type."""
        if _INT_RE.match(type_text) or _FLOAT_RE.match(type_text) or _BITS_RE.match(type_text):
            return None
        if type_text in ("str", "strz"):
            return None
        try:
            path, _ = kexpr.parse_type_ref(type_text)
        except ExprError:
            return None
        return self.resolve_type(t, path)

    # -- resolution
    def resolve_type(self, t: _Type, path: tuple) -> Optional[_Type]:
        scope: Optional[_Type] = t
        found = None
        while scope is not None:
            if path[0] in scope.types:
                found = scope.types[path[0]]
                break
            scope = scope.parent
        if found is None:
            return None
        for part in path[1:]:
            found = found.types.get(part)
            if found is None:
                return None
        return found

    def resolve_enum(self, t: _Type, path: tuple) -> Optional[_Enum]:
        if len(path) == 1:
            scope: Optional[_Type] = t
            while scope is not None:
                if path[0] in scope.enums:
                    return scope.enums[path[0]]
                scope = scope.parent
            return None
        owner = self.resolve_type(t, tuple(path[:-1]))
        return owner.enums.get(path[-1]) if owner is not None else None

    def _enum_of(self, t: _Type, name: Any, path: str) -> _Enum:
        if not isinstance(name, str):
            raise GenError(f"{path}: expected an enum name, got {name!r}")
        e = self.resolve_enum(t, tuple(name.split("::")))
        if e is None:
            raise GenError(f"{path}: unknown enum {name!r}")
        return e

    # -- kinds
    def member_kind(self, t: _Type, name: str) -> Optional[Kind]:
        for param in t.params:
            if param.get("id") == name:
                return self._param_kind(t, param)
        for f in t.seq:
            if f.get("id") == name:
                return self._field_kind(t, f)
        if name in t.instances:
            if (t.key, name) in self.instance_busy:
                return UNKNOWN
            return self.instance(t, name).kind
        return None

    def _param_kind(self, t: _Type, param: dict) -> Kind:
        if param.get("enum"):
            e = self.resolve_enum(t, tuple(str(param["enum"]).split("::")))
            return Kind("enum", e.key) if e else UNKNOWN
        return self._type_kind(t, param.get("type"))

    def _type_kind(self, t: _Type, ty: Any) -> Kind:
        if not isinstance(ty, str):
            return UNKNOWN
        if ty == "bool":
            return BOOL
        if ty in ("str", "strz"):
            return STR
        if ty == "bytes":
            return BYTES
        if _INT_RE.match(ty):
            return INT
        if _FLOAT_RE.match(ty):
            return FLOAT
        m = _BITS_RE.match(ty)
        if m:
            return BOOL if m.group(1) == "1" else INT
        target = self._user_type(t, ty)
        return Kind("user", target.key) if target is not None else UNKNOWN

    def _field_kind(self, t: _Type, f: dict) -> Kind:
        kind = self._element_kind(t, f)
        return Kind("array", kind) if f.get("repeat") else kind

    def _element_kind(self, t: _Type, f: dict) -> Kind:
        if "contents" in f:
            return BYTES
        if f.get("enum"):
            e = self.resolve_enum(t, tuple(str(f["enum"]).split("::")))
            return Kind("enum", e.key) if e else UNKNOWN
        ty = f.get("type")
        if ty is None:
            return BYTES
        if isinstance(ty, dict):
            cases = ty.get("cases")
            if not isinstance(cases, dict) or not cases:
                return UNKNOWN
            kinds = [self._type_kind(t, v) for v in cases.values()]
            if all(k == kinds[0] for k in kinds) and ("_" in cases or "size" not in f):
                return kinds[0]
            return UNKNOWN
        return self._type_kind(t, ty)

    # -- expressions
    def translate(self, t: _Type, expr: Any, path: str, uses: Optional[list] = None, *,
                  item: Optional[str] = None, item_kind: Kind = UNKNOWN) -> kexpr.Translation:
        translator = self.translator(t, item=item, item_kind=item_kind)
        out = self.run(translator, expr, path)
        if uses is not None:
            for name in translator.locals_used:
                if name not in uses:
                    uses.append(name)
        return out

    def translator(self, t: _Type, **kwargs: Any) -> kexpr.Translator:
        return kexpr.Translator(_Scope(self, t), **kwargs)

    @staticmethod
    def run(translator: kexpr.Translator, expr: Any, path: str) -> kexpr.Translation:
        try:
            return translator.translate(expr)
        except ExprError as exc:
            raise GenError(f"{path}: {exc}") from None

    def value_code(self, t: _Type, expr: Any, path: str, uses: list) -> _Code:
        """A construct argument for an expression: a literal as is, anything else as a context lambda."""
        node = self._node(expr, path)
        out = self.translate(t, node, path, uses)
        return _Raw(out.code) if _is_literal(node) else _Lambda("this", out.parts)

    @staticmethod
    def _node(expr: Any, path: str) -> kexpr.Node:
        try:
            return kexpr.to_node(expr)
        except ExprError as exc:
            raise GenError(f"{path}: {exc}") from None

    def instance(self, t: _Type, name: str) -> _Instance:
        cache_key = (t.key, name)
        if cache_key in self.instance_cache:
            return self.instance_cache[cache_key]
        spec = t.instances[name]
        ipath = t.sub("instances", name)
        if isinstance(spec, dict) and "pos" in spec:
            inst = self.positioned_instance(t, name, spec, ipath)
            self.instance_cache[cache_key] = inst
            return inst
        if isinstance(spec, dict):
            for key in spec:
                if not (isinstance(key, str) and key.startswith("-")) and key not in _INSTANCE_KEYS:
                    raise GenError(f"{ipath}/{key}: {key!r} in instances is not supported by the construct "
                                   "generator (only value instances are)")
        if not isinstance(spec, dict) or "value" not in spec:
            raise GenError(f"{ipath}: only value instances are supported by the construct generator")
        self.instance_busy.add(cache_key)
        try:
            translator = self.translator(t)
            out = self.run(translator, spec["value"], f"{ipath}/value")
            cond = None
            if "if" in spec:
                cond = self.run(translator, spec["if"], f"{ipath}/if").code
        finally:
            self.instance_busy.discard(cache_key)
        node = kexpr.to_node(spec["value"])
        parts = out.parts
        if isinstance(node, kexpr.Ternary) and cond is not None:
            parts = (f"({out.code})",)  # a conditional inside the "if ... else None" below
        inst = _Instance(code=out.code, kind=out.kind, parts=parts, uses=list(translator.locals_used), cond=cond,
                         uses_io=translator.uses_io, is_literal=_is_literal(node))
        self.instance_cache[cache_key] = inst
        return inst

    def positioned_instance(self, t: _Type, name: str, spec: dict, ipath: str) -> _Instance:
        """A ``pos`` instance: a ``Pointer`` to the field read at ``pos`` of the object's stream."""
        _check_keys(spec, _POS_INSTANCE_KEYS, ipath, "a pos instance")
        cache_key = (t.key, name)
        uses: list = []
        self.instance_busy.add(cache_key)
        try:
            node = self.element(t, spec, ipath, uses)
            node = self.valid(t, spec, ipath, node, uses, self._element_kind(t, spec))
            node = self.repeat(t, spec, ipath, node, uses)
            pos = self.translate(t, spec["pos"], f"{ipath}/pos", uses)
            # Kaitai positions count from the start of the object's stream; in a
            # construct substream, seek() takes positions of the parent stream.
            start = 'this["_io"].tell() - ka.io_pos(this)'
            node = _Call("c.Pointer", [_Lambda("this", (f"({pos.code})", f"+ {start}")), node])
            if "if" in spec:
                node = _Call("ka.If", [self.value_code(t, spec["if"], f"{ipath}/if", uses), node])
        finally:
            self.instance_busy.discard(cache_key)
        return _Instance(code="", kind=self._field_kind(t, spec), parts=(), uses=uses, cond=None, uses_io=True,
                         is_literal=False, node=node)

    # -- type references
    def type_ref(self, t: _Type, ty: str, path: str, uses: list) -> _Code:
        try:
            ref_path, args = kexpr.parse_type_ref(ty)
        except ExprError as exc:
            raise GenError(f"{path}: bad type {ty!r}: {exc}") from None
        target = self.resolve_type(t, ref_path)
        if target is None:
            raise GenError(f"{path}: unknown type {ty!r}")
        args = args or ()
        if len(args) != len(target.params):
            raise GenError(f"{path}: type {target.name!r} takes {len(target.params)} parameters, "
                           f"{len(args)} given")
        if target.params:
            codes = [self.value_code(t, arg, path, uses) for arg in args]
            ref: _Code = _Call(target.py_name, codes)
        else:
            ref = _Raw(target.py_name)
        if target.key not in self.emitted:
            # Not defined yet (a recursive type): bind when parsing.
            ref = _Call("c.LazyBound", [_Raw(f"lambda: {ref.flat()}")])
        return ref

    def primitive(self, t: _Type, ty: str, path: str) -> Optional[_Code]:
        """construct field for an integer or float type name, None for other names."""
        m = _INT_RE.match(ty)
        if m:
            sign, width, endian = m.groups()
            endian = endian or t.endian
            if endian is None and width != "1":
                raise GenError(f"{path}: {ty} needs an endianness (meta/endian or a be/le suffix)")
            bits = int(width) * 8
            return _Raw(f"c.Int{bits}{'s' if sign == 's' else 'u'}{'l' if endian == 'le' else 'b'}")
        m = _FLOAT_RE.match(ty)
        if m:
            width, endian = m.groups()
            endian = endian or t.endian
            if endian is None:
                raise GenError(f"{path}: {ty} needs an endianness (meta/endian or a be/le suffix)")
            return _Raw(f"c.Float{int(width) * 8}{'l' if endian == 'le' else 'b'}")
        return None

    # -- fields
    def field(self, t: _Type, index: int, f: dict) -> tuple:
        """construct expression of one seq field, and the names of the type it reads."""
        fpath = t.sub("seq", index)
        _check_keys(f, _FIELD_KEYS, fpath, "a seq field")
        uses: list = []
        if "contents" in f:
            for key in ("type", "size", "size-eos", "enum", "encoding"):
                if key in f:
                    raise GenError(f"{fpath}/{key}: 'contents' cannot be combined with {key!r}")
            node: _Code = _Call("c.Const", [_Raw(repr(self._contents(f["contents"], f"{fpath}/contents")))])
        else:
            node = self.element(t, f, fpath, uses)
        node = self.valid(t, f, fpath, node, uses, self._element_kind(t, f))
        node = self.repeat(t, f, fpath, node, uses)
        if "if" in f:
            node = _Call("ka.If", [self.value_code(t, f["if"], f"{fpath}/if", uses), node])
        return node, uses

    @staticmethod
    def _contents(contents: Any, path: str) -> bytes:
        parts = contents if isinstance(contents, list) else [contents]
        out = bytearray()
        for part in parts:
            if isinstance(part, str):
                out += part.encode("utf-8")
            elif isinstance(part, int) and not isinstance(part, bool) and 0 <= part <= 255:
                out.append(part)
            else:
                raise GenError(f"{path}: unsupported contents item {part!r}")
        return bytes(out)

    def element(self, t: _Type, f: dict, fpath: str, uses: list) -> _Code:
        ty = f.get("type")
        if "size" in f and f.get("size-eos"):
            raise GenError(f"{fpath}: 'size' and 'size-eos' cannot be combined")
        if "encoding" in f and ty not in ("str", "strz"):
            raise GenError(f"{fpath}/encoding: 'encoding' needs type: str")
        if f.get("enum") is not None and not (isinstance(ty, str) and (_INT_RE.match(ty) or _BITS_RE.match(ty))):
            raise GenError(f"{fpath}/enum: 'enum' needs an integer type")
        size = None
        if "size" in f:
            size = self.value_code(t, f["size"], f"{fpath}/size", uses)
        size_eos = bool(f.get("size-eos"))

        def raw_bytes(what: str) -> _Code:
            if size is not None:
                return _Call("c.Bytes", [size])
            if size_eos:
                return _Raw("c.GreedyBytes")
            raise GenError(f"{fpath}: {what} needs 'size' or 'size-eos' (terminators are not supported)")

        def sized(node: _Code) -> _Code:
            if size is not None:
                return _Call("c.FixedSized", [size, node])
            if size_eos:
                return _Call("ka.SizeEos", [node])
            return node

        if ty is None:
            return raw_bytes("a field without a type")
        if isinstance(ty, dict):
            return sized(self.switch(t, f, ty, f"{fpath}/type", uses, size is not None or size_eos))
        if not isinstance(ty, str):
            raise GenError(f"{fpath}/type: expected a type name, got {ty!r}")
        if ty == "str":
            encoding = f.get("encoding") or t.encoding
            if encoding is None:
                raise GenError(f"{fpath}: type str needs 'encoding' (or meta/encoding)")
            encoding = self._encoding(encoding, f"{fpath}/encoding")
            return _Call("c.StringEncoded", [raw_bytes("type str"), _Raw(kexpr.py_str(encoding))])
        if ty == "strz":
            raise GenError(f"{fpath}/type: 'strz' (terminated strings) is not supported by the construct generator")
        if _BITS_RE.match(ty):
            raise GenError(f"{fpath}/type: bit-sized integers are only supported in a type whose seq is all "
                           "bit fields; move them into a type of their own")
        prim = self.primitive(t, ty, f"{fpath}/type")
        if prim is not None:
            if size is not None or size_eos:
                raise GenError(f"{fpath}: 'size' cannot be used with type {ty}")
            if f.get("enum") is not None:
                e = self._enum_of(t, f["enum"], f"{fpath}/enum")
                return _Call("c.Enum", [prim, _Raw(e.py_name)])
            return prim
        return sized(self.type_ref(t, ty, f"{fpath}/type", uses))

    def switch(self, t: _Type, f: dict, sw: dict, path: str, uses: list, has_size: bool) -> _Code:
        _check_keys(sw, {"switch-on", "cases"}, path, "a switch type")
        if "switch-on" not in sw or not isinstance(sw.get("cases"), dict):
            raise GenError(f"{path}: a switch type needs 'switch-on' and 'cases'")
        on = self.translate(t, sw["switch-on"], f"{path}/switch-on", uses)
        items = []
        default = None
        enum_refs = []
        for key, case_type in sw["cases"].items():
            cpath = f"{path}/cases/{_spec_text(key)}"
            if not isinstance(case_type, str):
                raise GenError(f"{cpath}: expected a type name, got {case_type!r}")
            if case_type in ("str", "strz") or _BITS_RE.match(case_type):
                raise GenError(f"{cpath}: type {case_type} is not supported in switch cases")
            node = self.primitive(t, case_type, cpath) or self.type_ref(t, case_type, cpath, uses)
            if key == "_":
                default = node
                continue
            key_node = self._node(key, cpath)
            if not kexpr.is_constant(key_node):
                raise GenError(f"{cpath}: case keys must be constants")
            key_out = self.translate(t, key_node, cpath)
            if key_out.kind.name == "enum" and key_out.kind.ref not in enum_refs:
                enum_refs.append(key_out.kind.ref)
            items.append((key_out.code, node))
        key_code = on.code
        if enum_refs:
            if len(enum_refs) > 1:
                raise GenError(f"{path}/cases: case keys from different enums")
            if on.kind.name in ("enum", "unknown"):
                # Parsed enums are EnumIntegerString and built ones may be names
                # or ints; the case dict is keyed by IntEnum members.
                key_code = f"ka.enum_value({on.code}, {self.enums_by_key[enum_refs[0]].py_name})"
        if default is None and has_size:
            # Kaitai keeps the raw bytes of a sized field that matches no case.
            default = _Raw("c.GreedyBytes")
        kwargs = [("default", default)] if default is not None else []
        return _Call("c.Switch", [_Lambda("this", (key_code,)), _Dict(items)], kwargs)

    def valid(self, t: _Type, f: dict, fpath: str, node: _Code, uses: list, kind: Kind) -> _Code:
        if "valid" not in f:
            return node
        valid = f["valid"]
        vpath = f"{fpath}/valid"
        if not isinstance(valid, dict):
            valid = {"eq": valid}
        else:
            _check_keys(valid, _VALID_KEYS, vpath, "valid")
        checks = []
        value = kexpr.Name("_")
        for key, spec_value in valid.items():
            kpath = f"{vpath}/{key}"
            description = f"{key} {_spec_text(spec_value)}"
            if key == "in-enum":
                if spec_value is not True:
                    if spec_value is False:
                        continue
                    raise GenError(f"{kpath}: expected true or false")
                if kind.name != "enum":
                    raise GenError(f"{kpath}: in-enum needs a field with 'enum'")
                e = self.enums_by_key[kind.ref]
                description = f"in-enum {e.name}"
                checks.append((description, (f"ka.in_enum(value, {e.py_name})",)))
                continue
            if key == "any-of":
                if not isinstance(spec_value, list) or not spec_value:
                    raise GenError(f"{kpath}: expected a non-empty list")
                expr: kexpr.Node = kexpr.Compare("==", value, self._node(spec_value[0], kpath))
                for other in spec_value[1:]:
                    expr = kexpr.BoolOp("or", expr, kexpr.Compare("==", value, self._node(other, kpath)))
            elif key == "expr":
                expr = self._node(spec_value, kpath)
            else:
                op = {"eq": "==", "min": ">=", "max": "<="}[key]
                expr = kexpr.Compare(op, value, self._node(spec_value, kpath))
            out = self.translate(t, expr, kpath, uses, item="value", item_kind=kind)
            checks.append((description, out.parts))
        if not checks:
            return node
        args = [node] + [_Call("", [_Raw(kexpr.py_str(desc)), _Lambda("value, this", parts)]) for desc, parts in checks]
        return _Call("ka.Valid", args)

    def repeat(self, t: _Type, f: dict, fpath: str, node: _Code, uses: list) -> _Code:
        repeat = f.get("repeat")
        if repeat is None:
            for key in ("repeat-expr", "repeat-until"):
                if key in f:
                    raise GenError(f"{fpath}/{key}: {key!r} needs 'repeat'")
            return node
        if repeat == "eos":
            return _Call("ka.RepeatEos", [node])
        if repeat == "expr":
            if "repeat-expr" not in f:
                raise GenError(f"{fpath}: repeat: expr needs 'repeat-expr'")
            count = self.value_code(t, f["repeat-expr"], f"{fpath}/repeat-expr", uses)
            return _Call("c.Array", [count, node])
        if repeat == "until":
            if "repeat-until" not in f:
                raise GenError(f"{fpath}: repeat: until needs 'repeat-until'")
            out = self.translate(t, f["repeat-until"], f"{fpath}/repeat-until", uses,
                                 item="item", item_kind=self._element_kind(t, f))
            return _Call("ka.RepeatUntil", [_Lambda("item, this", out.parts), node])
        raise GenError(f"{fpath}/repeat: unknown repeat kind {repeat!r}")

    def bit_field(self, t: _Type, index: int, f: dict) -> tuple:
        fpath = t.sub("seq", index)
        for key in f:
            if not (isinstance(key, str) and key.startswith("-")) and key not in _BIT_FIELD_KEYS:
                raise GenError(f"{fpath}/{key}: {key!r} is not supported on bit fields by the construct generator")
        m = _BITS_RE.match(f["type"])
        bits = int(m.group(1))
        if m.group(2) == "le":
            raise GenError(f"{fpath}/type: little-endian bit fields are not supported")
        if bits == 0:
            raise GenError(f"{fpath}/type: b0 is not a bit field")
        if f.get("enum") is not None:
            e = self._enum_of(t, f["enum"], f"{fpath}/enum")
            node: _Code = _Call("c.Enum", [_Call("c.BitsInteger", [_Raw(str(bits))]), _Raw(e.py_name)])
        elif bits == 1:
            node = _Raw("c.Flag")  # in a bit stream, Flag reads one bit; Kaitai reads b1 as a bool
        else:
            node = _Call("c.BitsInteger", [_Raw(str(bits))])
        uses: list = []
        node = self.valid(t, f, fpath, node, uses, self._element_kind(t, f))
        return node, uses, bits

    # -- types
    def struct_entries(self, t: _Type) -> tuple:
        """(comment lines, field name, construct expression) for every member, in construct order."""
        entries = []
        for i, param in enumerate(t.params):
            entries.append((_doc_comment(param, ""), param["id"],
                            _Call("c.Computed", [_Call("ka.param", [_Raw(self.param_py_name(t, param["id"]))])])))
        is_bits = bool(t.seq) and all(isinstance(f.get("type"), str) and _BITS_RE.match(f["type"]) for f in t.seq)
        fields = []
        total_bits = 0
        for i, f in enumerate(t.seq):
            if is_bits:
                node, uses, bits = self.bit_field(t, i, f)
                total_bits += bits
            else:
                node, uses = self.field(t, i, f)
            fields.append((f, node, uses))
        if is_bits and total_bits % 8:
            raise GenError(f"{t.sub('seq')}: the bit fields add up to {total_bits} bits, not whole bytes")

        seq_index = {f["id"]: i for i, f in enumerate(t.seq)}
        positions = self._instance_positions(t, seq_index, [uses for _, _, uses in fields])
        for i, (f, _, uses) in enumerate(fields):
            for name in uses:
                if name in seq_index and seq_index[name] >= i:
                    raise GenError(f"{t.sub('seq', i)}: uses field {name!r}, which is not parsed yet")
                if name in positions and positions[name] >= i:
                    raise GenError(f"{t.sub('seq', i)}: uses instance {name!r}, which depends on fields "
                                   "parsed after this one")

        def instance_entries(pos: int) -> list:
            out = []
            for name, ipos in positions.items():
                if ipos != pos:
                    continue
                inst = self.instance(t, name)
                if inst.node is not None:
                    out.append((_doc_comment(t.instances[name], ""), name, inst.node))
                    continue
                if inst.cond is not None:
                    func: _Code = _Lambda("this", inst.parts + (f"if {inst.cond}", "else None"))
                elif inst.is_literal:
                    func = _Raw(inst.code)
                else:
                    func = _Lambda("this", inst.parts)
                out.append((_doc_comment(t.instances[name], ""), name, _Call("c.Computed", [func])))
            return out

        entries.extend(instance_entries(-1))
        for i, (f, node, _) in enumerate(fields):
            entries.append((_doc_comment(f, ""), f["id"], node))
            entries.extend(instance_entries(i))
        return entries, is_bits

    def _instance_positions(self, t: _Type, seq_index: dict, field_uses: list) -> dict:
        """Index of the seq field after which each instance is computed (-1: before all), in emission order.

        An instance comes right after the last field it depends on. One that
        reads ``_io`` comes as late as the fields that use it allow (after
        the last field if none does): Kaitai evaluates instances lazily,
        usually once the object is parsed, and ``_io.pos`` or ``_io.eof``
        depend on when they are read.
        """
        def closure(names: list) -> list:
            out: list = []
            todo = list(names)
            while todo:
                name = todo.pop(0)
                if name in t.instances and name not in out:
                    out.append(name)
                    todo.extend(self.instance(t, name).uses)
            return out

        needed_by: dict = {}
        for i, uses in enumerate(field_uses):
            for name in closure(uses):
                needed_by.setdefault(name, i)

        positions: dict = {}
        order: list = []
        visiting: list = []

        def visit(name: str) -> int:
            if name in positions:
                return positions[name]
            if name in visiting:
                cycle = " -> ".join(visiting[visiting.index(name):] + [name])
                raise GenError(f"{t.sub('instances', name)}: instances depend on each other: {cycle}")
            visiting.append(name)
            inst = self.instance(t, name)
            pos = -1
            for used in inst.uses:
                if used in seq_index:
                    pos = max(pos, seq_index[used])
                elif used in t.instances:
                    pos = max(pos, visit(used))
            if inst.uses_io:
                pos = max(pos, needed_by.get(name, len(t.seq)) - 1)
            visiting.pop()
            positions[name] = pos
            order.append(name)
            return pos

        for name in t.instances:
            visit(name)
        # Dependencies first; among instances computed at the same place, that order is kept.
        return {name: positions[name] for name in order}

    def param_py_name(self, t: _Type, param_id: str) -> str:
        name = _py_name(param_id)
        module_names = {x.py_name for x in self.types_by_key.values()}
        return name + "_param" if name in module_names else name

    def render_type(self, t: _Type) -> list:
        entries, is_bits = self.struct_entries(t)
        lines = []
        if t.params:
            args = ", ".join(self.param_py_name(t, p["id"]) for p in t.params)
            lines.append(f"def {t.py_name}({args}):")
            doc = str(t.spec.get("doc") or f"Kaitai type {t.name}.").rstrip()
            param_docs = []
            for p in t.params:
                pdoc = " ".join(str(p.get("doc") or "").split())
                param_docs.append(f":param {self.param_py_name(t, p['id'])}: {pdoc}".rstrip())
            doc += "\n\n" + "\n".join(param_docs)
            doc += ("\n\nEach argument is a value, or a function of the context of the object that"
                    "\nuses this type, called on every parse and build.")
            lines.extend(_docstring(doc, "    "))
            refs = t.spec.get("doc-ref")
            for ref in (refs if isinstance(refs, list) else [refs]) if refs else []:
                lines.append(f"    # See: {ref}")
            indent = "    "
            head = f"{indent}return "
        else:
            lines.extend(_doc_comment(t.spec, ""))
            indent = ""
            head = f"{t.py_name} = "
        if is_bits:
            lines.append(f"{head}c.Bitwise(ka.Struct(")
            closer = f"{indent}))"
        else:
            lines.append(f"{head}ka.Struct(")
            closer = f"{indent})"
        inner = indent + "    "
        for comments, name, node in entries:
            lines.extend(inner + line if line else line for line in comments)
            prefix = f'{inner}"{name}" / '
            lines.append(prefix + node.render(len(prefix), inner) + ",")
        lines.append(closer)
        return lines

    def render_enum(self, e: _Enum) -> list:
        lines = [f"class {e.py_name}(enum.IntEnum):"]
        lines.extend(_docstring(f"Kaitai enum {e.name} ({e.path}).", "    "))
        lines.append("")
        for i, (member_id, py_name, value, spec) in enumerate(e.members):
            comments = _doc_comment(spec, "    ")
            if comments and i:
                lines.append("")
            lines.extend(comments)
            lines.append(f"    {py_name} = {_int_literal(value) if value >= 0 else value}")
        return lines

    def type_order(self) -> list:
        """Types in definition order: every type after the types its fields use (cycles aside)."""
        order: list = []
        state: dict = {}

        def deps(t: _Type) -> list:
            out = []
            for f in t.seq:
                ty = f.get("type")
                names = [ty] if isinstance(ty, str) else list(ty["cases"].values()) \
                    if isinstance(ty, dict) and isinstance(ty.get("cases"), dict) else []
                for name in names:
                    target = self._user_type(t, name) if isinstance(name, str) else None
                    if target is not None and target not in out:
                        out.append(target)
            return out

        def visit(t: _Type) -> None:
            if state.get(t.key):
                return
            state[t.key] = "busy"
            for dep in deps(t):
                visit(dep)
            order.append(t)

        for t in self._all_types()[1:]:
            visit(t)
        visit(self.root)
        return order

    def module(self) -> str:
        source = self.source_name
        title = self.meta.get("title") or self.root.name
        lines = [
            f"# Generated from {source} by `python -m rmqformats.codegen`; do not edit.",
            "# Edit the spec and run `make generate`.",
        ]
        lines.extend(_docstring(
            f"{title}: construct schema generated from {source}.\n\n"
            f"``{self.root.py_name}`` parses and builds the whole format; each Kaitai type is a\n"
            "construct object (a function returning one for a type with params) and each\n"
            "Kaitai enum an ``enum.IntEnum``.", ""))
        lines += [
            "",
            "import enum",
            "",
            "import construct as c",
            "",
            "from rmqformats import construct_adapters as ka",
            "",
        ]
        enums = list(self.enums_by_key.values())
        order = self.type_order()
        names = [e.py_name for e in enums] + [t.py_name for t in order]
        lines.append("__all__ = [")
        lines.extend(f'    "{name}",' for name in names)
        lines.append("]")
        for e in enums:
            lines.extend(["", ""])
            lines.extend(self.render_enum(e))
        for t in order:
            lines.extend(["", ""])
            lines.extend(self.render_type(t))
            self.emitted.add(t.key)
        return "\n".join(lines) + "\n"


def generate(spec: dict, source_name: str) -> str:
    """Python source of a construct schema module for a parsed ``.ksy`` spec.

    :param spec: the spec as loaded by ``yaml.safe_load``
    :param source_name: where the spec lives (``formats/x.ksy``), for the
        header comment and error messages
    :raises GenError: the spec uses something the generator does not
        support; the message names the spec path
    """
    try:
        return _Generator(spec, source_name).module()
    except GenError as exc:
        raise GenError(f"{source_name}: {exc}") from None


def _display_name(path: Path) -> str:
    """``path`` relative to the project root when it is inside it, else its file name."""
    root = Path(__file__).resolve().parents[2]
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.name


def generate_file(spec_path: Path, out_dir: Path) -> Path:
    """Generate ``out_dir/<meta.id>.py`` from a ``.ksy`` file; returns the path written."""
    with open(spec_path, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    source = generate(spec, _display_name(Path(spec_path)))
    out_path = Path(out_dir) / f"{spec['meta']['id']}.py"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write(source)
    return out_path


def main(argv: Optional[list] = None) -> int:
    """Command line: ``construct_gen SPEC.ksy... --out DIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m rmqformats.codegen.construct_gen",
        description="Generate construct schemas from Kaitai Struct specs.")
    parser.add_argument("specs", nargs="+", type=Path, help=".ksy files")
    parser.add_argument("--out", required=True, type=Path, help="directory for the <meta.id>.py modules")
    args = parser.parse_args(argv)
    for spec_path in args.specs:
        try:
            out_path = generate_file(spec_path, args.out)
        except (GenError, OSError, yaml.YAMLError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
