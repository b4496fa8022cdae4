"""The per-language parser packages of ``make dist-parsers`` work for a consumer of each language.

The packager (``rmqformats.codegen.dist``) writes every package into a temporary folder; for
each language the program of the package README's walkthrough (its files, read by
``tests/walkthrough.py``) is built against that package (not against the repository tree) and
the official runtime (``../shared/kaitai/runtimes/<lang>``; npm's ``kaitai-struct`` from
``tools/ksc`` and PyPI's ``kaitaistruct`` for JavaScript and Python), without the network (the
README's own commands, some of which need a registry, are followed by
``tests/test_package_readmes.py``), reads one real commit-log segment and prints the number of
messages, the first and last message's topic and queue offset and the last one's store
timestamp; these must equal RocketMQ's ground truth. A language whose toolchain is missing fails under CI (``CI`` set)
and is skipped with the missing tools named otherwise (``make setup-toolchains`` installs them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from rmqformats.codegen import dist

from conftest import FIXTURES, RUNTIMES, skip_without_runtime
from truthcmp import summary_line
from walkthrough import write_files

REPO = Path(__file__).resolve().parents[1]
KSC_MODULES = REPO / "tools" / "ksc" / "node_modules"
VERSION = "rocketmq-5.3.3"
SEGMENT = FIXTURES / VERSION / "store" / "commitlog" / "00000000000000000000"
#: Debian's golang.org/x/text (the Go runtime's one dependency), as tests/targets/go uses it.
GO_XTEXT = "/usr/share/gocode/src/golang.org/x/text"
#: Debian's crate registry and shims for the two runtime crates Debian lacks (as tests/targets/rust).
CARGO_REGISTRY = "/usr/share/cargo/registry"


def _expected() -> str:
    return summary_line(FIXTURES / VERSION / "truth" / "messages.jsonl", SEGMENT.name)


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> Path:
    """Every language's package, as ``make dist-parsers`` writes them."""
    skip_without_runtime()
    out = tmp_path_factory.mktemp("dist") / "parsers"
    dist.build(out, runtimes=RUNTIMES)
    return out


@pytest.fixture(scope="module")
def package_of(tmp_path_factory):
    """One language's package (built on first use), so that each language is judged on its own."""
    out = tmp_path_factory.mktemp("dist-one") / "parsers"

    def get(lang: str) -> Path:
        if not (out / lang).is_dir():
            dist.build(out, runtimes=RUNTIMES, languages=(lang,))
        return out / lang
    return get


def _run(argv, *, cwd=None, env=None, what: str) -> str:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"{what}: {' '.join(map(str, argv))}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc.stdout


# -- one consumer per language: (package folder, scratch folder) -> what it printed -------------
# Each writes the program of the package README's walkthrough (walkthrough.write_files) and builds and
# runs it without the network; tests/test_package_readmes.py runs the README's own commands.

def _python(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    # The package on the path as the README puts it (PYTHONPATH), the user's site-packages left out (-s).
    return _run([sys.executable, "-s", work / "read_commitlog.py", SEGMENT], cwd=work,
                env={"PYTHONPATH": str(pkg)}, what="python consumer")


def _javascript(pkg: Path, work: Path) -> str:
    modules = work / "node_modules"
    # As `npm install` of the packed package would place it and its runtime; the README's `npm pack` and
    # `npm install` need the registry, so the runtime comes from tools/ksc (npm's kaitai-struct) instead.
    shutil.copytree(pkg, modules / dist.NPM_NAME)
    (modules / "kaitai-struct").symlink_to(KSC_MODULES / "kaitai-struct")
    write_files(pkg, work)
    env = {"NODE_PATH": ""}
    return _run(["node", work / "read_commitlog.js", SEGMENT], cwd=work, env=env, what="javascript consumer")


def _ruby(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    return _run(["ruby", "-I", RUNTIMES / "ruby" / "lib", "-I", pkg, work / "read_commitlog.rb", SEGMENT],
                what="ruby consumer")


def _php(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    env = {"KAITAI_RUNTIME": str(RUNTIMES / "php"), "RMQ_PARSERS": str(pkg)}  # the program reads both
    return _run(["php", work / "read_commitlog.php", SEGMENT], env=env, what="php consumer")


def _lua(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    env = {"LUA_PATH": f"{RUNTIMES / 'lua'}/?.lua;{pkg}/?.lua;;"}
    return _run(["lua5.3", work / "read_commitlog.lua", SEGMENT], env=env, what="lua consumer")


def _perl(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    return _run(["perl", "-I", RUNTIMES / "perl" / "lib", "-I", pkg, work / "read_commitlog.pl", SEGMENT],
                what="perl consumer")


def _nim(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    exe = work / "read_commitlog"
    # --rangeChecks:off as the package README says (an integer outside an enum's range would raise RangeDefect).
    _run(["nim", "c", "--hints:off", "--warnings:off", "--rangeChecks:off", f"--nimcache:{work / 'cache'}",
          f"--path:{RUNTIMES / 'nim'}", f"--path:{pkg}", f"--out:{exe}", work / "read_commitlog.nim"],
         what="nim build")
    return _run([exe, SEGMENT], what="nim consumer")


def _csharp(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    exe = work / "read_commitlog.exe"
    # A consumer compiles the classes it uses: the commit-log parser and the runtime.
    _run(["mcs", "-nologo", "-nowarn:0108,0114,0162,0168,0219,0414", f"-out:{exe}",
          RUNTIMES / "csharp" / "KaitaiStream.cs", RUNTIMES / "csharp" / "KaitaiStruct.cs",
          pkg / "RocketmqCommitlog.cs", work / "ReadCommitlog.cs"],
         what="c# build")
    return _run(["mono", exe, SEGMENT], what="c# consumer")


def _go(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    runtime = dist.RUNTIMES["go"]
    # The README's `go mod init` and `go get` need a module proxy: this go.mod gives the package, the
    # runtime and golang.org/x/text as local folders (GOPROXY=off).
    (work / "go.mod").write_text(
        f"module consumer\n\ngo 1.19\n\nrequire (\n\t{dist.GO_MODULE} v{dist.VERSION}\n"
        f"\t{runtime.package} {runtime.version}\n\tgolang.org/x/text v0.0.0\n)\n\n"
        f"replace {dist.GO_MODULE} => {pkg}\n\nreplace {runtime.package} => {RUNTIMES / 'go'}\n\n"
        f"replace golang.org/x/text => {GO_XTEXT}\n")
    env = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": str(work / "gocache"), "GOPATH": str(work / "gopath"),
           "GO111MODULE": "on", "GOTOOLCHAIN": "local"}
    _run(["go", "build", "-o", work / "read_commitlog", "."], cwd=work, env=env, what="go build")
    return _run([work / "read_commitlog", SEGMENT], what="go consumer")


def _java(pkg: Path, work: Path) -> str:
    write_files(pkg, work)
    runtime = work / "runtime"
    _run(["javac", "-nowarn", "-d", runtime, *sorted((RUNTIMES / "java" / "src" / "main" / "java").rglob("*.java"))],
         what="java runtime")
    jar = pkg / "rmqformats-parsers.jar"
    cp = f"{jar}{os.pathsep}{runtime}"
    _run(["javac", "-cp", cp, "-d", work / "classes", work / "ReadCommitlog.java"], what="java build")
    return _run(["java", "-cp", f"{cp}{os.pathsep}{work / 'classes'}", "ReadCommitlog", SEGMENT],
                what="java consumer")


#: The line of the C++ README's CMakeLists.txt that gives the runtime's folder as a plain variable.
CMAKE_RUNTIME_LINE = "set(KAITAI_STRUCT_RUNTIME_DIR $ENV{KAITAI_RUNTIME})\n"


def _cpp(pkg: Path, work: Path) -> str:
    files = write_files(pkg, work)
    # The README's CMakeLists.txt without its `set(KAITAI_STRUCT_RUNTIME_DIR ...)`: the runtime's folder
    # comes from -DKAITAI_STRUCT_RUNTIME_DIR on the command line instead, the package CMakeLists.txt's other
    # route (its cache entry), which tests/test_package_readmes.py (the plain `set`) does not take.
    assert CMAKE_RUNTIME_LINE in files["CMakeLists.txt"], files["CMakeLists.txt"]
    (work / "CMakeLists.txt").write_text(files["CMakeLists.txt"].replace(CMAKE_RUNTIME_LINE, ""))
    build = work / "build"
    env = {"RMQ_PARSERS": str(pkg)}
    _run(["cmake", "-S", work, "-B", build, f"-DKAITAI_STRUCT_RUNTIME_DIR={RUNTIMES / 'cpp_stl'}",
          "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS=-w"], env=env, what="cmake configure")
    _run(["cmake", "--build", build, "--parallel", "2"], env=env, what="cmake build")
    return _run([build / "read_commitlog", SEGMENT], what="c++ consumer")


def _rust(pkg: Path, work: Path) -> str:
    crate = work / "consumer"
    (crate / "src").mkdir(parents=True)
    # The README's src/main.rs (tests/test_package_readmes.py follows the rest of the walkthrough where the
    # runtime's repository can be reached).
    write_files(pkg, crate)
    shims = work / "shims"
    (shims / "encoding-next").mkdir(parents=True)
    (shims / "encoding-next" / "Cargo.toml").write_text(
        '[package]\nname = "encoding-next"\nversion = "0.3.0"\nedition = "2018"\n\n[lib]\nname = "encoding"\n'
        'path = "lib.rs"\n\n[dependencies]\nenc = { package = "encoding", version = "0.2" }\n')
    (shims / "encoding-next" / "lib.rs").write_text("pub use enc::*;\n")
    (shims / "cp437").mkdir()
    (shims / "cp437" / "Cargo.toml").write_text('[package]\nname = "cp437"\nversion = "0.1.0"\nedition = "2018"\n\n'
                                                '[lib]\npath = "lib.rs"\n')
    (shims / "cp437" / "lib.rs").write_text(
        "pub struct Reader<'a, I: Iterator<Item = std::io::Result<u8>>> { it: &'a mut I }\n"
        "impl<'a, I: Iterator<Item = std::io::Result<u8>>> Reader<'a, I> {\n"
        "    pub fn new(it: &'a mut I) -> Self { Reader { it } }\n"
        "    pub fn consume(&mut self, n: usize) -> String {\n"
        "        self.it.take(n).map(|b| match b { Ok(b) if b < 0x80 => b as char, _ => '\\u{fffd}' }).collect()\n"
        "    }\n}\n")
    runtime = dist.RUNTIMES["rust"]
    # The package names the runtime by its repository and commit. Offline, a vendored copy of the
    # shared runtime (in this test's scratch folder) stands in for that git source, as `cargo
    # vendor` would lay it out.
    vendor = work / "vendor"
    shutil.copytree(RUNTIMES / "rust", vendor / "kaitai", ignore=shutil.ignore_patterns("target", "Cargo.lock"))
    (vendor / "kaitai" / ".cargo-checksum.json").write_text('{"files":{},"package":null}')
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "consumer"\nversion = "0.0.0"\nedition = "2018"\n\n'
        f'[dependencies]\n{dist.CRATE_NAME} = {{ path = "{pkg}" }}\n\n'
        f'[patch.crates-io]\nencoding-next = {{ path = "{shims / "encoding-next"}" }}\n'
        f'cp437 = {{ path = "{shims / "cp437"}" }}\n')
    # A vendored git source needs the commit pinned in the lock file first.
    (crate / "Cargo.lock").write_text(
        '# cargo lock\nversion = 3\n\n[[package]]\nname = "kaitai"\nversion = "0.11.0"\n'
        f'source = "git+{runtime.repository}?rev={runtime.commit}#{runtime.commit}"\n')
    (crate / ".cargo").mkdir()
    (crate / ".cargo" / "config.toml").write_text(
        f'[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "{CARGO_REGISTRY}"\n\n'
        f'[source.kaitai-git]\ngit = "{runtime.repository}"\nrev = "{runtime.commit}"\nreplace-with = "vendored"\n\n'
        f'[source.vendored]\ndirectory = "{vendor}"\n\n[net]\noffline = true\n')
    env = {"CARGO_HOME": str(work / "cargo-home"), "CARGO_TARGET_DIR": str(work / "target")}
    _run(["cargo", "build", "--quiet", "--offline"], cwd=crate, env=env, what="cargo build")
    return _run([work / "target" / "debug" / "consumer", SEGMENT], what="rust consumer")


#: language -> (tools that must be on PATH, consumer).
CONSUMERS = {
    "python": ((), _python),
    "javascript": (("node",), _javascript),
    "ruby": (("ruby",), _ruby),
    "php": (("php",), _php),
    "lua": (("lua5.3",), _lua),
    "perl": (("perl",), _perl),
    "nim": (("nim",), _nim),
    "csharp": (("mcs", "mono"), _csharp),
    "go": (("go",), _go),
    "java": (("javac", "java"), _java),
    "cpp_stl": (("cmake", "g++"), _cpp),
    "rust": (("cargo", "rustc"), _rust),
}


#: Consumers that take their runtime from a package registry (PyPI's kaitaistruct, npm's kaitai-struct
#: in tools/ksc), not from the runtimes' folder.
NO_RUNTIME_NEEDED = {"python", "javascript"}

FIELDS = ("messages", "first_topic", "first_queue_offset", "last_topic", "last_queue_offset", "last_store_timestamp")

#: What a language cannot read right, by consumer field, and why (the README's language table says
#: the same). Each named field must still differ: a limit that went away fails the test.
LIMITS: dict[str, tuple[set[str], str]] = {}


#: Languages whose package cannot build the commit-log parser, and why: the consumer's build must
#: still fail (a limit that went away fails the test), then the language is skipped with the reason.
BUILD_LIMITS: dict[str, str] = {}


def test_every_language_has_a_consumer():
    assert set(CONSUMERS) == set(dist.LANGUAGES)


@pytest.mark.parametrize("lang", sorted(CONSUMERS))
def test_consumer_reads_a_real_segment(package_of, tmp_path, lang):
    tools, consume = CONSUMERS[lang]
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        msg = f"{lang}: toolchain missing ({', '.join(missing)}); run `make setup-toolchains`"
        if os.environ.get("CI"):
            pytest.fail(msg)
        warnings.warn(msg)
        pytest.skip(msg)
    if lang not in NO_RUNTIME_NEEDED:
        skip_without_runtime(lang)
    pkg = package_of(lang)
    assert (pkg / "README.md").is_file()
    assert dist.RUNTIMES[lang].repository in (pkg / "README.md").read_text(encoding="utf-8")
    if lang in BUILD_LIMITS:
        with pytest.raises(AssertionError, match="CS0031"):
            consume(pkg, tmp_path)
        pytest.skip(f"{lang}: {BUILD_LIMITS[lang]}")
    got = dict(zip(FIELDS, consume(pkg, tmp_path).strip().split(" ")))
    want = dict(zip(FIELDS, _expected().split(" ")))
    limited, why = LIMITS.get(lang, (set(), ""))
    assert {k: got.get(k) for k in FIELDS if k not in limited} == {k: want[k] for k in FIELDS if k not in limited}
    assert all(got.get(k) != want[k] for k in limited), f"{lang}: a named limit no longer differs ({why})"


def test_packages_are_laid_out_for_their_tools(packages):
    """go.mod, package clauses, the jar, CMakeLists.txt, package.json and Cargo.toml are there."""
    go = packages / "go"
    assert f"module {dist.GO_MODULE}" in (go / "go.mod").read_text()
    assert all(f"package {dist.GO_PACKAGE}" in p.read_text() for p in go.glob("*.go"))
    assert (packages / "java" / "rmqformats-parsers.jar").stat().st_size > 0
    assert "add_library(rmqformats_parsers" in (packages / "cpp_stl" / "CMakeLists.txt").read_text()
    npm = json.loads((packages / "javascript" / "package.json").read_text())
    assert npm["dependencies"] == {"kaitai-struct": "0.11.0"}
    assert all((packages / "javascript" / f).is_file() for f in npm["files"])
    assert 'name = "rmqformats-parsers"' in (packages / "rust" / "Cargo.toml").read_text()
    specs = sorted(p.stem for p in (REPO / "formats").glob("*.ksy"))
    assert sorted(p.stem for p in (packages / "ruby").glob("*.rb")) == specs
    assert sorted(p.stem for p in (packages / "rust" / "src").glob("*.rs") if p.stem != "lib") == specs
