"""The command line starts the walk's fork server before its own imports, when its words say the walk will
use worker processes; the server ignores Ctrl-C (the command handles it), and one while it starts is the
command's."""

from __future__ import annotations

import os
from multiprocessing import forkserver

import pytest

from rmqformats.walk import jobs

from conftest import VERSIONS, store_path
from layoutstores import dledger_store

pytestmark = pytest.mark.skipif("forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                                reason="no fork server on this platform")


def test_the_guess(monkeypatch, tmp_path):
    started = []
    monkeypatch.setattr(jobs, "start_fork_server", lambda preload=(): started.append(tuple(preload)))
    root = str(store_path(VERSIONS[-1]))
    size = sum(os.path.getsize(os.path.join(root, "commitlog", n)) for n in os.listdir(os.path.join(root, "commitlog")))
    monkeypatch.setenv(jobs.MIN_ENV, str(size))
    assert jobs.prestart(["inspect", root, "--jobs", "2"], preload=("x",)) and started == [("x",)]
    assert jobs.prestart(["inspect", "--jobs=3", root])
    assert jobs.prestart(["check", root, "--threads", "2"])
    assert not jobs.prestart(["inspect", root, "--jobs", "1"])
    assert not jobs.prestart(["inspect", root, "--jobs", "two"])
    assert not jobs.prestart(["inspect", str(tmp_path), "--jobs", "2"])  # no segments there
    assert not jobs.prestart(["inspect", "--jobs", "2"])
    monkeypatch.setenv(jobs.MIN_ENV, str(size + 1))  # under the size where workers are used
    assert not jobs.prestart(["inspect", root, "--jobs", "2"])
    monkeypatch.setenv(jobs.MIN_ENV, "0")
    seg = os.path.join(root, "commitlog", sorted(os.listdir(os.path.join(root, "commitlog")))[0])
    assert jobs.prestart(["messages", seg, "--jobs", "2"])  # a segment file named alone
    dl = dledger_store(VERSIONS[-1], tmp_path / "dledger")[0]
    assert jobs.prestart(["dledger", str(dl), "--jobs", "2"])  # a DLedger store root: its dledger-*/data
    monkeypatch.setattr(jobs, "default_jobs", lambda: 1)
    assert not jobs.prestart(["inspect", root])  # one CPU: no workers by default
    assert len(started) == 5


def _signal_set(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line.split()[1] for line in f if line.startswith(field + ":")), 16)


def test_the_server_ignores_ctrl_c():
    """The server starts with SIGINT blocked (its imports are not cut short by a Ctrl-C sent to the process
    group) and ignores it once it serves; the workers it forks ignore it too."""
    from rmqformats.walk import parallel

    jobs.start_fork_server()
    pid = forkserver._forkserver._forkserver_pid
    assert pid is not None
    assert _signal_set(pid, "SigBlk") & (1 << (2 - 1))  # SIGINT
    worker = parallel._pool(1).submit(os.getpid).result()
    assert _signal_set(pid, "SigIgn") & (1 << (2 - 1))  # it served a worker
    assert _signal_set(worker, "SigIgn") & (1 << (2 - 1))


_SIGINT_WHILE_THE_SERVER_STARTS = r"""
import os, signal
from multiprocessing import forkserver, util
from rmqformats import interrupts
from rmqformats.walk import jobs
interrupts.install()
spawn = util.spawnv_passfds
def spawn_after_a_sigint(path, args, passfds):
    if "multiprocessing.forkserver" in args[-1]:  # the server's spawn, not the resource tracker's
        os.kill(os.getpid(), signal.SIGINT)
    return spawn(path, args, passfds)
util.spawnv_passfds = spawn_after_a_sigint
try:
    jobs.start_fork_server()
    print("not interrupted")
except interrupts.Interrupted as e:
    print("interrupted", e.signum, forkserver._forkserver._forkserver_pid is not None)
"""


def test_a_sigint_while_the_server_starts_is_not_lost():
    """Ctrl-C while this process starts the server (spawns it): taken once the server is started, not
    ignored as the server's own would be."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _SIGINT_WHILE_THE_SERVER_STARTS], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.splitlines() == ["interrupted 2 True"], proc.stdout + proc.stderr


def test_the_walking_commands_are_those_with_jobs():
    """The command line starts the fork server early only for the commands that take ``--jobs``."""
    import argparse

    from rmqformats.cli import WALKING, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert WALKING == {name for name, parser in sub.choices.items() if "--jobs" in parser._option_string_actions}


def test_a_command_without_workers_starts_no_server(monkeypatch, capsys):
    from rmqformats.cli import main

    started = []
    monkeypatch.setattr(jobs, "prestart", lambda words, preload=(): started.append(words))
    monkeypatch.setenv(jobs.MIN_ENV, "0")
    root = str(store_path(VERSIONS[-1]))
    assert main(["compaction", root]) == 0
    assert main(["inspect", root, "--jobs", "1"]) == 0
    assert started == [["inspect", root, "--jobs", "1"]]


def test_workers_print_no_traceback():
    """A worker's uncaught exception (one forked while the reader is stopped, say) prints nothing: the
    reader reports what went wrong in its one line."""
    from rmqformats.walk import parallel

    pool = parallel._pool(1)
    hook = "(lambda h: h.__module__ + '.' + h.__qualname__)(__import__('sys').excepthook)"
    assert pool.submit(eval, hook).result() == "rmqformats.walk.preload._quiet"


def test_the_pools_end_before_the_exit_hook_of_concurrent_futures():
    """The walk's pools are shut down before concurrent.futures' exit hook runs, which wakes each pool's
    thread without its lock: a thread closing its pipe then (a range's result just in after a walk that
    ended early) made the hook print a traceback (EBADF) after the command's output."""
    import threading
    import time
    from concurrent.futures import process

    from rmqformats.walk import parallel

    hooks = [getattr(h, "func", h) for h in threading._threading_atexits]
    # threading runs them last registered first
    assert hooks.index(parallel.close_pools) > hooks.index(process._python_exit)
    pool = parallel._pool(2)
    # Tasks long enough that a loaded host cannot finish them before the shutdown: two run, one waits in the
    # pool's call queue, and the rest are still pending when it is shut down.
    running = [pool.submit(time.sleep, 1.0) for _ in range(8)]
    wakeup = pool._executor_manager_thread_wakeup
    thread = pool._executor_manager_thread
    parallel.close_pools()
    assert wakeup._closed and not thread.is_alive()  # the hook passes a closed pipe by
    assert sum(f.cancelled() for f in running) >= 3 and all(f.done() for f in running)
    again = parallel._pool(2)
    assert again is not pool and again.submit(os.getpid).result() != os.getpid()


def test_segment_names_are_the_queue_files():
    from rmqformats.queuefiles import QUEUE_FILE_NAME

    assert jobs._SEGMENT_NAME.pattern in QUEUE_FILE_NAME.pattern


def test_building_the_command_line_imports_no_pandas():
    """pyarrow imports pandas (0.3–0.6 s) the first time it makes an array or scalar from Python or numpy
    values: the command line's parser, which every command builds, must not make one."""
    import subprocess
    import sys
    code = "import sys; from rmqformats.cli import build_parser; build_parser(); print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


_CHECK_WORKERS = r"""
import contextlib, io, json, sys
from rmqformats.cli import main
from rmqformats.walk import parallel
if __name__ == "__main__":
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["check", sys.argv[1], "--jobs", "2", "--format", "jsonl"])
    # Each task holds its worker a moment, so that both workers answer.
    ask = "(__import__('time').sleep(0.5), 'pandas' in __import__('sys').modules)[1]"
    pool = parallel._pool(2)
    answers = [job.result() for job in [pool.submit(eval, ask) for _ in range(2)]]
    print(json.dumps([code, "pandas" in sys.modules, answers]))
"""


@pytest.mark.parametrize("version", VERSIONS)
def test_check_with_workers_imports_no_pandas(version, tmp_path):
    """``check --jobs 2``: neither the command nor its workers import pandas (their fork server does not
    preload it, and the check's fold turns no column into numpy through pyarrow's conversions)."""
    import json
    import subprocess
    import sys

    script = tmp_path / "check_workers.py"
    script.write_text(_CHECK_WORKERS)
    env = {**os.environ, jobs.MIN_ENV: "0", jobs.RANGE_ENV: "4096"}
    out = subprocess.run([sys.executable, str(script), str(store_path(version))], capture_output=True, text=True,
                         timeout=300, env=env, cwd=tmp_path).stdout
    code, main_pandas, workers = json.loads(out.splitlines()[-1])
    assert code == 0 and main_pandas is False and workers == [False, False]


def test_each_command_is_parsed_by_its_group_alone():
    """The parser of one command's run imports that command's group alone: the groups add the commands
    ``COMMANDS`` names for them, and a run's parser gives the same arguments as the whole parser."""
    import argparse

    from rmqformats.cli import COMMANDS, _groups, _parser_class, build_parser

    added = {}
    for group in _groups():
        sub = _parser_class()(prog="rmqformats").add_subparsers(dest="command")
        group.add_commands(sub)
        added.update({name: group.__name__.rsplit(".", 1)[1] for name in sub.choices})
    assert added == COMMANDS
    whole = build_parser()
    sub = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS)
    root = str(store_path(VERSIONS[-1]))
    for argv in (["dump", root + "/checkpoint", "--format", "json"], ["inspect", root, "--jobs", "2"],
                 ["messages", root, "--body", "text", "--wide"], ["sql", root, "SELECT 1"], ["lag", root]):
        assert build_parser(argv[0]).parse_known_args(argv) == whole.parse_known_args(argv)
