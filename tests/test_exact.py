"""The exact models (issue 40): CNF model counting, the DuckDB join, SAT enumeration and
MaxSAT, against the naive twins and brute force; `crosscheck` and `export-cnf`."""

from __future__ import annotations

import ast
import itertools
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SHARED
from helpers import random_instance
from naive import naive_corolles
from naive_best import naive_score, unsolvable_pieces
from naive_solver import naive_solve

from e2store.cli import main
from e2store.corolles.factorised import count_factorised
from e2store.exact import count_region, diamond, encode, run_model
from e2store.exact.check import board_cnf, frame_ok
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance

pytest.importorskip("pyganak", reason="the exact extra is not installed")
pytest.importorskip("pysat", reason="the exact extra is not installed")

EXACT = Path(__file__).resolve().parents[1] / "e2store" / "exact"


def test_exact_imports_no_kernel():
    """The second opinion shares no code with the kernels: the models of e2store.exact
    import only the instance model, the errors, the child-process helper, the lazy package
    facade and themselves.  Only `crosscheck` (e2store's side of a check, run in a child
    process) and `solve` (SAT's report as the backtracker's) reach the solver."""
    allowed = ("e2store.exact", "e2store.errors", "e2store.instance.model",
               "e2store.processes", "e2store.lazy", "e2store.files")  # files: atomic writes
    for path in EXACT.glob("*.py"):
        if path.name in ("crosscheck.py", "solve.py"):  # their kernel imports: in functions
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert "numba" not in name, (path.name, name)
                if name.startswith("e2store"):
                    assert name.startswith(allowed), (path.name, name)


CASES = [(3, 3, 1), (4, 3, 2), (4, 4, 3), (5, 4, 4), (5, 5, 5)]


@pytest.mark.parametrize("w,h,seed", CASES)
def test_region_counts_equal_the_naive_enumerator(w, h, seed):
    inst = random_instance(w, h, seed, n_frame=2, n_inner=3 if w * h < 20 else 8)
    pieces = [tuple(map(int, p)) for p in inst.pieces]
    rnd = random.Random(seed)
    for hamming in (1, 2):
        x, y = rnd.randrange(w), rnd.randrange(h)
        want = len(naive_corolles(pieces, w, h, x, y, hamming))
        cells = diamond(w, h, x, y, hamming)
        assert count_region(inst, cells, centre=(x, y)).count == want, (hamming, x, y)
        if hamming == 1 or w * h < 20:  # ganak: 1-5 s of spawn, preprocessing and count
            assert run_model("count", encode(inst, cells), seconds=120).count == want


def test_sql_counts_of_random_5x5_boards_equal_the_kernel():
    """50 random 5x5 boards, one random cell each, hamming 1 or 2: the DuckDB join gives
    the factorised kernel's count, and on every tenth board ganak does too."""
    rnd = random.Random(40)
    for seed in range(50):
        inst = random_instance(5, 5, 1000 + seed, n_frame=2, n_inner=rnd.choice((4, 5)))
        x, y, hamming = rnd.randrange(5), rnd.randrange(5), rnd.choice((1, 2))
        want = count_factorised(inst, x, y, hamming).corolles
        cells = diamond(5, 5, x, y, hamming)
        assert count_region(inst, cells, centre=(x, y)).count == want, (seed, x, y, hamming)
        if seed % 10 == 0:
            assert run_model("count", encode(inst, cells), seconds=120).count == want


@pytest.mark.parametrize("w,h,seed", [(3, 3, 7), (4, 3, 8), (4, 4, 9)])
def test_sat_enumeration_equals_brute_force(w, h, seed):
    inst = random_instance(w, h, seed, n_frame=2, n_inner=2)
    pieces = [tuple(map(int, p)) for p in inst.pieces]
    order = [(x, y) for y in range(h) for x in range(w)]
    sols, _ = naive_solve(pieces, w, h, order)
    r = run_model("enumerate", board_cnf(inst), seconds=120)
    got = {tuple(b[f"{x},{y}"] for x, y in order) for b in r.solutions}
    assert r.count == len(sols) and got == set(sols)


def _brute_best(pieces, w, h) -> int:
    """Best score of a 3x3 board over every legal board (corners, borders, centre)."""
    kinds = {0: [], 1: [], 2: []}
    for i, p in enumerate(pieces):
        kinds[min(2, sum(1 for c in p if c == 0))].append(i)
    corners, borders, centre = kinds[2], kinds[1], kinds[0]
    ccells, bcells = [(0, 0), (2, 0), (2, 2), (0, 2)], [(1, 0), (2, 1), (1, 2), (0, 1)]
    best = -1
    probe = Instance("probe", w, h, pieces)
    for cs in itertools.permutations(corners):
        for bs in itertools.permutations(borders):
            for r in range(4):
                board = {(1, 1): centre[0] * 4 + r}
                for cell, p in [*zip(ccells, cs, strict=True), *zip(bcells, bs, strict=True)]:
                    board[cell] = next(p * 4 + q for q in range(4)
                                       if frame_ok(probe, {cell: p * 4 + q}))
                flat = [board[(x, y)] for y in range(h) for x in range(w)]
                best = max(best, naive_score(pieces, w, h, flat)[0])
    return best


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_maxsat_optimum_equals_brute_force(seed):
    pieces = unsolvable_pieces(3, 3, seed, n_frame=2, n_inner=3)
    inst = Instance("u3", 3, 3, pieces)
    r = run_model("optimum", board_cnf(inst, soft=True), seconds=120)
    assert r.optimum == _brute_best([tuple(map(int, p)) for p in inst.pieces], 3, 3)
    flat = [r.solutions[0][f"{x},{y}"] for y in range(3) for x in range(3)]
    assert naive_score([tuple(map(int, p)) for p in inst.pieces], 3, 3, flat)[0] == r.optimum


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_export_cnf_round_trip(tmp_path):
    """A SAT solver's model of the exported file, read back through the file's comment
    lines, is a valid board."""
    from pysat.formula import CNF
    from pysat.solvers import Solver

    inst = random_instance(4, 4, 3, n_frame=2, n_inner=3)
    path = tmp_path / "b.e2s"
    write_e2store(inst, path)
    out = tmp_path / "b.cnf"
    r = run("export-cnf", path, "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    meaning = {}
    for line in text.splitlines():
        if line.startswith("c cell "):
            cell, pairs = line[len("c cell "):].split(": ")
            x, y = map(int, cell.split(","))
            for pair in pairs.split():
                var, pr = pair.split("=")
                p, rot = pr.split("r")
                meaning[int(var)] = ((x, y), int(p) * 4 + int(rot))
    with Solver(name="cadical195", bootstrap_with=CNF(from_string=text).clauses) as s:
        assert s.solve()
        board = dict(meaning[v] for v in s.get_model() if v in meaning)
    flat = [board[(x, y)] for y in range(4) for x in range(4)]
    pieces = [tuple(map(int, p)) for p in inst.pieces]
    assert naive_score(pieces, 4, 4, flat)[:2] == (24, 24)
    assert sorted(v // 4 for v in flat) == list(range(16))
    r = run("export-cnf", path, "--region", "1,1", "--hamming", "1", "-o", tmp_path / "r.cnf")
    assert r.exit_code == 0, r.output
    assert "p cnf" in (tmp_path / "r.cnf").read_text()


def test_crosscheck_agrees_and_reports_a_disagreement(tmp_path):
    inst = random_instance(4, 4, 5, n_frame=2, n_inner=3)
    path = tmp_path / "b.e2s"
    write_e2store(inst, path)
    r = run("crosscheck", path, "--hamming", "1", "--at", "1,1", "--model", "sql", "--json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)
    assert row["status"] == "agree" and row["models"]["sql"] == row["expected"] > 0
    r = run("crosscheck", path, "--hamming", "1", "--at", "1,1", "--model", "sql",
            "--expect", row["expected"] + 1)
    assert r.exit_code == 1 and "disagree" in r.output
    r = run("crosscheck", path, "--solutions", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["status"] == "agree"


@pytest.mark.parametrize("args,message", [
    (["--hamming", "1", "--at", "9,9"], "off the"),
    (["--hamming", "1", "--model", "mip"], "mip"),
    ([], "exactly one of"),
    (["--solutions", "--best"], "exactly one of"),
])
def test_crosscheck_bad_input_is_one_line(tmp_path, args, message):
    path = tmp_path / "b.e2s"
    write_e2store(random_instance(4, 4, 5), path)
    r = run("crosscheck", path, *args)
    assert r.exit_code == 2 and message in r.output, r.output


def test_export_cnf_region_off_the_board(tmp_path):
    path = tmp_path / "b.e2s"
    write_e2store(random_instance(4, 4, 5), path)
    r = run("export-cnf", path, "--region", "4,0", "-o", tmp_path / "x.cnf")
    assert r.exit_code == 2 and "off the 4x4 board" in r.output
    assert not (tmp_path / "x.cnf").exists()


@pytest.mark.skipif(not (SHARED / "benchmark").exists(), reason="needs ../shared")
def test_benchmark_4x4_published_counts_and_solutions():
    from e2store.instance.formats import read_instance

    inst = read_instance(SHARED / "benchmark" / "pieces_4x4.txt")
    want = {1: [56, 294, 294, 797], 2: [708, 1268, 1301, 320]}  # DESIGN.md
    for h, counts in want.items():
        for (x, y), n in zip([(0, 0), (1, 0), (0, 1), (1, 1)], counts, strict=True):
            assert count_region(inst, diamond(4, 4, x, y, h), centre=(x, y)).count == n
    assert run_model("enumerate", board_cnf(inst, symmetry_break=True)).count == 9
    assert run_model("enumerate", board_cnf(inst)).count == 36


def test_out_of_reach_is_said_not_hung():
    inst = random_instance(6, 6, 2, n_frame=2, n_inner=2)
    from e2store.errors import OutOfReachError

    with pytest.raises(OutOfReachError, match="did not finish"):
        run_model("enumerate", board_cnf(inst), seconds=0.5)


def test_crosscheck_best_certifies_solve_best(tmp_path):
    """On an unsolvable 4x4 board, solve --best's best full board equals MaxSAT's optimum."""
    path = tmp_path / "u4.e2s"
    write_e2store(Instance("u4", 4, 4, unsolvable_pieces(4, 4, 1)), path)
    r = run("crosscheck", path, "--best", "--minutes", "0.1", "--json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)
    assert row["status"] == "agree" and row["models"]["maxsat"] == row["expected"] < 24
    r = run("crosscheck", path, "--best", "--expect", row["expected"] - 1)
    assert r.exit_code == 1


def test_solve_engine_sat_reports_as_the_backtracker(tmp_path):
    inst = random_instance(4, 4, 11, n_frame=2, n_inner=2)
    path = tmp_path / "b.e2s"
    write_e2store(inst, path)
    for flags in ([], ["--no-symmetry-break"], ["--first"]):
        a = run("solve", path, *flags, "--json")
        b = run("solve", path, *flags, "--engine", "sat", "--json", "-o", tmp_path / "s.txt")
        assert a.exit_code == 0 and b.exit_code == 0, (a.output, b.output)
        ra, rb = json.loads(a.stdout), json.loads(b.stdout)
        assert ra["solutions"] == rb["solutions"] > 0 and rb["scan"].startswith("sat")
    r = run("solve", path, "--engine", "sat", "--best")
    assert r.exit_code == 2 and "--engine sat takes no --best" in r.output
    r = run("solve", path, "--engine", "minisat")
    assert r.exit_code == 2


def test_crosschecked_counts_are_marked_in_the_tables(tmp_path):
    from e2store.counts.shards import count_tables, crosscheck_path
    from e2store.reports.tables import Board, Crosschecked
    from e2store.web.reports import table_json

    inst = random_instance(4, 4, 12, n_frame=2, n_inner=3)
    path, rec, out = tmp_path / "b.e2s", tmp_path / "rec", tmp_path / "tables"
    write_e2store(inst, path)
    assert run("tabulate", path, "--hamming", "1", "--records", rec, "-o", out).exit_code == 0
    r = run("crosscheck", path, "--hamming", "1", "--at", "1,1", "--model", "sql",
            "--records", rec)
    assert r.exit_code == 0, r.output
    assert run("tabulate", path, "--hamming", "1", "--records", rec, "-o", out).exit_code == 0
    md = (out / "corolles_h1.md").read_text()
    marked = [line for line in md.splitlines() if line.endswith("✓ |")]
    assert [line.split(" |")[0] for line in marked] == ["| 1 1"], md
    board = Board(inst.id, inst.name, 4, 4)
    (t, *_) = count_tables(rec, [(board, inst)], [1])
    row = next(r for r in table_json(t)["rows"] if (r["x"], r["y"]) == (1, 1))
    assert row["crosschecked"] == [["sql"]]
    # a record whose count is not the table's marks nothing
    p = crosscheck_path(rec, inst.id, 1, 1, 1)
    doc = json.loads(p.read_text())
    p.write_text(json.dumps({**doc, "corolles": doc["corolles"] + 1}))
    (t, *_) = count_tables(rec, [(board, inst)], [1])
    assert not any(isinstance(v, Crosschecked) for row in t.values for v in row)


@pytest.mark.parametrize("w,h,seed", [(4, 3, 21), (3, 5, 22)])
def test_symmetry_break_on_oblong_boards_counts_as_solve(w, h, seed):
    """On an oblong board the break is the lowest corner piece on the north-west or the
    north-east corner (one solution per half-turn pair), as `solve` counts."""
    from e2store.solver.search import solve

    inst = random_instance(w, h, seed, n_frame=2, n_inner=2)
    for sym in (True, False):
        want = solve(inst, "rowscan", symmetry_break=sym).solutions
        assert want > 0
        assert run_model("enumerate", board_cnf(inst, symmetry_break=sym)).count == want
