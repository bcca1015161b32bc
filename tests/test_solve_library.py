"""`e2store solve` is one call of `e2store.solver.session.solve_search`: the same report
from the command and from the library, and the store's pruning chosen the same way."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.cli import main
from e2store.errors import SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.solver.session import search_method, solve_search

KEYS = ("solutions", "nodes", "complete", "stored", "scan")


def _cli(*args) -> dict:
    # the backtracker's command (`--engine auto` takes dlx on boards with identical pieces)
    r = CliRunner().invoke(main, ["solve", *map(str, args), "--engine", "backtrack", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args, kwargs", [
    ((), {}),
    (("--first",), {"first": True}),
    (("--no-symmetry-break", "--scan", "spiral-in"), {"symmetry_break": False,
                                                       "scan": "spiral-in"}),
    (("--max-nodes", 50), {"max_nodes": 50}),
])
def test_the_library_reports_what_the_command_does(tmp_path, args, kwargs):
    path = tmp_path / "i.e2s"
    write_e2store(random_instance(4, 4, 7), path)
    inst = read_instance(path)
    want = _cli(path, *args)
    scan = kwargs.pop("scan", "rowscan")
    got = solve_search(inst, scan, **kwargs).to_dict()
    assert {k: got[k] for k in KEYS} == {k: want[k] for k in KEYS}


def test_two_workers_and_a_saved_file(tmp_path):
    path = tmp_path / "i.e2s"
    write_e2store(random_instance(4, 4, 3), path)
    inst = read_instance(path)
    one = solve_search(inst, save=tmp_path / "one.parquet")
    two = solve_search(inst, workers=2)
    assert (one.solutions, one.nodes) == (two.solutions, two.nodes)
    assert (tmp_path / "one.parquet").exists()
    with pytest.raises(SolverError, match="complete search") as err:
        solve_search(inst, workers=2, first=True)
    assert err.value.option == "workers"


def test_the_store_prunes_as_the_command_chooses():
    assert search_method("auto", store=None, partial=True) is None
    assert search_method("auto", store="s", partial=False) == "closure"
    assert search_method("auto", store="s", partial=True) == "finals"
    assert search_method("auto", store="s", partial=False, finals_given=True) == "finals"
    with pytest.raises(SolverError, match="complete searches"):
        search_method("closure", store="s", partial=True)
    with pytest.raises(SolverError, match="expected one of"):
        search_method("fastest", store="s", partial=False)
