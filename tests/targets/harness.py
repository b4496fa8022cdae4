"""Building every target's parsers and drivers, and running a driver on files (see README.md here).

A target is a folder ``tests/targets/<name>/`` with a ``target.py`` that defines ``TARGET``, a
:class:`Target`. :func:`targets` finds them all; :func:`build` compiles every spec for the
target with the pinned compiler, writes the plans and calls the target's own ``build``;
:func:`run` runs the built driver on one job and returns its JSON with byte arrays as bytes.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rmqformats.codegen.__main__ import compile_ksy
from rmqformats.codegen.dist import runtimes_dir

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FORMATS = REPO / "formats"
KSC = REPO / "tools" / "ksc"
RUNTIMES = runtimes_dir()  # $RMQFORMATS_KAITAI_RUNTIMES, else ../shared/kaitai/runtimes

#: Environment every build and driver starts from (plus what a target adds).
BASE_ENV = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}


class BuildError(Exception):
    """A target's parsers or driver did not build; the message holds the toolchain's output."""


@dataclass(frozen=True)
class Built:
    """How to run a built driver: ``argv + [job.json]``, with ``env`` added to :data:`BASE_ENV`."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None


@dataclass(frozen=True)
class BuildContext:
    """What a target's ``build`` gets: all paths absolute."""

    generated: Path  # the compiler's output for ``specs`` (one folder, files as the compiler names them)
    plans: Path  # <spec id>.json plans (plan.py)
    work: Path  # an empty scratch folder for the build
    specs: list[str]  # the spec ids to build, e.g. ["rocketmq_checkpoint", ...]
    runtime: Path | None  # ../shared/kaitai/runtimes/<Target.runtime>, None when the target has none there
    here: Path  # tests/targets/<name>/


def run_tool(argv: list[str], *, cwd: Path | None = None, env: dict | None = None, timeout: float = 1800) -> str:
    """Run a build step; :class:`BuildError` with its output when it fails."""
    proc = subprocess.run(argv, cwd=cwd, env={**BASE_ENV, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise BuildError(f"{' '.join(map(str, argv))} (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n"
                         f"{proc.stderr[-8000:]}")
    return proc.stdout


@dataclass(frozen=True)
class Target:
    """One language: how the compiler names it, what it needs, how its driver is built."""

    name: str  # folder name under tests/targets/ and the name in the language table
    ksc: str  # the compiler's target name: python, javascript, java, cpp_stl, go, rust, ...
    tools: tuple[str, ...]  # executables that must be on PATH (else the target is skipped outside CI)
    build: Callable[[BuildContext], Built]
    runtime: str | None = None  # folder under ../shared/kaitai/runtimes/
    title: str = ""  # the language's name in the table
    #: Fields that cannot equal the truth in this language by any spec change, "<spec>.<type>.<member>" -> why.
    limits: dict[str, str] = field(default_factory=dict)

    def missing_tools(self) -> list[str]:
        return [t for t in self.tools if shutil.which(t) is None]

    def missing_runtime(self) -> Path | None:
        """The runtime folder this target builds against when it is absent; None when present or not needed."""
        if self.runtime is None or (RUNTIMES / self.runtime).is_dir():
            return None
        return RUNTIMES / self.runtime


def load_module(path: Path, name: str):
    """A module of a target's folder, by file (targets' helper modules may share a file name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def targets() -> dict[str, Target]:
    """Every ``tests/targets/<name>/target.py``'s ``TARGET``, by name."""
    found = {}
    for path in sorted(HERE.glob("*/target.py")):
        spec = importlib.util.spec_from_file_location(f"rmq_target_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        target = module.TARGET
        if target.name != path.parent.name:
            raise ValueError(f"{path}: TARGET.name {target.name!r} is not its folder's name")
        found[target.name] = target
    return found


def spec_ids() -> list[str]:
    return sorted(p.stem for p in FORMATS.glob("*.ksy"))


def compile_specs(target: Target, specs: list[str], out: Path) -> Path:
    """The compiler's output for ``specs`` in ``out`` (raises :class:`BuildError` on a compiler error)."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        compile_ksy(target.ksc, [FORMATS / f"{s}.ksy" for s in specs], out, KSC)
    except SystemExit as err:
        raise BuildError(str(err)) from None
    return out


@dataclass(frozen=True)
class Driver:
    """A built driver with the plans and compiler output its jobs point at."""

    target: Target
    built: Built
    plans: Path
    generated: Path

    def run(self, spec_id: str, files, *, tmp: Path, instances=(), filter=None) -> list:
        return run(self.built, self.plans, self.generated, spec_id, files, tmp=tmp, instances=instances,
                   filter=filter)


def build(target: Target, specs: list[str], work: Path) -> Driver:
    """Compile ``specs`` and build the driver in ``work`` (a fresh folder)."""
    from plan import write_plans  # tests/targets is on sys.path in the tests

    work.mkdir(parents=True, exist_ok=True)
    generated = compile_specs(target, specs, work / "generated")
    plans = work / "plans"
    write_plans(plans, [FORMATS / f"{s}.ksy" for s in specs])
    scratch = work / "build"
    scratch.mkdir()
    runtime = RUNTIMES / target.runtime if target.runtime else None
    ctx = BuildContext(generated=generated, plans=plans, work=scratch, specs=list(specs), runtime=runtime,
                       here=HERE / target.name)
    return Driver(target, target.build(ctx), plans, generated)


def _bytes(value):
    """Driver JSON with its ``{"$b64": ...}`` byte arrays as bytes."""
    if isinstance(value, dict):
        if set(value) == {"$b64"}:
            return base64.b64decode(value["$b64"])
        # Keys starting with "_" are a driver's extras (the JavaScript dumper's "_label"), except "_error".
        return {k: _bytes(v) for k, v in value.items() if not k.startswith("_") or k == "_error"}
    if isinstance(value, list):
        return [_bytes(v) for v in value]
    return value


def run(built: Built, plans: Path, generated: Path, spec_id: str, files, *, tmp: Path, instances=(),
        filter=None, timeout: float = 900) -> list:
    """One job: ``files`` are paths or ``(path, offset, length)``; one result per file, in order."""
    job = {
        "spec": spec_id, "plan": str(plans / f"{spec_id}.json"), "ksy": str(FORMATS / f"{spec_id}.ksy"),
        "generated": str(generated),
        "files": [{"path": str(f), "offset": 0, "length": None} if not isinstance(f, tuple) else
                  {"path": str(f[0]), "offset": f[1], "length": f[2]} for f in files],
        "instances": list(instances), "filter": filter,
    }
    tmp.mkdir(parents=True, exist_ok=True)
    job_path = tmp / f"job-{spec_id}-{os.getpid()}-{len(list(tmp.iterdir()))}.json"
    job_path.write_text(json.dumps(job))
    proc = subprocess.run([*built.argv, str(job_path)], capture_output=True, text=True, cwd=built.cwd,
                          env={**BASE_ENV, **built.env}, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"driver failed on {spec_id} (exit {proc.returncode}): {proc.stderr[-4000:]}")
    out = _bytes(json.loads(proc.stdout))
    if len(out) != len(files):
        raise RuntimeError(f"driver printed {len(out)} results for {len(files)} files")
    return out
