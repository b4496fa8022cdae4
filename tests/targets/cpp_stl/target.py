"""C++ (cpp_stl): the generated classes and ../shared/kaitai/runtimes/cpp_stl compiled with g++
(iconv strings, zlib) with a dumper generated from the plans (gen_dumper.py); the driver reads
a line job (linejob.py)."""

import sys

from harness import HERE, BuildContext, Built, Target, load_module, run_tool


def build(ctx: BuildContext) -> Built:
    generate = load_module(ctx.here / "gen_dumper.py", f"gen_dumper_{TARGET.name}").generate

    main = ctx.work / "dump.cpp"
    main.write_text(generate(ctx.plans, ctx.specs))
    objs = []
    sources = [ctx.runtime / "kaitai" / "kaitaistream.cpp", *sorted(ctx.generated.glob("*.cpp")), main]
    flags = ["-std=c++11", "-O1", "-w", "-DKS_STR_ENCODING_ICONV", "-DKS_ZLIB", f"-I{ctx.runtime}",
             f"-I{ctx.generated}"]
    for src in sources:  # one object per file, so a failing spec names its own file
        obj = ctx.work / (src.stem + ".o")
        run_tool(["g++", *flags, "-c", str(src), "-o", str(obj)])
        objs.append(str(obj))
    run_tool(["g++", "-o", str(ctx.work / "driver"), *objs, "-lz"])
    return Built(argv=[sys.executable, str(HERE / "linejob.py"), str(ctx.work / "driver")])


TARGET = Target(name="cpp_stl", title="C++", ksc="cpp_stl", runtime="cpp_stl", tools=("g++",), build=build)
