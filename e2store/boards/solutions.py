"""Solutions: the independent checker (shares no code with the kernels) and solution
files (`e2store-solutions`, JSON)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from e2store.boards.schema import BOARDS_FORMAT, cells_schema
from e2store.errors import InvalidSolutionError, SolverError
from e2store.files import atomic_write, read_table, write_table
from e2store.instance.cells_files import file_error
from e2store.instance.model import GREY, MAX_PIECES, Instance
from e2store.instance.parsing import open_capped, os_problem, shown_path, size_text

SOLUTIONS_FORMAT = "e2store-solutions"


SOLUTIONS_VERSION = 1


def board_problem(inst: Instance, boards: np.ndarray) -> tuple[int, str] | None:
    """(row, why) of the first board in (k, W*H) `boards` that is not a solution, or None."""
    w, h, n = inst.width, inst.height, inst.n_pieces
    b = np.asarray(boards, dtype=np.int64).reshape(-1, h * w)
    if b.size == 0:
        return None
    bad = ((b < 0) | (b >= 4 * n)).any(axis=1)
    if bad.any():
        return int(np.argmax(bad)), f"a placement out of range 0..{4 * n - 1}"
    ids = np.sort(b >> 2, axis=1)
    bad = (ids != np.arange(n)).any(axis=1) if h * w == n else np.ones(len(b), dtype=bool)
    if bad.any():
        i = int(np.argmax(bad))
        counts = np.bincount(b[i] >> 2, minlength=n)
        p = int(np.flatnonzero(counts != 1)[0]) if (counts != 1).any() else -1
        return i, f"piece {p} is used {int(counts[p])} times (expected every piece once)"
    shown = inst.rotated_table()[b].reshape(len(b), h, w, 4)
    frame = np.zeros((h, w, 4), dtype=bool)
    frame[:, 0, 0] = frame[0, :, 1] = frame[:, -1, 2] = frame[-1, :, 3] = True
    wrong = (shown == GREY) != frame  # grey exactly on the frame sides
    bad = wrong.reshape(len(b), -1).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        y, x, s = (int(v) for v in np.argwhere(wrong[i])[0])
        what = "non-grey on the frame" if frame[y, x, s] else "grey inside the board"
        return i, f"cell ({x}, {y}) shows {what} on its {'WNES'[s]} side"
    ew = shown[:, :, 1:, 0] != shown[:, :, :-1, 2]
    ns = shown[:, 1:, :, 1] != shown[:, :-1, :, 3]
    bad = ew.reshape(len(b), -1).any(axis=1) | ns.reshape(len(b), -1).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        if ew[i].any():
            y, x = (int(v) for v in np.argwhere(ew[i])[0])
            return i, f"cells ({x}, {y}) and ({x + 1}, {y}) do not match"
        y, x = (int(v) for v in np.argwhere(ns[i])[0])
        return i, f"cells ({x}, {y}) and ({x}, {y + 1}) do not match"
    return None


def check_solutions(inst: Instance, boards: np.ndarray) -> None:
    """Raise `InvalidSolutionError` unless every row of (k, W*H) `boards` (packed cells,
    index y*W+x) uses every piece once, matches on every join and is grey exactly on the
    frame.  Vectorised: checking is cheap next to finding."""
    problem = board_problem(inst, boards)
    if problem is not None:
        i, why = problem
        raise InvalidSolutionError(f"board {i} is not a solution of {inst.name!r}: {why}")


def check_solution(inst: Instance, cells: np.ndarray) -> None:
    """Raise `InvalidSolutionError` unless `cells` ((H, W) or (W*H,) packed `piece*4+r`) is
    a solution: every piece once, all joins match, grey exactly on the frame sides."""
    a = np.asarray(cells)
    if a.size != inst.width * inst.height:
        raise InvalidSolutionError(f"board of {a.size} cells for a {inst.width}x{inst.height} "
                                   f"board (expected {inst.width * inst.height})")
    problem = board_problem(inst, a.reshape(1, -1))
    if problem is not None:
        raise InvalidSolutionError(f"not a solution of {inst.name!r}: {problem[1]}")


def write_solutions(path: str | Path, boards: np.ndarray, instance: Instance | None = None,
                    scan: str | None = None) -> None:
    """Write (k, W*H) packed boards atomically, one row per solution, columns `c0..` (cell
    index y*W+x).  A `.csv` suffix writes CSV with a header row; `.arrow`, `.feather` or
    `.ipc` an Arrow IPC file; anything else Parquet (zstd); int16 columns, key-value
    metadata: format, version, instance, width, height."""
    b = np.asarray(boards)
    target = Path(path)
    n = b.shape[1] if b.ndim == 2 else 0
    names = [f"c{i}" for i in range(n)]
    if target.suffix.lower() == ".csv":
        lines = [",".join(names)] + [",".join(map(str, row)) for row in b.tolist()]
        data = ("\n".join(lines) + "\n").encode()
        atomic_write(target, lambda fh: fh.write(data))
        return
    import pyarrow as pa

    meta = {"format": SOLUTIONS_FORMAT, "version": str(SOLUTIONS_VERSION)}
    if instance is not None:
        meta.update(instance=instance.id, width=str(instance.width),
                    height=str(instance.height))
    if scan is not None:
        meta["scan"] = str(scan)
    schema = cells_schema(names, pa.int16(), meta)
    table = pa.Table.from_arrays([pa.array(b[:, i], type=pa.int16()) for i in range(n)],
                                 schema=schema)
    write_table(target, table)


# A solutions CSV holds int16 placements (`write_solutions`): at most 7 bytes a value, so
# 100,000 boards of Eternity II take about 100 MB.  A bigger file (a 4 GB sparse file) is
# refused unread, a stream (a FIFO) once this much is read, and a line longer than a
# board's row at once: the boards read take at most the file's size in memory.
MAX_SOLUTIONS_CSV_BYTES = 256 << 20
PLACEMENT_MAX = int(np.iinfo(np.int16).max)  # the largest placement a solutions file holds
_CSV_EXPECTED = "a header row c0,c1,... then one row of placements per board"
_CSV_ROW = re.compile(rb"[ \t]*-?[0-9]{1,5}[ \t]*(?:,[ \t]*-?[0-9]{1,5}[ \t]*)*")
_CSV_INT = re.compile(rb"[ \t]*[+-]?[0-9]+[ \t]*")
_CSV_BLOCK_BYTES = 4 << 20  # rows parsed at once


def read_solutions(path: str | Path) -> np.ndarray:
    """(k, W*H) int16 packed boards from a file written by `write_solutions` (CSV by
    suffix, else Parquet or Arrow IPC).  Every value is checked before it is stored: an
    integer in -1..32767 (-1 a hole); a wider integer column is never wrapped into int16.
    SolverError naming the file (and for a CSV the line) for anything else."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        return _read_csv(p)
    # no size cap (a table of a million boards is fine); but no device, directory or socket
    # (pyarrow says `FileNotFoundError('/dev/zero')` of /dev/zero)
    expected = "a Parquet or Arrow file of `e2store solve -o`"
    open_capped(p, 1 << 62, "solutions file", expected, file_error).close()
    try:
        t = read_table(p)
    except FileNotFoundError:
        raise
    except Exception as e:  # pyarrow's errors for a file that is no table
        problem = (str(e).splitlines() or [type(e).__name__])[0][:120]
        raise file_error(p, None, f"not a solutions file: {problem!r}", expected) from None
    if (t.schema.metadata or {}).get(b"format") == BOARDS_FORMAT.encode():
        raise SolverError(f"{shown_path(p)}: a boards file (of `e2store best -o`), not a "
                          f"solutions file: `score INSTANCE FILE --best` or `url INSTANCE "
                          f"--solutions FILE` show its best board, `render board INSTANCE "
                          f"FILE --best` draws it")
    if not t.num_columns:
        return np.zeros((0, 0), dtype=np.int16)
    return np.column_stack([_placements(p, t.column_names[i], t.column(i))
                            for i in range(t.num_columns)])


def chosen_solution(instance: Instance, path: str | Path | None = None,
                    index: int = 0) -> np.ndarray | None:
    """The board of `instance` a command shows (`e2store url`): the `index`-th solution of
    the solutions file `path` (`read_solutions`), else the instance's own solution (None
    when its file holds none).  SolverError naming the file when its boards have another
    number of cells than the instance, or when it holds no `index`-th one."""
    if path is None:
        return instance.solution
    boards = read_solutions(path)
    name, cells = shown_path(path), instance.width * instance.height
    if boards.shape[1:] != (cells,):
        raise SolverError(f"{name}: boards of {boards.shape[1] if boards.ndim == 2 else 0}"
                          f" cells, the instance has {cells}")
    if index >= len(boards):
        raise SolverError(f"{name}: holds {len(boards)} solutions, no index {index}")
    return boards[index]


def _placements(p: Path, name: str, col) -> np.ndarray:
    """Column `name` of a solutions table as int16, refused unless every value is an
    integer placement in -1..32767 (no nulls, no other type)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    shown = name if name.isprintable() and len(name) <= 40 else repr(name[:40])
    if not pa.types.is_integer(col.type):
        raise file_error(p, None, f"column {shown} is {col.type}", "integer placements")
    if col.null_count:
        raise file_error(p, None, f"column {shown} has {col.null_count:,} empty cells",
                         "a placement in every cell, -1 a hole")
    if len(col):
        low, high = (v.as_py() for v in pc.min_max(col).values())
        if low < -1 or high > PLACEMENT_MAX:
            bad = low if low < -1 else high
            raise file_error(p, None, f"column {shown} holds {bad}",
                             f"placements -1..{PLACEMENT_MAX}, -1 a hole")
    return col.to_numpy().astype(np.int16)


def _read_csv(p: Path) -> np.ndarray:
    """The boards of a solutions CSV, read a line at a time with every cap of
    `MAX_SOLUTIONS_CSV_BYTES`: each row checked against a pattern (the slow way, `_csv_row`,
    for the rare row it does not fit, which names the bad value), then parsed a block at a
    time (`_csv_block`).  In memory: the boards, as int16, and one block of lines."""
    with open_capped(p, MAX_SOLUTIONS_CSV_BYTES, "solutions file", _CSV_EXPECTED,
                     file_error) as fh:
        total = 0

        def line(lineno: int, limit: int) -> bytes:
            nonlocal total
            try:
                raw = fh.readline(limit + 1)
            except OSError as exc:
                raise file_error(p, None, f"cannot be read: {os_problem(exc)}", None) from None
            total += len(raw)
            if total > MAX_SOLUTIONS_CSV_BYTES:
                raise file_error(p, lineno, f"over {size_text(MAX_SOLUTIONS_CSV_BYTES)}, too "
                                 f"large for a solutions file", _CSV_EXPECTED)
            if len(raw) > limit:
                raise file_error(p, lineno, f"a line of over {limit:,} bytes, longer than a "
                                 f"board's row", _CSV_EXPECTED)
            return raw

        head = line(1, 8 * MAX_PIECES + 16)
        if not head:
            raise file_error(p, None, "empty solutions file", "a header row c0,c1,...")
        n = _csv_header(p, head.removeprefix(b"\xef\xbb\xbf").strip())
        blocks: list[np.ndarray] = []  # int16 rows, parsed a few MB at a time
        rows: list[bytes] = []
        linenos: list[int] = []
        lineno, size = 1, 0
        while raw := line(lineno + 1, 16 * n + 64):
            lineno += 1
            row = raw.strip()
            if not row:
                continue
            if not (_CSV_ROW.fullmatch(row) and row.count(b",") == n - 1):  # the slow way:
                row = b",".join(b"%d" % v for v in _csv_row(p, lineno, row, n))  # or raise
            rows.append(row)
            linenos.append(lineno)
            size += len(row)
            if size > _CSV_BLOCK_BYTES:
                blocks.append(_csv_block(p, rows, linenos, n))
                rows, linenos, size = [], [], 0
        if rows:
            blocks.append(_csv_block(p, rows, linenos, n))
    return np.concatenate(blocks) if blocks else np.zeros((0, n), dtype=np.int16)


def _csv_block(p: Path, rows: list[bytes], linenos: list[int], n: int) -> np.ndarray:
    """(len(rows), n) int16 placements of CSV rows of `n` integers each (the row pattern
    checked): parsed at once in C, then checked in -1..32767, SolverError at the first
    line holding one out of range."""
    vals = np.fromstring(b",".join(rows), dtype=np.int64, sep=",")  # text: not deprecated
    if vals.size != len(rows) * n:  # not on rows the pattern passed: parsed one by one
        vals = np.array([int(v) for r in rows for v in r.split(b",")], dtype=np.int64)
    vals = vals.reshape(len(rows), n)
    bad = (vals < -1) | (vals > PLACEMENT_MAX)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise file_error(p, linenos[i], f"placement {int(vals[i, j])} out of range",
                         f"placements -1..{PLACEMENT_MAX}, -1 a hole")
    return vals.astype(np.int16)


def _csv_header(p: Path, head: bytes) -> int:
    """The number of cells the header row `c0,c1,...` names (SolverError unless it is one)."""
    if not head:
        return 0
    names = head.split(b",")
    if len(names) > MAX_PIECES:
        raise file_error(p, 1, f"a header of {len(names):,} columns", f"at most "
                         f"{MAX_PIECES:,} cells")
    for i, name in enumerate(names):
        if name.strip() != f"c{i}".encode():
            shown = name.strip().decode(errors="replace")[:20]
            raise file_error(p, 1, f"header column {i + 1} is {shown!r}",
                             f"{_CSV_EXPECTED}: c{i}")
    return len(names)


def _csv_row(p: Path, lineno: int, row: bytes, n: int) -> list[int]:
    """The `n` placements of a CSV row the fast pattern did not take (`+5`, `000001`), each
    checked (-1..32767); else SolverError at the line naming the first bad value, shown
    escaped and cut short."""
    tokens = row.split(b",")
    if len(tokens) != n:
        raise file_error(p, lineno, f"{len(tokens):,} value{'s' * (len(tokens) != 1)}",
                         f"{n:,}, one per cell")
    for t in tokens:
        if not _CSV_INT.fullmatch(t):
            shown = t.strip().decode(errors="replace")
            shown = repr(shown if len(shown) <= 20 else shown[:20] + "...")
            raise file_error(p, lineno, f"not an integer: {shown}", "integer placements")
        digits = len(t.strip().lstrip(b"+-"))
        if digits > 6:
            raise file_error(p, lineno, f"number too large: {t.strip()[:8].decode()}... "
                             f"({digits} digits)", f"placements -1..{PLACEMENT_MAX}")
        if not -1 <= int(t) <= PLACEMENT_MAX:
            raise file_error(p, lineno, f"placement {int(t)} out of range",
                             f"placements -1..{PLACEMENT_MAX}, -1 a hole")
    return [int(t) for t in tokens]
