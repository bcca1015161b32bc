"""Block closure tables (`e2store.query.closures`): the kernels against their twins, the
generated kernel's probe against a naive search, solutions unchanged, the store, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance
from naive_closure import (
    block_fillings,
    bloom_has,
    code_of,
    naive_bloom,
    naive_solve_closure,
    ranks,
)
from naive_solver import lowest_corner_nw

from e2store.cli import main
from e2store.cli.options import parse_bytes
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.query import _closure_kernels as CK
from e2store.query.closures import (
    ClosureBudgetError,
    ClosureError,
    build_closure,
    interior_tables,
    open_closure,
    read_closure,
)
from e2store.solver._unrolled import MEMO_SLOTS
from e2store.solver.closure import CLOSURE_COUNTS
from e2store.solver.scan import scan_order
from e2store.solver.search import solve

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"


def pieces_of(inst) -> list[tuple[int, ...]]:
    return [tuple(int(c) for c in p) for p in inst.pieces]


def boards(result) -> list[tuple[int, ...]]:
    return sorted(tuple(int(v) for v in b) for b in result.boards)


@pytest.mark.parametrize("w,h,seed", [(4, 4, 1), (5, 4, 2), (5, 5, 3), (5, 5, 4)])
def test_fill_count_and_filter_equal_the_twins(w, h, seed):
    inst = random_instance(w, h, seed)
    pieces = pieces_of(inst)
    count, keys = block_fillings(pieces, w)
    t = build_closure(inst, threads=2)
    assert t.fillings == count > 0
    assert list(t.bloom.tolist()) == naive_bloom(keys, len(t.bloom), len(ranks(pieces)))
    one = build_closure(inst, threads=1)  # one thread or two: the same filter
    assert np.array_equal(one.bloom, t.bloom)
    bits = np.array([b for b, _ in keys], np.uint64)
    codes = np.array([code_of(n, t.k_col) for _, n in keys], np.uint64)
    assert t.probe(bits, codes).all()  # no filling is ever absent


def test_shares_split_the_fillings_and_scale_to_an_estimate(monkeypatch):
    """The walk's shares are disjoint and complete (they sum to the twin's count, and the
    filter of 3 threads equals the twin's); an estimate scales one share."""
    import e2store.query.closures as C

    inst = random_instance(5, 5, 3)
    count, keys = block_fillings(pieces_of(inst), 5)
    rot, istart, icand, k_col, _ = interior_tables(inst)
    shares = [CK.count_fillings(rot, istart, icand, k_col, 3, 10**9, k, 8) for k in range(8)]
    assert sum(shares) == count and max(shares) < count
    assert C.estimate_fillings(rot, istart, icand, k_col, 3, 10**9) == count  # small: exact
    monkeypatch.setattr(C, "EXACT_BELOW", 0)
    assert C.estimate_fillings(rot, istart, icand, k_col, 3, 10**9) == shares[0] * 8
    t = build_closure(inst, threads=3)
    assert t.fillings == count
    assert list(t.bloom.tolist()) == naive_bloom(keys, len(t.bloom), len(ranks(pieces_of(inst))))


def test_block_fillable_equals_the_twin():
    inst = random_instance(5, 5, 7)
    pieces = pieces_of(inst)
    _, keys = block_fillings(pieces, 5)
    rot, istart, icand, k_col, mask = interior_tables(inst)
    rng = np.random.default_rng(0)
    inner = [p for p in range(25) if (mask >> p) & 1]
    tried = list(keys)[:40]
    for _ in range(200):  # random keys, most of them no filling's
        ps = rng.choice(inner, 6, replace=False)
        tried.append((sum(1 << int(p) for p in ps), tuple(rng.integers(1, k_col, 3).tolist())))
    for bits, north in tried:
        got = CK.block_fillable(rot, istart, icand, k_col, 3, bits, code_of(north, k_col))
        assert got == ((bits, north) in keys), (bits, north)
    assert sum(k in keys for k in tried) >= 40


@pytest.mark.parametrize("w,h,seed,scan", [
    (4, 4, 1, "rowscan"), pytest.param(5, 4, 2, "rowscan", marks=pytest.mark.slow),
    (5, 5, 3, "rowscan"), (5, 5, 5, "columnscan"),
    pytest.param(4, 5, 6, "rowscan", marks=pytest.mark.slow)])
def test_generated_probe_equals_the_naive_search(w, h, seed, scan):
    """Nodes, probes, cuts and solutions of the generated kernel with a closure equal a
    naive search probing the twin filter (the corner fixed as the symmetry break does)."""
    inst = random_instance(w, h, seed)
    pieces = pieces_of(inst)
    t = build_closure(inst)
    order = [tuple(c) for c in scan_order(scan, w, h).tolist()]
    p, r = lowest_corner_nw(pieces)
    seed_cells = {(0, 0): (p, r)}
    k = subtree_depth(inst, scan, seed_cells, t)
    want, nodes, counts = naive_solve_closure(pieces, w, h, order, t.bloom.tolist(),
                                              seed=seed_cells, subtree_depth=k,
                                              memo_slots=MEMO_SLOTS)
    got = solve(inst, scan, seed={(0, 0): (p, r)}, closure=t)
    plain = solve(inst, scan, seed={(0, 0): (p, r)})
    assert boards(got) == sorted(want) == boards(plain)
    if scan == "rowscan":
        assert got.closure["used"] and got.nodes == nodes
        assert [got.closure[c] for c in CLOSURE_COUNTS] == counts
        assert got.nodes <= plain.nodes and got.first_nodes is None
    else:  # columnscan places block cells before the row above the block is complete
        assert not got.closure["used"] and "block cell" in got.closure["reason"]
        assert (got.nodes, counts[0]) == (plain.nodes, 0)


def memo_case(w: int, h: int, seed: int) -> list[int]:
    """One subtree (only the corner fixed) searched by the generated kernel with the
    closure and its row memo: nodes, probes, cuts, memo cuts and records must equal the
    twin's; returns the counts."""
    from e2store.solver.plan import build_plan
    from e2store.solver.search import UnrolledSearch

    inst = random_instance(w, h, seed)
    pieces = pieces_of(inst)
    t = build_closure(inst)
    order = scan_order("rowscan", w, h)
    p, r = lowest_corner_nw(pieces)
    sub = UnrolledSearch(inst, build_plan(inst, order, {0: 0}), t)
    assert sub.spec.memo_depth >= 0
    board = np.full(w * h, -1, np.int64)
    board[0] = p * 4 + r
    sols, nodes, found = sub.solve(board, 1000)
    want, want_nodes, counts = naive_solve_closure(
        pieces, w, h, [tuple(c) for c in order.tolist()], t.bloom.tolist(),
        seed={(0, 0): (p, r)}, subtree_depth=0, memo_slots=MEMO_SLOTS)
    assert (sols, nodes) == (len(want), want_nodes)
    assert sub.counts.tolist() == counts
    assert sorted(map(tuple, found.tolist()) if found is not None else []) == sorted(want)
    return counts


@pytest.mark.parametrize("stash", [None, 2])
def test_row_memo_equals_the_twin(stash, monkeypatch):
    """With the kernel's batch of held probes (`STASH` of them), and with a batch of two,
    so that most tests happen inside the walk of the row, not at its end."""
    from e2store.solver import _unrolled

    if stash is not None:
        monkeypatch.setattr(_unrolled, "STASH", stash)
    counts = memo_case(5, 5, 3)
    assert counts[2] > 0 and counts[3] > 0, counts


@pytest.mark.slow
def test_row_memo_equals_the_twin_5x6():
    counts = memo_case(5, 6, 9)
    assert counts[2] > 0 and counts[3] > 0, counts


def subtree_depth(inst, scan, seed_cells, table) -> int:
    """The free cells `solve` places above the subtrees its generated kernel searches (the
    split of `solve_split`), for the twin's row memo, which starts empty in each."""
    from e2store.solver.closure import closure_spec
    from e2store.solver.plan import build_plan
    from e2store.solver.search import search_setup, split_depth

    order, _, _, _, roots = search_setup(inst, scan, seed_cells, None)
    plan = build_plan(inst, order, roots[0])
    k = split_depth(inst, plan)
    spec = closure_spec(plan, table)[0]
    return max(1, min(k, spec.depth)) if spec is not None else k


@pytest.mark.parametrize("w,h,seed,kw", [(5, 5, 4, {"symmetry_break": False}),
                                         pytest.param(6, 5, 8, {}, marks=pytest.mark.slow),
                                         pytest.param(5, 6, 9, {}, marks=pytest.mark.slow),
                                         pytest.param(6, 6, 10, {}, marks=pytest.mark.slow)])
def test_solutions_unchanged_on_random_boards(w, h, seed, kw):
    inst = random_instance(w, h, seed)
    t = build_closure(inst)
    plain, got = solve(inst, kernel="generic", **kw), solve(inst, closure=t, **kw)
    assert boards(got) == boards(plain) and got.solutions == plain.solutions
    assert got.closure["used"] and got.nodes <= plain.nodes


@pytest.mark.parametrize("n,solutions", [(4, 9), (5, 4), (6, 65)])
def test_benchmark_boards_with_closure(n, solutions):
    path = BENCH / f"pieces_{n}x{n}.txt"
    if not path.exists():
        pytest.skip("benchmark piece sets (../shared) not present")
    inst = read_instance(path)
    t = build_closure(inst)
    plain, got = solve(inst, kernel="generic"), solve(inst, closure=t)
    assert got.solutions == plain.solutions == solutions and boards(got) == boards(plain)
    assert got.closure["used"] and got.nodes <= plain.nodes
    if n == 6:
        assert got.nodes < 0.5 * plain.nodes and got.closure["cuts"] > 0
        assert got.closure["memo_cuts"] > 0 and got.closure["memo_records"] > 0


def test_store_builds_then_reuses_and_detects_damage(tmp_path):
    inst = random_instance(5, 5, 3)
    logs: list[str] = []
    t1 = open_closure(tmp_path, inst, log=logs.append)
    assert t1.built and "built the 3x2 block table" in logs[-1]
    files = sorted(p.name for p in (tmp_path / "closures").iterdir())
    assert len(files) == 2 and files[0].endswith(".bloom") and files[1].endswith(".json")
    t2 = open_closure(tmp_path, inst, log=logs.append)
    assert not t2.built and "using" in logs[-1]
    assert np.array_equal(t1.bloom, t2.bloom)
    assert solve(inst, closure=t2).nodes == solve(inst, closure=t1).nodes
    head = json.loads((tmp_path / "closures" / files[1]).read_text())
    assert head["fillings"] == t1.fillings and head["words"] == len(t1.bloom)
    other = random_instance(5, 5, 4)
    with pytest.raises(ClosureError, match="another instance"):
        solve(other, closure=t2)
    data = tmp_path / "closures" / files[0]
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    data.write_bytes(bytes(raw))
    with pytest.raises(ClosureError, match="SHA-256"):
        open_closure(tmp_path, inst)
    with pytest.raises(ClosureError, match="SHA-256"):
        open_closure(tmp_path, inst, copies=2)
    for old in ("e2store-block-closure/1", "e2store-block-closure/2"):  # no digest then:
        head["format"] = old  # an older format, rebuilt, said so
        head.pop("digest", None)
        (tmp_path / "closures" / files[1]).write_text(json.dumps(head))
        t3 = open_closure(tmp_path, inst, log=logs.append)
        assert t3.built and "older format" in logs[-2] and np.array_equal(t3.bloom, t1.bloom)
    head = json.loads((tmp_path / "closures" / files[1]).read_text())
    head["fillings"] += 1  # a flipped digit of the header: refused, not a wrong table
    (tmp_path / "closures" / files[1]).write_text(json.dumps(head))
    with pytest.raises(ClosureError, match="damaged closure table header"):
        open_closure(tmp_path, inst)


def test_memory_budget_refuses_before_building(tmp_path):
    inst = random_instance(5, 5, 3)
    with pytest.raises(ClosureBudgetError, match="over the memory budget") as e:
        open_closure(tmp_path, inst, budget=16)
    assert isinstance(e.value, MemoryError)
    assert not (tmp_path / "closures").exists()
    t = open_closure(tmp_path, inst)  # a stored table is checked against the budget too
    with pytest.raises(ClosureBudgetError, match="per process"):
        open_closure(tmp_path, inst, budget=t.nbytes, copies=2)
    assert read_closure(tmp_path, inst, load=False).bloom is None


def test_modes_that_cannot_use_a_closure():
    from e2store.errors import SolverError

    inst = random_instance(5, 5, 3)
    t = build_closure(inst)
    for kw in ({"first": True}, {"node_limit": 10}, {"kernel": "generic"}):
        with pytest.raises(SolverError, match="cannot be used with"):
            solve(inst, closure=t, **kw)
    with pytest.raises(ClosureError, match="no interior block"):
        build_closure(random_instance(4, 3, 1))


def test_workers_with_closure_equal_one_process(tmp_path):
    from e2store.solver.workers import solve_workers

    inst = random_instance(5, 5, 3)
    t = open_closure(tmp_path, inst, copies=2)
    assert t.bloom is None  # each worker loads its own copy
    one = solve(inst, closure=t)  # loads its own copy
    two = solve_workers(inst, workers=2, closure=t)
    assert boards(two) == boards(one) and two.solutions == one.solutions
    assert two.closure["used"] and two.closure["cuts"] == one.closure["cuts"]
    assert two.nodes == one.nodes


def test_cli_solve_store(tmp_path):
    inst = random_instance(5, 5, 3)
    path = tmp_path / "i.e2s"
    write_e2store(inst, path)
    store = tmp_path / "store"
    store.mkdir()
    run = CliRunner().invoke
    r = run(main, ["solve", str(path), "--store", str(store), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["solutions"] == solve(inst).solutions and d["closure"]["used"]
    assert d["closure"]["built"] and "built the 3x2 block table" in r.stderr
    r = run(main, ["solve", str(path), "--store", str(store)])
    assert r.exit_code == 0 and "closure    3x2 block below row 1:" in r.stdout
    assert "read from the store" in r.stdout
    r = run(main, ["solve", str(path), "--store", str(store), "--method", "closure",
                   "--first"])
    assert r.exit_code == 2 and "--method closure" in r.stderr
    r = run(main, ["solve", str(path), "--engine", "backtrack", "--memory-budget", "1G"])
    assert r.exit_code == 2 and "needs --store" in r.stderr  # the backtracker's closure table
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    r = run(main, ["solve", str(path), "--store", str(fresh), "--memory-budget", "16"])
    assert r.exit_code == 2 and "over the memory budget" in r.stderr
    assert "e2store: error: --memory-budget: the closure table" in r.stderr  # the flag
    assert "Traceback" not in r.output


def test_parse_bytes():
    assert parse_bytes("2G") == 2 << 30 and parse_bytes("512MiB") == 512 << 20
    assert parse_bytes("100") == 100 and parse_bytes("1.5k") == 1536
    with pytest.raises(ValueError, match="not a memory size"):
        parse_bytes("lots")


def test_twin_filter_answers_like_the_kernel():
    inst = random_instance(5, 5, 3)
    t = build_closure(inst)
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 1 << 62, 300, dtype=np.int64).astype(np.uint64)
    codes = rng.integers(0, 1000, 300, dtype=np.int64).astype(np.uint64)
    words = t.bloom.tolist()
    want = [bloom_has(words, int(b), int(c)) for b, c in zip(bits, codes, strict=True)]
    assert t.probe(bits, codes).tolist() == [int(x) for x in want]
