"""What the fuzz tests damage and run: the files of a vector store by kind, and every reader and command of each.

Shared by ``tests/test_fuzz.py`` (hypothesis, in the suite) and
``tests/fuzz_atheris.py`` (coverage-guided, for longer runs). :func:`run`
raises whatever is not one of the package's typed errors, or a command that
exits with a status the command table does not have.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

import rmqformats
from rmqformats import reference
from rmqformats.cli import main as cli_main
from rmqformats.cli import status
from rmqformats.errors import InvalidMessageIdError, RmqFormatError

HERE = Path(__file__).parent
VECTOR_STORE = HERE / "fixtures" / "rocketmq-5.3.3" / "store"
TYPED = (RmqFormatError, InvalidMessageIdError)

#: Files of the 5.3.3 vector store by kind, relative to the store root.
FILES = {
    "commitlog": ["commitlog/00000000000000000000", "commitlog/00000000000000262144",
                  "commitlog/00000000000001048576"],
    "consumequeue": ["consumequeue/TopicTest/0/00000000000000000000",
                     "consumequeue/SCHEDULE_TOPIC_XXXX/0/00000000000000000000",
                     "consumequeue/TopicCqRoll/0/00000000000000001280"],
    "batchconsumequeue": ["batchconsumequeue/TopicBatchCQ/0/00000000000000000000"],
    "index": ["index/20261122195022317", "index/20261122195022363"],
    "checkpoint": ["checkpoint", "config/timercheck"],
    "timer": ["timerlog/00000000000000000000", "timerwheel"],
    "config": ["config/consumerOffset.json", "config/topics.json"],
}


def mutate(data: bytes, ops) -> bytes:
    """``data`` with the mutations applied in order (see ``tests/test_fuzz.py`` for the kinds)."""
    out = bytearray(data)
    for op in ops:
        kind, pos = op[0], min(op[1], len(out))
        if kind == "xor" and pos < len(out):
            out[pos] ^= op[2]
        elif kind == "set":
            width, value = op[2], op[3]
            value &= (1 << (8 * width)) - 1
            chunk = value.to_bytes(width, "big")
            out[pos:pos + width] = chunk[:max(0, len(out) - pos)]
        elif kind == "zero":
            end = min(len(out), pos + op[2])
            out[pos:end] = bytes(end - pos)
        elif kind == "cut":
            del out[pos:]
        elif kind == "insert":
            out[pos:pos] = op[2].encode("utf-8", "surrogatepass")
        elif kind == "delete":
            del out[pos:pos + op[2]]
    return bytes(out)


def _typed(fn, *args, **kwargs):
    """``fn(...)``; a typed error is a result like any other."""
    try:
        return fn(*args, **kwargs)
    except TYPED as exc:
        assert str(exc)  # says where and why
        return exc


def _items(fn) -> list:
    """``fn()``'s list, or ``[]`` when it raises a typed error."""
    got = _typed(fn)
    return [] if isinstance(got, Exception) else got


def command(*argv: str) -> tuple[int, str, str]:
    """Run ``rmqformats ARGV`` in this process; returns (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(list(argv))
        except SystemExit as exc:  # argparse and the commands' own usage errors
            code = exc.code if isinstance(exc.code, int) else status.ERROR
            if not isinstance(exc.code, int):
                err.write(str(exc.code))
    assert code in (status.OK, status.FINDINGS, status.ERROR, status.DAMAGED), (argv, code, err.getvalue())
    if code == status.ERROR:
        assert err.getvalue().strip(), argv  # an error says what it is
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _drain(iterable) -> int:
    n = 0
    for _ in iterable:
        n += 1
    return n


def _commitlog(root: str, rel: str) -> None:
    store = rmqformats.open_store(root)
    log = store.commitlog
    for verify in (False, True):
        scan = log.scan(verify_crc=verify)
        seen = 0
        for msg in _items(lambda: list(scan)):
            assert 0 < msg.store_size <= os.path.getsize(msg.segment)
            seen += 1
            _typed(lambda: msg.body)
            msg.to_json_dict() if msg.sys_flag & 1 == 0 else _typed(msg.to_json_dict)
            msg.store_time, msg.born_time, msg.msg_id, msg.born_host, msg.properties  # noqa: B018
            _typed(msg.inner_messages)
        if scan.end is not None:
            assert scan.end.offset >= 0
    _typed(lambda: log.to_arrow())
    _typed(lambda: log.to_arrow(verify_crc=True))
    for offset in (0, 233, 262144, 1048576):
        _typed(log.read, offset)
    path = os.path.join(root, rel)
    for reader in (reference.kaitai_records, reference.construct_records):
        _typed(lambda: _drain(reader(path)))
    command("inspect", root)
    command("inspect", root, "--format", "jsonl")
    command("messages", root)
    command("messages", root, "--format", "jsonl", "--verify-crc")
    command("messages", root, "--offset", "0")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("jsonl", "csv", "parquet"):
            command("export", root, "--to", fmt, os.path.join(tmp, f"out.{fmt}"))


def _consumequeue(root: str, rel: str) -> None:
    parts = rel.split("/")
    topic, qid = parts[1], int(parts[2])
    store = rmqformats.open_store(root)
    cq = store.consume_queue(topic, qid)
    _typed(lambda: [(u, cq.resolve(u)) for u in cq.units()])
    _typed(lambda: cq.to_arrow())
    _typed(lambda: store.queues_to_arrow())
    _typed(store.queues)
    _typed(lambda: store.check_consistency())
    command("queue", root)
    command("queue", root, topic, str(qid), "--resolve")
    command("queue", root, topic, str(qid), "--tag", "TagA", "--format", "jsonl")
    command("check", root)
    command("lag", root)


def _batchconsumequeue(root: str, rel: str) -> None:
    parts = rel.split("/")
    topic, qid = parts[1], int(parts[2])
    store = rmqformats.open_store(root)
    bcq = store.batch_consume_queue(topic, qid)
    _typed(lambda: list(bcq.units()))
    _typed(lambda: list(bcq.messages()))
    _typed(lambda: bcq.check())
    _typed(lambda: store.batch_queues_to_arrow())
    command("queue", root, topic, str(qid))
    command("queue", root, topic, str(qid), "--resolve", "--format", "jsonl")
    command("check", root)
    command("inspect", root)


def _index(root: str, rel: str) -> None:
    store = rmqformats.open_store(root)
    for mapped in (False, True):
        def walk():
            with rmqformats.index.IndexFiles(os.path.join(root, "index"), mapped=mapped) as files:
                for f in files:
                    f.header.begin_time if hasattr(f.header, "begin_time") else None  # noqa: B018
                    _typed(lambda: f.entry_array(1, None))
                return files.query_offsets("TopicTest", "key-0", max_num=100_000_000)
        _typed(walk)
    _typed(lambda: store.index_to_arrow())
    _typed(lambda: store.lookup("TopicTest", "key-0", max_num=1000))
    command("lookup", root, "--topic", "TopicTest", "--key", "key-0")
    command("lookup", root, "--topic", "TopicTest", "--key", "key-0", "--raw", "--max", "100000000")
    command("lookup", root, "--topic", "TopicTest", "--key", "order-0", "--format", "jsonl")
    command("inspect", root)


def _checkpoint(root: str, rel: str) -> None:
    store = rmqformats.open_store(root)
    cp = _typed(store.checkpoint)
    if cp is not None and not isinstance(cp, Exception):
        cp.physic_msg_time, cp.logics_msg_time, cp.index_msg_time, cp.min_timestamp  # noqa: B018
    timer = store.timer()
    _typed(timer.checkpoint)
    command("inspect", root)
    command("inspect", root, "--format", "jsonl")


def _timer(root: str, rel: str) -> None:
    store = rmqformats.open_store(root)
    timer = store.timer()
    scan = timer.scan()
    for u in _items(lambda: list(scan)):
        u.delayed_time  # noqa: B018
    wheel = _typed(lambda: timer.wheel)
    if wheel is not None and not isinstance(wheel, Exception):
        with wheel:
            for i in wheel.used_indexes()[:50]:
                slot = wheel.raw_slot(int(i))
                slot.time  # noqa: B018
                _typed(timer.slot_units, slot)
            _typed(wheel.slots_between, 0, 1 << 62)
    command("inspect", root)


def _config(root: str, rel: str) -> None:
    from rmqformats.config import load_config, read_config_file
    from rmqformats.config.stream import iter_consumer_offsets

    path = os.path.join(root, rel)
    f = _typed(read_config_file, path)
    if not isinstance(f, Exception):
        f.to_bytes()
        if f.model is not None and hasattr(f.model, "entries"):
            f.model.entries()
    _typed(load_config, os.path.join(root, "config"))
    if rel.endswith("consumerOffset.json"):
        _typed(lambda: list(iter_consumer_offsets(path)))
    command("config", root)
    command("config", root, "--format", "jsonl")
    command("config", root, "--file", os.path.basename(rel))
    command("lag", root)
    command("lag", root, "--format", "jsonl")


RUNNERS = {"commitlog": _commitlog, "consumequeue": _consumequeue, "batchconsumequeue": _batchconsumequeue,
           "index": _index, "checkpoint": _checkpoint, "timer": _timer, "config": _config}


#: ``dump --kind`` of the files whose kind name is not their FILES key.
_DUMP_KINDS = {"config/timercheck": "timercheck", "checkpoint": "checkpoint", "config": "config", "timerlog": "timerlog", "timerwheel": "timerwheel"}


def run(kind: str, root, rel: str) -> None:
    """Every reader and command of file kind ``kind`` against the store at ``root``, ``rel`` damaged."""
    root = os.fspath(root)
    RUNNERS[kind](root, rel)
    path = os.path.join(root, rel)
    command("dump", path, "--format", "jsonl", "--deep")
    command("dump", path, "--summary")
    command("dump", path, "--kind", _DUMP_KINDS.get(rel, _DUMP_KINDS.get(rel.split("/")[0], kind)))
    if kind == "commitlog":
        with tempfile.TemporaryDirectory() as tmp:
            command("cut", path, "--records", "3", "-o", os.path.join(tmp, "piece"))


def warm_up(root) -> None:
    """First calls that compile (the columnar kernels) or load (schemas), outside any time limit."""
    store = rmqformats.open_store(root)
    store.commitlog.to_arrow()
    store.queues_to_arrow()
    command("config", os.fspath(root))


