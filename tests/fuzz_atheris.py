"""Coverage-guided fuzzing of every reader and command with atheris (``pip install -e '.[fuzz]'``).

The same targets as ``tests/test_fuzz.py`` (``tests/fuzz_targets.py``): each
input picks a file kind and a file of a copy of the 5.3.3 vector store and
mutates it (atheris's own byte mutations of the input drive which bytes
change and how); then every reader and command of that kind runs. A crash
is any exception that is not one of the package's typed errors, a command
exit status outside the table, or a run longer than ``-timeout``.

    .venv/bin/python tests/fuzz_atheris.py -runs=20000 -timeout=60 -rss_limit_mb=4096

Not collected by pytest (no ``test_`` prefix); the suite runs the
hypothesis version. Results of a run are kept in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

with atheris.instrument_imports():
    import rmqformats  # noqa: F401
    import rmqformats.cli  # noqa: F401
    import rmqformats.config  # noqa: F401
    import fuzz_targets as targets

KINDS = sorted(targets.FILES)
WIDTHS = (1, 2, 4, 8)
ROOT = os.path.join(tempfile.mkdtemp(prefix="rmqformats-fuzz-"), "store")
shutil.copytree(targets.VECTOR_STORE, ROOT)
PRISTINE = {rel: open(os.path.join(ROOT, rel), "rb").read() for rels in targets.FILES.values() for rel in rels}


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    kind = KINDS[fdp.ConsumeIntInRange(0, len(KINDS) - 1)]
    rel = targets.FILES[kind][fdp.ConsumeIntInRange(0, len(targets.FILES[kind]) - 1)]
    pristine = PRISTINE[rel]
    n = len(pristine)
    ops = []
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        choice = fdp.ConsumeIntInRange(0, 5 if kind == "config" else 3)
        near = fdp.ConsumeBool()
        pos = fdp.ConsumeIntInRange(0, max(0, min(n - 1, 600) if near else n - 1))
        if choice == 0:
            ops.append(("xor", pos, fdp.ConsumeIntInRange(1, 255)))
        elif choice == 1:
            width = WIDTHS[fdp.ConsumeIntInRange(0, 3)]
            ops.append(("set", pos, width, fdp.ConsumeInt(8 * width)))
        elif choice == 2:
            ops.append(("zero", pos, fdp.ConsumeIntInRange(1, 64)))
        elif choice == 3:
            ops.append(("cut", pos))
        elif choice == 4:
            ops.append(("insert", pos, fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(1, 12))))
        else:
            ops.append(("delete", pos, fdp.ConsumeIntInRange(1, 8)))
    path = os.path.join(ROOT, rel)
    with open(path, "wb") as f:
        f.write(targets.mutate(pristine, ops))
    try:
        targets.run(kind, ROOT, rel)
    finally:
        with open(path, "wb") as f:
            f.write(pristine)


def main() -> None:
    targets.warm_up(ROOT)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
