"""Processes the package runs in: forked workers, and accounts that can write neither their home nor the package."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rmqformats

from conftest import store_path, truth_records


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_threads_work_in_a_child_forked_after_the_parent_used_them():
    log = rmqformats.open_store(store_path("rocketmq-5.1.4")).commitlog
    expected = sum(1 for r in truth_records("rocketmq-5.1.4") if r["kind"] == "MESSAGE")
    # The parent's scan starts the process-wide pool's worker threads.
    assert log.batches(["commitLogOffset"], threads=2, range_size=4096).read_all().num_rows == expected
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the same scan must finish, with the same rows
        try:
            signal.alarm(60)  # a hang ends the child, and the parent sees no answer
            n = log.batches(["commitLogOffset"], threads=2, range_size=4096).read_all().num_rows
            os.write(write, str(n).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        answer = b""
        while chunk := os.read(read, 64):
            answer += chunk
    finally:
        os.close(read)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert answer == str(expected).encode()


_READ_ONLY_RUN = textwrap.dedent("""
    set -e
    for d in "$PACKAGE" "$RO_HOME" "$RO_TMP"; do mount --bind -o ro "$d" "$d"; done
    cd "$RO_HOME"
    exec 3>"$OUT/no-cache.jsonl" 4>"$OUT/no-cache.txt"
    env -u XDG_CACHE_HOME -u NUMBA_CACHE_DIR HOME="$RO_HOME" TMPDIR="$CACHE_TMP" \\
        "$PYTHON" -m rmqformats messages --sample --format jsonl > "$OUT/with-tmp.jsonl"
    # No temporary folder either: every place Python's tempfile looks is made read-only where it is, so that
    # a checkout or virtualenv living under /tmp stays visible.
    for d in /usr/tmp /var/tmp /tmp; do if [ -d "$d" ]; then mount --bind -o ro "$d" "$d"; fi; done
    env -u XDG_CACHE_HOME -u NUMBA_CACHE_DIR -u TMPDIR HOME="$RO_HOME" \\
        "$PYTHON" -m rmqformats messages --sample --format jsonl >&3
    env -u XDG_CACHE_HOME -u NUMBA_CACHE_DIR -u TMPDIR HOME="$RO_HOME" \\
        "$PYTHON" -c "from rmqformats.walk import kernels; print(kernels._JIT['cache'])" >&4
""")


def test_compiled_code_without_a_writable_home_or_package(tmp_path):
    """numba's cache falls back to a private temporary folder, then to none; the output is the same."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs unshare and mount")
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a mount namespace here (needs root)")
    package = Path(rmqformats.__file__).resolve().parent
    dirs = {name: tmp_path / name for name in ("RO_HOME", "RO_TMP", "CACHE_TMP", "OUT")}
    for d in dirs.values():
        d.mkdir()
    env = dict(os.environ, PACKAGE=str(package), PYTHON=sys.executable, **{k: str(v) for k, v in dirs.items()})
    run = subprocess.run(["unshare", "-m", "bash", "-c", _READ_ONLY_RUN], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = subprocess.run([sys.executable, "-m", "rmqformats", "messages", "--sample", "--format", "jsonl"],
                              capture_output=True, text=True, check=True).stdout
    assert expected.count("\n") == 309
    assert (dirs["OUT"] / "with-tmp.jsonl").read_text() == expected
    assert (dirs["OUT"] / "no-cache.jsonl").read_text() == expected
    cache = dirs["CACHE_TMP"] / f"rmqformats-numba-cache-{os.getuid()}"
    assert cache.is_dir() and (cache.stat().st_mode & 0o077) == 0
    assert any(name.endswith(".nbi") for _, _, files in os.walk(cache) for name in files)
    assert (dirs["OUT"] / "no-cache.txt").read_text() == "False\n"
    assert list(dirs["RO_TMP"].iterdir()) == [] and list(dirs["RO_HOME"].iterdir()) == []
