"""The language table: spec x language -> builds, equals the truth (values compared) or a named limit.

``tests/test_targets.py`` records its results here (:func:`record_builds`,
:func:`record_values`); the test session's summary prints the table and stores the results
in pytest's cache; ``python tests/targets/table.py`` (``make targets-table``) writes the
table from that cache into docs/guides/parser-packages.md (PAGE) between its markers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

BEGIN, END = "<!-- targets-table:begin -->", "<!-- targets-table:end -->"
ORDER = ["python", "javascript", "java", "cpp_stl", "go", "rust", "csharp", "ruby", "php", "lua", "perl", "nim"]
TITLES = {"python": "Python", "javascript": "JavaScript", "java": "Java", "cpp_stl": "C++", "go": "Go",
          "rust": "Rust", "csharp": "C#", "ruby": "Ruby", "php": "PHP", "lua": "Lua", "perl": "Perl", "nim": "Nim"}
CACHE_KEY = "rmqformats/targets"

#: name -> {"builds": {spec: error or None}, "values": {spec: {"checked": n, "diffs": [...], "limits": {...}}}}
RESULTS: dict[str, dict] = {}
#: Specs that have real files to compare (set by the test from its truth checks).
COMPARED: set = set()
#: (target, check) pairs that ran; the table is complete when all did.
EXPECTED: set = set()


def record_builds(name: str, builds: dict[str, str | None], limits: dict[str, str] | None = None) -> None:
    """Which specs built; ``limits``: the specs the target names as not building, with why."""
    r = RESULTS.setdefault(name, {"builds": {}, "values": {}})
    r["builds"] = {s: (e is not None) for s, e in builds.items()}
    r["build_limits"] = {s: why for s, why in (limits or {}).items() if builds.get(s) is not None}


def record_values(name: str, spec: str, checked: int, diffs: list[str], limits: dict[str, str]) -> None:
    v = RESULTS.setdefault(name, {"builds": {}, "values": {}})["values"]
    cell = v.setdefault(spec, {"checked": 0, "diffs": [], "limits": {}})
    cell["checked"] += checked
    cell["diffs"] = sorted(set(cell["diffs"]) | set(diffs))
    cell["limits"].update({f: why for f, why in limits.items() if f in diffs})


def cell(result: dict | None, spec: str) -> str:
    if not result or spec not in result["builds"]:
        return "not run"
    if result["builds"][spec]:
        why = result.get("build_limits", {}).get(spec)
        return "does not build (limit)" if why else "**does not build**"
    v = result["values"].get(spec)
    if v is None and spec in COMPARED:
        return "builds (not compared: its check also reads a spec that does not build)"
    if v is None:
        return "builds (no real file)"
    wrong = [d for d in v["diffs"] if d not in v["limits"]]
    if wrong:
        return "**differs**: " + ", ".join(f"`{d.split('.', 1)[1]}`" for d in wrong)
    text = f"= truth ({v['checked']})"
    if v["limits"]:
        text += "; limit: " + ", ".join(f"`{d.split('.', 1)[1]}`" for d in v["limits"])
    return text


def markdown(results: dict, names: list[str], specs: list[str]) -> str:
    head = "| spec | " + " | ".join(TITLES.get(n, n) for n in names) + " |"
    rows = [head, "|---" * (len(names) + 1) + "|"]
    for spec in specs:
        rows.append(f"| `{spec}` | " + " | ".join(cell(results.get(n), spec) for n in names) + " |")
    limits = {(n, f): why for n in names for v in results.get(n, {}).get("values", {}).values()
              for f, why in v["limits"].items()}
    limits.update({(n, f"{s}._build"): why for n in names
                   for s, why in results.get(n, {}).get("build_limits", {}).items()})
    notes = [f"- {TITLES.get(n, n)}, `{f}`: {why}" for (n, f), why in sorted(limits.items())]
    return "\n".join(rows + ([""] + notes if notes else [])) + "\n"


def render(names: list[str], specs: list[str]) -> str | None:
    """The table of this session's results, or None when some target or check did not run."""
    if not EXPECTED or any((n, c) not in DONE for n, c in EXPECTED) or set(names) - set(RESULTS):
        return None
    return markdown(RESULTS, names, specs)


DONE: set = set()

#: The page that holds the table between its markers, from the repository's root.
PAGE = "docs/guides/parser-packages.md"


def readme_table(readme: Path) -> str | None:
    text = readme.read_text(encoding="utf-8")
    if BEGIN not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def write_readme(readme: Path, table: str) -> None:
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    readme.write_text(f"{head}{BEGIN}\n{table}{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    repo = Path(__file__).resolve().parents[2]
    cache = repo / ".pytest_cache" / "v" / CACHE_KEY
    if not cache.exists():
        raise SystemExit(f"{cache} is missing: run `make test` (or pytest tests/test_targets.py) first")
    data = json.loads(cache.read_text())
    write_readme(repo / PAGE, data["table"])
    sys.stdout.write(data["table"])
