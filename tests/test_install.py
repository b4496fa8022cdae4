"""Installing: every package is listed for setuptools, and the README's Python examples type-check."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import docpages

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed():
    """A package (a folder with ``__init__.py``) that pyproject.toml does not list would be missing from
    ``pip install .``."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    found = set()
    for name, folder in conf["package-dir"].items():
        for d, dirs, files in os.walk(ROOT / folder):
            dirs[:] = [x for x in dirs if x != "__pycache__"]
            rel = Path(d).relative_to(ROOT / folder)
            if "__init__.py" in files:
                found.add(".".join((name, *rel.parts)))
    assert found <= listed, sorted(found - listed)
    # Folders of data only, listed so setuptools installs them without warnings.
    assert {"rmqformats.samples", "rmqformats.formats.config"} <= listed


def _readme_examples() -> str:
    """The Python examples of the README and the site's pages, in order, as one module (later examples use
    names of earlier ones); those of the Spark adapter need the Spark extra and are left out."""
    blocks = docpages.python_blocks()
    return "\n".join(b for b in blocks if "spark" not in b.lower())


def test_readme_examples_type_check(tmp_path):
    if shutil.which("mypy", path=os.path.dirname(sys.executable)) is None:
        pytest.skip("mypy is in the dev extra: run make setup")
    examples = _readme_examples()
    assert "config.consumer_offsets" in examples and "open_store" in examples
    (tmp_path / "readme_examples.py").write_text(examples)
    # Run outside the checkout, as a user's script: the package is found through the install only.
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull,
                           "readme_examples.py"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
