"""Lua 5.3: the Kaitai Lua parsers with the official runtime, run by ``lua5.3`` (JSON input via lua-dkjson)."""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    env = {"LUA_PATH": f"{ctx.runtime}/?.lua;{ctx.generated}/?.lua;;"}
    # Every generated module must load with the runtime (a syntax error is a build error).
    for spec in ctx.specs:
        run_tool(["lua5.3", "-e", f"require('{spec}')"], env=env)
    return Built(argv=["lua5.3", str(ctx.here / "driver.lua")], env=env)


TARGET = Target(name="lua", title="Lua 5.3", ksc="lua", runtime="lua", tools=("lua5.3",), build=build)
