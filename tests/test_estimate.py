"""Search-size estimates (e2store.solver.estimate): exact when every prefix is sampled, unbiased
and reproducible when not, and the `solve --estimate` command."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.cli import main
from e2store.errors import SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.solver.estimate import estimate
from e2store.solver.scan import scan_order
from e2store.solver.search import solve

ALL = 10**9  # more samples than any test board has prefixes


def _same_as_solve(est, want) -> None:
    assert est.exact
    assert est.nodes == want.nodes and est.solutions == want.solutions
    assert est.nodes_stderr == 0 and est.solutions_stderr == 0
    assert est.sampled == est.prefixes


@pytest.mark.parametrize("w, h, seed", [(3, 3, 0), (4, 3, 1), (3, 4, 2), (4, 4, 3), (2, 5, 4)])
@pytest.mark.parametrize("scan", ["rowscan", "spiral-in", "diagonal"])
def test_every_prefix_depth_gives_the_exact_counts(w, h, seed, scan):
    """Sampling every prefix at any depth K is a complete search: the nodes above K plus
    the subtrees' nodes and solutions equal `solve`'s, with and without the symmetry break
    (a non-square board has two symmetry roots)."""
    inst = random_instance(w, h, seed)
    for brk in (True, False):
        want = solve(inst, scan, symmetry_break=brk)
        n_free = w * h - (1 if brk else 0)
        for k in range(n_free):
            est = estimate(inst, scan, samples=ALL, symmetry_break=brk, depth=k)
            assert est.depth == k
            _same_as_solve(est, want)


def test_seeded_and_custom_order_estimates_are_exact():
    inst = random_instance(4, 4, 5)
    want = solve(inst, symmetry_break=False)
    seed = {(x, y): int(want.boards[0][y * 4 + x]) for x, y in [(1, 1), (2, 1)]}
    order = scan_order("columnscan", 4, 4)[::-1].copy()
    for scan in ("rowscan", order):
        _same_as_solve(estimate(inst, scan, samples=ALL, seed=seed),
                       solve(inst, scan, seed=seed))


def test_default_depth_has_enough_prefixes_and_a_sample_of_them():
    inst = random_instance(4, 4, 3)
    est = estimate(inst, samples=5, prefix_factor=2)
    assert est.prefixes >= 10 or est.depth == 14
    assert est.sampled == min(5, est.prefixes)
    coarser = estimate(inst, samples=5, prefix_factor=2, depth=max(0, est.depth - 1))
    assert coarser.prefixes < 10


@pytest.mark.parametrize("n,sols", [(4, 9), (5, 4),
                                    pytest.param(6, 65, marks=pytest.mark.slow)])  # 12 s
def test_benchmark_counts_when_every_prefix_is_sampled(shared_instances, n, sols):
    """DESIGN.md / the published study: 4x4 9 solutions, 5x5 4, 6x6 65 (1.45e7 nodes)."""
    inst = read_instance(shared_instances / "benchmark" / f"pieces_{n}x{n}.txt")
    est = estimate(inst, samples=ALL, depth=6)
    _same_as_solve(est, solve(inst))
    assert est.solutions == sols


def test_sampled_estimate_is_close_and_reproducible(shared_instances):
    """6x6 from 300 of its prefixes: within 4 standard errors of the true 14,518,614
    nodes and 65 solutions; the same seed gives the same figures, another seed others."""
    inst = read_instance(shared_instances / "benchmark" / "pieces_6x6.txt")
    est = estimate(inst, samples=300, rng_seed=1)
    assert not est.exact and est.sampled == 300 and est.prefixes >= 3000
    assert abs(est.nodes - 14_518_614) < 4 * est.nodes_stderr
    assert abs(est.solutions - 65) < 4 * est.solutions_stderr
    assert 0 < est.nodes_stderr < 0.2 * est.nodes
    again = estimate(inst, samples=300, rng_seed=1)
    keys = ("depth", "prefixes", "prefix_nodes", "nodes", "nodes_stderr", "solutions")
    assert all(getattr(again, k) == getattr(est, k) for k in keys)
    other = estimate(inst, samples=300, rng_seed=2)
    assert other.nodes != est.nodes
    assert est.seconds > 0


def test_bad_arguments_raise_solver_errors():
    inst = random_instance(3, 3, 0)
    with pytest.raises(SolverError, match="samples 0"):
        estimate(inst, samples=0)
    with pytest.raises(SolverError, match=r"prefix depth 8 \(expected 0..7"):
        estimate(inst, depth=8)
    with pytest.raises(SolverError, match="not a permutation"):
        estimate(inst, np.zeros((9, 2), dtype=np.int64))


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_estimate(tmp_path):
    inst = random_instance(4, 3, 1)
    path = tmp_path / "rnd.e2s"
    write_e2store(inst, path)
    r = _run("solve", path, "--estimate", ALL, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    want = solve(inst)
    assert d["exact"] and d["nodes"] == want.nodes and d["solutions"] == want.solutions
    assert d["instance"] == inst.id and d["symmetry_break"]
    r = _run("solve", path, "--estimate", 3, "--estimate-seed", 4, "--no-symmetry-break")
    assert r.exit_code == 0, r.output
    assert "3 of them sampled (seed 4)" in r.stdout and "symmetry   none" in r.stdout
    assert "nodes      " in r.stdout and "s in one process" in r.stdout
    r = _run("solve", path, "--estimate", 2, "--estimate-depth", 3, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["depth"] == 3
    r = _run("solve", path, "--estimate", 2, "--estimate-depth", 11)
    assert r.exit_code == 2 and "prefix depth 11 (expected 0..10" in r.stderr
    for bad in (["--estimate", 5, "--first"], ["--estimate-seed", 3], ["--estimate", 0],
                ["--estimate-depth", 2]):
        r = _run("solve", path, *bad)
        assert r.exit_code == 2 and not r.stdout, bad


def _reservoir_one_by_one(stream: list[int], size: int, seed: int) -> list[int]:
    """Algorithm R, one row at a time (the twin of `_Reservoir`)."""
    rng = np.random.default_rng(seed)
    kept: list[int] = []
    for i, x in enumerate(stream):
        if i < size:
            kept.append(x)
            continue
        j = int(np.floor(rng.random() * (i + 1)))
        if j < size:
            kept[j] = x
    return kept


@pytest.mark.parametrize("size, n, seed", [(1, 50, 0), (5, 3, 1), (7, 100, 2), (20, 1000, 3)])
def test_reservoir_matches_algorithm_r_row_by_row(size, n, seed):
    from e2store.solver.estimate import _Reservoir

    keep = _Reservoir(size, 2, np.random.default_rng(seed))
    chunks = np.random.default_rng(99).integers(1, 40, size=n)
    start = 0
    owner_of = {}
    for c in chunks:
        if start >= n:
            break
        rows = np.arange(start, min(n, start + c))
        keep.add(np.stack([rows, -rows], axis=1), owner=int(start % 3))
        owner_of.update((int(r), int(start % 3)) for r in rows)
        start += len(rows)
    want = _reservoir_one_by_one(list(range(n)), size, seed)
    assert keep.rows[:, 0].tolist() == want and keep.seen == n
    assert (keep.rows[:, 1] == -keep.rows[:, 0]).all()
    assert keep.owner.tolist() == [owner_of[r] for r in want]
