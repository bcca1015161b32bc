"""`e2store score --improve` (issue 56, item 3): a board filled, then its tail re-solved
exactly, printed before and after with the new board's URL; never lower; bad input one
line, exit 2."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from e2store.boards.table import score
from e2store.cli import main
from e2store.instance.formats import read_instance


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _write(path, cells: np.ndarray, w: int) -> None:
    """A board as `x y piece r` lines (holes left out)."""
    path.write_text("".join(f"{c % w} {c // w} {int(v) >> 2} {int(v) & 3}\n"
                            for c, v in enumerate(cells) if v >= 0))


def test_improve_finds_the_known_optimum_of_a_spoiled_tail(tmp_path):
    """A solved 6x6 board with two inner pieces of its last scanned row swapped (its tail
    known to be suboptimal: the solution scores every join) and a hole: --improve gives the
    full score back, says what it was and that the tail was proven optimal."""
    g = tmp_path / "g.e2s"
    assert run("generate-instance", "--size", 6, "--frame-colours", 3, "--inner-colours", 5,
               "--seed", 4, "-o", g).exit_code == 0
    inst = read_instance(g)
    sol = np.asarray(inst.solution).reshape(-1).astype(np.int64)
    joins = score(inst, sol).joins
    spoiled = sol.copy()
    a, b = 1 * 6 + 1, 1 * 6 + 3  # (1, 1) and (3, 1): inner, in the scan's last 16 cells
    spoiled[a], spoiled[b] = sol[b], sol[a]
    spoiled[1 * 6 + 2] = -1  # and a hole
    before = score(inst, spoiled).matched
    assert before < joins
    board = tmp_path / "board.txt"
    _write(board, spoiled, 6)
    r = run("score", g, board, "--improve", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["score"] == joins and d["improved_from"] <= joins and d["tail_k"] >= 16
    assert d["filled_from"] == before and d["holes_filled"] == 1
    text = run("score", g, board, "--improve")
    assert text.exit_code == 0
    assert f"improved   {d['improved_from']} -> {joins}" in text.output
    assert "proven optimal" in text.output


def test_improve_never_lowers_and_refuses_bad_input(tmp_path):
    g = tmp_path / "g.e2s"
    assert run("generate-instance", "--size", 5, "--frame-colours", 3, "--inner-colours", 4,
               "--seed", 2, "-o", g).exit_code == 0
    inst = read_instance(g)
    sol = np.asarray(inst.solution).reshape(-1)
    board = tmp_path / "board.txt"
    _write(board, sol, 5)
    d = json.loads(run("score", g, board, "--improve", "--json").stdout)
    assert d["score"] == d["improved_from"] == score(inst, sol).joins  # already optimal
    other = tmp_path / "big.txt"
    other.write_text("6 6 0 0\n")  # a cell of a larger board
    r = run("score", g, other, "--improve")
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
