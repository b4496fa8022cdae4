"""Rust: the generated modules, ../shared/kaitai/runtimes/rust as a path dependency and a driver
generated from the plans (gen_dumper.py), built by cargo offline from Debian's crate registry
(/usr/share/cargo/registry). Two of the runtime's crates are not packaged by Debian; the build
patches them with shims: ``encoding-next`` re-exports Debian's ``encoding`` 0.2 (the same API
under its old name) and ``cp437`` decodes the ASCII half of code page 437 (no spec uses cp437).
"""

import sys

from harness import HERE, BuildContext, Built, Target, load_module, run_tool

REGISTRY = "/usr/share/cargo/registry"

ENCODING_SHIM = ('[package]\nname = "encoding-next"\nversion = "0.3.0"\nedition = "2018"\n\n'
                 '[lib]\nname = "encoding"\npath = "lib.rs"\n\n'
                 '[dependencies]\nenc = { package = "encoding", version = "0.2" }\n')
CP437_SHIM = '[package]\nname = "cp437"\nversion = "0.1.0"\nedition = "2018"\n\n[lib]\npath = "lib.rs"\n'
CP437_LIB = '''
pub struct Reader<'a, I: Iterator<Item = std::io::Result<u8>>> { it: &'a mut I }
impl<'a, I: Iterator<Item = std::io::Result<u8>>> Reader<'a, I> {
    pub fn new(it: &'a mut I) -> Self { Reader { it } }
    pub fn consume(&mut self, n: usize) -> String {
        self.it.take(n).map(|b| match b { Ok(b) if b < 0x80 => b as char, _ => '\\u{fffd}' }).collect()
    }
}
'''


def build(ctx: BuildContext) -> Built:
    generate = load_module(ctx.here / "gen_dumper.py", f"gen_dumper_{TARGET.name}").generate

    crate = ctx.work / "driver"
    (crate / "src").mkdir(parents=True)
    for path in ctx.generated.glob("*.rs"):
        (crate / "src" / path.name).write_text(path.read_text())
    (crate / "src" / "main.rs").write_text(generate(ctx.plans, ctx.specs))
    shims = ctx.work / "shims"
    (shims / "encoding-next").mkdir(parents=True)
    (shims / "encoding-next" / "Cargo.toml").write_text(ENCODING_SHIM)
    (shims / "encoding-next" / "lib.rs").write_text("pub use enc::*;\n")
    (shims / "cp437").mkdir()
    (shims / "cp437" / "Cargo.toml").write_text(CP437_SHIM)
    (shims / "cp437" / "lib.rs").write_text(CP437_LIB)
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "rmq-driver"\nversion = "0.0.0"\nedition = "2018"\n\n'
        f'[dependencies]\nkaitai = {{ path = "{ctx.runtime}" }}\n\n'
        f'[patch.crates-io]\nencoding-next = {{ path = "{shims / "encoding-next"}" }}\n'
        f'cp437 = {{ path = "{shims / "cp437"}" }}\n\n'
        '[profile.dev]\nopt-level = 1\ndebug = false\n')
    (crate / ".cargo").mkdir()
    (crate / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "debian"\n\n'
        f'[source.debian]\ndirectory = "{REGISTRY}"\n\n[net]\noffline = true\n')
    # One target folder for all builds of a test run (the harness's folder above this build's),
    # so that the runtime and its crates compile once when specs are built one by one.
    shared = ctx.work.parents[1] / "rust-target"
    env = {"CARGO_HOME": str(shared / "cargo-home"), "CARGO_TARGET_DIR": str(shared)}
    run_tool(["cargo", "build", "--quiet", "--offline"], cwd=crate, env=env)
    driver = ctx.work / "rmq-driver"
    driver.write_bytes((shared / "debug" / "rmq-driver").read_bytes())
    driver.chmod(0o755)
    return Built(argv=[sys.executable, str(HERE / "linejob.py"), str(driver)])


TARGET = Target(name="rust", title="Rust", ksc="rust", runtime="rust", tools=("cargo", "rustc"), build=build)
