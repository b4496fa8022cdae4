"""Ready-to-use parser packages for every Kaitai language: ``python -m rmqformats.codegen.dist --out dist/parsers``.

Every spec in ``formats/`` is compiled with the pinned ``kaitai-struct-compiler`` (``tools/ksc``)
for each language, and the output is laid out as that language's users expect it, under
``OUT/<language>/``:

* ``go``: a Go module (``go.mod`` requiring the Kaitai Go runtime; the compiler writes no
  ``package`` clause, so one is added to every file);
* ``java``: the sources in the Java package ``rmqformats.parsers`` and
  ``rmqformats-parsers.jar``, compiled with ``javac`` against the Kaitai Java runtime;
* ``cpp_stl``: the C++ sources and a ``CMakeLists.txt`` building a static library;
* ``javascript``: an npm package (``package.json`` depending on ``kaitai-struct``, the
  generated UMD modules and an ``index.js`` exporting every root class);
* ``rust``: a crate (``Cargo.toml``, ``src/lib.rs`` with one module per spec);
* ``python``, ``ruby``, ``php``, ``lua``, ``perl``, ``nim``, ``csharp``: the sources.

Each folder has a README naming the runtime it needs (repository, version, commit) and how to
use the package. The runtimes themselves are not copied: the Java jar is only compiled against
the Java runtime (``--runtimes``; by default ``$RMQFORMATS_KAITAI_RUNTIMES``, else
``../shared/kaitai/runtimes`` beside the checkout: see :func:`runtimes_dir`).

A language that cannot be packaged here (a missing toolchain or runtime) is left out and named,
and the command still writes every other package; ``--strict`` (CI) makes that an error. A
package folder is replaced only once its new content is complete, never left half written.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from .__main__ import compile_ksy

REPO = Path(__file__).resolve().parents[2]

#: The environment variable naming the folder of the official Kaitai runtimes (one folder per language).
RUNTIMES_ENV = "RMQFORMATS_KAITAI_RUNTIMES"


def runtimes_dir() -> Path:
    """Where the official Kaitai runtimes are: ``$RMQFORMATS_KAITAI_RUNTIMES``, else ``../shared/kaitai/runtimes``.

    The cross-language tests, the parser packages' tests and ``make dist-parsers`` all read them here.
    """
    value = os.environ.get(RUNTIMES_ENV)
    return Path(value).resolve() if value else REPO.parent / "shared" / "kaitai" / "runtimes"


def _project_version() -> str:
    """The version in pyproject.toml (the checkout's, which the packages are built from), or the installed
    package's version where there is no checkout."""
    if not (REPO / "pyproject.toml").is_file():
        from importlib.metadata import version
        return version("rmqformats")
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not match:
        raise RuntimeError(f"{REPO / 'pyproject.toml'}: no version line")
    return match.group(1)


#: The package version of every artifact: the project's version.
VERSION = _project_version()
#: Names the packages are published under.
GO_MODULE = "rmqformats/parsers"
GO_PACKAGE = "rmqformats"
JAVA_PACKAGE = "rmqformats.parsers"
NPM_NAME = "rmqformats-parsers"
CRATE_NAME = "rmqformats-parsers"
#: The compiler release the sources come from (tools/ksc/package.json pins it).
COMPILER = "kaitai-struct-compiler 0.11.0"


@dataclass(frozen=True)
class Runtime:
    """The official Kaitai runtime a language's package needs."""

    repository: str
    version: str  # the release matching the compiler
    commit: str  # the commit the package was built and tested with
    package: str  # how the language's package manager names it


RUNTIMES = {
    "go": Runtime("https://github.com/kaitai-io/kaitai_struct_go_runtime", "v0.11.0", "682f207c0b73",
                  "github.com/kaitai-io/kaitai_struct_go_runtime"),
    "java": Runtime("https://github.com/kaitai-io/kaitai_struct_java_runtime", "0.11", "a9d3563222ab",
                    "io.kaitai:kaitai-struct-runtime"),
    "cpp_stl": Runtime("https://github.com/kaitai-io/kaitai_struct_cpp_stl_runtime", "0.11", "2adaed9712c4",
                       "kaitai_struct_cpp_stl_runtime"),
    "javascript": Runtime("https://github.com/kaitai-io/kaitai_struct_javascript_runtime", "0.11.0", "npm 0.11.0",
                          "kaitai-struct"),
    "python": Runtime("https://github.com/kaitai-io/kaitai_struct_python_runtime", "0.11", "PyPI 0.11",
                      "kaitaistruct"),
    "ruby": Runtime("https://github.com/kaitai-io/kaitai_struct_ruby_runtime", "0.11", "065449916322",
                    "kaitai-struct"),
    "php": Runtime("https://github.com/kaitai-io/kaitai_struct_php_runtime", "0.11", "3f90ca1a7d54",
                   "kaitai-io/kaitai_struct_php_runtime"),
    "lua": Runtime("https://github.com/kaitai-io/kaitai_struct_lua_runtime", "0.11", "9370999b9661",
                   "kaitai_struct_lua_runtime"),
    "perl": Runtime("https://github.com/kaitai-io/kaitai_struct_perl_runtime", "0.011_000", "a4e2e940599c",
                    "IO::KaitaiStruct"),
    "rust": Runtime("https://github.com/kaitai-io/kaitai_struct_rust_runtime", "0.11.0", "99596131793229",
                    "kaitai"),
    "nim": Runtime("https://github.com/kaitai-io/kaitai_struct_nim_runtime", "0.11.0", "1f1cd4c3145b",
                   "kaitai_struct_nim_runtime"),
    "csharp": Runtime("https://github.com/kaitai-io/kaitai_struct_csharp_runtime", "0.11", "cb3bdfe60892",
                      "KaitaiStruct.Runtime.CSharp"),
}

TITLES = {"go": "Go", "java": "Java", "cpp_stl": "C++ (STL)", "javascript": "JavaScript", "python": "Python",
          "ruby": "Ruby", "php": "PHP", "lua": "Lua 5.3", "perl": "Perl", "rust": "Rust", "nim": "Nim",
          "csharp": "C#"}
LANGUAGES = tuple(RUNTIMES)


class DistError(Exception):
    """A language's package could not be built; the message says which and why."""


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def _spec_ids(formats: Path) -> list[str]:
    return [yaml.safe_load(p.read_text(encoding="utf-8"))["meta"]["id"] for p in sorted(formats.glob("*.ksy"))]


def _readme(lang: str, specs: list[str], usage: str, extra: str = "") -> str:
    rt = RUNTIMES[lang]
    listed = "\n".join(f"- `{s}`" for s in specs)
    return f"""# Apache RocketMQ store file parsers for {TITLES[lang]}

Parsers for Apache RocketMQ broker store files (commit log, consume queues, index files,
checkpoint, timer files, RocksDB keys and values, …), generated by {COMPILER} from the
Kaitai Struct specs of rmqformats {VERSION} (`formats/*.ksy`). Do not edit: regenerate with
`make dist-parsers`.

## Runtime

These parsers need the official Kaitai Struct runtime for {TITLES[lang]}:

| | |
|---|---|
| package | `{rt.package}` |
| repository | {rt.repository} |
| version | {rt.version} (built and tested with {rt.commit}) |

## Use

{usage.strip()}
{extra}
## Specs

One root class per spec (the spec id in the language's spelling):

{listed}
"""


def _run(argv: list, *, cwd: Path | None = None, what: str) -> None:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise DistError(f"{what}: {' '.join(map(str, argv))} failed (exit {proc.returncode}):\n"
                        f"{proc.stdout[-2000:]}{proc.stderr[-4000:]}")


def _compiled(lang: str, specs: list[Path], ksc: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    try:
        compile_ksy(lang, specs, into, ksc)
    except SystemExit as err:
        raise DistError(str(err)) from None
    return into


# -- one function per language: (compiler output, package folder, spec ids, runtimes) ---------

def _go(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
    for src in sorted(gen.glob("*.go")):
        text = src.read_text(encoding="utf-8")
        first, _, rest = text.partition("\n")
        (out / src.name).write_text(f"{first}\n\npackage {GO_PACKAGE}\n{rest}", encoding="utf-8")
    rt = RUNTIMES["go"]
    (out / "go.mod").write_text(f"module {GO_MODULE}\n\ngo 1.19\n\nrequire {rt.package} {rt.version}\n")
    usage = f"""
```
go mod edit -require={GO_MODULE}@v{VERSION} -replace={GO_MODULE}=/path/to/this/folder
```

```go
import (
    "os"
    "github.com/kaitai-io/kaitai_struct_go_runtime/kaitai"
    rmq "{GO_MODULE}"
)

f, _ := os.Open("00000000000000000000")
log := rmq.NewRocketmqCommitlog()
err := log.Read(kaitai.NewStream(f), nil, log)
```

The module path is `{GO_MODULE}` (package `{GO_PACKAGE}`); use it through a `replace`
directive, or change the `module` line to where you publish it."""
    (out / "README.md").write_text(_readme("go", specs, usage))


def _java(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
    src_dir = out / "src" / Path(*JAVA_PACKAGE.split("."))
    src_dir.mkdir(parents=True)
    for src in sorted(gen.glob("*.java")):
        text = src.read_text(encoding="utf-8")
        first, _, rest = text.partition("\n")
        (src_dir / src.name).write_text(f"{first}\n\npackage {JAVA_PACKAGE};\n{rest}", encoding="utf-8")
    runtime_src = runtimes / "java" / "src" / "main" / "java"
    if not runtime_src.is_dir():
        raise DistError(f"java: the Kaitai Java runtime sources are not at {runtime_src}")
    if shutil.which("javac") is None or shutil.which("jar") is None:
        raise DistError("java: javac and jar are not on PATH (Debian: default-jdk-headless)")
    with tempfile.TemporaryDirectory(prefix="rmq-java-") as tmp:
        rt_classes, classes = Path(tmp, "runtime"), Path(tmp, "classes")
        _run(["javac", "-nowarn", "-d", rt_classes, *sorted(runtime_src.rglob("*.java"))], what="java runtime")
        _run(["javac", "-nowarn", "--release", "8", "-cp", rt_classes, "-d", classes,
              *sorted(src_dir.glob("*.java"))], what="java parsers")
        _run(["jar", "cf", out / "rmqformats-parsers.jar", "-C", classes, "."], what="java jar")
    usage = f"""
`rmqformats-parsers.jar` holds the compiled classes (Java 8 bytecode) of the package
`{JAVA_PACKAGE}`; `src/` holds their sources. Put the jar and the runtime
(`io.kaitai:kaitai-struct-runtime:0.11` from Maven Central, or the repository above built
with `javac`) on the class path:

```java
import io.kaitai.struct.ByteBufferKaitaiStream;
import {JAVA_PACKAGE}.RocketmqCommitlog;

RocketmqCommitlog log = RocketmqCommitlog.fromFile("00000000000000000000");
```"""
    (out / "README.md").write_text(_readme("java", specs, usage))


def _cpp(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
    for src in sorted(gen.iterdir()):
        shutil.copy2(src, out / src.name)
    sources = " ".join(sorted(p.name for p in gen.glob("*.cpp")))
    (out / "CMakeLists.txt").write_text(f"""cmake_minimum_required(VERSION 3.11)
project(rmqformats_parsers VERSION {VERSION} LANGUAGES CXX)

# The Kaitai C++/STL runtime: either a target `kaitai_struct_cpp_stl_runtime` defined before
# this folder is added, or its source folder in KAITAI_STRUCT_RUNTIME_DIR.
# A caller's plain variable wins: before CMake 3.21 (policy CMP0126) a cache `set` on the first
# configure would hide it, so the cache entry is only made when the caller set nothing.
if(NOT DEFINED KAITAI_STRUCT_RUNTIME_DIR)
  set(KAITAI_STRUCT_RUNTIME_DIR "" CACHE PATH "kaitai_struct_cpp_stl_runtime source folder")
endif()
if(NOT TARGET kaitai_struct_cpp_stl_runtime)
  if(NOT KAITAI_STRUCT_RUNTIME_DIR)
    message(FATAL_ERROR "set KAITAI_STRUCT_RUNTIME_DIR to the kaitai_struct_cpp_stl_runtime folder")
  endif()
  find_package(ZLIB)
  add_library(kaitai_struct_cpp_stl_runtime STATIC ${{KAITAI_STRUCT_RUNTIME_DIR}}/kaitai/kaitaistream.cpp)
  target_include_directories(kaitai_struct_cpp_stl_runtime PUBLIC ${{KAITAI_STRUCT_RUNTIME_DIR}})
  target_compile_definitions(kaitai_struct_cpp_stl_runtime PUBLIC KS_STR_ENCODING_ICONV)
  if(ZLIB_FOUND)
    target_compile_definitions(kaitai_struct_cpp_stl_runtime PUBLIC KS_ZLIB)
    target_link_libraries(kaitai_struct_cpp_stl_runtime PUBLIC ZLIB::ZLIB)
  endif()
endif()

add_library(rmqformats_parsers STATIC {sources})
target_include_directories(rmqformats_parsers PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}})
target_link_libraries(rmqformats_parsers PUBLIC kaitai_struct_cpp_stl_runtime)
""")
    usage = """
The sources are C++98 (raw pointers, as the compiler's default `cpp_stl` output). With CMake:

```cmake
set(KAITAI_STRUCT_RUNTIME_DIR /path/to/kaitai_struct_cpp_stl_runtime)
add_subdirectory(/path/to/this/folder rmqformats_parsers)
target_link_libraries(your_program PRIVATE rmqformats_parsers)
```

```cpp
#include <fstream>
#include "kaitai/kaitaistream.h"
#include "rocketmq_commitlog.h"

std::ifstream is("00000000000000000000", std::ifstream::binary);
kaitai::kstream ks(&is);
rocketmq_commitlog_t log(&ks);
```

The library target `rmqformats_parsers` links the runtime with iconv string decoding
(`KS_STR_ENCODING_ICONV`) and zlib (`KS_ZLIB`) when found."""
    (out / "README.md").write_text(_readme("cpp_stl", specs, usage))


def _javascript(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
    modules = sorted(p.name for p in gen.glob("*.js"))
    for name in modules:
        shutil.copy2(gen / name, out / name)
    exports = "\n".join(f"  {Path(m).stem}: require('./{Path(m).stem}').{Path(m).stem}," for m in modules)
    (out / "index.js").write_text(
        f"'use strict';\n// Every root class, by name.\nmodule.exports = {{\n{exports}\n}};\n")
    package = {
        "name": NPM_NAME, "version": VERSION,
        "description": "Apache RocketMQ store file parsers generated from the rmqformats Kaitai Struct specs",
        "license": "Apache-2.0", "main": "index.js",
        "files": ["index.js", *modules, "README.md"],
        "dependencies": {"kaitai-struct": "0.11.0"},
    }
    (out / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    usage = f"""
```
npm pack /path/to/this/folder                   # writes {NPM_NAME}-{VERSION}.tgz here
npm install ./{NPM_NAME}-{VERSION}.tgz           # installs it with its runtime, kaitai-struct
```

(`npm install /path/to/this/folder` links the folder instead, without installing its dependency,
so `require('kaitai-struct/KaitaiStream')` then fails.)

```js
const fs = require('fs');
const KaitaiStream = require('kaitai-struct/KaitaiStream');
const {{ RocketmqCommitlog }} = require('{NPM_NAME}');

const log = new RocketmqCommitlog(new KaitaiStream(fs.readFileSync('00000000000000000000')));
```

Each module is also loadable on its own (`require('{NPM_NAME}/RocketmqCommitlog')`), and in a
browser through AMD or as a global. The runtime 0.11.0 reads some negative 64-bit integers
wrong by 2^32 (e.g. -2147483649); JavaScript numbers hold integers exactly only up to 2^53. In the
store files that is one field: a consume-queue unit's `tags_code` holding a `consumequeue_ext`
address (-2^63 to -2^31-1, brokers with `enableConsumeQueueExt`), so its `is_ext_address` may be
wrong too; every other value reads right."""
    (out / "README.md").write_text(_readme("javascript", specs, usage))


def _rust(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
    (out / "src").mkdir()
    mods = sorted(p.stem for p in gen.glob("*.rs"))
    for m in mods:
        shutil.copy2(gen / f"{m}.rs", out / "src" / f"{m}.rs")
    (out / "src" / "lib.rs").write_text("//! Apache RocketMQ store file parsers generated from the rmqformats "
                                        "Kaitai Struct specs.\n\n"
                                        "/// The Kaitai runtime these parsers are built with (readers, `KStruct`).\n"
                                        "pub use kaitai;\n\n" + "".join(f"pub mod {m};\n" for m in mods))
    rt = RUNTIMES["rust"]
    (out / "Cargo.toml").write_text(f"""[package]
name = "{CRATE_NAME}"
version = "{VERSION}"
edition = "2018"
license = "Apache-2.0"
description = "Apache RocketMQ store file parsers generated from the rmqformats Kaitai Struct specs"

[lib]
name = "rmqformats_parsers"
path = "src/lib.rs"

[dependencies]
kaitai = {{ git = "{rt.repository}", rev = "{rt.commit}" }}
""")
    usage = f"""
```toml
[dependencies]
{CRATE_NAME} = {{ path = "/path/to/this/folder" }}
```

```rust
use rmqformats_parsers::kaitai::{{BytesReader, KStruct, OptRc}};
use rmqformats_parsers::rocketmq_commitlog::RocketmqCommitlog;

fn main() {{
    let reader = BytesReader::from(std::fs::read("00000000000000000000").expect("read the segment"));
    let log: OptRc<RocketmqCommitlog> =
        RocketmqCommitlog::read_into::<BytesReader, RocketmqCommitlog>(&reader, None, None).expect("parse");
    println!("{{}} records", log.records().len());
}}
```

The runtime's error type (`KError`) does not implement `std::error::Error`, so `?` in a `main`
returning `Box<dyn Error>` does not compile with it: unwrap, or map it to your own error type.

The crate re-exports the runtime as `rmqformats_parsers::kaitai`. The runtime crate `kaitai` is
not on crates.io (a different crate has that name there): `Cargo.toml` takes it from its
repository at the commit above (replace it with a `path` for an offline build)."""
    (out / "README.md").write_text(_readme("rust", specs, usage))


def _sources(lang: str, suffix: str, usage: str):
    def package(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
        for src in sorted(gen.glob(f"*{suffix}")):
            shutil.copy2(src, out / src.name)
        (out / "README.md").write_text(_readme(lang, specs, usage))
    return package


_PYTHON_USE = """
Put this folder on `sys.path` (each module is one spec) and install the runtime
(`pip install kaitaistruct`):

```python
from rocketmq_commitlog import RocketmqCommitlog

log = RocketmqCommitlog.from_file("00000000000000000000")
```

The Python package `rmqformats` (PyPI name of this project) holds the same parsers as
`rmqformats.generated.kaitai` with a higher-level API on top."""

_RUBY_USE = """
```ruby
$LOAD_PATH.unshift('/path/to/kaitai_struct_ruby_runtime/lib', '/path/to/this/folder')
require 'rocketmq_commitlog'

log = RocketmqCommitlog.from_file('00000000000000000000')
```

(or `gem install kaitai-struct` for the runtime)."""

_PHP_USE = """
```php
// Composer: "kaitai-io/kaitai_struct_php_runtime"; or require its files directly.
require 'vendor/autoload.php';
require '/path/to/this/folder/RocketmqCommitlog.php';

$log = RocketmqCommitlog::fromFile('00000000000000000000');
```"""

_LUA_USE = """
For Lua 5.3. Put the runtime folder and this folder on `package.path`:

```lua
package.path = "/path/to/kaitai_struct_lua_runtime/?.lua;/path/to/this/folder/?.lua;" .. package.path
require("rocketmq_commitlog")

local log = RocketmqCommitlog:from_file("00000000000000000000")
```

Compressed fields would need the runtime's `zzlib` submodule; these specs keep bodies as bytes."""

_PERL_USE = """
```perl
use lib '/path/to/kaitai_struct_perl_runtime/lib', '/path/to/this/folder';
use RocketmqCommitlog;

my $log = RocketmqCommitlog->from_file('00000000000000000000');
```

The Perl target of the compiler ignores type parameters (`params:`). The types these specs read
take none, so Perl reads them right; only the index file's `index_tables(num_hash_slots,
num_index)`, for files with other slot counts than the size implies, takes parameters and
reads empty in Perl (the file's own `tables` does not)."""

_NIM_USE = """
```
nim c --rangeChecks:off --path:/path/to/kaitai_struct_nim_runtime --path:/path/to/this/folder your_program.nim
```

`--rangeChecks:off` is needed with Nim 1.6: it keeps an enum with values of 2^31 or more (the u4
magic codes of the commit log, timer log, DLedger and tiered index files) in 32 signed bits and
range-checks the conversion from the read value against that signed range, so every such value
raises RangeDefect. Such an enum's `ord` is then the signed 32-bit value
(`uint32(ord(x) and 0xFFFFFFFF)` gives the unsigned one).

```nim
import kaitai_struct_nim_runtime
import rocketmq_commitlog

let log = RocketmqCommitlog.fromFile("00000000000000000000")
```"""

_CSHARP_USE = """
Compile the sources with the runtime (`KaitaiStream.cs`, `KaitaiStruct.cs`, or the NuGet
package `KaitaiStruct.Runtime.CSharp`); the classes are in the namespace `Kaitai`:

```csharp
using Kaitai;

var log = RocketmqIndexFile.FromFile("20250101000000000");
```

The magic codes are signed, as RocketMQ's Java holds them (`MESSAGE_MAGIC_CODE` is
-626843481, 0xDAA320A7), so their enums fit C#'s `int` base. Compile only the classes you use."""

PACKAGERS = {
    "go": _go, "java": _java, "cpp_stl": _cpp, "javascript": _javascript, "rust": _rust,
    "python": _sources("python", ".py", _PYTHON_USE), "ruby": _sources("ruby", ".rb", _RUBY_USE),
    "php": _sources("php", ".php", _PHP_USE), "lua": _sources("lua", ".lua", _LUA_USE),
    "perl": _sources("perl", ".pm", _PERL_USE), "nim": _sources("nim", ".nim", _NIM_USE),
    "csharp": _sources("csharp", ".cs", _CSHARP_USE),
}


def build(out: Path, *, formats: Path = REPO / "formats", ksc: Path = REPO / "tools" / "ksc",
          runtimes: Path | None = None, languages: tuple[str, ...] = LANGUAGES,
          left_out: dict[str, str] | None = None) -> dict[str, Path]:
    """Write ``out/<language>/`` for each language (replacing what was there); returns the folders.

    ``runtimes`` defaults to :func:`runtimes_dir`. A language that cannot be packaged raises
    :class:`DistError` naming it, unless ``left_out`` is given: then its reason is stored there
    under the language's name and the other languages are still written. Either way no
    language's folder is left half written: a package is built in a temporary folder and
    moved into place once complete.
    """
    unknown = set(languages) - set(PACKAGERS)
    if unknown:
        raise DistError(f"unknown languages: {', '.join(sorted(unknown))} (known: {', '.join(LANGUAGES)})")
    runtimes = runtimes_dir() if runtimes is None else runtimes
    specs = sorted(formats.glob("*.ksy"))
    ids = _spec_ids(formats)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for lang in languages:
        folder = out / lang
        with tempfile.TemporaryDirectory(prefix=f"rmq-dist-{lang}-") as tmp:
            try:
                gen = _compiled(lang, specs, ksc, Path(tmp, "gen"))
                staging = Path(tmp, "pkg")
                staging.mkdir()
                PACKAGERS[lang](gen, staging, ids, runtimes)
            except DistError as err:
                reason = str(err).removeprefix(f"{lang}: ")
                if left_out is None:
                    raise DistError(f"{lang}: {reason}") from None
                left_out[lang] = reason
                continue
            _replace(folder, staging)
        written[lang] = folder
    _index(out, {lang: out / lang for lang in LANGUAGES if (out / lang).is_dir()})
    return written


def _replace(folder: Path, staging: Path) -> None:
    """Put a complete package at ``folder``: copied beside it, then renamed over the old one."""
    fresh = folder.with_name(f".{folder.name}.new")
    old = folder.with_name(f".{folder.name}.old")
    for leftover in (fresh, old):
        if leftover.exists():
            shutil.rmtree(leftover)
    shutil.copytree(staging, fresh)
    if folder.exists():
        folder.rename(old)
    fresh.rename(folder)
    if old.exists():
        shutil.rmtree(old)


def _index(out: Path, written: dict[str, Path]) -> None:
    rows = "\n".join(f"| [{TITLES[lang]}]({lang}/) | `{RUNTIMES[lang].package}` {RUNTIMES[lang].version} "
                     f"({RUNTIMES[lang].commit}) |" for lang in written)
    (out / "README.md").write_text(f"""# Apache RocketMQ store file parsers, one package per language

Generated by {COMPILER} from the Kaitai Struct specs of rmqformats {VERSION}; each folder's
README says how to use it.

| language | runtime (version, tested commit) |
|---|---|
{rows}
""")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rmqformats.codegen.dist", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "dist" / "parsers")
    parser.add_argument("--formats", type=Path, default=REPO / "formats")
    parser.add_argument("--ksc", type=Path, default=REPO / "tools" / "ksc")
    parser.add_argument("--runtimes", type=Path, default=None,
                        help=f"the Kaitai runtimes' folder (default: ${RUNTIMES_ENV}, else ../shared/kaitai/runtimes)")
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=LANGUAGES, metavar="LANG")
    parser.add_argument("--strict", action="store_true",
                        help="fail when a language cannot be packaged, instead of leaving it out")
    args = parser.parse_args(argv)
    left_out: dict[str, str] = {}
    try:
        written = build(args.out, formats=args.formats, ksc=args.ksc, runtimes=args.runtimes,
                        languages=tuple(args.languages), left_out=left_out)
    except DistError as err:
        print(f"dist-parsers: {err}", file=sys.stderr)
        return 1
    for lang, folder in written.items():
        print(f"{lang}: {folder}")
    for lang, reason in left_out.items():
        print(f"dist-parsers: left out {lang}: {reason}", file=sys.stderr)
    if left_out and args.strict:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
