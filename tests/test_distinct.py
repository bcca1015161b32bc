"""Identical pieces: `solve(..., distinct=True)` against a brute force over every
distinction grouped by hand into distinct layouts (issue 24)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from naive import random_board_pieces
from naive_solver import naive_solve, symmetry_class_representative

from e2store.cli import main
from e2store.errors import SolverError
from e2store.instance.classes import layout_factor, next_copy, piece_classes, rotation_period
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.solver.plan import build_plan, lowest_corner
from e2store.solver.scan import scan_order
from e2store.solver.search import solve
from e2store.solver.workers import solve_workers


def looks(pieces, board, width: int, height: int) -> tuple:
    """A solution (packed cells) as the colours each cell shows: identical pieces and
    equivalent rotations are the same layout."""
    out = []
    for v in board:
        piece = pieces[v >> 2]
        r = v & 3
        out.append(tuple(piece[(s - r) % 4] for s in range(4)))
    return tuple(out)


def turned(layout: tuple, width: int, height: int, quarter: int) -> tuple:
    """`layout` turned `quarter` quarter turns clockwise, by hand: (x, y) goes to
    (H-1-y, x) and a piece's west side comes to face north."""
    cells = {(i % width, i // width): c for i, c in enumerate(layout)}
    w, h = width, height
    for _ in range(quarter):
        cells = {(h - 1 - y, x): (c[3], c[0], c[1], c[2]) for (x, y), c in cells.items()}
        w, h = h, w
    return tuple(cells[(i % w, i // w)] for i in range(w * h))


def naive_distinct(pieces, width: int, height: int) -> tuple[int, int]:
    """(distinct layouts up to board rotation, raw solutions with the lowest corner piece
    fixed as the product's symmetry break fixes it), from every raw solution."""
    order = [(x, y) for y in range(height) for x in range(width)]
    sols, _ = naive_solve(pieces, width, height, order)
    turns = (0, 1, 2, 3) if width == height else (0, 2)
    orbits = {min(turned(looks(pieces, s, width, height), width, height, q) for q in turns)
              for s in sols}
    raw = sum(symmetry_class_representative(s, pieces, width, height) for s in sols)
    return len(orbits), raw


def instance(width: int, height: int, n_frame: int, n_inner: int, seed: int) -> Instance:
    pcs = random_board_pieces(width, height, n_frame, n_inner, seed)
    return Instance(f"dup{width}x{height}s{seed}", width, height, np.array(pcs, dtype=np.int64))


CASES = [(2, 2, 1, 1, 0), (3, 2, 1, 1, 0), (3, 2, 2, 1, 0), (2, 3, 1, 1, 1), (3, 3, 1, 2, 0),
         (3, 3, 2, 1, 0), (3, 3, 2, 2, 0), (3, 3, 1, 1, 2), (4, 3, 2, 2, 2), (4, 3, 2, 3, 0),
         (4, 3, 1, 2, 1), (3, 4, 2, 2, 1)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "{}x{} f{} i{} s{}".format(*c))
def test_distinct_equals_the_brute_force(case):
    inst = instance(*case)
    w, h = case[:2]
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    assert len(set(piece_classes(inst.pieces).tolist())) < inst.n_pieces  # duplicates
    want_distinct, want_raw = naive_distinct(pieces, w, h)
    for kernel in ("generic", "unrolled"):
        r = solve(inst, kernel=kernel, distinct=True)
        assert (r.distinct_solutions, r.solutions) == (want_distinct, want_raw), kernel
        assert r.distinct["distinct_solutions"] == want_distinct
        assert r.stored == want_distinct
        # the boards kept are solutions, and distinct up to board rotation
        keys = {min(turned(looks(pieces, b.tolist(), w, h), w, h, q)
                    for q in ((0, 1, 2, 3) if w == h else (0, 2))) for b in r.boards}
        assert len(keys) == want_distinct
    plain = solve(inst, kernel="generic")
    assert plain.solutions == want_raw
    assert r.nodes <= plain.nodes


def test_distinct_without_symmetry_break_and_with_a_seed():
    inst = instance(3, 3, 1, 2, 0)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    order = [(x, y) for y in range(3) for x in range(3)]
    sols, _ = naive_solve(pieces, 3, 3, order)
    layouts = {looks(pieces, s, 3, 3) for s in sols}
    r = solve(inst, symmetry_break=False, distinct=True, kernel="generic")
    assert (r.distinct_solutions, r.solutions) == (len(layouts), len(sols))
    # a seed naming a higher copy of a class: the same layouts as its lowest copy
    cls = piece_classes(inst.pieces)
    dup = next(p for p in range(inst.n_pieces) if cls[p] != p)
    board = next(s for s in sols if any(v >> 2 == dup for v in s))
    cell = next(i for i, v in enumerate(board) if v >> 2 == dup)
    seed = {(cell % 3, cell // 3): board[cell]}
    want = {looks(pieces, s, 3, 3) for s in sols
            if looks(pieces, s, 3, 3)[cell] == looks(pieces, board, 3, 3)[cell]}
    raw = sum(s[cell] == board[cell] for s in sols)
    got = solve(inst, seed=seed, distinct=True, kernel="generic")
    assert (got.distinct_solutions, got.solutions) == (len(want), raw)
    with pytest.raises(SolverError, match="without a seed"):
        solve(inst, seed=seed, symmetry_break=True, distinct=True)


@pytest.mark.parametrize("size,colours,seed", [(4, (2, 2), 0), (5, (2, 4), 0), (5, (3, 3), 2)])
def test_distinct_on_bigger_boards_equals_the_grouped_raw_search(size, colours, seed):
    """Boards too big for the pure-Python brute force: the raw search (itself checked
    against it) over every distinction, grouped by hand."""
    inst = instance(size, size, *colours, seed)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    plain = solve(inst, symmetry_break=False, kernel="generic", max_stored=10**6)
    assert plain.stored == plain.solutions
    orbits = {min(turned(looks(pieces, b.tolist(), size, size), size, size, q)
                  for q in range(4)) for b in plain.boards}
    r = solve(inst, distinct=True, max_stored=0)
    assert r.distinct_solutions == len(orbits)
    assert r.solutions * 4 == plain.solutions  # the raw count with the corner fixed
    if size == 5 and seed == 0:
        par = solve_workers(inst, workers=2, distinct=True, max_stored=0)
        assert (par.distinct_solutions, par.solutions, par.nodes) == (
            r.distinct_solutions, r.solutions, r.nodes)


def test_classes_periods_and_factor():
    pcs = np.array([[0, 0, 1, 2], [0, 0, 2, 1], [3, 3, 3, 3], [4, 5, 4, 5], [5, 4, 5, 4],
                    [1, 2, 0, 0]], dtype=np.int64)
    assert piece_classes(pcs).tolist() == [0, 1, 2, 3, 3, 0]
    assert rotation_period(pcs).tolist() == [4, 4, 1, 2, 2, 4]
    assert next_copy(pcs).tolist() == [5, -1, -1, 4, -1, -1]
    # classes {0, 5} and {3, 4}: 2! * 2!, rotations 4 (piece 2) * 2 * 2 (pieces 3, 4)
    assert layout_factor(pcs) == 2 * 2 * 4 * 2 * 2
    assert layout_factor(pcs, [0]) == 2 * 4 * 2 * 2


def test_distinct_plan_keeps_one_rotation_per_look():
    inst = instance(3, 3, 1, 1, 0)
    order = scan_order("rowscan", 3, 3)
    plain, dist = build_plan(inst, order, {}), build_plan(inst, order, {}, True)
    period = rotation_period(inst.pieces)
    kept = set(dist.cand.reshape(-1, 8)[:, 0].tolist())
    assert all(v & 3 < period[v >> 2] for v in kept)
    assert kept == {v for v in plain.cand.reshape(-1, 8)[:, 0].tolist()
                    if v & 3 < period[v >> 2]}


def test_cli_distinct_json(tmp_path):
    inst = instance(3, 3, 1, 2, 0)
    path = tmp_path / "dup.e2s"
    write_e2store(inst, path)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    want = naive_distinct(pieces, 3, 3)
    res = CliRunner().invoke(main, ["solve", str(path), "--all", "--distinct", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert (d["distinct_solutions"], d["solutions"]) == want
    assert d["distinct"]["raw_solutions"] == want[1]
    text = CliRunner().invoke(main, ["solve", str(path), "--all", "--distinct"])
    assert text.exit_code == 0 and f"{want[0]:,} distinct" in text.output
    assert f"piece {lowest_corner(inst, True)[0]} fixed" in text.output
    for bad in (["--openings", str(tmp_path / "o.parquet")], ["--store", str(tmp_path / "s")]):
        res = CliRunner().invoke(main, ["solve", str(path), "--all", "--distinct", *bad])
        assert res.exit_code == 2 and "--distinct" in res.output, res.output


@pytest.mark.parametrize("clue", [1, 3])
def test_clue_subtree_raw_count_equals_the_raw_search(shared_instances, clue):
    """On an official clue puzzle, below its first distinct solution's first two rows and
    two cells (seeded, so the raw search is small): the raw count `--distinct` derives equals
    the raw search's, and the distinct layouts those of its solutions grouped by hand."""
    from e2store.instance.formats import read_instance

    inst = read_instance(shared_instances / f"clue{clue}_jwortmann.txt")
    w, h = inst.width, inst.height
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    board = solve(inst, first=True, distinct=True).boards[0]
    seed = {(c % w, c // w): int(board[c]) for c in range(2 * w + 2)}
    plain = solve(inst, seed=seed, kernel="generic", max_stored=10**6)
    assert 0 < plain.solutions == plain.stored
    got = solve(inst, seed=seed, distinct=True, max_stored=0)
    assert got.solutions == plain.solutions
    assert got.distinct_solutions == len({looks(pieces, b.tolist(), w, h)
                                         for b in plain.boards})
    assert got.nodes < plain.nodes


@pytest.mark.parametrize("case,hammings", [((3, 3, 1, 2, 0), (1, 2)), ((4, 3, 2, 2, 2), (1, 2)),
                                           ((4, 4, 2, 2, 0), (1,))],
                         ids=lambda c: "{}x{} f{} i{} s{}".format(*c) if len(c) == 5 else None)
def test_distinct_corolle_counts_equal_the_twin(case, hammings):
    """`count_corolles(..., distinct=True)` against every corolle of the naive
    enumerator grouped by the colours its cells show."""
    from naive import naive_corolles

    from e2store.corolles.enumerate import count_corolles

    inst = instance(*case)
    w, h = case[:2]
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for hamming in hammings:
        for x, y in ((0, 0), (1, 1), (w - 1, 1)):
            raw = naive_corolles(pieces, w, h, x, y, hamming)
            groups = {frozenset((cell, tuple(pieces[p][(s - r) % 4] for s in range(4)))
                                for cell, p, r in c) for c in raw}
            got = count_corolles(inst, x, y, hamming, distinct=True)
            assert (got.corolles, got.raw) == (len(groups), len(raw)), (hamming, x, y)
            assert count_corolles(inst, x, y, hamming, threads=2, distinct=True).corolles == (
                len(groups))


def test_cli_count_distinct(tmp_path):
    inst = instance(4, 3, 2, 2, 2)
    path = tmp_path / "dup.e2s"
    write_e2store(inst, path)
    plain = CliRunner().invoke(main, ["count", str(path), "--hamming", "2", "--at", "1,1",
                                      "--method", "enumerate", "--json"])
    res = CliRunner().invoke(main, ["count", str(path), "--hamming", "2", "--at", "1,1",
                                    "--distinct", "--json"])
    assert plain.exit_code == 0 and res.exit_code == 0, res.output
    d, p = json.loads(res.stdout), json.loads(plain.stdout)
    assert d["distinct"] and d["raw_corolles"] == p["corolles"] > d["corolles"] > 0
    bad = CliRunner().invoke(main, ["count", str(path), "--hamming", "3", "--distinct",
                                    "--method", "arms"])
    assert bad.exit_code == 2 and "--distinct" in bad.output


def test_estimate_of_a_distinct_search(tmp_path):
    """Sampling every prefix, the estimate is exact: the distinct search's nodes and the
    layouts it finds; from the CLI it names the raw solutions each stands for."""
    from e2store.solver.estimate import estimate

    inst = instance(4, 4, 2, 2, 0)
    r = solve(inst, distinct=True, max_stored=0, kernel="generic")
    est = estimate(inst, samples=10**6, distinct=True, kernel="generic")
    assert est.exact and (est.nodes, est.solutions) == (r.nodes, r.distinct["layouts_found"])
    assert est.raw_per_layout * est.solutions == r.solutions
    path = tmp_path / "dup.e2s"
    write_e2store(inst, path)
    res = CliRunner().invoke(main, ["solve", str(path), "--estimate", "50", "--distinct"])
    assert res.exit_code == 0, res.output
    assert f"each standing for {est.raw_per_layout:,} raw" in res.output
    assert f"piece {lowest_corner(inst, True)[0]} fixed" in res.output
