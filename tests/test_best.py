"""Best-score search (issue 38): the score against a naive count of every join, the kernel
against its recursive twin (same nodes, same best board, resumed at any node) and against
a brute-force search of the same rules, full scores on solvable boards, no frame mismatch,
restarts reproducible per seed."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from helpers import random_instance
from naive_best import brute_best, naive_score, twin_search, unsolvable_pieces

from e2store.boards.table import board_cells, frame_colours, score
from e2store.errors import SolverError
from e2store.instance import read_instance
from e2store.instance.model import Instance
from e2store.solver import best as B


def random_board(inst: Instance, rng: random.Random, holes: float) -> np.ndarray:
    """A random (not solved) board: every piece once in a random rotation, some holes."""
    n = inst.width * inst.height
    perm = list(range(inst.n_pieces))
    rng.shuffle(perm)
    return np.array([-1 if rng.random() < holes else perm[i] * 4 + rng.randrange(4)
                     for i in range(n)], dtype=np.int64)


@pytest.mark.parametrize("w, h", [(3, 3), (4, 4), (5, 3), (6, 6)])
def test_score_counts_every_join(w, h):
    rng = random.Random(w * 10 + h)
    for seed in range(12):
        inst = random_instance(w, h, seed)
        pieces = [tuple(int(c) for c in p) for p in inst.pieces]
        boards = [random_board(inst, rng, holes) for holes in (0.0, 0.2, 0.7, 1.0)]
        from e2store.solver.search import solve

        sol = solve(inst, first=True).boards
        if len(sol):
            boards.append(np.asarray(sol[0], dtype=np.int64))
        for b in boards:
            got = score(inst, b)
            m, joins, holes = naive_score(pieces, w, h, b.tolist())
            assert (got.matched, got.joins, len(got.holes)) == (m, joins, holes)
            assert got.joins - got.matched >= len(got.mismatched)
            assert joins == 2 * w * h - w - h


def test_score_of_a_solution_is_full_and_a_piece_twice_is_refused():
    inst = random_instance(5, 5, 3)
    from e2store.solver.search import solve

    sol = np.asarray(solve(inst, first=True).boards[0], dtype=np.int64)
    s = score(inst, sol)
    assert s.matched == s.joins == 40 and not s.mismatched and not s.holes
    bad = sol.copy()
    bad[7] = bad[3]
    with pytest.raises(SolverError, match=r"piece \d+ is placed twice: on \(3, 0\) and \(2, 1\)"):
        board_cells(inst, bad)


def plan_for(inst, breaks, scan="rowscan", fixed=None):
    return B.best_plan(inst, scan=scan, fixed=fixed, breaks=breaks)


CASES = [(3, 3, "none"), (4, 4, "0,5,9"), (4, 4, "none"), (5, 4, "3,8,12,15"), (4, 4, "2,3")]


@pytest.mark.parametrize("w, h, breaks", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_equals_its_twin(w, h, breaks, seed, monkeypatch):
    """Same nodes, best depth, score, mismatches, board and status, with the search cut
    into slices of 7 nodes (resumed each time) and under a budget it runs out of."""
    inst = Instance(f"u{seed}", w, h, unsolvable_pieces(w, h, seed))
    plan = plan_for(inst, breaks, scan=["rowscan", "spiral-in", "diagonal"][seed % 3])
    monkeypatch.setattr(B, "SLICE_NODES", 7)
    for budget in (50, 30_000 if w * h > 16 else 10**7):
        rng = np.random.default_rng([seed, 3])
        lists = plan.lists(rng)
        got = B.BestSearch(plan).run(seed, 3, budget)
        nodes, bd, bs, bm, board, status = twin_search(plan, *lists, budget)
        assert got.nodes == nodes
        assert (got.score, got.mismatches) == (bs, bm)
        assert got.board.tolist() == board
        assert got.status == (status if status != "budget" else "budget")
        if status == "exhausted":
            break


@pytest.mark.parametrize("w, h, breaks", [(3, 3, "none"), (3, 3, "2,4"), (4, 3, "3,6,8"),
                                          (4, 4, "9,12")])
@pytest.mark.parametrize("seed", range(4))
def test_best_equals_brute_force(w, h, breaks, seed):
    """Searched to the end, the kernel's best (depth, score) is the brute force's over the
    same rules: the break schedule's twin."""
    pieces = unsolvable_pieces(w, h, seed)
    inst = Instance(f"u{seed}", w, h, pieces)
    plan = plan_for(inst, breaks)
    r = B.BestSearch(plan).run(seed, 0, 10**9)
    assert r.status in ("exhausted", "perfect")
    order = [int(c) for c in plan.order]
    ranked = [tuple(int(c) for c in p) for p in inst.pieces]  # colours as ranks
    want = brute_best(ranked, w, h, order, {}, plan.breaks,
                      set(frame_colours(inst).tolist()))
    assert (r.depth, r.score) == want
    assert score(inst, r.board).matched == r.score


def test_fixed_cells_and_extra_sides_equal_brute_force():
    """Fixed cells in the middle: the cell between them checks a third and fourth side (the
    kernel's extra checks), still the brute force's best."""
    w = h = 4
    for seed in range(4):
        inst = Instance(f"u{seed}", w, h, unsolvable_pieces(w, h, seed))
        inner = [i for i, p in enumerate(inst.pieces) if 0 not in p]
        fixed = {(2, 1): inner[0] * 4 + seed % 4, (1, 2): inner[1] * 4}
        plan = plan_for(inst, "4,8,11", fixed=fixed)
        r = B.BestSearch(plan).run(0, 0, 10**9)
        assert (plan.xi[:, 1] >= 0).any()
        ranked = [tuple(int(c) for c in p) for p in inst.pieces]
        want = brute_best(ranked, w, h, [int(c) for c in plan.order],
                          {6: fixed[(2, 1)], 9: fixed[(1, 2)]}, plan.breaks,
                          set(frame_colours(inst).tolist()))
        assert (r.depth, r.score) == want
        assert r.board[6] == fixed[(2, 1)] and r.board[9] == fixed[(1, 2)]


@pytest.mark.parametrize("size", [4, 5, 6, 7])
def test_full_score_on_solvable_boards_and_never_a_frame_mismatch(size):
    inst = random_instance(size, size, size)
    for breaks in ("none", "blackwood"):
        plan = plan_for(inst, breaks)
        r = B.BestSearch(plan).run(1, 0, 10**9)
        s = score(inst, r.board)
        assert r.status == "perfect" and r.depth == size * size
        assert s.matched == s.joins == r.score
    framec = set(frame_colours(inst).tolist())
    bad = Instance("bad", 6, 6, unsolvable_pieces(6, 6, 11))
    r = B.BestSearch(plan_for(bad, "10,14,18,22,26,30")).run(0, 0, 10**6)
    rot = bad.rotated_table()
    for (x, y), side in score(bad, r.board).mismatched:
        a = rot[r.board[y * 6 + x], 2 if side == "E" else 3]
        nb = r.board[y * 6 + x + 1] if side == "E" else r.board[(y + 1) * 6 + x]
        b = rot[nb, 0 if side == "E" else 1]
        assert a not in framec and b not in framec and 0 not in (a, b)
    assert framec


def test_restarts_are_reproducible_per_seed():
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 5))
    plan = plan_for(inst, "12,16,20,24")
    a = B.BestSearch(plan).run(7, 2, 20_000)
    b = B.BestSearch(plan).run(7, 2, 20_000)
    c = B.BestSearch(plan).run(7, 3, 20_000)
    assert a.board.tolist() == b.board.tolist() and a.nodes == b.nodes
    assert (a.board.tolist(), a.nodes) != (c.board.tolist(), c.nodes) or a.depth == 36


@pytest.mark.parametrize("spec, match", [
    ("5,3", "strictly increasing"), ("0,1,2,3,4,5,6,7,8,9,10,11,12,13", "breaks for a board"),
    ("99", r"depths must be in 0\.\.15"), ("fast", "expected a name")])
def test_bad_schedules(spec, match):
    with pytest.raises(SolverError, match=match):
        B.break_schedule(spec, 16, 12 if "," in spec and len(spec) > 20 else 24)


def test_named_schedules_scale():
    assert B.break_schedule("blackwood", 256, 480) == B.SCHEDULES["blackwood"]
    s = B.break_schedule("blackwood", 36, 60)
    assert list(s) == sorted(set(s)) and 1 <= len(s) <= 10 and max(s) < 36
    assert B.break_schedule("none", 36, 60) == ()


@pytest.mark.parametrize("seed", range(4))
def test_colour_quota_kernel_equals_its_twin(seed, monkeypatch):
    """With a colour quota (two inner colours, Blackwood's curve scaled to the board): the
    quota's pieces first in each list part, the twin's nodes and board."""
    inst = Instance(f"u{seed}", 5, 5, unsolvable_pieces(5, 5, seed))
    colours = sorted({int(c) for p in inst.pieces for c in p if c > 3})[:2]
    plan = B.best_plan(inst, "rowscan", None, "10,14,18,20", quota=colours)
    assert plan.qmin.max() > 0 and plan.quota
    monkeypatch.setattr(B, "SLICE_NODES", 11)
    lists = plan.lists(np.random.default_rng([seed, 0]))
    got = B.BestSearch(plan).run(seed, 0, 40_000)
    nodes, bd, bs, bm, board, status = twin_search(plan, *lists, 40_000)
    assert (got.nodes, got.score, got.board.tolist(), got.status) == (nodes, bs, board, status)
    lo, mid = lists[1], lists[2]
    for k in np.flatnonzero(mid > lo)[:50]:  # exact parts: quota pieces first
        part = plan.hq[lists[0][lo[k]:mid[k]]] > 0
        assert not (np.diff(part.astype(int)) > 0).any()


def test_quota_names():
    inst = random_instance(4, 4, 1)
    assert B.quota_colours(inst, "none") == ()
    with pytest.raises(SolverError, match="not on"):
        B.quota_colours(inst, "blackwood")
    with pytest.raises(SolverError, match="expected none, blackwood"):
        B.quota_colours(inst, "red")
    assert B.quota_curve(160, 256, 122) == 119 and B.quota_curve(200, 256, 122) == 0


def test_tileability_from_the_store_equals_a_naive_count(tmp_path):
    """Hamming-1 corolles per centre piece (the database arm's table), built into an empty
    store, against the naive enumerator at the generic cell of each piece's kind."""
    from naive import naive_corolles

    from e2store.solver.best import piece_order, quota_from_store, tileability
    from e2store.zones.zonemap import zone_map

    inst = random_instance(5, 5, 8)
    tiles = tileability(tmp_path / "store", inst)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    zm = zone_map(5, 5, 1)
    kind = (inst.pieces == 0).sum(axis=1)
    for k in (0, 1, 2):
        zones = [z for z in zm.zones if (z.x in (0, 4)) + (z.y in (0, 4)) == k]
        z = max(zones, key=lambda z: (len(z.members), z.id))
        naive = {}
        for cor in naive_corolles(pieces, 5, 5, z.x, z.y, 1):
            p = next(p for c, p, _ in cor if c == (z.x, z.y))
            naive[p] = naive.get(p, 0) + 1
        for p in np.flatnonzero(kind == k):
            assert tiles[p] == naive.get(int(p), 0), (k, p)
    order = piece_order(inst, tiles)
    assert set(order.tolist()) <= {0, 1, 2, 3}
    assert tiles[order == 0].max() <= tiles[(order == 3) & (kind == 0)].min()
    assert len(quota_from_store(inst, tiles)) == 3
    again = tileability(tmp_path / "store", inst)  # read back, not built again
    assert np.array_equal(again, tiles)


def _generated_cases():
    """(instance, plan) pairs covering every kind of generated depth block: breaks from the
    first depth, extra sides (fixed cells) with and without mismatches allowed, a colour
    quota, full boards (perfect or not) and exhaustion."""
    out = []
    inst = Instance("u0", 4, 4, unsolvable_pieces(4, 4, 0))
    out.append((inst, plan_for(inst, "0,5,9")))
    inst = Instance("u1", 5, 4, unsolvable_pieces(5, 4, 1))
    out.append((inst, plan_for(inst, "3,8,12,15", scan="spiral-in")))
    inst = Instance("u2", 4, 4, unsolvable_pieces(4, 4, 2))
    inner = [i for i, p in enumerate(inst.pieces) if 0 not in p]
    out.append((inst, plan_for(inst, "4,8,11", fixed={(2, 1): inner[0] * 4 + 1,
                                                         (1, 2): inner[1] * 4})))
    inst = Instance("u3", 5, 5, unsolvable_pieces(5, 5, 3))
    colours = sorted({int(c) for p in inst.pieces for c in p if c > 3})[:2]
    out.append((inst, B.best_plan(inst, "diagonal", None, "10,14,18,20", quota=colours)))
    inst = random_instance(4, 4, 4)  # no breaks, extra sides on the spiral's inner cells
    out.append((inst, plan_for(inst, "none", scan="spiral-in")))
    return out


@pytest.mark.parametrize("case", [pytest.param(0, marks=pytest.mark.slow),
                                  pytest.param(1, marks=pytest.mark.slow), 2, 3, 4])
def test_generated_kernel_equals_the_twin(case, monkeypatch):
    """The plan's generated kernel (`best._gen`): the twin's nodes, best board, score and
    status, cut into slices of 7 nodes and under budgets it runs out of or not."""
    inst, plan = _generated_cases()[case]
    monkeypatch.setattr(B, "SLICE_NODES", 7)
    search = B.BestSearch(plan, kernel="unrolled")
    assert search.generated
    for seed, budget in ((0, 60), (1, 20_000), (2, 10**7)):
        lists = plan.lists(np.random.default_rng([seed, 0]))
        got = search.run(seed, 0, budget)
        nodes, bd, bs, bm, board, status = twin_search(plan, *lists, budget)
        assert (got.nodes, got.score, got.mismatches) == (nodes, bs, bm), (seed, budget)
        assert got.board.tolist() == board
        assert got.status == status


E2 = Path(__file__).resolve().parents[2] / "shared" / "instances" / "e2_gallicchio.puz"


@pytest.mark.skipif(not E2.exists(), reason="needs ../shared")
def test_generated_kernel_is_the_generic_one_on_eternity_ii():
    """Eternity II, all five clues (so depths beside clues check a third and fourth side),
    the `--best` defaults (the plan `test_best_cli` compiles too): restarts of 1e7 nodes
    of the generated kernel are the generic kernel's, node for node."""
    plan = B.best_plan(read_instance(E2), clues="all")
    unrolled, generic = B.BestSearch(plan, kernel="unrolled"), B.BestSearch(plan, "generic")
    assert unrolled.generated and not generic.generated
    for seed in (0, 1):
        a, b = unrolled.run(seed, 0, 10**7), generic.run(seed, 0, 10**7)
        assert (a.nodes, a.depth, a.score, a.mismatches, a.status, a.full_boards) == (
            b.nodes, b.depth, b.score, b.mismatches, b.status, b.full_boards)
        assert a.board.tolist() == b.board.tolist()


def test_kernel_choice():
    inst = Instance("u", 4, 4, unsolvable_pieces(4, 4, 0))
    plan = plan_for(inst, "none")
    assert not B.BestSearch(plan).generated  # auto: 16 depths, below AUTO_MIN_DEPTHS
    assert not B.BestSearch(plan, kernel="generic").generated
    with pytest.raises(SolverError, match="kernel 'fast'"):
        B.BestSearch(plan, kernel="fast")
