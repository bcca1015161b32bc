"""Readers and writers of piece files; every reader returns an `Instance` in (W, N, E, S).

Each reader takes `sides`, the side order of the file: a permutation of "WNES" naming, in
file order, which side each of the 4 numbers on a piece line is (so benchmark files are
"WNES", Owen's `up right down left` is "NESW", jwortmann's `bottom left top right` is
"SWNE"). Pieces are converted to the project convention (docs/design.md section 1) on reading.
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

The e2store format is defined in `e2store.instance.e2sfile`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from e2store.errors import InstanceFormatError
from e2store.instance.e2sfile import MAGIC, read_e2store, write_e2store
from e2store.instance.model import GREY, MAX_PIECES, SIDES, Instance
from e2store.instance.parsing import (
    INT_RE,
    Lines,
    Size,
    build_instance,
    check_board_size,
    check_given_size,
    check_not_empty,
    content_lines,
    count_pieces,
    iter_content_lines,
    normalise_sides,
    parse_ints,
    parse_pieces,
    parse_size_line,
    read_lines,
    shown_path,
)

FORMATS = ("e2store", "benchmark", "brendan", "jwortmann", "puz")
DEFAULT_SIDES = {
    "e2store": "WNES",
    "benchmark": "WNES",
    "brendan": "NESW",
    "jwortmann": "SWNE",
    "puz": "NESW",
}


# --------------------------------------------------------------------------- low level


# --------------------------------------------------------------------------- readers


def read_benchmark(
    path: str | Path, sides: str = "WNES", size: Size | None = None, name: str | None = None,
    *, lines: list[str] | None = None,
) -> Instance:
    """Benchmark `pieces_NxN.txt`: line 1 = N, 3 header lines (ignored), N*N piece lines.
    `lines`: the file's lines when already read (`read_instance`), else it is read."""
    p, sides = str(path), normalise_sides(sides)
    rows = content_lines(read_lines(p) if lines is None else lines)
    check_not_empty(p, rows)
    lineno, toks = rows[0]
    (n,) = parse_ints(p, lineno, toks, 1, "size")
    if n < 1:
        raise InstanceFormatError(p, lineno, f"board size {n}", "N >= 1")
    check_board_size(p, lineno, n, n)
    check_given_size(p, (n, n), size, lineno)
    if len(rows) < 4:
        raise InstanceFormatError(
            p, rows[-1][0] + 1, "file ends inside the 3-line header", "3 header lines after N"
        )
    pieces, line_nos = count_pieces(p, rows[4:], (n, n), lineno, sides)
    return build_instance(p, "benchmark", sides, name, (n, n), pieces, line_nos)


def read_headed(path: str, rows: Lines, fmt: str, sides: str, size: Size | None, name: str | None):
    check_not_empty(path, rows)
    lineno, toks = rows[0]
    declared = parse_size_line(path, lineno, toks, "header `W H`")
    check_given_size(path, declared, size, lineno)
    pieces, lines = count_pieces(path, rows[1:], declared, lineno, sides)
    return build_instance(path, fmt, sides, name, declared, pieces, lines)


def read_brendan(
    path: str | Path, sides: str = "NESW", size: Size | None = None, name: str | None = None,
    *, lines: list[str] | None = None,
) -> Instance:
    """Owen's `pieces_NNxNN.txt`: header `W H`, then `up right down left` lines."""
    p = str(path)
    rows = content_lines(read_lines(p) if lines is None else lines)
    return read_headed(p, rows, "brendan", normalise_sides(sides), size, name)


def read_puz(
    path: str | Path, sides: str = "NESW", size: Size | None = None, name: str | None = None,
    *, lines: list[str] | None = None,
) -> Instance:
    """Gallicchio `.puz`: `c` comment lines, blank lines, header `W H`, `up right down left`."""
    p = str(path)
    rows = content_lines(read_lines(p) if lines is None else lines, "c")
    return read_headed(p, rows, "puz", normalise_sides(sides), size, name)


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
    path: str | Path, sides: str = "SWNE", size: Size | None = None, name: str | None = None,
    *, lines: list[str] | None = None,
) -> Instance:
    """Headerless `bottom left top right` lines; size derived from the borders unless given."""
    p, sides = str(path), normalise_sides(sides)
    rows = content_lines(read_lines(p) if lines is None else lines)
    check_not_empty(p, rows)
    n = len(rows)
    if n > MAX_PIECES:  # before parsing them
        raise InstanceFormatError(p, rows[MAX_PIECES][0], f"more than {MAX_PIECES:,} piece "
                                  f"lines", f"at most {MAX_PIECES:,} pieces, the largest "
                                  f"board e2store reads")
    pieces, line_nos = parse_pieces(p, rows, sides)
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
        # a count can fit a board by accident: 6x6 with an interior line missing has the
        # counts of a 7x5; no piece set whose colours do not pair up is read as a guess
        colours, times = np.unique(pieces[pieces != GREY], return_counts=True)
        odd = colours[times % 2 == 1]
        if odd.size:
            raise InstanceFormatError(
                p, rows[-1][0], f"{n} pieces fit a {w}x{h} board by count, but colour "
                f"{int(odd[0])} appears an odd number of times ({odd.size} colours do), so no "
                "board can be filled: is a piece line missing or one too many?",
                "every colour an even number of times; give --size WxH to read it as it is")
    return build_instance(p, "jwortmann", sides, name, (w, h), pieces, line_nos)


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
    rows = content_lines(read_lines(p))
    check_not_empty(p, rows)
    lineno, toks = rows[0]
    w, h = parse_size_line(p, lineno, toks, "header `W H`")
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
        x, y, r = parse_ints(p, ln, t, 3, "`x y r`")
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


def detect_format(path: str | Path, *, lines: list[str] | None = None) -> str:
    """Decide the format from the content (and a `.puz` suffix); InstanceFormatError if unknown.

    Magic line -> e2store; `.puz` suffix or a leading `c` comment -> puz; first line one
    integer -> benchmark; first line two integers then a 4-number line -> brendan; first
    line four integers -> jwortmann. Later lines are checked by the reader, so a damaged
    file is reported at its damaged line rather than as "unknown format". `lines`: the
    file's lines when already read (a pipe can be read only once), else it is read; only
    the first two content lines are looked at.
    """
    p = str(path)
    first = iter_content_lines(read_lines(p) if lines is None else lines)
    rows = list(itertools.islice(first, 2))
    check_not_empty(p, rows)
    lineno, toks = rows[0]
    if toks[0] == MAGIC:
        return "e2store"
    if Path(p).suffix.lower() == ".puz" or toks[0] == "c":
        return "puz"
    numeric = all(INT_RE.fullmatch(t) for t in toks)
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

    The file is opened and read once (`read_lines`), and detection and the reader take
    those lines: a pipe or FIFO (`<(...)`) reads as a stream.  Errors name the file escaped
    when its name holds control characters (`printable_error`).
    """
    if format != "auto" and format not in READERS:
        raise ValueError(f"unknown format {format!r}: expected auto or one of {FORMATS}")
    p = Path(path)
    try:
        lines = read_lines(p)  # once: a pipe or FIFO cannot be read again
        fmt = detect_format(p, lines=lines) if format == "auto" else format
        if fmt == "e2store":
            return read_e2store(p, sides=sides, size=size, name=name, lines=lines)
        return READERS[fmt](p, sides=sides or DEFAULT_SIDES[fmt], size=size, name=name,
                            lines=lines)
    except InstanceFormatError as exc:
        raise printable_error(exc) from None


def instance_id(value: str | Path) -> str:
    """An instance id, or the id of the instance in the piece file `value` when it exists:
    a store's instance named either way."""
    path = Path(value)
    return read_instance(path).id if path.is_file() else str(value)


def instance_ids(values: Iterable[str | Path]) -> list[str] | None:
    """The ids `values` name (`instance_id` each), or None (every instance) for none: a
    store command's instance selection."""
    return [instance_id(v) for v in values] or None


def printable_error(exc: InstanceFormatError) -> InstanceFormatError:
    """`exc` with its file name escaped in the message (`shown_path`: a newline or escape
    sequence in a name never reaches the terminal raw); `.path` stays the real name."""
    shown = shown_path(exc.path)
    if shown == exc.path:
        return exc
    out = InstanceFormatError(shown, exc.line, exc.problem, exc.expected)
    out.path = exc.path
    return out


# --------------------------------------------------------------------------- writer


def convert_instance(src: str | Path, dst: str | Path, *, format: str = "auto",
                     name: str | None = None) -> Instance:
    """Read any supported piece file and write it as a canonical e2store file (atomically)."""
    inst = read_instance(src, format=format, name=name)
    write_e2store(inst, dst)
    return inst
