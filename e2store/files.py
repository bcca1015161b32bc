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
