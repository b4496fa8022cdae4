"""Every command that writes: atomic, exclusive, marked when complete, never into the store read; write
errors, Ctrl-C and a closed pipe end in one line and a status of the exit table (rmqformats.output)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rmqformats import output
from rmqformats.cli import main, status

from conftest import store_path

ROOT = Path(__file__).resolve().parent.parent
STORE = store_path("rocketmq-5.3.3")

#: The CLI with the export slowed down (batches of 20 rows, 50 ms each), so another process can meet it mid-run.
SLOW = r"""
import sys, time
import rmqformats.cli.messages as m
orig = m._batches_with_progress
def slow(scan, total, label):
    for b in orig(scan, total, label):
        for i in range(0, b.num_rows, 20):
            time.sleep(0.05)
            yield b.slice(i, 20)
m._batches_with_progress = slow
from rmqformats.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def slow_export(*argv) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SLOW, *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, text=True)


def wait_for(cond, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.02)


def leftovers(folder: Path) -> list[str]:
    """Temporaries and lock files left in ``folder``."""
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp") or p.name.endswith(".lock")]


def messages_jsonl(root) -> str:
    proc = subprocess.run([sys.executable, "-m", "rmqformats", "messages", str(root), "--format", "jsonl"],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    return proc.stdout


# -- exclusive ----------------------------------------------------------------------------------------------

def test_two_exports_to_one_target_one_completes_the_other_is_refused(tmp_path, capsys):
    target = tmp_path / "out.jsonl"
    first = slow_export("export", STORE, "--to", "jsonl", target)
    wait_for(lambda: (tmp_path / ".out.jsonl.lock").exists() or first.poll() is not None)
    code, _, err = run(capsys, "export", STORE, "--to", "jsonl", target, "--topic", "TopicTest")
    assert code == status.ERROR and "target busy" in err and str(target) in err
    assert f"pid {first.pid}" in err and len(err.splitlines()) == 1
    code, _, err = run(capsys, "export", STORE, "--to", "jsonl", target, "--force")
    assert code == status.ERROR and "target busy" in err
    _, first_err = first.communicate(timeout=120)
    assert first.returncode == status.OK, first_err
    data = target.read_bytes()
    assert b"\0" not in data and data.decode() == messages_jsonl(STORE)
    assert leftovers(tmp_path) == []


def test_two_parquet_exports_to_one_folder(tmp_path, capsys):
    target = tmp_path / "pq"
    first = slow_export("export", STORE, "--to", "parquet", target)
    wait_for(lambda: (tmp_path / ".pq.lock").exists() or first.poll() is not None)
    code, _, err = run(capsys, "export", STORE, "--to", "parquet", target)
    assert code == status.ERROR and "target busy" in err
    assert first.wait(timeout=120) == status.OK
    assert (target / "_SUCCESS").exists()
    got = pq.read_table(target).column("commitLogOffset").to_pylist()
    assert got == [json.loads(line)["commitLogOffset"] for line in messages_jsonl(STORE).splitlines()]
    assert leftovers(tmp_path) == []


def test_a_lock_left_by_a_dead_writer_does_not_block(tmp_path, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / ".out.jsonl.lock").write_text(f"{dead.pid}\n")
    stale = tmp_path / f".out.jsonl.{dead.pid}-0000abcd.tmp"
    stale.write_text("half")
    code, _, err = run(capsys, "export", STORE, "--to", "jsonl", tmp_path / "out.jsonl")
    assert code == status.OK, err
    assert not stale.exists() and leftovers(tmp_path) == []


def test_the_lock_is_exclusive_in_process(tmp_path):
    lock = output.TargetLock(tmp_path / "x")
    with pytest.raises(output.TargetBusyError) as exc:
        output.TargetLock(tmp_path / "x")
    assert exc.value.pid == os.getpid()
    lock.release()
    output.TargetLock(tmp_path / "x").release()
    assert list(tmp_path.iterdir()) == []


# -- interrupted: Ctrl-C and SIGTERM --------------------------------------------------------------------------

@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, status.INTERRUPTED, "interrupted"),
                                             (signal.SIGTERM, status.TERMINATED, "terminated")])
def test_a_signal_mid_export_leaves_nothing_that_reads_as_a_dataset(tmp_path, sig, code, word):
    target = tmp_path / "pq"
    proc = slow_export("export", STORE, "--to", "parquet", target)

    def a_file_written():  # the first segment's Parquet file is complete in the temporary folder
        return any(p.suffix == ".parquet" for p in tmp_path.glob(".pq.*.tmp/*")) or proc.poll() is not None
    wait_for(a_file_written)
    assert proc.poll() is None
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err and word in lines[0]
    assert "nothing written to" in lines[0] and "temporary files removed" in lines[0]
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_ctrl_c_mid_jsonl_export_keeps_the_earlier_file(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("earlier\n")
    proc = slow_export("export", STORE, "--to", "jsonl", target, "--force")
    wait_for(lambda: any(p.stat().st_size > 0 for p in tmp_path.glob(".out.jsonl.*.tmp")) or proc.poll() is not None)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status.INTERRUPTED and len(err.splitlines()) == 1
    assert "existing" in err and "kept unchanged" in err
    assert target.read_text() == "earlier\n" and leftovers(tmp_path) == []


# -- write errors: full disk, read-only, missing folder, permission --------------------------------------------

@pytest.fixture
def small_fs(tmp_path):
    """A tmpfs with 32 KiB free (where the machine allows mounting one), else None."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    except OSError:
        proc = None
    if proc is None or proc.returncode != 0:
        yield None
        return
    try:
        st = os.statvfs(mnt)
        (mnt / "filler").write_bytes(bytes(st.f_bavail * st.f_frsize - (32 << 10)))
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_full_disk_is_a_write_error(small_fs, tmp_path, capsys, monkeypatch, fmt):
    if small_fs is None:  # no tmpfs here: the file system's error injected at write
        folder = tmp_path

        def full(*a, **k):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr("rmqformats.export.write_jsonl", full)
        monkeypatch.setattr("rmqformats.export.csv_batch", full)
        monkeypatch.setattr("rmqformats.export._ParquetFile.write", full)
    else:
        folder = small_fs
        big = STORE  # 1.3 MB of JSON Lines, 180 KB of Parquet
    target = folder / f"out.{fmt}"
    code, _, err = run(capsys, "export", STORE if small_fs is None else big, "--to", fmt, target)
    assert code == status.ERROR and len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(target) in err and "cannot write: No space left on device" in err and "nothing written" in err
    assert ".tmp" not in err
    assert not target.exists() and leftovers(folder) == []


def test_report_and_cut_on_a_full_disk(small_fs, capsys):
    if small_fs is None:
        pytest.skip("no tmpfs on this machine")
    code, _, err = run(capsys, "report", STORE, "-o", small_fs / "r.html")  # the page is ~4.8 MB
    assert code == status.ERROR and "No space left on device" in err and len(err.splitlines()) == 1
    segment = STORE / "commitlog" / "00000000000000000000"
    code, _, err = run(capsys, "cut", segment, "--bytes", "400000", "-o", small_fs / "piece")
    assert code == status.ERROR and "No space left on device" in err
    assert [p.name for p in small_fs.iterdir()] == ["filler"]


@pytest.fixture
def read_only(tmp_path):
    """A read-only tmpfs where the machine allows mounting one, else None."""
    mnt = tmp_path / "ro"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mnt)], capture_output=True)
    if proc.returncode != 0:
        yield None
        return
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("argv", [["export", STORE, "--to", "jsonl", "{t}"], ["export", STORE, "--to", "csv", "{t}"],
                                  ["export", STORE, "--to", "parquet", "{t}"], ["report", STORE, "-o", "{t}"],
                                  ["cut", STORE / "commitlog" / "00000000000000000000", "--records", "2", "-o", "{t}"],
                                  ["schema", "export", "--version", "5.3.3", "{t}"]])
def test_read_only_missing_and_forbidden_folders(read_only, tmp_path, capsys, monkeypatch, argv):
    missing = tmp_path / "no" / "such" / "out"
    code, _, err = run(capsys, *[missing if a == "{t}" else a for a in argv])
    assert code == status.ERROR and len(err.splitlines()) == 1
    assert f"{missing}: cannot write: the folder {missing.parent} does not exist" in err
    if read_only is not None:
        target = read_only / "out"
    else:  # the file system's error injected when the temporary is created
        target = tmp_path / "out"
        real = os.open

        def refuse(path, flags, *a, **k):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
            return real(path, flags, *a, **k)
        monkeypatch.setattr(os, "open", refuse)
        monkeypatch.setattr(os, "mkdir", lambda *a, **k: refuse(a[0], os.O_CREAT))
    code, _, err = run(capsys, *[target if a == "{t}" else a for a in argv])
    assert code == status.ERROR and len(err.splitlines()) == 1 and "Read-only file system" in err
    assert str(target) in err and not os.path.lexists(target)
    monkeypatch.undo()
    # Permission (root passes permission bits: the error is injected where the temporary is created).
    target = tmp_path / "denied"

    def deny(*a, **k):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path))
    monkeypatch.setattr(output, "_temporary_name", deny)
    code, _, err = run(capsys, *[target if a == "{t}" else a for a in argv])
    assert code == status.ERROR and "Permission denied" in err and str(target) in err
    assert len(err.splitlines()) == 1 and leftovers(tmp_path) == []


# -- overwriting, links, the store itself --------------------------------------------------------------------

def test_cut_report_and_schema_export_refuse_to_overwrite_without_force(tmp_path, capsys):
    segment = STORE / "commitlog" / "00000000000000000000"
    for argv in (["cut", segment, "--records", "2", "-o"], ["report", STORE, "-o"]):
        target = tmp_path / "existing"
        target.write_text("keep me")
        code, _, err = run(capsys, *argv, target)
        assert code == status.ERROR and "exists and is not empty (--force overwrites it)" in err
        assert target.read_text() == "keep me"
        code, _, err = run(capsys, *argv, target, "--force")
        assert code in (status.OK, status.FINDINGS), err
        assert target.read_bytes() != b"keep me" and leftovers(tmp_path) == []
    specs = tmp_path / "specs"
    assert run(capsys, "schema", "export", "--version", "5.3.3", specs)[0] == status.OK
    code, _, err = run(capsys, "schema", "export", "--version", "4.9.7", specs)
    assert code == status.ERROR and "exists and is not empty" in err
    assert run(capsys, "schema", "export", "--version", "4.9.7", specs, "--force")[0] == status.OK
    assert "x-release: 4.9.7" in (specs / "rocketmq_commitlog.ksy").read_text() or \
        "4.9.7" in (specs / "rocketmq_commitlog.ksy").read_text()
    (specs / "mine.txt").write_text("mine")
    code, _, err = run(capsys, "schema", "export", "--version", "5.3.3", specs, "--force")
    assert code == status.ERROR and "not removing them" in err and (specs / "mine.txt").exists()


def test_nothing_is_ever_written_into_the_store_read(tmp_path, capsys):
    store = tmp_path / "store"
    shutil.copytree(STORE, store)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    segment = store / "commitlog" / "00000000000000000000"
    link = tmp_path / "link"
    link.symlink_to(segment)
    folder_link = tmp_path / "storelink"
    folder_link.symlink_to(store)
    cases = [
        ["export", store, "--to", "jsonl", link, "--force"],  # --force never follows a link into the store
        ["export", store, "--to", "jsonl", store / "out.jsonl"],
        ["export", store, "--to", "jsonl", folder_link / "commitlog" / "x.jsonl"],
        ["export", folder_link, "--to", "parquet", store / "pq"],
        ["export", store / "commitlog", "--to", "csv", store / "commitlog" / "x.csv"],
        ["export", segment, "--to", "jsonl", segment, "--force"],
        ["report", store, "-o", store / "config" / "r.html"],
        ["report", store, "-o", link, "--force"],
        ["cut", segment, "--records", "1", "-o", segment, "--force"],
        ["cut", segment, "--records", "1", "-o", store / "commitlog" / "piece"],
        ["cut", link, "--records", "1", "-o", store / "piece"],
        ["export", store, "--to", "parquet", tmp_path, "--force"],  # replacing it would replace the store
    ]
    for argv in cases:
        code, _, err = run(capsys, *argv)
        assert code == status.ERROR, argv
        assert "never writes into a store it reads" in err and len(err.splitlines()) == 1, (argv, err)
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == before
    assert link.is_symlink()


# -- a closed pipe ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["messages", "--format", "jsonl"], ["messages"], ["export", "--to", "jsonl", "-"],
                                  ["export", "--to", "csv", "-"]])
def test_a_closed_pipe_ends_quietly(argv):
    cmd = [sys.executable, "-m", "rmqformats", argv[0], str(STORE), *argv[1:]]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # plain tables: no note on fitting
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == status.OK and err == ""


# -- the module ----------------------------------------------------------------------------------------------

def test_atomic_file_and_folder(tmp_path):
    with output.AtomicFile(tmp_path / "f") as f:
        f.stream.write(b"abc")
        assert not (tmp_path / "f").exists()
    assert (tmp_path / "f").read_bytes() == b"abc" and leftovers(tmp_path) == []
    with pytest.raises(RuntimeError):
        with output.AtomicFile(tmp_path / "f", force=True) as f:
            f.stream.write(b"xyz")
            raise RuntimeError("boom")
    assert (tmp_path / "f").read_bytes() == b"abc" and leftovers(tmp_path) == []
    with output.AtomicFolder(tmp_path / "d") as d:
        Path(d.path, "part").write_text("1")
        assert not (tmp_path / "d").exists()
    assert sorted(os.listdir(tmp_path / "d")) == ["_SUCCESS", "part"]
    with pytest.raises(KeyboardInterrupt):
        with output.AtomicFolder(tmp_path / "d", force=True) as d:
            Path(d.path, "other").write_text("2")
            raise KeyboardInterrupt
    assert sorted(os.listdir(tmp_path / "d")) == ["_SUCCESS", "part"] and leftovers(tmp_path) == []
    with output.AtomicFolder(tmp_path / "d", force=True, marker=None) as d:
        Path(d.path, "other").write_text("2")
    assert os.listdir(tmp_path / "d") == ["other"] and leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_permission_denied_for_another_user(tmp_path):
    """A real EACCES: ``cut`` run as nobody into a folder only root may write."""
    import tempfile
    folder = Path(tempfile.mkdtemp(prefix="rmqformats-root-only-", dir="/tmp"))
    folder.chmod(0o755)
    hidden = tmp_path / "hidden" / "out"
    (tmp_path / "hidden").mkdir()
    try:
        _permission_cases(folder, hidden)
    finally:
        shutil.rmtree(folder)


def _permission_cases(folder: Path, hidden: Path) -> None:
    segment = STORE / "commitlog" / "00000000000000000000"
    proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                           "rmqformats", "cut", str(segment), "--records", "2", "-o", str(folder / "piece")],
                          capture_output=True, text=True, cwd=ROOT)
    # A checkout in a folder only its owner may enter (a clone under mktemp -d): `-m rmqformats` finds no module.
    if any(sign in proc.stderr for sign in ("ModuleNotFoundError", "No module named rmqformats",
                                            "Permission denied: '")):
        pytest.skip("nobody cannot read the project here")
    assert proc.returncode == status.ERROR
    assert proc.stderr == f"rmqformats: error: {folder / 'piece'}: cannot write: Permission denied\n"
    assert list(folder.iterdir()) == []
    # A folder nobody may reach (under root's 0700 pytest folder): said so, not "does not exist".
    proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                           "rmqformats", "cut", str(segment), "--records", "2", "-o", str(hidden)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == status.ERROR
    assert proc.stderr == (f"rmqformats: error: {hidden}: cannot write: Permission denied "
                           f"(the folder {hidden.parent} cannot be reached)\n")
