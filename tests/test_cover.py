"""Corolles as the pieces of the search (`e2store.cover`, `solve --engine dlx`, issue 59):
the kernel against its slow twin on random problems, the partition, the options against
the store's corolles, and the board's counts and solutions against the backtracker's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces
from naive_cover import naive_xcc

from e2store.cli import main
from e2store.cover import Xcc, build_model, model_xcc, regions, solve_cover, solve_xcc
from e2store.errors import SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.generate import generate_instance
from e2store.instance.model import Instance
from e2store.solver.session import solve_search
from e2store.zones.geometry import ring_offsets

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"


def _random_xcc(rng: np.random.Generator) -> tuple[int, list[list[tuple[int, int]]], Xcc]:
    p, s = int(rng.integers(1, 7)), int(rng.integers(0, 4))
    options = []
    for _ in range(int(rng.integers(1, 18))):
        k = int(rng.integers(1, min(p + s, 4) + 1))
        items = rng.choice(np.arange(1, p + s + 1), size=k, replace=False)
        options.append([(int(i), 0 if i <= p else int(rng.integers(0, 3))) for i in items])
    x = Xcc(p, s, np.array([i for o in options for i, _ in o], dtype=np.int64),
            np.array([c for o in options for _, c in o], dtype=np.int64),
            np.concatenate([[0], np.cumsum([len(o) for o in options])]).astype(np.int64))
    return p, options, x


@pytest.mark.parametrize("seed", range(8))
def test_the_kernel_finds_what_the_twin_finds(seed: int) -> None:
    """Counts and the solutions themselves, on 60 random problems with colours, coloured
    and uncoloured secondary items; `first` and `max_nodes` stop where they say."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        p, options, x = _random_xcc(rng)
        x.check(twice=True)
        want = sorted(sorted(s) for s in naive_xcc(p, options))
        r = solve_xcc(x, keep=10_000)
        assert (r.solutions, r.complete) == (len(want), True)
        assert sorted(sorted(s) for s in r.kept) == want
        one = solve_xcc(x, first=True, keep=1)
        assert one.solutions == min(1, len(want)) and (sorted(one.kept[0]) in want
                                                       if want else not one.kept)
        if r.nodes > 1:
            cut = solve_xcc(x, max_nodes=r.nodes - 1)
            assert cut.nodes == r.nodes - 1 and not cut.complete


@pytest.mark.parametrize("w, h", [(4, 4), (5, 5), (6, 6), (7, 7), (8, 8), (6, 12), (7, 5)])
@pytest.mark.parametrize("hamming", [1, 2])
def test_the_regions_partition_the_board_into_clipped_diamonds(w: int, h: int,
                                                               hamming: int) -> None:
    parts = regions(w, h, hamming)
    cells = sorted(c for g in parts for c in g.cells)
    assert cells == list(range(w * h))
    for g in parts:
        off = ring_offsets(g.hamming)
        want = [(g.y + dy) * w + g.x + dx for dx, dy in off.tolist()
                if 0 <= g.x + dx < w and 0 <= g.y + dy < h]
        assert list(g.cells) == want and g.hamming in (0, hamming)
        assert [int(off[s][0]) + g.x + (int(off[s][1]) + g.y) * w for s in g.slots] == want
    # the fewest regions of every lattice class: no class gives fewer
    assert len(parts) <= min(len(regions(w, h, hamming)), len(cells))


def _inst(tmp_path: Path, w: int = 4, h: int = 4, seed: int = 1) -> tuple[Instance, Path]:
    inst = generate_instance(w, h, 3, 4, seed)
    path = tmp_path / f"g{w}x{h}-{seed}.e2s"
    write_e2store(inst, path)
    return read_instance(path), path


def _boards(result) -> list[tuple[int, ...]]:
    return sorted(tuple(int(v) for v in b) for b in result.boards)


@pytest.mark.parametrize("w, h, seed", [(4, 4, 1), (4, 4, 2), (5, 4, 3), (5, 5, 4),
                                        (6, 4, 5)])
@pytest.mark.parametrize("hamming", [1, 2])
def test_the_counts_and_boards_are_the_backtracker_s(tmp_path, w, h, seed, hamming) -> None:
    inst, _ = _inst(tmp_path, w, h, seed)
    for brk in (True, False):
        want = solve_search(inst, symmetry_break=brk, keep=10_000)
        got = solve_cover(inst, hamming=hamming, symmetry_break=brk, keep=10_000)
        assert (got.solutions, got.complete) == (want.solutions, True), (brk, hamming)
        assert _boards(got) == _boards(want)


@pytest.mark.skipif(not BENCH.is_dir(), reason="../shared/instances/benchmark is absent")
@pytest.mark.parametrize("hamming", [1, 2])
def test_the_benchmark_boards_count_as_published(hamming: int) -> None:
    """4x4 and 5x5 with the corner fixed: 9 and 4 solutions (the backtracker's)."""
    for name, count in (("pieces_4x4.txt", 9), ("pieces_5x5.txt", 4)):
        inst = read_instance(BENCH / name)
        r = solve_cover(inst, hamming=hamming, keep=100)
        assert r.solutions == count and r.complete and len(r.boards) == count


def test_identical_pieces_fixed_cells_first_and_none(tmp_path) -> None:
    """Identical pieces count as the backtracker counts them (each piece its own); fixed
    cells restrict as in the backtracker; --first stops at one; a board without a
    solution gives 0."""
    inst, _ = _inst(tmp_path, 4, 4, 7)
    pieces = [list(p) for p in inst.pieces]
    twin = next(i for i, p in enumerate(pieces) if min(p) > 0)
    other = next(i for i, p in enumerate(pieces) if min(p) > 0 and i != twin)
    pieces[other] = list(pieces[twin])  # two identical inner pieces
    dup = Instance("dup", 4, 4, [tuple(p) for p in pieces])
    for brk in (True, False):
        assert (solve_cover(dup, hamming=1, symmetry_break=brk).solutions
                == solve_search(dup, symmetry_break=brk).solutions)
    sol = solve_search(inst, keep=1).boards[0]
    fixed = {(x, y): int(sol[y * 4 + x]) for x, y in ((1, 1), (2, 3))}
    assert (solve_cover(inst, hamming=2, fixed=fixed).solutions
            == solve_search(inst, fixed=fixed).solutions >= 1)
    one = solve_cover(inst, hamming=1, first=True, keep=1)
    assert one.solutions == 1 and not one.complete and len(one.boards) == 1
    none = Instance("none", 5, 5, unsolvable_pieces(5, 5, 3))
    r = solve_cover(none, hamming=1)
    assert (r.solutions, r.complete) == (0, True)


@pytest.mark.parametrize("hamming", [0, 1, 2])
def test_fixed_pieces_leave_every_other_region(tmp_path, hamming: int) -> None:
    """A seeded model keeps in each region only the corolles that agree with the fixed
    cells and place no fixed piece elsewhere (naive filter); the counts and boards equal
    the backtracker's with the same cells fixed."""
    from e2store.cover.search import restricted

    inst, _ = _inst(tmp_path, 5, 4, 11)
    sol = solve_search(inst, keep=1).boards[0]
    fixed = {c: int(sol[c]) for c in (0, 7, 13)}
    base = build_model(inst, hamming)
    model = restricted(base, fixed)
    pieces = {v // 4: c for c, v in fixed.items()}
    for g, o, kept in zip(base.regions, base.options, model.options, strict=True):
        want = [row for row in o.tolist() if all(
            (v == fixed[c]) if c in fixed else (v // 4 not in pieces)
            for c, v in zip(g.cells, row, strict=True))]
        assert sorted(kept.tolist()) == sorted(want)
    assert sum(map(len, model.options)) < sum(map(len, base.options))
    seed = {(c % 5, c // 5): v for c, v in fixed.items()}
    r, b = solve_cover(inst, hamming=hamming, fixed=seed, keep=50), solve_search(
        inst, fixed=seed, keep=50)
    assert r.solutions == b.solutions >= 1
    assert sorted(map(tuple, r.boards.tolist())) == sorted(map(tuple, b.boards.tolist()))


def test_the_options_are_the_store_s_corolles(tmp_path) -> None:
    """Each region's options from a store equal its corolles enumerated (as sets)."""
    inst, path = _inst(tmp_path, 5, 5, 3)
    store = tmp_path / "store"
    for h in (1, 2):
        r = CliRunner().invoke(main, ["enumerate", str(path), "--hamming", str(h),
                                      "--store", str(store)])
        assert r.exit_code == 0, r.output
        a, b = build_model(inst, h, store=store), build_model(inst, h)
        assert a.source == "store" and [g.cells for g in a.regions] == [
            g.cells for g in b.regions]
        for x, y in zip(a.options, b.options, strict=True):
            assert sorted(map(tuple, x.tolist())) == sorted(map(tuple, y.tolist()))
        got = solve_cover(inst, hamming=h, store=store)
        assert got.solutions == solve_search(inst).solutions


def test_the_command(tmp_path) -> None:
    """`solve --engine dlx`: the backtracker's report and JSON keys; refusals in one line:
    --best, a store of another instance or hamming, a table over --memory-budget."""
    inst, path = _inst(tmp_path, 4, 4, 1)
    run = CliRunner().invoke
    r = run(main, ["solve", str(path), "--engine", "dlx", "--hamming", "1", "--json",
                   "-o", str(tmp_path / "s.parquet")])
    assert r.exit_code == 0, r.output
    got, want = json.loads(r.stdout), solve_search(inst)
    assert got["solutions"] == want.solutions and got["complete"]
    assert got["scan"].startswith("dlx (hamming 1")
    back = json.loads(run(main, ["solve", str(path), "--json"]).stdout)
    assert set(back) <= set(got) | {"closure", "cuts", "distinct"}
    other, other_path = _inst(tmp_path, 4, 4, 2)
    store = tmp_path / "store"
    assert run(main, ["enumerate", str(other_path), "--hamming", "1", "--store",
                      str(store)]).exit_code == 0
    for args, says in (
            (["--best"], "--engine dlx takes no --best"),
            (["--hamming", "2", "--store", str(store)],
             "holds no corolles of this instance at hamming 2"),
            (["--store", str(store)], "--store with --hamming 0"),
            (["--memory-budget", "1K"], "over --memory-budget")):
        r = run(main, ["solve", str(path), "--engine", "dlx", *args])
        assert r.exit_code != 0
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and says in lines[0], r.stderr


def _with_copies(inst: Instance) -> Instance:
    """`inst` with a second inner piece made a turned copy of the first: identical
    pieces (most such boards have no solution; the engines must agree anyway)."""
    pieces = [tuple(p) for p in inst.pieces]
    inner = [i for i, p in enumerate(pieces) if min(p) > 0]
    a = pieces[inner[0]]
    pieces[inner[1]] = a[1:] + a[:1]
    return Instance(f"{inst.name}-copies", inst.width, inst.height, pieces)


def test_auto_takes_dlx_for_a_complete_search_of_a_board_with_identical_pieces(
        tmp_path) -> None:
    """`--engine auto` (the default): dlx for a complete search of a board with identical
    pieces (said in one line on stderr), the backtracker otherwise: on a board of distinct
    pieces, with --first, with an option of the backtracker's; --hamming picks dlx; the
    counts equal the backtracker's either way."""
    from e2store.cover.search import suits_dlx

    run = CliRunner().invoke
    plain, plain_path = _inst(tmp_path, 5, 4, 3)
    dup = _with_copies(plain)
    dup_path = tmp_path / "dup.e2s"
    write_e2store(dup, dup_path)
    assert suits_dlx(plain) is None and suits_dlx(read_instance(dup_path)) == \
        "1 piece identical to another"

    def scan(path: Path, *args: str) -> tuple[str, int, str]:
        r = run(main, ["solve", str(path), "--json", *args])
        assert r.exit_code == 0, r.output
        d = json.loads(r.stdout)
        return d["scan"], d["solutions"], r.stderr

    kind, count, err = scan(dup_path)
    assert kind.startswith("dlx (hamming 0") and "--engine auto: dlx" in err
    assert count == solve_search(read_instance(dup_path)).solutions
    for args in (["--first"], ["--scan", "columnscan"], ["--distinct"], ["--kernel", "generic"],
                 ["--engine", "backtrack"]):
        kind, _, err = scan(dup_path, *args)
        assert not kind.startswith("dlx") and "--engine auto" not in err, args
    kind, count, err = scan(plain_path)
    assert kind == "rowscan" and "--engine auto" not in err
    kind, count2, _ = scan(plain_path, "--hamming", "1")
    assert kind.startswith("dlx (hamming 1") and count2 == count >= 1
    r = run(main, ["solve", str(plain_path), "--memory-budget", "1G"])
    assert r.exit_code == 2 and "--memory-budget needs --store DIR" in r.stderr
    r = run(main, ["solve", str(dup_path), "--hamming", "1", "--distinct"])
    assert r.exit_code == 2 and r.stderr.strip().splitlines() == [
        "e2store: error: --engine dlx takes no --distinct (dancing links over corolles: "
        "--first, --all, --max-nodes, --store, --hamming, --workers)"]


@pytest.mark.parametrize("hamming", [0, 1, 2])
def test_the_memory_is_counted_before_the_corolles_are_enumerated(tmp_path, hamming) -> None:
    """`planned_bytes` (from exact counts, nothing enumerated): the options the model then
    holds, and at least the bytes its table and corolles take."""
    from e2store.cover.model import planned_bytes
    from e2store.cover.search import xcc_bytes

    inst, _ = _inst(tmp_path, 5, 5, 4)
    options, need = planned_bytes(inst, hamming)
    m = build_model(inst, hamming)
    x, _, _ = model_xcc(m)
    assert options == m.n_options == x.n_options
    held = sum(o.nbytes for o in m.options)
    assert xcc_bytes(x) + held <= need <= 2 * (xcc_bytes(x) + held)


def test_workers_split_the_first_level(tmp_path) -> None:
    inst, _ = _inst(tmp_path, 5, 4, 3)
    one = solve_cover(inst, hamming=1, keep=1000)
    two = solve_cover(inst, hamming=1, keep=1000, workers=2)
    assert (two.solutions, two.complete) == (one.solutions, True)
    assert _boards(two) == _boards(one)
    with pytest.raises(SolverError, match="complete search"):
        solve_cover(inst, hamming=1, workers=2, first=True)


def test_ctrl_c_stops_the_search_with_its_report(tmp_path) -> None:
    """Ctrl-C during a long `solve --engine dlx`: it stops at its next slice (a quarter
    second), reports what it found as the backtracker does, and exits 130."""
    import os
    import signal
    import subprocess
    import sys
    import time

    _, path = _inst(tmp_path, 8, 8, 11)
    p = subprocess.Popen([sys.executable, "-m", "e2store", "solve", str(path), "--engine",
                          "dlx", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert p.stderr is not None
    deadline = time.monotonic() + 300  # a slow machine: imports, the model, the compile
    seen = ""
    while time.monotonic() < deadline and "options, a table of" not in seen:
        line = p.stderr.readline()
        if not line:
            break
        seen += line
    time.sleep(2)  # into the search
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (seen, err)
    doc = json.loads(out.splitlines()[-1])
    assert doc["interrupted"] and not doc["complete"] and doc["nodes"] > 0


def test_progress_counts_over_every_root(tmp_path) -> None:
    """`tick(nodes, solutions)` (the command's progress bar) counts on over the symmetry
    break's roots (two on a rectangle): never back, and ends at the report's totals."""
    inst, _ = _inst(tmp_path, 5, 4, 2)
    seen: list[tuple[int, int]] = []
    r = solve_cover(inst, hamming=0, tick=lambda n, k: seen.append((n, k)))
    assert len(seen) >= 2 and seen == sorted(seen)
    assert seen[-1] == (r.nodes, r.solutions) and r.solutions >= 1
    assert 0 < r.first_seconds <= r.seconds and r.first_nodes <= r.nodes


def test_the_first_solution_s_time_is_its_own_not_the_search_s(tmp_path) -> None:
    """The report's `first` is the time to the first solution (the end of the slice that
    found it), not the whole root's search: no later than the progress tick that first
    counts a solution, and well before the end."""
    import time

    inst, _ = _inst(tmp_path, 6, 6, 1)
    solve_cover(inst, hamming=0, max_nodes=1000)  # the kernel loaded
    t0, first_tick = time.perf_counter(), []

    def tick(n: int, k: int) -> None:
        if k and not first_tick:
            first_tick.append(time.perf_counter() - t0)

    r = solve_cover(inst, hamming=0, symmetry_break=False, max_nodes=1_500_000, tick=tick)
    assert r.first_nodes is not None and first_tick
    assert r.first_seconds <= first_tick[0] < r.seconds
    assert r.seconds - r.first_seconds > 0.5 * (r.seconds - first_tick[0])
