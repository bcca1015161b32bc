"""Atomic file writes: a temp file in the target's directory, fsync, then rename.  A reader
never sees a half-written file, and a failed or killed write leaves the old file (or none).

A write's temp file is `.NAME.<pid>.<token>.tmp` (beside NAME, or in a scratch directory
of the same file system), made under the lock `.NAME.<pid>.<token>.lock` that the writing
process holds until the rename; the next write of NAME removes what a killed writer left
(`remove_stale_temps`: its lock is free), and a live writer's files are left alone.
Every file e2store writes outside the store's staging area goes through here.
`file_lock` and `exclusive_writer` are the advisory locks built on the same `flock`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from e2store.errors import E2StoreError

_UMASK_LOCK = threading.Lock()
_UMASK: int | None = None
# what a write leaves beside NAME while it runs: .NAME.<pid>.<token>.{tmp,tmp.wal,lock}
_RUN_FILE = re.compile(r"(\d+)\.([0-9a-f]{8})\.(tmp|tmp\.wal|lock)")
# the temp names of e2store before the run locks (`tempfile.mkstemp`): .NAME.<8 chars>.tmp
_OLD_TEMP = re.compile(r"[a-z0-9_]{8}\.tmp")
OLD_TEMP_AGE = 3600.0  # seconds after which an old-style temp file is taken for abandoned


class BusyError(E2StoreError, BlockingIOError):
    """Another live process is writing the same file: wait for it, or write elsewhere."""


def _umask() -> int:
    """The process umask, read once (reading it means setting it, so not per write)."""
    global _UMASK
    with _UMASK_LOCK:
        if _UMASK is None:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
        return _UMASK


@contextlib.contextmanager
def file_lock(path: Path, blocking: bool = True):
    """Hold an exclusive advisory lock on `path` (created if missing); yields False if
    `blocking` is off and another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def run_lock(lock: Path, blocking: bool = True) -> Iterator[int | None]:
    """Hold an exclusive `flock` on `lock` (created, removed at the end): yields its file
    descriptor, or None when `blocking` is off and a live process holds it.  Taken again
    if a cleaner removed the file between its creation and the lock (it then took this
    run for a dead one), so no file is ever made under a lock another run can take."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a missing or read-only directory: say which
            raise OSError(exc.errno, f"cannot write a file there: {exc.strerror or exc}",
                          str(lock.parent)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            yield None
            return
        try:
            if os.path.samestat(os.fstat(fd), os.stat(lock)):
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield fd
    finally:
        lock.unlink(missing_ok=True)  # before the lock is released: no one takes it stale
        os.close(fd)


@contextlib.contextmanager
def exclusive_writer(path: str | Path, what: str = "file") -> Iterator[None]:
    """Hold `.NAME.lock` beside `path` for a whole run that rewrites `path` again and again
    (a boards file): a second run on the same file is refused at once with BusyError
    naming the process that holds it, rather than both rewriting it and losing rows."""
    path = Path(path)
    check_regular_target(path)
    parent = path.parent if str(path.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    lock = parent / f".{path.name}.lock"
    with run_lock(lock, blocking=False) as fd:
        if fd is None:
            try:
                holder = lock.read_text()[:40].strip() or "another process"
            except OSError:
                holder = "another process"
            raise BusyError(f"{path}: this {what} is being written by another run "
                            f"({holder}); wait for it to end, or write to another file")
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {os.uname().nodename}".encode())
        yield


def lock_holder(lock: str | Path) -> tuple[int, str] | None:
    """(pid, host) an `exclusive_writer` lock file names, None when it names none (being
    written, or not one); OSError when it is gone (its writer ended)."""
    text = Path(lock).read_text(errors="replace")[:200].strip()
    pid, _, host = text.removeprefix("pid ").partition(" on ")
    return (int(pid), host) if text.startswith("pid ") and pid.isdigit() and host else None


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` runs on this host (True when unsure: keep its files)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def remove_stale_temps(path: str | Path) -> int:
    """Remove the temp files of writes of `path` that were killed before their rename;
    returns how many writes.  A write whose lock is free is dead; one with no lock is
    dead when its pid is (same-host check); an old-style temp name (no pid) when it is
    over `OLD_TEMP_AGE` old.  A live writer's files are left alone."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    prefix = f".{path.name}."
    try:
        names = os.listdir(parent)
    except OSError:
        return 0  # the write reports the directory's problem
    runs: dict[str, set[str]] = {}
    removed = 0
    for name in names:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):]
        if m := _RUN_FILE.fullmatch(rest):
            runs.setdefault(f"{m[1]}.{m[2]}", set()).add(m[3])
        elif _OLD_TEMP.fullmatch(rest):
            old = parent / name
            with contextlib.suppress(OSError):
                if time.time() - old.stat().st_mtime > OLD_TEMP_AGE:
                    old.unlink()
                    removed += 1
    for run, kinds in runs.items():
        base = parent / f"{prefix}{run}"
        temps = [base.with_name(base.name + ".tmp"), base.with_name(base.name + ".tmp.wal")]
        if "lock" not in kinds:
            if pid_alive(int(run.split(".")[0])):
                continue
            for f in temps:
                f.unlink(missing_ok=True)
            removed += 1
            continue
        lock = base.with_name(base.name + ".lock")
        try:
            fd = os.open(lock, os.O_RDWR)
        except FileNotFoundError:
            continue  # the run just finished
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live run
            for f in temps:
                f.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)
            removed += 1
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def temp_beside(path: str | Path, scratch: str | Path | None = None) -> Iterator[Path]:
    """A temp path `.NAME.<pid>.<token>.tmp` beside `path`, under its run lock, after
    removing what killed writers of `path` left; the temp file (and a `.wal` beside it)
    is removed at the end whatever happens: the caller renames it over `path` first.
    `scratch`: a directory on the same file system to hold them instead, so that a write
    into a directory of 10^5 files does not list it (a boards dataset's parts)."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    parent = parent if scratch is None else Path(scratch)
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(parent / path.name)
    run = f"{os.getpid()}.{secrets.token_hex(4)}"
    tmp = parent / f".{path.name}.{run}.tmp"
    with run_lock(parent / f".{path.name}.{run}.lock"):
        try:
            yield tmp
        finally:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


def check_regular_target(path: Path) -> None:
    """Refuse to replace anything but a regular file (or nothing): a rename over
    `/dev/null`, a FIFO or a directory would replace the device or fail half-way."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:
        return  # the write reports it
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "not a regular file")
        raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                                f"is {kind}: e2store writes regular files only (give "
                                f"another name)", str(path))


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object], *,
                 mode: int | None = None, scratch: str | Path | None = None) -> None:
    """Create or replace `path` with what `write(fh)` writes to a binary file handle.

    `mode` sets the file's permissions (default: 0o666 minus the umask, as `open` would);
    `scratch`: where the temp file is made (`temp_beside`).
    """
    path = Path(path)
    check_regular_target(path)
    with temp_beside(path, scratch) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), (0o666 & ~_umask()) if mode is None else mode)
        os.replace(tmp, path)


def atomic_write_bytes(path: str | Path, data: bytes, *, mode: int | None = None) -> None:
    """Create or replace a binary file atomically."""
    atomic_write(path, lambda fh: fh.write(data), mode=mode)


def atomic_write_text(path: str | Path, text: str, *, mode: int | None = None) -> None:
    """Create or replace a UTF-8 text file atomically (line ends kept as given)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


# tables written by suffix: Parquet, or Arrow IPC -------------------------------------------

IPC_SUFFIXES = (".arrow", ".feather", ".ipc")


def is_ipc(path: str | Path) -> bool:
    """Whether `path` names an Arrow IPC file (by its suffix)."""
    return Path(path).suffix.lower() in IPC_SUFFIXES


def write_table(path: str | Path, table, *, compression_level: int | None = None,
                few_rows: bool = False, scratch: str | Path | None = None) -> None:
    """Write an Arrow table atomically: an Arrow IPC file when the name ends in `.arrow`,
    `.feather` or `.ipc` (uncompressed, one record batch: a C or Rust program memory-maps
    it and reads the columns in place), else Parquet (zstd, page checksums).  `few_rows`:
    a Parquet table of a few rows and many columns (a boards dataset's part) is written
    without compression, dictionaries or statistics, which cost per column more than they
    save there (two boards of 256 cells: 40% smaller, written three times faster);
    `scratch` as `atomic_write`'s."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if is_ipc(path):
        batch = table.combine_chunks()

        def write(fh):
            with pa.ipc.new_file(fh, table.schema) as w:
                w.write_table(batch, max_chunksize=max(1, batch.num_rows))

        atomic_write(path, write, scratch=scratch)
    else:
        small = {"compression": "none", "use_dictionary": False, "write_statistics": False}
        atomic_write(path, lambda fh: pq.write_table(
            table, fh, **(small if few_rows else {"compression": "zstd"}),
            compression_level=None if few_rows else compression_level,
            write_page_checksum=True), scratch=scratch)


def read_table(path: str | Path):
    """An Arrow table from a file `write_table` wrote (Arrow IPC by suffix, else Parquet,
    its pages checked against their checksums); the IPC file is memory-mapped and fully
    validated (a damaged offset is an error, never a read out of bounds)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if is_ipc(path):
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
        table.validate(full=True)  # IPC has no checksums: offsets and UTF-8 checked here
        return table
    return pq.read_table(path, page_checksum_verification=True)


def table_schema(path: str | Path):
    """The schema (with its metadata) of a table file, without reading its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if is_ipc(path):
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).schema
    return pq.ParquetFile(path).schema_arrow


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex), read in 4 MiB blocks: the digest the store's
    manifest keeps for every file it lists."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()
