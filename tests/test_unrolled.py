"""The generated (unrolled) solver kernel against the pure-Python twin and the generic kernel.

`e2store.solver._unrolled` writes one nested loop per depth; every test here forces it
(`kernel="unrolled"`) on boards far below the "auto" threshold, so each compiles a small
kernel of its own.  The twin is `tests/naive_solver.py`, as for the generic kernel.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_instance
from naive_solver import naive_solve

import e2store.solver._unrolled as U
import e2store.solver.search as solver_mod
from e2store.errors import SolverError
from e2store.instance.formats import read_instance
from e2store.query.openings import Openings
from e2store.solver.parallel import Subtrees, solve_openings
from e2store.solver.plan import build_plan
from e2store.solver.scan import SCAN_ORDERS, scan_order
from e2store.solver.search import solve


@pytest.fixture(autouse=True)
def _kernel_dir(tmp_path_factory, monkeypatch):
    """Generated sources go to a folder of this test session, not the shared temp dir."""
    monkeypatch.setenv("E2STORE_KERNEL_DIR", str(tmp_path_factory.getbasetemp() / "kernels"))


def pieces_of(inst):
    return [tuple(int(c) for c in p) for p in inst.pieces]


def whole(inst, scan: str, kernel: str = "unrolled") -> Subtrees:
    """Subtrees with no fixed cell: one subtree, the whole board."""
    return Subtrees(inst, scan, [], kernel=kernel)


def empty_board(inst) -> np.ndarray:
    return np.full(inst.width * inst.height, -1, dtype=np.int64)


TWIN_CASES = ([((4, 4), scan) for scan in SCAN_ORDERS if scan != "quad-spiral"]
              + [((4, 3), "quad-spiral"), ((2, 5), "rowscan"), ((4, 3), "spiral-in")])


@pytest.mark.parametrize("size,scan", TWIN_CASES, ids=lambda c: str(c))
def test_unrolled_kernel_agrees_with_the_naive_twin(size, scan):
    """Same solutions in the same order and the same nodes, on random boards of few colours
    (pieces in two rotations in one bucket, so record depths) in every scan order (cells with
    three or four placed neighbours, so extra checks)."""
    w, h = size
    for seed in range(2):
        inst = random_instance(w, h, seed, n_frame=2, n_inner=3)
        order = [tuple(c) for c in scan_order(scan, w, h).tolist()]
        want, want_nodes = naive_solve(pieces_of(inst), w, h, order)
        sub = whole(inst, scan)
        assert sub.unrolled
        sols, nodes, found = sub.solve(empty_board(inst), max_stored=10_000)
        assert (sols, nodes) == (len(want), want_nodes)
        assert [tuple(b) for b in found.tolist()] == want


def test_record_and_check_depths_are_generated():
    """The boards above reach every form of a depth (else the test proves less than it
    says): bits, bits then a piece's records (a piece in two rotations in one bucket), and
    filtered records (extra neighbours to check)."""
    kinds = set()
    for scan in SCAN_ORDERS:
        inst = random_instance(4, 4, 0, n_frame=2, n_inner=3)  # as in the twin test
        plan = build_plan(inst, scan_order(scan, 4, 4), {})
        text = U.source(plan)
        kinds |= {"bits" for _ in [0] if "cttz" in text.split("def f0")[1]}
        kinds |= {"multi" for _ in [0] if "in range(rfirst[" in text}
        kinds |= {"records" for _ in [0] if "in range(bstart[" in text}
        kinds |= {"checks" for _ in [0] if " != " in text}
    assert kinds == {"bits", "multi", "records", "checks"}


def test_seeded_subtrees_agree_with_the_generic_kernel():
    """Subtrees of fixed cells (the openings' use): the same counts and boards as the
    generic kernel, opening after opening with the buffers reused."""
    inst = random_instance(5, 4, 3)
    w = inst.width
    full = solve(inst, "rowscan", symmetry_break=False)
    assert full.solutions
    covered = [0, 1, w]  # three cells of the NW corner, taken from the solutions
    rows = np.unique(full.boards[:, covered], axis=0)
    fast, slow = (Subtrees(inst, "spiral-in", covered, kernel=k)
                  for k in ("unrolled", "generic"))
    assert fast.unrolled and not slow.unrolled
    for vals in rows:
        board = empty_board(inst)
        board[covered] = vals
        a, b = fast.solve(board, max_stored=3), slow.solve(board, max_stored=3)
        assert a[:2] == b[:2] and a[0] >= 1
        assert a[2].tolist() == b[2].tolist()  # the first three, kept in search order


def test_deep_plans_chain_inlined_chunks(shared_instances):
    """Benchmark 6x6, rowscan from the fixed corner: 35 depths in three generated chunks;
    the published count and the generic kernel's nodes."""
    inst = read_instance(shared_instances / "benchmark" / "pieces_6x6.txt")
    want = solve(inst, "rowscan", kernel="generic")
    board = empty_board(inst)
    board[0] = want.boards[0][0]
    sub = Subtrees(inst, "rowscan", [0])
    assert sub.unrolled and sub.plan.n_depth == 35 >= U.AUTO_MIN_DEPTHS
    text = U.source(sub.plan)
    assert text.count("def f") == 4 and "rfirst[" in text  # 16 multi depths count twice
    sols, nodes, found = sub.solve(board, max_stored=100)
    assert (sols, nodes) == (65, 14_518_614) == (want.solutions, want.nodes)
    assert found.tolist() == want.boards.tolist()


def test_kernel_choice():
    small = random_instance(3, 3, 0)
    assert not whole(small, "rowscan", "auto").unrolled  # 9 depths: not worth compiling
    assert whole(small, "rowscan", "unrolled").unrolled
    assert not whole(small, "rowscan", "generic").unrolled
    big = random_instance(9, 8, 0)  # 72 pieces: two bit words, generic only
    assert not whole(big, "rowscan", "unrolled").unrolled
    with pytest.raises(ValueError, match="expected one of auto, generic, unrolled"):
        whole(small, "rowscan", "fast")
    ops = Openings(small.id, small.name, 3, 3, [], 0, False, empty_board(small)[None, :])
    with pytest.raises(SolverError, match="kernel 'fast'"):
        solve_openings(small, ops, kernel="fast")


def test_generated_source_is_reproducible_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("E2STORE_KERNEL_DIR", str(tmp_path))
    monkeypatch.setattr(U, "_LOADED", {})
    inst = random_instance(4, 4, 2)
    plan = build_plan(inst, scan_order("rowscan", 4, 4), {})
    assert U.source(plan) == U.source(build_plan(inst, scan_order("rowscan", 4, 4), {}))
    f = U.kernel(plan)
    assert U.kernel(plan) is f
    files = list(tmp_path.glob("e2k_*.py"))
    assert len(files) == 1 and files[0].read_text() == U.source(plan)


@pytest.mark.parametrize("split", [8, 1 << 20])
@pytest.mark.parametrize("size", [(4, 4), (5, 3)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_split_solve_equals_the_generic_search(size, split, monkeypatch):
    """`solve` by subtrees (generic top walk, generated kernel below it) reports what the
    generic search does: solutions in order, nodes and nodes to the first solution; with a
    middle split (8 prefixes wanted) and with the deepest one, over one or two symmetry
    roots (5x3), with and without the symmetry break and with a seed."""
    monkeypatch.setattr(solver_mod, "SPLIT_PREFIXES", split)
    depths = []
    real = solver_mod.split_depth
    monkeypatch.setattr(solver_mod, "split_depth",
                        lambda inst, plan: depths.append(real(inst, plan)) or depths[-1])
    w, h = size
    inst = random_instance(w, h, 5, n_frame=2, n_inner=4)
    runs = [dict(), dict(symmetry_break=False), dict(scan="spiral-in", symmetry_break=False)]
    full = solve(inst, symmetry_break=False, kernel="generic")
    assert full.solutions
    sol = full.boards[-1]
    runs.append(dict(seed={(1, 1): int(sol[w + 1]), (w - 1, 0): int(sol[w - 1])}))
    for kw in runs:
        a = solve(inst, kernel="unrolled", max_stored=7, **kw)
        b = solve(inst, kernel="generic", max_stored=7, **kw)
        assert a.complete and b.complete
        assert (a.solutions, a.nodes, a.first_nodes) == (b.solutions, b.nodes, b.first_nodes)
        assert a.boards.tolist() == b.boards.tolist()
        assert a.first_seconds is not None or not a.solutions
    assert depths and (min(depths) < 4 if split == 8 else min(depths) > 4)  # split taken


def test_split_solve_stops_cleanly_on_ctrl_c(monkeypatch):
    """Ctrl-C between subtrees: the report keeps what the finished ones found."""
    monkeypatch.setattr(solver_mod, "SPLIT_PREFIXES", 8)
    inst = random_instance(4, 4, 1)
    full = solve(inst, symmetry_break=False, kernel="generic")
    calls = {"n": 0}
    real = solver_mod.UnrolledSearch.solve

    def interrupted(self, board, max_stored):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, board, max_stored)

    monkeypatch.setattr(solver_mod.UnrolledSearch, "solve", interrupted)
    r = solve(inst, symmetry_break=False, kernel="unrolled", stop_on_interrupt=True)
    assert r.interrupted and not r.complete and 0 < r.nodes < full.nodes
    assert r.boards.tolist() == full.boards[:r.stored].tolist()
    calls["n"] = 0
    with pytest.raises(KeyboardInterrupt):
        solve(inst, symmetry_break=False, kernel="unrolled")


def test_kernel_dir_is_private_and_checked(tmp_path, monkeypatch):
    """Code is imported from the kernel directory: it is made 0700, and a directory that is
    a symbolic link, writable by others or (as root) owned by another user is refused."""
    import os
    import stat

    from e2store.errors import KernelCacheError

    mine = tmp_path / "mine"
    monkeypatch.setenv("E2STORE_KERNEL_DIR", str(mine))
    assert U.kernel_dir() == mine and stat.S_IMODE(mine.stat().st_mode) == 0o700
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    link = tmp_path / "link"
    link.symlink_to(mine)
    cases = [(open_dir, "writable by others"), (link, "symbolic link")]
    if os.geteuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 12345, 12345)
        cases.append((foreign, "belongs to user id 12345"))
    for path, why in cases:
        monkeypatch.setenv("E2STORE_KERNEL_DIR", str(path))
        with pytest.raises(KernelCacheError, match=why):
            U.kernel_dir()
        assert isinstance(KernelCacheError("x"), PermissionError)
