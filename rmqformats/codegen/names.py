"""Names that do not build in some Kaitai target: keywords, clashes between enums, C# clashes.

Each target writes a spec's names in its own way; these are the ways that broke a build
(found by building every target, ``tests/test_targets.py``):

* Lua and Nim write an enum value's name bare (``end = 1``): a keyword there does not
  compile. Python and construct write it as an attribute.
* Nim puts the values of all enums of a spec in one scope: the same value name in two
  enums is ambiguous.
* Fields, parameters and instances become methods or attributes in snake case (C++,
  Python, Ruby, Lua, Nim, Perl, PHP, Rust) or lower camel case (Java, JavaScript): a
  keyword of any of them does not build there.
* C# makes a type nested in another a nested class, and each member a property in upper
  camel case: a member named like a type or an enum declared in the same type, or like the
  type itself, is a duplicate name; C# enums are ``int``, so a value outside the int range does
  not compile.

:func:`check_spec` returns one finding per offending name (the same ``Finding`` as
:mod:`.widths`); an empty list means none of these rules is broken.
"""

from __future__ import annotations

from .widths import Finding

#: Reserved words of each target language (the targets of the pinned compiler that have them).
KEYWORDS: dict[str, frozenset] = {
    "cpp_stl": frozenset(
        "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t char8_t "
        "class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield "
        "decltype default delete do double dynamic_cast else enum explicit export extern false float for friend "
        "goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private "
        "protected public register reinterpret_cast requires return short signed sizeof static static_assert "
        "static_cast struct switch template this thread_local throw true try typedef typeid typename union "
        "unsigned using virtual void volatile wchar_t while xor xor_eq".split()),
    "csharp": frozenset(
        "abstract as base bool break byte case catch char checked class const continue decimal default delegate "
        "do double else enum event explicit extern false finally fixed float for foreach goto if implicit in int "
        "interface internal is lock long namespace new null object operator out override params private "
        "protected public readonly ref return sbyte sealed short sizeof stackalloc static string struct switch "
        "this throw true try typeof uint ulong unchecked unsafe ushort using virtual void volatile while".split()),
    "go": frozenset(
        "break case chan const continue default defer else fallthrough for func go goto if import interface map "
        "package range return select struct switch type var".split()),
    "java": frozenset(
        "abstract assert boolean break byte case catch char class const continue default do double else enum "
        "extends final finally float for goto if implements import instanceof int interface long native new "
        "package private protected public return short static strictfp super switch synchronized this throw "
        "throws transient try void volatile while true false null var yield record sealed permits".split()),
    "javascript": frozenset(
        "await break case catch class const continue debugger default delete do else enum export extends false "
        "finally for function if implements import in instanceof interface let new null package private "
        "protected public return static super switch this throw true try typeof var void while with "
        "yield".split()),
    "lua": frozenset(
        "and break do else elseif end false for function goto if in local nil not or repeat return then true "
        "until while".split()),
    "nim": frozenset(
        "addr and as asm bind block break case cast concept const continue converter defer discard distinct div "
        "do elif else end enum except export finally for from func if import in include interface is isnot "
        "iterator let macro method mixin mod nil not notin object of or out proc ptr raise ref return shl shr "
        "static template try tuple type using var when while xor yield".split()),
    "perl": frozenset(
        "if elsif else unless while until for foreach do last next redo return my our local sub package use no "
        "require and or not xor eq ne lt gt le ge cmp q qq qw qr qx m s tr y".split()),
    "php": frozenset(
        "abstract and array as break callable case catch class clone const continue declare default do echo else "
        "elseif empty enddeclare endfor endforeach endif endswitch endwhile eval exit extends final finally fn "
        "for foreach function global goto if implements include instanceof insteadof interface isset list match "
        "namespace new or print private protected public readonly require return static switch throw trait try "
        "unset use var while xor yield".split()),
    "python": frozenset(
        "False None True and as assert async await break class continue def del elif else except finally for "
        "from global if import in is lambda nonlocal not or pass raise return try while with yield".split()),
    "ruby": frozenset(
        "BEGIN END alias and begin break case class def defined? do else elsif end ensure false for if in module "
        "next nil not or redo rescue retry return self super then true undef unless until when while "
        "yield".split()),
    "rust": frozenset(
        "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match "
        "mod move mut pub ref return self Self static struct super trait true type unsafe use where while "
        "abstract become box do final macro override priv typeof unsized virtual yield try".split()),
}

#: Targets that write an enum value's name bare, and those that write a member's name in snake or camel case.
ENUM_VALUE_TARGETS = ("lua", "nim", "python")
MEMBER_TARGETS = ("cpp_stl", "python", "ruby", "lua", "nim", "perl", "php", "rust", "java", "javascript")


#: Findings known and not yet fixed ("<spec id><finding path>"), which generation lets through.
OPEN: frozenset[str] = frozenset()


def _camel(name: str, upper: bool = True) -> str:
    parts = name.split("_")
    head = parts[0].capitalize() if upper else parts[0]
    return head + "".join(p.capitalize() for p in parts[1:])


def _keyword_in(name: str, targets) -> list[str]:
    forms = {name, _camel(name, upper=False)}
    return [t for t in targets if forms & KEYWORDS[t]]


def _types(spec: dict, path: str = ""):
    yield path, spec
    for name, sub in (spec.get("types") or {}).items():
        yield from _types(sub, f"{path}types/{name}/")


def check_spec(spec: dict) -> list[Finding]:
    """Every name in ``spec`` that some target cannot build."""
    findings: list[Finding] = []
    root = spec["meta"]["id"]
    owners: dict[str, list[str]] = {}  # enum value name -> enums that use it
    for tpath, t in _types(spec):
        type_name = tpath.rstrip("/").split("/")[-1] if tpath else root
        nested = {_camel(n) for n in (t.get("types") or {})} | {_camel(n) for n in (t.get("enums") or {})}
        members = [(f"/{tpath}seq/{i}", f.get("id")) for i, f in enumerate(t.get("seq") or []) if f.get("id")]
        members += [(f"/{tpath}params/{i}", p.get("id")) for i, p in enumerate(t.get("params") or [])]
        members += [(f"/{tpath}instances/{n}", n) for n in (t.get("instances") or {})]
        for where, name in members:
            bad = _keyword_in(name, MEMBER_TARGETS)
            if bad:
                findings.append(Finding(where, name, f"{name!r} is a keyword in {', '.join(bad)}"))
            if _camel(name) in nested or _camel(name) == _camel(type_name):
                findings.append(Finding(where, name, f"C# names the member {_camel(name)!r} like a type or enum "
                                        f"declared in the same type (or the type itself): rename the type or enum"))
        for ename, values in (t.get("enums") or {}).items():
            for key, value in values.items():
                vname = value["id"] if isinstance(value, dict) else value
                where = f"/{tpath}enums/{ename}/{key}"
                owners.setdefault(vname, []).append(ename)
                bad = _keyword_in(vname, ENUM_VALUE_TARGETS)
                if bad:
                    findings.append(Finding(where, vname, f"enum value {vname!r} is a keyword in {', '.join(bad)}"))
                if not -2**31 <= int(key) <= 2**31 - 1:
                    findings.append(Finding(where, vname, f"enum value {int(key):#x} is outside the int range of "
                                            f"C# enums"))
    for vname, enums in owners.items():
        if len(enums) > 1:
            findings.append(Finding("/enums", vname, f"enum value {vname!r} is in {len(enums)} enums "
                                    f"({', '.join(enums)}); Nim puts them in one scope"))
    return findings
