"""Finals (closures): the index against brute force, the kernel against its twin, same
solutions with and without finals, the store loader, errors and the CLI."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance
from naive_finals import alive_set, naive_solve_finals
from naive_solver import fits, lowest_corner_nw

from e2store.cli import main
from e2store.corolles.enumerate import enumerate_corolles
from e2store.errors import MissingZoneError, SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.query.finals import (
    corner_cells,
    finals_from_corolles,
    load_finals,
    parse_regions,
    region_corolles,
    unpack,
)
from e2store.solver.scan import SCAN_ORDERS, scan_order
from e2store.solver.search import solve
from e2store.store.build import enumerate_store
from e2store.zones.geometry import ring_offsets
from e2store.zones.zonemap import zone_map


def pieces_of(inst) -> list[tuple[int, ...]]:
    return [tuple(int(c) for c in p) for p in inst.pieces]


def centres(inst, interior: bool) -> list[tuple[int, int]]:
    """The corners, plus an interior cell and a border cell when asked."""
    out = corner_cells(inst.width, inst.height)
    if interior:
        out += [(1, 1), (inst.width - 1, 1)]
    return list(dict.fromkeys(out))


def index_of(inst, cells, hamming):
    """A finals index from corolles enumerated directly (the store-independent source)."""
    rows = {c: enumerate_corolles(inst, c[0], c[1], hamming)[0] for c in cells}
    return finals_from_corolles(inst, rows, hamming), rows


def as_dicts(rows: np.ndarray, x: int, y: int, hamming: int) -> list[dict]:
    """Ring-order rows -> the twin's corolles {(x, y): (piece, r)}."""
    off = ring_offsets(hamming).tolist()
    return [{(x + dx, y + dy): (v >> 2, v & 3) for (dx, dy), v in zip(off, row, strict=True)
             if v >= 0} for row in rows.tolist()]


def boards(r) -> list[tuple[int, ...]]:
    return [tuple(b) for b in r.boards.tolist()]


# --------------------------------------------------------------------------- the index


def random_partial_board(inst, rng: random.Random, k: int, solution=None) -> dict:
    """k cells with legal placements of distinct pieces (a solution's, or random ones that
    need not match each other)."""
    w, h = inst.width, inst.height
    pieces = pieces_of(inst)
    cells = rng.sample([(x, y) for y in range(h) for x in range(w)], k)
    board: dict = {}
    used: set[int] = set()
    for x, y in cells:
        if solution is not None:
            v = int(solution[y * w + x])
            board[(x, y)] = (v >> 2, v & 3)
            continue
        opts = [(p, r) for p in range(len(pieces)) if p not in used for r in range(4)
                if fits(pieces, w, h, {}, x, y, p, r)]
        if opts:
            p, r = rng.choice(opts)
            board[(x, y)] = (p, r)
            used.add(p)
    return board


@pytest.mark.parametrize("hamming", [1, 2])
@pytest.mark.parametrize("size", [(4, 4), (5, 4)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_incremental_alive_sets_equal_brute_force(size, hamming):
    w, h = size
    inst = random_instance(w, h, 3)
    cells = centres(inst, interior=True)
    fi, rows = index_of(inst, cells, hamming)
    sols = solve(inst, symmetry_break=False).boards
    pieces = pieces_of(inst)
    rng = random.Random(5)
    for trial in range(60):
        sol = sols[trial % len(sols)] if trial % 2 else None
        board = random_partial_board(inst, rng, rng.randint(0, w * h), sol)
        packed = {y * w + x: p * 4 + r for (x, y), (p, r) in board.items()}
        order = list(packed.items())
        rng.shuffle(order)  # the order of placements does not matter
        for g, (x, y) in enumerate(cells):
            got = np.flatnonzero(unpack(fi.alive_after(g, dict(order)), fi.regions[g].n))
            want = alive_set(pieces, as_dicts(rows[(x, y)], x, y, hamming), board)
            assert got.tolist() == want, (trial, (x, y))


# --------------------------------------------------------------------------- kernel vs twin


@pytest.mark.parametrize("scan", SCAN_ORDERS)
@pytest.mark.parametrize("size,hamming", [((3, 3), 1), ((3, 3), 2), ((4, 3), 1), ((3, 4), 2)],
                         ids=lambda v: f"{v[0]}x{v[1]}" if isinstance(v, tuple) else f"h{v}")
def test_kernel_agrees_with_the_naive_finals_twin(size, hamming, scan):
    w, h = size
    for seed in range(2):
        inst = random_instance(w, h, seed)
        pieces = pieces_of(inst)
        cells = centres(inst, interior=bool(seed))
        fi, rows = index_of(inst, cells, hamming)
        regions = [as_dicts(rows[c], c[0], c[1], hamming) for c in cells]
        order = [tuple(c) for c in scan_order(scan, w, h).tolist()]
        want, nodes, cuts = naive_solve_finals(pieces, w, h, order, regions)
        got = solve(inst, scan, symmetry_break=False, finals=fi, slice_nodes=7)
        assert boards(got) == want
        assert (got.nodes, got.cuts) == (nodes, cuts)
        assert got.finals_regions == cells and got.finals_hamming == hamming
        p, r = lowest_corner_nw(pieces)  # the symmetry break: the twin seeded alike
        roots = [{(0, 0): (p, r)}] + ([{(w - 1, 0): (p, (r + 1) % 4)}] if w != h else [])
        runs = [naive_solve_finals(pieces, w, h, order, regions, seed=root) for root in roots]
        broken = solve(inst, scan, finals=fi)
        assert boards(broken) == [s for sols, _, _ in runs for s in sols]
        assert broken.nodes == sum(n for _, n, _ in runs)
        assert broken.cuts == [sum(c) for c in zip(*(c for _, _, c in runs), strict=True)]


def test_twin_agrees_on_a_4x4_with_first_and_seed():
    inst = random_instance(4, 4, 2)
    pieces = pieces_of(inst)
    cells = centres(inst, interior=True)
    fi, rows = index_of(inst, cells, 1)
    regions = [as_dicts(rows[c], c[0], c[1], 1) for c in cells]
    order = [tuple(c) for c in scan_order("rowscan", 4, 4).tolist()]
    sol = solve(inst, symmetry_break=False).boards[-1]
    seed = {(1, 1): (int(sol[5]) >> 2, int(sol[5]) & 3)}
    want, nodes, cuts = naive_solve_finals(pieces, 4, 4, order, regions, seed=seed)
    got = solve(inst, seed=seed, finals=fi)
    assert (boards(got), got.nodes, got.cuts) == (want, nodes, cuts)
    want, nodes, cuts = naive_solve_finals(pieces, 4, 4, order, regions, first=True)
    got = solve(inst, symmetry_break=False, finals=fi, first=True)
    assert (boards(got), got.nodes, got.cuts) == (want, nodes, cuts)


# --------------------------------------------------------------------------- same answers


@pytest.mark.parametrize("hamming", [1, 2])
@pytest.mark.parametrize("size", [(3, 3), (4, 3), (4, 4)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_finals_keep_every_solution_and_never_add_nodes(size, hamming):
    w, h = size
    for seed in range(3):
        inst = random_instance(w, h, 10 + seed)
        fi, _ = index_of(inst, centres(inst, interior=seed > 0), hamming)
        for scan in SCAN_ORDERS:
            for sym in (True, False):
                plain = solve(inst, scan, symmetry_break=sym)
                cut = solve(inst, scan, symmetry_break=sym, finals=fi)
                assert boards(cut) == boards(plain)
                assert cut.solutions == plain.solutions and cut.complete
                assert cut.nodes <= plain.nodes
                assert len(cut.cuts) == len(fi.regions)


def test_node_limit_and_slices_resume_the_finals_state():
    inst = random_instance(4, 4, 1)
    fi, _ = index_of(inst, centres(inst, interior=True), 2)
    full = solve(inst, symmetry_break=False, finals=fi)
    sliced = solve(inst, symmetry_break=False, finals=fi, slice_nodes=3)
    assert (sliced.nodes, sliced.cuts, boards(sliced)) == (full.nodes, full.cuts, boards(full))
    part = solve(inst, symmetry_break=False, finals=fi, node_limit=full.nodes // 2)
    assert part.nodes == full.nodes // 2 and not part.complete


@pytest.mark.parametrize("n,solutions", [(4, 9), (5, 4)])
def test_benchmark_counts_with_finals(shared_instances, tmp_path, n, solutions):
    inst = read_instance(shared_instances / "benchmark" / f"pieces_{n}x{n}.txt")
    plain = solve(inst)
    for hamming in (1, 2):
        zm = zone_map(n, n, hamming)
        enumerate_store(tmp_path, inst, hamming, {zm.zone_at(x, y).id for x, y in
                                                  corner_cells(n, n)}, forms=("flat",))
        fi = load_finals(tmp_path, inst, "corners", hamming)
        for scan in ("rowscan", "spiral-in", "quad-spiral"):
            r = solve(inst, scan, finals=fi)
            assert r.solutions == solutions and r.nodes <= solve(inst, scan).nodes
        r = solve(inst, finals=fi)
        assert boards(r) == boards(plain) and sum(r.cuts) > 0


# --------------------------------------------------------------------------- the store


@pytest.mark.parametrize("hamming", [1, 2])
def test_store_regions_equal_direct_enumeration(tmp_path, hamming):
    inst = random_instance(5, 4, 4)
    enumerate_store(tmp_path, inst, hamming, None, forms=("flat",))
    for y in range(4):
        for x in range(5):
            got = region_corolles(tmp_path, inst, x, y, hamming)
            want = enumerate_corolles(inst, x, y, hamming)[0]
            assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, want.tolist()))
    cells = [(0, 0), (4, 3), (2, 1), (4, 1)]
    fi = load_finals(tmp_path, inst, cells, hamming)
    assert fi.centres == cells
    plain = solve(inst, symmetry_break=False)
    r = solve(inst, symmetry_break=False, finals=fi)
    assert boards(r) == boards(plain) and r.nodes <= plain.nodes


def test_missing_partition_says_what_to_run(tmp_path):
    inst = random_instance(4, 4, 0)
    zm = zone_map(4, 4, 1)
    enumerate_store(tmp_path, inst, 1, [zm.zone_at(0, 0).id], forms=("flat",))
    load_finals(tmp_path, inst, "corners", 1)  # the corner zone is enough for corners
    with pytest.raises(MissingZoneError, match=r"--hamming 1 --at 1,1 --store"):
        load_finals(tmp_path, inst, ["corners", "1,1"], 1)
    with pytest.raises(MissingZoneError, match=r"e2store enumerate INSTANCE --hamming 2"):
        load_finals(tmp_path, inst, "corners", 2)
    other = random_instance(4, 4, 1)
    with pytest.raises(MissingZoneError, match="no corolles of instance"):
        load_finals(tmp_path, other, "corners", 1)


def test_parse_regions():
    assert parse_regions("corners", 4, 3) == [(0, 0), (3, 0), (3, 2), (0, 2)]
    assert parse_regions(["1,1", "corners", "0,0"], 4, 3)[:2] == [(1, 1), (0, 0)]
    assert parse_regions([(2, 1)], 4, 3) == [(2, 1)]
    with pytest.raises(SolverError, match="off the 4x3 board"):
        parse_regions(["4,0"], 4, 3)
    with pytest.raises(SolverError, match="expected `corners` or `X,Y`"):
        parse_regions(["middle"], 4, 3)


# --------------------------------------------------------------------------- CLI


def test_cli_finals_json_and_text(tmp_path):
    inst = random_instance(4, 4, 1)
    path = tmp_path / "rnd.e2s"
    write_e2store(inst, path)
    store = tmp_path / "store"
    enumerate_store(store, inst, 1, None, forms=("flat",))
    runner = CliRunner()
    args = ["solve", str(path), "--json", "--store", str(store), "--finals-hamming", "1"]
    r = runner.invoke(main, args + ["--finals-regions", "corners", "--finals-regions", "1,2"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    plain = solve(inst)
    assert d["solutions"] == plain.solutions and d["nodes"] <= plain.nodes
    assert d["finals_regions"] == [[0, 0], [3, 0], [3, 3], [0, 3], [1, 2]]
    assert d["finals_hamming"] == 1 and len(d["cuts"]) == 5 and sum(d["cuts"]) > 0
    assert "cuts" not in json.loads(runner.invoke(main, ["solve", str(path), "--json"]).stdout)
    r = runner.invoke(main, ["solve", str(path), "--store", str(store), "--finals-hamming", "1"])
    assert r.exit_code == 0 and "finals     hamming 1, cuts (0,0):" in r.stdout
    r = runner.invoke(main, ["solve", str(path), "--store", str(store), "--method",
                             "finals"])  # default h=2
    assert r.exit_code == 2 and "e2store enumerate INSTANCE --hamming 2" in r.stderr
    r = runner.invoke(main, ["solve", str(path), "--store", str(store)])  # complete: closure
    assert r.exit_code == 0 and "closure    2x2 block below row 0" in r.stdout


def test_region_emptied_by_the_seed_cuts_every_node():
    """Fixed cells that leave a region no corolle: every node is cut, even those whose
    placement cannot change that region (the kernel's skip path)."""
    inst = random_instance(5, 5, 6)
    pieces = pieces_of(inst)
    fi, rows = index_of(inst, [(4, 0)], 1)  # NE corner: (3,0), (4,0), (4,1)
    opts = {c: [(p, r) for p in range(25) for r in range(4)
                if fits(pieces, 5, 5, {}, c[0], c[1], p, r)] for c in ((3, 0), (4, 1))}
    seed = next({(3, 0): a, (4, 1): b} for a in opts[(3, 0)] for b in opts[(4, 1)]
                if a[0] != b[0] and not fi.alive_after(0, {3: a[0] * 4 + a[1],
                                                           9: b[0] * 4 + b[1]}).any())
    order = [tuple(c) for c in scan_order("spiral-out", 5, 5).tolist()]
    regions = [as_dicts(rows[(4, 0)], 4, 0, 1)]
    want, nodes, cuts = naive_solve_finals(pieces, 5, 5, order, regions, seed=seed)
    got = solve(inst, "spiral-out", seed=seed, finals=fi)
    assert (boards(got), got.nodes, got.cuts) == (want, nodes, cuts) == ([], nodes, [nodes])
    assert nodes > 0


def test_finals_options_need_a_store(tmp_path):
    from click.testing import CliRunner
    from helpers import random_instance

    from e2store.cli import main
    from e2store.instance.e2sfile import write_e2store

    path = tmp_path / "i.e2s"
    write_e2store(random_instance(3, 3, 1), path)
    res = CliRunner().invoke(main, ["solve", str(path), "--finals-hamming", "1"])
    assert res.exit_code == 2 and "--finals-hamming needs --store DIR" in res.output
