"""The library means what the command line means: `e2store solve --best INSTANCE` and
`e2store.solver.best.run_best(instance)` build the same plan (every option's default
declared once, in `e2store.solver.best`) and find the same boards."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces

from e2store.cli import main
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver import best as B
from e2store.solver.best import session

SHARED = Path(__file__).resolve().parents[2] / "shared" / "instances"
E2 = SHARED / "e2_gallicchio.puz"
FIELDS = ("order", "cell", "depth", "sig", "ia", "ib", "xi", "xs", "allow", "kbase", "jf",
          "qmin", "colk", "hq", "inner")


def _cli_plan(monkeypatch, *args) -> tuple[B.BestPlan, dict]:
    """The plan `e2store solve --best ARGS` builds, and its JSON report."""
    seen = []
    real = session.best_plan

    def spy(*a, **k):
        seen.append(real(*a, **k))
        return seen[-1]

    monkeypatch.setattr(session, "best_plan", spy)
    r = CliRunner().invoke(main, ["best", *map(str, args), "--json"])
    assert r.exit_code == 0, r.output
    assert len(seen) == 1
    return seen[0], json.loads(r.stdout.strip().splitlines()[-1])


def _same_plan(a: B.BestPlan, b: B.BestPlan) -> None:
    assert a.fixed == b.fixed and a.breaks == b.breaks and a.quota == b.quota
    assert (a.piece_rank is None) == (b.piece_rank is None)
    assert (a.K, a.full, a.hc0, a.sigs) == (b.K, b.full, b.hc0, b.sigs)
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def test_defaults_are_the_commands(tmp_path, monkeypatch):
    """No option given: the command's plan is `best_plan(instance)`'s, and `run_best`
    with the same limits finds the same boards, restart for restart."""
    monkeypatch.chdir(tmp_path)
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    write_e2store(inst, tmp_path / "u.e2s")
    inst = read_instance(tmp_path / "u.e2s")
    plan, report = _cli_plan(monkeypatch, tmp_path / "u.e2s", "--restarts", 3,
                             "--restart-nodes", 3000)
    _same_plan(plan, B.best_plan(inst))
    assert report["scan"] == B.DEFAULT_SCAN
    assert report["seed"] == B.DEFAULT_SEED and report["order"] == B.DEFAULT_ORDER
    assert Path(B.DEFAULT_BOARDS).exists()  # the default boards file, written here
    run = B.run_best(inst, restarts=3, restart_nodes=3000)
    d = run.to_dict()
    for key in ("scan", "breaks", "quota", "seed", "restarts", "nodes", "depths", "best"):
        got = {k: v for k, v in report["best"].items() if k != "url"} if key == "best" \
            else report[key]
        assert got == d[key], key


def test_the_options_resolve_alike(tmp_path, monkeypatch):
    """Options given on the command line and as library arguments: the same plan."""
    monkeypatch.chdir(tmp_path)
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 5))
    write_e2store(inst, tmp_path / "u.e2s")
    inst = read_instance(tmp_path / "u.e2s")
    fixed = tmp_path / "fixed.txt"
    cells = B.run_best(inst, restarts=1, restart_nodes=2000).best.board
    x, y = 2, 2
    fixed.write_text(f"{x} {y} {int(cells[y * 6 + x]) >> 2} {int(cells[y * 6 + x]) & 3}\n")
    plan, _ = _cli_plan(monkeypatch, tmp_path / "u.e2s", "--scan", "spiral-in", "--breaks",
                        "none", "--fixed", fixed, "--restarts", 1, "--restart-nodes", 500,
                        "--no-fill")
    _same_plan(plan, B.best_plan(inst, "spiral-in", {(x, y): int(cells[y * 6 + x])},
                                 breaks="none"))


@pytest.mark.skipif(not E2.exists(), reason="needs ../shared/e2_gallicchio.puz")
def test_eternity_ii_auto_options(tmp_path, monkeypatch):
    """On Eternity II `auto` means Blackwood's quota, and with all five clues the clues
    schedule: the same in both."""
    monkeypatch.chdir(tmp_path)
    inst = read_instance(E2)
    plan, report = _cli_plan(monkeypatch, E2, "--clues", "all", "--restarts", 1,
                             "--restart-nodes", 1000, "--kernel", "generic", "--no-fill")
    want = B.best_plan(inst, clues="all")
    _same_plan(plan, want)
    assert want.breaks == B.SCHEDULES[B.CLUES_SCHEDULE]
    assert report["quota"] == [13, 16, 10] and len(want.fixed) == 5


def test_a_dead_worker_is_a_child_failure_not_an_input_error():
    """A worker killed mid-run (out of memory, kill -9): `ChildFailedError`, an internal
    failure of a child, never taken for bad input (`ValueError`)."""
    import os
    import signal

    from e2store.errors import ChildFailedError

    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    killed = []

    def kill_one(r, run) -> None:
        if not killed and r.worker != os.getpid():
            killed.append(r.worker)
            os.kill(r.worker, signal.SIGKILL)

    with pytest.raises(ChildFailedError, match="worker process died") as err:
        B.run_best(inst, workers=2, restarts=200, restart_nodes=20_000, kernel="generic",
                   on_result=kill_one)
    assert not isinstance(err.value, ValueError) and killed


def test_a_resumed_run_on_two_workers_repeats_no_restart():
    """`done` (the restarts a boards file holds) is skipped for the whole run, by every
    worker: restarts 0..10 less {0, 2, 3, 6, 7}, none twice (a name clash once made the parent
    forget `done` after the first restart ended)."""
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    run = B.run_best(inst, workers=2, restarts=6, restart_nodes=2_000, kernel="generic",
                     done={0, 2, 3, 6, 7})
    assert sorted(r.restart for r in run.results) == [1, 4, 5, 8, 9, 10]
