"""Perl: the Kaitai Perl parsers with the official runtime (IO::KaitaiStruct), run by ``perl``.

The compiler's Perl target ignores type parameters (``params:``) without a warning: a
parameter reads as undef inside the type, so every type that takes one decodes as if it
were false or zero (LIMITS below).
"""

from harness import BuildContext, Built, Target, run_tool


def build(ctx: BuildContext) -> Built:
    lib = str(ctx.runtime / "lib")
    # Every generated module must compile with the runtime.
    for path in sorted(ctx.generated.glob("*.pm")):
        run_tool(["perl", "-I", lib, "-I", str(ctx.generated), "-c", str(path)])
    return Built(argv=["perl", "-I", lib, str(ctx.here / "driver.pl")])


_PARAMS = ("the compiler's Perl target ignores type parameters (`params:`): {what} reads as if its parameter "
           "were false, {effect}")
_HOST = _PARAMS.format(what="`host(is_v6)`", effect="so an IPv6 host is read as 4 bytes and every later field "
                       "of that record is shifted")
LIMITS = {
    "rocketmq_commitlog.host.address": _HOST,
    "rocketmq_commitlog.host.port": _HOST,
    "rocketmq_commitlog.message.store_timestamp": _HOST,
    "rocketmq_commitlog.message.reconsume_times": _HOST,
    "rocketmq_commitlog.message.ofs_prepared_transaction": _HOST,
    "rocketmq_commitlog.message.body": _HOST,
    "rocketmq_commitlog.message.topic": _HOST,
    "rocketmq_commitlog.message.properties": _HOST,
    "rocketmq_commitlog.message.ofs_physical": _HOST + " (the message id is built from the store host)",
    "rocketmq_message_batch.messages": _HOST + " (the inner batches are the bodies of such records)",
}

TARGET = Target(name="perl", title="Perl", ksc="perl", runtime="perl", tools=("perl",), build=build,
                limits=LIMITS)
