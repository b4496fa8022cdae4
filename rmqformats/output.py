"""Writing outputs atomically, exclusively and honestly: one file or one folder.

Every command that writes (``export``, ``report -o``, ``cut -o``, ``schema
export``) goes through this module, so every output follows the same rules:

- **Exclusive.** A writer holds a lock on the target for its whole run: the
  lock file ``.<name>.lock`` beside the target, locked with ``flock`` and
  holding the writer's pid. A second writer to the same target is refused
  with :class:`TargetBusyError` (naming the path and the other pid) while the
  first runs. The kernel drops the lock of a process that dies, so a lock left
  by a dead writer never blocks.
- **Atomic.** The data is written under a unique temporary name in the
  target's folder (``.<name>.<pid>-<random>.tmp``, created with ``O_EXCL``;
  a folder is created with ``mkdir``, which is exclusive too). Only after the
  whole output is written, flushed and ``fsync``-ed is it renamed onto the
  target, then the folder holding it is ``fsync``-ed.
- **Marked.** A folder output ends with the empty completion marker
  ``_SUCCESS`` (as Spark and Hadoop write it), written last, before the
  rename: a folder without it is not a complete output.
- **Honest.** On any failure or interrupt (an exception,
  ``KeyboardInterrupt``, the CLI's SIGTERM) the temporaries are removed and
  nothing is renamed; an existing target is kept as it was. In the CLI a
  signal never lands between the last check and the rename (see
  :mod:`rmqformats.interrupts`): one noted while the data was written stops
  the rename; one arriving during it waits until the output is complete. Write errors of
  the operating system (read-only or missing folder, full disk, permission)
  become :class:`WriteError`, naming the whole path and the reason.
- **Never over what it must not.** An existing target is replaced only with
  ``force`` (a folder only when ``replaceable`` says it holds what such an
  output writes). A symbolic link at the target is never followed to
  overwrite what it points at: the link itself is replaced, unless it points
  into a store being read. No target, temporary or lock may lie inside a
  store being read (``reads``), or be one of its files, whatever links lead
  there: both paths are resolved before comparing.

A character device or FIFO target (``/dev/null``, a named pipe) is written in
place: it cannot be renamed over and holds no data to protect.

Usage::

    with AtomicFile(path, force=False, reads=[store_root]) as f:
        f.stream.write(b"...")          # committed when the block ends without an error

    with AtomicFolder(path, force=True, replaceable=is_mine) as d:
        write_files_into(d.path)        # renamed onto ``path`` with ``_SUCCESS`` at the end
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import BinaryIO

from . import interrupts

#: The completion marker a folder output ends with (the name Spark and Hadoop write).
SUCCESS_MARKER = "_SUCCESS"
_TMP_SUFFIX = ".tmp"
_LOCK_SUFFIX = ".lock"


class OutputError(Exception):
    """A target that cannot be written: exit status 2. ``path`` is the whole path, ``reason`` why."""

    def __init__(self, path: str | os.PathLike[str], reason: str):
        self.path = os.path.abspath(os.fspath(path))
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class OutputExistsError(OutputError):
    """The target exists and is not empty, and overwriting it was not asked for (or is not allowed)."""


class TargetBusyError(OutputError):
    """Another process is writing the same target. ``pid`` is that writer's pid, when known."""

    def __init__(self, path: str | os.PathLike[str], pid: int | None):
        self.pid = pid
        super().__init__(path, "target busy: another rmqformats process "
                               + (f"(pid {pid}) " if pid else "") + "is writing it; try again when it ends")


class InsideStoreError(OutputError):
    """The target (or a link at it) lies inside a store being read, or is one of its files."""


class WriteError(OutputError):
    """The operating system refused a write: read-only or missing folder, full disk, permission."""


# -- paths --------------------------------------------------------------------------------------------

def _resolved(path: str) -> str:
    return os.path.realpath(path)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_not_in_store(target: str | os.PathLike[str], reads: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse a ``target`` inside one of the ``reads`` (store roots, folders or files), equal to one, or
    holding one.

    The target is compared twice, both resolved: where it lies (its folder
    resolved, its own name kept: a link at the target is replaced, not
    followed) and what it points at when it is a link.
    """
    target = os.path.abspath(os.fspath(target))
    where = os.path.join(_resolved(os.path.dirname(target)), os.path.basename(target))
    places = {where, _resolved(target)}
    for read in reads:
        read = os.path.abspath(os.fspath(read))
        real = _resolved(read)
        for place in places:
            if _within(place, real) or (os.path.isfile(real) and place == real):
                what = "one of the store's files" if os.path.isfile(real) and place == real else \
                    f"inside the store being read ({real})"
                raise InsideStoreError(target, f"is {what}; rmqformats never writes into a store it reads")
            if _within(real, place):  # replacing the target would replace the store
                raise InsideStoreError(target, f"holds the store being read ({real}); rmqformats never writes "
                                               "into a store it reads")


def _special_file(path: str) -> bool:
    """A character device or FIFO (directly or through links): written in place, never renamed over."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _hidden(target: str, suffix: str) -> str:
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}{suffix}")


def _temporary_name(target: str) -> str:
    return _hidden(target, f".{os.getpid()}-{secrets.token_hex(4)}{_TMP_SUFFIX}")


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return os.strerror(exc.errno)
    return str(exc) or type(exc).__name__


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def write_errors(path: str | os.PathLike[str], doing: str = "cannot write") -> Iterator[None]:
    """Turn an :class:`OSError` raised inside the block (pyarrow's I/O errors too) into :class:`WriteError`."""
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        raise WriteError(path, f"{doing}: {_os_reason(exc)}") from exc


def check_target(target: str | os.PathLike[str], *, folder: bool, force: bool = False,
                 reads: Iterable[str | os.PathLike[str]] = (),
                 replaceable: Callable[[str], bool] | None = None) -> None:
    """Refuse a target that may not be written, before any work: inside a store being read, an
    existing non-empty file or folder without ``force``, a folder ``replaceable`` does not accept,
    a folder where a file goes or the reverse, a missing parent folder."""
    target = os.path.abspath(os.fspath(target))
    check_not_in_store(target, reads)
    parent = os.path.dirname(target)
    try:
        parent_mode = os.stat(parent).st_mode
    except PermissionError:
        raise WriteError(target, f"cannot write: Permission denied (the folder {parent} cannot be reached)") from None
    except OSError:
        raise WriteError(target, f"cannot write: the folder {parent} does not exist") from None
    if not stat.S_ISDIR(parent_mode):
        raise WriteError(target, f"cannot write: {parent} is not a folder")
    if folder:
        if os.path.islink(target):
            raise OutputExistsError(target, "is a symbolic link; an output folder replaces no link "
                                            "(remove it, or give the folder it points at)")
        if os.path.isdir(target):
            if not os.listdir(target):
                return
            if not force:
                raise OutputExistsError(target, "exists and is not empty (--force replaces an earlier output)")
            if replaceable is not None and not replaceable(target):
                raise OutputExistsError(target, "holds files this command does not write; not removing them")
            return
        if os.path.lexists(target):
            raise OutputExistsError(target, "exists and is not a folder")
        return
    if _special_file(target):
        return
    if os.path.isdir(target) and not os.path.islink(target):
        raise OutputExistsError(target, "is a folder")
    if os.path.islink(target):
        if not force:
            raise OutputExistsError(target, "is a symbolic link (--force replaces the link itself, "
                                            "never what it points at)")
        return
    if os.path.lexists(target) and os.path.getsize(target) > 0 and not force:
        raise OutputExistsError(target, "exists and is not empty (--force overwrites it)")


# -- the lock -----------------------------------------------------------------------------------------

class TargetLock:
    """The exclusive lock of one target: ``flock`` on ``.<name>.lock`` beside it, holding the pid.

    Taken when created (:class:`TargetBusyError` when another process holds
    it), released by :meth:`release`. The lock file is removed on release; a
    writer that locked a lock file some other writer just removed sees the
    inode change and locks the new one, so two writers never both hold it.
    """

    def __init__(self, target: str | os.PathLike[str]):
        self.target = os.path.abspath(os.fspath(target))
        self.path = _hidden(self.target, _LOCK_SUFFIX)
        self._fd: int | None = None
        with write_errors(self.target, "cannot write"):
            for _ in range(100):
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    pid = _read_pid(fd)
                    os.close(fd)
                    raise TargetBusyError(self.target, pid) from None
                except BaseException:
                    os.close(fd)
                    raise
                try:
                    same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                    self._fd = fd
                    return
                os.close(fd)  # removed by the writer that held it: lock the new one
            raise TargetBusyError(self.target, None)

    def release(self) -> None:
        """Remove the lock file and drop the lock (in that order: see the class docstring)."""
        if self._fd is None:
            return
        try:
            os.remove(self.path)
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


def _remove_dead_temporaries(target: str) -> None:
    """Remove temporaries of this target left by writers that died (killed): the lock is ours, so no live
    writer of this target owns one."""
    folder, name = os.path.split(target)
    prefix = f".{name}."
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(_TMP_SUFFIX)):
            continue
        pid = entry[len(prefix):-len(_TMP_SUFFIX)].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            _remove(os.path.join(folder, entry))


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
    except OSError:
        pass


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- targets ------------------------------------------------------------------------------------------

class _Target:
    """What a file and a folder target share: checks, the lock, the abort note."""

    folder_target = False

    def __init__(self, target: str | os.PathLike[str], *, force: bool, reads: Iterable[str | os.PathLike[str]],
                 replaceable: Callable[[str], bool] | None = None):
        self.target = os.path.abspath(os.fspath(target))
        self.force = force
        self.reads = tuple(reads)
        self.replaceable = replaceable
        self.committed = False
        self.aborted = False
        self._lock: TargetLock | None = None
        check_target(self.target, folder=self.folder_target, force=force, reads=self.reads, replaceable=replaceable)

    def _take_lock(self) -> None:
        try:
            with interrupts.deferred():  # taken and held here together: a signal acts after, and is undone below
                self._lock = TargetLock(self.target)
        except BaseException:
            self._release()
            raise
        try:
            # Checked again under the lock: an earlier writer may have finished in between.
            check_target(self.target, folder=self.folder_target, force=self.force, reads=self.reads,
                         replaceable=self.replaceable)
            _remove_dead_temporaries(self.target)
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _committed(self) -> None:
        self.committed = True
        _forget(self)
        self._release()
        _COMMITTED.append(self)

    def kept(self) -> str:
        """What is left at the target after an abort, in words for the error message."""
        if os.path.lexists(self.target) and not (os.path.isdir(self.target) and not os.listdir(self.target)):
            return f"nothing written; the existing {self.target} is kept unchanged"
        return f"nothing written to {self.target}"

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is None:
            self.commit()
            return False
        self.abort()
        if isinstance(exc, WriteError) and self._temporary(exc.path):
            # Name what the user asked for, not the temporary it was being written as.
            raise WriteError(self._final_of(exc.path), exc.reason) from exc.__cause__
        return False

    def _temporary(self, path: str) -> bool:
        return False

    def _final_of(self, path: str) -> str:
        return self.target


class AtomicFile(_Target):
    """One output file: written to a unique temporary beside ``target``, renamed onto it when complete.

    ``stream`` is the binary stream to write to. :meth:`commit` flushes,
    ``fsync``-s, renames and releases the lock; :meth:`abort` removes the
    temporary. As a context manager it commits when the block ends cleanly
    and aborts otherwise. A character device or FIFO target is written in
    place (no temporary, no lock).
    """

    def __init__(self, target: str | os.PathLike[str], *, force: bool = False,
                 reads: Iterable[str | os.PathLike[str]] = ()):
        super().__init__(target, force=force, reads=reads)
        self.tmp: str | None = None
        if _special_file(self.target):
            with write_errors(self.target, "cannot open"):
                self.stream: BinaryIO = open(self.target, "wb")
            return
        self._take_lock()
        try:
            with write_errors(self.target, "cannot write"):
                # Made and recorded together: a signal acts after both, and the temporary is removed below.
                with interrupts.deferred():
                    tmp = _temporary_name(self.target)
                    self.stream = os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666),
                                            "wb")
                    self.tmp = tmp
                    _OPEN.append(self)
        except BaseException:
            _forget(self)
            if self.tmp is not None:
                self.stream.close()
                _remove(self.tmp)
            self.tmp = None
            self._release()
            raise

    def commit(self) -> None:
        """Flush and ``fsync`` the temporary, rename it onto the target, release the lock."""
        if self.committed or self.aborted:
            return
        try:
            with write_errors(self.target, "cannot write"):
                self.stream.flush()
                if self.tmp is not None:
                    os.fsync(self.stream.fileno())
                self.stream.close()
                with interrupts.deferred():  # renamed and reported complete, or removed: never in between
                    interrupts.check()  # a signal noted while the data was written: not renamed
                    if self.tmp is not None:
                        os.replace(self.tmp, self.target)  # a link at the target is replaced, not followed
                        self.tmp = None
                        _fsync_folder(os.path.dirname(self.target))
                    self._committed()
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Close and remove the temporary; the target is left as it was."""
        if self.committed or self.aborted:
            return
        with interrupts.deferred():  # a second signal does not leave the temporary behind
            self.aborted = True
            try:
                self.stream.close()
            except (OSError, ValueError):
                pass
            if self.tmp is not None:
                _remove(self.tmp)
                self.tmp = None
            self._release()
            _note_abort(self)


class AtomicFolder(_Target):
    """One output folder: files are written into ``path``, a unique temporary folder beside ``target``.

    :meth:`commit` ``fsync``-s every file, writes the completion marker
    (``marker``, :data:`SUCCESS_MARKER` by default; ``None`` for none), and
    renames the folder onto the target; an existing target (empty, or with
    ``force`` one that ``replaceable`` accepts) is moved aside first and
    removed after. :meth:`abort` removes the temporary folder.
    """

    folder_target = True

    def __init__(self, target: str | os.PathLike[str], *, force: bool = False,
                 reads: Iterable[str | os.PathLike[str]] = (), replaceable: Callable[[str], bool] | None = None,
                 marker: str | None = SUCCESS_MARKER):
        super().__init__(target, force=force, reads=reads, replaceable=replaceable)
        self.marker = marker
        self._take_lock()
        made = None
        try:
            with write_errors(self.target, "cannot write"):
                # Made and recorded together: a signal acts after both, and the folder is removed below.
                with interrupts.deferred():
                    path = _temporary_name(self.target)
                    os.mkdir(path, 0o777)
                    made = self.path = path
                    _OPEN.append(self)
        except BaseException:
            _forget(self)
            if made is not None:
                _remove(made)
            self._release()
            raise

    def _temporary(self, path: str) -> bool:
        return _within(os.path.abspath(path), self.path)

    def _final_of(self, path: str) -> str:
        return self.final(path)

    def final(self, path: str | os.PathLike[str]) -> str:
        """Where ``path`` (a file inside the temporary folder) is once committed."""
        rel = os.path.relpath(os.fspath(path), self.path)
        return os.path.normpath(os.path.join(self.target, rel))

    def commit(self) -> None:
        """``fsync`` the files, write the marker, rename the folder onto the target, release the lock."""
        if self.committed or self.aborted:
            return
        try:
            with write_errors(self.target, "cannot write"):
                for folder, _, files in os.walk(self.path):
                    for name in files:
                        fd = os.open(os.path.join(folder, name), os.O_RDONLY)
                        try:
                            os.fsync(fd)
                        finally:
                            os.close(fd)
                    _fsync_folder(folder)
                if self.marker:
                    fd = os.open(os.path.join(self.path, self.marker), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                    os.fsync(fd)
                    os.close(fd)
                    _fsync_folder(self.path)
                with interrupts.deferred():  # renamed and reported complete, or removed: never in between
                    interrupts.check()  # a signal noted while the data was written: not renamed
                    self._swap_in()
                    _fsync_folder(os.path.dirname(self.target))
                    self._committed()
        except BaseException:
            self.abort()
            raise

    def _swap_in(self) -> None:
        old = None
        if os.path.isdir(self.target) and not os.path.islink(self.target) and os.listdir(self.target):
            old = _temporary_name(self.target)
            os.rename(self.target, old)
        try:
            os.rename(self.path, self.target)  # onto a missing or empty folder
        except BaseException:
            if old is not None:
                os.rename(old, self.target)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        """Remove the temporary folder; the target is left as it was."""
        if self.committed or self.aborted:
            return
        with interrupts.deferred():  # a second signal does not leave the temporary behind
            self.aborted = True
            _remove(self.path)
            self._release()
            _note_abort(self)


#: Targets made in this process and neither committed nor aborted yet (:func:`abort_open` removes theirs).
_OPEN: list[_Target] = []
#: Targets aborted in this process, latest last (the CLI says what was kept).
_ABORTED: list[_Target] = []
#: Targets committed in this process, latest last (a signal after the commit: the CLI says they are complete).
_COMMITTED: list[_Target] = []


def _note_abort(target: _Target) -> None:
    _forget(target)
    _ABORTED.append(target)


def _forget(target: _Target) -> None:
    if target in _OPEN:
        _OPEN.remove(target)


def abort_open() -> None:
    """Abort every target of this process that is neither committed nor aborted: the end of a command that a
    signal stopped, so that no temporary outlives it, even one whose ``with`` block had not begun."""
    for target in list(_OPEN):
        target.abort()


def take_aborted_note() -> str | None:
    """What the outputs aborted since the last call left behind, in words (``None`` when none was)."""
    if not _ABORTED:
        return None
    notes = [t.kept() for t in _ABORTED]
    _ABORTED.clear()
    return "; ".join(dict.fromkeys(notes)) + " (temporary files removed)"


def take_committed_note() -> str | None:
    """The outputs committed since the last call, in words (``None`` when none was): what a signal that came
    after their commit leaves complete."""
    if not _COMMITTED:
        return None
    notes = [f"{t.target} is complete" for t in _COMMITTED]
    _COMMITTED.clear()
    return "; ".join(dict.fromkeys(notes))


__all__ = ["AtomicFile", "AtomicFolder", "InsideStoreError", "OutputError", "OutputExistsError", "SUCCESS_MARKER",
           "TargetBusyError", "TargetLock", "WriteError", "take_aborted_note", "take_committed_note",
           "check_not_in_store", "check_target", "write_errors"]
