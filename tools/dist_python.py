"""Build the Python distributions (sdist, and the wheel built from that sdist) from the tracked files only.

    python tools/dist_python.py --out dist          # what `make dist-python` runs

The files git tracks (as they are in the working tree, edits included) are
copied into a temporary folder first, so nothing untracked (caches, local
stores, an old build/ folder) can end up in the sdist or the wheel. Outside a
git checkout (an unpacked sdist) the folder is built as it is. The wheel is
built from the sdist, as pip builds it for a user who installs the sdist; the
build runs in an isolated environment with the build requirements of
pyproject.toml (the `build` package, in the dev extra).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tracked_files(root: Path) -> list[str] | None:
    """The paths git tracks under ``root`` that exist in the working tree; ``None`` outside a git checkout."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode().split("\0") if p and os.path.isfile(root / p)]


def copy_tracked(root: Path, dest: Path) -> Path:
    """Copy ``root``'s tracked files into ``dest`` (a new folder) and return it; the whole folder outside git."""
    files = tracked_files(root)
    if files is None:
        shutil.copytree(root, dest, ignore=shutil.ignore_patterns(".venv", "build", "dist", "__pycache__"))
        return dest
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    return dest


def build(src: Path, out: Path, *, wheel_only: bool = False) -> list[Path]:
    """Run ``python -m build`` on ``src`` into ``out``: the sdist and the wheel built from it (or only a wheel
    built straight from the tree). Returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    cmd = [sys.executable, "-m", "build", "--outdir", str(out)]
    if wheel_only:
        cmd.append("--wheel")
    subprocess.run([*cmd, str(src)], check=True, stdout=subprocess.DEVNULL)
    return sorted(set(out.iterdir()) - before)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Build the sdist and wheel of rmqformats from its tracked files.")
    p.add_argument("--out", default=str(ROOT / "dist"), help="folder to write them to (default: dist/)")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    for old in glob.glob(str(out / "rmqformats-*")):  # earlier builds; other artifacts in out/ stay
        os.remove(old)
    with tempfile.TemporaryDirectory(prefix="rmqformats-dist-") as tmp:
        written = build(copy_tracked(ROOT, Path(tmp) / "src"), out)
    for path in written:
        print(f"{path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
