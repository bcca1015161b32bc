"""The e2store instance file: the project's canonical piece file (read and written).

The e2store instance format, version 1
--------------------------------------

A UTF-8 text file. The first line is exactly::

    e2store-instance 1

where 1 is the format version (a reader refuses a version newer than the one it knows).
After it, blank lines and lines whose first non-blank character is `#` (comments) are
allowed anywhere and ignored. Then come header lines `key: value` (key and value separated
by the first colon, surrounding blanks ignored), each key at most once, in any order:

* `name: TEXT` (optional; default the file name without its extension),
* `size: W H` (required): board width (columns) and height (rows), integers >= 1,
* `sides: W N E S` (optional, default `W N E S`): the side order of the piece lines, four
  letters, a permutation of W N E S, blanks between them optional (a reader given an
  explicit side order uses it when this line is absent and refuses a different one),
* `source: TEXT` (optional): free-text provenance,
* `pieces: COUNT` (required, last header line): COUNT must equal W*H.

The `pieces:` line is followed by exactly COUNT piece lines, each four integers in
0..32767 (colours, 0 = grey) separated by blanks, in the order given by `sides`. Piece ids
are the 0-based positions in this list. Then, optionally, a line `solution:` followed by H
lines of W integers each: row y (north first) lists, west to east, the placement
`piece * 4 + r` of each cell (r = clockwise quarter turns of the piece as converted to
W N E S). Nothing may follow. The canonical writer (`write_e2store`) always writes
`sides: W N E S`, one blank between numbers, `\\n` line ends, and replaces the target file
atomically.

Example (a 2x2 board)::

    e2store-instance 1
    name: tiny
    size: 2 2
    sides: W N E S
    pieces: 4
    0 0 1 1
    1 0 0 1
    0 1 1 0
    1 1 0 0
    solution:
    0 4
    8 12
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from e2store.errors import InstanceFormatError
from e2store.files import atomic_write_text
from e2store.instance.model import Instance
from e2store.instance.parsing import (
    INT_RE,
    Size,
    build_instance,
    check_given_size,
    normalise_sides,
    parse_ints,
    parse_pieces,
    parse_size_line,
    read_lines,
)

MAGIC = "e2store-instance"


VERSION = 1


def header_value(path: str, lineno: int, line: str) -> tuple[str, str]:
    if ":" not in line:
        raise InstanceFormatError(path, lineno, f"not a header line: {line.strip()!r}",
                                  "`key: value` (name, size, sides, source, pieces)")
    key, value = line.split(":", 1)
    return key.strip().lower(), value.strip()


def read_e2store(
    path: str | Path, sides: str | None = None, size: Size | None = None, name: str | None = None,
    *, lines: list[str] | None = None,
) -> Instance:
    """The canonical e2store format (module docstring).

    `sides` applies when the file has no `sides:` header and must agree with it otherwise.
    `lines`: the file's lines when already read (`read_instance`), else it is read.
    """
    p = str(path)
    raw = read_lines(p) if lines is None else lines
    it: Iterator[tuple[int, str]] = (
        (i, line) for i, line in enumerate(raw, 1)
        if line.strip() and not line.strip().startswith("#")
    )
    first = next(it, None)
    if first is None:
        raise InstanceFormatError(p, 1, "empty file", f"first line `{MAGIC} {VERSION}`")
    lineno, line = first
    toks = line.split()
    if lineno != 1 or len(toks) != 2 or toks[0] != MAGIC:
        raise InstanceFormatError(p, lineno, f"not an e2store instance file: "
                                  f"{line.strip()[:60]!r}",
                                  f"first line `{MAGIC} {VERSION}`")
    if not INT_RE.fullmatch(toks[1]) or len(toks[1]) > 18:
        raise InstanceFormatError(p, 1, f"bad format version {toks[1][:20]!r}",
                                  "an integer version")
    version = int(toks[1])
    if version > VERSION:
        raise InstanceFormatError(
            p, 1, f"format version {version} is newer than this e2store reads",
            f"version <= {VERSION}; upgrade e2store",
        )
    if version < 1:
        raise InstanceFormatError(p, 1, f"bad format version {version}", f"version {VERSION}")

    header: dict[str, tuple[int, str]] = {}
    count_line = None
    for lineno, line in it:
        key, value = header_value(p, lineno, line)
        if key not in ("name", "size", "sides", "source", "pieces"):
            raise InstanceFormatError(p, lineno, f"unknown header key {key!r}",
                                      "name, size, sides, source or pieces")
        if key in header:
            raise InstanceFormatError(p, lineno, f"header key {key!r} repeated", "each key once")
        header[key] = (lineno, value)
        if key == "pieces":
            count_line = lineno
            break
    if count_line is None:
        raise InstanceFormatError(p, max(len(raw), 1), "file ends before `pieces:`",
                                  "a `pieces: COUNT` line")
    if "size" not in header:
        raise InstanceFormatError(p, count_line, "no `size:` header before `pieces:`",
                                  "`size: W H`")
    sl, sv = header["size"]
    w, h = parse_size_line(p, sl, sv.split(), "`size: W H`")
    check_given_size(p, (w, h), size, sl)
    file_sides = "WNES"
    if "sides" in header:
        try:
            file_sides = normalise_sides(header["sides"][1])
        except ValueError:
            raise InstanceFormatError(
                p, header["sides"][0], f"bad side order {header['sides'][1]!r}",
                "a permutation of W N E S",
            ) from None
    if sides is not None and "sides" not in header:
        file_sides = normalise_sides(sides)
    elif sides is not None and normalise_sides(sides) != file_sides:
        raise InstanceFormatError(p, header["sides"][0], f"file side order is {file_sides}",
                                  f"the requested side order {normalise_sides(sides)}")
    (count,) = parse_ints(p, count_line, header["pieces"][1].split(), 1, "`pieces: COUNT`")
    if count != w * h:
        raise InstanceFormatError(p, count_line, f"pieces: {count} for size {w}x{h}",
                                  f"pieces: {w * h}")

    rest = [(i, line.split()) for i, line in it]
    if len(rest) < count:
        raise InstanceFormatError(p, count_line, f"file ends after {len(rest)} of "
                                  f"{count} piece lines", f"{count} piece lines")
    pieces, line_nos = parse_pieces(p, rest[:count], file_sides)
    solution = None
    tail = rest[count:]
    if tail:
        lineno, toks = tail[0]
        if toks != ["solution:"]:
            raise InstanceFormatError(p, lineno, f"extra line after {count} pieces",
                                      "`solution:` or the end of the file")
        rows = tail[1:]
        if len(rows) > h:
            raise InstanceFormatError(p, rows[h][0], "extra line after the solution",
                                      f"{h} solution rows")
        if len(rows) < h:
            raise InstanceFormatError(p, lineno, f"{len(rows)} solution rows",
                                      f"{h} rows of {w} placements")
        solution = np.zeros((h, w), dtype=np.int32)
        for y, (lineno, toks) in enumerate(rows):
            vals = parse_ints(p, lineno, toks, w, "solution")
            for v in vals:
                if not 0 <= v < 4 * count:
                    raise InstanceFormatError(p, lineno, f"placement {v} out of range",
                                              f"piece*4+r in 0..{4 * count - 1}")
            solution[y] = vals
    if name is None and "name" in header and header["name"][1]:
        name = header["name"][1]
    source = header["source"][1] if "source" in header else None
    return build_instance(p, "e2store", file_sides, name, (w, h), pieces, line_nos, solution,
                          source)


def format_e2store(inst: Instance) -> str:
    """The canonical e2store text of `inst` (sides W N E S, solution if known)."""
    name = " ".join(str(inst.name).split()) or "instance"
    out = [
        f"{MAGIC} {VERSION}",
        "# e2store instance: pieces clockwise from west (W N E S), colour 0 = grey;",
        "# solution rows north to south, cells west to east, piece*4 + r (r clockwise).",
        f"name: {name}",
        f"size: {inst.width} {inst.height}",
        "sides: W N E S",
    ]
    if inst.source:
        out.append(f"source: {' '.join(str(inst.source).split())}")
    out.append(f"pieces: {inst.n_pieces}")
    # the colour ids the instance was read with (its pieces hold their ranks): reading the
    # file back gives the same ranks, so the same instance id
    out.extend(" ".join(str(inst.colour_id(int(c))) for c in row) for row in inst.pieces)
    if inst.solution is not None:
        out.append("solution:")
        out.extend(" ".join(str(int(v)) for v in row) for row in inst.solution)
    return "\n".join(out) + "\n"


def write_e2store(inst: Instance, path: str | Path) -> None:
    """Write `inst` in the canonical format atomically (temp file in the same dir, replace)."""
    target = Path(path)
    text = format_e2store(inst)
    atomic_write_text(target, text)
