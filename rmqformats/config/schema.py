"""The JSON Schemas of the config files (``formats/config/*.schema.json``) and validation.

The schemas are the one place where field names, types, Java classes and
the RocketMQ version that added each field are written down. Besides the
standard keywords they carry a few annotations this package reads:

* ``x-files`` / ``x-folder``: the file names a schema describes and the store
  folder they live in;
* ``x-fastjson``: ``prettyFormat`` and ``browserCompatible`` of the writer;
* ``x-java-class``: the object is a Java bean (fields in alphabetical order);
* ``x-java-type``: ``List`` (printed one item per line), ``Set`` or an array;
* ``x-key-type: int``: a ``Map<Integer|Long, …>`` whose keys fastjson writes
  unquoted;
* ``x-since`` / ``x-until``: the first (and last) release with the field.

Instances are validated with :mod:`jsonschema` (draft 2020-12) after integer
keys are turned into strings, which is what JSON Schema's data model needs.
Keys that a bean's schema does not list are reported as unknown, not errors:
a newer broker may add fields.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from .fastjson import JsonPath


@cache
def schema_names() -> tuple[str, ...]:
    """Names of the bundled schemas (``topics``, ``consumerOffset``, ``common``, …)."""
    folder = resources.files("rmqformats.formats") / "config"
    return tuple(sorted(p.name[:-len(".schema.json")] for p in folder.iterdir()
                        if p.name.endswith(".schema.json")))


@cache
def load_schema(name: str) -> Mapping[str, Any]:
    """The schema ``formats/config/<name>.schema.json`` as a dict (do not modify it)."""
    path = resources.files("rmqformats.formats") / "config" / f"{name}.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def schema_for_file(file_name: str) -> str | None:
    """The schema name whose ``x-files`` lists ``file_name`` (``lmqConsumerOffset.json`` → ``consumerOffset``)."""
    for name in schema_names():
        if file_name in load_schema(name).get("x-files", ()):
            return name
    return None


_FIRST = ("topics.json", "subscriptionGroup.json", "consumerOffset.json", "lmqConsumerOffset.json",
          "delayOffset.json")


def known_files() -> list[tuple[str, str, str]]:
    """Every (folder, file name, schema name) the schemas describe: the main four first, then by name."""
    out = []
    for name in schema_names():
        s = load_schema(name)
        for f in s.get("x-files", ()):
            out.append((s.get("x-folder", "config"), f, name))
    return sorted(out, key=lambda e: (_FIRST.index(e[1]) if e[1] in _FIRST else len(_FIRST),
                                      e[0] != "config", e[1].lower()))


def _closed(node: Any) -> Any:
    """A copy where every bean (object with ``properties``) forbids other keys."""
    if isinstance(node, dict):
        out = {k: _closed(v) for k, v in node.items()}
        if "properties" in out and "additionalProperties" not in out and "x-java-class" in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_closed(v) for v in node]
    return node


def _inline(node: Any) -> Any:
    """A copy with every ``$ref`` replaced by its target: the schemas have no recursion, and
    validating without reference lookups is several times faster on large files."""
    node = resolve(node)
    if isinstance(node, dict):
        return {k: _inline(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v) for v in node]
    return node


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    """A validator of the inlined schema in which beans forbid unknown keys (reported separately)."""
    return jsonschema.Draft202012Validator(_closed(_inline(copy.deepcopy(dict(load_schema(name))))))


def resolve(node: Any) -> Any:
    """``node`` with a ``$ref`` followed (sibling keywords override the target's)."""
    while isinstance(node, Mapping) and "$ref" in node:
        ref = node["$ref"]
        file_part, _, fragment = ref.partition("#")
        target: Any = load_schema(file_part[:-len(".schema.json")])
        for part in filter(None, fragment.split("/")):
            target = target[part]
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        node = merged
    return node


def child(node: Any, key: Any) -> Any:
    """The schema of ``node``'s member ``key`` (a property, map value or array item); ``None`` if unknown."""
    node = resolve(node)
    if not isinstance(node, Mapping):
        return None
    if isinstance(key, int) and node.get("type") == "array":
        return resolve(node.get("items"))
    props = node.get("properties", {})
    if isinstance(key, str) and key in props:
        return resolve(props[key])
    extra = node.get("additionalProperties")
    return resolve(extra) if isinstance(extra, Mapping) else None


def at(name: str, path: JsonPath) -> Any:
    """The schema node of the bundled schema ``name`` at a JSON path."""
    node: Any = load_schema(name)
    for part in path:
        node = child(node, part)
    return resolve(node)


def pointer(name: str, *parts: str) -> Any:
    """The node at a JSON pointer of the bundled schema ``name`` (``pointer("common", "$defs", "dataVersion")``)."""
    node: Any = load_schema(name)
    for part in parts:
        node = node[part]
    return resolve(node)


def to_json_model(value: Any) -> Any:
    """``value`` with integer map keys as strings: the data model JSON Schema validates."""
    if isinstance(value, Mapping):
        return {str(k): to_json_model(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_model(v) for v in value]
    return value


@dataclass(frozen=True)
class Problem:
    """One validation error: where (as a JSON path of the original value) and why."""

    path: JsonPath
    reason: str


def _original_path(value: Any, path: Iterator) -> JsonPath:
    """Map a path of the string-keyed instance back to the parsed value's keys (ints stay ints)."""
    out: list = []
    node = value
    for part in path:
        if isinstance(node, Mapping):
            key = part
            if key not in node:
                for k in node:
                    if str(k) == part:
                        key = k
                        break
            out.append(key)
            node = node.get(key)
        elif isinstance(node, list):
            out.append(part)
            node = node[part] if isinstance(part, int) and part < len(node) else None
        else:
            out.append(part)
    return tuple(out)


def _reason(err: jsonschema.ValidationError) -> str:
    if err.validator == "oneOf" and err.context:
        best = jsonschema.exceptions.best_match(err.context)
        return f"{best.message} (none of the version variants matches)"
    if err.validator == "pattern" and str(err.validator_value).startswith("^-?[0-9]{1,"):
        java = "int" if err.validator_value.endswith("10}$") else "long"
        text = err.instance if len(err.instance) <= 40 else f"{err.instance[:20]}…{err.instance[-10:]}"
        if re.fullmatch(r"-?[0-9]+", err.instance):
            return f"key {text!r} ({len(err.instance):,} characters) has more digits than a Java {java} holds"
        return f"key {text!r} is not an integer"
    return err.message


def check(name: str, value: Any) -> tuple[list[Problem], list[JsonPath]]:
    """Validate ``value`` against the schema ``name`` in one pass.

    Returns the errors and, separately, the JSON paths of keys that the bean
    schemas do not list: those are kept by the reader and reported, not errors.
    """
    instance = to_json_model(value)
    problems: list[Problem] = []
    unknown: list[JsonPath] = []
    for err in _validator(name).iter_errors(instance):
        if err.validator == "additionalProperties" and err.validator_value is False \
                and "x-java-class" in err.schema:
            props = err.schema.get("properties", {})
            base = _original_path(value, err.absolute_path)
            unknown.extend(base + (key,) for key in err.instance if key not in props)
            continue
        problems.append(Problem(_original_path(value, err.absolute_path), _reason(err)))
    problems.sort(key=lambda p: list(map(str, p.path)))
    unknown.sort(key=lambda p: list(map(str, p)))
    return problems, unknown


def validate(name: str, value: Any) -> list[Problem]:
    """Errors of ``value`` against the schema ``name`` (unknown keys are not errors)."""
    return check(name, value)[0]


def unknown_keys(name: str, value: Any) -> list[JsonPath]:
    """JSON paths of keys that the bean schemas do not list (kept by the reader, reported to the user)."""
    return check(name, value)[1]
