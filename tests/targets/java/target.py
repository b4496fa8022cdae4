"""Java: the generated classes, the runtime's sources (../shared/kaitai/runtimes/java) and the
driver compiled together with plain `javac` (Maven's registry is not reachable)."""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    runtime = sorted(str(p) for p in (ctx.runtime / "src" / "main" / "java").rglob("*.java"))
    sources = sorted(str(p) for p in ctx.generated.glob("*.java"))
    classes = ctx.work / "classes"
    classes.mkdir()
    run_tool(["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(classes), *runtime, *sources,
              str(ctx.here / "Driver.java")])
    return Built(argv=["java", "-Xss16m", "-cp", str(classes), "Driver"])


TARGET = Target(name="java", title="Java", ksc="java", runtime="java", tools=("javac", "java"), build=build)
