"""The README's two commands for a fresh machine, in a clone that lives elsewhere and has no ``../shared``.

The clone is made from this checkout's committed ``HEAD`` in a temporary folder, set up with
``make setup`` as a new user would, and then runs the sample summary, a part of ``make test``
that needs the Kaitai runtimes (which such a clone does not have beside it: those tests must be
skipped with one line naming the folder, not fail) and ``make dist`` (which must write every
package it can and name the ones it leaves out). The variables CI sets are removed, as on a
user's machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    if shutil.which("git") is None or shutil.which("make") is None or shutil.which("npm") is None:
        pytest.skip("needs git, make and npm")
    if _run(["git", "rev-parse", "--git-dir"], REPO, dict(os.environ), 60).returncode != 0:
        pytest.skip("not a git checkout")
    where = tmp_path_factory.mktemp("elsewhere") / "rmqformats"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(where)], check=True,
                   capture_output=True, timeout=600)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "RMQFORMATS_KAITAI_RUNTIMES", "VIRTUAL_ENV", "PYTHONPATH", "MAKEFLAGS", "MAKELEVEL")}
    assert not (where.parent / "shared").exists()
    setup = _run(["make", "setup"], where, env, 1800)
    assert setup.returncode == 0, setup.stderr[-3000:]
    return where, env


def test_the_sample_summary_runs(clone):
    where, env = clone
    run = _run([str(where / ".venv" / "bin" / "rmqformats"), "inspect", "--sample"], where, env, 600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "TopicTest" in run.stdout or "topic" in run.stdout.lower()


def test_tests_without_the_runtimes_are_skipped_with_one_named_line(clone):
    where, env = clone
    run = _run(["make", "test", "PYTEST_ARGS=tests/test_dist_parsers.py -k 'lua or laid_out'"], where, env, 1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    missing = where.parent / "shared" / "kaitai" / "runtimes"
    lines = [line for line in run.stdout.splitlines() if "CROSS-LANGUAGE TESTS SKIPPED" in line]
    assert len(lines) == 1 and str(missing) in lines[0], run.stdout[-3000:]
    assert "failed" not in run.stdout.splitlines()[-1]


def test_dist_writes_what_it_can_and_names_what_it_leaves_out(clone):
    where, env = clone
    run = _run(["make", "dist"], where, env, 1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "left out java" in run.stderr
    parsers = where / "dist" / "parsers"
    assert not (parsers / "java").exists()
    assert (parsers / "go" / "go.mod").is_file() and (parsers / "python").is_dir()
    assert not [p.name for p in parsers.iterdir() if p.name.startswith(".")]
    assert list((where / "dist").glob("rmqformats-*.whl")) and list((where / "dist").glob("rmqformats-*.tar.gz"))
