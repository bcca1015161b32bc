"""Shared by the piece-file readers: line splitting, integer and size parsing, side-order
conversion to (W, N, E, S), and where each piece came from (`SourceInfo`).

Every problem raises `InstanceFormatError(path, line, problem, expected)`.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from e2store.errors import InstanceFormatError
from e2store.instance.model import MAX_PIECES, SIDES, Instance

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

# A piece file of the largest board (MAX_PIECES pieces) holds at most that many piece lines,
# as many solution rows, and a few header lines: a file of more lines of data is refused
# from its bytes, before any per-line object is built (a million lines took 10 s and 500 MB
# to refuse, benchmarks/oversized_input.py).  Blank and comment lines (`#`, `c`) are not
# data, but a file of more than MAX_LINES lines in all is refused too.
MAX_DATA_LINES = 2 * MAX_PIECES + 8
MAX_LINES = 4 * MAX_PIECES
_DATA_LINE = re.compile(rb"^[ \t\r\f\v]*[^\s#c]", re.MULTILINE)


def shown_path(path: str | os.PathLike) -> str:
    """A file name safe to print in a one-line message: as it is when every character is
    printable, else Python's escaped and quoted form (`'a\\nb'`, `'\\x1b[2J'`), so a
    newline, a terminal escape sequence or undecodable bytes in a name never reach the
    terminal raw."""
    s = os.fsdecode(os.fspath(path))
    return s if s.isprintable() else repr(s)


# (path, line, problem, expected) -> the error to raise: InstanceFormatError, or a SolverError
FileError = Callable[[str, int | None, str, str | None], Exception]


def read_lines(path: str | Path) -> list[str]:
    """The file's lines (`split_lines`), read as UTF-8 (a BOM dropped), with one `read`
    of one `open`: a pipe or FIFO (process substitution gives one) is a stream that can be
    read only once, so callers that need the lines twice (format detection, then the
    reader) take them from here once and pass them on (`read_instance`).

    FileNotFoundError for a missing file; InstanceFormatError (one line naming the file)
    for a directory, a device or socket (`/dev/zero` would never end), a file that cannot
    be read (permissions, an I/O error such as `/proc/self/mem`'s), a file over
    `MAX_INSTANCE_BYTES`, more lines than a piece file of the largest board has
    (`check_line_count`), or bytes that are not UTF-8 (with the line)."""
    where = str(Path(path))
    data = read_capped(path, MAX_INSTANCE_BYTES)
    check_line_count(where, data)
    return split_lines(decode_text(where, data))


def open_capped(path: str | Path, max_bytes: int, kind: str = "piece file",
                expected: str = "a text file of pieces",
                error: FileError = InstanceFormatError) -> BinaryIO:
    """`path` opened for reading bytes, once it is known to be no directory, device or
    socket (`/dev/zero` would never end) and, for a regular file, no larger than
    `max_bytes` (refused unread, in microseconds, however large: a sparse file of
    terabytes too).  A pipe or FIFO is opened: its reader caps what it reads.

    FileNotFoundError (the name escaped, `shown_path`) for a missing file; else
    `error(path, line, problem, expected)`: InstanceFormatError, or the caller's own
    error class (a solver's files raise SolverError), named `kind` in the message."""
    p = Path(path)
    where = str(p)
    try:
        fh = open(p, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT),
                                shown_path(p)) from None
    except IsADirectoryError:
        raise error(where, None, "a directory, not a file", expected) from None
    except OSError as exc:
        raise error(where, None, f"cannot be read: {os_problem(exc)}", None) from None
    try:
        mode, size = (st := os.fstat(fh.fileno())).st_mode, st.st_size
        if stat.S_ISDIR(mode):
            raise error(where, None, "a directory, not a file", expected)
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            raise error(where, None, "a device or socket, not a file", expected)
        if stat.S_ISREG(mode) and size > max_bytes:  # refused unread
            raise error(where, None, f"over {size_text(max_bytes)}, too large for a {kind}",
                        expected)
    except BaseException:
        fh.close()
        raise
    return fh


def read_capped(path: str | Path, max_bytes: int, kind: str = "piece file",
                expected: str = "a text file of pieces",
                error: FileError = InstanceFormatError) -> bytes:
    """The bytes of `path`, at most `max_bytes` of them, with one `read` of one `open`
    (`open_capped`: the same refusals, the same errors); a stream longer than
    `max_bytes` is refused once `max_bytes + 1` bytes are read, never read whole."""
    where = str(Path(path))
    with open_capped(path, max_bytes, kind, expected, error) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise error(where, None, f"cannot be read: {os_problem(exc)}", None) from None
    if len(data) > max_bytes:
        raise error(where, None, f"over {size_text(max_bytes)}, too large for a {kind}",
                    expected)
    return data


def size_text(n: int) -> str:
    """A byte cap as a message shows it: `64 MiB`, `1 KiB`, `100 bytes`."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def decode_text(where: str, data: bytes, error: FileError = InstanceFormatError) -> str:
    """`data` decoded as UTF-8 (a BOM dropped); `error` at the first line that is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(where, line, "not a UTF-8 text file", "a text file") from None


def os_problem(exc: OSError) -> str:
    """What went wrong, without the file name (the message names it once)."""
    return exc.strerror or str(exc) or type(exc).__name__


def check_line_count(path: str, data: bytes, kind: str = "piece file",
                     expected: str | None = None,
                     error: FileError = InstanceFormatError) -> None:
    """`error` (InstanceFormatError), at the first line too many, for a file of more lines
    than any piece file e2store reads (`MAX_LINES` in all, `MAX_DATA_LINES` neither blank
    nor comments): counted on the bytes, in milliseconds, so an oversized file costs
    neither the seconds nor the memory of splitting and parsing it.  Costs nothing for a
    file of at most `MAX_DATA_LINES` lines (every real one).  Board and scan files (a line
    per cell, at most `MAX_PIECES` cells) are held to the same counts, named `kind`."""
    n_lines = data.count(b"\n")
    if n_lines <= MAX_DATA_LINES:
        return
    expected = expected or f"at most {MAX_PIECES:,} pieces, the largest board e2store reads"
    if n_lines > MAX_LINES:
        raise error(path, MAX_LINES + 1, f"{n_lines:,} lines, more than {MAX_LINES:,}: too "
                    f"many for a {kind}", expected)
    for k, m in enumerate(_DATA_LINE.finditer(data), 1):
        if k > MAX_DATA_LINES:
            line = data.count(b"\n", 0, m.start()) + 1
            raise error(path, line, f"over {MAX_DATA_LINES:,} lines of data, too many for "
                        f"a {kind}", expected)


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
    return list(iter_content_lines(lines, comment))


def iter_content_lines(lines: list[str], comment: str | None = None) -> Iterator[
        tuple[int, list[str]]]:
    """`content_lines` one at a time (format detection needs only the first two)."""
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if not s or (comment is not None and is_comment(s, comment)):
            continue
        yield i, s.split()


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
    check_board_size(path, lineno, w, h)
    return w, h


def check_board_size(path: str, lineno: int | None, w: int, h: int) -> None:
    """InstanceFormatError for a board of more than `MAX_PIECES` pieces, before its piece
    lines are parsed (a declared size is all it takes to know)."""
    if w * h > MAX_PIECES:
        raise InstanceFormatError(path, lineno, f"board size {w}x{h}: {w * h:,} pieces",
                                  f"at most {MAX_PIECES:,} pieces, the largest board e2store "
                                  f"reads")


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
