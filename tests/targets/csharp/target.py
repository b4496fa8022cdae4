"""C#: the Kaitai C# parsers compiled with Mono's ``mcs`` together with the official runtime's
sources and the driver, run by ``mono`` (Debian has no .NET SDK)."""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    exe = ctx.work / "driver.exe"
    runtime = [str(ctx.runtime / "KaitaiStream.cs"), str(ctx.runtime / "KaitaiStruct.cs")]
    run_tool(["mcs", "-nologo", "-nowarn:0108,0114,0162,0168,0219,0414", "-optimize", f"-out:{exe}",
              *runtime, *sorted(str(p) for p in ctx.generated.glob("*.cs")), str(ctx.here / "Driver.cs")])
    return Built(argv=["mono", str(exe)])


_ENUM = ("does not build: the compiler's C# target declares every enum with C#'s default `int` base, and {what} "
         "has values of 2^31 or more ({values}), which `int` cannot hold (error CS0031). "
         "The only spec-side way round, reading the magic as s4 with negative enum values, would change the field "
         "in every target and in the readers built on "
         "it")
LIMITS = {
    "rocketmq_commitlog._build": _ENUM.format(what="the record magic (`magic_code`)",
                                              values="BLANK 0xCBD43194, MESSAGE_V1/V2 0xDAA320A7/AB"),
    "rocketmq_dledger_data._build": _ENUM.format(what="the DLedger entry magic", values="BLANK 0xFFFFFFFF"),
    "rocketmq_tiered_index._build": _ENUM.format(what="the tiered index file magic",
                                                 values="0xBCC50285 and 0xBCC50289"),
    "rocketmq_timer_log._build": _ENUM.format(what="the timer-log unit magic", values="BLANK 0xCBD43194"),
}

TARGET = Target(name="csharp", title="C# (Mono)", ksc="csharp", runtime="csharp", tools=("mcs", "mono"),
                build=build, limits=LIMITS)
