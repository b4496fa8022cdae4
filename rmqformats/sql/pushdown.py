"""What a query asks of the store: the tables it names and the filters the walk can apply first.

The query is parsed by DuckDB itself (``json_serialize_sql``), so the tables
and predicates found are those DuckDB will run. From the ``WHERE`` clause of
the one ``SELECT`` that reads a store table, the simple conjuncts on that
table's columns (``topic = 'T'``, ``topic IN (…)``, ``queueId = 3``, bounds
on ``storeTimestamp`` and ``commitLogOffset``, ``BETWEEN``) become keyword
arguments of the walk (:meth:`CommitLog.batches <rmqformats.commitlog.CommitLog.batches>`,
:meth:`Store.queue_batches <rmqformats.store.Store.queue_batches>`). They only
narrow what is read: DuckDB still applies the whole ``WHERE``, so a bound
taken wider than the query's (a ``<=`` read as ``< value + 1``) never changes
a result. A table named more than once, a predicate under ``OR`` or ``NOT``,
or one the walk has no filter for is left to DuckDB alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..message import to_millis


class SqlError(ValueError):
    """A query that DuckDB does not accept, or that names what the store lacks.

    ``position`` is the character offset in the query (0-based) where the
    problem is, when known; the message is one line.
    """

    def __init__(self, message: str, position: int | None = None, text: str | None = None):
        self.position = position
        self.message = message
        where = ""
        if position is not None:
            where = f"query position {position}"
            if text is not None:
                before = text[:position]
                line = before.count("\n") + 1
                column = position - (before.rfind("\n") + 1) + 1
                where += f" (line {line}, column {column})"
            where += ": "
        super().__init__(where + message)


@dataclass
class Plan:
    """The store tables a query reads and, per table, the walk's keyword arguments taken from its ``WHERE``."""

    tables: list[str] = field(default_factory=list)
    filters: dict[str, dict[str, Any]] = field(default_factory=dict)


#: Comparison operators as their AST names, with the column on the left.
_FLIP = {"COMPARE_GREATERTHAN": "COMPARE_LESSTHAN", "COMPARE_LESSTHAN": "COMPARE_GREATERTHAN",
         "COMPARE_GREATERTHANOREQUALTO": "COMPARE_LESSTHANOREQUALTO",
         "COMPARE_LESSTHANOREQUALTO": "COMPARE_GREATERTHANOREQUALTO", "COMPARE_EQUAL": "COMPARE_EQUAL"}


def parse(connection, text: str) -> dict:
    """DuckDB's syntax tree of ``text``; :class:`SqlError` naming the position when it does not parse."""
    row = connection.execute("SELECT json_serialize_sql(?::VARCHAR)", [text]).fetchall()[0]
    tree = json.loads(row[0])
    if tree.get("error"):
        if tree.get("error_type") == "not implemented":  # DuckDB serializes SELECT statements alone
            raise SqlError("only a query is run (SELECT, WITH … SELECT, VALUES): the store is read, never "
                           "written", None, text)
        position = tree.get("position")
        raise SqlError(str(tree.get("error_message", "syntax error")).splitlines()[0],
                       int(position) if position not in (None, "") else None, text)
    statements = tree.get("statements") or []
    if len(statements) > 1:
        raise SqlError(f"one query at a time: this text holds {len(statements)} statements (separated by ;)",
                       None, text)
    return tree


def plan(tree: dict, known: tuple[str, ...]) -> Plan:
    """The tables of ``known`` that ``tree`` reads, and the pre-filters of each named once."""
    result = Plan()
    refs: dict[str, list[tuple[dict, str]]] = {}
    for select in _selects(tree):
        for ref in _base_tables(select.get("from_table")):
            name = str(ref.get("table_name", "")).lower()
            if name in known and not ref.get("schema_name"):
                refs.setdefault(name, []).append((select, str(ref.get("alias") or name).lower()))
    ctes = _cte_names(tree)
    for name in known:
        if name in refs and name not in ctes:
            result.tables.append(name)
    for name, found in refs.items():
        if name in ctes or len(found) != 1:
            continue
        select, alias = found[0]
        single = (select.get("from_table") or {}).get("type") == "BASE_TABLE"
        result.filters[name] = _filters(select.get("where_clause"), alias, single)
    return result


def _walk(node: Any) -> Iterator[dict]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _selects(tree: dict) -> Iterator[dict]:
    for node in _walk(tree):
        if node.get("type") == "SELECT_NODE":
            yield node


def _cte_names(tree: dict) -> set[str]:
    names: set[str] = set()
    for node in _walk(tree):
        ctes = node.get("cte_map")
        if isinstance(ctes, dict):
            for entry in ctes.get("map", []) or []:
                key = entry.get("key") if isinstance(entry, dict) else None
                if key:
                    names.add(str(key).lower())
    return names


def _base_tables(node: Any) -> Iterator[dict]:
    """The base-table references of a ``FROM`` clause, through joins (not into subqueries: their own
    ``SELECT`` nodes are visited on their own)."""
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "BASE_TABLE":
        yield node
    elif kind == "JOIN":
        yield from _base_tables(node.get("left"))
        yield from _base_tables(node.get("right"))


def _conjuncts(node: Any) -> Iterator[dict]:
    if not isinstance(node, dict):
        return
    if node.get("class") == "CONJUNCTION" and node.get("type") == "CONJUNCTION_AND":
        for child in node.get("children", []):
            yield from _conjuncts(child)
    else:
        yield node


def _column(node: Any, alias: str, single: bool) -> str | None:
    """The column a reference names when it is one of the table's (qualified with its alias, or bare when
    the ``SELECT`` reads that table alone)."""
    if not isinstance(node, dict) or node.get("class") != "COLUMN_REF":
        return None
    names = [str(n) for n in node.get("column_names", [])]  # DuckDB matches names whatever their case
    if len(names) == 1 and single:
        return _CANONICAL.get(names[0].lower())
    if len(names) == 2 and names[0].lower() == alias:
        return _CANONICAL.get(names[1].lower())
    return None


#: The columns a pre-filter can come from, by their lower-case name.
_CANONICAL = {name.lower(): name for name in ("topic", "queueId", "storeTimestamp", "commitLogOffset")}


_NO_VALUE = object()


def _constant(node: Any) -> Any:
    """The value of a constant, through casts; ``_NO_VALUE`` for anything else."""
    if not isinstance(node, dict):
        return _NO_VALUE
    if node.get("class") == "CAST":
        return _constant(node.get("child"))
    if node.get("class") == "CONSTANT":
        literal = node.get("literal")
        if isinstance(literal, dict):  # DuckDB 2: the literal as written
            if literal.get("kind") == "STRING":
                return str(literal.get("text"))
            if literal.get("kind") == "INTEGER":
                return _int(literal.get("text"))
            return _NO_VALUE
        value = node.get("value", {})  # DuckDB 1: the typed value
        if not isinstance(value, dict) or value.get("is_null"):
            return _NO_VALUE
        return value.get("value")
    return _NO_VALUE


def _millis(value: Any) -> int | None:
    if isinstance(value, str):
        try:
            return to_millis(value.strip().replace(" ", "T", 1))
        except (ValueError, TypeError):
            return None
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


class _Bounds:
    """The tightest lower (inclusive) and upper (exclusive) bound seen for one column."""

    def __init__(self):
        self.low: int | None = None
        self.high: int | None = None

    def add(self, op: str, value: int) -> None:
        if op in ("COMPARE_GREATERTHAN", "COMPARE_GREATERTHANOREQUALTO", "COMPARE_EQUAL"):
            self.low = value if self.low is None else max(self.low, value)
        if op in ("COMPARE_LESSTHAN", "COMPARE_LESSTHANOREQUALTO", "COMPARE_EQUAL"):
            high = value if op == "COMPARE_LESSTHAN" else value + 1
            self.high = high if self.high is None else min(self.high, high)


def _filters(where: Any, alias: str, single: bool) -> dict[str, Any]:
    """The walk's keyword arguments from the conjuncts of ``where`` on the table named ``alias``."""
    topics: set[str] | None = None
    queue_id: int | None = None
    times, offsets = _Bounds(), _Bounds()
    for node in _conjuncts(where):
        kind = node.get("type", "")
        if kind == "COMPARE_IN":
            children = node.get("children", [])
            column = _column(children[0] if children else None, alias, single)
            values = [_constant(c) for c in children[1:]]
            if column == "topic" and values and all(isinstance(v, str) for v in values):
                topics = set(values) if topics is None else topics & set(values)
            continue
        if kind == "COMPARE_BETWEEN":
            column = _column(node.get("input"), alias, single)
            low, high = _constant(node.get("lower")), _constant(node.get("upper"))
            pairs = [("COMPARE_GREATERTHANOREQUALTO", low), ("COMPARE_LESSTHANOREQUALTO", high)]
        elif kind in _FLIP:
            left, right = node.get("left"), node.get("right")
            column, op, value = _column(left, alias, single), kind, _constant(right)
            if column is None:
                column, op, value = _column(right, alias, single), _FLIP[kind], _constant(left)
            pairs = [(op, value)]
        else:
            continue
        for op, value in pairs:
            if value is _NO_VALUE or column is None:
                continue
            if column == "topic" and op == "COMPARE_EQUAL" and isinstance(value, str):
                topics = {value} if topics is None else topics & {value}
            elif column == "queueId" and op == "COMPARE_EQUAL" and _int(value) is not None:
                queue_id = _int(value)
            elif column == "storeTimestamp" and _millis(value) is not None:
                # A literal finer than a millisecond: its millisecond is kept, whichever side it bounds.
                times.add("COMPARE_LESSTHANOREQUALTO" if op == "COMPARE_LESSTHAN" else op, _millis(value))
            elif column == "commitLogOffset" and _int(value) is not None:
                offsets.add(op, _int(value))
    out: dict[str, Any] = {}
    if topics is not None:
        out["topic"] = sorted(topics)
    if queue_id is not None:
        out["queue_id"] = queue_id
    if times.low is not None:
        out["since"] = times.low
    if times.high is not None:
        out["until"] = times.high
    if offsets.low is not None:
        out["from_offset"] = offsets.low
    if offsets.high is not None:
        out["to_offset"] = offsets.high
    return out
