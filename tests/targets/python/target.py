"""Python: the Kaitai Python parsers (what generated/kaitai/ holds), with the PyPI kaitaistruct runtime."""

import sys

from harness import BuildContext, Built, Target


def build(ctx: BuildContext) -> Built:
    return Built(argv=[sys.executable, str(ctx.here / "driver.py")])


TARGET = Target(name="python", title="Python", ksc="python", tools=(), build=build)
