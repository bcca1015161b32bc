"""Partial boards and their score: the score of the field, the boards file the best-score
search writes, and every way a user hands e2store a board.

**Score** (docs/solver.md, *Best score*): the matched inner joins of a board, out of
2*W*H - W - H (480 on Eternity II).  A join is matched when both cells hold a piece and
the two sides show the same colour, not grey; the frame sides are grey by rule and are not
joins.  A hole (a free cell, -1) leaves its joins unmatched.  A board may also show colour
on a frame side (a piece turned the wrong way): such a side is listed as a *frame fault*;
it is not a join and does not change the score (the grey side it turned inside leaves a
join unmatched).

**Boards file** (`e2store-boards`, version 1): a Parquet (or Arrow IPC, by suffix) table,
one row per board: `c0..c{W*H-1}` (int16 packed `piece*4+r` by cell index y*W+x, -1 a
hole), then `depth`, `score`, `joins`, `mismatches`, `holes`, `seed`, `restart`, `nodes`,
`seconds`, `source`; key-value metadata `format`, `version`, `instance`, `width`,
`height`.  `append_boards` adds rows to an existing file atomically (a rerun adds to it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from e2store.errors import SolverError
from e2store.instance.model import GREY, Instance

BOARDS_FORMAT = "e2store-boards"
BOARDS_VERSION = 1
BOARD_STATS = (("depth", "int32"), ("score", "int32"), ("joins", "int32"),
               ("mismatches", "int32"), ("holes", "int32"), ("seed", "int64"),
               ("restart", "int64"), ("nodes", "int64"), ("seconds", "float64"),
               ("source", "string"))


def inner_joins(width: int, height: int) -> int:
    """The joins of a W x H board that can be matched: 2*W*H - W - H (480 on 16x16)."""
    return 2 * width * height - width - height


@dataclass
class Score:
    """What `score` finds on a board: matched joins of `joins`, the mismatched ones as
    ((x, y), side) of their west or north cell, the holes, the frame faults."""

    matched: int
    joins: int
    placed: int
    holes: list[tuple[int, int]] = field(default_factory=list)
    mismatched: list[tuple[tuple[int, int], str]] = field(default_factory=list)
    frame_faults: list[tuple[tuple[int, int], str]] = field(default_factory=list)

    @property
    def unmatched(self) -> int:
        return self.joins - self.matched

    def to_dict(self) -> dict:
        return {"score": self.matched, "joins": self.joins, "unmatched": self.unmatched,
                "placed": self.placed, "holes": len(self.holes),
                "hole_cells": [list(c) for c in self.holes],
                "mismatched": [{"cell": list(c), "side": s} for c, s in self.mismatched],
                "frame_faults": [{"cell": list(c), "side": s} for c, s in self.frame_faults]}


def board_cells(instance: Instance, board) -> np.ndarray:
    """`board` ((H, W) or (W*H,) packed placements, -1 a hole) as a checked (W*H,) int64
    array: SolverError for another size, a placement out of range, or a piece placed
    twice (naming both cells)."""
    w, h = instance.width, instance.height
    a = np.asarray(board, dtype=np.int64).reshape(-1)
    if a.size != w * h:
        raise SolverError(f"a board of {a.size} cells for the {w}x{h} board of "
                          f"{instance.name} (expected {w * h})")
    bad = (a < -1) | (a >= 4 * instance.n_pieces)
    if bad.any():
        i = int(np.argmax(bad))
        raise SolverError(f"cell ({i % w}, {i // w}): placement {int(a[i])} out of range "
                          f"(expected piece*4+r in 0..{4 * instance.n_pieces - 1}, -1 a hole)")
    placed = np.flatnonzero(a >= 0)
    pieces = a[placed] >> 2
    order = np.argsort(pieces, kind="stable")
    twice = np.flatnonzero(np.diff(pieces[order]) == 0)
    if twice.size:
        i, j = placed[order[twice[0]]], placed[order[twice[0] + 1]]
        raise SolverError(f"piece {int(a[i]) >> 2} is placed twice: on ({i % w}, {i // w}) "
                          f"and ({j % w}, {j // w})")
    return a


def score(instance: Instance, board) -> Score:
    """The score of a full or partial board (module docstring): matched inner joins, the
    mismatched ones, holes and frame faults.  Vectorised; `tests/naive_best.py` counts the
    same joins one by one."""
    w, h = instance.width, instance.height
    a = board_cells(instance, board).reshape(h, w)
    filled = a >= 0
    shown = instance.rotated_table()[np.where(filled, a, 0)]  # (h, w, 4)
    ew = filled[:, :-1] & filled[:, 1:] & (shown[:, :-1, 2] == shown[:, 1:, 0]) & (
        shown[:, :-1, 2] != GREY)
    ns = filled[:-1, :] & filled[1:, :] & (shown[:-1, :, 3] == shown[1:, :, 1]) & (
        shown[:-1, :, 3] != GREY)
    mismatched = [((int(x), int(y)), "E") for y, x in np.argwhere(
        filled[:, :-1] & filled[:, 1:] & ~ew)]
    mismatched += [((int(x), int(y)), "S") for y, x in np.argwhere(
        filled[:-1, :] & filled[1:, :] & ~ns)]
    frame = np.zeros((h, w, 4), dtype=bool)
    frame[:, 0, 0] = frame[0, :, 1] = frame[:, -1, 2] = frame[-1, :, 3] = True
    fault = filled[:, :, None] & ((shown == GREY) != frame)
    faults = [((int(x), int(y)), "WNES"[s]) for y, x, s in np.argwhere(fault)
              if frame[y, x, s]]  # colour on the frame; grey inside is a mismatched join
    return Score(int(ew.sum() + ns.sum()), inner_joins(w, h), int(filled.sum()),
                 [(int(i % w), int(i // w)) for i in np.flatnonzero(~filled.reshape(-1))],
                 sorted(mismatched, key=lambda m: (m[0][1], m[0][0], m[1])), faults)


def frame_colours(instance: Instance) -> np.ndarray:
    """The colours that run along the frame: those a border piece shows on a side next to
    its grey side (Eternity II: 5 of 22).  A join of two such sides is a frame join, which
    the best-score search never lets mismatch (nor a grey one)."""
    p = instance.pieces
    grey = p == GREY
    out = set()
    for s in range(4):
        for t in ((s + 1) % 4, (s + 3) % 4):
            out |= set(p[grey[:, s] & ~grey[:, t], t].tolist())
    return np.array(sorted(out), dtype=np.int64)


# boards files ---------------------------------------------------------------------------

@dataclass
class Boards:
    """Rows of a boards file: `cells` (k, W*H) int16, a column per `BOARD_STATS` name, and
    the file's key-value metadata (`instance`, `width`, ...) when read from one."""

    cells: np.ndarray
    stats: dict[str, np.ndarray]
    meta: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.cells.shape[0])

    def row(self, i: int) -> dict:
        return {k: (v[i].item() if hasattr(v[i], "item") else v[i])
                for k, v in self.stats.items()}


def boards_table(instance: Instance, boards: Boards):
    """The Arrow table of `boards` with the format's metadata."""
    import pyarrow as pa

    n = instance.width * instance.height
    cells = np.asarray(boards.cells, dtype=np.int16).reshape(-1, n)
    meta = {"format": BOARDS_FORMAT, "version": str(BOARDS_VERSION), "instance": instance.id,
            "width": str(instance.width), "height": str(instance.height)}
    fields = [pa.field(f"c{i}", pa.int16()) for i in range(n)]
    cols = [pa.array(cells[:, i], type=pa.int16()) for i in range(n)]
    for name, kind in BOARD_STATS:
        t = pa.string() if kind == "string" else getattr(pa, kind)()
        fields.append(pa.field(name, t))
        cols.append(pa.array(list(boards.stats[name]) if kind == "string"
                             else np.asarray(boards.stats[name]), type=t))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=meta))


def read_boards(path: str | Path, instance: Instance | None = None) -> Boards:
    """The boards of a boards file (module docstring); SolverError naming the file when it
    is not one, is of a newer version, or holds another instance's boards."""
    from e2store.files import read_table

    p = Path(path)
    try:
        t = read_table(p)
    except FileNotFoundError:
        raise
    except Exception as e:  # pyarrow's errors for a file that is no table
        raise SolverError(f"{p}: not a boards file ({str(e).splitlines()[0][:120]})") from None
    meta = {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items()}
    if meta.get("format") != BOARDS_FORMAT:
        raise SolverError(f"{p}: not a boards file (format {meta.get('format')!r}, expected "
                          f"{BOARDS_FORMAT!r}: written by `e2store solve --best -o`)")
    if not meta.get("version", "").isdigit() or int(meta["version"]) > BOARDS_VERSION:
        raise SolverError(f"{p}: boards file version {meta.get('version')!r} is newer than "
                          f"this e2store reads ({BOARDS_VERSION}); upgrade e2store")
    if instance is not None and meta.get("instance") != instance.id:
        raise SolverError(f"{p}: holds boards of instance {meta.get('instance')}, not of "
                          f"{instance.id} ({instance.name})")
    n = int(meta["width"]) * int(meta["height"])
    cells = (np.column_stack([t.column(f"c{i}").to_numpy() for i in range(n)]).astype(np.int16)
             if len(t) else np.zeros((0, n), np.int16))
    stats = {name: (np.array(t.column(name).to_pylist(), dtype=object) if kind == "string"
                    else t.column(name).to_numpy()) for name, kind in BOARD_STATS}
    return Boards(cells, stats, meta)


def make_boards(n_cells: int, cells, rows) -> Boards:
    """`Boards` of the (W*H,) boards `cells`, their stats from the dicts `rows` (a key per
    `BOARD_STATS` name)."""
    cells = list(cells)
    arr = (np.stack([np.asarray(c, dtype=np.int16).reshape(-1) for c in cells]) if cells
           else np.zeros((0, n_cells), np.int16))
    return Boards(arr, {name: np.array([r[name] for r in rows],
                                       dtype=object if kind == "string" else kind)
                        for name, kind in BOARD_STATS})


def new_boards(n_cells: int) -> Boards:
    """An empty `Boards` of boards of `n_cells` cells."""
    return Boards(np.zeros((0, n_cells), np.int16),
                  {name: np.zeros(0, dtype=object if kind == "string" else kind)
                   for name, kind in BOARD_STATS})


def concat_boards(a: Boards, b: Boards) -> Boards:
    return Boards(np.concatenate([a.cells, b.cells]),
                  {k: np.concatenate([a.stats[k], b.stats[k]]) for k in a.stats})


def write_boards(path: str | Path, instance: Instance, boards: Boards) -> None:
    """Write `boards` atomically (Parquet, or Arrow IPC by suffix)."""
    from e2store.files import write_table

    write_table(path, boards_table(instance, boards))


def append_boards(path: str | Path, instance: Instance, boards: Boards) -> Boards:
    """Add `boards` to the boards file at `path` (created when absent), atomically; returns
    every board the file then holds."""
    p = Path(path)
    old = read_boards(p, instance) if p.exists() else new_boards(instance.width
                                                                  * instance.height)
    out = concat_boards(old, boards)
    write_boards(p, instance, out)
    return out


def read_any_board(instance: Instance, source: str | Path) -> list[np.ndarray]:
    """Every board `source` holds, as checked (W*H,) cell arrays: a board URL, a boards
    file, a solutions file (Parquet, Arrow or CSV), or a text file of `x y piece r` lines
    (holes allowed, each cell at most once)."""
    from e2store.instance.url import board_from_url, is_url

    text = str(source)
    if is_url(text):
        return [board_cells(instance, board_from_url(instance, text))]
    p = Path(source)
    head = p.read_bytes()[:4] if p.is_file() else b""
    if head == b"PAR1" or head[:4] == b"ARRO" or p.suffix.lower() in (".parquet", ".arrow",
                                                                       ".feather", ".ipc"):
        from e2store.files import read_table

        try:
            meta = {k.decode(): v.decode()
                    for k, v in (read_table(p).schema.metadata or {}).items()}
        except Exception as e:
            raise SolverError(f"{p}: not a boards or solutions file "
                              f"({str(e).splitlines()[0][:120]})") from None
        if meta.get("format") == BOARDS_FORMAT:
            return [board_cells(instance, b) for b in read_boards(p, instance).cells]
        from e2store.solver.solutions import read_solutions

        return [board_cells(instance, b) for b in read_solutions(p)]
    if p.suffix.lower() == ".csv":
        from e2store.solver.solutions import read_solutions

        return [board_cells(instance, b) for b in read_solutions(p)]
    from e2store.solver.scan import read_seed_file

    cells = read_seed_file(p)
    board = np.full(instance.width * instance.height, -1, dtype=np.int64)
    for (x, y), v in cells.items():
        if not (0 <= x < instance.width and 0 <= y < instance.height):
            raise SolverError(f"{p}: cell ({x}, {y}) is off the {instance.width}x"
                              f"{instance.height} board")
        board[y * instance.width + x] = v
    try:
        return [board_cells(instance, board)]
    except SolverError as e:
        raise SolverError(f"{p}: {e}") from None
