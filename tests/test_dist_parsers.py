"""The per-language parser packages of ``make dist-parsers`` work for a consumer of each language.

The packager (``rmqformats.codegen.dist``) writes every package into a temporary folder; for
each language a tiny consumer program is built against that package (not against the
repository tree) and the official runtime (``../shared/kaitai/runtimes/<lang>``; npm's
``kaitai-struct`` from ``tools/ksc`` and PyPI's ``kaitaistruct`` for JavaScript and Python),
reads one real commit-log segment and prints the number of messages, the first and last
message's topic and queue offset and the last one's store timestamp; these must equal
RocketMQ's ground truth. A language whose toolchain is missing fails under CI (``CI`` set)
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

def _python(pkg: Path, work: Path) -> str:
    (work / "consumer.py").write_text(f"""import sys
sys.path.insert(0, {str(pkg)!r})
from rocketmq_commitlog import RocketmqCommitlog

log = RocketmqCommitlog.from_file(sys.argv[1])
m = [r.body for r in log.records if r.is_message]
print(len(m), m[0].topic, m[0].queue_offset, m[-1].topic, m[-1].queue_offset, m[-1].store_timestamp)
""")
    return _run([sys.executable, "-I", work / "consumer.py", SEGMENT], cwd=work, what="python consumer")


def _javascript(pkg: Path, work: Path) -> str:
    modules = work / "node_modules"
    shutil.copytree(pkg, modules / dist.NPM_NAME)  # as `npm install <folder>` would place it
    (modules / "kaitai-struct").symlink_to(KSC_MODULES / "kaitai-struct")
    (work / "consumer.js").write_text(f"""'use strict';
const fs = require('fs');
const KaitaiStream = require('kaitai-struct/KaitaiStream');
const {{ RocketmqCommitlog }} = require('{dist.NPM_NAME}');

const log = new RocketmqCommitlog(new KaitaiStream(new Uint8Array(fs.readFileSync(process.argv[2])).buffer));
const m = log.records.filter((r) => r.isMessage).map((r) => r.body);
const l = m[m.length - 1];
console.log([m.length, m[0].topic, m[0].queueOffset, l.topic, l.queueOffset, l.storeTimestamp].join(' '));
""")
    env = {"NODE_PATH": ""}
    return _run(["node", work / "consumer.js", SEGMENT], cwd=work, env=env, what="javascript consumer")


def _ruby(pkg: Path, work: Path) -> str:
    (work / "consumer.rb").write_text("""require 'rocketmq_commitlog'

log = RocketmqCommitlog.from_file(ARGV[0])
m = log.records.select(&:is_message).map(&:body)
puts [m.size, m[0].topic, m[0].queue_offset, m[-1].topic, m[-1].queue_offset, m[-1].store_timestamp].join(' ')
""")
    return _run(["ruby", "-I", RUNTIMES / "ruby" / "lib", "-I", pkg, work / "consumer.rb", SEGMENT],
                what="ruby consumer")


def _php(pkg: Path, work: Path) -> str:
    (work / "consumer.php").write_text("""<?php
$lib = $argv[2];
spl_autoload_register(function ($class) use ($lib) {
    $file = $lib . '/' . str_replace('\\\\', '/', $class) . '.php';
    if (is_file($file)) require $file;
});
require $argv[3] . '/RocketmqCommitlog.php';

$log = new RocketmqCommitlog(new \\Kaitai\\Struct\\Stream(file_get_contents($argv[1])));
$m = [];
foreach ($log->records() as $r) {
    if ($r->isMessage()) $m[] = $r->body();
}
$l = end($m);
echo implode(' ', [count($m), $m[0]->topic(), $m[0]->queueOffset(), $l->topic(), $l->queueOffset(),
                   $l->storeTimestamp()]), "\\n";
""")
    return _run(["php", work / "consumer.php", SEGMENT, RUNTIMES / "php" / "lib", pkg], what="php consumer")


def _lua(pkg: Path, work: Path) -> str:
    (work / "consumer.lua").write_text("""require("rocketmq_commitlog")

local log = RocketmqCommitlog:from_file(arg[1])
local m = {}
for _, r in ipairs(log.records) do
  if r.is_message then m[#m + 1] = r.body end
end
local l = m[#m]
print(string.format("%d %s %d %s %d %d", #m, m[1].topic, m[1].queue_offset, l.topic, l.queue_offset,
                    l.store_timestamp))
""")
    env = {"LUA_PATH": f"{RUNTIMES / 'lua'}/?.lua;{pkg}/?.lua;;"}
    return _run(["lua5.3", work / "consumer.lua", SEGMENT], env=env, what="lua consumer")


def _perl(pkg: Path, work: Path) -> str:
    (work / "consumer.pl").write_text("""use strict;
use warnings;
use RocketmqCommitlog;

my $log = RocketmqCommitlog->from_file($ARGV[0]);
my @m = map { $_->body() } grep { $_->is_message() } @{$log->records()};
print join(' ', scalar(@m), $m[0]->topic(), $m[0]->queue_offset(), $m[-1]->topic(), $m[-1]->queue_offset(),
           $m[-1]->store_timestamp()), "\\n";
""")
    return _run(["perl", "-I", RUNTIMES / "perl" / "lib", "-I", pkg, work / "consumer.pl", SEGMENT],
                what="perl consumer")


def _nim(pkg: Path, work: Path) -> str:
    (work / "consumer.nim").write_text("""import std/[os, strutils]
import kaitai_struct_nim_runtime
import rocketmq_commitlog

let log = RocketmqCommitlog.fromFile(paramStr(1))
var m: seq[RocketmqCommitlog_Message]
for r in log.records:
  if r.isMessage: m.add RocketmqCommitlog_Message(r.body)
let l = m[^1]
echo [$m.len, m[0].topic, $m[0].queueOffset, l.topic, $l.queueOffset, $l.storeTimestamp].join(" ")
""")
    exe = work / "consumer"
    # --rangeChecks:off as the package README says (an integer outside an enum's range would raise RangeDefect).
    _run(["nim", "c", "--hints:off", "--warnings:off", "--rangeChecks:off", f"--nimcache:{work / 'cache'}",
          f"--path:{RUNTIMES / 'nim'}", f"--path:{pkg}", f"--out:{exe}", work / "consumer.nim"], what="nim build")
    return _run([exe, SEGMENT], what="nim consumer")


def _csharp(pkg: Path, work: Path) -> str:
    (work / "Consumer.cs").write_text("""using System;
using System.Collections.Generic;
using Kaitai;

static class Consumer
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
""")
    exe = work / "consumer.exe"
    # A consumer compiles the classes it uses: the commit-log parser and the runtime.
    _run(["mcs", "-nologo", "-nowarn:0108,0114,0162,0168,0219,0414", f"-out:{exe}",
          RUNTIMES / "csharp" / "KaitaiStream.cs", RUNTIMES / "csharp" / "KaitaiStruct.cs",
          pkg / "RocketmqCommitlog.cs", work / "Consumer.cs"],
         what="c# build")
    return _run(["mono", exe, SEGMENT], what="c# consumer")


def _go(pkg: Path, work: Path) -> str:
    (work / "main.go").write_text(f"""package main

import (
	"fmt"
	"os"

	"github.com/kaitai-io/kaitai_struct_go_runtime/kaitai"
	rmq "{dist.GO_MODULE}"
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
			// Body is an interface when the switch has cases of several types, else the one type.
			m = append(m, interface{{}}(r.Body).(*rmq.RocketmqCommitlog_Message))
		}}
	}}
	l := m[len(m)-1]
	fmt.Println(len(m), m[0].Topic, m[0].QueueOffset, l.Topic, l.QueueOffset, l.StoreTimestamp)
}}
""")
    runtime = dist.RUNTIMES["go"]
    (work / "go.mod").write_text(
        f"module consumer\n\ngo 1.19\n\nrequire (\n\t{dist.GO_MODULE} v{dist.VERSION}\n"
        f"\t{runtime.package} {runtime.version}\n\tgolang.org/x/text v0.0.0\n)\n\n"
        f"replace {dist.GO_MODULE} => {pkg}\n\nreplace {runtime.package} => {RUNTIMES / 'go'}\n\n"
        f"replace golang.org/x/text => {GO_XTEXT}\n")
    env = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": str(work / "gocache"), "GOPATH": str(work / "gopath"),
           "GO111MODULE": "on", "GOTOOLCHAIN": "local"}
    _run(["go", "build", "-o", work / "consumer", "."], cwd=work, env=env, what="go build")
    return _run([work / "consumer", SEGMENT], what="go consumer")


def _java(pkg: Path, work: Path) -> str:
    (work / "Consumer.java").write_text(f"""import java.util.ArrayList;
import java.util.List;
import {dist.JAVA_PACKAGE}.RocketmqCommitlog;

public class Consumer {{
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
""")
    runtime = work / "runtime"
    _run(["javac", "-nowarn", "-d", runtime, *sorted((RUNTIMES / "java" / "src" / "main" / "java").rglob("*.java"))],
         what="java runtime")
    jar = pkg / "rmqformats-parsers.jar"
    cp = f"{jar}{os.pathsep}{runtime}"
    _run(["javac", "-cp", cp, "-d", work / "classes", work / "Consumer.java"], what="java build")
    return _run(["java", "-cp", f"{cp}{os.pathsep}{work / 'classes'}", "Consumer", SEGMENT], what="java consumer")


def _cpp(pkg: Path, work: Path) -> str:
    (work / "main.cpp").write_text("""#include <fstream>
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
""")
    (work / "CMakeLists.txt").write_text(f"""cmake_minimum_required(VERSION 3.11)
project(consumer CXX)
add_subdirectory({pkg} parsers)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE rmqformats_parsers)
""")
    build = work / "build"
    _run(["cmake", "-S", work, "-B", build, f"-DKAITAI_STRUCT_RUNTIME_DIR={RUNTIMES / 'cpp_stl'}",
          "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS=-w"], what="cmake configure")
    _run(["cmake", "--build", build, "--parallel", "2"], what="cmake build")
    return _run([build / "consumer", SEGMENT], what="c++ consumer")


def _rust(pkg: Path, work: Path) -> str:
    crate = work / "consumer"
    (crate / "src").mkdir(parents=True)
    # The program of the package README's walkthrough (tests/test_package_readmes.py follows the rest of
    # it where the runtime's repository can be reached).
    from test_package_readmes import steps
    files = {name: text for kind, name, text in steps((pkg / "README.md").read_text(encoding="utf-8"))
             if kind == "file"}
    (crate / "src" / "main.rs").write_text(files["src/main.rs"])
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
