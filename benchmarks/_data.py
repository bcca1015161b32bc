"""The benchmark piece sets, read from ../shared (never copied into this repository)."""

from __future__ import annotations

import sys
from pathlib import Path


def piece_file(shared: Path, size: str) -> Path:
    """`SHARED/instances/benchmark/pieces_<size>.txt` (size `6x6`); without it, one line
    on stderr and exit code 2."""
    path = Path(shared) / "instances" / "benchmark" / f"pieces_{size}.txt"
    if not path.exists():
        print(f"benchmark instance not found: {path} (give --shared)", file=sys.stderr)
        raise SystemExit(2)
    return path
