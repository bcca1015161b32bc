"""One protocol for every solver of a board (docs/solver.md, *Solvers as plug-ins*): a
solver takes an instance and a grid (a full or partial board) and returns the insertions
it makes, in order, each with the board's score after it.  The exact search, the
best-score search and a greedy baseline implement it; any object with a `name` and such a
`solve` method plugs in the same way, and `check_insertions` checks what it returned.

    from e2store.solver.protocol import GreedySolver, check_insertions
    steps = GreedySolver().solve(instance, grid)       # grid: (H, W) or (W*H,), -1 free
    board = check_insertions(instance, grid, steps)    # the final board, or SolverError
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from e2store.boards.table import board_cells, score
from e2store.errors import SolverError
from e2store.instance.model import GREY, Instance
from e2store.solver.best import (
    DEFAULT_BREAKS,
    DEFAULT_QUOTA,
    DEFAULT_RESTART_NODES,
    DEFAULT_SCAN,
    DEFAULT_SEED,
)
from e2store.solver.plan import frame_mask, grey_masks
from e2store.zones.geometry import SIDE_STEP


@dataclass(frozen=True)
class Insertion:
    """A piece put on a free cell, and the board's score (matched joins) once it is."""

    x: int
    y: int
    piece: int
    rotation: int
    score: int


@runtime_checkable
class BoardSolver(Protocol):
    """What a solver of a board provides (module docstring)."""

    name: str

    def solve(self, instance: Instance, grid) -> list[Insertion]:
        """The insertions that take `grid` ((H, W) or (W*H,) packed piece*4+r, -1 free)
        to the solver's board, in order, each with the score after it."""
        ...


def insertions_to(instance: Instance, grid, board, order=None) -> list[Insertion]:
    """The insertions that take `grid` to `board` (a board extending it), cell by cell in
    `order` (cell indices; default y*W+x), each with the score after it."""
    start = board_cells(instance, grid)
    end = board_cells(instance, board)
    if ((start >= 0) & (start != end)).any():
        raise SolverError("the board does not extend the grid (a filled cell changed)")
    cells = range(len(end)) if order is None else order
    cur = start.copy()
    out = []
    for c in cells:
        c = int(c)
        if start[c] < 0 <= end[c]:
            cur[c] = end[c]
            out.append(Insertion(c % instance.width, c // instance.width, int(end[c]) >> 2,
                                 int(end[c]) & 3, score(instance, cur).matched))
    return out


def check_insertions(instance: Instance, grid, steps: list[Insertion]) -> np.ndarray:
    """Replay `steps` on `grid`: each on a free cell of the board, each piece unused, each
    score the board's; returns the final board (W*H,), or SolverError naming the step."""
    cur = board_cells(instance, grid).copy()
    used = {int(v) >> 2 for v in cur if v >= 0}
    w, h = instance.width, instance.height
    for i, s in enumerate(steps):
        where = f"insertion {i} ({s.x}, {s.y})"
        if not (0 <= s.x < w and 0 <= s.y < h) or cur[s.y * w + s.x] >= 0:
            raise SolverError(f"{where}: not a free cell of the board")
        if s.piece in used or not (0 <= s.piece < instance.n_pieces and 0 <= s.rotation < 4):
            raise SolverError(f"{where}: piece {s.piece} rotation {s.rotation} is used or "
                              f"out of range")
        cur[s.y * w + s.x] = s.piece * 4 + s.rotation
        used.add(s.piece)
        got = score(instance, cur).matched
        if got != s.score:
            raise SolverError(f"{where}: says score {s.score}, the board scores {got}")
    return cur


def _fixed_of(instance: Instance, grid) -> dict[tuple[int, int], int]:
    cells = board_cells(instance, grid)
    return {(i % instance.width, i // instance.width): int(v)
            for i, v in enumerate(cells.tolist()) if v >= 0}


@dataclass
class ExactSolver:
    """The exact search (`e2store.solver.search.solve`, --first): a solution that extends
    the grid, inserted in scan order; no insertion when there is none."""

    scan: str = "rowscan"
    name: str = "exact"

    def solve(self, instance: Instance, grid) -> list[Insertion]:
        from e2store.solver.scan import scan_order
        from e2store.solver.search import solve

        fixed = _fixed_of(instance, grid)
        r = solve(instance, self.scan, first=True, seed=fixed or None,
                  symmetry_break=not fixed)
        if not len(r.boards):
            return []
        order = scan_order(self.scan, instance.width, instance.height)
        return insertions_to(instance, grid, r.boards[0],
                             order[:, 1] * instance.width + order[:, 0])


@dataclass
class BestScoreSolver:
    """The best-score search (`e2store.solver.best.run_best`, its options and defaults
    `e2store best`'s): the deepest board of `restarts` restarts that extends the
    grid, inserted in scan order, then its holes filled (`e2store.solver.best.fill_holes`)."""

    scan: str = DEFAULT_SCAN
    breaks: str = DEFAULT_BREAKS
    restarts: int = 1
    restart_nodes: int = DEFAULT_RESTART_NODES
    seed: int = DEFAULT_SEED
    quota: str | None = DEFAULT_QUOTA
    name: str = "best-score"

    def solve(self, instance: Instance, grid) -> list[Insertion]:
        from e2store.solver.best import fill_holes, run_best
        from e2store.solver.scan import scan_order

        run = run_best(instance, scan=self.scan, fixed=_fixed_of(instance, grid) or None,
                       breaks=self.breaks, quota=self.quota, seed=self.seed,
                       restart_nodes=self.restart_nodes, restarts=self.restarts)
        assert run.best is not None  # one restart at least, and it keeps a board
        keep = {c for c, v in enumerate(board_cells(instance, grid).tolist()) if v >= 0}
        filled = fill_holes(instance, run.best.board, keep=keep).board
        order = scan_order(self.scan, instance.width, instance.height)
        return insertions_to(instance, grid, filled, order[:, 1] * instance.width + order[:, 0])


@dataclass
class GreedySolver:
    """The baseline: at each step, of every free cell and every unused piece and turn
    showing grey exactly on the cell's frame sides, the one that matches most joins with
    the placed neighbours (ties: the first cell in y*W+x order, then the lowest placement);
    until no piece fits a free cell."""

    name: str = "greedy"

    def solve(self, instance: Instance, grid) -> list[Insertion]:
        w, h = instance.width, instance.height
        cur = board_cells(instance, grid).copy()
        rot = instance.rotated_table()
        used = {int(v) >> 2 for v in cur if v >= 0}
        greys = grey_masks(rot)
        fits = {c: np.flatnonzero(greys == frame_mask(w, h, c)) for c in range(h * w)}
        steps: list[Insertion] = []
        total = score(instance, cur).matched
        while True:
            best = None
            for c in np.flatnonzero(cur < 0):
                x, y = int(c) % w, int(c) // w
                opts = [v for v in fits[int(c)] if (v >> 2) not in used]
                for v in opts:
                    g = 0
                    for s, (dx, dy) in enumerate(SIDE_STEP):
                        if 0 <= x + dx < w and 0 <= y + dy < h:
                            u = cur[(y + dy) * w + x + dx]
                            g += int(u >= 0 and rot[v, s] == rot[u, (s + 2) % 4]
                                     and rot[v, s] != GREY)
                    if best is None or g > best[0]:
                        best = (g, int(c), int(v))
            if best is None:
                return steps
            g, cell, place = best
            cur[cell] = place
            used.add(place >> 2)
            total += g
            steps.append(Insertion(cell % w, cell // w, place >> 2, place & 3, total))
