"""The backtracking solver: scan orders, the kernel against its twin, benchmarks, the CLI."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance
from naive_solver import lowest_corner_nw, naive_solve, symmetry_class_representative

import e2store.solver.search as solver_mod
from e2store.boards.solutions import (
    check_solution,
    check_solutions,
    read_solutions,
    write_solutions,
)
from e2store.cli import main
from e2store.errors import E2StoreError, InvalidSolutionError, SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_brendan_solution, read_instance
from e2store.instance.model import Instance
from e2store.instance.validate import self_similar
from e2store.solver.scan import SCAN_ORDERS, read_scan_file, read_seed_file, scan_order
from e2store.solver.search import solve

SIZES = [(2, 2), (3, 3), (3, 4), (4, 3), (4, 4), (2, 5), (5, 2)]
# 2x2 with four distinct joins: its one solution is piece i on cell i, all at rotation 0
TINY = Instance("tiny", 2, 2, [(0, 0, 1, 2), (1, 0, 0, 3), (0, 2, 4, 0), (4, 3, 0, 0)])


def pieces_of(inst: Instance) -> list[tuple[int, ...]]:
    return [tuple(int(c) for c in p) for p in inst.pieces]


def boards(result) -> list[tuple[int, ...]]:
    return [tuple(b) for b in result.boards.tolist()]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --------------------------------------------------------------------------- scan orders


@pytest.mark.parametrize("name", SCAN_ORDERS)
def test_scan_orders_are_permutations_of_the_board(name):
    for w in range(1, 10):
        for h in range(1, 10):
            order = scan_order(name, w, h)
            assert order.shape == (w * h, 2)
            assert sorted(map(tuple, order.tolist())) == [(x, y) for x in range(w)
                                                          for y in range(h)], (name, w, h)


def test_scan_orders_follow_their_definitions():
    assert scan_order("rowscan", 3, 2).tolist() == [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1],
                                                    [2, 1]]
    assert scan_order("columnscan", 2, 3).tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1],
                                                       [1, 2]]
    spiral = [[0, 0], [1, 0], [2, 0], [2, 1], [2, 2], [1, 2], [0, 2], [0, 1], [1, 1]]
    assert scan_order("spiral-in", 3, 3).tolist() == spiral
    assert scan_order("spiral_out", 3, 3).tolist() == spiral[::-1]
    for w, h in ((5, 3), (4, 6), (7, 7)):
        seen: set[tuple[int, int]] = set()
        for x, y in scan_order("diagonal", w, h).tolist():
            assert (x == 0 or (x - 1, y) in seen) and (y == 0 or (x, y - 1) in seen)
            seen.add((x, y))
    for n in (4, 5, 6, 7):  # quad-spiral: corners first, symmetric under a quarter turn
        q = [tuple(c) for c in scan_order("quad-spiral", n, n).tolist()]
        assert set(q[:4]) == {(0, 0), (n - 1, 0), (n - 1, n - 1), (0, n - 1)}
        for i in range(0, len(q) - 4, 4):
            for k in range(3):
                x, y = q[i + k]
                assert q[i + k + 1] == (n - 1 - y, x)
    q = [tuple(c) for c in scan_order("quad-spiral", 5, 3).tolist()]
    assert q[:4] == [(0, 0), (4, 0), (4, 2), (0, 2)]


def test_scan_file_is_read_and_bad_lines_are_named(tmp_path):
    good = tmp_path / "order.txt"
    cells = scan_order("spiral-in", 3, 2).tolist()
    good.write_text("# my order\n\n" + "\n".join(f"{x} {y}" for x, y in cells[:3])
                    + "\n" + "\n".join(f"{x},{y}  # comma" for x, y in cells[3:]) + "\n")
    assert read_scan_file(good, 3, 2).tolist() == cells
    assert scan_order(str(good), 3, 2).tolist() == cells
    bad = {
        "0 0\n1 0 2\n": (2, "bad line"),
        "0 0\nx 1\n": (2, "bad line"),
        "0 0\n3 0\n": (2, "off the 3x2 board"),
        "0 0\n1 0\n0 0\n": (3, "repeated"),
        "0 0\n1 0\n2 0\n0 1\n# end\n1 1\n": (6, "5 of 6 cells"),
    }
    for i, (text, (line, words)) in enumerate(bad.items()):
        p = tmp_path / f"bad{i}.txt"
        p.write_text(text)
        with pytest.raises(SolverError, match=rf"bad{i}\.txt:{line}: .*{words}"):
            scan_order(p, 3, 2)
    with pytest.raises(SolverError, match="unknown scan order 'zigzag'"):
        scan_order("zigzag", 3, 2)


# --------------------------------------------------------------------------- kernel vs twin


@pytest.mark.parametrize("scan", SCAN_ORDERS)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_kernel_agrees_with_the_naive_twin(size, scan):
    w, h = size
    for seed in range(3):
        inst = random_instance(w, h, seed)
        pieces = pieces_of(inst)
        order = [tuple(c) for c in scan_order(scan, w, h).tolist()]
        want, want_nodes = naive_solve(pieces, w, h, order)
        assert want, "random instances are solvable by construction"

        got = solve(inst, scan, symmetry_break=False, slice_nodes=50)
        assert boards(got) == want  # same solutions, same order
        assert (got.solutions, got.nodes, got.complete) == (len(want), want_nodes, True)

        first_want, first_nodes = naive_solve(pieces, w, h, order, first=True)
        first = solve(inst, scan, symmetry_break=False, first=True)
        assert boards(first) == first_want
        assert first.nodes == first.first_nodes == got.first_nodes == first_nodes

        # symmetry break: the kept solutions are exactly the class representatives ...
        broken = solve(inst, scan)
        reps = [s for s in want if symmetry_class_representative(s, pieces, w, h)]
        assert sorted(boards(broken)) == sorted(reps)
        assert broken.solutions == len(reps)
        # ... found by the same search as the twin seeded with the corner piece
        p, r = lowest_corner_nw(pieces)
        roots = [{(0, 0): (p, r)}] + ([{(w - 1, 0): (p, (r + 1) % 4)}] if w != h else [])
        runs = [naive_solve(pieces, w, h, order, seed=root) for root in roots]
        assert boards(broken) == [s for sols, _ in runs for s in sols]
        assert broken.nodes == sum(n for _, n in runs)
        # one solution per rotation class when no piece is symmetric
        if not self_similar(inst.pieces):
            assert got.solutions == (4 if w == h else 2) * broken.solutions


def test_seeded_search_agrees_with_the_twin():
    for (w, h), scan in zip(SIZES, SCAN_ORDERS, strict=False):
        inst = random_instance(w, h, 7)
        pieces = pieces_of(inst)
        order = [tuple(c) for c in scan_order(scan, w, h).tolist()]
        all_sols, _ = naive_solve(pieces, w, h, order)
        target = all_sols[-1]
        cells = [(1, 1), (w - 1, 0), (0, h - 1)]
        seed = {c: (target[c[1] * w + c[0]] >> 2, target[c[1] * w + c[0]] & 3) for c in cells}
        want, nodes = naive_solve(pieces, w, h, order, seed=seed)
        got = solve(inst, scan, seed=seed)
        assert not got.symmetry_break and got.seeded_cells == 3
        assert boards(got) == want and got.nodes == nodes
        assert target in boards(got)
        # the same seed as packed values and as an array
        packed = {c: p * 4 + r for c, (p, r) in seed.items()}
        arr = np.full((h, w), -1)
        for (x, y), v in packed.items():
            arr[y, x] = v
        for s in (packed, arr, arr.ravel()):
            assert boards(solve(inst, scan, seed=s)) == want


def solved_instance(w: int, h: int, seed: int, n_colours: int = 4) -> tuple[Instance, list[int]]:
    """A random W x H instance whose pieces are shuffled and turned, and its known solution
    (packed, cell index y*W+x)."""
    rnd = np.random.default_rng(seed)
    east = rnd.integers(1, n_colours + 1, size=(h, w))
    south = rnd.integers(1, n_colours + 1, size=(h, w))
    east[:, -1] = 0
    south[-1, :] = 0
    board = [(int(east[y, x - 1]) if x else 0, int(south[y - 1, x]) if y else 0,
              int(east[y, x]), int(south[y, x])) for y in range(h) for x in range(w)]
    ids = rnd.permutation(w * h)  # cell c holds piece ids[c]
    turns = rnd.integers(0, 4, size=w * h)  # ... stored turned back by turns[c]
    pieces = [None] * (w * h)
    for c, piece in enumerate(board):
        t = int(turns[c])
        pieces[ids[c]] = piece[t:] + piece[:t]  # shows piece when turned t clockwise
    return Instance(f"solved{seed}", w, h, pieces), [int(ids[c]) * 4 + int(turns[c])
                                                      for c in range(w * h)]


@pytest.mark.parametrize("size", [(9, 8), (12, 11)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_boards_of_more_than_64_pieces_agree_with_the_twin(size):
    """More than 64 pieces: the used-piece bitsets have 2 and 3 words."""
    w, h = size
    inst, sol = solved_instance(w, h, seed=w)
    check_solution(inst, np.array(sol))
    pieces = pieces_of(inst)
    rnd = np.random.default_rng(0)
    for scan in SCAN_ORDERS:
        order = [tuple(c) for c in scan_order(scan, w, h).tolist()]
        free = set(order[-9:]) | {order[int(i)] for i in rnd.choice(w * h, 4, replace=False)}
        seed = {(x, y): (sol[y * w + x] >> 2, sol[y * w + x] & 3)
                for x, y in order if (x, y) not in free}
        want, nodes = naive_solve(pieces, w, h, order, seed=seed)
        got = solve(inst, scan, seed=seed)
        assert boards(got) == want and got.nodes == nodes
        assert tuple(sol) in want


def _run_plan(plan) -> tuple[list[tuple[int, ...]], int]:
    search = solver_mod.Search(plan, 64)
    found = []
    while not search.done:
        found += [tuple(b) for b in search.run(1 << 62, False).tolist()]
    return found, int(search.state[2])


def test_bitset_and_list_forms_of_the_buckets_agree():
    """The kernel's two forms of a depth's candidates: force every bucket into list form."""
    for (w, h), scan in zip(SIZES, SCAN_ORDERS * 2, strict=False):
        inst = random_instance(w, h, 1)
        plan = solver_mod.build_plan(inst, scan_order(scan, w, h), {})
        listed = dataclasses.replace(plan, simple=np.zeros_like(plan.simple))
        assert _run_plan(plan) == _run_plan(listed)
        assert _run_plan(plan)[0]


def test_a_full_seed_is_its_own_single_solution():
    inst = random_instance(3, 3, 1)
    sol = naive_solve(pieces_of(inst), 3, 3, [(x, y) for y in range(3) for x in range(3)])[0][0]
    r = solve(inst, seed=np.array(sol))
    assert (r.solutions, r.nodes, boards(r)) == (1, 0, [sol])


def test_bad_seeds_are_refused(tmp_path):
    inst = random_instance(3, 3, 0)
    sol = naive_solve(pieces_of(inst), 3, 3, [(x, y) for y in range(3) for x in range(3)])[0][0]
    corner = sol[0]
    with pytest.raises(SolverError, match="off the 3x3 board"):
        solve(inst, seed={(3, 0): corner})
    with pytest.raises(SolverError, match="out of range"):
        solve(inst, seed={(0, 0): 36})
    with pytest.raises(SolverError, match="grey on the wrong sides"):
        solve(inst, seed={(0, 0): (corner >> 2) * 4 + ((corner & 3) + 1) % 4})
    with pytest.raises(SolverError, match="placed twice"):
        solve(inst, seed={(0, 0): corner, (1, 1): corner})
    with pytest.raises(SolverError, match=r"cells \(0, 0\) and \(1, 0\) do not match"):
        solve(TINY, seed={(0, 0): 7, (1, 0): 1})
    f = tmp_path / "seed.txt"
    f.write_text("# x y piece r\n0 0 1 2\n\n2 2 3 0\n")
    assert read_seed_file(f) == {(0, 0): 6, (2, 2): 12}
    f.write_text("0 0 1 2\n0 0 3 0\n")
    with pytest.raises(SolverError, match=r"seed\.txt:2: cell \(0, 0\) repeated"):
        read_seed_file(f)
    f.write_text("0 0 1 5\n")
    with pytest.raises(SolverError, match=r"seed\.txt:1: "):
        read_seed_file(f)


def test_slices_limits_storage_and_interrupts(monkeypatch):
    inst = random_instance(4, 4, 1)
    full = solve(inst, symmetry_break=False)
    assert full.solutions > 8
    sliced = solve(inst, symmetry_break=False, slice_nodes=3, max_stored=5)
    assert (sliced.solutions, sliced.nodes) == (full.solutions, full.nodes)
    assert boards(sliced) == boards(full)[:5]
    limited = solve(inst, symmetry_break=False, node_limit=1000, slice_nodes=64)
    assert limited.nodes == 1000 and not limited.complete
    assert boards(limited) == boards(full)[:limited.stored]

    calls = {"n": 0}
    real_run = solver_mod.Search.run

    def interrupted_run(self, node_limit, first_only):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_run(self, node_limit, first_only)

    monkeypatch.setattr(solver_mod.Search, "run", interrupted_run)
    r = solve(inst, symmetry_break=False, slice_nodes=100, stop_on_interrupt=True)
    assert r.interrupted and not r.complete and 0 < r.nodes < full.nodes
    calls["n"] = 0
    with pytest.raises(KeyboardInterrupt):
        solve(inst, symmetry_break=False, slice_nodes=100)


def test_checker_rejects_broken_boards():
    check_solution(TINY, np.array([0, 4, 8, 12]))
    check_solution(TINY, np.array([[0, 4], [8, 12]]))
    bad = {
        (1, 4, 8, 12): r"cell \(0, 0\) shows non-grey on the frame on its W side",
        (0, 0, 8, 12): "piece 0 is used 2 times",
        (7, 1, 8, 12): r"cells \(0, 0\) and \(1, 0\) do not match",
        (0, 4, 8, 16): "out of range",
    }
    for board, words in bad.items():
        with pytest.raises(InvalidSolutionError, match=words):
            check_solution(TINY, np.array(board))
    with pytest.raises(InvalidSolutionError, match="3 cells"):
        check_solution(TINY, np.array([0, 4, 8]))
    with pytest.raises(InvalidSolutionError, match="board 1 "):
        check_solutions(TINY, np.array([[0, 4, 8, 12], [7, 1, 8, 12]]))


def test_solve_rejects_bad_requests():
    inst = random_instance(3, 3, 0)
    with pytest.raises(SolverError, match="permutation"):
        solve(inst, np.array([[0, 0]] * 9))
    with pytest.raises(E2StoreError):
        solve(Instance("x", 3, 3, inst.pieces[:8]))


# --------------------------------------------------------------------------- shared data


@pytest.mark.parametrize("n,with_break,without", [(4, 9, 36), (5, 4, 16)])
def test_benchmark_solution_counts(shared_instances, n, with_break, without):
    inst = read_instance(shared_instances / "benchmark" / f"pieces_{n}x{n}.txt")
    assert solve(inst).solutions == with_break
    assert solve(inst, symmetry_break=False).solutions == without
    for scan in SCAN_ORDERS:
        assert solve(inst, scan).solutions == with_break


def test_benchmark_6x6_rowscan(shared_instances):
    inst = read_instance(shared_instances / "benchmark" / "pieces_6x6.txt")
    r = solve(inst)
    # DESIGN.md: a row-major scan from the fixed NW corner visits about 1.45e7 nodes
    assert (r.solutions, r.nodes, r.complete) == (65, 14_518_614, True)
    check_solutions(inst, r.boards)


BRENDAN = [3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16]


@pytest.mark.parametrize("n", BRENDAN)
def test_known_brendan_solution_is_found_from_half_of_it(shared_instances, n):
    folder = shared_instances / "brendan_set1"
    inst = read_instance(folder / f"pieces_{n:02d}x{n:02d}.txt")  # `up right down left`
    sol = read_brendan_solution(folder / f"solutions_{n:02d}x{n:02d}.txt")
    check_solution(inst, sol)  # x_P = x, y_P = N-1-y, r_P = r when read as N E S W
    if 4 <= n <= 10:  # the same lines read as W N E S: r_P = (r + 1) mod 4
        bench = read_instance(shared_instances / "benchmark" / f"pieces_{n}x{n}.txt")
        assert (bench.pieces == np.roll(inst.pieces, -1, axis=1)).all()
        bsol = read_brendan_solution(folder / f"solutions_{n:02d}x{n:02d}.txt", sides="WNES")
        assert (bsol == (sol & ~3) | ((sol + 1) & 3)).all()
        check_solution(bench, bsol)
    flat = sol.ravel()
    seed = np.where(np.arange(n * n) < n * n // 2, flat, -1)
    r = solve(inst, seed=seed, symmetry_break=False)
    assert r.complete and not r.symmetry_break and r.seeded_cells == n * n // 2
    assert tuple(flat) in boards(r)


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def inst_file(tmp_path):
    inst = random_instance(4, 3, 1)
    path = tmp_path / "rnd.e2s"
    write_e2store(inst, path)
    return inst, path


def test_cli_json_report_matches_the_api(inst_file):
    inst, path = inst_file
    for args, kwargs in (([], {}), (["--no-symmetry-break", "--scan", "spiral-in"],
                                    {"symmetry_break": False, "scan": "spiral-in"})):
        r = run("solve", path, "--json", "--engine", "backtrack", *args)  # the API's engine
        assert r.exit_code == 0, r.output
        d = json.loads(r.stdout)
        want = solve(inst, **kwargs)
        for key in ("solutions", "nodes", "first_nodes", "complete", "scan", "symmetry_break"):
            assert d[key] == getattr(want, key), key
        assert d["instance"] == inst.id and (d["width"], d["height"]) == (4, 3)
        assert d["first_solution"] == want.boards[0].tolist()
        assert d["seconds"] >= 0 and d["nodes_per_second"] >= 0
        assert d["first_seconds"] is not None and not d["interrupted"]


def test_cli_plain_report_and_first(inst_file):
    inst, path = inst_file
    r = run("solve", path, "--first")
    assert r.exit_code == 0, r.output
    text = r.stdout
    assert "solutions  1 (stopped at the first solution)" in text
    assert "nodes/s" in text and "first      after" in text
    assert "piece" in text and "fixed on (0,0) or (W-1,0)" in text


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_cli_save_round_trip(inst_file, tmp_path, suffix):
    inst, path = inst_file
    out = tmp_path / f"sols{suffix}"
    r = run("solve", path, "--no-symmetry-break", "-o", out)
    assert r.exit_code == 0, r.output
    saved = read_solutions(out)
    want = solve(inst, symmetry_break=False)
    assert saved.shape == (want.solutions, 12)
    assert (saved == want.boards).all()
    check_solutions(inst, saved)
    r = run("solve", path, "--no-symmetry-break", "-o", out, "--keep", 1)
    assert r.exit_code == 0 and len(read_solutions(out)) == 1
    assert "raise --keep" in r.stderr


def test_write_solutions_metadata(tmp_path):
    import pyarrow.parquet as pq

    inst = random_instance(2, 2, 0)
    r = solve(inst)
    write_solutions(tmp_path / "s.parquet", r.boards, inst, "rowscan")
    meta = pq.read_schema(tmp_path / "s.parquet").metadata
    assert meta[b"format"] == b"e2store-solutions" and meta[b"instance"] == inst.id.encode()
    write_solutions(tmp_path / "empty.csv", r.boards[:0])
    assert read_solutions(tmp_path / "empty.csv").shape == (0, 4)


def test_cli_errors_are_one_line_exit_2(inst_file, tmp_path):
    inst, path = inst_file
    bad = tmp_path / "order.txt"
    bad.write_text("0 0\n1 0\n1 0\n")
    r = run("solve", path, "--scan", bad)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"e2store: error: {bad}:3: cell (1, 0) repeated (first on line " \
        "2) (expected every cell exactly once)"
    r = run("solve", path, "--scan", "zigzag")
    assert r.exit_code == 2 and "unknown scan order 'zigzag'" in r.stderr
    seed = tmp_path / "seed.txt"
    seed.write_text("0 0 1\n")
    r = run("solve", path, "--fixed", seed)
    assert r.exit_code == 2 and f"{seed}:1: bad line" in r.stderr


def test_cli_seed_file(inst_file, tmp_path):
    inst, path = inst_file
    want = solve(inst, symmetry_break=False)
    target = want.boards[-1]
    seed = tmp_path / "seed.txt"
    seed.write_text("".join(f"{c % 4} {c // 4} {target[c] >> 2} {target[c] & 3}\n"
                            for c in (0, 5)))
    r = run("solve", path, "--fixed", seed, "--json", "--engine", "backtrack")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["seeded_cells"] == 2 and not d["symmetry_break"] and d["solutions"] >= 1
    sol = solve(inst, seed={(0, 0): int(target[0]), (1, 1): int(target[5])})
    assert d["solutions"] == sol.solutions and d["nodes"] == sol.nodes
