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
* ``python``, ``ruby``, ``php``, ``lua``, ``perl``, ``nim``, ``csharp``: the sources (Perl's with
  ``my $_on`` declared once per scope: :func:`_perl_declared_once`).

Each folder has a README naming the runtime it needs (repository, version, commit) and, as a
walkthrough from an empty folder (:func:`_try_it`), how to build a program that reads a
commit-log segment with the package; ``tests/test_package_readmes.py`` follows it literally and
``tests/test_dist_parsers.py`` builds its program offline. The runtimes themselves are not copied:
the Java jar is only compiled against the Java runtime (``--runtimes``; by default
``$RMQFORMATS_KAITAI_RUNTIMES``, else ``../shared/kaitai/runtimes`` beside the checkout: see
:func:`runtimes_dir`).

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


#: The languages whose runtime comes from their package registry (PyPI, npm), not from a folder.
REGISTRY_RUNTIMES = {"python": "`pip install kaitaistruct==0.11`", "javascript": "npm, by the steps below"}


def _try_it(lang: str) -> str:
    """The start of every package README's walkthrough.

    Its fenced blocks are the steps, in order: a block with a title (```` ```go title="main.go" ````)
    is a file to write under that name, an ``sh`` block commands to run there;
    ``tests/test_package_readmes.py`` follows them literally, from an empty folder, and
    ``tests/test_dist_parsers.py`` builds the same files offline: the programs are written here only.
    """
    if lang in REGISTRY_RUNTIMES:
        runtime = f"and the runtime installed\n({REGISTRY_RUNTIMES[lang]})"
    else:
        runtime = ("and `KAITAI_RUNTIME` to\nthe runtime's folder (a checkout of the repository above at the "
                   "tested commit)")
    return f"""In an empty folder holding a commit-log segment named `00000000000000000000` (any file from a
broker's `store/commitlog/`), with the variable `RMQ_PARSERS` set to this folder {runtime},
the steps below build a program that prints the number of messages in the segment, the first
message's topic and queue offset, and the last message's topic, queue offset and store time
(ms), for example `281 TopicTest 0 TopicMisc 10 1795377022452`. Each block with a file name is
a file to write, each `sh` block commands to run, in this order."""


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

## Try it

{_try_it(lang)}

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
```go title="main.go"
package main

import (
	"fmt"
	"os"

	"github.com/kaitai-io/kaitai_struct_go_runtime/kaitai"
	rmq "{GO_MODULE}"
)

func main() {{
	f, err := os.Open(os.Args[1])
	if err != nil {{
		panic(err)
	}}
	log := rmq.NewRocketmqCommitlog()
	if err := log.Read(kaitai.NewStream(f), nil, log); err != nil {{
		panic(err)
	}}
	var m []*rmq.RocketmqCommitlog_Message
	for _, r := range log.Records {{
		ok, err := r.IsMessage()
		if err != nil {{
			panic(err)
		}}
		if ok {{
			m = append(m, r.Body)
		}}
	}}
	l := m[len(m)-1]
	fmt.Println(len(m), m[0].Topic, m[0].QueueOffset, l.Topic, l.QueueOffset, l.StoreTimestamp)
}}
```

```sh
go mod init read_commitlog
go mod edit -require={GO_MODULE}@v0.0.0 -replace={GO_MODULE}="$RMQ_PARSERS"
go get {rt.package}/kaitai@{rt.version}
go build -o read_commitlog .
./read_commitlog 00000000000000000000
```

The module path is `{GO_MODULE}` (package `{GO_PACKAGE}`), which is not published anywhere:
require it and point it at this folder with a `replace` directive, as above, or change the
`module` line of `go.mod` to where you publish it. The compiler writes no `package` clause;
every file here has one added. `go get` fetches the runtime {rt.version} and its one dependency,
`golang.org/x/text`, from the module proxy (`go mod tidy` works too, and also fetches the
runtime's test dependencies). Without a module proxy, give both as local folders instead of
`go get` (here Debian's `golang-golang-x-text-dev`), then build with `GOFLAGS=-mod=mod GOPROXY=off`:

    go mod edit -require={rt.package}@{rt.version} -replace={rt.package}="$KAITAI_RUNTIME" -require=golang.org/x/text@v0.28.0 -replace=golang.org/x/text=/usr/share/gocode/src/golang.org/x/text
    GOFLAGS=-mod=mod GOPROXY=off go build -o read_commitlog ."""
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
```java title="ReadCommitlog.java"
import java.util.ArrayList;
import java.util.List;
import {JAVA_PACKAGE}.RocketmqCommitlog;

public class ReadCommitlog {{
    public static void main(String[] args) throws Exception {{
        RocketmqCommitlog log = RocketmqCommitlog.fromFile(args[0]);
        List<RocketmqCommitlog.Message> m = new ArrayList<>();
        for (RocketmqCommitlog.Record r : log.records()) {{
            if (r.isMessage()) m.add((RocketmqCommitlog.Message) r.body());
        }}
        RocketmqCommitlog.Message l = m.get(m.size() - 1);
        System.out.println(m.size() + " " + m.get(0).topic() + " " + m.get(0).queueOffset() + " " + l.topic()
            + " " + l.queueOffset() + " " + l.storeTimestamp());
    }}
}}
```

```sh
javac -nowarn -d runtime $(find "$KAITAI_RUNTIME/src/main/java" -name '*.java')
javac -cp "$RMQ_PARSERS/rmqformats-parsers.jar:runtime" -d classes ReadCommitlog.java
java -cp "$RMQ_PARSERS/rmqformats-parsers.jar:runtime:classes" ReadCommitlog 00000000000000000000
```

`rmqformats-parsers.jar` holds the compiled classes (Java 8 bytecode) of the package
`{JAVA_PACKAGE}`; `src/` holds their sources. The first command compiles the runtime into
`runtime/`; its jar from Maven Central (`io.kaitai:kaitai-struct-runtime:0.11`) does the same on
the class path."""
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
```cmake title="CMakeLists.txt"
cmake_minimum_required(VERSION 3.11)
project(read_commitlog CXX)
set(KAITAI_STRUCT_RUNTIME_DIR $ENV{KAITAI_RUNTIME})
add_subdirectory($ENV{RMQ_PARSERS} rmqformats_parsers)
add_executable(read_commitlog main.cpp)
target_link_libraries(read_commitlog PRIVATE rmqformats_parsers)
```

```cpp title="main.cpp"
#include <fstream>
#include <iostream>
#include <vector>
#include "kaitai/kaitaistream.h"
#include "rocketmq_commitlog.h"

int main(int argc, char** argv) {
    std::ifstream is(argv[1], std::ifstream::binary);
    kaitai::kstream ks(&is);
    rocketmq_commitlog_t log(&ks);
    std::vector<rocketmq_commitlog_t::message_t*> m;
    for (std::vector<rocketmq_commitlog_t::record_t*>::iterator it = log.records()->begin();
         it != log.records()->end(); ++it) {
        if ((*it)->is_message()) m.push_back((*it)->body());
    }
    rocketmq_commitlog_t::message_t* l = m.back();
    std::cout << m.size() << " " << m[0]->topic() << " " << m[0]->queue_offset() << " " << l->topic() << " "
              << l->queue_offset() << " " << l->store_timestamp() << std::endl;
    return 0;
}
```

```sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel 2
./build/read_commitlog 00000000000000000000
```

The sources are C++98 (raw pointers, as the compiler's default `cpp_stl` output). The
library target `rmqformats_parsers` links the runtime with iconv string decoding
(`KS_STR_ENCODING_ICONV`) and zlib (`KS_ZLIB`) when found; it takes the runtime's folder from
`KAITAI_STRUCT_RUNTIME_DIR` (a plain `set` before `add_subdirectory`, as above, or
`-DKAITAI_STRUCT_RUNTIME_DIR=...`), or uses a target `kaitai_struct_cpp_stl_runtime` defined
before it. In your own `CMakeLists.txt`, write the two paths in place of `$ENV{...}`."""
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
```js title="read_commitlog.js"
const fs = require('fs');
const KaitaiStream = require('kaitai-struct/KaitaiStream');
const {{ RocketmqCommitlog }} = require('{NPM_NAME}');

const log = new RocketmqCommitlog(new KaitaiStream(new Uint8Array(fs.readFileSync(process.argv[2])).buffer));
const m = log.records.filter((r) => r.isMessage).map((r) => r.body);
const l = m[m.length - 1];
console.log([m.length, m[0].topic, m[0].queueOffset, l.topic, l.queueOffset, l.storeTimestamp].join(' '));
```

```sh
npm pack "$RMQ_PARSERS"
npm install --no-audit --no-fund ./{NPM_NAME}-{VERSION}.tgz
node read_commitlog.js 00000000000000000000
```

`npm pack` writes `{NPM_NAME}-{VERSION}.tgz`; installing it installs its runtime,
`kaitai-struct`, with it. (`npm install "$RMQ_PARSERS"` would link the folder instead, without
installing its dependency, so `require('kaitai-struct/KaitaiStream')` then fails.)

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
```sh
cargo init --name read_commitlog
cargo add --path "$RMQ_PARSERS"
```

```rust title="src/main.rs"
use rmqformats_parsers::kaitai::{{BytesReader, KStruct, OptRc}};
use rmqformats_parsers::rocketmq_commitlog::*;

fn main() {{
    let path = std::env::args().nth(1).expect("a commit-log segment");
    let reader = BytesReader::from(std::fs::read(path).expect("read the segment"));
    let log: OptRc<RocketmqCommitlog> =
        RocketmqCommitlog::read_into::<BytesReader, RocketmqCommitlog>(&reader, None, None).expect("parse");
    let mut m: Vec<OptRc<RocketmqCommitlog_Message>> = Vec::new();
    for r in log.records().iter() {{
        if *r.is_message().expect("is_message") {{
            m.push(r.body().clone());
        }}
    }}
    let l = &m[m.len() - 1];
    println!("{{}} {{}} {{}} {{}} {{}} {{}}", m.len(), *m[0].topic(), *m[0].queue_offset(), *l.topic(),
             *l.queue_offset(), *l.store_timestamp());
}}
```

```sh
cargo run --quiet -- 00000000000000000000
```

`cargo add` writes `{CRATE_NAME} = {{ path = "..." }}` under `[dependencies]`. The runtime's
error type (`KError`) does not implement `std::error::Error`, so `?` in a `main` returning
`Box<dyn Error>` does not compile with it: unwrap, or map it to your own error type.

The crate re-exports the runtime as `rmqformats_parsers::kaitai`. The runtime crate `kaitai` is
not on crates.io (a different crate has that name there): this crate's `Cargo.toml` takes it
from its repository at the commit above. Offline, a `[source]` replacement in
`.cargo/config.toml` (a `directory` source holding a copy of the runtime, as `cargo vendor`
lays one out) stands in for that repository."""
    (out / "README.md").write_text(_readme("rust", specs, usage))


def _sources(lang: str, suffix: str, usage: str):
    def package(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
        for src in sorted(gen.glob(f"*{suffix}")):
            shutil.copy2(src, out / src.name)
        (out / "README.md").write_text(_readme(lang, specs, usage))
    return package


_PYTHON_USE = """
```python title="read_commitlog.py"
import sys

from rocketmq_commitlog import RocketmqCommitlog

log = RocketmqCommitlog.from_file(sys.argv[1])
m = [r.body for r in log.records if r.is_message]
print(len(m), m[0].topic, m[0].queue_offset, m[-1].topic, m[-1].queue_offset, m[-1].store_timestamp)
```

```sh
PYTHONPATH="$RMQ_PARSERS" python3 read_commitlog.py 00000000000000000000
```

Each module is one spec; put this folder on `sys.path` (here through `PYTHONPATH`). The Python
package `rmqformats` (PyPI name of this project) holds the same parsers as
`rmqformats.generated.kaitai` with a higher-level API on top."""

_RUBY_USE = """
```ruby title="read_commitlog.rb"
require 'rocketmq_commitlog'

log = RocketmqCommitlog.from_file(ARGV[0])
m = log.records.select(&:is_message).map(&:body)
puts [m.size, m[0].topic, m[0].queue_offset, m[-1].topic, m[-1].queue_offset, m[-1].store_timestamp].join(' ')
```

```sh
ruby -I "$KAITAI_RUNTIME/lib" -I "$RMQ_PARSERS" read_commitlog.rb 00000000000000000000
```

(`gem install kaitai-struct` installs the runtime instead of `-I "$KAITAI_RUNTIME/lib"`.)"""

_PHP_USE = r"""
```php title="read_commitlog.php"
<?php
// The runtime's classes (Kaitai\Struct\...) from its lib/ folder; with Composer
// ("kaitai-io/kaitai_struct_php_runtime"), require 'vendor/autoload.php' instead.
spl_autoload_register(function ($class) {
    $file = getenv('KAITAI_RUNTIME') . '/lib/' . str_replace('\\', '/', $class) . '.php';
    if (is_file($file)) require $file;
});
require getenv('RMQ_PARSERS') . '/RocketmqCommitlog.php';

$log = RocketmqCommitlog::fromFile($argv[1]);
$m = [];
foreach ($log->records() as $r) {
    if ($r->isMessage()) $m[] = $r->body();
}
$l = end($m);
echo implode(' ', [count($m), $m[0]->topic(), $m[0]->queueOffset(), $l->topic(), $l->queueOffset(),
                   $l->storeTimestamp()]), "\n";
```

```sh
php read_commitlog.php 00000000000000000000
```"""

_LUA_USE = """
```lua title="read_commitlog.lua"
require("rocketmq_commitlog")

local log = RocketmqCommitlog:from_file(arg[1])
local m = {}
for _, r in ipairs(log.records) do
  if r.is_message then m[#m + 1] = r.body end
end
local l = m[#m]
print(string.format("%d %s %d %s %d %d", #m, m[1].topic, m[1].queue_offset, l.topic, l.queue_offset,
                    l.store_timestamp))
```

```sh
LUA_PATH="$KAITAI_RUNTIME/?.lua;$RMQ_PARSERS/?.lua;;" lua5.3 read_commitlog.lua 00000000000000000000
```

For Lua 5.3: the runtime's folder and this folder go on `package.path` (here through
`LUA_PATH`). Compressed fields would need the runtime's `zzlib` submodule; these specs keep
bodies as bytes."""

_PERL_USE = """
```perl title="read_commitlog.pl"
use strict;
use warnings;
use RocketmqCommitlog;

my $log = RocketmqCommitlog->from_file($ARGV[0]);
my @m = map { $_->body() } grep { $_->is_message() } @{$log->records()};
print join(' ', scalar(@m), $m[0]->topic(), $m[0]->queue_offset(), $m[-1]->topic(), $m[-1]->queue_offset(),
           $m[-1]->store_timestamp()), "\\n";
```

```sh
perl -I "$KAITAI_RUNTIME/lib" -I "$RMQ_PARSERS" read_commitlog.pl 00000000000000000000
```

The compiler's Perl output declares `my $_on` once per switch, so a type with two switches
redeclared it in one scope (Perl warns: `"my" variable $_on masks earlier declaration`); the
packager declares it once per scope (`_perl_declared_once` in `rmqformats/codegen/dist.py`), so the modules load without
warnings. The Perl target of the compiler ignores type parameters (`params:`). The types these
specs read take none, so Perl reads them right; only the index file's `index_tables(num_hash_slots,
num_index)`, for files with other slot counts than the size implies, takes parameters and
reads empty in Perl (the file's own `tables` does not)."""

_NIM_USE = """
```nim title="read_commitlog.nim"
import std/[os, strutils]
import kaitai_struct_nim_runtime
import rocketmq_commitlog

let log = RocketmqCommitlog.fromFile(paramStr(1))
var m: seq[RocketmqCommitlog_Message]
for r in log.records:
  if r.isMessage: m.add RocketmqCommitlog_Message(r.body)
let l = m[^1]
echo [$m.len, m[0].topic, $m[0].queueOffset, l.topic, $l.queueOffset, $l.storeTimestamp].join(" ")
```

```sh
nim c --hints:off --warnings:off --rangeChecks:off --path:"$KAITAI_RUNTIME" --path:"$RMQ_PARSERS" read_commitlog.nim
./read_commitlog 00000000000000000000
```

Why `--rangeChecks:off`: the parsers convert each read integer to its enum (the magic codes,
compression and transaction types, …), and Nim checks that conversion against the range from
the enum's lowest to its highest value, raising `RangeDefect`, a defect that ends the program and
that no `except` catches, on any value outside it: a damaged or unknown magic code, or a value
a newer release added. The other languages keep such a value as it is (the parsers' `is_*`
checks then say it is none of the known ones). A well-formed file holds only known values, so
the checks only ever stop on damaged or newer files. Bounds checks (`--boundChecks`) stay on either way."""

_CSHARP_USE = """
```csharp title="ReadCommitlog.cs"
using System;
using System.Collections.Generic;
using Kaitai;

static class ReadCommitlog
{
    static void Main(string[] args)
    {
        var log = RocketmqCommitlog.FromFile(args[0]);
        var m = new List<RocketmqCommitlog.Message>();
        foreach (var r in log.Records) if (r.IsMessage) m.Add((RocketmqCommitlog.Message) r.Body);
        var l = m[m.Count - 1];
        Console.WriteLine(string.Join(" ", m.Count, m[0].Topic, m[0].QueueOffset, l.Topic, l.QueueOffset,
                                      l.StoreTimestamp));
    }
}
```

```sh
mcs -nologo -nowarn:0108,0114,0162,0168,0219,0414 -out:read_commitlog.exe "$KAITAI_RUNTIME/KaitaiStream.cs" \\
    "$KAITAI_RUNTIME/KaitaiStruct.cs" "$RMQ_PARSERS/RocketmqCommitlog.cs" ReadCommitlog.cs
mono read_commitlog.exe 00000000000000000000
```

The classes are in the namespace `Kaitai`; compile only the classes you use with the runtime
(`KaitaiStream.cs`, `KaitaiStruct.cs`, or the NuGet package `KaitaiStruct.Runtime.CSharp` in a
.NET project). The magic codes are signed, as RocketMQ's Java holds them (`MESSAGE_MAGIC_CODE`
is -626843481, 0xDAA320A7), so their enums fit C#'s `int` base."""

def _perl_declared_once(text: str) -> str:
    """The compiler's Perl output with ``my $_on`` declared once per scope.

    The compiler writes ``my $_on = ...;`` before every switch, so a type with two switches
    (the commit log's message: its hosts and topic length) redeclares it in the same scope and
    Perl warns on every load (``"my" variable $_on masks earlier declaration``). A repeated
    declaration at the same indentation, with no line of a shallower one between (which would
    close the scope), becomes a plain assignment. The compiler indents every block by four spaces.
    """
    declared: set[int] = set()  # indentations at which $_on is declared in the scopes still open
    lines = []
    for line in text.splitlines(keepends=True):
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if body.strip():
            declared = {i for i in declared if i <= indent}
        if body.startswith("my $_on = "):
            if indent in declared:
                line = " " * indent + body[len("my "):]
            declared.add(indent)
        lines.append(line)
    return "".join(lines)


def _perl(gen: Path, out: Path, specs: list[str], runtimes: Path) -> None:
    for src in sorted(gen.glob("*.pm")):
        (out / src.name).write_text(_perl_declared_once(src.read_text(encoding="utf-8")), encoding="utf-8")
    (out / "README.md").write_text(_readme("perl", specs, _PERL_USE))


PACKAGERS = {
    "go": _go, "java": _java, "cpp_stl": _cpp, "javascript": _javascript, "rust": _rust,
    "python": _sources("python", ".py", _PYTHON_USE), "ruby": _sources("ruby", ".rb", _RUBY_USE),
    "php": _sources("php", ".php", _PHP_USE), "lua": _sources("lua", ".lua", _LUA_USE),
    "perl": _perl, "nim": _sources("nim", ".nim", _NIM_USE),
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
