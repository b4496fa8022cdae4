"""Perl: the Kaitai Perl parsers with the official runtime (IO::KaitaiStruct), run by ``perl``.

The compiler's Perl target ignores type parameters (``params:``) without a warning: a
parameter reads as undef inside the type. The types the compared specs read take none (the
commit log's `host_v4`/`host_v6` by a switch, `message` reading its version from its record,
the index file's `inferred_tables` its counts from the root), so nothing is a limit.
"""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    lib = str(ctx.runtime / "lib")
    # Every generated module must compile with the runtime.
    for path in sorted(ctx.generated.glob("*.pm")):
        run_tool(["perl", "-I", lib, "-I", str(ctx.generated), "-c", str(path)])
    return Built(argv=["perl", "-I", lib, str(ctx.here / "driver.pl")])


LIMITS: dict[str, str] = {}

TARGET = Target(name="perl", title="Perl", ksc="perl", runtime="perl", tools=("perl",), build=build,
                limits=LIMITS)
