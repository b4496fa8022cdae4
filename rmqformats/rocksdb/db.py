"""Opening a broker's RocksDB database read-only, without writing anything inside its folder.

RocksDB's read-only mode takes no ``LOCK`` and writes no ``LOG``, so it can
read a database whose broker is still running (it sees the data as of the
open). The binding (``rocksdict``) writes a ``rocksdict-config.json`` into
whatever folder it opens, and creates that folder when it is missing; so the
database is opened through a private temporary folder holding one symbolic
link per database file, and nothing is created, renamed or written in the
database's own folder. Every table file is opened during the open
(``max_open_files = -1``), so a live broker deleting files afterwards
(compaction) does not take them away from the reader.

A database whose ``LOCK`` another process holds (a running broker) can be
read from a copy instead (``copy=True``): the files are copied into the
private folder before the open, so nothing the broker does afterwards
(rolling its write-ahead log, compacting) reaches the reader;
:func:`held_lock` tells whether the lock is held.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator

from ..errors import RocksDBError

#: Files RocksDB needs to open a database; ``LOCK``, ``LOG*`` and anything else are left out.
_DB_FILE_SUFFIXES = (".sst", ".log", ".blob", ".ldb")
_DB_FILE_PREFIXES = ("CURRENT", "IDENTITY", "MANIFEST-", "OPTIONS-")
#: Attempts to open a database whose files change under the open (a live broker rolling its MANIFEST).
OPEN_ATTEMPTS = 3


#: Temporary folders of links still in use, removed at exit if a database was never closed.
_SHADOWS: set[str] = set()


class _Fork:
    opened = False  # this process opened a RocksDB database: RocksDB's background threads run in it
    inherited = False  # this process was forked from one that had: those threads are not in it


_fork = _Fork()


@atexit.register
def _remove_shadows() -> None:
    for folder in list(_SHADOWS):
        shutil.rmtree(folder, ignore_errors=True)
    _SHADOWS.clear()


def _after_fork_in_child() -> None:
    # The parent's folders of links are the parent's: the child neither removes them at exit nor
    # when it drops an inherited handle. RocksDB's thread pools (one per process, started by the first
    # open) come over without their threads: work scheduled on them in the child never runs.
    _SHADOWS.clear()
    _fork.inherited = _fork.inherited or _fork.opened


os.register_at_fork(after_in_child=_after_fork_in_child)


def ingest_pairs(db, column_family: str, pairs) -> None:
    """Write ``(key, value)`` pairs into ``db``'s ``column_family`` as one table file, ingested.

    Keys are written in order (the last value of a repeated key wins, as in a write to the database).
    No memtable is filled and no flush or compaction is scheduled: what a process whose RocksDB
    background threads are lost (:func:`background_threads_lost`) can still write.
    """
    from rocksdict import IngestExternalFileOptions, Options, SstFileWriter
    run = dict(pairs)
    if not run:
        return
    folder = tempfile.mkdtemp(prefix="rmqformats-ingest-")
    try:
        table = os.path.join(folder, "run.sst")
        writer = SstFileWriter(options=Options(raw_mode=True))
        writer.open(table)
        for key in sorted(run):
            writer[key] = run[key]
        writer.finish()
        how = IngestExternalFileOptions()
        how.set_move_files(True)
        target = db if column_family == "default" else db.get_column_family(column_family)
        target.ingest_external_file([table], how)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def note_open() -> None:
    """Record that this process opened a RocksDB database (RocksDB started its background threads)."""
    _fork.opened = True


def background_threads_lost() -> bool:
    """This process was forked from one that had opened a RocksDB database.

    RocksDB's background thread pools are per process and started by the
    first open; a forked child inherits the pools' state but none of their
    threads, so a flush or compaction scheduled in the child waits forever.
    Reading needs no background work; a writer in such a process writes
    table files itself and ingests them (see
    :class:`rmqformats.rebuild.writers.RocksDBQueuesWriter`).
    """
    return _fork.inherited


def is_rocksdb(folder: str | os.PathLike[str]) -> bool:
    """The folder holds a RocksDB database (a ``CURRENT`` file naming its MANIFEST)."""
    return os.path.isfile(os.path.join(os.fspath(folder), "CURRENT"))


def held_lock(folder: str | os.PathLike[str]) -> int | None:
    """The process id holding the database's ``LOCK`` (a running broker), 0 when unknown, else ``None``.

    Asks the kernel which process holds a conflicting POSIX lock
    (``F_GETLK``, RocksDB locks ``LOCK`` with ``fcntl``) on a read-only
    descriptor: no lock is taken and nothing is written. A lock held by
    this process is not seen (POSIX locks do not conflict within one), nor
    one on a system without ``fcntl``.
    """
    path = os.path.join(os.fspath(folder), "LOCK")
    try:
        import fcntl
        import struct
    except ImportError:
        return None
    if not os.path.isfile(path):
        return None
    # struct flock on Linux: l_type, l_whence (short), l_start, l_len (off_t), l_pid (pid_t), padded.
    fmt = "@hhqqi4x"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(fmt, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except OSError:
        return None
    finally:
        os.close(fd)
    l_type, _, _, _, pid = struct.unpack(fmt, got)
    return None if l_type == fcntl.F_UNLCK else (pid if pid > 0 else 0)


def _wanted(name: str) -> bool:
    return name.startswith(_DB_FILE_PREFIXES) or name.endswith(_DB_FILE_SUFFIXES)


class ReadOnlyDB:
    """A RocksDB database opened read-only; a context manager.

    With ``copy``, the database's files are copied rather than linked
    (see the module docstring). Raises :class:`RocksDBError` naming the
    folder when it is not a database or cannot be opened. :meth:`iterate`
    and :meth:`get` read one column family; their errors name the database
    and the column family.
    """

    def __init__(self, path: str | os.PathLike[str], *, copy: bool = False):
        from rocksdict import AccessType, Options, Rdict

        self.path = os.path.abspath(os.fspath(path))
        if not os.path.isdir(self.path):
            raise RocksDBError(self.path, "no such folder")
        if not is_rocksdb(self.path):
            raise RocksDBError(self.path, "not a RocksDB database (no CURRENT file)")
        self._shadow: str | None = None
        self._owner = os.getpid()  # a forked child never removes its parent's folder of links
        self._db = None
        self._cfs: dict[str, object] = {}
        last: str | None = None
        for _ in range(OPEN_ATTEMPTS):
            self._shadow = tempfile.mkdtemp(prefix="rmqformats-rocksdb-")
            _SHADOWS.add(self._shadow)
            try:
                for name in os.listdir(self.path):
                    src = os.path.join(self.path, name)
                    if _wanted(name) and os.path.isfile(src):
                        if copy:
                            shutil.copyfile(src, os.path.join(self._shadow, name))
                        else:
                            os.symlink(src, os.path.join(self._shadow, name))
                opts = Options(raw_mode=True)
                opts.set_max_open_files(-1)
                names = Rdict.list_cf(self._shadow, opts)
                cf_opts = {}
                for n in names:
                    o = Options(raw_mode=True)
                    o.set_max_open_files(-1)
                    cf_opts[n] = o
                self._db = Rdict(self._shadow, options=opts, column_families=cf_opts,
                                 access_type=AccessType.read_only(False))
                note_open()
                self.column_families = tuple(names)
                return
            except FileNotFoundError as exc:  # a file went away during the copy: try again
                last = str(exc)
                self._remove_shadow()
                continue
            except Exception as exc:  # the binding raises plain Exception for every RocksDB status
                last = self._real(exc)
                self._remove_shadow()
        raise RocksDBError(self.path, f"cannot open read-only: {last}")

    def _real(self, exc: Exception) -> str:
        """The binding's message with the temporary folder of links replaced by the database folder."""
        text = str(exc)
        return text.replace(self._shadow, self.path) if self._shadow else text

    def _remove_shadow(self) -> None:
        if self._shadow is not None:
            if self._owner == os.getpid():
                shutil.rmtree(self._shadow, ignore_errors=True)
            _SHADOWS.discard(self._shadow)
            self._shadow = None

    def close(self) -> None:
        """Close the database and remove the temporary folder of links."""
        if self._db is not None:
            try:
                self._db.close()
            finally:
                self._db = None
                self._cfs.clear()
        self._remove_shadow()

    def __enter__(self) -> ReadOnlyDB:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"ReadOnlyDB({self.path!r}, column families {list(getattr(self, 'column_families', ()))})"

    def _cf(self, name: str):
        if self._db is None:
            raise RocksDBError(self.path, "database already closed")
        if name not in self.column_families:
            raise RocksDBError(self.path, f"no column family {name!r} (it has {', '.join(self.column_families)})")
        if name == "default":
            return self._db
        cf = self._cfs.get(name)
        if cf is None:
            cf = self._cfs[name] = self._db.get_column_family(name)
        return cf

    def has_column_family(self, name: str) -> bool:
        """The database has the column family ``name``."""
        return name in self.column_families

    def get(self, column_family: str, key: bytes) -> bytes | None:
        """The value of ``key``, or ``None``."""
        try:
            return self._cf(column_family).get(key)
        except RocksDBError:
            raise
        except Exception as exc:
            raise RocksDBError(self.path, f"read failed: {self._real(exc)}", column_family=column_family,
                               key=key) from None

    def iterate(self, column_family: str, start: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
        """Keys and values from the first key at or after ``start``, in key order."""
        # Not the binding's items(): it ends silently at a damaged block, the iterator's status says so.
        it = self._cf(column_family).iter()
        try:
            it.seek(start) if start else it.seek_to_first()
            while it.valid():
                yield it.key(), it.value()
                it.next()
            it.status()
        except RocksDBError:
            raise
        except Exception as exc:
            raise RocksDBError(self.path, f"iteration failed: {self._real(exc)}",
                               column_family=column_family) from None

    def batches(self, column_family: str, start: bytes, prefix: bytes, stop: bytes | None,
                size: int) -> Iterator[tuple[list[bytes], list[bytes]]]:
        """Keys and values from ``start`` while keys begin with ``prefix`` and sort before ``stop``.

        In lists of at most ``size``: the walk of :meth:`iterate` without a
        Python generator step per key (most of a key's cost).
        """
        it = self._cf(column_family).iter()
        keys: list[bytes] = []
        values: list[bytes] = []
        try:
            it.seek(start)
            valid, key_of, value_of, advance = it.valid, it.key, it.value, it.next
            while valid():
                key = key_of()
                if not key.startswith(prefix) or (stop is not None and key >= stop):
                    break
                keys.append(key)
                values.append(value_of())
                if len(keys) >= size:
                    yield keys, values
                    keys, values = [], []
                advance()
            it.status()
        except RocksDBError:
            raise
        except Exception as exc:
            raise RocksDBError(self.path, f"iteration failed: {self._real(exc)}",
                               column_family=column_family) from None
        if keys:
            yield keys, values
