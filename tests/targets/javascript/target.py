"""JavaScript: the parsers the Kaitai Web IDE runs, under Node with the npm kaitai-struct runtime.

The driver is the Web IDE dumper ``tests/kaitai_dump.js`` (it also prints ``_label``).

The runtime (npm ``kaitai-struct`` 0.11.0, which the Web IDE also runs) reads ``s8`` as a
JavaScript Number, built from the two 32-bit halves: a negative half XORed with ``0xffffffff``
is a signed 32-bit result, so a value below -2^31 whose low half is below 2^31 reads 2^32 too
high (-2147483649 reads 2147483647, -4294967296 reads 0), and no Number holds every integer
beyond 2^53. The consume-queue units that hold a ``consumequeue_ext`` address (a tagsCode from
-2^63 to -2^31-1, with ``enableConsumeQueueExt``) are such values; every other 64-bit field of
the vectors is within 2^53 and not below -2^31. No spec change avoids it: the spec can only
declare the field ``s8``.
"""

from harness import KSC, REPO, BuildContext, Built, Target


def build(ctx: BuildContext) -> Built:
    return Built(argv=["node", str(REPO / "tests" / "kaitai_dump.js")], env={"NODE_PATH": str(KSC / "node_modules")})


_EXT = ("the runtime's s8 read (kaitai-struct 0.11.0, as in the Web IDE): values below -2^31 with a low half "
        "below 2^31 read 2^32 too high, and a Number is exact only to 2^53; a consumequeue_ext address "
        "(-2^63 to -2^31-1) is such a value")
LIMITS = {"rocketmq_consumequeue.unit.tags_code[ext address]": _EXT,
          "rocketmq_consumequeue.unit.is_ext_address[ext address]": _EXT + " (so is_ext_address is false for "
                                                                            "some of them)"}

TARGET = Target(name="javascript", title="JavaScript", ksc="javascript", tools=("node",), build=build,
                limits=LIMITS)
