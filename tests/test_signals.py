"""SIGINT and SIGTERM at random moments: one line, exit 130 or 143, and every output absent or complete.

Each command runs twice without a signal (its reference: exit status,
output, how long a warm run takes), then many times with SIGINT or SIGTERM sent at
a moment drawn uniformly from the start to the end of the reference run:
start-up imports, compiled kernels, writing, renaming, report rendering and
the summary all get hit. Every run must end with

- an exit status of 0 (the command finished before the signal mattered;
  its output is complete), 130 after SIGINT or 143 after SIGTERM;
- no traceback, no ``Exception ignored`` note; a signalled end is one line
  on stderr, the last, naming the signal;
- its output either absent, or complete: byte for byte the reference's
  (JSON Lines, CSV, Parquet files), with ``_SUCCESS`` (Parquet, ``rebuild``),
  ending with ``</html>`` (the report, which holds its own time); a complete
  output after a signal is named as complete in that line;
- no temporary and no lock left beside the output.

The children start with SIGINT and SIGTERM blocked, which the command lifts
once its handlers are installed: a signal sent while the interpreter itself
starts (before the package's first line runs) is taken at that point
rather than killing a process that has not yet run any of its code.

``RMQFORMATS_SIGNAL_RUNS`` sets the number of signalled runs across the
seven commands (default 14, two each), ``RMQFORMATS_SIGNAL_JOBS`` how many
run at once (default 1), ``RMQFORMATS_SIGNAL_SEED`` the seed.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STORE = ROOT / "tests" / "fixtures" / "rocketmq-5.1.4" / "store"
RUNS = int(os.environ.get("RMQFORMATS_SIGNAL_RUNS", "14"))
JOBS = int(os.environ.get("RMQFORMATS_SIGNAL_JOBS", "1"))
SEED = int(os.environ.get("RMQFORMATS_SIGNAL_SEED", str(random.SystemRandom().randrange(1 << 30))))

#: name → (arguments with OUT for the output path, the output's name or None, how it is compared)
COMMANDS = {
    "export-jsonl": (["export", str(STORE), "--to", "jsonl", "OUT"], "out.jsonl", "bytes"),
    "export-csv": (["export", str(STORE), "--to", "csv", "OUT"], "out.csv", "bytes"),
    "export-parquet": (["export", str(STORE), "--to", "parquet", "OUT"], "out", "folder-bytes"),
    "report": (["report", str(STORE), "-o", "OUT"], "report.html", "html"),
    "rebuild": (["rebuild", str(STORE), "--out", "OUT"], "new", "folder-files"),
    "check": (["check", str(STORE)], None, None),
    "messages": (["messages", str(STORE), "--format", "jsonl"], None, None),
}
_SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    # Blocked here, inherited by the child, lifted by the command once its handlers are in place.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, list(_SIGNALS))
    try:
        return subprocess.Popen([sys.executable, "-m", "rmqformats", *argv], cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _run(argv: list[str], cwd: Path, signum: int | None = None, delay: float = 0.0):
    t0 = time.monotonic()
    proc = _start(argv, cwd)
    if signum is not None:
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signum)
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err.decode("utf-8", "replace"), time.monotonic() - t0


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _complete(kind: str, path: Path, ref: Path) -> bool:
    """Whether the output at ``path`` is complete (compared with the reference ``ref``); raises when it is
    there but not complete."""
    if not os.path.lexists(path):
        return False
    if kind == "bytes":
        assert path.read_bytes() == ref.read_bytes(), f"{path}: differs from the complete output"
    elif kind == "html":
        data = path.read_bytes()
        assert data.endswith(b"</html>\n") and abs(len(data) - ref.stat().st_size) < 4096, f"{path}: not complete"
    elif kind == "folder-bytes":
        assert (path / "_SUCCESS").is_file(), f"{path}: no _SUCCESS"
        assert _files(path) == _files(ref), f"{path}: differs from the complete output"
    elif kind == "folder-files":
        assert (path / "_SUCCESS").is_file(), f"{path}: no _SUCCESS"
        got = {k: len(v) for k, v in _files(path).items()}
        want = {k: len(v) for k, v in _files(ref).items()}
        assert got == want, f"{path}: differs from the complete output"
    return True


def _one(name: str, work: Path, ref_path: Path | None, ref_code: int, rng: random.Random, span: float) -> str:
    argv, out_name, kind = COMMANDS[name]
    work.mkdir()
    out = work / out_name if out_name else None
    args = [str(out) if a == "OUT" else a for a in argv]
    signum = rng.choice(list(_SIGNALS))
    delay = rng.uniform(0.0, span)
    code, _, err, _ = _run(args, work, signum, delay)
    what = f"{name}: {signal.Signals(signum).name} after {delay:.2f}s (seed {SEED}): exit {code}, stderr {err!r}"
    assert "Traceback" not in err and "Exception ignored" not in err, what
    assert code in (ref_code, _SIGNALS[signum]), what
    lines = err.splitlines()
    signalled = [line for line in lines if "interrupted (SIGINT)" in line or "terminated (SIGTERM)" in line]
    if code == _SIGNALS[signum]:
        assert len(signalled) == 1 and lines[-1] == signalled[0], what
        assert lines[-1].startswith(f"rmqformats"), what
    else:
        assert not signalled, what
    complete = False
    if out is not None:
        complete = _complete(kind, out, ref_path)
        if code == ref_code:
            assert complete, f"{what}: exit {code} without a complete output"
        elif complete:
            assert f"{out} is complete" in lines[-1], what
        left = [p.name for p in work.iterdir() if p.name.startswith(".")]
        assert not left, f"{what}: left behind {left}"
    shutil.rmtree(work)
    if code == ref_code:
        return "finished"
    return "signalled, output complete" if complete else "signalled"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_signal_at_random_moments(name, tmp_path):
    argv, out_name, _ = COMMANDS[name]
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    ref_path = ref_dir / out_name if out_name else None
    args = [str(ref_path) if a == "OUT" else a for a in argv]
    ref_code, _, err, took = _run(args, ref_dir)
    assert ref_code == 0, err
    if ref_path is not None:  # once more, warm (compiled kernels cached): the span a signalled run takes
        shutil.move(ref_path, ref_dir / "first")
    again, _, err, took_again = _run(args, ref_dir)
    assert again == 0, err
    took = min(took, took_again)
    runs = math.ceil(RUNS / len(COMMANDS))
    rng = random.Random(f"{SEED}-{name}")
    draws = [random.Random(rng.random()) for _ in range(runs)]
    span = took * 1.1  # a little past the end: a signal after the command decided its status too
    with ThreadPoolExecutor(JOBS) as pool:
        outcomes = list(pool.map(lambda i: _one(name, tmp_path / f"run{i}", ref_path, ref_code, draws[i], span),
                                 range(runs)))
    counts = {k: outcomes.count(k) for k in dict.fromkeys(outcomes)}
    print(f"{name}: {runs} signalled runs over {span:.1f}s (seed {SEED}): {counts}")
    assert len(outcomes) == runs


# -- the commit point, deterministically ----------------------------------------------------------------


def test_signal_during_the_rename_finishes_the_commit_and_says_so(tmp_path, monkeypatch, capsys):
    """SIGTERM arriving inside the commit (after the rename, before the folder is synced): the output is
    complete, the command ends with 143 and its one line names the output as complete."""
    from rmqformats import output
    from rmqformats.cli import main
    sync = output._fsync_folder

    def rename_then_signal(folder):
        os.kill(os.getpid(), signal.SIGTERM)  # lands inside the deferred block: taken when it ends
        sync(folder)

    monkeypatch.setattr(output, "_fsync_folder", rename_then_signal)
    out = tmp_path / "out.jsonl"
    code = main(["export", "--sample", "--to", "jsonl", str(out)])
    err = capsys.readouterr().err.splitlines()
    assert code == 143 and out.stat().st_size > 0
    assert err[-1].startswith("rmqformats export: terminated (SIGTERM) after its output was renamed complete")
    assert f"{out} is complete" in err[-1] and not [p for p in os.listdir(tmp_path) if p.startswith(".")]
    monkeypatch.setattr(output, "_fsync_folder", sync)
    assert main(["export", "--sample", "--to", "jsonl", str(tmp_path / "again.jsonl")]) == 0
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()


def test_a_swallowed_signal_stops_the_rename(tmp_path, monkeypatch, capsys):
    """SIGINT whose exception something swallowed (a finalizer, a kernel's callback) while the data was
    written: the commit sees it and removes the output instead of renaming it (exit 130)."""
    from rmqformats import export, interrupts
    from rmqformats.cli import main
    write = export.write_jsonl

    def write_and_swallow(batch, stream):
        write(batch, stream)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # the handler runs here and raises
        except interrupts.Interrupted:
            pass

    monkeypatch.setattr(export, "write_jsonl", write_and_swallow)
    out = tmp_path / "out.jsonl"
    code = main(["export", "--sample", "--to", "jsonl", str(out)])
    err = capsys.readouterr().err.splitlines()
    assert code == 130 and not out.exists() and not os.listdir(tmp_path)
    assert err[-1] == f"rmqformats export: interrupted (SIGINT); nothing written to {out} (temporary files removed)"


def test_after_a_signalled_command_the_process_writes_again(tmp_path, monkeypatch, capsys):
    """main() called in a process that goes on (a test, a tool): the signal of one command is not the next
    command's, nor the API's."""
    from rmqformats import export, output
    from rmqformats.cli import main
    write = export.write_jsonl
    # What this process had before (Python's default_int_handler; SIG_IGN when started as a background job
    # by a shell without job control): each command puts it back.
    before = signal.getsignal(signal.SIGINT)

    def write_and_signal(batch, stream):
        write(batch, stream)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)

    monkeypatch.setattr(export, "write_jsonl", write_and_signal)
    assert main(["export", "--sample", "--to", "jsonl", str(tmp_path / "a.jsonl")]) == 130
    monkeypatch.setattr(export, "write_jsonl", write)
    assert main(["export", "--sample", "--to", "jsonl", str(tmp_path / "b.jsonl")]) == 0
    with output.AtomicFile(tmp_path / "c.txt") as f:
        f.stream.write(b"x")
    assert (tmp_path / "c.txt").read_bytes() == b"x" and not (tmp_path / "a.jsonl").exists()
    assert signal.getsignal(signal.SIGINT) is before


# -- numba's compiler lock -----------------------------------------------------------------------------

_COMPILE_SIGNALLED = r"""
import os, signal, sys
from rmqformats import interrupts
interrupts.install()
import numpy as np
from numba import njit
from numba.core import event
import rmqformats.jit  # holds signals back while the main thread holds numba's compiler lock

class SignalAtCompileStart(event.Listener):
    def on_start(self, ev):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs at the next line of Python: inside the compile
    def on_end(self, ev):
        pass

fn = njit(lambda a: a.sum() * 3)
event.register("numba:compile", SignalAtCompileStart())
try:
    fn(np.arange(4))
    print("not interrupted")
except interrupts.Interrupted as e:
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    print("interrupted in", frames[-1], "overloads", len(fn.overloads), "received", interrupts.received())
event.unregister("numba:compile", event._registered["numba:compile"][-1])
print("then", fn(np.arange(4)))
"""


def test_a_signal_while_a_kernel_compiles_acts_once_the_kernel_is_whole(tmp_path):
    """SIGTERM while the main thread compiles a numba kernel: the compile finishes (llvmlite, interrupted
    between handing an LLVM object over and marking it handed, frees it twice at the interpreter's exit:
    an abort or a segmentation fault after the command's last line), then Interrupted is raised where
    numba lets go of its compiler lock."""
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SIGNALLED], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"interrupted in resume overloads 1 received {int(signal.SIGTERM)}",
                                        "then 18"], proc.stdout + proc.stderr
    assert proc.stderr == ""


_PRINTED_BY_AN_EXTENSION = r"""
import ctypes, os, signal, sys, time
from rmqformats import interrupts

def printed_by_c(raising: str):
    # PyRun_SimpleString prints the exception of its code with PyErr_Print, as an extension does with its own.
    assert ctypes.pythonapi.PyRun_SimpleString(raising.encode()) == -1

restore = interrupts.install()
printed_by_c("raise ValueError('not a signal' + chr(39) + 's')")
sys.stderr.write("--\n")
try:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(1)
except interrupts.Interrupted:
    printed_by_c("raise interrupts.Interrupted(15)")
    printed_by_c("raise OSError('left behind by the signal')")
sys.stderr.write("--\n")
restore()
printed_by_c("raise KeyboardInterrupt")
"""


def test_an_exception_an_extension_prints_after_a_signal_prints_nothing():
    """An exception that compiled code prints itself (PyErr_Print) once a signal came is the signal's: the
    command's one line says it; other exceptions print as usual, and restore() puts the hook back."""
    proc = subprocess.run([sys.executable, "-c", _PRINTED_BY_AN_EXTENSION], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    parts = proc.stderr.split("--\n")
    assert len(parts) == 3, proc.stderr
    assert "ValueError: not a signal's" in parts[0]
    assert parts[1] == ""
    assert "KeyboardInterrupt" in parts[2]


_SIGNAL_WHEN_MADE = r"""
import os, signal, sys
from rmqformats import interrupts, output

where = sys.argv[1]
restore = interrupts.install()
real_mkdir, real_open = os.mkdir, os.open

def mkdir(path, *args, **kw):  # the temporary folder made, then the signal: before the target records it
    real_mkdir(path, *args, **kw)
    os.kill(os.getpid(), signal.SIGTERM)

def open_(path, flags, *args, **kw):  # the temporary file (or the lock) made, then the signal
    fd = real_open(path, flags, *args, **kw)
    if (".tmp" in os.path.basename(path)) == (sys.argv[2] == "file"):
        os.kill(os.getpid(), signal.SIGTERM)
    return fd

for kind in ("folder", "file", "lock"):
    target = os.path.join(where, kind)
    os.mkdir, os.open = (mkdir, real_open) if kind == "folder" else (real_mkdir, open_)
    sys.argv[2] = kind
    try:
        (output.AtomicFolder if kind == "folder" else output.AtomicFile)(target)
        print(kind, "made")
    except interrupts.Interrupted:
        print(kind, "interrupted", sorted(os.listdir(where)))
    finally:
        os.mkdir, os.open = real_mkdir, real_open
    restore()
    restore = interrupts.install()  # a fresh start: the signal taken
# Made whole, then a signal before its block began: what a command's end aborts.
made = output.AtomicFolder(os.path.join(where, "late"))
print("late made", sorted(os.listdir(where)))
output.abort_open()
print("late aborted", sorted(os.listdir(where)), output.take_aborted_note())
"""


def test_a_signal_as_an_output_is_made_leaves_nothing(tmp_path):
    """SIGTERM just after the temporary folder, the temporary file or the lock file is made, before its
    writer records it: Interrupted, and nothing is left beside the target. A target made whole whose
    ``with`` block had not begun is removed by the command's end (output.abort_open)."""
    proc = subprocess.run([sys.executable, "-c", _SIGNAL_WHEN_MADE, str(tmp_path), "-"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == ["folder interrupted []", "file interrupted []", "lock interrupted []"], proc.stdout
    assert lines[3].startswith("late made ['.late.") and ".lock" in lines[3], proc.stdout
    assert lines[4].startswith("late aborted [] nothing written to "), proc.stdout
