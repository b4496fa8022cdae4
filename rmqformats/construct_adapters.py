"""Runtime support for the construct schemas generated from Kaitai Struct specs.

The modules in ``rmqformats.generated.construct`` are written by
:mod:`rmqformats.codegen.construct_gen` and import this module as ``ka``.
construct covers most of Kaitai's model directly; the classes and functions
here cover the places where Kaitai semantics differ from what construct
ships:

* :class:`Struct` – a construct ``Struct`` that can be built from the
  containers its own ``parse`` returned;
* :class:`If` – ``if:``; a field whose condition is false may be left out of
  the dict given to ``build``;
* :class:`Valid` – ``valid:`` checks, on parse and on build;
* :class:`RepeatEos`, :class:`RepeatUntil` – ``repeat: eos`` and
  ``repeat: until`` with Kaitai's stopping rules;
* :class:`SizeEos` – ``size-eos: true`` on a user type;
* :func:`param` – type parameters, evaluated per parse in the parent's context;
* :func:`enum_value`, :func:`in_enum`, :func:`to_i` – enum values as parsed
  (``EnumIntegerString``) or as given to build (name or int);
* :func:`io_eof`, :func:`io_pos`, :func:`io_size` – ``_io.eof``, ``_io.pos``,
  ``_io.size``;
* :func:`div` – Kaitai's ``/``.
"""

from __future__ import annotations

import enum
import io
import itertools
from typing import Any, Callable

import construct as c
from construct.core import (
    BytesIOWithOffsets,
    EnumIntegerString,
    stream_iseof,
    stream_read_entire,
    stream_size,
    stream_write,
)

__all__ = [
    "BUILD_EOF_KEY",
    "If",
    "RepeatEos",
    "RepeatUntil",
    "SizeEos",
    "Struct",
    "Valid",
    "div",
    "enum_value",
    "in_enum",
    "io_eof",
    "io_pos",
    "io_size",
    "param",
    "to_i",
]

#: Context key that :class:`RepeatUntil` sets while it evaluates its condition
#: during build; :func:`io_eof` reads it.
BUILD_EOF_KEY = "_ka_eof"

# Keys construct puts in contexts (and Struct.parse puts "_io" in results);
# Kaitai ids cannot start with "_", so none of them is a field.
_CONTEXT_KEYS = frozenset(
    {"_", "_io", "_root", "_params", "_parsing", "_building", "_sizing", "_subcons", "_index", BUILD_EOF_KEY}
)


class Struct(c.Struct):
    """A construct ``Struct`` for one Kaitai type.

    Same as ``construct.Struct``, except that building ignores the
    construct-internal keys (``_io``, ``_``, ``_root``...) of the given dict.
    """

    def _build(self, obj, stream, context, path):
        if isinstance(obj, dict) and any(key in _CONTEXT_KEYS for key in obj):
            # A container from parse() carries the "_io" stream it was read
            # from, and one from build() carries "_" and "_root". Struct._build
            # copies the given dict over its fresh context, which would point
            # _io.pos and _parent at the wrong stream and object.
            obj = {key: value for key, value in obj.items() if key not in _CONTEXT_KEYS}
        return super()._build(obj, stream, context, path)


class If(c.IfThenElse):
    """``if:``: parse or build ``subcon`` only when ``condfunc(this)`` is true.

    Parses to None when the condition is false. Unlike ``construct.If``, the
    field may be missing from the dict given to build.
    """

    def __init__(self, condfunc: Callable[[Any], Any], subcon: c.Construct):
        super().__init__(condfunc, subcon, c.Pass)
        # Kaitai's writers leave a field out when its condition is false;
        # letting build take None for a missing key matches that.
        self.flagbuildnone = True


class Valid(c.Subconstruct):
    """``valid:``: check the value of ``subcon`` after parsing and before building.

    :param checks: pairs ``(description, check)``; ``check(value, this)``
        returns true for a valid value. The first failing check raises
        ``construct.ValidationError`` naming its description.
    """

    def __init__(self, subcon: c.Construct, *checks: tuple[str, Callable[[Any, Any], Any]]):
        super().__init__(subcon)
        self.checks = checks

    def _check(self, obj, context, path):
        for description, check in self.checks:
            if not check(obj, context):
                raise c.ValidationError(f"value {obj!r} is not valid: {description}", path=path)

    def _parse(self, stream, context, path):
        obj = self.subcon._parsereport(stream, context, path)
        self._check(obj, context, path)
        return obj

    def _build(self, obj, stream, context, path):
        self._check(obj, context, path)
        # Return what the subcon returns (not obj, as construct's Adapter
        # does): for a user type that is the built context, with the
        # computed fields that later expressions may read.
        return self.subcon._build(obj, stream, context, path)


class RepeatEos(c.Subconstruct):
    """``repeat: eos``: elements until the end of the stream.

    Unlike ``construct.GreedyRange``, an element that fails to parse is an
    error, not the end of the list.
    """

    def _parse(self, stream, context, path):
        items = c.ListContainer()
        for i in itertools.count():
            if stream_iseof(stream):
                return items
            context._index = i
            items.append(self.subcon._parsereport(stream, context, path))

    def _build(self, obj, stream, context, path):
        built = c.ListContainer()
        for i, item in enumerate(obj):
            context._index = i
            built.append(self.subcon._build(item, stream, context, path))
        return built

    def _sizeof(self, context, path):
        raise c.SizeofError("repeat: eos has no fixed size", path=path)


class RepeatUntil(c.Subconstruct):
    """``repeat: until``: elements up to and including the first one for which
    ``predicate(item, this)`` is true.

    When building, ``item`` is what the element's build returned (for a user
    type: its context, with computed fields), the predicate must hold for the
    last element and only for it, and :func:`io_eof` is true for the last
    element, because that is where the parser would find the end of the
    stream if nothing follows.
    """

    def __init__(self, predicate: Callable[[Any, Any], Any], subcon: c.Construct):
        super().__init__(subcon)
        self.predicate = predicate

    def _parse(self, stream, context, path):
        items = c.ListContainer()
        for i in itertools.count():
            context._index = i
            item = self.subcon._parsereport(stream, context, path)
            items.append(item)
            if self.predicate(item, context):
                return items

    def _build(self, obj, stream, context, path):
        obj = list(obj)
        if not obj:
            raise c.RepeatError("repeat: until needs at least one element", path=path)
        last = len(obj) - 1
        built = c.ListContainer()
        for i, item in enumerate(obj):
            context._index = i
            ret = self.subcon._build(item, stream, context, path)
            built.append(ret)
            context[BUILD_EOF_KEY] = i == last
            try:
                stop = self.predicate(ret, context)
            finally:
                del context[BUILD_EOF_KEY]
            if stop:
                if i != last:
                    raise c.RepeatError(
                        f"repeat-until condition is true for element {i} of {len(obj)}; "
                        "parsing would stop there", path=path)
                return built
        raise c.RepeatError("repeat-until condition is false for the last element", path=path)

    def _sizeof(self, context, path):
        raise c.SizeofError("repeat: until has no fixed size", path=path)


class SizeEos(c.Subconstruct):
    """``size-eos: true`` on a user type: parse ``subcon`` from the rest of the stream.

    The element gets its own stream, as in Kaitai: ``_io`` inside it ends
    where the outer stream ends, and bytes it leaves unread are skipped.
    """

    def _parse(self, stream, context, path):
        offset = stream.tell()
        data = stream_read_entire(stream, path)
        return self.subcon._parsereport(BytesIOWithOffsets(data, stream, offset), context, path)

    def _build(self, obj, stream, context, path):
        substream = io.BytesIO()
        ret = self.subcon._build(obj, substream, context, path)
        data = substream.getvalue()
        stream_write(stream, data, len(data), path)
        return ret

    def _sizeof(self, context, path):
        raise c.SizeofError("size-eos has no fixed size", path=path)


def param(arg: Any) -> Any:
    """Value of a ``Computed`` field for one type parameter.

    ``arg`` is the parameter's value or a function of the parent's context
    (the object whose field invokes the type); the function is called on
    every parse and build.
    """
    if callable(arg):
        # The Computed field is evaluated in the parametrised type's own
        # context; Kaitai evaluates the arguments where the type is invoked.
        return lambda this: arg(this["_"])
    return arg


def enum_value(value: Any, enum_cls: type[enum.IntEnum]) -> Any:
    """``value`` as a member of ``enum_cls``, for comparisons and switches.

    Accepts what parsing gives (construct's ``EnumIntegerString`` for a known
    value, an int for an unknown one) and what a user may give to build (the
    member name or an int). An int outside the enum stays an int; an unknown
    name raises ``construct.MappingError``.
    """
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, EnumIntegerString):
        value = value.intvalue
    elif isinstance(value, str):
        try:
            return enum_cls[value]
        except KeyError:
            raise c.MappingError(f"{value!r} is not a member of {enum_cls.__name__}") from None
    try:
        return enum_cls(value)
    except ValueError:
        return int(value)


def in_enum(value: Any, enum_cls: type[enum.IntEnum]) -> bool:
    """True when ``value`` (name, int or parsed enum) is a member of ``enum_cls``."""
    if isinstance(value, EnumIntegerString):
        value = value.intvalue
    elif isinstance(value, str):
        return value in enum_cls.__members__
    try:
        enum_cls(value)
    except (ValueError, TypeError):
        return False
    return True


def to_i(value: Any) -> int:
    """Kaitai's ``.to_i`` where the translator did not know the value's type."""
    if isinstance(value, EnumIntegerString):
        return value.intvalue
    return int(value)


def div(a: Any, b: Any) -> Any:
    """Kaitai's ``/``: integer division for integers, true division otherwise."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return a / b


def _is_building(container: Any) -> bool:
    return bool(container.get("_building", False))


def io_eof(container: Any) -> bool:
    """``_io.eof`` of the object whose context (or parsed container) is ``container``.

    While building there is no input to be at the end of: the value is true
    only in a ``repeat-until`` condition for the last element (see
    :class:`RepeatUntil`), false elsewhere.
    """
    if _is_building(container):
        return bool(container.get(BUILD_EOF_KEY, False))
    return stream_iseof(container["_io"])


def io_pos(container: Any) -> int:
    """``_io.pos``: position in the object's stream (relative to a substream's start, as in Kaitai)."""
    stream = container["_io"]
    if isinstance(stream, BytesIOWithOffsets):
        # construct's substreams report positions in the parent stream.
        return stream.tell() - stream.parent_stream_offset
    return stream.tell()


def io_size(container: Any) -> int:
    """``_io.size``: size of the object's stream.

    While building, the stream is still being written: the value is the
    number of bytes written to it so far.
    """
    stream = container["_io"]
    if isinstance(stream, BytesIOWithOffsets):
        # stream_size would report the end as a position in the parent stream.
        with stream.getbuffer() as buffer:
            return buffer.nbytes
    return stream_size(stream)
