"""A process forked after reading a store runs every command as a fresh process does.

The parent reads one kind of data (a RocksDB consume queue, RocksDB
configs, the RocksDB message store of a 5.5 store, the commit log in
batches on several threads, the index), then forks (what multiprocessing
does by default on Linux); the child runs each command in-process, under a
time limit, and its exit statuses and outputs must equal those of the same
commands run in a process that never forked. RocksDB's background threads,
started in the parent by its first open, are not in the child: a flush or
compaction scheduled there would wait forever, which is how ``rebuild``
into a RocksDB consume queue hung.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time

import pytest

import rmqformats
from rmqformats.synth.rocksdb import rocksdb_twin, write_rocksdb_store

from conftest import store_path
from test_rocksdb import _write_configs

#: Seconds a child may take for all its commands (a hang is the failure looked for).
LIMIT = 300


def _commands(twin: str, store55: str, out: str) -> list[list[str]]:
    return [
        ["inspect", twin, "--format", "jsonl"],
        ["messages", twin, "--format", "jsonl"],
        ["queue", twin, "TopicTest", "1", "--format", "jsonl"],
        ["lag", twin, "--format", "jsonl"],
        ["config", twin, "--format", "jsonl"],
        ["check", twin, "--format", "jsonl"],
        ["check", store55, "--format", "jsonl"],
        ["lookup", twin, "--topic", "TopicTest", "--key", "key-1", "--format", "jsonl"],
        ["export", twin, "--to", "jsonl", f"{out}/export.jsonl"],
        ["export", twin, "--to", "parquet", f"{out}/parquet"],
        ["report", twin, "-o", f"{out}/report.html"],
        ["rebuild", twin, "--out", f"{out}/rebuilt", "--convert-queues", "rocksdb"],
        ["queue", f"{out}/rebuilt", "TopicTest", "1", "--format", "jsonl"],
        ["rebuild", store55, "--out", f"{out}/rebuilt55"],
        ["check", f"{out}/rebuilt", "--format", "jsonl"],
    ]


def _run_all(commands: list[list[str]], into: str, out: str) -> None:
    """Run each command in this process; exit status and stdout (``out`` written OUT) into ``into``/<n>.json."""
    import contextlib
    import io

    from rmqformats.cli import main
    for n, argv in enumerate(commands):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
        text = buf.getvalue().replace(out, "OUT")
        with open(os.path.join(into, f"{n}.json"), "w") as f:
            json.dump({"argv": argv[0], "code": code, "stdout": text}, f)


def _read(store: str, store55: str, kind: str) -> None:
    s = rmqformats.open_store(store)
    if kind == "rocksdb-queue":
        assert len(list(s.consume_queue("TopicTest", 1).units())) > 0
    elif kind == "rocksdb-config":
        assert s.rocksdb_configs()
    elif kind == "rocksdb-messagestore":
        ms = rmqformats.open_store(store55).rocksdb_message_store()
        assert list(ms.index_entries()) and list(ms.timer_entries())
    elif kind == "commitlog-threads":
        assert sum(b.num_rows for b in s.commitlog.batches(threads=2, batch_size=64)) > 0
    elif kind == "index":
        assert len(list(s.lookup("TopicTest", "key-1"))) > 0


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("fork")
    twin = root / "twin"
    shutil.copytree(store_path("rocketmq-5.1.4"), twin)
    rocksdb_twin(str(twin))
    _write_configs(str(twin), "v2")  # the configs in RocksDB too: lag and config read them
    store55 = root / "store55"
    write_rocksdb_store(str(store55))
    ref = root / "ref"
    (ref / "out").mkdir(parents=True)
    (ref / "res").mkdir()
    _run_all(_commands(str(twin), str(store55), str(ref / "out")), str(ref / "res"), str(ref / "out"))
    return str(twin), str(store55), ref


@pytest.mark.parametrize("kind", ["rocksdb-queue", "rocksdb-config", "rocksdb-messagestore", "commitlog-threads",
                                  "index"])
def test_commands_in_a_child_forked_after_a_read(stores, kind, tmp_path):
    twin, store55, ref = stores
    _read(twin, store55, kind)
    (tmp_path / "out").mkdir()
    (tmp_path / "res").mkdir()
    commands = _commands(twin, store55, str(tmp_path / "out"))
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            _run_all(commands, str(tmp_path / "res"), str(tmp_path / "out"))
            code = 0
        except BaseException as exc:  # noqa: BLE001 (reported through the file the parent reads)
            with open(tmp_path / "child-error", "w") as f:
                f.write(repr(exc))
        finally:
            sys.stdout.flush()
            os._exit(code)
    end = time.monotonic() + LIMIT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > end:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            finished = sorted(int(p.stem) for p in (tmp_path / "res").iterdir())
            pytest.fail(f"after reading {kind}, the forked child hung; it finished commands {finished} of "
                        f"{[c[0] for c in commands]}")
        time.sleep(0.1)
    error = (tmp_path / "child-error").read_text() if (tmp_path / "child-error").exists() else ""
    assert os.waitstatus_to_exitcode(status) == 0, error
    for n, argv in enumerate(commands):
        got = json.loads((tmp_path / "res" / f"{n}.json").read_text())
        want = json.loads((ref / "res" / f"{n}.json").read_text())
        assert got == want, (kind, argv)
    assert (tmp_path / "out" / "rebuilt" / "_SUCCESS").exists() and (tmp_path / "out" / "parquet" / "_SUCCESS").exists()
