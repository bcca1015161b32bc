"""Hamming-3 counts by cores and arms (e2store.corolles.arms) against their naive twin (a product of
arm configurations), the stem method (e2store.corolles.factorised) and full enumeration."""

from __future__ import annotations

import itertools

import naive
import numpy as np
import pytest
from helpers import random_instance

from e2store.corolles import _arm_kernels
from e2store.corolles.arms import METHODS, arm_layout, arm_work, count_by_arms
from e2store.corolles.enumerate import choose_prefix_depth, count_corolles
from e2store.corolles.factorised import count_factorised
from e2store.instance.formats import read_instance
from e2store.zones.geometry import ring_offsets


def _cells(lay, x, y) -> list[tuple[int, int]]:
    off = ring_offsets(3)[lay.layout.slot_of]
    return [(x + int(dx), y + int(dy)) for dx, dy in off]


@pytest.mark.parametrize("w,h,x,y", [(9, 9, 4, 4), (7, 7, 3, 3), (5, 5, 0, 0), (5, 5, 2, 1),
                                     (4, 6, 1, 2), (2, 2, 1, 0), (1, 1, 0, 0)])
def test_arm_layout_orders_core_tips_arms(w, h, x, y):
    """Every cell within distance 3 once; the core (rings 0-1 and the diagonals) first; each
    level's inner neighbours before it; each arm's cells touch only the core and its tip."""
    lay = arm_layout(w, h, x, y)
    cells = _cells(lay, x, y)
    want = {(cx, cy) for cx in range(w) for cy in range(h) if abs(cx - x) + abs(cy - y) <= 3}
    assert sorted(cells) == sorted(want)
    core = {c for c in want if abs(c[0] - x) + abs(c[1] - y) <= 1
            or (abs(c[0] - x) == 1 and abs(c[1] - y) == 1)}
    assert set(cells[:lay.n_core]) == core
    for lv in range(lay.layout.n_levels):
        for nb in (lay.layout.nb1[lv], lay.layout.nb2[lv]):
            assert nb < lv
    arm_cells = []
    for a in range(4):
        tip = lay.arm_tip[a]
        leaves = lay.arm_leaf[a, :lay.arm_nleaf[a]]
        assert (lay.arm_leaf[a, lay.arm_nleaf[a]:] == -1).all()
        if tip < 0:
            assert len(leaves) == 0
            continue
        mine = {cells[tip], *(cells[lv] for lv in leaves)}
        arm_cells.append(mine)
        for lv in leaves:
            assert {lay.layout.nb1[lv], lay.layout.nb2[lv]} - {-1} <= set(range(lay.n_core)) | {tip}
    assert sum(map(len, arm_cells)) == len(want) - len(core)


@pytest.mark.parametrize("w,h,seed,colours", [
    pytest.param(5, 5, 1, (2, 4), marks=pytest.mark.slow),  # two colours: 99 s of twin
    pytest.param(6, 5, 2, (3, 6), marks=pytest.mark.slow),  # 27 s of twin
    (5, 4, 3, (3, 3))])
def test_kernel_agrees_with_naive_twin(w, h, seed, colours):
    """Per core prefix (shallow ones and whole cores), corolles and cores with a completion,
    by each way of counting the disjoint arm tuples."""
    inst = random_instance(w, h, seed, *colours)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    rng = np.random.default_rng(seed)
    for x, y in [(w // 2, h // 2), (1, 1), (0, 2), (w - 1, h - 1)]:
        work = arm_work(inst, x, y, symmetric=False)
        cells = _cells(work.arms, x, y)
        core_layout = work.layout.truncated(work.n_stem)
        for want_prefixes, keep in ((8, 3), (10**9, 12)):
            pref, _ = choose_prefix_depth(core_layout, work.table, want_prefixes)
            if len(pref) > keep:  # half of them among the prefixes with corolles below
                some = np.nonzero(_arm_kernels.count_arms(pref, *work.args)[0])[0]
                pick = rng.choice(some, min(len(some), keep // 2), replace=False)
                rest = rng.choice(len(pref), keep - len(pick), replace=False)
                pref = pref[np.unique(np.concatenate([pick, rest]))]
            want_c, want_s = naive.naive_arms(pieces, w, h, x, y, cells, pref.tolist())
            for method in METHODS.values():
                got_c, got_s = _arm_kernels.count_arms(pref, *work.args[:-1], method)
                assert got_c.tolist() == want_c and got_s.tolist() == want_s, \
                    (x, y, len(pref[0]), method)


@pytest.mark.parametrize("w,h,seed,colours", [
    pytest.param(5, 5, 11, (3, 4), marks=pytest.mark.slow),  # 18 s
    (6, 5, 12, (3, 6)), (7, 4, 13, (3, 7)), (6, 4, 14, (3, 6))])
def test_arms_equal_stems_on_every_cell(w, h, seed, colours):
    """Two independent methods, every cell of random boards (few colours: arms share many
    pieces), with and without the turn symmetry."""
    inst = random_instance(w, h, seed, *colours)
    for x, y in itertools.product(range(w), range(h)):
        want = count_factorised(inst, x, y, 3).corolles
        assert count_by_arms(inst, x, y).corolles == want, (x, y)
        if (x, y) == (w // 2, h // 2):
            assert count_by_arms(inst, x, y, symmetric=False, threads=2).corolles == want
            for method in METHODS:
                assert count_by_arms(inst, x, y, method=method).corolles == want, method


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="bitsets"):
        arm_work(random_instance(4, 4, 1, 2, 3), 1, 1, method="fast")


def test_arms_equal_full_enumeration():
    inst = random_instance(5, 5, 21, 3, 6)
    for x, y in [(2, 2), (1, 2), (0, 0), (4, 1)]:
        assert count_by_arms(inst, x, y).corolles == count_corolles(inst, x, y, 3).corolles


def test_benchmark_boards(shared_instances):
    """Every hamming-3 zone of 4x4 and 5x5 and three of 6x6 (README: 6x6 (2,2) 63,298,607 and
    (2,1) 227,378,442 were counted by the stem method)."""
    bench = shared_instances / "benchmark"
    for n in (4, 5):
        inst = read_instance(bench / f"pieces_{n}x{n}.txt")
        for x, y in itertools.product(range((n + 1) // 2), repeat=2):
            assert count_by_arms(inst, x, y).corolles == count_factorised(inst, x, y,
                                                                          3).corolles
    inst = read_instance(bench / "pieces_6x6.txt")
    assert count_by_arms(inst, 2, 2, threads=2).corolles == 63_298_607
    assert count_by_arms(inst, 2, 1, threads=2).corolles == 227_378_442
    assert count_by_arms(inst, 1, 1).corolles == count_factorised(inst, 1, 1, 3).corolles


def test_real_board_frame_zones(shared_instances):
    """The Eternity II corner and its neighbours, against the stem method's published counts
    (README: 108,936,800, 31,947,334,971 and 31,932,942,315)."""
    inst = read_instance(shared_instances / "e2pieces_jwortmann.txt")
    got = [count_by_arms(inst, x, y, threads=2).corolles for x, y in [(0, 0), (1, 0), (0, 1)]]
    assert got == [108_936_800, 31_947_334_971, 31_932_942_315]
