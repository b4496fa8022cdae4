"""PHP: the Kaitai PHP parsers with the official runtime (its lib/ autoloaded), run by ``php`` (php-cli)."""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    # Every generated file must at least pass PHP's syntax check.
    for path in sorted(ctx.generated.glob("*.php")):
        run_tool(["php", "-l", str(path)])
    return Built(argv=["php", "-d", "memory_limit=4G", str(ctx.here / "driver.php"), str(ctx.runtime / "lib")])


TARGET = Target(name="php", title="PHP", ksc="php", runtime="php", tools=("php",), build=build)
