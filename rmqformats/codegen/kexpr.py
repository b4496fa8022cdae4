"""Parser and Python translator for Kaitai Struct expressions.

:func:`parse` turns the text of an expression (an ``if:``, ``size:``,
``repeat-until:``, ``value:`` ... of a ``.ksy`` spec) into a small syntax
tree; :class:`Translator` turns that tree into the Python source of a lambda
body over a construct context (``this``), as the construct schema generator
(:mod:`rmqformats.codegen.construct_gen`) needs it.

The language covered is the subset of the Kaitai Struct expression language
that byte-level specs use:

* literals: integers (decimal, ``0x``, ``0o``, ``0b``, with ``_``
  separators), floats, ``true``/``false``, strings (``"..."`` with escapes,
  ``'...'`` verbatim);
* names: fields, params and instances of the current type, ``_`` (the
  element just read in ``repeat-until``, the value in ``valid/expr``),
  ``_parent``, ``_root``, ``_index``, and ``_io`` with ``.eof``, ``.pos`` and
  ``.size``;
* enum literals ``enum_name::member`` (``type::enum_name::member`` too);
* attribute access ``a.b.c``, the methods ``to_i``, ``to_s``, ``length``,
  ``size``, ``first``, ``last``, ``min``, ``max``, ``substring(from, to)``,
  indexing ``a[i]``, and
  casts ``a.as<s4>`` (``a.as<type_name>`` too);
* operators, from the lowest precedence: ``c ? a : b``, ``or``, ``and``,
  ``not``, comparisons (``== != < <= > >=``, not chained), ``|``, ``^``,
  ``&``, ``<< >>``, ``+ -``, ``* / %``, unary ``- ~``.

Anything else (array literals, ``sizeof``, other methods) raises
:class:`ExprError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Iterator, NamedTuple, Optional, Union


class ExprError(ValueError):
    """An expression that cannot be parsed or translated."""


# ---------------------------------------------------------------------------
# Tokens


class Token(NamedTuple):
    """One lexical token: ``kind`` is int, float, str, name, op or end."""

    kind: str
    value: object
    pos: int


# Longest operators first, so that "::" is not read as two ":" and "<=" not as "<".
_OPERATORS = (
    "::", "<<", ">>", "<=", ">=", "==", "!=",
    "?", ":", "(", ")", "[", "]", ".", ",", "+", "-", "*", "/", "%", "&", "|", "^", "~", "<", ">",
)
_NUMBER_RE = re.compile(
    r"0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+"
    r"|(?P<dec>[0-9][0-9_]*)(?P<frac>\.[0-9][0-9_]*)?(?P<exp>[eE][+-]?[0-9]+)?"
)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
    "e": "\x1b", '"': '"', "'": "'", "\\": "\\",
}


def _read_number(text: str, pos: int) -> tuple[Token, int]:
    m = _NUMBER_RE.match(text, pos)
    raw = m.group(0)
    digits = raw.replace("_", "")
    if m.group("dec") is not None and (m.group("frac") or m.group("exp")):
        return Token("float", (float(digits), raw), pos), m.end()
    prefix = digits[:2].lower()
    try:
        if prefix == "0x":
            value = int(digits[2:], 16)
        elif prefix == "0b":
            value = int(digits[2:], 2)
        elif prefix == "0o":
            value = int(digits[2:], 8)
        else:
            value = int(digits, 10)
    except ValueError:
        raise ExprError(f"bad number {raw!r} at column {pos + 1} of {text!r}") from None
    return Token("int", (value, raw), pos), m.end()


def _read_string(text: str, pos: int) -> tuple[Token, int]:
    quote = text[pos]
    i = pos + 1
    out = []
    while True:
        if i >= len(text):
            raise ExprError(f"unterminated string at column {pos + 1} of {text!r}")
        ch = text[i]
        if ch == quote:
            return Token("str", "".join(out), pos), i + 1
        if ch == "\\" and quote == '"':
            # Kaitai's double-quoted strings take C-like escapes; single-quoted ones are verbatim.
            i += 1
            if i >= len(text):
                raise ExprError(f"unterminated string at column {pos + 1} of {text!r}")
            esc = text[i]
            if esc in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[esc])
                i += 1
            elif esc == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 1:i + 5]):
                out.append(chr(int(text[i + 1:i + 5], 16)))
                i += 5
            elif esc in "01234567":
                m = re.compile(r"[0-7]{1,3}").match(text, i)
                out.append(chr(int(m.group(0), 8)))
                i = m.end()
            else:
                raise ExprError(f"unknown escape \\{esc} at column {i} of {text!r}")
        else:
            out.append(ch)
            i += 1


def tokenize(text: str) -> list[Token]:
    """Split an expression into tokens, ending with an ``end`` token."""
    tokens = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pos += 1
            continue
        if ch.isdigit():
            tok, pos = _read_number(text, pos)
        elif ch in "\"'":
            tok, pos = _read_string(text, pos)
        elif ch.isalpha() or ch == "_":
            m = _NAME_RE.match(text, pos)
            tok, pos = Token("name", m.group(0), pos), m.end()
        else:
            for op in _OPERATORS:
                if text.startswith(op, pos):
                    tok, pos = Token("op", op, pos), pos + len(op)
                    break
            else:
                raise ExprError(f"unexpected character {ch!r} at column {pos + 1} of {text!r}")
        tokens.append(tok)
    tokens.append(Token("end", None, len(text)))
    return tokens


# ---------------------------------------------------------------------------
# Syntax tree


@dataclass(frozen=True)
class Node:
    """Base class of the syntax tree nodes."""


@dataclass(frozen=True)
class IntLit(Node):
    value: int
    text: str


@dataclass(frozen=True)
class FloatLit(Node):
    value: float
    text: str


@dataclass(frozen=True)
class StrLit(Node):
    value: str


@dataclass(frozen=True)
class BoolLit(Node):
    value: bool


@dataclass(frozen=True)
class Name(Node):
    name: str


@dataclass(frozen=True)
class EnumLit(Node):
    """``path::member``; ``path`` names the enum (and the types it is nested in)."""

    path: tuple
    member: str


@dataclass(frozen=True)
class Attr(Node):
    obj: Node
    name: str


@dataclass(frozen=True)
class Call(Node):
    """Method call ``obj.name(args)``."""

    obj: Node
    name: str
    args: tuple


@dataclass(frozen=True)
class Cast(Node):
    """``obj.as<type_name>``; ``type_name`` is a primitive (``s4``) or a user type path (``a::b``)."""

    obj: Node
    type_name: str


@dataclass(frozen=True)
class Index(Node):
    obj: Node
    index: Node


@dataclass(frozen=True)
class Unary(Node):
    op: str
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Compare(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class BoolOp(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Ternary(Node):
    cond: Node
    then: Node
    other: Node


def walk(node: Node) -> Iterator[Node]:
    """Every node of a tree, ``node`` first."""
    yield node
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, Node):
            yield from walk(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Node):
                    yield from walk(item)


def is_constant(node: Node) -> bool:
    """True when the expression reads nothing from the data (only literals and operators)."""
    return not any(isinstance(n, Name) for n in walk(node))


# ---------------------------------------------------------------------------
# Parser

_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
_KEYWORDS = ("and", "or", "not", "true", "false")


class _Parser:
    """Recursive descent over the token list; one method per precedence level."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    # token helpers
    def peek(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def at_op(self, *ops: str) -> bool:
        tok = self.peek()
        return tok.kind == "op" and tok.value in ops

    def at_word(self, word: str) -> bool:
        tok = self.peek()
        return tok.kind == "name" and tok.value == word

    def error(self, message: str, tok: Optional[Token] = None) -> ExprError:
        tok = tok or self.peek()
        where = "end" if tok.kind == "end" else f"column {tok.pos + 1}"
        return ExprError(f"{message} at {where} of {self.text!r}")

    def expect_op(self, op: str) -> Token:
        if not self.at_op(op):
            raise self.error(f"expected {op!r}")
        return self.advance()

    def expect_end(self) -> None:
        if self.peek().kind != "end":
            raise self.error(f"unexpected {self.peek().value!r}")

    # grammar
    def expression(self) -> Node:
        cond = self.or_expr()
        if self.at_op("?"):
            self.advance()
            then = self.expression()
            self.expect_op(":")
            other = self.expression()
            return Ternary(cond, then, other)
        return cond

    def or_expr(self) -> Node:
        node = self.and_expr()
        while self.at_word("or"):
            self.advance()
            node = BoolOp("or", node, self.and_expr())
        return node

    def and_expr(self) -> Node:
        node = self.not_expr()
        while self.at_word("and"):
            self.advance()
            node = BoolOp("and", node, self.not_expr())
        return node

    def not_expr(self) -> Node:
        if self.at_word("not"):
            self.advance()
            return Unary("not", self.not_expr())
        return self.comparison()

    def comparison(self) -> Node:
        node = self.bit_or()
        if self.at_op(*_COMPARE_OPS):
            op = self.advance().value
            node = Compare(op, node, self.bit_or())
            if self.at_op(*_COMPARE_OPS):
                raise self.error("chained comparisons are not supported")
        return node

    def _binary_level(self, ops: tuple, operand) -> Node:
        node = operand()
        while self.at_op(*ops):
            op = self.advance().value
            node = Binary(op, node, operand())
        return node

    def bit_or(self) -> Node:
        return self._binary_level(("|",), self.bit_xor)

    def bit_xor(self) -> Node:
        return self._binary_level(("^",), self.bit_and)

    def bit_and(self) -> Node:
        return self._binary_level(("&",), self.shift)

    def shift(self) -> Node:
        return self._binary_level(("<<", ">>"), self.arith)

    def arith(self) -> Node:
        return self._binary_level(("+", "-"), self.term)

    def term(self) -> Node:
        return self._binary_level(("*", "/", "%"), self.factor)

    def factor(self) -> Node:
        if self.at_op("-", "+", "~"):
            op = self.advance().value
            operand = self.factor()
            return operand if op == "+" else Unary(op, operand)
        return self.postfix()

    def postfix(self) -> Node:
        node = self.atom()
        while True:
            if self.at_op("."):
                self.advance()
                tok = self.advance()
                if tok.kind != "name":
                    raise self.error("expected a name after '.'", tok)
                if tok.value == "as" and self.at_op("<"):
                    node = Cast(node, self.cast_type())
                elif self.at_op("("):
                    node = Call(node, tok.value, self.arguments())
                else:
                    node = Attr(node, tok.value)
            elif self.at_op("["):
                self.advance()
                index = self.expression()
                self.expect_op("]")
                node = Index(node, index)
            else:
                return node

    def cast_type(self) -> str:
        """The ``<type>`` of ``.as<type>``: a name or a ``::`` path."""
        self.expect_op("<")
        parts = []
        while True:
            tok = self.advance()
            if tok.kind != "name":
                raise self.error("expected a type name in .as<...>", tok)
            parts.append(tok.value)
            if not self.at_op("::"):
                break
            self.advance()
        self.expect_op(">")
        return "::".join(parts)

    def arguments(self) -> tuple:
        self.expect_op("(")
        args = []
        if not self.at_op(")"):
            args.append(self.expression())
            while self.at_op(","):
                self.advance()
                args.append(self.expression())
        self.expect_op(")")
        return tuple(args)

    def atom(self) -> Node:
        tok = self.advance()
        if tok.kind == "int":
            return IntLit(*tok.value)
        if tok.kind == "float":
            return FloatLit(*tok.value)
        if tok.kind == "str":
            return StrLit(tok.value)
        if tok.kind == "name":
            if tok.value in ("true", "false"):
                return BoolLit(tok.value == "true")
            if tok.value in _KEYWORDS:
                raise self.error(f"unexpected {tok.value!r}", tok)
            if tok.value in ("sizeof", "bitsizeof"):
                raise self.error(f"{tok.value} is not supported", tok)
            if self.at_op("::"):
                path = [tok.value]
                while self.at_op("::"):
                    self.advance()
                    part = self.advance()
                    if part.kind != "name":
                        raise self.error("expected a name after '::'", part)
                    path.append(part.value)
                return EnumLit(tuple(path[:-1]), path[-1])
            return Name(tok.value)
        if tok.kind == "op" and tok.value == "(":
            node = self.expression()
            self.expect_op(")")
            return node
        if tok.kind == "op" and tok.value == "[":
            raise self.error("array literals are not supported", tok)
        if tok.kind == "end":
            raise self.error("unexpected end of expression", tok)
        raise self.error(f"unexpected {tok.value!r}", tok)


def parse(text: str) -> Node:
    """Parse one Kaitai expression."""
    if not isinstance(text, str):
        raise ExprError(f"expected an expression string, got {text!r}")
    parser = _Parser(text)
    node = parser.expression()
    parser.expect_end()
    return node


def names_in(text: str) -> set[str]:
    """The free names an expression reads (fields, params, instances; not enum literals)."""
    return {n.name for n in walk(parse(text)) if isinstance(n, Name)}


_EVAL_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b,
    "%": lambda a, b: a % b, "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
}
_EVAL_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def evaluate(text: str, env: dict) -> object:
    """Evaluate an expression of literals, operators and the names bound in ``env``.

    Used to fold expressions that depend only on parameters (for example a
    width chosen by a boolean param) into constants at generation time.
    """

    def ev(node: Node):
        if isinstance(node, (IntLit, FloatLit, StrLit, BoolLit)):
            return node.value
        if isinstance(node, Name):
            if node.name not in env:
                raise ExprError(f"{text!r}: {node.name!r} has no value here")
            return env[node.name]
        if isinstance(node, Ternary):
            return ev(node.then) if ev(node.cond) else ev(node.other)
        if isinstance(node, Unary):
            v = ev(node.operand)
            return {"not": lambda: not v, "-": lambda: -v, "~": lambda: ~v}[node.op]()
        if isinstance(node, BoolOp):
            left = ev(node.left)
            if node.op == "and":
                return left and ev(node.right)
            return left or ev(node.right)
        if isinstance(node, Compare):
            return _EVAL_COMPARE[node.op](ev(node.left), ev(node.right))
        if isinstance(node, Binary) and node.op in _EVAL_BINARY:
            return _EVAL_BINARY[node.op](ev(node.left), ev(node.right))
        if isinstance(node, Cast):
            return ev(node.obj)
        raise ExprError(f"{text!r}: cannot evaluate {type(node).__name__} at generation time")

    return ev(parse(text))


def parse_type_ref(text: str) -> tuple[tuple, Optional[tuple]]:
    """Parse a ``type:`` value: ``name``, ``a::b`` or ``name(arg, ...)``.

    Returns the name path and the argument expressions (``None`` without
    parentheses).
    """
    parser = _Parser(text)
    tok = parser.advance()
    if tok.kind != "name":
        raise parser.error("expected a type name", tok)
    path = [tok.value]
    while parser.at_op("::"):
        parser.advance()
        part = parser.advance()
        if part.kind != "name":
            raise parser.error("expected a name after '::'", part)
        path.append(part.value)
    args = parser.arguments() if parser.at_op("(") else None
    parser.expect_end()
    return tuple(path), args


# ---------------------------------------------------------------------------
# Translation to Python


@dataclass(frozen=True)
class Kind:
    """What an expression evaluates to, as far as the translator knows.

    ``name`` is one of int, float, bool, str, bytes, enum (``ref`` is the
    enum's key), user (``ref`` is the type's key), array (``ref`` is the
    element Kind), io (a stream; the code is the container that holds
    ``_io``) or unknown.
    """

    name: str
    ref: object = None


#: Kaitai's integer types and their widths in bits (signed ones negative).
INT_WIDTHS = {
    **{f"u{n}": n * 8 for n in (1, 2, 4, 8)},
    **{f"s{n}": -n * 8 for n in (1, 2, 4, 8)},
    **{f"{t}{n}{e}": (-1 if t == "s" else 1) * n * 8 for t in "su" for n in (2, 4, 8) for e in ("le", "be")},
}

UNKNOWN = Kind("unknown")
INT = Kind("int")
FLOAT = Kind("float")
BOOL = Kind("bool")
STR = Kind("str")
BYTES = Kind("bytes")
IO = Kind("io")


def py_str(value: str) -> str:
    """Python literal of a string, double-quoted when that needs no escapes."""
    text = repr(value)
    if text.startswith("'") and '"' not in value:
        return '"' + text[1:-1].replace("\\'", "'") + '"'
    return text


def camel(name: str) -> str:
    """``magic_code`` -> ``MagicCode``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


class Scope:
    """How names resolve during translation.

    This default knows no types: every name is an unknown-kind member of the
    current object and ``a::b`` is the member ``b`` of the class ``A``.
    The schema generator passes a subclass that knows the spec.
    """

    def local(self, name: str) -> Optional[Kind]:
        """Kind of a field, param or instance of the current type; None if there is none."""
        return UNKNOWN

    def member(self, type_ref: object, name: str) -> Optional[Kind]:
        """Kind of a member of the type ``type_ref``; None if there is none."""
        return UNKNOWN

    def enum_literal(self, path: tuple, member: str) -> tuple[str, object]:
        """Python code of an enum member and the enum's key."""
        return f"{camel(path[-1])}.{member}", path

    def enum_class(self, enum_ref: object) -> str:
        """Python name of an enum's class."""
        return camel(enum_ref[-1])

    def root_kind(self) -> Kind:
        return UNKNOWN

    def parent_kind(self) -> Kind:
        return UNKNOWN


class Translation(NamedTuple):
    """Python source of an expression and what it evaluates to.

    ``parts`` is ``code`` cut before each operator of its outermost chain of
    ``+``/``-``, ``and``, ``or`` or before ``if`` and ``else`` of a
    conditional (``" ".join(parts) == code``), for laying a long expression
    out over several lines inside parentheses.
    """

    code: str
    kind: Kind
    parts: tuple = ()


# Python operator precedence, loosest first; Kaitai's grammar has the same
# levels, so a tree translates operator for operator.
_PREC_TERNARY, _PREC_OR, _PREC_AND, _PREC_NOT, _PREC_COMPARE = 1, 2, 3, 4, 5
_PREC_BINARY = {"|": 6, "^": 7, "&": 8, "<<": 9, ">>": 9, "+": 10, "-": 10, "*": 11, "/": 11, "//": 11, "%": 11}
_PREC_UNARY = 12
_PREC_ATOM = 20
_BIT_PRECS = (6, 7, 8, 9)


class _Out(NamedTuple):
    code: str
    kind: Kind
    prec: int  # precedence of the outermost Python operator of ``code``
    op: Optional[str] = None  # that operator, for binary operators


_ARITH_OPS = ("+", "-", "*", "/", "%")
_GENERIC_METHODS = ("to_i", "to_s", "length", "size", "first", "last", "min", "max")


class Translator:
    """Translate expressions of one type into Python over a construct context.

    :param scope: name resolution (:class:`Scope`)
    :param ctx: Python name of the construct context (the lambda parameter)
    :param item: Python name that ``_`` translates to, or None where ``_`` is undefined
    :param item_kind: Kind of ``_``
    :param helpers: Python name under which the runtime module
        :mod:`rmqformats.construct_adapters` is imported

    ``locals_used`` collects, in order of first use, the names of the current
    type that the translated expressions read, so that the generator can
    order computed fields after what they depend on; ``uses_io`` tells
    whether they read the current object's ``_io``.
    """

    def __init__(self, scope: Optional[Scope] = None, *, ctx: str = "this",
                 item: Optional[str] = None, item_kind: Kind = UNKNOWN, helpers: str = "ka"):
        self.scope = scope or Scope()
        self.ctx = ctx
        self.item = item
        self.item_kind = item_kind
        self.ka = helpers
        self.locals_used: list[str] = []
        self.uses_io = False

    def translate(self, expr: Union[str, int, bool, float, Node]) -> Translation:
        """Translate a Kaitai expression (text, YAML scalar or parsed tree)."""
        node = to_node(expr)
        out = self._tr(node)
        if out.kind.name == "io":
            raise ExprError("_io can only be used as _io.eof, _io.pos or _io.size")
        parts = self._parts(node)
        if " ".join(parts) != out.code:  # cannot happen; keep the code whole rather than risk it
            parts = [out.code]
        return Translation(out.code, out.kind, tuple(parts))

    def _parts(self, node: Node) -> list:
        if isinstance(node, Ternary):
            then = self._wrap(self._tr(node.then), _PREC_TERNARY, strict=True)
            cond = self._wrap(self._tr(node.cond), _PREC_TERNARY, strict=True)
            other = self._wrap(self._tr(node.other), _PREC_TERNARY, strict=True)
            return [then, f"if {cond}", f"else {other}"]
        if isinstance(node, Binary) and node.op in ("+", "-"):
            ops, prec = ("+", "-"), _PREC_BINARY["+"]
        elif isinstance(node, BoolOp):
            ops, prec = (node.op,), _PREC_OR if node.op == "or" else _PREC_AND
        else:
            return [self._tr(node).code]
        chain_type = type(node)
        rights = []
        while isinstance(node, chain_type) and node.op in ops:
            rights.append((node.op, node.right))
            node = node.left
        parts = [self._wrap(self._tr(node), prec, rights[-1][0])]
        for op, right in reversed(rights):
            parts.append(f"{op} {self._wrap(self._tr(right), prec, op, strict=True)}")
        return parts

    # -- helpers
    def _tr(self, node: Node) -> _Out:
        method = getattr(self, "_tr_" + type(node).__name__)
        return method(node)

    @staticmethod
    def _wrap(out: _Out, prec: int, op: Optional[str] = None, strict: bool = False) -> str:
        """Code of ``out`` as an operand of an operator of precedence ``prec``.

        ``strict`` parenthesises an operand of the same precedence too (right
        operands of left-associative operators). Bitwise operands of other
        operators get parentheses even where Python does not need them,
        because few readers know those precedences by heart.
        """
        if out.kind.name == "io":
            raise ExprError("_io can only be used as _io.eof, _io.pos or _io.size")
        needs = out.prec < prec or (strict and out.prec == prec)
        if out.prec in _BIT_PRECS and out.op != op:
            needs = True
        return f"({out.code})" if needs else out.code

    def _atom(self, out: _Out) -> str:
        return self._wrap(out, _PREC_ATOM)

    # -- leaves
    def _tr_IntLit(self, node: IntLit) -> _Out:
        text = node.text.replace("_", "").lower()
        code = hex(node.value) if text.startswith("0x") else str(node.value)
        return _Out(code, INT, _PREC_ATOM)

    def _tr_FloatLit(self, node: FloatLit) -> _Out:
        return _Out(repr(node.value), FLOAT, _PREC_ATOM)

    def _tr_StrLit(self, node: StrLit) -> _Out:
        return _Out(py_str(node.value), STR, _PREC_ATOM)

    def _tr_BoolLit(self, node: BoolLit) -> _Out:
        return _Out("True" if node.value else "False", BOOL, _PREC_ATOM)

    def _tr_EnumLit(self, node: EnumLit) -> _Out:
        code, ref = self.scope.enum_literal(node.path, node.member)
        return _Out(code, Kind("enum", ref), _PREC_ATOM)

    def _tr_Name(self, node: Name) -> _Out:
        name = node.name
        ctx = self.ctx
        if name == "_":
            if self.item is None:
                raise ExprError("`_` is only defined in repeat-until and valid expressions")
            return _Out(self.item, self.item_kind, _PREC_ATOM)
        if name == "_parent":
            return _Out(f'{ctx}["_"]', self.scope.parent_kind(), _PREC_ATOM)
        if name == "_root":
            return _Out(f'{ctx}["_root"]', self.scope.root_kind(), _PREC_ATOM)
        if name == "_io":
            self.uses_io = True
            return _Out(ctx, IO, _PREC_ATOM)
        if name == "_index":
            return _Out(f'{ctx}["_index"]', INT, _PREC_ATOM)
        kind = self.scope.local(name)
        if kind is None:
            raise ExprError(f"unknown name {name!r}")
        if name not in self.locals_used:
            self.locals_used.append(name)
        return _Out(f'{ctx}["{name}"]', kind, _PREC_ATOM)

    # -- postfix
    def _tr_Attr(self, node: Attr) -> _Out:
        base = self._tr(node.obj)
        name = node.name
        kind = base.kind
        ka = self.ka
        if kind.name == "io":
            if name == "eof":
                return _Out(f"{ka}.io_eof({base.code})", BOOL, _PREC_ATOM)
            if name == "pos":
                return _Out(f"{ka}.io_pos({base.code})", INT, _PREC_ATOM)
            if name == "size":
                return _Out(f"{ka}.io_size({base.code})", INT, _PREC_ATOM)
            raise ExprError(f"_io.{name} is not supported (only eof, pos and size)")
        if name == "_io":
            return _Out(base.code, IO, _PREC_ATOM)
        if name in ("_parent", "_root"):
            raise ExprError(f"{name} of a field value is not supported; use {name} of the current object")
        code = self._atom(base)
        if kind.name == "user":
            member = self.scope.member(kind.ref, name)
            if member is not None:
                return _Out(f'{code}["{name}"]', member, _PREC_ATOM)
            if name not in _GENERIC_METHODS:
                raise ExprError(f"type {_ref_text(kind.ref)} has no member {name!r}")
            return self._method(code, UNKNOWN, name)
        if kind.name == "unknown" and name not in _GENERIC_METHODS:
            return _Out(f'{code}["{name}"]', UNKNOWN, _PREC_ATOM)
        return self._method(code, kind, name)

    def _method(self, code: str, kind: Kind, name: str) -> _Out:
        ka = self.ka
        k = kind.name
        atom = _PREC_ATOM
        if name == "to_i":
            if k == "enum":
                return _Out(f"int({ka}.enum_value({code}, {self.scope.enum_class(kind.ref)}))", INT, atom)
            if k in ("bool", "str", "float"):
                return _Out(f"int({code})", INT, atom)
            if k == "int":
                return _Out(code, INT, atom)
            if k == "unknown":
                return _Out(f"{ka}.to_i({code})", INT, atom)
        elif name == "to_s":
            if k == "int":
                return _Out(f"str({code})", STR, atom)
        elif name in ("length", "size"):
            if k in ("str", "bytes", "array", "unknown"):
                return _Out(f"len({code})", INT, atom)
        elif name in ("first", "last", "min", "max"):
            if k in ("bytes", "array", "unknown"):
                elem = INT if k == "bytes" else kind.ref if k == "array" else UNKNOWN
                if name == "first":
                    return _Out(f"{code}[0]", elem, atom)
                if name == "last":
                    return _Out(f"{code}[-1]", elem, atom)
                return _Out(f"{name}({code})", elem, atom)
        raise ExprError(f"method {name!r} is not supported on a value of kind {k}")

    def _tr_Call(self, node: Call) -> _Out:
        base = self._tr(node.obj)
        code = self._atom(base)
        args = [self._tr(a) for a in node.args]
        k = base.kind.name
        if node.name == "to_s" and k in ("bytes", "unknown") and len(args) == 1 and args[0].kind == STR:
            return _Out(f"{code}.decode({args[0].code})", STR, _PREC_ATOM)
        if node.name == "to_i" and k in ("str", "unknown") and len(args) == 1:
            return _Out(f"int({code}, {args[0].code})", INT, _PREC_ATOM)
        if node.name == "substring" and k in ("str", "unknown") and len(args) == 2:
            return _Out(f"{code}[{args[0].code}:{args[1].code}]", STR, _PREC_ATOM)
        raise ExprError(f"method call {node.name}() with {len(args)} arguments is not supported")

    def _tr_Index(self, node: Index) -> _Out:
        base = self._tr(node.obj)
        index = self._tr(node.index)
        k = base.kind
        elem = k.ref if k.name == "array" else INT if k.name == "bytes" else UNKNOWN
        return _Out(f"{self._atom(base)}[{index.code}]", elem, _PREC_ATOM)

    def _tr_Cast(self, node: Cast) -> _Out:
        # Python integers have no width, so a cast to an integer type changes
        # nothing but what the translator knows about the value.
        base = self._tr(node.obj)
        if INT_WIDTHS.get(node.type_name) is not None:
            return base._replace(kind=INT)
        return base

    # -- operators
    def _tr_Unary(self, node: Unary) -> _Out:
        operand = self._tr(node.operand)
        if node.op == "not":
            return _Out(f"not {self._wrap(operand, _PREC_NOT)}", BOOL, _PREC_NOT)
        kind = operand.kind if operand.kind in (INT, FLOAT) else INT
        return _Out(f"{node.op}{self._wrap(operand, _PREC_UNARY)}", kind, _PREC_UNARY)

    def _tr_Binary(self, node: Binary) -> _Out:
        left = self._tr(node.left)
        right = self._tr(node.right)
        op = node.op
        lk, rk = left.kind, right.kind
        if op in _ARITH_OPS:
            if FLOAT in (lk, rk):
                kind = FLOAT
            elif lk == rk and lk in (INT, STR, BYTES) and (op == "+" or lk == INT):
                kind = lk
            elif op != "+" and lk in (INT, UNKNOWN) and rk in (INT, UNKNOWN):
                kind = INT
            else:
                kind = UNKNOWN
            if op == "/":
                if lk == INT and rk == INT:
                    # Kaitai divides integers to an integer, like Python's floor division.
                    op = "//"
                elif kind != FLOAT:
                    return _Out(f"{self.ka}.div({left.code}, {right.code})", UNKNOWN, _PREC_ATOM)
        else:
            kind = INT
        prec = _PREC_BINARY[op]
        code = f"{self._wrap(left, prec, op)} {op} {self._wrap(right, prec, op, strict=True)}"
        return _Out(code, kind, prec, op)

    def _tr_Compare(self, node: Compare) -> _Out:
        left = self._tr(node.left)
        right = self._tr(node.right)
        enum_ref = next((side.kind.ref for side in (left, right) if side.kind.name == "enum"), None)
        if enum_ref is not None:
            # Parsed enum fields are construct EnumIntegerString (a str); when
            # building, the user may give a name or an int. Normalise both
            # sides to members of the IntEnum class before comparing.
            cls = self.scope.enum_class(enum_ref)
            sides = []
            for sub, out in ((node.left, left), (node.right, right)):
                if not isinstance(sub, EnumLit):
                    out = _Out(f"{self.ka}.enum_value({out.code}, {cls})", out.kind, _PREC_ATOM)
                sides.append(out)
            left, right = sides
        left_code = self._wrap(left, _PREC_COMPARE, strict=True)
        right_code = self._wrap(right, _PREC_COMPARE, strict=True)
        return _Out(f"{left_code} {node.op} {right_code}", BOOL, _PREC_COMPARE)

    def _tr_BoolOp(self, node: BoolOp) -> _Out:
        prec = _PREC_OR if node.op == "or" else _PREC_AND
        left = self._wrap(self._tr(node.left), prec)
        right = self._wrap(self._tr(node.right), prec, strict=True)
        return _Out(f"{left} {node.op} {right}", BOOL, prec)

    def _tr_Ternary(self, node: Ternary) -> _Out:
        cond = self._wrap(self._tr(node.cond), _PREC_TERNARY, strict=True)
        then_out = self._tr(node.then)
        other_out = self._tr(node.other)
        then = self._wrap(then_out, _PREC_TERNARY, strict=True)
        other = self._wrap(other_out, _PREC_TERNARY, strict=True)
        kind = then_out.kind if then_out.kind == other_out.kind else UNKNOWN
        return _Out(f"{then} if {cond} else {other}", kind, _PREC_TERNARY)


def _ref_text(ref: object) -> str:
    if isinstance(ref, tuple):
        return "::".join(ref) if ref else "(root)"
    return str(ref)


def to_node(expr: Union[str, int, bool, float, Node]) -> Node:
    """A syntax tree for an expression given as text or as a YAML scalar."""
    if isinstance(expr, Node):
        return expr
    if isinstance(expr, bool):
        return BoolLit(expr)
    if isinstance(expr, int):
        return IntLit(expr, str(expr))
    if isinstance(expr, float):
        return FloatLit(expr, repr(expr))
    return parse(expr)


def translate(expr: Union[str, int, bool, Node], scope: Optional[Scope] = None, **kwargs) -> str:
    """Python source of a Kaitai expression; see :class:`Translator` for the options."""
    return Translator(scope, **kwargs).translate(expr).code
