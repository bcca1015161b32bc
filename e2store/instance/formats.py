"""Readers and writers of piece files; every reader returns an `Instance` in (W, N, E, S).

Each reader takes `sides`, the side order of the file: a permutation of "WNES" naming, in
file order, which side each of the 4 numbers on a piece line is (so benchmark files are
"WNES", Owen's `up right down left` is "NESW", jwortmann's `bottom left top right` is
"SWNE"). Pieces are converted to the project convention (DESIGN.md section 1) on reading.
Every problem raises `InstanceFormatError(path, line, problem, expected)` with the 1-based
line number of the file.

Where each piece came from: readers attach a `SourceInfo` (path, format, side order and
the 1-based file line of every piece) to the returned `Instance` as the extra attribute
`_source_info`, set with `object.__setattr__` (the dataclass is frozen; fields, equality
and the content id are unaffected). Read it with `source_info(inst)`; it is `None` for an
instance built in memory or rebuilt with `dataclasses.replace`.

Formats (name: default side order):

* `benchmark` ("WNES"): line 1 = N; lines 2-4 a header with no piece data; N*N piece lines.
* `brendan` ("NESW"): Owen's pieces_set_1, header `W H`, then `up right down left`.
* `jwortmann` ("SWNE"): no header, one piece per line `bottom left top right`; the board
  size is derived from the piece count and the number of border pieces (or given).
* `puz` ("NESW"): `c` comment lines, blank lines, header `W H`, then `up right down left`.
* `e2store` ("WNES"): the project's canonical format, below.

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

import dataclasses
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from e2store.errors import InstanceFormatError
from e2store.files import atomic_write_text
from e2store.instance.model import GREY, SIDES, Instance

MAGIC = "e2store-instance"
VERSION = 1
FORMATS = ("e2store", "benchmark", "brendan", "jwortmann", "puz")
DEFAULT_SIDES = {
    "e2store": "WNES",
    "benchmark": "WNES",
    "brendan": "NESW",
    "jwortmann": "SWNE",
    "puz": "NESW",
}
MAX_COLOUR = int(np.iinfo(np.int16).max)
_INT = re.compile(r"[+-]?[0-9]+")

Size = tuple[int, int]
Lines = list[tuple[int, list[str]]]  # (1-based line number, blank-separated tokens)


@dataclass(frozen=True, eq=False)
class SourceInfo:
    """Where an instance was read from: `piece_lines[i]` is the 1-based file line of piece i."""

    path: str
    format: str
    sides: str
    piece_lines: np.ndarray


def source_info(inst: Instance) -> SourceInfo | None:
    """The `SourceInfo` a reader attached to `inst`, or None (instance built in memory)."""
    return getattr(inst, "_source_info", None)


def piece_line(inst: Instance, piece: int) -> int | None:
    """1-based file line of piece `piece` (0-based id), when the instance was read from a file."""
    info = source_info(inst)
    if info is None or not 0 <= piece < len(info.piece_lines):
        return None
    return int(info.piece_lines[piece])


def _attach(inst: Instance, info: SourceInfo) -> Instance:
    object.__setattr__(inst, "_source_info", info)
    return inst


def with_solution(inst: Instance, solution: np.ndarray | None) -> Instance:
    """A copy of `inst` with `solution` set, keeping its `SourceInfo`."""
    out = dataclasses.replace(inst, solution=solution)
    info = source_info(inst)
    return _attach(out, info) if info is not None else out


def normalise_sides(sides: str) -> str:
    """'W N E S', 'wnes', 'W,N,E,S' -> 'WNES'; ValueError unless a permutation of WNES."""
    s = re.sub(r"[\s,]", "", str(sides)).upper()
    if len(s) != 4 or sorted(s) != sorted(SIDES):
        raise ValueError(f"bad side order {sides!r}: expected a permutation of W N E S")
    return s


def to_project(values: np.ndarray, sides: str) -> np.ndarray:
    """Reorder (n, 4) colours given in file order `sides` into (W, N, E, S)."""
    out = np.empty_like(values)
    out[:, [SIDES.index(c) for c in sides]] = values
    return out


def from_project(pieces: np.ndarray, sides: str) -> np.ndarray:
    """Reorder (n, 4) (W, N, E, S) colours into file order `sides`."""
    return np.asarray(pieces)[:, [SIDES.index(c) for c in sides]]


# --------------------------------------------------------------------------- low level


def _read_lines(path: str | Path) -> list[str]:
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = p.read_bytes()[: exc.start].count(b"\n") + 1
        raise InstanceFormatError(str(p), line, "not a UTF-8 text file", "a text file") from None
    return text.splitlines()


def _content(lines: list[str], comment: str | None = None) -> Lines:
    """Non-blank lines (and, with `comment`, not starting with that prefix) as tokens."""
    out: Lines = []
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if not s or (comment is not None and _is_comment(s, comment)):
            continue
        out.append((i, s.split()))
    return out


def _is_comment(stripped: str, comment: str) -> bool:
    if comment == "c":
        return stripped == "c" or stripped.startswith(("c ", "c\t"))
    return stripped.startswith(comment)


def _ints(path: str, lineno: int, tokens: list[str], count: int, what: str) -> list[int]:
    """Parse exactly `count` integers from one line, else InstanceFormatError at that line."""
    if len(tokens) != count:
        raise InstanceFormatError(
            path, lineno, f"{len(tokens)} numbers on the {what} line", _n_ints(count)
        )
    out = []
    for t in tokens:
        if not _INT.fullmatch(t):
            raise InstanceFormatError(path, lineno, f"not an integer: {t!r}", _n_ints(count))
        out.append(int(t))
    return out


def _n_ints(count: int) -> str:
    return "1 integer" if count == 1 else f"{count} integers"


def _pieces(path: str, rows: Lines, sides: str) -> tuple[np.ndarray, np.ndarray]:
    """Parse piece lines -> ((n, 4) int16 in W N E S, (n,) int32 line numbers)."""
    vals = np.zeros((len(rows), 4), dtype=np.int64)
    lines = np.zeros(len(rows), dtype=np.int32)
    for k, (lineno, toks) in enumerate(rows):
        v = _ints(path, lineno, toks, 4, "piece")
        for c in v:
            if c < 0:
                raise InstanceFormatError(path, lineno, f"negative colour {c}", "colours >= 0")
            if c > MAX_COLOUR:
                raise InstanceFormatError(
                    path, lineno, f"colour {c} too large", f"colours <= {MAX_COLOUR}"
                )
        vals[k] = v
        lines[k] = lineno
    return to_project(vals, sides).astype(np.int16), lines


def _size_line(path: str, lineno: int, tokens: list[str], what: str) -> Size:
    w, h = _ints(path, lineno, tokens, 2, what)
    if w < 1 or h < 1:
        raise InstanceFormatError(path, lineno, f"board size {w}x{h}", "width and height >= 1")
    return w, h


def _count_pieces(
    path: str, body: Lines, size: Size, size_line: int, sides: str
) -> tuple[np.ndarray, np.ndarray]:
    """Parse the piece lines (in file order, so a bad line is reported first), then check
    their count against the declared size: an extra line is reported at the first extra,
    a missing one at the line declaring the size."""
    w, h = size
    n = w * h
    pieces, lines = _pieces(path, body[:n], sides)
    if len(body) > n:
        raise InstanceFormatError(
            path, body[n][0], f"extra line: more than {n} pieces",
            f"{n} pieces for the declared size {w}x{h}",
        )
    if len(body) < n:
        raise InstanceFormatError(
            path, size_line, f"{len(body)} pieces for the declared size {w}x{h}", f"{n} pieces"
        )
    return pieces, lines


def _check_given_size(path: str, declared: Size, given: Size | None, lineno: int) -> None:
    if given is not None and tuple(given) != tuple(declared):
        raise InstanceFormatError(
            path, lineno, f"file declares size {declared[0]}x{declared[1]}",
            f"the given size {given[0]}x{given[1]}",
        )


def _build(
    path: str, fmt: str, sides: str, name: str | None, size: Size, pieces: np.ndarray,
    lines: np.ndarray, solution: np.ndarray | None = None, source: str | None = None,
) -> Instance:
    inst = Instance(
        name=name if name is not None else Path(path).stem,
        width=size[0],
        height=size[1],
        pieces=pieces,
        solution=solution,
        source=source if source is not None else path,
    )
    return _attach(inst, SourceInfo(path, fmt, sides, lines))


def _empty(path: str, rows: Lines) -> None:
    if not rows:
        raise InstanceFormatError(path, 1, "empty file", "a piece file")


# --------------------------------------------------------------------------- readers


def read_benchmark(
    path: str | Path, sides: str = "WNES", size: Size | None = None, name: str | None = None
) -> Instance:
    """Benchmark `pieces_NxN.txt`: line 1 = N, 3 header lines (ignored), N*N piece lines."""
    p, sides = str(path), normalise_sides(sides)
    rows = _content(_read_lines(p))
    _empty(p, rows)
    lineno, toks = rows[0]
    (n,) = _ints(p, lineno, toks, 1, "size")
    if n < 1:
        raise InstanceFormatError(p, lineno, f"board size {n}", "N >= 1")
    _check_given_size(p, (n, n), size, lineno)
    if len(rows) < 4:
        raise InstanceFormatError(
            p, rows[-1][0] + 1, "file ends inside the 3-line header", "3 header lines after N"
        )
    pieces, lines = _count_pieces(p, rows[4:], (n, n), lineno, sides)
    return _build(p, "benchmark", sides, name, (n, n), pieces, lines)


def _headed(path: str, rows: Lines, fmt: str, sides: str, size: Size | None, name: str | None):
    _empty(path, rows)
    lineno, toks = rows[0]
    declared = _size_line(path, lineno, toks, "header `W H`")
    _check_given_size(path, declared, size, lineno)
    pieces, lines = _count_pieces(path, rows[1:], declared, lineno, sides)
    return _build(path, fmt, sides, name, declared, pieces, lines)


def read_brendan(
    path: str | Path, sides: str = "NESW", size: Size | None = None, name: str | None = None
) -> Instance:
    """Owen's `pieces_NNxNN.txt`: header `W H`, then `up right down left` lines."""
    p = str(path)
    return _headed(p, _content(_read_lines(p)), "brendan", normalise_sides(sides), size, name)


def read_puz(
    path: str | Path, sides: str = "NESW", size: Size | None = None, name: str | None = None
) -> Instance:
    """Gallicchio `.puz`: `c` comment lines, blank lines, header `W H`, `up right down left`."""
    p = str(path)
    return _headed(p, _content(_read_lines(p), "c"), "puz", normalise_sides(sides), size, name)


def derive_size(n: int, n_borders: int) -> Size | None:
    """Board (W, H), W >= H, with W*H = n and 2(W-2)+2(H-2) = n_borders, or None.

    A perfect square with a matching border count (or a non-derivable one) gives N x N.
    """
    r = math.isqrt(n)
    square = r * r == n
    if square and n_borders == 4 * (r - 2):
        return r, r
    if n_borders % 2 == 0:
        s = n_borders // 2 + 4  # W + H
        disc = s * s - 4 * n
        if disc >= 0:
            d = math.isqrt(disc)
            if d * d == disc and (s + d) % 2 == 0:
                w, h = (s + d) // 2, (s - d) // 2
                if h >= 2 and w * h == n:
                    return w, h
    return (r, r) if square else None


def read_jwortmann(
    path: str | Path, sides: str = "SWNE", size: Size | None = None, name: str | None = None
) -> Instance:
    """Headerless `bottom left top right` lines; size derived from the borders unless given."""
    p, sides = str(path), normalise_sides(sides)
    rows = _content(_read_lines(p))
    _empty(p, rows)
    pieces, lines = _pieces(p, rows, sides)
    n = len(rows)
    if size is not None:
        w, h = size
        if w * h != n:
            raise InstanceFormatError(
                p, rows[-1][0], f"{n} pieces for the given size {w}x{h}", f"{w * h} pieces"
            )
    else:
        n_borders = int(((pieces == GREY).sum(axis=1) == 1).sum())
        got = derive_size(n, n_borders)
        if got is None:
            raise InstanceFormatError(
                p, rows[-1][0], f"cannot derive the board size from {n} pieces with "
                f"{n_borders} border pieces", "a square count or W*H pieces with "
                "2(W-2)+2(H-2) borders; give the size explicitly",
            )
        w, h = got
    return _build(p, "jwortmann", sides, name, (w, h), pieces, lines)


def _header_value(path: str, lineno: int, line: str) -> tuple[str, str]:
    if ":" not in line:
        raise InstanceFormatError(path, lineno, f"not a header line: {line.strip()!r}",
                                  "`key: value` (name, size, sides, source, pieces)")
    key, value = line.split(":", 1)
    return key.strip().lower(), value.strip()


def read_e2store(
    path: str | Path, sides: str | None = None, size: Size | None = None, name: str | None = None
) -> Instance:
    """The canonical e2store format (module docstring).

    `sides` applies when the file has no `sides:` header and must agree with it otherwise.
    """
    p = str(path)
    raw = _read_lines(p)
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
        raise InstanceFormatError(p, lineno, f"not an e2store instance file: {line.strip()!r}",
                                  f"first line `{MAGIC} {VERSION}`")
    if not _INT.fullmatch(toks[1]):
        raise InstanceFormatError(p, 1, f"bad format version {toks[1]!r}", "an integer version")
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
        key, value = _header_value(p, lineno, line)
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
    w, h = _size_line(p, sl, sv.split(), "`size: W H`")
    _check_given_size(p, (w, h), size, sl)
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
    (count,) = _ints(p, count_line, header["pieces"][1].split(), 1, "`pieces: COUNT`")
    if count != w * h:
        raise InstanceFormatError(p, count_line, f"pieces: {count} for size {w}x{h}",
                                  f"pieces: {w * h}")

    rest = [(i, line.split()) for i, line in it]
    if len(rest) < count:
        raise InstanceFormatError(p, count_line, f"file ends after {len(rest)} of "
                                  f"{count} piece lines", f"{count} piece lines")
    pieces, lines = _pieces(p, rest[:count], file_sides)
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
            vals = _ints(p, lineno, toks, w, "solution")
            for v in vals:
                if not 0 <= v < 4 * count:
                    raise InstanceFormatError(p, lineno, f"placement {v} out of range",
                                              f"piece*4+r in 0..{4 * count - 1}")
            solution[y] = vals
    if name is None and "name" in header and header["name"][1]:
        name = header["name"][1]
    source = header["source"][1] if "source" in header else None
    return _build(p, "e2store", file_sides, name, (w, h), pieces, lines, solution, source)


def read_brendan_solution(
    path: str | Path, sides: str = "NESW", n_pieces: int | None = None
) -> np.ndarray:
    """Owen's `solutions_NNxNN.txt` -> (H, W) packed `piece*4 + r` in project convention.

    The file has a header `W H` then, for piece k (file order), a line `x y r`: column x,
    row y counted from the bottom, r clockwise quarter turns of the piece as Owen reads it
    (`up right down left`). `sides` is the side order the pieces were read with. Owen's
    piece and the project piece differ by a fixed turn k when `sides` is a cyclic shift
    of "NESW" (project piece side s = Owen side s+k): then x_P = x, y_P = H-1-y and
    r_P = (r + k) mod 4. Read as "NESW" (`read_brendan` default) k = 0, so r_P = r; read
    as "WNES" (the benchmark files) k = 1, so r_P = (r + 1) mod 4 as the instances README
    says. A non-cyclic side order mirrors the pieces and no mapping exists (ValueError).
    """
    p, sides = str(path), normalise_sides(sides)
    # file token i is Owen side "NESW"[i]; it lands on project side SIDES.index(sides[i])
    shifts = {(SIDES.index("NESW"[i]) - SIDES.index(sides[i])) % 4 for i in range(4)}
    if len(shifts) != 1:
        raise ValueError(f"side order {sides} mirrors the pieces: Owen's solutions do not apply")
    k = shifts.pop()
    rows = _content(_read_lines(p))
    _empty(p, rows)
    lineno, toks = rows[0]
    w, h = _size_line(p, lineno, toks, "header `W H`")
    n = w * h
    if n_pieces is not None and n_pieces != n:
        raise InstanceFormatError(p, lineno, f"solution for {n} pieces", f"{n_pieces} pieces")
    body = rows[1:]
    if len(body) > n:
        raise InstanceFormatError(p, body[n][0], "extra line", f"{n} placement lines")
    if len(body) < n:
        raise InstanceFormatError(p, lineno, f"{len(body)} placement lines", f"{n} lines")
    sol = np.full((h, w), -1, dtype=np.int32)
    for piece, (ln, t) in enumerate(body):
        x, y, r = _ints(p, ln, t, 3, "`x y r`")
        if not (0 <= x < w and 0 <= y < h and 0 <= r < 4):
            raise InstanceFormatError(p, ln, f"placement {x} {y} {r} off the board",
                                      f"0 <= x < {w}, 0 <= y < {h}, 0 <= r < 4")
        yp = h - 1 - y
        if sol[yp, x] >= 0:
            raise InstanceFormatError(p, ln, f"cell {x} {y} used twice", "each cell once")
        sol[yp, x] = piece * 4 + (r + k) % 4
    return sol


READERS = {
    "e2store": read_e2store,
    "benchmark": read_benchmark,
    "brendan": read_brendan,
    "jwortmann": read_jwortmann,
    "puz": read_puz,
}


def detect_format(path: str | Path) -> str:
    """Decide the format from the content (and a `.puz` suffix); InstanceFormatError if unknown.

    Magic line -> e2store; `.puz` suffix or a leading `c` comment -> puz; first line one
    integer -> benchmark; first line two integers then a 4-number line -> brendan; first
    line four integers -> jwortmann. Later lines are checked by the reader, so a damaged
    file is reported at its damaged line rather than as "unknown format".
    """
    p = str(path)
    rows = _content(_read_lines(p))
    _empty(p, rows)
    lineno, toks = rows[0]
    if toks[0] == MAGIC:
        return "e2store"
    if Path(p).suffix.lower() == ".puz" or toks[0] == "c":
        return "puz"
    numeric = all(_INT.fullmatch(t) for t in toks)
    if numeric and len(toks) == 1:
        return "benchmark"
    if numeric and len(toks) == 2:
        if len(rows) > 1 and len(rows[1][1]) == 3:
            raise InstanceFormatError(p, rows[1][0], "unknown format: this looks like an Owen "
                                      "solution file (`x y r` lines)", "a piece file")
        return "brendan"
    if numeric and len(toks) == 4:
        return "jwortmann"
    raise InstanceFormatError(
        p, lineno, "unknown format",
        f"`{MAGIC} N`, a `c` comment, `N`, `W H` or a 4-number piece line",
    )


def read_instance(
    path: str | Path,
    format: str = "auto",
    sides: str | None = None,
    size: Size | None = None,
    name: str | None = None,
) -> Instance:
    """Read any supported piece file; `format="auto"` uses `detect_format`.

    `sides=None` means the format's default side order; `size` overrides the derived size
    of headerless files and must agree with a declared one; `name` defaults to the file
    stem (or the e2store `name:` header).
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    fmt = detect_format(p) if format == "auto" else format
    if fmt not in READERS:
        raise ValueError(f"unknown format {format!r}: expected auto or one of {FORMATS}")
    if fmt == "e2store":
        return read_e2store(p, sides=sides, size=size, name=name)
    return READERS[fmt](p, sides=sides or DEFAULT_SIDES[fmt], size=size, name=name)


# --------------------------------------------------------------------------- writer


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
    out.extend(" ".join(str(int(c)) for c in row) for row in inst.pieces)
    if inst.solution is not None:
        out.append("solution:")
        out.extend(" ".join(str(int(v)) for v in row) for row in inst.solution)
    return "\n".join(out) + "\n"


def write_e2store(inst: Instance, path: str | Path) -> None:
    """Write `inst` in the canonical format atomically (temp file in the same dir, replace)."""
    target = Path(path)
    text = format_e2store(inst)
    atomic_write_text(target, text)

def convert_instance(src: str | Path, dst: str | Path, *, format: str = "auto",
                     name: str | None = None) -> Instance:
    """Read any supported piece file and write it as a canonical e2store file (atomically)."""
    inst = read_instance(src, format=format, name=name)
    write_e2store(inst, dst)
    return inst
