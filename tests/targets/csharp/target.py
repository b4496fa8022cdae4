"""C#: the Kaitai C# parsers compiled with Mono's ``mcs`` together with the official runtime's
sources and the driver, run by ``mono`` (Debian has no .NET SDK)."""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    exe = ctx.work / "driver.exe"
    runtime = [str(ctx.runtime / "KaitaiStream.cs"), str(ctx.runtime / "KaitaiStruct.cs")]
    run_tool(["mcs", "-nologo", "-nowarn:0108,0114,0162,0168,0219,0414", "-optimize", f"-out:{exe}",
              *runtime, *sorted(str(p) for p in ctx.generated.glob("*.cs")), str(ctx.here / "Driver.cs")])
    return Built(argv=["mono", str(exe)])


TARGET = Target(name="csharp", title="C# (Mono)", ksc="csharp", runtime="csharp", tools=("mcs", "mono"),
                build=build)
