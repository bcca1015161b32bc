"""The text files of cells a search reads beside an instance: a seed file (fixed
placements `x y piece r`, `read_seed_file`) and the line reader and errors shared with the
scan-order files (`e2store.solver.scan`): each error names the file and line, a file is
read with a cap, in bounded memory."""

from __future__ import annotations

import re
from pathlib import Path

from e2store.errors import SolverError
from e2store.instance.model import MAX_PIECES
from e2store.instance.parsing import (
    MAX_DIGITS,
    check_line_count,
    decode_text,
    read_capped,
    shown_path,
    split_lines,
)


def file_error(path: str | Path, line: int | None, problem: str,
               expected: str | None) -> SolverError:
    """A SolverError naming the file (escaped: `shown_path`) and line: one line."""
    where = shown_path(path) + (f":{line}" if line is not None else "")
    return SolverError(f"{where}: {problem}" + (f" (expected {expected})" if expected else ""))


# A scan or seed file lists each cell of the board at most once: at most MAX_PIECES lines of
# a few numbers each, a few MB with comments.  Bigger files (a 4 GB sparse file, /dev/zero)
# are refused before they are read (`e2store.instance.parsing.read_capped`), and files of
# more lines than a piece file of the largest board from their bytes (`check_line_count`).
MAX_CELLS_FILE_BYTES = 16 << 20
_INT = re.compile(r"[+-]?[0-9]+")


def int_tokens(path: Path, lineno: int, tokens: list[str], count: int, what: str) -> list[int]:
    """The `count` integers of a line (each of at most `MAX_DIGITS` digits), else a
    SolverError naming the file and line, the line shown cut short and escaped."""
    if len(tokens) != count or not all(_INT.fullmatch(t) for t in tokens):
        raise file_error(path, lineno, f"bad line {shown_line(' '.join(tokens))}", what)
    for t in tokens:
        digits = len(t.lstrip("+-"))
        if digits > MAX_DIGITS:  # no int64 holds it: refused, never wrapped or overflowed
            raise file_error(path, lineno, f"number too large: {t[:12]}... ({digits} "
                             f"digits)", what)
    return [int(t) for t in tokens]


def shown_line(text: str, limit: int = 60) -> str:
    """A line of a file quoted for a message: escaped (`repr`), cut to `limit` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def content_lines(path: Path, kind: str = "cells file",
                  expected: str = "a text file of cells") -> list[tuple[int, list[str]]]:
    """(1-based line number, tokens) of the lines that are neither blank nor `#` comments,
    split in at most five tokens (the fifth the rest of the line: no line of a cells file
    has more than four, so a longer one is bad whatever follows, and is never split whole).
    The file is read with a cap (`MAX_CELLS_FILE_BYTES`, and the line counts of
    `check_line_count`): a device, a directory, a huge or endless file is a SolverError
    naming it, at once and in bounded memory."""
    expected = f"{expected}, at most {MAX_PIECES:,} of them"
    data = read_capped(path, MAX_CELLS_FILE_BYTES, kind, expected, file_error)
    check_line_count(str(path), data, kind, expected, file_error)
    text = decode_text(str(path), data, file_error)
    out = []
    for i, line in enumerate(split_lines(text), 1):
        s = line.split("#", 1)[0].strip()
        if s:
            out.append((i, s.replace(",", " ").split(None, 4)))
    return out


def read_seed_file(path: str | Path) -> dict[tuple[int, int], int]:
    """A seed (partial board) from a text file: one fixed cell `x y piece r` per line
    (r = clockwise quarter turns); blank lines and `#` comments are ignored.
    Returns {(x, y): piece*4 + r}; the board checks happen in `solve`."""
    p = Path(path)
    out: dict[tuple[int, int], int] = {}
    for lineno, toks in content_lines(p, "board file", "a text file of `x y piece r` lines"):
        x, y, piece, r = int_tokens(p, lineno, toks, 4, "`x y piece r`: four integers")
        if piece < 0 or not 0 <= r < 4:
            raise file_error(p, lineno, f"placement piece {piece} rotation {r}",
                              "piece >= 0 and 0 <= r < 4")
        if (x, y) in out:
            raise file_error(p, lineno, f"cell ({x}, {y}) repeated", "each cell at most once")
        out[(x, y)] = piece * 4 + r
    return out
