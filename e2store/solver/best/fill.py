"""Filling the holes of a partial board (docs/solver.md, *Best score*): the leftover pieces
placed in the free cells to maximise matched joins, so every result of the best-score
search has a full-board score.

1. **Exact** when there are at most `EXACT_HOLES` holes: a branch-and-bound search over
   the holes (each hole given an unused leftover piece in a rotation that shows grey
   exactly on its frame sides; any rotation when no leftover fits there), bounded by the
   joins still open; it finds the best filling of the holes with the rest of the board
   fixed.
2. **Greedy** otherwise: hole by hole (most placed neighbours first), the piece and
   rotation that match most joins.
3. **Local improvement**: swaps of two pieces of the same kind (corner, border, inner) and
   turns of inner pieces, among the cells touching a mismatched join and their partners,
   kept when the score rises, until none does (or `max_rounds`).

A filling never lowers a score: pieces only add joins, and a swap or turn is kept only
when it raises the score.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from e2store.boards.table import board_cells, score
from e2store.instance.model import GREY, Instance
from e2store.solver.plan import frame_mask, grey_masks
from e2store.zones.geometry import SIDE_STEP

EXACT_HOLES = 7


@dataclass
class Filled:
    """A filled board, its score, the partial board's score, and what filled it."""

    board: np.ndarray
    score: int
    before: int
    holes: int
    exact: bool
    swaps: int
    seconds: float


class _Board:
    """A board's cells and colour lookups for quick join counting."""

    def __init__(self, instance: Instance, cells: np.ndarray):
        self.inst = instance
        self.w, self.h = instance.width, instance.height
        self.rot = instance.rotated_table().astype(np.int64)
        self.cells = cells.astype(np.int64).copy()
        self.nb = []
        for c in range(self.w * self.h):
            x, y = c % self.w, c // self.w
            self.nb.append([(s, (y + dy) * self.w + x + dx) for s, (dx, dy) in enumerate(SIDE_STEP)
                            if 0 <= x + dx < self.w and 0 <= y + dy < self.h])
        self.frame = [frame_mask(self.w, self.h, c) for c in range(self.w * self.h)]
        self.greys = grey_masks(self.rot)

    def fits_frame(self, cell: int, v: int) -> bool:
        """Whether placement `v` shows grey exactly on `cell`'s frame sides."""
        return bool(self.greys[v] == self.frame[cell])

    def gain(self, cell: int, v: int, skip: int = -1) -> int:
        """Matched joins placement `v` on `cell` makes with its placed neighbours."""
        shown = self.rot[v]
        g = 0
        for s, o in self.nb[cell]:
            u = self.cells[o]
            if u >= 0 and o != skip:
                c = shown[s]
                g += int(c == self.rot[u, (s + 2) % 4] and c != GREY)
        return g


def _kind(instance: Instance, piece: int) -> int:
    return int((instance.pieces[piece] == GREY).sum())


def fill_holes(instance: Instance, board, *, exact_holes: int = EXACT_HOLES,
               max_rounds: int = 50, seconds: float = 30.0, keep=(),
               stop: Callable[[], bool] | None = None) -> Filled:
    """The board with its holes filled (module docstring) and its score; the cells of
    `keep` (indices y*W+x: fixed cells, clues) are never moved by a swap or turn.  When
    `stop()` turns true (Ctrl-C) the exact search and the improvement end early, the
    board as filled so far (greedily, when the exact search had no filling yet): still
    full, its score never below the partial board's."""
    t0 = time.perf_counter()
    cells = board_cells(instance, board)
    before = score(instance, cells).matched
    b = _Board(instance, cells)
    holes = [int(c) for c in np.flatnonzero(cells < 0)]
    left = sorted(set(range(instance.n_pieces)) - {int(v) >> 2 for v in cells if v >= 0})
    exact = 0 < len(holes) <= exact_holes
    if exact:
        exact = _exact(b, holes, left, stop)
    if holes and not exact and (b.cells[holes] < 0).all():
        _greedy(b, holes, left)
    swaps = _improve(b, max_rounds, t0 + seconds, set(keep), stop)
    final = score(instance, b.cells).matched
    return Filled(b.cells.astype(np.int16), final, before, len(holes), exact, swaps,
                  time.perf_counter() - t0)


def _options(b: _Board, cell: int, pieces) -> list[int]:
    """The placements of `pieces` on `cell` that show grey exactly on its frame sides, or
    when none does (the leftovers are of another kind than the hole), every placement."""
    fit = [p * 4 + r for p in pieces for r in range(4) if b.fits_frame(cell, p * 4 + r)]
    return fit or [p * 4 + r for p in pieces for r in range(4)]


class _Stopped(Exception):
    """`stop()` turned true in the exact search."""


def _exact(b: _Board, holes: list[int], left: list[int],
           stop: Callable[[], bool] | None = None) -> bool:
    """Best filling of `holes` with `left` (branch and bound; the rest of the board fixed);
    False when `stop()` ended it first (the best filling found by then kept, if any)."""
    order = sorted(holes, key=lambda c: -sum(1 for _, o in b.nb[c] if b.cells[o] >= 0))
    at = {c: k for k, c in enumerate(order)}
    # the joins hole order[j] closes when it is placed (with filled cells and earlier
    # holes); open_after[k]: those of holes k, k+1, ...: a bound on what is left to gain
    closes = [sum(1 for _, o in b.nb[c] if o not in at or at[o] < j)
              for j, c in enumerate(order)]
    open_after = [sum(closes[k:]) for k in range(len(order))]
    best_got = -1  # the best filling's score and cells
    best_cells: np.ndarray | None = None
    used: set[int] = set()
    visits = 0

    def visit(k: int, got: int) -> None:
        nonlocal best_got, best_cells, visits
        visits += 1
        if stop is not None and visits % 1024 == 0 and stop():
            raise _Stopped
        if got + (open_after[k] if k < len(order) else 0) <= best_got:
            return
        if k == len(order):
            best_got, best_cells = got, b.cells.copy()
            return
        c = order[k]
        opts = [(b.gain(c, v), v) for v in _options(b, c, [p for p in left if p not in used])]
        for g, v in sorted(opts, key=lambda t: -t[0]):
            b.cells[c] = v
            used.add(v >> 2)
            visit(k + 1, got + g)
            used.discard(v >> 2)
            b.cells[c] = -1

    try:
        visit(0, 0)
        done = True
    except _Stopped:
        done = False
        b.cells[holes] = -1  # the placements it held when stopped (no undo ran)
    if best_cells is not None:
        b.cells[:] = best_cells
    return done


def _greedy(b: _Board, holes: list[int], left: list[int]) -> None:
    free = set(left)
    todo = set(holes)
    while todo:
        c = max(todo, key=lambda h: (sum(1 for _, o in b.nb[h] if b.cells[o] >= 0), -h))
        opts = _options(b, c, sorted(free))
        v = max(opts, key=lambda v: (b.gain(c, v), -v)) if opts else None
        if v is None:  # no leftover fits the frame here: the pieces do not add up
            todo.discard(c)
            continue
        b.cells[c] = v
        free.discard(v >> 2)
        todo.discard(c)


def _improve(b: _Board, max_rounds: int, deadline: float, keep: set[int],
             stop: Callable[[], bool] | None = None) -> int:
    """Swaps and turns (of cells not in `keep`) kept when they raise the score, until none
    does, past `deadline` or `stop()`; returns how many were kept."""
    inst = b.inst
    kinds: dict[int, list[int]] = {}  # cells by their piece's grey sides
    for c, v in enumerate(b.cells.tolist()):
        if v >= 0 and c not in keep:
            kinds.setdefault(_kind(inst, v >> 2), []).append(c)
    kept = 0
    for _ in range(max_rounds):
        bad = sorted({c for c in range(len(b.cells)) if b.cells[c] >= 0 and c not in keep
                      and b.gain(c, int(b.cells[c])) < sum(1 for _, o in b.nb[c]
                                                           if b.cells[o] >= 0)})
        improved = False
        for c in bad:
            if time.perf_counter() > deadline or (stop is not None and stop()):
                return kept
            v = int(b.cells[c])
            if v < 0:
                continue
            base = b.gain(c, v)
            if _kind(inst, v >> 2) == 0:  # turns of an inner piece
                for r in range(1, 4):
                    u = (v & ~3) | ((v + r) & 3)
                    if b.gain(c, u) > base:
                        b.cells[c] = u
                        v, base, improved, kept = u, b.gain(c, u), True, kept + 1
            for o in kinds.get(_kind(inst, v >> 2), []):
                if o == c or b.cells[o] < 0:
                    continue
                if _swap_gain(b, c, o) > 0:
                    improved, kept = True, kept + 1
                    break
        if not improved:
            break
    return kept


def _swap_gain(b: _Board, c: int, o: int) -> int:
    """Swap the pieces of cells c and o, each in its best rotation for its new cell, if
    that raises the score (kept then); returns the gain (0 when not kept)."""
    v, u = int(b.cells[c]), int(b.cells[o])
    before = b.gain(c, v) + b.gain(o, u, skip=c)
    best, pick = 0, None
    for rv, ru in itertools.product(range(4), range(4)):
        nv, nu = (u & ~3) | rv, (v & ~3) | ru
        if not (b.fits_frame(c, nv) and b.fits_frame(o, nu)):
            continue
        b.cells[c], b.cells[o] = nv, nu
        g = b.gain(c, nv) + b.gain(o, nu, skip=c) - before
        b.cells[c], b.cells[o] = v, u
        if g > best:
            best, pick = g, (nv, nu)
    if pick is not None:
        b.cells[c], b.cells[o] = pick
    return best
