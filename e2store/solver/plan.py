"""What a search needs before it runs: seeds checked against the board, the symmetry
break (roots), and the `Plan` (per depth: cell, neighbours, candidate buckets) the
kernels walk."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from e2store.errors import SolverError
from e2store.instance.classes import DistinctPieces, rotation_period
from e2store.instance.classes import lowest_corner as lowest_corner  # declared there
from e2store.instance.classes import symmetry_roots as symmetry_roots  # declared there
from e2store.instance.model import GREY, Instance
from e2store.instance.model import board_dtype as board_dtype  # declared there
from e2store.solver import _kernels as K
from e2store.solver.scan import scan_name_of, scan_order
from e2store.zones.geometry import SIDE_STEP

Seed = Mapping[tuple[int, int], "int | tuple[int, int]"] | np.ndarray


def seed_cells(seed: Seed | None, width: int, height: int, n_pieces: int) -> dict[int, int]:
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
            if isinstance(v, tuple | list):
                packed = int(v[0]) * 4 + int(v[1])
                if not 0 <= v[1] < 4:
                    raise SolverError(f"seed cell ({x}, {y}): rotation {v[1]} (expected 0..3)")
            else:
                packed = int(v)
            out[y * width + x] = int(packed)
    for i, v in out.items():
        if not 0 <= v < 4 * n_pieces:
            raise SolverError(f"seed cell ({i % width}, {i // width}): placement {v} out of "
                              f"range (expected piece*4+r in 0..{4 * n_pieces - 1})")
    return out


def frame_mask(width: int, height: int, cell: int) -> int:
    """Bit s set when side s of the cell faces the board's frame."""
    x, y = cell % width, cell // width
    m = 0
    for s, (dx, dy) in enumerate(SIDE_STEP):
        if not (0 <= x + dx < width and 0 <= y + dy < height):
            m |= 1 << s
    return m


def grey_masks(rotated: np.ndarray) -> np.ndarray:
    """Per placement (a row of `Instance.rotated_table()`), bit s set when it shows grey on
    side s.  The frame test, declared once: a placement fits a cell when its grey mask is
    the cell's `frame_mask` (grey faces the frame, and only the frame)."""
    return ((np.asarray(rotated) == GREY) * (1 << np.arange(4))).sum(axis=1).astype(np.int64)


def fixed_problem(inst: Instance, fixed: dict[int, int]) -> str | None:
    """Why a set of fixed cells cannot be part of a solution, or None."""
    w, h = inst.width, inst.height
    pieces = [v >> 2 for v in fixed.values()]
    if len(set(pieces)) != len(pieces):
        dup = next(p for p in pieces if pieces.count(p) > 1)
        return f"piece {dup} is placed twice"
    rot = inst.rotated_table()
    greys = grey_masks(rot)
    for cell, v in fixed.items():
        x, y = cell % w, cell // w
        shown = rot[v]
        if greys[v] != frame_mask(w, h, cell):
            return (f"piece {v >> 2} rotation {v & 3} on cell ({x}, {y}) shows grey on "
                    f"the wrong sides")
        for s in (2, 3):  # east and south joins, each join once
            dx, dy = SIDE_STEP[s]
            nb = (y + dy) * w + (x + dx)
            if 0 <= x + dx < w and 0 <= y + dy < h and nb in fixed:
                if rot[fixed[nb], (s + 2) % 4] != shown[s]:
                    return f"cells ({x}, {y}) and ({x + dx}, {y + dy}) do not match"
    return None


def search_setup(instance: Instance, scan: str | Path | np.ndarray, seed: Seed | None,
                 symmetry_break: bool | None, distinct: bool = False,
                 ) -> tuple[np.ndarray, str, dict[int, int], bool, list[dict[int, int]]]:
    """Check a search's arguments and resolve them (shared by `solve` and
    `e2store.solver.estimate`): (scan order, scan name, seeded cells, symmetry break, roots).
    `symmetry_break` None means yes without a seed, no with one.  With `distinct` the
    seeded pieces are replaced by the lowest copies of their classes (`lowest_copies`)."""
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
        scan_name = scan_name_of(str(scan)) or str(scan)
    fixed = seed_cells(seed, w, h, instance.n_pieces)
    problem = fixed_problem(instance, fixed)
    if problem is not None:
        raise SolverError(f"seed: {problem}")
    if symmetry_break is None:
        symmetry_break = not fixed
    if distinct:
        if fixed and symmetry_break:
            raise SolverError("a distinct search breaks the board's symmetry only without a "
                              "seed (give --no-symmetry-break with --fixed)")
        fixed = lowest_copies(instance, fixed)
    return order, scan_name, fixed, bool(symmetry_break), search_roots(
        instance, fixed, bool(symmetry_break), distinct)


def lowest_copies(inst: Instance, fixed: dict[int, int]) -> dict[int, int]:
    """`fixed` with each class's placed pieces replaced by its lowest copies (in cell order),
    turned to show the same colours: the same distinct layout, in the form a distinct search
    needs (the copies of a class placed lowest first)."""
    cells = sorted(fixed)
    row = DistinctPieces.of(inst).canonical(np.array([[fixed[c] for c in cells]],
                                                     dtype=np.int64).reshape(1, len(cells)))
    return dict(zip(cells, row[0].tolist(), strict=True))


def search_roots(inst: Instance, fixed: dict[int, int], symmetry_break: bool,
                 distinct: bool = False) -> list[dict[int, int]]:
    """The fixed cells of every subtree a search walks: the seed alone, or with the
    symmetry break the seed merged with each of `symmetry_roots` it agrees with."""
    if not symmetry_break:
        return [fixed]
    roots = []
    for root in symmetry_roots(inst, distinct):
        merged = {**fixed, **root}
        conflict = any(fixed.get(c, v) != v for c, v in root.items())
        if not conflict and fixed_problem(inst, merged) is None:
            roots.append(merged)
    return roots


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
    distinct: bool = False
    copies: DistinctPieces | None = None  # a distinct plan's classes and copy ranks

    def distinct_args(self) -> tuple[np.ndarray, ...]:
        """The generic kernel's trailing arrays of a distinct search: per piece, the word
        and the bit of its class's next copy (word 0, no bit for the last); empty otherwise."""
        if self.copies is None:
            return ()
        nxt = self.copies.nxt
        has = nxt >= 0
        at = np.where(has, nxt, 0)
        bits = np.left_shift(np.uint64(1), (at & 63).astype(np.uint64))
        return (at >> 6).astype(np.int64), np.where(has, bits, np.uint64(0)).astype(np.uint64)

    def toggles(self) -> np.ndarray:
        """Per piece, for the generated kernel of a distinct search (one word): its own bit
        and its next copy's, the bits that change when it is placed."""
        assert self.copies is not None and self.n_words == 1
        _, nxt_bit = self.distinct_args()
        return np.left_shift(np.uint64(1), np.arange(self.n_pieces, dtype=np.uint64)) | nxt_bit

    def used_words(self, pieces) -> np.ndarray:
        """The kernel's `used` words when `pieces` are placed: their bits, and in a distinct
        search also every copy after the first free one of each class (a copy becomes free
        when the one before it is placed).  SolverError when a class's placed copies are not
        its lowest ones (`lowest_copies`)."""
        placed = np.unique(np.asarray(list(pieces), dtype=np.int64))
        marked = placed
        if self.copies is not None:
            cls, rank = self.copies.cls, self.copies.index
            count = np.bincount(cls[placed], minlength=self.n_pieces)  # placed per class
            late = placed[rank[placed] >= count[cls[placed]]]
            if len(late):
                raise SolverError(f"piece {late[0]} is placed but a lower copy of its class "
                                  f"is free (a distinct search places the lowest first)")
            marked = np.union1d(placed, np.flatnonzero(rank > count[cls]))
        used = np.zeros(self.n_words, dtype=np.uint64)
        np.bitwise_or.at(used, marked >> 6, np.left_shift(np.uint64(1),
                                                          (marked & 63).astype(np.uint64)))
        return used
        assert self.nxt is not None
        heads = np.setdiff1d(np.arange(self.n_pieces), self.nxt[self.nxt >= 0])
        for p in heads.tolist():
            free = False
            while p >= 0:
                if p in placed and free:
                    raise SolverError(f"piece {p} is placed but a lower copy of its class "
                                      f"is free (a distinct search places the lowest first)")
                if p not in placed:
                    if free:
                        used[p >> 6] |= np.uint64(1) << np.uint64(p & 63)
                    free = True
                p = int(self.nxt[p])
        return used

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


def build_plan(inst: Instance, order: np.ndarray, fixed: dict[int, int],
               distinct: bool = False) -> Plan:
    """Static search structure for `order` (cells (x, y)) with the `fixed` cells pre-placed.

    With `distinct`, a search over distinct layouts (`e2store.instance.classes`): the
    buckets keep one rotation of each look of a symmetric piece (r below its period), and
    the plan carries each piece's next copy, which the kernels free when it is placed.

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
    grey_mask = grey_masks(inst.rotated_table())
    looks = np.ones(len(col), dtype=bool)
    if distinct:  # placement p*4+r: r below the piece's period
        looks = np.arange(len(col)) % 4 < np.repeat(rotation_period(inst.pieces), 4)
    classes: dict[tuple[int, int, int], int] = {}
    class_max: dict[tuple[int, int, int], int] = {}
    counts: list[np.ndarray] = []
    parts: list[np.ndarray] = []
    seg = 0
    for d, cell in enumerate(cells.tolist()):
        x, y = cell % w, cell // w
        touching = []  # (own side, index into `shown` of the colour that side must match)
        for s, (dx, dy) in enumerate(SIDE_STEP):
            nx, ny = x + dx, y + dy
            if 0 <= nx < w and 0 <= ny < h and ny * w + nx in placed_before:
                touching.append((s, (ny * w + nx) * 4 + (s + 2) % 4))
        keyed = touching[:2] + [(-1, virtual)] * (2 - len(touching[:2]))
        (k1, i1), (k2, i2) = keyed
        extra = touching[2:]
        o3, i3 = extra[0] if extra else (-1, virtual)
        o4, i4 = extra[-1] if extra else (-1, virtual)
        frame = frame_mask(w, h, cell)
        key = (frame, k1, k2)
        if key not in classes:
            sel = np.flatnonzero((grey_mask == frame) & looks)  # ascending placements
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
                words.ravel(), simple, crec, k_col, col, seg + 1, bool(distinct),
                DistinctPieces.of(inst) if distinct else None)
