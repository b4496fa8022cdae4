"""Go: the generated parsers as one package (with the `package` clause the compiler cannot write),
a go.mod whose `replace` directives point at ../shared/kaitai/runtimes/go and Debian's
golang.org/x/text, built offline (GOFLAGS=-mod=mod GOPROXY=off)."""

import json
import shutil

from harness import BuildContext, Built, Target, run_tool

XTEXT = "/usr/share/gocode/src/golang.org/x/text"


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def build(ctx: BuildContext) -> Built:
    src = ctx.work / "src"
    (src / "parsers").mkdir(parents=True)
    for path in sorted(ctx.generated.glob("*.go")):
        (src / "parsers" / path.name).write_text("package parsers\n\n" + path.read_text())
    roots = []
    for spec in ctx.specs:
        root = json.loads((ctx.plans / f"{spec}.json").read_text())["root"]
        cls = _camel(root)
        roots.append(f'\t"{spec}": func(io *kaitai.Stream) (interface{{}}, error) {{\n'
                     f'\t\tr := New{cls}()\n\t\terr := r.Read(io, nil, r)\n\t\treturn r, err\n\t}},\n')
    (src / "parsers" / "roots.go").write_text(
        "package parsers\n\nimport \"github.com/kaitai-io/kaitai_struct_go_runtime/kaitai\"\n\n"
        "// Roots reads the root type of each spec.\n"
        "var Roots = map[string]func(*kaitai.Stream) (interface{}, error){\n" + "".join(roots) + "}\n")
    shutil.copy(ctx.here / "driver.go", src / "main.go")
    (src / "go.mod").write_text(
        "module rmqtargets\n\ngo 1.19\n\n"
        "require github.com/kaitai-io/kaitai_struct_go_runtime v0.0.0\n"
        "require golang.org/x/text v0.0.0\n\n"
        f"replace github.com/kaitai-io/kaitai_struct_go_runtime => {ctx.runtime}\n"
        f"replace golang.org/x/text => {XTEXT}\n")
    env = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": str(ctx.work / "gocache"),
           "GOPATH": str(ctx.work / "gopath"), "GO111MODULE": "on", "GOTOOLCHAIN": "local"}
    run_tool(["go", "build", "-o", str(ctx.work / "driver"), "."], cwd=src, env=env)
    return Built(argv=[str(ctx.work / "driver")])


TARGET = Target(name="go", title="Go", ksc="go", runtime="go", tools=("go",), build=build)
