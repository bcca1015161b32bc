"""Solutions: the independent checker (shares no code with the kernels) and solution
files (`e2store-solutions`, JSON)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from e2store.errors import InvalidSolutionError, SolverError
from e2store.files import atomic_write, read_table, write_table
from e2store.instance.model import GREY, Instance
from e2store.store.layout import board_schema

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
    schema = board_schema(names, pa.int16(), meta)
    table = pa.Table.from_arrays([pa.array(b[:, i], type=pa.int16()) for i in range(n)],
                                 schema=schema)
    write_table(target, table)


def read_solutions(path: str | Path) -> np.ndarray:
    """(k, W*H) int16 packed boards from a file written by `write_solutions`."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        rows = p.read_text().splitlines()
        if not rows:
            raise SolverError(f"{p}: empty solutions file (expected a header row c0,c1,...)")
        n = len(rows[0].split(","))
        vals = [list(map(int, r.split(","))) for r in rows[1:] if r.strip()]
        return np.array(vals, dtype=np.int16).reshape(-1, n)
    t = read_table(p)
    if not t.num_columns:
        return np.zeros((0, 0), dtype=np.int16)
    return np.column_stack([t.column(i).to_numpy() for i in range(t.num_columns)]).astype(
        np.int16)
