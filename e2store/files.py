"""Atomic file writes: a temp file with a unique name in the target's directory, fsync, then
rename.  A reader never sees a half-written file, and a failed or killed write leaves the
old file (or none) plus, at worst, a hidden `.NAME.*.tmp` file.  Every file e2store writes
outside the store's staging area goes through here."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_UMASK_LOCK = threading.Lock()
_UMASK: int | None = None


def _umask() -> int:
    """The process umask, read once (reading it means setting it, so not per write)."""
    global _UMASK
    with _UMASK_LOCK:
        if _UMASK is None:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
        return _UMASK


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object], *,
                 mode: int | None = None) -> None:
    """Create or replace `path` with what `write(fh)` writes to a binary file handle.

    `mode` sets the file's permissions (default: 0o666 minus the umask, as `open` would).
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), (0o666 & ~_umask()) if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


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


def write_table(path: str | Path, table, *, compression_level: int | None = None) -> None:
    """Write an Arrow table atomically: an Arrow IPC file when the name ends in `.arrow`,
    `.feather` or `.ipc` (uncompressed, one record batch: a C or Rust program memory-maps
    it and reads the columns in place), else Parquet (zstd, page checksums)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if is_ipc(path):
        batch = table.combine_chunks()

        def write(fh):
            with pa.ipc.new_file(fh, table.schema) as w:
                w.write_table(batch, max_chunksize=max(1, batch.num_rows))

        atomic_write(path, write)
    else:
        atomic_write(path, lambda fh: pq.write_table(
            table, fh, compression="zstd", compression_level=compression_level,
            write_page_checksum=True))


def read_table(path: str | Path):
    """An Arrow table from a file `write_table` wrote (Arrow IPC by suffix, else Parquet);
    the IPC file is memory-mapped."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if is_ipc(path):
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).read_all()
    return pq.read_table(path)


def table_schema(path: str | Path):
    """The schema (with its metadata) of a table file, without reading its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if is_ipc(path):
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).schema
    return pq.ParquetFile(path).schema_arrow
