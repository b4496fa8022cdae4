"""The README and the site's hand-written pages (docs/), whose examples the tests run.

``PAGES`` is in reading order: the Python examples of later pages use names that earlier ones define.
The generated pages (``docs/cli.md``, ``docs/layouts/``, ``docs/releases.md``) hold no examples.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PAGES = ("README.md", "docs/index.md", "docs/install.md", "docs/guides/command-line.md", "docs/exit-statuses.md",
         "docs/guides/check-and-report.md", "docs/guides/python-api.md", "docs/api.md", "docs/guides/system-topics.md",
         "docs/guides/incident-recovery.md", "docs/guides/preflight-rebuild.md", "docs/guides/exports-sql.md",
         "docs/guides/spark.md", "docs/guides/store-layouts.md", "docs/guides/specs-web-ide.md",
         "docs/guides/parser-packages.md", "docs/guides/release-differences.md", "docs/benchmarks.md",
         "docs/guides/robustness.md", "docs/development.md")


def page(name: str) -> str:
    """The text of one page, ``docs/guides/spark.md`` or ``README.md``."""
    return (ROOT / name).read_text(encoding="utf-8")


def text() -> str:
    """Every page, in reading order, as one text."""
    return "\n".join(page(p) for p in PAGES)


def python_blocks() -> list[str]:
    """The ```python blocks of every page, in reading order."""
    return re.findall(r"```python\n(.*?)```", text(), re.S)
