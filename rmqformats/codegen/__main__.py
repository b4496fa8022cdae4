"""Regenerate ``generated/`` from ``formats/``: ``python -m rmqformats.codegen --out generated``.

For every ``formats/*.ksy`` this writes

* ``kaitai/<id>.py``: the Kaitai Struct Python parser, from the pinned npm
  ``kaitai-struct-compiler`` in ``tools/ksc`` (``npm ci --prefix tools/ksc``);
* ``construct/<id>.py``: the construct schema, from :mod:`.construct_gen`;
* ``layouts/<id>.py``: the fast-path layout tables, from :mod:`.layout_gen`.

It first checks every spec with :mod:`.widths` and :mod:`.names` and refuses
to generate when an expression mixes integer types that a target computes
wrong or refuses, or a name does not build in a target.

Files of specs that no longer exist are removed, so the folder mirrors the specs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

from . import construct_gen, layout_gen, names, widths

REPO = Path(__file__).resolve().parents[2]

_PACKAGE_DOCS = {
    "": "Parsers generated from the specs in formats/; do not edit, run `make generate`.",
    "kaitai": "Kaitai Struct Python parsers, compiled from formats/ by kaitai-struct-compiler.",
    "construct": "construct schemas (parse and build), generated from formats/ by rmqformats.codegen.",
    "layouts": "Fast-path layout tables (field order, struct formats, enums, bit masks) derived from formats/.",
}


def compile_ksy(lang: str, specs: list[Path], out: Path, ksc: Path) -> None:
    """Compile ``specs`` to ``lang`` with the pinned compiler; raises on any compiler error."""
    script = ksc / "compile.js"
    if not (ksc / "node_modules" / "kaitai-struct-compiler").is_dir():
        raise SystemExit(f"{ksc}/node_modules is missing: run `npm ci --prefix {ksc}` (or `make setup`)")
    proc = subprocess.run(["node", str(script), "--lang", lang, "--out", str(out), *map(str, specs)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"kaitai-struct-compiler ({lang}) failed:\n{proc.stderr}")


def generate(out: Path, formats: Path, ksc: Path, only: list[str] | None = None) -> list[Path]:
    """Write every generated file under ``out``; returns the paths written.

    With ``only`` (spec ids such as ``rocketmq_index_file``), just those specs
    are regenerated and the other files are left as they are.
    """
    specs = sorted(formats.glob("*.ksy"))
    if only:
        missing = set(only) - {p.stem for p in specs}
        if missing:
            raise SystemExit(f"no such spec in {formats}: {', '.join(sorted(missing))}")
        specs = [p for p in specs if p.stem in only]
    for sub, doc in _PACKAGE_DOCS.items():
        folder = out / sub
        folder.mkdir(parents=True, exist_ok=True)
        if not only:
            for old in folder.glob("*.py"):
                old.unlink()
        (folder / "__init__.py").write_text(f'"""{doc}"""\n')
    mixed = [f"{path.name}{finding}" for path in specs
             for finding in widths.check_spec(yaml.safe_load(path.read_text(encoding="utf-8")))]
    if mixed:
        raise SystemExit("integer operands that some target computes wrong or refuses (Go, Java, C++, C#, Rust):\n"
                         + "\n".join(mixed))
    refused = [f"{path.name}{finding}" for path in specs
               for finding in names.check_spec(yaml.safe_load(path.read_text(encoding="utf-8")))
               if f"{path.stem}{finding.path}" not in names.OPEN]
    if refused:
        raise SystemExit("names that some target cannot build:\n" + "\n".join(refused))
    compile_ksy("python", specs, out / "kaitai", ksc)
    for path in specs:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        name = f"{spec['meta']['id']}.py"
        source = f"formats/{path.name}"
        (out / "construct" / name).write_text(construct_gen.generate(spec, source))
        (out / "layouts" / name).write_text(layout_gen.generate(spec, source))
    return sorted(p for p in out.rglob("*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rmqformats.codegen", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "generated")
    parser.add_argument("--formats", type=Path, default=REPO / "formats")
    parser.add_argument("--ksc", type=Path, default=REPO / "tools" / "ksc")
    parser.add_argument("--only", nargs="+", metavar="SPEC_ID",
                        help="regenerate only these specs (file names without .ksy)")
    args = parser.parse_args(argv)
    for path in generate(args.out, args.formats, args.ksc, args.only):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
