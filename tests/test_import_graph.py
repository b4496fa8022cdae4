"""The package's import graph points down: no import circle in rmqformats/ and spark/, and no reader of one
file kind imports the store facade or a capability subpackage.

Every ``import`` and ``from ... import`` counts, wherever it is: at module level, inside a function (a lazy
import), under ``if TYPE_CHECKING:``. A module imports the deepest module a statement names
(``from . import errors`` imports ``rmqformats.errors``, ``from .errors import X`` too); importing a submodule
is not counted as importing its parent package's ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Package name -> folder, as pyproject.toml's package-dir maps them.
PACKAGES = {"rmqformats": ROOT / "rmqformats", "rmqformats.spark": ROOT / "spark",
            "rmqformats.generated": ROOT / "generated"}
#: Readers of one file kind: flat modules of rmqformats/.
READERS = ("batch_consumequeue", "checkpoint", "commitlog", "consumequeue", "consumequeue_ext", "index", "timer")
#: What a reader may import below it that lives in a subpackage: the generated layouts, and for the commit
#: log the record walk it is a view over.
READER_SUBPACKAGES = {"rmqformats.generated": READERS, "rmqformats.walk": ("commitlog",)}
#: Subpackages below the readers: they import only each other and flat modules that are not readers.
FOUNDATIONS = ("rmqformats.generated", "rmqformats.walk")


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join([package, *parts])] = (path, is_package)
    return found


MODULES = _modules()


def _deepest(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path, is_package: bool) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its text."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names]
        else:
            continue
        out.update(t for t in map(_deepest, targets) if t is not None and t != name)
    return out


GRAPH = {name: _imports(name, path, is_package) for name, (path, is_package) in MODULES.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def _describe(component: list[str]) -> str:
    members = set(component)
    return "\n".join(f"  {m} -> {', '.join(sorted(GRAPH[m] & members))}" for m in component)


def test_every_module_is_seen():
    assert {"rmqformats.commitlog", "rmqformats.store", "rmqformats.walk.scan", "rmqformats.dledger.columnar",
            "rmqformats.spark.streaming", "rmqformats.config.compact"} <= set(MODULES)
    # The parser sees lazy imports and TYPE_CHECKING blocks: the facade imports its parts inside methods.
    assert {"rmqformats.consumequeue", "rmqformats.lag", "rmqformats.rocksdb.consumequeue"} <= GRAPH["rmqformats.store"]


def test_no_import_circle():
    circles = _circles(GRAPH)
    assert not circles, "import circles:\n" + "\n\n".join(_describe(c) for c in circles)


def test_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_readers_import_no_facade_nor_capability():
    subpackages = {name for name, (_path, is_package) in MODULES.items()
                   if is_package and name.count(".") == 1 and name.startswith("rmqformats.")}
    wrong = []
    for reader in READERS:
        name = f"rmqformats.{reader}"
        for target in sorted(GRAPH[name]):
            top = ".".join(target.split(".")[:2])
            if target == "rmqformats.store" or target == "rmqformats" or (
                    top in subpackages and reader not in READER_SUBPACKAGES.get(top, ())):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_walk_sits_under_the_readers():
    """The record walk imports no reader, no facade and no capability: only the generated layouts and the flat
    modules below the readers (the readers are views over it)."""
    wrong = []
    for name in sorted(GRAPH):
        if not name.startswith("rmqformats.walk"):
            continue
        for target in sorted(GRAPH[name]):
            parts = target.split(".")
            top = ".".join(parts[:2])
            flat = len(parts) == 2 and not MODULES[target][1]
            if top in FOUNDATIONS or (flat and parts[1] not in READERS and parts[1] != "store"):
                continue
            wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)
    assert "rmqformats.walk.scan" in GRAPH["rmqformats.commitlog"] or any(
        t.startswith("rmqformats.walk") for t in GRAPH["rmqformats.commitlog"])
    assert not any(t.startswith("rmqformats.columnar") for t in GRAPH["rmqformats.commitlog"])
