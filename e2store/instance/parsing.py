"""Shared by the piece-file readers: line splitting, integer and size parsing, side-order
conversion to (W, N, E, S), and where each piece came from (`SourceInfo`).

Every problem raises `InstanceFormatError(path, line, problem, expected)`.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from e2store.errors import InstanceFormatError
from e2store.instance.model import SIDES, Instance

MAX_COLOUR = int(np.iinfo(np.int16).max)


INT_RE = re.compile(r"[+-]?[0-9]+")
MAX_DIGITS = 18  # any number in an instance file fits 64 bits


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


def attach_source(inst: Instance, info: SourceInfo) -> Instance:
    object.__setattr__(inst, "_source_info", info)
    return inst


def with_solution(inst: Instance, solution: np.ndarray | None) -> Instance:
    """A copy of `inst` with `solution` set, keeping its `SourceInfo`."""
    out = dataclasses.replace(inst, solution=solution)
    info = source_info(inst)
    return attach_source(out, info) if info is not None else out


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


MAX_INSTANCE_BYTES = 64 << 20  # Eternity II's 256 pieces take 4 KB; a million pieces 20 MB


def read_lines(path: str | Path) -> list[str]:
    """The file's lines (`split_lines`), read as UTF-8 (a BOM dropped).  InstanceFormatError
    for a device or socket (`/dev/zero` would never end), a file over
    `MAX_INSTANCE_BYTES`, or bytes that are not UTF-8 (with the line).  A pipe or FIFO is
    read like a file (process substitution gives one), up to the same size."""
    p = Path(path)
    with open(p, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            raise InstanceFormatError(str(p), None, "a device or socket, not a file",
                                      "a text file of pieces")
        data = fh.read(MAX_INSTANCE_BYTES + 1)
    if len(data) > MAX_INSTANCE_BYTES:
        raise InstanceFormatError(str(p), None, f"over {MAX_INSTANCE_BYTES >> 20} MiB, too "
                                  f"large for a piece file", "a text file of pieces")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InstanceFormatError(str(p), line, "not a UTF-8 text file", "a text file") from None
    return split_lines(text)


def split_lines(text: str) -> list[str]:
    """Lines ended by LF (or CRLF) only, so line numbers are those of an editor: unlike
    `str.splitlines`, a form feed, vertical tab, NEL or U+2028 inside a line does not
    start a new one (they are whitespace, so tokens are unchanged)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def display_name(name: str) -> str:
    """An instance name safe to print: control characters (terminal escape sequences
    included) made spaces, whitespace runs made one space."""
    kept = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in name)
    return " ".join(kept.split())


def content_lines(lines: list[str], comment: str | None = None) -> Lines:
    """Non-blank lines (and, with `comment`, not starting with that prefix) as tokens."""
    out: Lines = []
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if not s or (comment is not None and is_comment(s, comment)):
            continue
        out.append((i, s.split()))
    return out


def is_comment(stripped: str, comment: str) -> bool:
    if comment == "c":
        return stripped == "c" or stripped.startswith(("c ", "c\t"))
    return stripped.startswith(comment)


def parse_ints(path: str, lineno: int, tokens: list[str], count: int, what: str) -> list[int]:
    """Parse exactly `count` integers from one line, else InstanceFormatError at that line."""
    if len(tokens) != count:
        raise InstanceFormatError(
            path, lineno, f"{len(tokens)} numbers on the {what} line", n_ints_text(count)
        )
    out = []
    for t in tokens:
        if not INT_RE.fullmatch(t):
            shown = t if len(t) <= 40 else f"{t[:20]}...({len(t)} characters)"
            raise InstanceFormatError(path, lineno, f"not an integer: {shown!r}",
                                      n_ints_text(count))
        digits = len(t.lstrip("+-"))
        if digits > MAX_DIGITS:  # int() itself refuses over 4,300 digits, with a traceback
            raise InstanceFormatError(path, lineno, f"number too large: {t[:12]}... "
                                      f"({digits} digits)", n_ints_text(count))
        out.append(int(t))
    return out


def n_ints_text(count: int) -> str:
    return "1 integer" if count == 1 else f"{count} integers"


def parse_pieces(path: str, rows: Lines, sides: str) -> tuple[np.ndarray, np.ndarray]:
    """Parse piece lines -> ((n, 4) int16 in W N E S, (n,) int32 line numbers)."""
    vals = np.zeros((len(rows), 4), dtype=np.int64)
    lines = np.zeros(len(rows), dtype=np.int32)
    for k, (lineno, toks) in enumerate(rows):
        v = parse_ints(path, lineno, toks, 4, "piece")
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


def parse_size_line(path: str, lineno: int, tokens: list[str], what: str) -> Size:
    w, h = parse_ints(path, lineno, tokens, 2, what)
    if w < 1 or h < 1:
        raise InstanceFormatError(path, lineno, f"board size {w}x{h}", "width and height >= 1")
    return w, h


def count_pieces(
    path: str, body: Lines, size: Size, size_line: int, sides: str
) -> tuple[np.ndarray, np.ndarray]:
    """Parse the piece lines (in file order, so a bad line is reported first), then check
    their count against the declared size: an extra line is reported at the first extra,
    a missing one at the line declaring the size."""
    w, h = size
    n = w * h
    pieces, lines = parse_pieces(path, body[:n], sides)
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


def check_given_size(path: str, declared: Size, given: Size | None, lineno: int) -> None:
    if given is not None and tuple(given) != tuple(declared):
        raise InstanceFormatError(
            path, lineno, f"file declares size {declared[0]}x{declared[1]}",
            f"the given size {given[0]}x{given[1]}",
        )


def build_instance(
    path: str, fmt: str, sides: str, name: str | None, size: Size, pieces: np.ndarray,
    lines: np.ndarray, solution: np.ndarray | None = None, source: str | None = None,
) -> Instance:
    inst = Instance(
        name=display_name(name if name is not None else Path(path).stem) or Path(path).stem,
        width=size[0],
        height=size[1],
        pieces=pieces,
        solution=solution,
        source=source if source is not None else path,
    )
    return attach_source(inst, SourceInfo(path, fmt, sides, lines))


def check_not_empty(path: str, rows: Lines) -> None:
    if not rows:
        raise InstanceFormatError(path, 1, "empty file", "a piece file")
