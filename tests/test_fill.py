"""Filling the holes of a partial board (issue 38): exact on small hole sets against a
brute force over every filling, never below the partial board's score, the kept cells
never moved, and every piece placed once."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from naive_best import naive_score, unsolvable_pieces

from e2store.instance.model import Instance
from e2store.solver.best import fill_holes


def brute_fill(pieces, w, h, board) -> int:
    """The best score over every filling of the holes with the leftover pieces, each in a
    rotation with grey exactly on its cell's frame sides (any when none fits)."""
    holes = [i for i, v in enumerate(board) if v < 0]
    left = sorted(set(range(len(pieces))) - {v // 4 for v in board if v >= 0})

    def grey_ok(cell, v):
        from naive import shown

        x, y = cell % w, cell // w
        frame = (x == 0, y == 0, x == w - 1, y == h - 1)
        return all((shown(pieces[v // 4], v % 4, s) == 0) == frame[s] for s in range(4))

    best = -1
    for perm in itertools.permutations(left):
        opts = []
        for cell, p in zip(holes, perm, strict=True):
            fit = [p * 4 + r for r in range(4) if grey_ok(cell, p * 4 + r)]
            opts.append(fit or [p * 4 + r for r in range(4)])
        for choice in itertools.product(*opts):
            b = list(board)
            for cell, v in zip(holes, choice, strict=True):
                b[cell] = v
            best = max(best, naive_score(pieces, w, h, b)[0])
    return best


@pytest.mark.parametrize("seed", range(8))
def test_exact_on_small_hole_sets_and_never_lower(seed):
    rng = random.Random(seed)
    w, h = 4, 4
    pieces = unsolvable_pieces(w, h, seed)
    inst = Instance("u", w, h, pieces)
    from e2store.solver.best import BestSearch, best_plan

    full = BestSearch(best_plan(inst, breaks="3,6,9,12")).run(seed, 0, 10**6).board
    board = np.asarray(full, dtype=np.int64)
    holes = rng.sample(range(16), 2 + seed % 3)
    board[holes] = -1
    ranked = [tuple(int(c) for c in p) for p in inst.pieces]
    partial = naive_score(ranked, w, h, board.tolist())[0]
    exact = fill_holes(inst, board, max_rounds=0)
    assert exact.exact and exact.score == brute_fill(ranked, w, h, board.tolist())
    improved = fill_holes(inst, board, keep=set(range(8)))
    assert improved.score >= exact.score >= partial
    kept = board[:8] >= 0
    assert (improved.board[:8][kept] == board[:8][kept]).all()
    got = np.asarray(improved.board, dtype=np.int64)
    assert (got >= 0).all() and sorted((got >> 2).tolist()) == list(range(16))
    assert naive_score(ranked, w, h, got.tolist())[0] == improved.score


def test_many_holes_are_filled_greedily():
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 4))
    board = np.full(36, -1)
    f = fill_holes(inst, board)
    assert not f.exact and f.holes == 36 and (f.board >= 0).all() and f.score >= 0
