"""The plain search over several processes (`e2store.solver.workers`, `solve --workers`):
the same report as the one-process search (solutions in search order, nodes, first_nodes)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from e2store.cli import main
from e2store.errors import SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.generate import generate_instance
from e2store.solver.plan import build_plan, search_setup
from e2store.solver.search import solve
from e2store.solver.workers import solve_workers, top_prefixes


def _same(a, b) -> None:
    assert (a.solutions, a.nodes, a.first_nodes, a.complete) == (
        b.solutions, b.nodes, b.first_nodes, b.complete)
    assert np.array_equal(a.boards, b.boards)


def test_top_prefixes_cover_the_search_once():
    """Every solution lies below exactly one partial board, and the top walk's nodes plus
    the subtrees' nodes are the one search's nodes."""
    inst = generate_instance(5, 5, 2, 3, 3)
    order, _, _, _, roots = search_setup(inst, "rowscan", None, None)
    plan = build_plan(inst, order, roots[0])
    boards, at, top_nodes, k = top_prefixes(inst, plan, 20)
    assert len(boards) >= 20 or k == plan.n_depth - 1
    assert len({b.tobytes() for b in boards}) == len(boards)
    assert (np.diff(at) > 0).all() and at[-1] <= top_nodes
    total = top_nodes + sum(solve(inst, order, seed=b, symmetry_break=False).nodes
                            for b in boards)
    assert total == solve(inst, order).nodes


@pytest.mark.parametrize("w,h,seed,scan,workers", [(5, 5, 1, "rowscan", 2),
                                                   (6, 4, 2, "rowscan", 1),
                                                   (5, 4, 3, "spiral-in", 1)])
def test_workers_report_equals_one_process(w, h, seed, scan, workers):
    """Square and rectangular boards (one and two symmetry roots), several scan orders; the
    stored boards are the first `max_stored` in search order.  `workers=1` runs the same
    split in this process (the process pool is exercised by the first case and the CLI)."""
    inst = generate_instance(w, h, 2, 3, seed)
    one = solve(inst, scan, max_stored=3)
    assert one.solutions > 3  # the limit is exercised
    _same(solve_workers(inst, scan, workers=workers, max_stored=3), one)


def test_seeded_search_without_symmetry_break():
    inst = generate_instance(5, 5, 2, 3, 4)
    seed = {(0, 0): int(inst.solution[0, 0])}
    one = solve(inst, seed=seed, symmetry_break=False)
    _same(solve_workers(inst, seed=seed, symmetry_break=False, workers=1), one)
    almost = {(x, y): int(inst.solution[y, x]) for y in range(5) for x in range(5)
              if (x, y) != (4, 4)}  # one free cell: nothing to split
    _same(solve_workers(inst, seed=almost, workers=2), solve(inst, seed=almost))
    with pytest.raises(SolverError, match="workers 0"):
        solve_workers(inst, workers=0)


def test_cli_workers_gives_the_same_json(tmp_path):
    path = tmp_path / "g.e2s"
    write_e2store(generate_instance(5, 5, 2, 3, 1), path)
    runner = CliRunner()
    a = runner.invoke(main, ["solve", str(path), "--json"])
    b = runner.invoke(main, ["solve", str(path), "--json", "--workers", "2"])
    assert a.exit_code == 0 and b.exit_code == 0, (a.output, b.output)
    da, db = json.loads(a.stdout), json.loads(b.stdout)
    assert da.keys() == db.keys()
    for k in ("solutions", "nodes", "first_nodes", "first_solution", "stored"):
        assert da[k] == db[k], k
    r = runner.invoke(main, ["solve", str(path), "--workers", "2", "--first"])
    assert r.exit_code == 2 and "complete search" in r.output
