"""The "Try it" walkthrough of a parser package's README (``rmqformats/codegen/dist.py`` writes it) as steps.

Its fenced blocks are the steps, in order: a block with a title (```` ```go title="main.go" ````) is a
file to write under that name, an ``sh`` block commands to run. ``tests/test_package_readmes.py``
follows them literally; ``tests/test_dist_parsers.py`` builds the same files its own way (offline).
"""

from __future__ import annotations

import re
from pathlib import Path

FENCE = re.compile(r'^```(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$', re.MULTILINE | re.DOTALL)
TITLED = re.compile(r'^(?P<lang>\S+) title="(?P<name>[^"]+)"$')


def steps(readme: str) -> list[tuple[str, str, str]]:
    """The README's fenced blocks as steps: ("file", name, text) or ("sh", "", commands)."""
    out = []
    for block in FENCE.finditer(readme):
        info, body = block["info"].strip(), block["body"]
        titled = TITLED.match(info)
        if titled:
            out.append(("file", titled["name"], body))
        elif info == "sh":
            out.append(("sh", "", body))
        else:
            raise AssertionError(f"a fenced block the walkthrough neither writes nor runs: ```{info}\n{body}")
    return out


def write_files(package: Path, into: Path) -> dict[str, str]:
    """Write the files of ``package``'s README walkthrough under ``into``; returns their texts by name."""
    files = {name: text for kind, name, text in steps((package / "README.md").read_text(encoding="utf-8"))
             if kind == "file"}
    for name, text in files.items():
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_text(text, encoding="utf-8")
    return files
