"""Each parser package's README, followed literally from an empty folder, reads a real segment right.

``make dist-parsers`` writes a README into every package (``rmqformats/codegen/dist.py``) whose
"Try it" section is a walkthrough in fenced blocks (read by ``tests/walkthrough.py``): a block with
a title (```` ```go title="main.go" ````) is a file to write under that name, an ``sh`` block
commands to run. This test builds one language's package into a temporary folder, then in an empty folder
holding only a real 5.3.3 commit-log segment (as ``00000000000000000000``) writes and runs the
blocks in the README's order, with ``RMQ_PARSERS`` set to the package and ``KAITAI_RUNTIME`` to
the official runtime (``$RMQFORMATS_KAITAI_RUNTIMES/<lang>``), as the README says. The last
line the last command prints must be the message count and the first and last message's topic,
queue offset and store time from RocketMQ's ground truth. Every fenced block of the README must
be one of the two kinds, so none goes untried.

What stands in for the network here is set up outside the README's folder and commands: for Go a
``file://`` module proxy serving the runtime (from the runtimes' folder) and ``golang.org/x/text``
(Debian's ``golang-golang-x-text-dev``). JavaScript installs ``kaitai-struct`` from the npm
registry. Rust needs the runtime's git repository (the crate's dependency): where it cannot be
reached, its test is skipped with that reason, and ``tests/test_dist_parsers.py`` builds the
README's ``src/main.rs`` against a vendored copy of the runtime.

The Go README's route without a module proxy (its two indented commands, in place of ``go get``
and ``go build``) is followed too, with ``GOPROXY=off``.

A language whose toolchain is missing is skipped with the missing tools named (under CI, with
``CI`` set, it fails). Each language is one test; the compiled ones take up to a minute or two.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rmqformats.codegen import dist

from conftest import FIXTURES, RUNTIMES, skip_without_runtime
from truthcmp import summary_line
from walkthrough import steps

VERSION = "rocketmq-5.3.3"
SEGMENT = FIXTURES / VERSION / "store" / "commitlog" / "00000000000000000000"
#: Debian's golang.org/x/text (golang-golang-x-text-dev), the Go runtime's one dependency.
GO_XTEXT = Path("/usr/share/gocode/src/golang.org/x/text")

#: language -> the tools its README's commands run.
TOOLS = {
    "python": ("python3",), "javascript": ("node", "npm"), "java": ("javac", "java"),
    "cpp_stl": ("cmake", "g++"), "go": ("go",), "rust": ("cargo", "rustc"), "csharp": ("mcs", "mono"),
    "ruby": ("ruby",), "php": ("php",), "lua": ("lua5.3",), "perl": ("perl",), "nim": ("nim",),
}
#: Languages whose program runs without a build step: the run prints nothing on stderr (no warning).
INTERPRETED = {"python", "ruby", "php", "lua", "perl"}

def _expected() -> str:
    return summary_line(FIXTURES / VERSION / "truth" / "messages.jsonl", SEGMENT.name)


def test_steps_read_titles_and_commands():
    readme = 'x\n\n```go title="main.go"\npackage main\n```\n\n```sh\ngo build\n./a\n```\n'
    assert steps(readme) == [("file", "main.go", "package main\n"), ("sh", "", "go build\n./a\n")]
    with pytest.raises(AssertionError, match="neither writes nor runs"):
        steps("```toml\n[dependencies]\n```\n")


def test_the_example_output_is_the_truth():
    """The example line every README quotes is what the walkthrough prints for the 5.3.3 segment."""
    assert f"`{_expected()}`" in dist._try_it("go").replace("\n", " ")


# -- what stands in for the network -------------------------------------------------------------

def _go_proxy(proxy: Path) -> None:
    """A file:// module proxy with the runtime and golang.org/x/text at the versions ``go get`` asks for."""
    text_version = re.search(r"golang\.org/x/text (v\S+)", (RUNTIMES / "go" / "go.mod").read_text())[1]
    for module, version, src in ((dist.RUNTIMES["go"].package, dist.RUNTIMES["go"].version, RUNTIMES / "go"),
                                 ("golang.org/x/text", text_version, GO_XTEXT)):
        d = proxy / module / "@v"
        d.mkdir(parents=True)
        (d / "list").write_text(version + "\n")
        (d / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2025-01-01T00:00:00Z"}))
        shutil.copy(src / "go.mod", d / f"{version}.mod")
        with zipfile.ZipFile(d / f"{version}.zip", "w") as z:
            for root, dirs, files in os.walk(src):
                dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "testdata")
                for name in sorted(files):
                    path = Path(root, name)
                    z.write(path, f"{module}@{version}/{path.relative_to(src)}")


def _environment(lang: str, pkg: Path, scratch: Path) -> dict[str, str]:
    """The README's two variables, the caches kept out of the home folder, and the network's stand-ins."""
    env = {**os.environ, "RMQ_PARSERS": str(pkg), "KAITAI_RUNTIME": str(RUNTIMES / lang),
           "XDG_CACHE_HOME": str(scratch / "cache")}
    # python3 is this interpreter, whose environment has the runtime (kaitaistruct) installed.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    if lang == "go":
        _go_proxy(scratch / "goproxy")
        env.update(GOPROXY=f"file://{scratch / 'goproxy'}", GOSUMDB="off", GOFLAGS="", GO111MODULE="on",
                   GOCACHE=str(scratch / "gocache"), GOPATH=str(scratch / "gopath"), GOTOOLCHAIN="local")
    return env


def _skip_without(lang: str) -> None:
    missing = [t for t in TOOLS[lang] if shutil.which(t) is None]
    if lang == "go" and not GO_XTEXT.is_dir():
        missing.append(f"{GO_XTEXT} (golang-golang-x-text-dev)")
    if missing:
        msg = f"{lang}: toolchain missing ({', '.join(missing)}); run `make setup-toolchains`"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    if lang not in dist.REGISTRY_RUNTIMES:
        skip_without_runtime(lang)
    if lang == "rust" and not _reachable(dist.RUNTIMES["rust"].repository):
        # Cargo resolves the crate's git dependency before any build; offline, a source replacement
        # for it needs a lock file in the consumer's folder first, which an empty folder has not.
        pytest.skip(f"rust: the crate takes its runtime from {dist.RUNTIMES['rust'].repository} at "
                    f"{dist.RUNTIMES['rust'].commit}, which cannot be reached from here; "
                    "tests/test_dist_parsers.py builds the README's src/main.rs against a vendored copy")


def _reachable(repository: str) -> bool:
    try:
        proc = subprocess.run(["git", "ls-remote", "--exit-code", repository, "HEAD"], capture_output=True,
                              timeout=30, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def test_every_language_is_followed():
    assert set(TOOLS) == set(dist.LANGUAGES)


@pytest.mark.parametrize("lang", sorted(TOOLS))
def test_readme_followed_literally(tmp_path, lang):
    _skip_without(lang)
    pkg = tmp_path / "parsers" / lang
    dist.build(tmp_path / "parsers", runtimes=RUNTIMES, languages=(lang,))
    readme = (pkg / "README.md").read_text(encoding="utf-8")
    todo = steps(readme)
    assert [kind for kind, _, _ in todo].count("sh") >= 1 and todo[-1][0] == "sh", readme
    work = tmp_path / "work"
    work.mkdir()
    shutil.copyfile(SEGMENT, work / "00000000000000000000")
    env = _environment(lang, pkg, tmp_path / "scratch")
    proc = None
    for kind, name, text in todo:
        if kind == "file":
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text, encoding="utf-8")
            continue
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=work, env=env, capture_output=True,
                              text=True, timeout=1500)
        assert proc.returncode == 0, f"{lang}: exit {proc.returncode} from\n{text}\n{proc.stdout[-3000:]}\n" \
                                     f"{proc.stderr[-6000:]}"
    assert proc is not None
    assert proc.stdout.strip().splitlines()[-1] == _expected()
    if lang in INTERPRETED:
        assert proc.stderr == "", f"{lang}: the program wrote to stderr:\n{proc.stderr}"


def test_go_readme_offline_route(tmp_path):
    """The Go README's route without a module proxy: its two indented commands in place of `go get`."""
    _skip_without("go")
    pkg = tmp_path / "parsers" / "go"
    dist.build(tmp_path / "parsers", runtimes=RUNTIMES, languages=("go",))
    readme = (pkg / "README.md").read_text(encoding="utf-8")
    offline = re.findall(r"^    (go mod edit .*|GOFLAGS=.*)$", readme, re.MULTILINE)
    assert len(offline) == 2 and str(GO_XTEXT) in offline[0], offline
    work = tmp_path / "work"
    work.mkdir()
    shutil.copyfile(SEGMENT, work / "00000000000000000000")
    env = _environment("go", pkg, tmp_path / "scratch")
    env.update(GOPROXY="off")
    for kind, name, text in steps(readme):
        if kind == "file":
            (work / name).write_text(text, encoding="utf-8")
            continue
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("go get "))
        build = next(i for i, line in enumerate(lines) if line.startswith("go build "))
        lines[at], lines[build] = offline
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(lines)], cwd=work, env=env,
                              capture_output=True, text=True, timeout=1500)
        assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert proc.stdout.strip().splitlines()[-1] == _expected()
