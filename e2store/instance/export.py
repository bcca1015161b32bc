"""Writers of the piece-file formats e2store reads (`e2store export-pieces`).

Each writer is the inverse of its reader in `e2store.instance.formats`: pieces in the
format's default side order (`DEFAULT_SIDES`), in piece order (a piece's id is its line),
colours as the ids the instance was read with (`Instance.colour_id`), so reading the file
back gives the same instance id (the name aside: only the e2store format stores it).

* `benchmark`: `N`, the number of colours (grey not counted), `1`, `1 1 1 1` (the header of
  the project's `pieces_NxN.txt` files, which readers skip), then `W N E S` lines; square
  boards only.
* `brendan`: `W H`, then `up right down left` lines (Owen's pieces_set_1).
* `jwortmann`: `bottom left top right` lines, no header (the size is derived on reading;
  a board whose size cannot be derived needs `--size WxH` then).
* `puz`: a `c` comment naming the instance, `W H`, then `up right down left` lines.
* `e2store`: the canonical format (`e2store.instance.e2sfile`), with the solution if known.
"""

from __future__ import annotations

from pathlib import Path

from e2store.errors import InstanceError
from e2store.files import atomic_write_text
from e2store.instance.e2sfile import format_e2store
from e2store.instance.formats import DEFAULT_SIDES, FORMATS
from e2store.instance.model import SIDES, Instance


def _lines(inst: Instance, sides: str) -> list[str]:
    cols = [SIDES.index(s) for s in sides]
    return [" ".join(str(inst.colour_id(int(row[c]))) for c in cols) for row in inst.pieces]


def format_pieces(inst: Instance, fmt: str) -> str:
    """The text of `inst` as a piece file of format `fmt` (one of `FORMATS`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt == "e2store":
        return format_e2store(inst)
    body = _lines(inst, DEFAULT_SIDES[fmt])
    if fmt == "benchmark":
        if inst.width != inst.height:
            raise InstanceError(f"{inst.name}: a {inst.width}x{inst.height} board cannot be "
                                f"written as a benchmark file (N x N boards only); use "
                                f"the brendan or e2store format").about("format")
        colours = len({int(c) for c in inst.pieces.ravel()} - {0})
        head = [str(inst.width), str(colours), "1", "1 1 1 1"]
    elif fmt in ("brendan", "puz"):
        head = [f"{inst.width} {inst.height}"]
        if fmt == "puz":
            name = " ".join(str(inst.name).split())
            head.insert(0, f"c {name}: {inst.width}x{inst.height} edge-matching puzzle, "
                           f"pieces up right down left, 0 = grey (written by e2store)")
    else:  # jwortmann
        head = []
    return "\n".join(head + body) + "\n"


def write_pieces(inst: Instance, path: str | Path, fmt: str) -> None:
    """Write `inst` as a piece file of format `fmt`, atomically."""
    atomic_write_text(Path(path), format_pieces(inst, fmt))
