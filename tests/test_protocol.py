"""The solver protocol (issue 38): the exact, best-score and greedy solvers take a grid
and return insertions with the score after each; the checker replays them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_instance
from naive_best import naive_score, unsolvable_pieces

from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.solver.protocol import (
    BestScoreSolver,
    BoardSolver,
    ExactSolver,
    GreedySolver,
    Insertion,
    check_insertions,
)


def test_every_solver_extends_the_grid_and_its_scores_replay():
    inst = random_instance(5, 5, 6)
    from e2store.solver.search import solve

    sol = np.asarray(solve(inst, first=True).boards[0], dtype=np.int64)
    grid = np.full(25, -1)
    grid[:7] = sol[:7]
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for solver in (ExactSolver(), BestScoreSolver(breaks="none", restart_nodes=10**6),
                   GreedySolver()):
        assert isinstance(solver, BoardSolver)
        steps = solver.solve(inst, grid)
        board = check_insertions(inst, grid, steps)
        assert (board[:7] == sol[:7]).all() and len(steps) == int((board >= 0).sum()) - 7
        assert steps[-1].score == naive_score(pieces, 5, 5, board.tolist())[0]
        if solver.name != "greedy":
            assert steps[-1].score == 40 and (board >= 0).all()


def test_greedy_takes_the_best_gain_at_each_step():
    """Each greedy step gains the most any (free cell, unused piece and turn that fits the
    frame) could, recounted by brute force."""
    inst = Instance("u", 4, 4, unsolvable_pieces(4, 4, 2))
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    grid = np.full(16, -1)
    steps = GreedySolver().solve(inst, grid)
    board = grid.copy()
    rot = inst.rotated_table()
    prev = 0
    for s in steps:
        best = 0
        for c in np.flatnonzero(board < 0):
            x, y = c % 4, c // 4
            frame = (x == 0, y == 0, x == 3, y == 3)
            for v in range(64):
                if (v >> 2) in {int(u) >> 2 for u in board if u >= 0}:
                    continue
                if not all((rot[v, k] == 0) == frame[k] for k in range(4)):
                    continue
                trial = board.copy()
                trial[c] = v
                best = max(best, naive_score(pieces, 4, 4, trial.tolist())[0] - prev)
        board[s.y * 4 + s.x] = s.piece * 4 + s.rotation
        assert s.score - prev == best
        prev = s.score
    assert (board >= 0).all()


def test_the_checker_refuses_what_is_wrong():
    inst = random_instance(4, 4, 2)
    grid = np.full(16, -1)
    steps = GreedySolver().solve(inst, grid)
    bad = [*steps[:2], Insertion(steps[2].x, steps[2].y, steps[2].piece, steps[2].rotation,
                                 steps[2].score + 1)]
    with pytest.raises(SolverError, match="insertion 2 .*says score"):
        check_insertions(inst, grid, bad)
    with pytest.raises(SolverError, match="insertion 1 .*not a free cell"):
        check_insertions(inst, grid, [steps[0], steps[0]])
    again = [steps[0], Insertion(steps[1].x, steps[1].y, steps[0].piece, 0, 0)]
    with pytest.raises(SolverError, match="is used"):
        check_insertions(inst, grid, again)
