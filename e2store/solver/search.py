"""Backtracking solver: scan orders, candidate tables, the public `solve` and a checker.

`solve(instance, scan)` fills the board cell by cell in a fixed scan order with the numba
kernel of `e2store._solver_kernels` (iterative, O(1) undo, pre-rotated candidate buckets
per cell class keyed by the colours placed neighbours impose, kept as piece bitsets and
intersected with the used-piece bitset) and reports nodes (one node = one piece placed),
solutions and times.  The kernel runs in slices
of nodes and returns to Python between slices, for progress, Ctrl-C and solution buffers.
A complete search of a board of up to 64 pieces may instead run, below its first few
cells, a kernel generated for its plan (`e2store._unrolled`, `_solve_split`): about twice
the nodes per second, the same counts and solutions.

By default the board's rotational symmetry is broken by fixing the lowest-numbered corner
piece on the north-west corner (0, 0) in its one legal rotation, so a square board's
solutions are counted once per rotation class.  A non-square board maps onto itself only
by a half turn, which swaps the NW and SE corners and the NE and SW ones: there the piece
is fixed on (0, 0) and, in a second subtree, on (W-1, 0), again one solution per class.

Every solution the kernel reports is checked by `check_solutions`, which shares no code
with the kernel.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from e2store.errors import InvalidSolutionError, SolverError
from e2store.files import atomic_write
from e2store.instance.model import GREY, Instance
from e2store.query.finals import FinalsIndex
from e2store.solver import _kernels as K
from e2store.solver import _unrolled

SCAN_ORDERS = ("rowscan", "columnscan", "diagonal", "spiral-in", "spiral-out", "quad-spiral")
DEFAULT_SLICE_NODES = 1 << 25
DEFAULT_MAX_STORED = 100_000
SOLUTIONS_FORMAT = "e2store-solutions"
SOLUTIONS_VERSION = 1
_STEP = ((-1, 0), (0, -1), (1, 0), (0, 1))  # neighbour offset of side W, N, E, S

Seed = Mapping[tuple[int, int], "int | tuple[int, int]"] | np.ndarray


# --------------------------------------------------------------------------- scan orders


def rowscan(width: int, height: int) -> np.ndarray:
    """Row by row from the north, each row west to east: (0,0), (1,0), ..., (W-1,H-1)."""
    return np.array([(x, y) for y in range(height) for x in range(width)], dtype=np.int64)


def columnscan(width: int, height: int) -> np.ndarray:
    """Column by column from the west, each column north to south."""
    return np.array([(x, y) for x in range(width) for y in range(height)], dtype=np.int64)


def diagonal(width: int, height: int) -> np.ndarray:
    """Anti-diagonals x+y = 0, 1, ... from the north-west corner, each from its western end
    (x ascending).  Every cell's west and north neighbours come before it, as in rowscan."""
    return np.array([(x, s - x) for s in range(width + height - 1)
                     for x in range(max(0, s - height + 1), min(s, width - 1) + 1)],
                    dtype=np.int64)


def _spiral(width: int, height: int) -> list[tuple[int, int]]:
    """Clockwise inward spiral of a W x H rectangle from (0,0), first leg eastwards."""
    out: list[tuple[int, int]] = []
    top, bottom, left, right = 0, height - 1, 0, width - 1
    while top <= bottom and left <= right:
        out += [(x, top) for x in range(left, right + 1)]
        out += [(right, y) for y in range(top + 1, bottom + 1)]
        if top < bottom:
            out += [(x, bottom) for x in range(right - 1, left - 1, -1)]
        if left < right:
            out += [(left, y) for y in range(bottom - 1, top, -1)]
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return out


def spiral_in(width: int, height: int) -> np.ndarray:
    """Clockwise spiral from the north-west corner inwards: the north row west to east, the
    east column down, the south row back west, the west column up, then the next ring."""
    return np.array(_spiral(width, height), dtype=np.int64).reshape(-1, 2)


def spiral_out(width: int, height: int) -> np.ndarray:
    """`spiral_in` reversed: from the centre outwards (anticlockwise), ending on (0,0)."""
    return np.ascontiguousarray(spiral_in(width, height)[::-1])


def quad_spiral(width: int, height: int) -> np.ndarray:
    """Four quadrant spirals, interleaved.

    The board is cut into four quadrants turning like a pinwheel: NW = columns
    [0, ceil(W/2)) x rows [0, floor(H/2)), NE = [ceil(W/2), W) x [0, ceil(H/2)),
    SE = [floor(W/2), W) x [ceil(H/2), H), SW = [0, floor(W/2)) x [floor(H/2), H); when W
    and H are both odd the centre cell is left over and comes last.  Each quadrant is walked
    by a clockwise inward spiral that starts on its outer corner (the board corner) and runs
    first along the board's frame: NW from (0,0) eastwards, NE from (W-1,0) southwards, SE
    from (W-1,H-1) westwards, SW from (0,H-1) northwards.  The order takes one cell of each
    quadrant in turn, NW, NE, SE, SW, skipping a quadrant once it is used up.  So the four
    corners come first, then the frame grows from all four corners at once; on a square
    board the order is invariant under a quarter turn (cell k+1 is cell k turned).
    """
    a, c = (width + 1) // 2, width // 2  # ceil, floor
    b, e = (height + 1) // 2, height // 2
    x1, y1 = width - 1, height - 1
    quads = [
        [(u, v) for u, v in _spiral(a, e)],  # NW, a x e: local axes = board axes
        [(x1 - v, u) for u, v in _spiral(b, width - a)],  # NE: local x south, y west
        [(x1 - u, y1 - v) for u, v in _spiral(width - c, height - b)],  # SE: x west, y north
        [(v, y1 - u) for u, v in _spiral(height - e, c)],  # SW: local x north, y east
    ]
    out = []
    for i in range(max(len(q) for q in quads)):
        out += [q[i] for q in quads if i < len(q)]
    if width % 2 and height % 2:
        out.append((c, e))
    return np.array(out, dtype=np.int64).reshape(-1, 2)


_BUILTIN = {
    "rowscan": rowscan,
    "columnscan": columnscan,
    "diagonal": diagonal,
    "spiral-in": spiral_in,
    "spiral-out": spiral_out,
    "quad-spiral": quad_spiral,
}


def _scan_name(text: str) -> str | None:
    name = str(text).strip().lower().replace("_", "-")
    return name if name in _BUILTIN else None


def scan_order(name_or_path: str | Path, width: int, height: int) -> np.ndarray:
    """The (W*H, 2) cells `(x, y)` of a W x H board in the given scan order.

    `name_or_path` is one of `SCAN_ORDERS` (`spiral_in` spelling accepted) or a file of
    `x y` lines (see `read_scan_file`).
    """
    if width < 1 or height < 1:
        raise SolverError(f"board {width}x{height}: width and height must be >= 1")
    name = _scan_name(str(name_or_path)) if isinstance(name_or_path, str) else None
    if name is not None:
        order = _BUILTIN[name](width, height)
        assert len(order) == width * height
        return order
    path = Path(name_or_path)
    if not path.is_file():
        raise SolverError(f"unknown scan order {str(name_or_path)!r}: expected one of "
                          f"{', '.join(SCAN_ORDERS)} or a file of `x y` lines")
    return read_scan_file(path, width, height)


def _file_error(path: str | Path, line: int | None, problem: str, expected: str) -> SolverError:
    where = f"{path}:{line}" if line is not None else str(path)
    return SolverError(f"{where}: {problem} (expected {expected})")


_INT = re.compile(r"[+-]?[0-9]+")


def _int_tokens(path: Path, lineno: int, tokens: list[str], count: int, what: str) -> list[int]:
    if len(tokens) != count or not all(_INT.fullmatch(t) for t in tokens):
        raise _file_error(path, lineno, f"bad line {' '.join(tokens)!r}", what)
    return [int(t) for t in tokens]


def _content_lines(path: Path) -> list[tuple[int, list[str]]]:
    """(1-based line number, tokens) of the lines that are neither blank nor `#` comments."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _file_error(path, None, "not a UTF-8 text file", "a text file") from None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        s = line.split("#", 1)[0].strip()
        if s:
            out.append((i, s.replace(",", " ").split()))
    return out


def read_scan_file(path: str | Path, width: int, height: int) -> np.ndarray:
    """A scan order from a text file: one cell `x y` per line (a comma may separate them),
    every cell of the W x H board exactly once; blank lines and `#` comments are ignored.
    A bad line raises `SolverError` naming the file and the line."""
    p = Path(path)
    rows = _content_lines(p)
    seen: dict[tuple[int, int], int] = {}
    for lineno, toks in rows:
        x, y = _int_tokens(p, lineno, toks, 2, "`x y`: two integers")
        if not (0 <= x < width and 0 <= y < height):
            raise _file_error(p, lineno, f"cell ({x}, {y}) is off the {width}x{height} board",
                              f"0 <= x < {width} and 0 <= y < {height}")
        if (x, y) in seen:
            raise _file_error(p, lineno, f"cell ({x}, {y}) repeated (first on line "
                              f"{seen[(x, y)]})", "every cell exactly once")
        seen[(x, y)] = lineno
    n = width * height
    if len(seen) < n:
        missing = next((x, y) for y in range(height) for x in range(width) if (x, y) not in seen)
        last = rows[-1][0] if rows else 1
        raise _file_error(p, last, f"{len(seen)} of {n} cells listed, cell {missing} missing",
                          "every cell exactly once")
    return np.array(list(seen), dtype=np.int64).reshape(-1, 2)


# --------------------------------------------------------------------------- seeds


def read_seed_file(path: str | Path) -> dict[tuple[int, int], int]:
    """A seed (partial board) from a text file: one fixed cell `x y piece r` per line
    (r = clockwise quarter turns); blank lines and `#` comments are ignored.
    Returns {(x, y): piece*4 + r}; the board checks happen in `solve`."""
    p = Path(path)
    out: dict[tuple[int, int], int] = {}
    for lineno, toks in _content_lines(p):
        x, y, piece, r = _int_tokens(p, lineno, toks, 4, "`x y piece r`: four integers")
        if piece < 0 or not 0 <= r < 4:
            raise _file_error(p, lineno, f"placement piece {piece} rotation {r}",
                              "piece >= 0 and 0 <= r < 4")
        if (x, y) in out:
            raise _file_error(p, lineno, f"cell ({x}, {y}) repeated", "each cell at most once")
        out[(x, y)] = piece * 4 + r
    return out


def _seed_cells(seed: Seed | None, width: int, height: int, n_pieces: int) -> dict[int, int]:
    """Normalise a seed to {cell index y*W+x: packed}; SolverError on a malformed one."""
    if seed is None:
        return {}
    out: dict[int, int] = {}
    if isinstance(seed, np.ndarray):
        a = np.asarray(seed)
        if a.size != width * height:
            raise SolverError(f"seed array of {a.size} cells for a {width}x{height} board "
                              f"(expected shape ({height}, {width}) or ({width * height},))")
        for i, v in enumerate(a.reshape(-1).tolist()):
            if v >= 0:
                out[i] = int(v)
    else:
        for (x, y), v in seed.items():
            if not (0 <= x < width and 0 <= y < height):
                raise SolverError(f"seed cell ({x}, {y}) is off the {width}x{height} board")
            pair = isinstance(v, tuple | list)
            packed = int(v[0]) * 4 + int(v[1]) if pair else int(v)
            if pair and not 0 <= v[1] < 4:
                raise SolverError(f"seed cell ({x}, {y}): rotation {v[1]} (expected 0..3)")
            out[y * width + x] = int(packed)
    for i, v in out.items():
        if not 0 <= v < 4 * n_pieces:
            raise SolverError(f"seed cell ({i % width}, {i // width}): placement {v} out of "
                              f"range (expected piece*4+r in 0..{4 * n_pieces - 1})")
    return out


def _frame_mask(width: int, height: int, cell: int) -> int:
    """Bit s set when side s of the cell faces the board's frame."""
    x, y = cell % width, cell // width
    m = 0
    for s, (dx, dy) in enumerate(_STEP):
        if not (0 <= x + dx < width and 0 <= y + dy < height):
            m |= 1 << s
    return m


def _fixed_problem(inst: Instance, fixed: dict[int, int]) -> str | None:
    """Why a set of fixed cells cannot be part of a solution, or None."""
    w, h = inst.width, inst.height
    pieces = [v >> 2 for v in fixed.values()]
    if len(set(pieces)) != len(pieces):
        dup = next(p for p in pieces if pieces.count(p) > 1)
        return f"piece {dup} is placed twice"
    rot = inst.rotated_table()
    for cell, v in fixed.items():
        x, y = cell % w, cell // w
        shown = rot[v]
        grey = sum(1 << s for s in range(4) if shown[s] == GREY)
        if grey != _frame_mask(w, h, cell):
            return (f"piece {v >> 2} rotation {v & 3} on cell ({x}, {y}) shows grey on "
                    f"the wrong sides")
        for s in (2, 3):  # east and south joins, each join once
            dx, dy = _STEP[s]
            nb = (y + dy) * w + (x + dx)
            if 0 <= x + dx < w and 0 <= y + dy < h and nb in fixed:
                if rot[fixed[nb], (s + 2) % 4] != shown[s]:
                    return f"cells ({x}, {y}) and ({x + dx}, {y + dy}) do not match"
    return None


def lowest_corner(inst: Instance) -> tuple[int, int]:
    """(piece, r): the lowest-numbered corner piece and its rotation on the NW corner."""
    rot = inst.rotated_table()
    for piece in range(inst.n_pieces):
        for r in range(4):
            shown = rot[piece * 4 + r]
            if shown[0] == GREY and shown[1] == GREY and shown[2] != GREY and shown[3] != GREY:
                return piece, r
    raise SolverError(f"instance {inst.name!r} has no corner piece: no symmetry break possible")


def symmetry_roots(inst: Instance) -> list[dict[int, int]]:
    """The fixed cells of each subtree of the symmetry break (see the module docstring)."""
    piece, r = lowest_corner(inst)
    roots = [{0: piece * 4 + r}]
    if inst.width != inst.height:
        roots.append({inst.width - 1: piece * 4 + (r + 1) % 4})  # NE corner: a quarter turn
    return roots


def search_setup(instance: Instance, scan: str | Path | np.ndarray, seed: Seed | None,
                 symmetry_break: bool | None,
                 ) -> tuple[np.ndarray, str, dict[int, int], bool, list[dict[int, int]]]:
    """Check a search's arguments and resolve them (shared by `solve` and
    `e2store.estimate`): (scan order, scan name, seeded cells, symmetry break, roots).
    `symmetry_break` None means yes without a seed, no with one."""
    w, h = instance.width, instance.height
    if instance.n_pieces != w * h:
        raise SolverError(f"instance {instance.name!r} has {instance.n_pieces} pieces for a "
                          f"{w}x{h} board (expected {w * h})")
    if isinstance(scan, np.ndarray):
        order = np.asarray(scan, dtype=np.int64).reshape(-1, 2)
        cells = sorted(map(tuple, order.tolist()))
        if cells != [(x, y) for x in range(w) for y in range(h)]:
            raise SolverError("scan order array is not a permutation of the board's cells")
        scan_name = "custom"
    else:
        order = scan_order(scan, w, h)
        scan_name = _scan_name(str(scan)) or str(scan)
    fixed = _seed_cells(seed, w, h, instance.n_pieces)
    problem = _fixed_problem(instance, fixed)
    if problem is not None:
        raise SolverError(f"seed: {problem}")
    if symmetry_break is None:
        symmetry_break = not fixed
    return order, scan_name, fixed, bool(symmetry_break), search_roots(
        instance, fixed, bool(symmetry_break))


def search_roots(inst: Instance, fixed: dict[int, int], symmetry_break: bool,
                 ) -> list[dict[int, int]]:
    """The fixed cells of every subtree a search walks: the seed alone, or with the
    symmetry break the seed merged with each of `symmetry_roots` it agrees with."""
    if not symmetry_break:
        return [fixed]
    roots = []
    for root in symmetry_roots(inst):
        merged = {**fixed, **root}
        conflict = any(fixed.get(c, v) != v for c, v in root.items())
        if not conflict and _fixed_problem(inst, merged) is None:
            roots.append(merged)
    return roots


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Plan:
    """Everything the kernel needs for one subtree (see `_solver_kernels` for the layout):
    per-depth rows `dep`; each bucket as records `cand` (by `bstart`) and as a piece bitset
    `bmask` with the placement of each piece `crec` and the flag `simple`; the number of
    colour ranks `k_col`; the colour ranks `col` of every placement; the fixed cells."""

    width: int
    height: int
    n_pieces: int
    fixed: dict[int, int]
    cells: np.ndarray
    dep: np.ndarray
    bstart: np.ndarray
    cand: np.ndarray
    bmask: np.ndarray
    simple: np.ndarray
    crec: np.ndarray
    k_col: int
    col: np.ndarray
    stack_size: int

    @property
    def n_depth(self) -> int:
        return int(self.cells.shape[0])

    @property
    def n_words(self) -> int:
        return max(1, (self.n_pieces + 63) // 64)


def dense_colours(inst: Instance) -> tuple[np.ndarray, int]:
    """(4n, 4) colour ranks of every placement (row `piece*4 + r`, sides W N E S) and the
    number of ranks K.  Grey is rank 0, so rank tables stay small whatever the colour ids."""
    rot = inst.rotated_table().astype(np.int64)
    values = np.unique(np.concatenate([[GREY], rot.ravel()]))
    return np.searchsorted(values, rot).astype(np.int64), len(values)


def build_plan(inst: Instance, order: np.ndarray, fixed: dict[int, int]) -> Plan:
    """Static search structure for `order` (cells (x, y)) with the `fixed` cells pre-placed.

    Each free cell is keyed on its first two neighbours (in side order W, N, E, S) that are
    placed before it, fixed cells included, and checks any others explicitly.  Its class is
    (frame sides, keyed sides); a class's buckets list, ascending, the placements with grey
    exactly on the frame sides, by the colours they show on the keyed sides.
    """
    w, h, n = inst.width, inst.height, inst.width * inst.height
    col, k_col = dense_colours(inst)
    virtual = n * 4  # index of the virtual cell's first side in `shown`
    cells = np.array([y * w + x for x, y in order if y * w + x not in fixed], dtype=np.int64)
    placed_before = set(fixed)
    nd = len(cells)
    dep = np.zeros((nd, K.DEP), dtype=np.int64)
    grey_mask = ((col == 0) * (1 << np.arange(4))).sum(axis=1)
    classes: dict[tuple[int, int, int], int] = {}
    class_max: dict[tuple[int, int, int], int] = {}
    counts: list[np.ndarray] = []
    parts: list[np.ndarray] = []
    seg = 0
    for d, cell in enumerate(cells.tolist()):
        x, y = cell % w, cell // w
        touching = []  # (own side, index into `shown` of the colour that side must match)
        for s, (dx, dy) in enumerate(_STEP):
            nx, ny = x + dx, y + dy
            if 0 <= nx < w and 0 <= ny < h and ny * w + nx in placed_before:
                touching.append((s, (ny * w + nx) * 4 + (s + 2) % 4))
        keyed = touching[:2] + [(-1, virtual)] * (2 - len(touching[:2]))
        (k1, i1), (k2, i2) = keyed
        extra = touching[2:]
        o3, i3 = extra[0] if extra else (-1, virtual)
        o4, i4 = extra[-1] if extra else (-1, virtual)
        frame = _frame_mask(w, h, cell)
        key = (frame, k1, k2)
        if key not in classes:
            sel = np.flatnonzero(grey_mask == frame)  # ascending packed placements
            bucket = np.zeros(len(sel), dtype=np.int64)
            if k1 >= 0:
                bucket += col[sel, k1] * k_col
            if k2 >= 0:
                bucket += col[sel, k2]
            parts.append(sel[np.argsort(bucket, kind="stable")])
            c = np.bincount(bucket, minlength=k_col * k_col)
            counts.append(c)
            classes[key] = len(classes)
            class_max[key] = int(c.max()) if len(c) else 0
        dep[d, [K.D_CELL, K.D_I1, K.D_I2, K.D_BASE, K.D_O3, K.D_I3, K.D_O4, K.D_I4, K.D_SEG]] = (
            cell, i1, i2, classes[key] * k_col * k_col, o3, i3, o4, i4, seg)
        seg += class_max[key]
        placed_before.add(cell)
    cnt = np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)
    bstart = np.zeros(len(cnt) + 1, dtype=np.int64)
    np.cumsum(cnt, out=bstart[1:])
    packed = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
    cand = np.zeros((len(packed), K.CAND), dtype=np.int64)
    cand[:, 0] = packed
    cand[:, 1] = packed >> 2
    cand[:, 2:6] = col[packed]
    # the same buckets as piece bitsets: bucket of every record, then bit p of word p >> 6
    n_b, n_words = len(cnt), max(1, (inst.n_pieces + 63) // 64)
    bucket_of = np.repeat(np.arange(n_b), cnt)
    piece = packed >> 2
    words = np.zeros((n_b, n_words), dtype=np.uint64)
    np.bitwise_or.at(words, (bucket_of, piece >> 6),
                     np.left_shift(np.uint64(1), (piece & 63).astype(np.uint64)))
    # records are ascending inside a bucket, so a piece's rotations in one bucket are adjacent
    twice = (bucket_of[1:] == bucket_of[:-1]) & (piece[1:] == piece[:-1])
    simple = np.ones(n_b, dtype=np.uint8)
    simple[bucket_of[1:][twice]] = 0
    crec = np.full(n_b * inst.n_pieces, -1, dtype=np.int32)
    crec[bucket_of * inst.n_pieces + piece] = packed  # simple buckets: one per piece
    return Plan(w, h, inst.n_pieces, dict(fixed), cells, dep.ravel(), bstart, cand.ravel(),
                words.ravel(), simple, crec, k_col, col, seg + 1)


# --------------------------------------------------------------------------- checker


def board_dtype(n_pieces: int) -> type:
    """int16 for packed placements when they fit (every published board), else int32."""
    return np.int16 if 4 * n_pieces <= np.iinfo(np.int16).max else np.int32


def _board_problem(inst: Instance, boards: np.ndarray) -> tuple[int, str] | None:
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
    problem = _board_problem(inst, boards)
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
    problem = _board_problem(inst, a.reshape(1, -1))
    if problem is not None:
        raise InvalidSolutionError(f"not a solution of {inst.name!r}: {problem[1]}")


# --------------------------------------------------------------------------- solve


@dataclass
class SolveResult:
    """What a search found and what it cost.  `boards` holds up to `max_stored` solutions,
    (k, W*H) packed `piece*4+r` with cell index y*W+x, in the order they were found."""

    instance: str
    width: int
    height: int
    scan: str
    symmetry_break: bool
    seeded_cells: int
    first_only: bool
    nodes: int = 0
    solutions: int = 0
    seconds: float = 0.0
    first_nodes: int | None = None
    first_seconds: float | None = None
    complete: bool = False
    interrupted: bool = False
    boards: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int16))
    cuts: list[int] | None = None  # with finals: branches cut by each region
    finals_regions: list[tuple[int, int]] | None = None
    finals_hamming: int | None = None

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    @property
    def stored(self) -> int:
        return int(self.boards.shape[0])

    def to_dict(self) -> dict:
        """JSON-ready report (the first solution as a list of packed cells, or None)."""
        return {
            "instance": self.instance, "width": self.width, "height": self.height,
            "scan": self.scan, "symmetry_break": self.symmetry_break,
            "seeded_cells": self.seeded_cells, "first_only": self.first_only,
            "complete": self.complete, "interrupted": self.interrupted,
            "solutions": self.solutions, "stored": self.stored,
            "nodes": self.nodes, "seconds": round(self.seconds, 6),
            "nodes_per_second": round(self.nodes_per_second, 1),
            "first_nodes": self.first_nodes,
            "first_seconds": None if self.first_seconds is None else round(self.first_seconds, 6),
            "first_solution": self.boards[0].tolist() if self.stored else None,
            **({} if self.cuts is None else {
                "cuts": list(self.cuts), "finals_hamming": self.finals_hamming,
                "finals_regions": [list(c) for c in self.finals_regions or []]}),
        }


class _Search:
    """One subtree: the plan plus the kernel's state arrays (resumable)."""

    def __init__(self, plan: Plan, buffer_rows: int, finals: FinalsIndex | None = None):
        n = plan.width * plan.height
        nd = max(plan.n_depth, 1)
        self.plan = plan
        self.state = np.array([0, K.FRESH, 0, 0, -1], dtype=np.int64)
        self.shown = np.zeros((n + 1) * 4, dtype=np.int64)
        self.placed = np.full(n, -1, dtype=np.int64)
        self.used = np.zeros(plan.n_words, dtype=np.uint64)
        for cell, v in plan.fixed.items():
            self.placed[cell] = v
            self.shown[cell * 4:cell * 4 + 4] = plan.col[v]
            self.used[(v >> 2) >> 6] |= np.uint64(1) << np.uint64((v >> 2) & 63)
        self.mode = np.zeros(nd, dtype=np.uint8)
        self.keys, self.pos, self.end, self.pcs = (
            np.zeros(nd, dtype=np.int64) for _ in range(4))
        self.avail = np.zeros(nd * plan.n_words, dtype=np.uint64)
        self.stack = np.zeros(plan.stack_size, dtype=np.int64)
        self.sols = np.zeros((buffer_rows, n), dtype=board_dtype(plan.n_pieces))
        self.col = np.ascontiguousarray(plan.col.ravel())
        self.fin = () if finals is None else finals_state(finals, plan)
        self.kernel = K.search_kernel(plan.n_words, finals is not None)

    def run(self, node_limit: int, first_only: bool) -> np.ndarray:
        """Go on until node_limit (absolute), a first solution, a full buffer or the end;
        returns the solutions found in this call."""
        if self.plan.n_depth == 0:  # every cell fixed: the seed is the one board
            if self.state[K.STATUS] != K.DONE:
                self.state[K.STATUS] = K.DONE
                self.state[K.SOLUTIONS] = 1
                self.state[K.FIRST_NODES] = 0
                return self.placed[None, :].astype(self.sols.dtype)
            return self.sols[:0]
        p = self.plan
        k = self.kernel(self.state, p.dep, p.bstart, p.cand, p.k_col, p.bmask, p.simple,
                        p.crec, self.col, p.n_pieces, self.shown, self.placed, self.used,
                        self.mode, self.keys, self.avail, self.pos, self.end, self.stack,
                        self.pcs, node_limit, first_only, self.sols, *self.fin)
        return self.sols[:k]

    @property
    def done(self) -> bool:
        return int(self.state[K.STATUS]) == K.DONE

    def warm_up(self) -> None:
        """Compile (or load from the numba cache) the kernel before any clock starts: a call
        on a finished state returns at once."""
        if self.plan.n_depth:
            finished = np.array([0, K.DONE, 0, 0, -1], dtype=np.int64)
            p = self.plan
            self.kernel(finished, p.dep, p.bstart, p.cand, p.k_col, p.bmask, p.simple, p.crec,
                        self.col, p.n_pieces, self.shown, self.placed, self.used, self.mode,
                        self.keys, self.avail, self.pos, self.end, self.stack, self.pcs, 0,
                        False, self.sols, *self.fin)

    @property
    def cuts(self) -> np.ndarray:
        """Branches cut by each finals region so far (empty without finals)."""
        return self.fin[-1] if self.fin else np.zeros(0, dtype=np.int64)


class _Unrolled:
    """Complete searches of subtrees that all fix the same cells (`plan.fixed`'s keys; its
    values are ignored), by the kernel generated for that plan (`e2store._unrolled`).  Not
    resumable: each call searches one subtree to the end."""

    def __init__(self, instance: Instance, plan: Plan):
        self.instance, self.plan = instance, plan
        self.fn = _unrolled.kernel(plan)
        self.colk = _unrolled.colour_table(plan)
        self.records = _unrolled.record_tables(plan)
        _unrolled.warm_up(self.fn, plan, self.colk, self.records)
        n = plan.width * plan.height
        self.cells = np.array(sorted(plan.fixed), dtype=np.int64)
        self.shown = np.zeros((n + 1) * 4, dtype=np.uint64)  # fixed cells' colours
        self.placed = np.full(n, -1, dtype=np.int64)
        self.found = np.zeros((0, n), dtype=board_dtype(plan.n_pieces))
        self.n_out = np.zeros(1, dtype=np.int64)

    def solve(self, board: np.ndarray, max_stored: int) -> tuple[int, int, np.ndarray | None]:
        """(solutions, nodes, up to `max_stored` checked solution boards or None) of the
        subtree under `board`'s fixed cells (assumed consistent)."""
        if len(self.found) < max_stored:  # one buffer, grown as needed, reused
            self.found = np.zeros((max_stored, self.placed.shape[0]), dtype=self.found.dtype)
        vals = np.asarray(board)[self.cells].astype(np.int64)
        # the kernel reads only the fixed cells' colours and writes every free cell of
        # `placed` before it copies a solution, so no reset is needed
        self.placed[self.cells] = vals
        self.shown.reshape(-1, 4)[self.cells] = self.plan.col[vals]
        used = 0
        for p in (vals >> 2).tolist():
            used |= 1 << p
        self.n_out[0] = 0
        p = self.plan
        nodes, sols = self.fn(p.bmask, p.crec, self.colk, p.bstart, p.cand, *self.records,
                              self.shown, self.placed, self.found[:max_stored], self.n_out,
                              np.uint64(used))
        boards = None
        if self.n_out[0]:
            boards = self.found[:self.n_out[0]].copy()
            check_solutions(self.instance, boards)
        return int(sols), int(nodes), boards


def finals_state(finals: FinalsIndex, plan: Plan) -> tuple[np.ndarray, ...]:
    """The kernel's finals arrays for one subtree: masks, and per region the alive words
    after the fixed cells as depth 0's level, room for one level per depth after it."""
    if (finals.width, finals.height, finals.n_pieces) != (plan.width, plan.height,
                                                           plan.n_pieces):
        raise SolverError(f"finals index for a {finals.width}x{finals.height} board of "
                          f"{finals.n_pieces} pieces, instance is {plan.width}x{plan.height}")
    n_reg, nd = len(finals.regions), plan.n_depth
    flev = np.zeros((nd + 1, n_reg, 2), dtype=np.int64)  # kernel layout: see FINALS
    idx_parts, val_parts = [], []
    base = 0
    for g in range(n_reg):
        alive = finals.alive_after(g, plan.fixed)
        nz = np.flatnonzero(alive)
        cap = (nd + 1) * len(nz) + 1  # levels only shrink; +1 for the branch-free write
        idx = np.zeros(cap, dtype=np.int64)
        val = np.zeros(cap, dtype=np.uint64)
        idx[:len(nz)], val[:len(nz)] = nz, alive[nz]
        flev[0, g] = (base, base + len(nz))
        idx_parts.append(idx)
        val_parts.append(val)
        base += cap
    return (np.ascontiguousarray(finals.mid.T).ravel(), finals.masks, np.concatenate(idx_parts),
            np.concatenate(val_parts), flev.ravel(), np.zeros(n_reg, dtype=np.int64))


def progress_interval() -> float:
    """Seconds between progress updates: live on a terminal, a periodic line in a log."""
    return 0.5 if sys.stderr.isatty() else 30.0


def solve(
    instance: Instance,
    scan: str | Path | np.ndarray = "rowscan",
    *,
    first: bool = False,
    symmetry_break: bool | None = None,
    seed: Seed | None = None,
    max_stored: int = DEFAULT_MAX_STORED,
    node_limit: int | None = None,
    slice_nodes: int = DEFAULT_SLICE_NODES,
    progress: bool = False,
    stop_on_interrupt: bool = False,
    finals: FinalsIndex | None = None,
    kernel: str = "auto",
) -> SolveResult:
    """Search `instance` depth-first in the scan order `scan` and report what was found.

    `scan`: a name of `SCAN_ORDERS`, a scan-order file, or an (W*H, 2) array of cells.
    `first`: stop at the first solution.  `symmetry_break`: fix the lowest corner piece
    (module docstring); None means yes without a seed, no with one.  `seed`: cells the
    search must respect, {(x, y): piece*4+r or (piece, r)} or an (H, W) / (W*H,) array with
    -1 for free cells.  At most `max_stored` solutions are kept in `boards`, all are
    counted and checked.  `node_limit` stops the search early (`complete` is then False).
    The kernel runs `slice_nodes` nodes at a time; between slices a tqdm bar is updated
    (with `progress`) and, with `stop_on_interrupt`, Ctrl-C ends the search cleanly
    (`interrupted` True) instead of raising KeyboardInterrupt.  `finals`: a
    `e2store.finals.FinalsIndex` (`load_finals`); the search then cuts every branch that
    leaves a region without a compatible corolle and reports `cuts` per region (same
    solutions, fewer nodes).  `kernel` ("auto", "generic" or "unrolled", see
    `e2store._unrolled.use_unrolled`): a complete search (no `first`, `node_limit` or
    `finals`) may run the kernel generated for its plan on subtrees (`_solve_split`); the
    counts, boards and `first_nodes` are the same, `first_seconds` is taken when the
    subtree holding the first solution ends.
    """
    w, h = instance.width, instance.height
    order, scan_name, fixed_seed, symmetry_break, roots = search_setup(
        instance, scan, seed, symmetry_break)
    result = SolveResult(instance.id, w, h, scan_name, bool(symmetry_break), len(fixed_seed),
                         first)
    limit = node_limit if node_limit is not None else np.iinfo(np.int64).max
    slice_nodes = max(1, int(slice_nodes))
    buffer_rows = max(1, min(4096, max_stored if max_stored > 0 else 1))
    kept: list[np.ndarray] = []
    n_kept = 0
    plans = [build_plan(instance, order, root) for root in roots]
    _unrolled.check_choice(kernel)
    if (not first and node_limit is None and finals is None and plans
            and all(_unrolled.use_unrolled(kernel, p) and p.n_depth >= 2 for p in plans)):
        return _solve_split(instance, order, plans, result, max_stored, progress,
                            stop_on_interrupt)
    searches = [_Search(plan, buffer_rows, finals) for plan in plans]
    for search in searches:
        search.warm_up()
    bar = tqdm(desc=f"solve {instance.name}", unit="node", unit_scale=True, disable=not progress,
               delay=1.0, leave=False, mininterval=progress_interval())
    done_nodes = 0  # nodes of finished subtrees
    t0 = time.perf_counter()
    try:
        for search in searches:
            while not search.done:
                budget = min(limit - done_nodes, int(search.state[K.NODES]) + slice_nodes)
                if budget <= int(search.state[K.NODES]):
                    break
                before = int(search.state[K.NODES])
                found = search.run(budget, first)
                now = time.perf_counter()
                if len(found):
                    check_solutions(instance, found)
                    if result.first_seconds is None:
                        result.first_seconds = now - t0
                        result.first_nodes = done_nodes + int(search.state[K.FIRST_NODES])
                    take = min(len(found), max_stored - n_kept)
                    if take > 0:
                        kept.append(found[:take].copy())
                        n_kept += take
                bar.update(int(search.state[K.NODES]) - before)
                bar.set_postfix(solutions=result.solutions + int(search.state[K.SOLUTIONS]),
                                refresh=False)
                if first and search.state[K.SOLUTIONS] > 0:
                    break
            done_nodes += int(search.state[K.NODES])
            result.solutions += int(search.state[K.SOLUTIONS])
            if (first and result.solutions) or done_nodes >= limit:
                break
        result.complete = all(s.done for s in searches) or bool(first and result.solutions)
    except KeyboardInterrupt:
        if not stop_on_interrupt:
            raise
        result.interrupted = True
        done_nodes = sum(int(s.state[K.NODES]) for s in searches)
        result.solutions = sum(int(s.state[K.SOLUTIONS]) for s in searches)
    finally:
        bar.close()
    result.seconds = time.perf_counter() - t0
    if finals is not None:
        result.cuts = [int(c) for c in sum((s.cuts for s in searches),
                                           np.zeros(len(finals.regions), dtype=np.int64))]
        result.finals_regions = finals.centres
        result.finals_hamming = finals.hamming
    result.nodes = done_nodes
    result.boards = (np.concatenate(kept) if kept
                     else np.zeros((0, w * h), dtype=board_dtype(instance.n_pieces)))
    return result


SPLIT_PREFIXES = 256  # `_solve_split`: subtrees wanted below the top of the search


def _top_order(plan: Plan, k: int) -> np.ndarray:
    """(x, y) of the plan's fixed cells and its first k free cells: the top of the search."""
    w = plan.width
    return np.array([(c % w, c // w) for c in list(plan.fixed) + plan.cells[:k].tolist()],
                    dtype=np.int64).reshape(-1, 2)


def _split_depth(instance: Instance, plan: Plan) -> int:
    """The first depth with at least `SPLIT_PREFIXES` partial boards (at most the last
    depth but one): enough subtrees for progress and Ctrl-C, few enough that their calls
    cost nothing.  Counted by the generic kernel on the truncated plans (cheap: the
    prefixes are few)."""
    for k in range(1, plan.n_depth - 1):
        search = _Search(build_plan(instance, _top_order(plan, k), plan.fixed), 4096)
        count = 0
        while not search.done and count < SPLIT_PREFIXES:
            count += len(search.run(np.iinfo(np.int64).max, False))
        if count >= SPLIT_PREFIXES:
            return k
    return max(1, plan.n_depth - 1)


def _solve_split(instance: Instance, order: np.ndarray, plans: list[Plan],
                 result: SolveResult, max_stored: int, progress: bool,
                 stop_on_interrupt: bool) -> SolveResult:
    """A complete search by subtrees: the generic kernel walks the first K free cells of
    each root's plan and stops at every partial board of depth K; the kernel generated for
    the rest (`_Unrolled`) searches its subtree to the end.  Nodes add up as in one search;
    the subtree holding the first solution is searched again by the generic kernel up to
    that solution, so `first_nodes` is exact too."""
    w, h = instance.width, instance.height
    kept: list[np.ndarray] = []
    n_kept = 0
    done_nodes = 0  # nodes of the finished top walks and subtrees
    bar = tqdm(desc=f"solve {instance.name}", unit="node", unit_scale=True, disable=not progress,
               delay=1.0, leave=False, mininterval=progress_interval())
    work = []
    for plan in plans:
        k = _split_depth(instance, plan)
        top_order = _top_order(plan, k)
        top = _Search(build_plan(instance, top_order, plan.fixed), 1)
        top.warm_up()
        top_cells = (top_order[:, 1] * w + top_order[:, 0]).tolist()
        sub = _Unrolled(instance, build_plan(instance, order, {c: 0 for c in top_cells}))
        work.append((top, sub))
    t0 = time.perf_counter()
    top_done = 0  # the current root's subtree nodes so far
    top = None  # the current root's top walk (None between roots)
    try:
        for top, sub in work:
            top_done = 0
            while not top.done:
                prefix = top.run(np.iinfo(np.int64).max, False)
                if not len(prefix):
                    continue
                sols, nodes, boards = sub.solve(prefix[0], max(0, max_stored - n_kept))
                if sols and result.first_nodes is None:
                    result.first_seconds = time.perf_counter() - t0
                    seeded = _Search(replace(sub.plan, fixed={
                        int(c): int(prefix[0][c]) for c in sub.cells}), 1)
                    while not seeded.done and not seeded.state[K.SOLUTIONS]:
                        seeded.run(np.iinfo(np.int64).max, True)
                    result.first_nodes = (done_nodes + int(top.state[K.NODES]) + top_done
                                          + int(seeded.state[K.FIRST_NODES]))
                if boards is not None:
                    kept.append(boards)
                    n_kept += len(boards)
                top_done += nodes
                result.solutions += sols
                bar.update(done_nodes + int(top.state[K.NODES]) + top_done - bar.n)
                bar.set_postfix(solutions=result.solutions, refresh=False)
            done_nodes += int(top.state[K.NODES]) + top_done
            top = None
        result.complete = True
    except KeyboardInterrupt:
        if not stop_on_interrupt:
            raise
        result.interrupted = True
        if top is not None:
            done_nodes += int(top.state[K.NODES]) + top_done
    finally:
        bar.close()
    result.seconds = time.perf_counter() - t0
    result.nodes = done_nodes
    result.boards = (np.concatenate(kept) if kept
                     else np.zeros((0, w * h), dtype=board_dtype(instance.n_pieces)))
    return result


# --------------------------------------------------------------------------- solution files


def write_solutions(path: str | Path, boards: np.ndarray, instance: Instance | None = None,
                    scan: str | None = None) -> None:
    """Write (k, W*H) packed boards atomically, one row per solution, columns `c0..` (cell
    index y*W+x).  A `.csv` suffix writes CSV with a header row; anything else Parquet
    (zstd, int16 columns, key-value metadata: format, version, instance, width, height)."""
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
    import pyarrow.parquet as pq

    meta = {"format": SOLUTIONS_FORMAT, "version": str(SOLUTIONS_VERSION)}
    if instance is not None:
        meta.update(instance=instance.id, width=str(instance.width),
                    height=str(instance.height))
    if scan is not None:
        meta["scan"] = str(scan)
    schema = pa.schema([pa.field(c, pa.int16()) for c in names], metadata=meta)
    table = pa.Table.from_arrays([pa.array(b[:, i], type=pa.int16()) for i in range(n)],
                                 schema=schema)
    atomic_write(target, lambda fh: pq.write_table(table, fh, compression="zstd"))


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
    import pyarrow.parquet as pq

    t = pq.read_table(p)
    if not t.num_columns:
        return np.zeros((0, 0), dtype=np.int16)
    return np.column_stack([t.column(i).to_numpy() for i in range(t.num_columns)]).astype(
        np.int16)
