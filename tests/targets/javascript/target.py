"""JavaScript: the parsers the Kaitai Web IDE runs, under Node with the npm kaitai-struct runtime.

The driver is the Web IDE dumper ``tests/kaitai_dump.js`` (it also prints ``_label``).
"""

from harness import KSC, REPO, BuildContext, Built, Target


def build(ctx: BuildContext) -> Built:
    return Built(argv=["node", str(REPO / "tests" / "kaitai_dump.js")], env={"NODE_PATH": str(KSC / "node_modules")})


TARGET = Target(name="javascript", title="JavaScript", ksc="javascript", tools=("node",), build=build)
