"""Ruby: the Kaitai Ruby parsers with the official runtime (its lib/ on the load path), run by ``ruby``."""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    lib = ctx.runtime / "lib"
    # Every generated file loads with the runtime (a syntax or load error is a build error).
    for spec in ctx.specs:
        run_tool(["ruby", "-I", str(lib), "-I", str(ctx.generated), "-e", f"require '{spec}'"])
    return Built(argv=["ruby", "-I", str(lib), str(ctx.here / "driver.rb")])


TARGET = Target(name="ruby", title="Ruby", ksc="ruby", runtime="ruby", tools=("ruby",), build=build)
