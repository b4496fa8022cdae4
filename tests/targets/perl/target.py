"""Perl: the Kaitai Perl parsers with the official runtime (IO::KaitaiStruct), run by ``perl``.

The compiler's Perl target ignores type parameters (``params:``) without a warning: a
parameter reads as undef inside the type, so every type that takes one decodes as if it
were false or zero (LIMITS below).
"""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    lib = str(ctx.runtime / "lib")
    # Every generated module must compile with the runtime.
    for path in sorted(ctx.generated.glob("*.pm")):
        run_tool(["perl", "-I", lib, "-I", str(ctx.generated), "-c", str(path)])
    return Built(argv=["perl", "-I", lib, str(ctx.here / "driver.pl")])


TARGET = Target(name="perl", title="Perl", ksc="perl", runtime="perl", tools=("perl",), build=build)
