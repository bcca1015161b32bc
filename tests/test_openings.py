"""Openings: the join against a brute force over naive corolle lists, consistency, the
solutions they cover, multi-process solving against the single run, files, the CLI."""

from __future__ import annotations

import itertools
import json

import naive
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import SHARED
from helpers import random_instance
from naive_solver import naive_solve

from e2store.boards.solutions import read_solutions
from e2store.cli import main
from e2store.errors import MissingInstanceError, MissingZoneError, SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.query.openings import cell_corolles, openings, read_openings, write_openings
from e2store.solver.parallel import (
    Subtrees,
    estimate_costs,
    merge_reports,
    plan_chunks,
    solve_openings,
    solve_with_openings,
)
from e2store.solver.plan import lowest_corner
from e2store.solver.search import solve
from e2store.store.build import enumerate_store
from e2store.zones.zonemap import zone_map

# (instance, cell sets) of the brute-force comparison: overlapping, touching, apart, three
SMALL = [
    ((4, 4, 2, 3, 8), [[(0, 0), (1, 0)], [(0, 0), (2, 1)], [(0, 0), (3, 3)],
                       [(0, 0), (1, 1), (3, 3)], [(1, 1), (2, 2), (3, 0)]]),
    ((4, 3, 1, 3, 6), [[(1, 1), (0, 0)], [(2, 1), (0, 0), (3, 2)], [(0, 2), (1, 1), (3, 0)]]),
    ((3, 3, 1, 3, 5), [[(0, 0), (2, 2)], [(1, 1), (0, 0), (2, 0)], [(0, 1), (2, 1), (1, 0)]]),
]
SMALL_H2 = [((4, 3, 1, 3, 6), [[(0, 0), (3, 2)], [(1, 1), (3, 0)]]),
            ((3, 3, 2, 3, 5), [[(0, 0), (2, 2)], [(1, 0), (1, 2), (0, 1)]])]


def _inst(spec) -> Instance:
    w, h, seed, nf, ni = spec
    return random_instance(w, h, seed, nf, ni)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """One store holding every small instance at hamming 1 and 2."""
    root = tmp_path_factory.mktemp("openings_store")
    for spec in {s for s, _ in SMALL + SMALL_H2}:
        for h in (1, 2):
            enumerate_store(root, _inst(spec), h, None)
    return root


# --------------------------------------------------------------------------- brute force


def _adjacent(a, b) -> int | None:
    """Side of cell a that touches cell b, or None."""
    for s, (dx, dy) in naive.NEIGHBOUR.items():
        if (a[0] + dx, a[1] + dy) == b:
            return s
    return None


def brute_openings(inst: Instance, cells, h: int) -> set[tuple[int, ...]]:
    """Every combination of naive corolles (one per cell) with explicit checks: overlapping
    cells agree, no piece twice, every pair of touching placed cells matches."""
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    lists = [[dict(((c, (p, r)) for c, p, r in cor)) for cor in
              naive.naive_corolles(pieces, inst.width, inst.height, x, y, h)]
             for x, y in cells]
    out = set()
    for combo in itertools.product(*lists):
        board: dict = {}
        ok = True
        for cor in combo:
            for c, v in cor.items():
                if board.setdefault(c, v) != v:
                    ok = False
        if not ok:
            continue
        used = [p for p, _ in board.values()]
        if len(set(used)) != len(used):
            continue
        for a, b in itertools.combinations(board, 2):
            s = _adjacent(a, b)
            if s is not None and naive.shown(pieces[board[a][0]], board[a][1], s) != \
                    naive.shown(pieces[board[b][0]], board[b][1], (s + 2) % 4):
                ok = False
                break
        if ok:
            row = [-1] * (inst.width * inst.height)
            for (x, y), (p, r) in board.items():
                row[y * inst.width + x] = p * 4 + r
            out.add(tuple(row))
    return out


def consistent(inst: Instance, row) -> bool:
    """An independent check of one partial board: distinct pieces, grey exactly on the
    frame, every pair of touching placed cells matches."""
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    w, h = inst.width, inst.height
    placed = {(i % w, i // w): (v >> 2, v & 3) for i, v in enumerate(row) if v >= 0}
    if len({p for p, _ in placed.values()}) != len(placed):
        return False
    for (x, y), (p, r) in placed.items():
        if not naive.fits_cell(pieces[p], r, w, h, x, y):
            return False
        for s, (dx, dy) in naive.NEIGHBOUR.items():
            nb = placed.get((x + dx, y + dy))
            if nb and naive.shown(pieces[p], r, s) != naive.shown(pieces[nb[0]], nb[1],
                                                                  (s + 2) % 4):
                return False
    return True


def _cases(table, h):
    return [(spec, cells, h) for spec, sets in table for cells in sets]


@pytest.mark.parametrize("spec,cells,h", _cases(SMALL, 1) + _cases(SMALL_H2, 2))
def test_openings_match_a_brute_force(stores, spec, cells, h):
    inst = _inst(spec)
    op = openings(inst, stores, cells, h)
    got = [tuple(r) for r in op.boards.tolist()]
    assert len(got) == len(set(got)) == op.count
    assert set(got) == brute_openings(inst, cells, h)
    assert got == sorted(got, key=lambda r: [r[c] for c in op.covered])  # sorted rows
    assert all(consistent(inst, r) for r in got)
    assert op.sizes[-1] == op.count and len(op.sizes) == len(cells)


def test_store_corolles_are_those_at_the_cell(stores):
    """The partition read for a cell holds the corolles at that very cell (rotated zones)."""
    inst = _inst(SMALL[0][0])
    for h in (1, 2):
        for y in range(inst.height):
            for x in range(inst.width):
                got = cell_corolles(inst, stores, x, y, h)
                want = naive.naive_corolles([tuple(map(int, p)) for p in inst.pieces],
                                            inst.width, inst.height, x, y, h)
                assert len(got) == len(want), (x, y, h)


def test_symmetry_break_keeps_the_openings_of_the_fixed_corner(stores):
    inst = _inst(SMALL[0][0])
    full = openings(inst, stores, [(0, 0), (1, 1)], 1)
    broken = openings(inst, stores, [(0, 0), (1, 1)], 1, symmetry_break=True)
    piece, r = lowest_corner(inst)
    assert broken.boards.tolist() == [b for b in full.boards.tolist() if b[0] == piece * 4 + r]
    assert 0 < broken.count < full.count
    with pytest.raises(SolverError, match=r"fixes cell \(0, 0\)"):
        openings(inst, stores, [(3, 3)], 1, symmetry_break=True)


# --------------------------------------------------------------------------- solving


def _solutions(result) -> set[tuple[int, ...]]:
    return {tuple(b) for b in result.boards.tolist()}


def _check_cover(inst: Instance, op, symmetry_break: bool, workers: int = 1):
    single = solve(inst, symmetry_break=symmetry_break, max_stored=10**6)
    res = solve_openings(inst, op, workers=workers, max_stored=10**6)
    assert res.complete and res.solutions == single.solutions
    assert _solutions(res) == _solutions(single) and res.stored == single.solutions
    rows = {tuple(r) for r in op.boards.tolist()}
    cov = op.covered
    for b in single.boards.tolist():  # every solution restricted to the covered cells
        restricted = [-1] * len(b)
        for c in cov:
            restricted[c] = b[c]
        assert tuple(restricted) in rows
    per = res.opening_solutions
    assert per.sum() == single.solutions and len(per) == op.count
    return res, single


@pytest.mark.parametrize("spec,cells", [((4, 4, 2, 3, 8), [(0, 0), (1, 1)]),
                                         ((4, 3, 1, 3, 6), [(1, 0), (0, 1)]),
                                         ((4, 4, 2, 3, 8), [(2, 2)])])
def test_solving_random_openings_gives_the_single_run_solutions(stores, spec, cells):
    inst = _inst(spec)
    op = openings(inst, stores, cells, 1)
    res, single = _check_cover(inst, op, False)
    pieces = [tuple(map(int, p)) for p in inst.pieces]
    order = [(x, y) for y in range(inst.height) for x in range(inst.width)]
    assert len(naive_solve(pieces, inst.width, inst.height, order)[0]) == res.solutions
    if (0, 0) in cells:
        _check_cover(inst, openings(inst, stores, cells, 1, symmetry_break=True), True)


def test_subtrees_count_like_seeded_solve(stores):
    inst = _inst(SMALL[0][0])
    op = openings(inst, stores, [(1, 1)], 1)
    sub = Subtrees(inst, "spiral-in", op.covered)
    for row in op.boards[:: max(1, op.count // 25)]:
        want = solve(inst, "spiral-in", seed=row, symmetry_break=False)
        got = sub.solve(row, max_stored=100)
        assert got[:2] == (want.solutions, want.nodes)
        assert (got[2] is None and not want.stored) or got[2].tolist() == want.boards.tolist()


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """Benchmark 4x4 and 5x5 with a hamming-1 store of each (skips without ../shared, as
    the conftest `shared_instances` fixture does)."""
    if not SHARED.is_dir():
        pytest.skip(f"shared instances not found at {SHARED}")
    root = tmp_path_factory.mktemp("bench_store")
    out = {}
    for n in (4, 5):
        inst = read_instance(SHARED / "benchmark" / f"pieces_{n}x{n}.txt")
        enumerate_store(root, inst, 1, None)
        out[n] = inst
    return root, out


@pytest.mark.parametrize("n,cells,count,count_all", [
    (4, [(0, 0), (2, 0), (1, 2)], 9, 36), (5, [(0, 0), (2, 1)], 4, 16)])
def test_benchmark_openings_give_the_published_counts(bench, n, cells, count, count_all):
    root, insts = bench
    inst = insts[n]
    res, _ = _check_cover(inst, openings(inst, root, cells, 1), False)
    assert res.solutions == count_all
    res, _ = _check_cover(inst, openings(inst, root, cells, 1, symmetry_break=True), True)
    assert res.solutions == count


def test_two_workers_equal_one_worker_and_the_single_run(bench, tmp_path):
    root, insts = bench
    inst = insts[5]
    op = openings(inst, root, [(0, 0), (1, 1)], 1)
    one = solve_openings(inst, op, workers=1, max_stored=100)
    two = solve_openings(inst, op, workers=2, max_stored=100)
    single = solve(inst, symmetry_break=False, max_stored=100)
    assert one.solutions == two.solutions == single.solutions == 16
    assert one.nodes == two.nodes and np.array_equal(one.opening_nodes, two.opening_nodes)
    assert _solutions(one) == _solutions(two) == _solutions(single)
    assert len(two.per_worker) >= 1 and sum(w["openings"] for w in two.per_worker) == op.count
    assert sum(w["nodes"] for w in two.per_worker) == two.nodes
    # shards solved apart and merged: the same totals
    shards = [solve_openings(inst, op, shard=(k, 3)).to_dict() for k in range(3)]
    merged = merge_reports(shards)
    assert (merged["solutions"], merged["nodes"], merged["openings"]) == (
        16, one.nodes, op.count)
    with pytest.raises(SolverError, match="not shards"):
        merge_reports(shards[:2])
    first = solve_openings(inst, op, workers=1, first=True)
    assert first.complete and 1 <= first.solutions <= 16


def test_chunks_cover_every_opening_once(stores):
    inst = _inst(SMALL[0][0])
    op = openings(inst, stores, [(0, 0)], 1)
    costs = estimate_costs(inst, op.boards)
    assert costs.shape == (op.count,) and (costs > 0).all() and costs.max() == 1.0
    for workers in (1, 2, 7):
        chunks = plan_chunks(costs, workers)
        assert sorted(np.concatenate(chunks).tolist()) == list(range(op.count))
    assert plan_chunks(np.zeros(0), 2) == []


# --------------------------------------------------------------------------- files, errors


def test_openings_file_round_trip(stores, tmp_path):
    inst = _inst(SMALL[0][0])
    op = openings(inst, stores, [(0, 0), (1, 1)], 1, symmetry_break=True)
    write_openings(tmp_path / "o.parquet", op)
    back = read_openings(tmp_path / "o.parquet")
    assert np.array_equal(back.boards, op.boards) and back.boards.dtype == np.int16
    assert (back.instance, back.cells, back.hamming, back.symmetry_break) == (
        inst.id, [(0, 0), (1, 1)], 1, True)
    import pyarrow.parquet as pq

    md = pq.ParquetFile(tmp_path / "o.parquet").schema_arrow.metadata
    assert md[b"count"] == str(op.count).encode() and md[b"hamming"] == b"1"
    assert pq.ParquetFile(tmp_path / "o.parquet").metadata.row_group(0).column(0) \
        .compression == "ZSTD"
    (tmp_path / "bad.parquet").write_text("x")
    with pytest.raises(SolverError, match="not a Parquet or Arrow IPC file"):
        read_openings(tmp_path / "bad.parquet")
    other = _inst(SMALL[1][0])
    with pytest.raises(SolverError, match="openings of instance"):
        solve_openings(other, op)


def test_missing_partitions_name_the_command(stores, tmp_path):
    inst = _inst(SMALL[0][0])
    with pytest.raises(MissingZoneError, match=r"e2store enumerate INSTANCE .* --hamming 3 "
                       r"--at 1,1"):
        openings(inst, stores, [(1, 1)], 3)
    with pytest.raises(MissingInstanceError, match="no corolles of instance"):
        openings(inst, tmp_path, [(0, 0)], 1)
    zm = zone_map(4, 4, 1)
    part = enumerate_store(tmp_path / "one", inst, 1, [zm.zone_at(0, 0).id])
    assert part
    assert openings(inst, tmp_path / "one", [(0, 0), (3, 3)], 1).count
    with pytest.raises(MissingZoneError, match=r"cell \(1, 0\)"):
        openings(inst, tmp_path / "one", [(0, 0), (1, 0)], 1)
    for bad, msg in (([(4, 0)], "off the 4x4 board"), ([], "no cells"),
                     ([(0, 0), (0, 0)], "given twice")):
        with pytest.raises(SolverError, match=msg):
            openings(inst, stores, bad, 1)
    with pytest.raises(SolverError, match="more than 10 openings"):
        openings(inst, stores, [(0, 0), (3, 3)], 1, max_rows=10)


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_openings_and_solve(stores, tmp_path):
    inst = _inst(SMALL[0][0])
    f = tmp_path / "inst.e2s"
    write_e2store(inst, f)
    out = tmp_path / "o.parquet"
    r = _run("openings", f, "--store", stores, "--at", "0,0", "--at", "1,1", "--hamming", 1,
             "-o", out, "--symmetry-break")
    assert r.exit_code == 0, r.output
    op = read_openings(out)
    assert r.output.startswith(f"{op.count:,} openings of ") and op.cells == [(0, 0), (1, 1)]
    single = solve(inst)
    sols = tmp_path / "s.parquet"
    r = _run("solve", f, "--openings", out, "--workers", 1, "--json", "-o", sols)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d["solutions"] == single.solutions and d["openings"] == op.count
    assert d["symmetry_break"] is True and d["per_worker"][0]["openings"] == op.count
    assert {tuple(b) for b in read_solutions(sols).tolist()} == _solutions(single)
    lib = solve_with_openings(inst, out, save=tmp_path / "lib.parquet")  # the library call
    assert (lib.solutions, lib.openings, lib.stored) == (d["solutions"], d["openings"],
                                                         d["stored"])
    assert {tuple(b) for b in read_solutions(tmp_path / "lib.parquet").tolist()} == \
        _solutions(single)
    r = _run("solve", f, "--openings", out)
    assert r.exit_code == 0 and f"solutions  {single.solutions:,} (complete)" in r.output
    reports = []
    for k in range(2):
        r = _run("solve", f, "--openings", out, "--shard", f"{k}/2", "--json")
        assert r.exit_code == 0, r.output
        p = tmp_path / f"shard{k}.json"
        p.write_text(r.output.strip().splitlines()[-1])
        reports.append(p)
    r = _run("stage", "solve-gather", *reports, "-o", tmp_path / "m.json")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "m.json").read_text())["solutions"] == single.solutions


@pytest.mark.parametrize("args,msg", [
    (["openings", "{f}", "--store", "{s}", "--at", "9,0", "--hamming", 1, "-o", "{o}"],
     "off the 4x4 board"),
    (["openings", "{f}", "--store", "{s}", "--at", "0,0", "--hamming", 3, "-o", "{o}"],
     "run `e2store enumerate INSTANCE"),
    (["openings", "{f}", "--store", "{s}", "--at", "3,3", "--hamming", 1, "-o", "{o}",
      "--symmetry-break"], "do not cover"),
    (["solve", "{f}", "--shard", "0/2"], "--shard needs --openings"),
    (["solve", "{f}", "--openings", "{f}"], "not a Parquet or Arrow IPC file"),
    (["solve", "{f}", "--openings", "{o}", "--fixed", "{f}"], "--openings takes neither"),
    (["solve", "{f}", "--openings", "{o}", "--scan", "zigzag"], "unknown scan order"),
])
def test_cli_errors_are_one_line(stores, tmp_path, args, msg):
    inst = _inst(SMALL[0][0])
    f = tmp_path / "inst.e2s"
    write_e2store(inst, f)
    o = tmp_path / "o.parquet"
    write_openings(o, openings(inst, stores, [(0, 0)], 1))
    args = [str(a).format(f=f, s=stores, o=o) for a in args]
    r = _run(*args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("e2store: error: ") and msg in lines[0], \
        r.output


@pytest.mark.parametrize("args,msg", [
    (["openings", "{f}", "--store", "{s}", "--at", "0;x", "--hamming", 1, "-o", "{o}"],
     "bad cell '0;x'"),
    (["solve", "{f}", "--openings", "{o}", "--shard", "2/2"], "bad shard '2/2'"),
])
def test_cli_bad_values_are_usage_errors(tmp_path, args, msg):
    f = tmp_path / "inst.e2s"
    write_e2store(_inst(SMALL[0][0]), f)
    args = [str(a).format(f=f, s=tmp_path, o=tmp_path / "o.parquet") for a in args]
    r = _run(*args)
    assert r.exit_code == 2 and msg in r.stderr and r.stderr.count("\n") == 1, r.output
    assert r.stderr.startswith("e2store: error: ") and "--help`)" in r.stderr, r.output
