"""The tail re-solved exactly (issue 56, item 1): the branch-and-bound's optimum against a
brute force over every assignment (tests/naive_finish.py) on 6x6 and 7x7 boards, its bound
against the same bound computed from scratch and against the true optimum of what is left
(hypothesis), and the board it returns: never a lower score, a valid arrangement, the kept
cells untouched, whatever cap stops it."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_best import naive_score, unsolvable_pieces
from naive_finish import brute_tail, kind, legal_rotations, neighbours, twin_bound

from e2store.errors import SolverError
from e2store.instance.generate import GenerationWarning, generate_instance
from e2store.instance.model import Instance
from e2store.solver import scan_order
from e2store.solver.best import BestSearch, best_plan, fill_holes, grow_tail, resolve_tail
from e2store.solver.best import _finish_kernels as fk
from e2store.solver.best.finish import _Tail


def solved(w: int, h: int, seed: int, frame: int = 2, inner: int = 3):
    """A generated instance (few colours: many ways to match a join) and its solution."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GenerationWarning)
        inst = generate_instance(w, h, frame, inner, seed)
    return inst, inst.solution.reshape(-1).astype(np.int64)


def ranked(inst: Instance) -> list[tuple[int, ...]]:
    return [tuple(int(c) for c in p) for p in inst.pieces]


def scrambled(inst: Instance, board: np.ndarray, cells, rng: random.Random) -> np.ndarray:
    """`board` with the pieces of `cells` shuffled among cells of their kind, each in a
    random legal rotation: a tail that is (usually) not optimal."""
    pieces, w, h = ranked(inst), inst.width, inst.height
    out = board.copy()
    by_kind: dict[int, list[int]] = {}
    for c in cells:
        by_kind.setdefault(kind(pieces[int(board[c]) >> 2]), []).append(c)
    for group in by_kind.values():
        ps = [int(board[c]) >> 2 for c in group]
        rng.shuffle(ps)
        for c, p in zip(group, ps, strict=True):
            out[c] = rng.choice(legal_rotations(pieces, w, h, c, p))
    return out


def random_board(inst: Instance, board: np.ndarray, rng: random.Random) -> np.ndarray:
    """The pieces of a full legal `board` each on a random cell of its kind, in a random
    legal rotation: a board whose tails are far from perfect."""
    return scrambled(inst, board, range(inst.width * inst.height), rng)


def best_board(w: int, h: int, seed: int) -> tuple[Instance, np.ndarray, np.ndarray]:
    """A best-score board of an instance with no perfect board, its holes filled, and the
    scan order (cell indices) that placed it."""
    inst = Instance("u", w, h, unsolvable_pieces(w, h, seed))
    n = w * h
    plan = best_plan(inst, breaks=",".join(str(n - 9 + 2 * i) for i in range(5)))
    found = BestSearch(plan).run(seed, 0, 20_000).board
    return inst, fill_holes(inst, found, max_rounds=0).board.astype(np.int64), plan.order


def check_valid(inst: Instance, before: np.ndarray, after: np.ndarray, changed) -> None:
    """Each piece at most once, legal rotations on every re-solved cell, only `changed`
    cells changed, the score recounted."""
    pieces, w, h = ranked(inst), inst.width, inst.height
    after = np.asarray(after, dtype=np.int64)
    placed = after[after >= 0] >> 2
    assert len(set(placed.tolist())) == placed.size
    same = np.ones(after.size, bool)
    same[list(changed)] = False
    assert (after[same] == before[same]).all()
    for c in changed:
        if after[c] >= 0:
            assert int(after[c]) in legal_rotations(pieces, w, h, c, int(after[c]) >> 2)


NE_BLOCK_6 = [2, 3, 4, 5, 8, 9, 10, 11]  # (2..5, 0) and (2..5, 1): 4 border, 1 corner, 3 inner
LAST_ROWS_6 = list(range(28, 36))  # (4, 4), (5, 4) and the south row


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cells", [NE_BLOCK_6, LAST_ROWS_6], ids=["ne-block", "last-rows"])
@pytest.mark.parametrize("source", ["scrambled", "random"])
def test_optimum_equals_brute_force_on_6x6(seed, cells, source):
    inst, sol = solved(6, 6, seed)
    rng = random.Random(seed)
    board = (scrambled(inst, sol, cells, rng) if source == "scrambled"
             else random_board(inst, sol, rng))
    pieces = ranked(inst)
    r = resolve_tail(inst, board, cells)
    want = brute_tail(pieces, 6, 6, board.tolist(), cells)
    assert r.complete and r.score == want == naive_score(pieces, 6, 6, r.board.tolist())[0]
    assert r.before == naive_score(pieces, 6, 6, board.tolist())[0] <= r.score
    assert r.k == len(cells)
    check_valid(inst, board, r.board, cells)


@pytest.mark.parametrize("seed", range(3))
def test_optimum_equals_brute_force_on_best_score_boards(seed):
    for w, h in ((6, 6), (7, 7)):
        inst, board, order = best_board(w, h, seed)
        cells = [int(c) for c in order[-7:]]
        r = resolve_tail(inst, board, cells)
        want = brute_tail(ranked(inst), w, h, board.tolist(), cells)
        assert r.complete and r.score == want >= r.before
        check_valid(inst, board, r.board, cells)


@pytest.mark.parametrize("seed", range(3))
def test_7x7_tails_of_the_scan_and_mixed_kinds(seed):
    inst, sol = solved(7, 7, seed, 2, 4)
    xy = scan_order("blackwood", 7, 7)
    last = [int(y) * 7 + int(x) for x, y in xy[-8:]]
    rng = random.Random(seed)
    mixed = [0, 1, 7, 8, 9, 15, 16] if seed % 2 else [40, 41, 47, 33, 32, 48, 39]
    for cells in (last, mixed):
        board = scrambled(inst, sol, cells, rng) if seed < 2 else random_board(inst, sol, rng)
        r = resolve_tail(inst, board, cells)
        assert r.complete and r.score == brute_tail(ranked(inst), 7, 7, board.tolist(), cells)
        check_valid(inst, board, r.board, cells)


def test_holes_in_the_tail_are_filled_and_others_left():
    inst, sol = solved(6, 6, 5)
    pieces = ranked(inst)
    board = scrambled(inst, sol, NE_BLOCK_6, random.Random(5))
    board[[3, 9]] = -1  # holes in the tail: the board ends full
    r = resolve_tail(inst, board, NE_BLOCK_6)
    assert (r.board >= 0).all() and r.score == brute_tail(pieces, 6, 6, board.tolist(),
                                                           NE_BLOCK_6)
    assert r.score >= r.before
    board[[14, 30]] = -1  # and two outside it: they stay holes, their pieces are spare
    r = resolve_tail(inst, board, NE_BLOCK_6)
    assert (np.flatnonzero(r.board < 0) == [14, 30]).all()
    assert r.complete and r.score == brute_tail(pieces, 6, 6, board.tolist(), NE_BLOCK_6)
    check_valid(inst, board, r.board, NE_BLOCK_6)


@pytest.mark.parametrize("nodes", [0, 1, 3])
def test_a_cap_never_lowers_the_score(nodes):
    for seed in range(3):
        inst, board, order = best_board(6, 6, seed)
        cells = [int(c) for c in order[-12:]]
        keep = {int(order[0]), int(order[1])}
        r = resolve_tail(inst, board, cells, max_nodes=nodes, keep=keep)
        assert r.score >= r.before and r.nodes <= nodes
        assert r.score == naive_score(ranked(inst), 6, 6, r.board.tolist())[0]
        check_valid(inst, board, r.board, cells)
        t = resolve_tail(inst, board, cells, seconds=0.0)
        assert t.score >= t.before
        holed = board.copy()
        holed[cells[:2]] = -1
        h = resolve_tail(inst, holed, cells, max_nodes=nodes)
        assert h.score >= h.before


def test_grow_tail_keeps_the_best_and_the_clues():
    inst, board, order = best_board(7, 7, 1)
    keep = {int(order[-1]), int(order[-5])}  # clues among the last cells: never moved
    g = grow_tail(inst, board, order, ks=(4, 8, 10), keep=keep)
    assert g.score >= g.before and [s.k for s in g.steps] == [4, 8, 10][:len(g.steps)]
    assert g.score == max([g.before] + [s.score for s in g.steps])
    assert g.k in (0, 4, 8, 10) and g.nodes == sum(s.nodes for s in g.steps)
    free = [int(c) for c in order if int(c) not in keep][-10:]
    check_valid(inst, board, g.board, free)
    xy = scan_order("blackwood", 7, 7)  # (x, y) pairs are an order too
    assert grow_tail(inst, board, xy, ks=(4,), keep=keep).score >= g.steps[0].score
    capped = grow_tail(inst, board, order, ks=(4, 30), max_nodes=1)
    assert capped.score >= capped.before and len(capped.steps) <= 2


def test_bad_input_is_refused():
    inst, sol = solved(6, 6, 0)
    with pytest.raises(SolverError, match="also kept"):
        resolve_tail(inst, sol, [1, 2], keep=[2])
    with pytest.raises(SolverError, match="named twice"):
        resolve_tail(inst, sol, [1, 1])
    with pytest.raises(SolverError, match="off the board"):
        resolve_tail(inst, sol, [36])
    with pytest.raises(SolverError, match="cells"):
        resolve_tail(inst, sol[:-1], [1])
    with pytest.raises(SolverError, match="max_nodes"):
        resolve_tail(inst, sol, [1], max_nodes=-1)
    with pytest.raises(SolverError, match="ks"):
        grow_tail(inst, sol, range(36), ks=(0,))
    assert resolve_tail(inst, sol, []).score == resolve_tail(inst, sol, []).before


# -- the bound --------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), size=st.sampled_from([(6, 6), (7, 7), (5, 6)]),
       data=st.data())
def test_the_bound_never_cuts_off_the_optimum(seed, size, data):
    """At the root and after each placement of a random partial assignment: the kernel's
    bound (updated step by step as the search updates it) equals the bound computed from
    scratch, and is at least the best the open cells can still add."""
    w, h = size
    rng = random.Random(seed)
    inst, sol = (solved(w, h, seed, 2, rng.choice([2, 3, 5])) if seed % 3 else
                 best_board(w, h, seed)[:2])
    if data.draw(st.booleans()):
        sol = random_board(inst, sol, rng)
    pieces = ranked(inst)
    cells_by_kind: dict[int, list[int]] = {0: [], 1: [], 2: []}
    for c in range(w * h):
        x, y = c % w, c // w
        cells_by_kind[min(int(x in (0, w - 1)) + int(y in (0, h - 1)), 2)].append(c)
    n_in = data.draw(st.integers(0, 3))
    n_bo = data.draw(st.integers(0 if n_in else 1, 3))
    n_co = data.draw(st.integers(0, 1))
    tail = (rng.sample(cells_by_kind[0], n_in) + rng.sample(cells_by_kind[1], n_bo)
            + rng.sample(cells_by_kind[2], n_co))
    board = scrambled(inst, sol, tail, rng)
    if data.draw(st.booleans()):
        board[rng.choice(tail)] = -1  # a hole in the tail
    prob = _Tail(inst, board, tail)
    steps = data.draw(st.integers(0, len(tail)))
    order = rng.sample(tail, len(tail))[:steps]
    free = list(range(prob.pool.size))
    vs, js = [], []
    for c in order:  # a random legal placement of an unused pool piece
        opts = [(j, v) for j in free
                for v in legal_rotations(pieces, w, h, c, int(prob.pool[j]))]
        j, v = rng.choice(opts)
        free.remove(j)
        vs.append(v)
        js.append(j)
    got = fk.bounds_along(np.array(order, np.int64), np.array(vs, np.int64),
                          np.array(js, np.int64), prob.nbr, prob.kind, prob.colk,
                          prob.placed.copy(), prob.is_open.copy(), prob.used.copy(),
                          prob.dcnt.copy(), prob.scnt.copy(), prob.iopen)
    now = [-1 if c in tail else int(v) for c, v in enumerate(board.tolist())]
    for i in range(steps + 1):
        if i:
            now[order[i - 1]] = vs[i - 1]
        rest = [c for c in tail if c not in order[:i]]
        assert got[i] == twin_bound(pieces, w, h, now, rest)
        opens = sum(1 for c in rest for _, o in neighbours(w, h, c)
                    if now[o] >= 0 or (o in rest and o < c))  # each open pair once
        assert got[i] <= opens  # never weaker than the open joins
        if rest:
            base = naive_score(pieces, w, h, now)[0]
            best = brute_tail(pieces, w, h, now, rest) - base
            assert got[i] >= best >= 0
