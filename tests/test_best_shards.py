"""Shards of a best-score run's restarts (issue 48): `solve --best --shard K/N` runs
restarts k with k % N == K, each drawn from (seed, k) as unsharded; the shards of one N
write one (arm, seed) of a boards dataset at once, and a rerun of a shard repeats none."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces

from e2store.boards.dataset import boards_sink, dataset_parts, read_boards_dataset
from e2store.cli import main
from e2store.errors import SolverError
from e2store.files import BusyError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import run_best, solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 5000, "kernel": "generic"}
SAME = ("depth", "score", "mismatches", "holes", "seed", "restart", "nodes", "source")


@pytest.fixture
def inst(tmp_path) -> Instance:
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp_path / "u.e2s")
    return read_instance(tmp_path / "u.e2s")


def rows(b) -> list[tuple]:
    return sorted((int(b.stats["restart"][i]), tuple(b.cells[i].tolist()),
                   *(b.stats[k][i] for k in SAME)) for i in range(len(b)))


def test_run_best_shards_split_the_restarts(inst):
    whole = run_best(inst, restarts=6, seed=3, **RUN)
    a = run_best(inst, restarts=3, seed=3, shard=(0, 2), **RUN)
    b = run_best(inst, restarts=3, seed=3, shard=(1, 2), **RUN, done={1})
    assert [r.restart for r in a.results] == [0, 2, 4]
    assert [r.restart for r in b.results] == [3, 5, 7]
    got = {r.restart: r for r in a.results + b.results}
    for r in whole.results:
        if r.restart in got:
            assert (got[r.restart].board.tolist(), got[r.restart].score) == (
                r.board.tolist(), r.score)
    with pytest.raises(SolverError, match="shard 2/2"):
        run_best(inst, restarts=1, shard=(2, 2), **RUN)


def test_two_shards_together_are_the_unsharded_run(inst, tmp_path):
    solve_best(inst, tmp_path / "whole", restarts=6, seed=1, fill=False, **RUN)
    out = tmp_path / "ds"
    with boards_sink(out, inst, 1, "x", (0, 2)):  # the shards of one (arm, seed) at once
        with boards_sink(out, inst, 1, "x", (1, 2)):
            with pytest.raises(BusyError, match="shard"):
                with boards_sink(out, inst, 1, "x", (1, 2)):
                    pass
    for k in (0, 1):
        d = solve_best(inst, out, restarts=3, seed=1, fill=False, arm="x", shard=(k, 2),
                       **RUN)
        assert d["shard"] == [k, 2] and d["restarts"] == 3
    assert rows(read_boards_dataset(out, inst).boards) == rows(
        read_boards_dataset(tmp_path / "whole", inst).boards)
    # a shard rerun repeats none of its restarts, and reads only its own as done
    d = solve_best(inst, out, restarts=2, seed=1, fill=False, arm="x", shard=(1, 2), **RUN)
    assert d["restarts"] == 2
    assert [p.restart for p in dataset_parts(out)] == [0, 1, 2, 3, 4, 5, 7, 9]


def test_the_command_line_shards_and_arms(inst, tmp_path):
    f = tmp_path / "u.e2s"
    out = tmp_path / "ds"
    base = ["best", str(f), "--restarts", "2", "--restart-nodes", "5000",
            "--breaks", "20,24,28,30,32", "--no-fill", "--kernel", "generic"]
    r = CliRunner().invoke(main, [*base, "--shard", "1/3", "--arm", "a1", "-o", f"{out}/",
                                  "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d["arm"] == "a1" and d["shard"] == [1, 3]
    assert [(p.arm, p.restart) for p in dataset_parts(out)] == [("a1", 1), ("a1", 4)]
    r = CliRunner().invoke(main, [*base, "--shard", "1/3", "--arm", "a1", "-o", f"{out}/"])
    assert r.exit_code == 0 and "shard 1/3" in r.output
    r = CliRunner().invoke(main, [*base, "--arm", "a1", "-o", str(tmp_path / "b.parquet")])
    assert r.exit_code != 0 and "boards file" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(main, ["solve", str(f), "--arm", "a1"])
    assert r.exit_code != 0 and "--arm needs --best" in r.output
