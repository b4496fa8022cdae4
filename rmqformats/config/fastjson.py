"""The JSON dialect that RocketMQ brokers write with fastjson 1.x, read and written.

Brokers serialize their config tables with ``JSON.toJSONString(obj, true)``.
The result is JSON except that map keys which are not strings (queue ids,
delay levels, offsets) are written without quotes: ``{0:29,1:31}``. This
module parses that dialect into Python values (unquoted integer keys stay
``int``, quoted keys stay ``str``) and writes Python values back the way
fastjson does, so that a parsed file written again gives the same bytes.

What the writer reproduces (fastjson 1.2.x ``MapSerializer``,
``JavaBeanSerializer``, ``ListSerializer``, ``SerializeWriter``):

* pretty format: a newline and one tab per level before every bean property
  and every string-keyed map entry, and before the closing brace of a
  non-empty object; integer-keyed entries stay on the opening line;
* ``java.util.List`` values are printed one item per line, arrays and
  ``Set`` values on one line (the schema's ``x-java-type`` says which);
* an empty map is ``{}``, an empty bean ``{`` newline ``}``;
* no newline at the end of the file;
* strings escape ``"``, ``\\``, control characters, U+007F..U+009F and
  U+2028/U+2029 (upper-case hex); other non-ASCII characters are written as
  they are, except with ``BrowserCompatible`` (timer and transaction metrics)
  which escapes everything from U+007F and also ``/``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: Deepest nesting accepted; broker config files nest at most 6 levels.
MAX_DEPTH = 64

JsonPath = tuple  # of str (object key), int (integer key or array index)


class FastjsonSyntaxError(ValueError):
    """Text that is not in the fastjson dialect; ``pos`` is the character index."""

    def __init__(self, pos: int, path: JsonPath, reason: str):
        super().__init__(reason)
        self.pos = pos
        self.path = path
        self.reason = reason


def format_path(path: JsonPath) -> str:
    """``$.topicConfigTable.TopicTest.perm``; odd keys as ``['%RETRY%G@G']``, integer keys as ``[0]``."""
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out.append("." + part)
        else:
            # A hostile key of thousands of characters would fill the error line: its ends name it.
            out.append("[" + repr(part if len(part) <= 80 else f"{part[:40]}…{part[-20:]}") + "]")
    return "".join(out)


@dataclass(frozen=True)
class Parsed:
    """A parsed document: its value and where each value starts (character index by JSON path)."""

    value: Any
    positions: Mapping[JsonPath, int]


_WS = " \t\r\n\f\b"
_INT_KEY = re.compile(r"-?[0-9]+")
#: Longest number read (characters); broker files hold longs (at most 20 characters with the sign).
MAX_NUMBER_DIGITS = 400
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
            "v": "\v", "'": "'"}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.n = len(text)
        self.positions: dict[JsonPath, int] = {}

    def fail(self, pos: int, path: JsonPath, reason: str) -> FastjsonSyntaxError:
        return FastjsonSyntaxError(pos, path, reason)

    def skip_ws(self, i: int) -> int:
        text, n = self.text, self.n
        while i < n and text[i] in _WS:
            i += 1
        return i

    def what(self, i: int) -> str:
        return "end of text" if i >= self.n else repr(self.text[i])

    def value(self, i: int, path: JsonPath, depth: int) -> tuple[Any, int]:
        i = self.skip_ws(i)
        self.positions[path] = i
        if i >= self.n:
            raise self.fail(i, path, "unexpected end of text (truncated file?), expected a value")
        c = self.text[i]
        if c == "{":
            return self.obj(i, path, depth + 1)
        if c == "[":
            return self.arr(i, path, depth + 1)
        if c == '"':
            return self.string(i, path)
        if c == "-" or c.isdigit():
            return self.number(i, path)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, i):
                return val, i + len(word)
        raise self.fail(i, path, f"unexpected {self.what(i)}, expected a value")

    def obj(self, i: int, path: JsonPath, depth: int) -> tuple[dict, int]:
        if depth > MAX_DEPTH:
            raise self.fail(i, path, f"nesting deeper than {MAX_DEPTH} levels")
        out: dict = {}
        i = self.skip_ws(i + 1)
        if i < self.n and self.text[i] == "}":
            return out, i + 1
        while True:
            i = self.skip_ws(i)
            if i >= self.n:
                raise self.fail(i, path, "unexpected end of text (truncated file?) in an object")
            c = self.text[i]
            if c == '"':
                key, i = self.string(i, path)
            elif c == "-" or c.isdigit():
                # fastjson writes non-String map keys (Integer, Long) without quotes.
                m = _INT_KEY.match(self.text, i)
                if m is None:
                    raise self.fail(i, path, f"unexpected {self.what(i)}, expected a key")
                key, i = self.integer(m, path), m.end()
            else:
                raise self.fail(i, path, f"unexpected {self.what(i)}, expected a key")
            i = self.skip_ws(i)
            if i >= self.n or self.text[i] != ":":
                raise self.fail(i, path + (key,), f"unexpected {self.what(i)}, expected ':' after the key")
            val, i = self.value(i + 1, path + (key,), depth)
            out[key] = val  # a repeated key replaces the earlier value, as in fastjson
            i = self.skip_ws(i)
            if i >= self.n:
                raise self.fail(i, path, "unexpected end of text (truncated file?) in an object")
            if self.text[i] == ",":
                i += 1
                continue
            if self.text[i] == "}":
                return out, i + 1
            raise self.fail(i, path, f"unexpected {self.what(i)}, expected ',' or '}}'")

    def arr(self, i: int, path: JsonPath, depth: int) -> tuple[list, int]:
        if depth > MAX_DEPTH:
            raise self.fail(i, path, f"nesting deeper than {MAX_DEPTH} levels")
        out: list = []
        i = self.skip_ws(i + 1)
        if i < self.n and self.text[i] == "]":
            return out, i + 1
        while True:
            val, i = self.value(i, path + (len(out),), depth)
            out.append(val)
            i = self.skip_ws(i)
            if i >= self.n:
                raise self.fail(i, path, "unexpected end of text (truncated file?) in an array")
            if self.text[i] == ",":
                i += 1
                continue
            if self.text[i] == "]":
                return out, i + 1
            raise self.fail(i, path, f"unexpected {self.what(i)}, expected ',' or ']'")

    def string(self, i: int, path: JsonPath) -> tuple[str, int]:
        text, n = self.text, self.n
        start = i
        i += 1
        parts: list[str] = []
        run = i
        while True:
            j = text.find('"', i)
            k = text.find("\\", i, j if j >= 0 else n)
            if j < 0 and k < 0:
                raise self.fail(start, path, "unterminated string (truncated file?)")
            if k < 0:
                parts.append(text[run:j])
                out = "".join(parts)
                if _SURROGATE.search(out):
                    # Java strings are UTF-16: a pair of \u escapes is one character.
                    out = out.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
                return out, j + 1
            parts.append(text[run:k])
            if k + 1 >= n:
                raise self.fail(k, path, "unterminated string (truncated file?)")
            e = text[k + 1]
            if e == "u":
                hexa = text[k + 2:k + 6]
                if not re.fullmatch(r"[0-9A-Fa-f]{4}", hexa):
                    raise self.fail(k, path, f"bad \\u escape {text[k:k + 6]!r}")
                parts.append(chr(int(hexa, 16)))
                i = k + 6
            elif e == "x":
                hexa = text[k + 2:k + 4]
                if not re.fullmatch(r"[0-9A-Fa-f]{2}", hexa):
                    raise self.fail(k, path, f"bad \\x escape {text[k:k + 4]!r}")
                parts.append(chr(int(hexa, 16)))
                i = k + 4
            elif e in _ESCAPES:
                parts.append(_ESCAPES[e])
                i = k + 2
            else:
                raise self.fail(k, path, f"bad escape {text[k:k + 2]!r}")
            run = i

    def number(self, i: int, path: JsonPath) -> tuple[int | float, int]:
        m = _NUMBER.match(self.text, i)
        if not m:
            raise self.fail(i, path, f"bad number at {self.what(i)}")
        if m.group(1) or m.group(2):
            if len(m.group()) > MAX_NUMBER_DIGITS:
                raise self.fail(i, path, f"number of {len(m.group()):,} characters, longer than any field holds")
            return float(m.group()), m.end()
        return self.integer(m, path), m.end()

    def integer(self, m: re.Match, path: JsonPath) -> int:
        # Python refuses to convert more than 4300 digits (sys.int_info.str_digits_check_threshold);
        # no field of a broker file is wider than a long (19 digits).
        if len(m.group()) > MAX_NUMBER_DIGITS:
            raise self.fail(m.start(), path, f"integer of {len(m.group()):,} digits, longer than any field holds")
        return int(m.group())


class _NoPositions(dict):
    """Positions not kept: a large document's path tuples would cost more than its values."""

    def __setitem__(self, key, value) -> None:
        pass


def parse(text: str, *, positions: bool = True) -> Parsed:
    """Parse fastjson-dialect (or strict JSON) text; raises :class:`FastjsonSyntaxError`.

    ``positions=False`` keeps no positions (``Parsed.positions`` is empty):
    parse again with them to place a problem found later.
    """
    p = _Parser(text)
    if not positions:
        p.positions = _NoPositions()
    i = 0
    if text.startswith("\ufeff"):
        i = 1  # a byte-order mark left by an editor
    value, i = p.value(i, (), 0)
    i = p.skip_ws(i)
    if i < p.n:
        raise p.fail(i, (), f"unexpected {p.what(i)} after the end of the document")
    return Parsed(value, p.positions)


# -- writer ---------------------------------------------------------------------------------

def _escape_char(ch: str) -> str:
    return f"\\u{ord(ch):04X}"


_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_PLAIN_SPECIAL = re.compile("[\"\\\\\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BROWSER_SPECIAL = re.compile("[\"\\\\/\x00-\x1f\x7f-\U0010ffff]")


def quote(text: str, *, browser_compatible: bool = False) -> str:
    """A string literal as fastjson's ``SerializeWriter.writeStringWithDoubleQuote`` writes it."""
    if browser_compatible:
        def sub(m: re.Match) -> str:
            ch = m.group()
            if ch in _SHORT:
                return _SHORT[ch]
            if ch == "/":
                return "\\/"
            if ord(ch) > 0xFFFF:  # Java strings hold UTF-16: escape both surrogates
                v = ord(ch) - 0x10000
                return _escape_char(chr(0xD800 + (v >> 10))) + _escape_char(chr(0xDC00 + (v & 0x3FF)))
            return _escape_char(ch)
        return '"' + _BROWSER_SPECIAL.sub(sub, text) + '"'
    return '"' + _PLAIN_SPECIAL.sub(lambda m: _SHORT.get(m.group()) or _escape_char(m.group()), text) + '"'


def java_double(value: float) -> str:
    """A double as Java's shortest-repr rules print it (``1.0``, ``1.0E7``, ``1.0E-4``)."""
    if math.isnan(value) or math.isinf(value):
        return "null"  # fastjson writes null for NaN and infinities
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exp = _shortest_digits(abs(value))
    # value = 0.digits * 10**exp
    if 1e-3 <= abs(value) < 1e7:
        point = exp
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exp - 1}"


def _shortest_digits(value: float) -> tuple[str, int]:
    s = f"{value:.17e}"
    for prec in range(1, 18):
        s = f"{value:.{prec - 1}e}"
        if float(s) == value:
            break
    mant, e = s.split("e")
    digits = mant.replace(".", "").rstrip("0") or "0"
    return digits, int(e) + 1


#: Resolves a schema node to the node for a child: ``child(schema, key)``.
SchemaWalker = Callable[[Any, Any], Any]


def dumps(value: Any, *, schema: Any = None, walker: SchemaWalker | None = None,
          pretty: bool = True, browser_compatible: bool = False) -> str:
    """Write ``value`` as fastjson would.

    ``schema`` (with ``walker`` to step into children) tells what a plain
    Python dict or list stood for in Java: ``x-java-class`` marks a bean
    (an empty one prints ``{`` newline ``}``), ``x-java-type: List`` a list
    printed one item per line. Without a schema every dict is a map and every
    list a ``Set``/array.
    """
    out: list[str] = []
    indent = 0

    def nl() -> None:
        out.append("\n" + "\t" * indent)

    def write(v: Any, node: Any) -> None:
        nonlocal indent
        if v is None:
            out.append("null")
        elif v is True:
            out.append("true")
        elif v is False:
            out.append("false")
        elif isinstance(v, int):
            out.append(str(v))
        elif isinstance(v, float):
            out.append(java_double(v))
        elif isinstance(v, str):
            out.append(quote(v, browser_compatible=browser_compatible))
        elif isinstance(v, Mapping):
            is_bean = isinstance(node, Mapping) and "x-java-class" in node
            out.append("{")
            if is_bean and pretty:
                indent += 1
                nl()
                first = True
                for k, item in v.items():
                    if item is None:
                        continue
                    if not first:
                        out.append(",")
                        nl()
                    first = False
                    out.append(quote(str(k), browser_compatible=browser_compatible) + ":")
                    write(item, walker(node, k) if walker else None)
                indent -= 1
                nl()
            else:
                indent += 1
                first = True
                for k, item in v.items():
                    if item is None:
                        continue
                    if not first:
                        out.append(",")
                    first = False
                    if isinstance(k, int) and not browser_compatible:
                        out.append(f"{k}:")
                    else:
                        if pretty:
                            nl()
                        out.append(quote(str(k), browser_compatible=browser_compatible) + ":")
                    write(item, walker(node, k) if walker else None)
                indent -= 1
                if pretty and v:
                    nl()
            out.append("}")
        elif isinstance(v, (list, tuple)):
            java_type = node.get("x-java-type") if isinstance(node, Mapping) else None
            if not v:
                out.append("[]")
            elif pretty and java_type == "List":
                out.append("[")
                indent += 1
                for n, item in enumerate(v):
                    if n:
                        out.append(",")
                    nl()
                    write(item, walker(node, n) if walker else None)
                indent -= 1
                nl()
                out.append("]")
            else:
                out.append("[")
                for n, item in enumerate(v):
                    if n:
                        out.append(",")
                    write(item, walker(node, n) if walker else None)
                out.append("]")
        else:
            raise TypeError(f"cannot write {type(v).__name__} as JSON")

    write(value, schema)
    return "".join(out)
