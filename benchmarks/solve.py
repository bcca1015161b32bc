"""Benchmark the backtracking solver: nodes, seconds and nodes per second.

Runs on the benchmark instances read from ../shared: `pieces_6x6.txt`, all solutions, in
every scan order (rowscan with and without the symmetry break; quad-spiral, far slower on
this board, with a node limit), and the first solution of `pieces_7x7.txt`.  Each case runs
in a fresh process so its peak memory (max RSS, the whole Python process) is its own; the
kernel is compiled (or loaded from the numba cache) before the clock starts, and the time
is the best of `--repeat` runs in that process.  A node is one piece placed.

Finals (closures, `e2store.query.finals`): 6x6 all solutions, rowscan, with the four corner
regions at hamming 1 and 2 (their corolles enumerated into a temporary store first, corner
zone only), against the same search without: nodes, seconds, nodes saved and the cost per
node.  A full 7x7 search takes tens of minutes, so 7x7 is measured on `--seven-samples`
random complete subtrees (the corner fixed and the next three row-0 cells seeded), each
searched without finals and with them.

    python benchmarks/solve.py [--shared ../shared] [--quick] [--repeat 3] [--json OUT]
                               [--no-finals] [--seven-samples 6]
    python benchmarks/solve.py --openings-only [--openings-sample 2000] [--openings-budget 600]
    python benchmarks/solve.py --workers-only [--workers 2] [--workers-boards 6 7]
    python benchmarks/solve.py --store-only [--workers 2] [--workers-boards 6 7]

`--store-only`: the complete search over `--workers` processes without a store and with
one (`solve --workers N --store STORE`, the block closure table of `e2store.query.closures`):
the first run into an empty store (building the table included in its time), then a second
run reusing it; each in a fresh process (the plain search runs once untimed first, so its
generated kernel is compiled; the first store run compiles the closure kernel inside its
time, as a user's first run does); same nodes asserted between the two store runs, same
solutions as plain.

`--workers-only`: the complete search (corner fixed, rowscan) in one process (`solve`) and
over `--workers` processes (`solve --workers`, `e2store.solver.workers`), each in a fresh
process (worker start-up and kernel loading included in the multi-process time).

Reference (issue 5): the published C++ bruteforce runs the 6x6 all-solutions rowscan at 3.2
million nodes per second; the target here is at least 50 million per core.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
from pathlib import Path

from _fresh import in_fresh_process

REFERENCE_NODES_PER_S = 3.2e6
ROOT = Path(__file__).resolve().parents[1]
QUAD_LIMIT = 500_000_000
OPENINGS_CELLS = [(0, 0), (2, 0), (1, 1)]  # 7x7 openings: 8 cells of the NW corner region
OPENINGS_HAMMING = 1


def _case(path: str, scan: str, first: bool, symmetry_break: bool, node_limit: int | None,
          kernel: str, repeat: int, out: mp.Queue) -> None:
    """Child process: one measurement; puts a dict on `out`."""
    from e2store.instance.formats import read_instance
    from e2store.solver.search import solve

    inst = read_instance(path)
    solve(inst, scan, first=True, node_limit=1000)  # compile / load the kernels
    if not first and node_limit is None:
        solve(inst, scan, symmetry_break=symmetry_break, kernel=kernel)
    best = None
    for _ in range(repeat):
        r = solve(inst, scan, first=first, symmetry_break=symmetry_break,
                  node_limit=node_limit, kernel=kernel)
        if best is None or r.seconds < best.seconds:
            best = r
    assert best is not None
    out.put({"instance": inst.name, "scan": scan, "first": first, "kernel": kernel,
             "symmetry_break": symmetry_break, "complete": best.complete,
             "solutions": best.solutions, "nodes": best.nodes,
             "first_nodes": best.first_nodes, "seconds": best.seconds,
             "nodes_per_s": best.nodes_per_second,
             "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def _workers_case(path: str, workers: int, out: mp.Queue) -> None:
    """Child process: one complete search, in this process (workers 1) or over several."""
    import time

    from e2store.instance.formats import read_instance
    from e2store.solver.search import solve
    from e2store.solver.workers import solve_workers

    inst = read_instance(path)
    solve(inst, first=True, node_limit=1000)  # compile / load the kernels
    t0 = time.perf_counter()
    r = solve(inst) if workers == 1 else solve_workers(inst, workers=workers)
    wall = time.perf_counter() - t0
    out.put({"instance": inst.name, "workers": workers, "solutions": r.solutions,
             "nodes": r.nodes, "first_nodes": r.first_nodes, "seconds": wall,
             "nodes_per_s": r.nodes / wall if wall else 0.0,
             "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def _store_case(path: str, workers: int, store: str | None, out: mp.Queue) -> None:
    """Child process: one complete search over `workers` processes, plain (`store` None)
    or with the closure table of `store` (opened, or built, inside the timed span)."""
    import time

    from e2store.instance.formats import read_instance
    from e2store.query.closures import open_closure
    from e2store.solver.search import solve
    from e2store.solver.workers import solve_workers

    inst = read_instance(path)
    solve(inst, first=True, node_limit=1000)  # compile / load the generic kernel
    t0 = time.perf_counter()
    clo = None if store is None else open_closure(store, inst, copies=workers)
    r = solve_workers(inst, workers=workers, closure=clo)
    wall = time.perf_counter() - t0
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
              resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    out.put({"instance": inst.name, "workers": workers, "store": store is not None,
             "solutions": r.solutions, "nodes": r.nodes, "seconds": wall,
             "closure": r.closure, "peak_rss_mb": rss})


def report_store(paths: list[Path], workers: int) -> list[dict]:
    """Plain against --store (first run, then second), complete searches over `workers`."""
    import tempfile

    print(f"{'instance':<13}{'run':<14}{'solutions':>10}{'nodes':>17}{'cuts':>14}"
          f"{'build s':>9}{'seconds':>9}{'vs plain':>9}{'peak MB':>9}")
    rows = []
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="e2store-bench-") as store:
            in_fresh_process(_store_case, str(path), workers, None)  # compile, not timed
            plain = in_fresh_process(_store_case, str(path), workers, None)
            runs = [("plain", plain),
                    ("store, first", in_fresh_process(_store_case, str(path), workers, store)),
                    ("store, second", in_fresh_process(_store_case, str(path), workers, store))]
        assert runs[1][1]["nodes"] == runs[2][1]["nodes"]
        for name, r in runs:
            assert r["solutions"] == plain["solutions"]
            c = r["closure"] or {}
            r.update(run=name, vs_plain=plain["seconds"] / r["seconds"])
            rows.append(r)
            build = c.get("build_seconds", 0.0) if c.get("built") else 0.0
            print(f"{r['instance']:<13}{name:<14}{r['solutions']:>10,}{r['nodes']:>17,}"
                  f"{c.get('cuts', 0):>14,}{build:>9.1f}{r['seconds']:>9.2f}"
                  f"{r['vs_plain']:>9.2f}{r['peak_rss_mb']:>9.0f}", flush=True)
    return rows


def report_workers(paths: list[Path], workers: int) -> list[dict]:
    """One process against `workers` processes, complete searches: wall time and ratio."""
    print(f"{'instance':<13}{'workers':>8}{'solutions':>11}{'nodes':>18}{'seconds':>10}"
          f"{'M nodes/s':>10}{'speed-up':>9}{'peak MB':>9}")
    rows = []
    for path in paths:
        one = None
        for n in (1, workers):
            r = in_fresh_process(_workers_case, str(path), n)
            one = r if n == 1 else one
            assert one is not None and (r["solutions"], r["nodes"]) == (one["solutions"],
                                                                       one["nodes"])
            r["speed_up"] = one["seconds"] / r["seconds"]
            rows.append(r)
            print(f"{r['instance']:<13}{n:>8}{r['solutions']:>11,}{r['nodes']:>18,}"
                  f"{r['seconds']:>10.2f}{r['nodes_per_s'] / 1e6:>10.1f}"
                  f"{r['speed_up']:>9.2f}{r['peak_rss_mb']:>9.0f}", flush=True)
    return rows


def run_case(path: Path, *args) -> dict:
    return in_fresh_process(_case, str(path), *args)


def _finals_index(inst, hamming: int, store: Path):
    """Enumerate the corner zone(s) at `hamming` into `store` and load the corner finals."""
    from e2store.query.finals import corner_cells, load_finals
    from e2store.store.build import enumerate_store
    from e2store.zones.zonemap import zone_map

    zm = zone_map(inst.width, inst.height, hamming)
    zones = {zm.zone_at(x, y).id for x, y in corner_cells(inst.width, inst.height)}
    enumerate_store(store, inst, hamming, zones, forms=("flat",))
    return load_finals(store, inst, "corners", hamming)


def _variants(hammings: list[int]) -> list[tuple[int | None, str]]:
    """Finals variants: none with either kernel (finals run the generic kernel only), then
    each hamming."""
    return [(None, "generic"), (None, "unrolled"), *[(h, "generic") for h in hammings]]


def _variant(r: dict) -> str:
    return f"none/{r['kernel'][:3]}" if r["hamming"] is None else f"h={r['hamming']}"


def _finals_case(path: str, hammings: list[int], repeat: int, out: mp.Queue) -> None:
    """Child process: 6x6 all solutions rowscan without finals and with each hamming."""
    import tempfile
    import time

    from e2store.instance.formats import read_instance
    from e2store.solver.search import solve

    inst = read_instance(path)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for h, kernel in _variants(hammings):
            t0 = time.perf_counter()
            fin = None if h is None else _finals_index(inst, h, Path(tmp))
            load = time.perf_counter() - t0
            solve(inst, finals=fin, kernel=kernel)  # compile / load the kernels
            best = min((solve(inst, finals=fin, kernel=kernel) for _ in range(repeat)),
                       key=lambda r: r.seconds)
            rows.append({"instance": inst.name, "hamming": h, "kernel": kernel,
                         "solutions": best.solutions,
                         "nodes": best.nodes, "seconds": best.seconds,
                         "nodes_per_s": best.nodes_per_second, "cuts": best.cuts,
                         "load_seconds": load,
                         "corolles": None if fin is None else [r.n for r in fin.regions]})
    out.put(rows)


def _seven_case(path: str, hammings: list[int], samples: int, out: mp.Queue) -> None:
    """Child process: random complete 7x7 subtrees (corner + 3 seeded row-0 cells), each
    without finals and with each hamming; totals per variant."""
    import random
    import tempfile

    from e2store.instance.formats import read_instance
    from e2store.solver.plan import lowest_corner
    from e2store.solver.search import solve

    inst = read_instance(path)
    rot = inst.rotated_table()
    corner = lowest_corner(inst)
    north = [(p, r) for p in range(inst.n_pieces) for r in range(4)
             if rot[p * 4 + r, 1] == 0 and (rot[p * 4 + r] == 0).sum() == 1]

    def prefixes(cells, left):  # row-0 seeds: each east side matching the next west side
        if not cells:
            yield []
            return
        for p, r in north:
            if p not in left[0] and rot[p * 4 + r, 0] == left[1]:
                for rest in prefixes(cells[1:], (left[0] | {p}, rot[p * 4 + r, 2])):
                    yield [(cells[0], (p, r)), *rest]

    start = rot[corner[0] * 4 + corner[1], 2]
    every = list(prefixes([(1, 0), (2, 0), (3, 0)], ({corner[0]}, start)))
    chosen = random.Random(1).sample(every, min(samples, len(every)))
    seeds = [{(0, 0): corner, **dict(s)} for s in chosen]
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for h, kernel in _variants(hammings):
            fin = None if h is None else _finals_index(inst, h, Path(tmp))
            solve(inst, seed=seeds[0], finals=fin, kernel=kernel)  # compile / load
            rs = [solve(inst, seed=s, finals=fin, kernel=kernel) for s in seeds]
            totals.append({"hamming": h, "kernel": kernel, "subtrees": len(seeds),
                           "of": len(every),
                           "solutions": sum(r.solutions for r in rs),
                           "nodes": sum(r.nodes for r in rs),
                           "seconds": sum(r.seconds for r in rs)})
    out.put(totals)


def report_finals(six: Path, seven: Path, repeat: int, samples: int) -> list:
    """Run and print the finals cases; returns their rows."""
    rows = in_fresh_process(_finals_case, str(six), [1, 2], repeat)
    base = rows[0]
    print(f"\nfinals, {base['instance']} all solutions, rowscan, corner fixed, corner regions")
    print(f"{'finals':<9}{'solutions':>10}{'nodes':>13}{'saved':>8}{'seconds':>9}"
          f"{'M nodes/s':>10}{'ns/node':>9}{'load s':>8}  cuts per region")
    for r in rows:
        name = _variant(r)
        saved = 1 - r["nodes"] / base["nodes"]
        print(f"{name:<9}{r['solutions']:>10,}{r['nodes']:>13,}{saved:>8.1%}"
              f"{r['seconds']:>9.3f}{r['nodes_per_s'] / 1e6:>10.1f}"
              f"{r['seconds'] / r['nodes'] * 1e9:>9.1f}{r['load_seconds']:>8.2f}  "
              f"{r['cuts'] or ''}", flush=True)
    if samples and seven.exists():
        sev = in_fresh_process(_seven_case, str(seven), [1, 2], samples)
        b = sev[0]
        print(f"\nfinals, 7x7 all solutions, rowscan: {b['subtrees']} random complete "
              f"subtrees of {b['of']} (corner + 3 row-0 cells seeded)")
        print(f"{'finals':<9}{'solutions':>10}{'nodes':>15}{'saved':>8}{'seconds':>9}"
              f"{'M nodes/s':>10}{'ns/node':>9}")
        for r in sev:
            name = _variant(r)
            print(f"{name:<9}{r['solutions']:>10,}{r['nodes']:>15,}"
                  f"{1 - r['nodes'] / b['nodes']:>8.1%}{r['seconds']:>9.2f}"
                  f"{r['nodes'] / r['seconds'] / 1e6:>10.1f}"
                  f"{r['seconds'] / r['nodes'] * 1e9:>9.1f}", flush=True)
        rows += sev
    return rows


def report_openings(seven: Path, workers: int, hamming: int, cells: list[tuple[int, int]],
                    sample: int, budget: float, kernel: str = "auto") -> dict:
    """7x7 all solutions with openings over `workers` processes (no finals): build the
    store partitions of `cells` in a temp dir, the symmetry-broken openings, then solve a
    random sample of them; when the sample extrapolates to at most `budget` seconds, solve
    them all.  Returns the row printed."""
    import tempfile
    import time
    from dataclasses import replace

    import numpy as np

    from e2store.instance.formats import read_instance
    from e2store.query.openings import openings
    from e2store.solver.parallel import solve_openings
    from e2store.store.build import enumerate_store
    from e2store.zones.zonemap import zone_map

    inst = read_instance(seven)
    zm = zone_map(inst.width, inst.height, hamming)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        enumerate_store(tmp, inst, hamming, {zm.zone_at(x, y).id for x, y in cells})
        store_s = time.perf_counter() - t0
        op = openings(inst, tmp, cells, hamming, symmetry_break=True)
    where = " ".join(f"{x},{y}" for x, y in cells)
    print(f"\nopenings, {inst.name} all solutions, rowscan, corner fixed, no finals: cells "
          f"{where}, hamming {hamming}: {op.count:,} openings of {len(op.covered)} cells "
          f"(store {store_s:.1f} s, join {op.seconds:.2f} s), {workers} workers, "
          f"{kernel} kernel", flush=True)
    row = {"instance": inst.name, "cells": [list(c) for c in cells], "hamming": hamming,
           "openings": op.count, "workers": workers, "openings_seconds": op.seconds,
           "kernel": kernel}
    n = min(sample, op.count) if sample > 0 else op.count
    idx = np.sort(np.random.default_rng(1).choice(op.count, size=n, replace=False))
    r = solve_openings(inst, replace(op, boards=op.boards[idx]), workers=workers,
                       kernel=kernel)
    busy = sum(w["seconds"] for w in r.per_worker)
    scale = op.count / n
    per = r.opening_nodes
    se = float(per.std(ddof=1)) * np.sqrt(n) * scale if n > 1 else 0.0
    row.update(sample=n, sample_solutions=r.solutions, sample_nodes=r.nodes,
               sample_seconds=r.seconds, sample_busy_seconds=busy,
               nodes_per_s=r.nodes / r.seconds, nodes_per_s_per_worker=r.nodes / busy,
               est_nodes=r.nodes * scale, est_nodes_95=1.96 * se,
               est_solutions=r.solutions * scale, est_seconds=r.seconds * scale)
    label = "all" if n == op.count else f"sample {n:,} of {op.count:,} (random)"
    print(f"{label}: {r.solutions:,} solutions, {r.nodes:,} nodes in {r.seconds:.1f} s wall "
          f"({busy:.1f} s busy in workers) = {r.nodes / r.seconds / 1e6:.1f} M nodes/s over "
          f"{workers} workers, {r.nodes / busy / 1e6:.1f} M nodes/s per busy worker",
          flush=True)
    if n < op.count:
        print(f"ESTIMATE (extrapolated from the sample, not measured): {r.nodes * scale:.3g} "
              f"+- {1.96 * se:.2g} nodes (95%), ~{r.solutions * scale:,.0f} solutions, "
              f"~{r.seconds * scale:,.0f} s on {workers} workers at the sample's rate",
              flush=True)
        if r.seconds * scale <= budget:
            full = solve_openings(inst, op, workers=workers, kernel=kernel)
            row.update(solutions=full.solutions, nodes=full.nodes, seconds=full.seconds)
            print(f"all {op.count:,} openings: {full.solutions:,} solutions, "
                  f"{full.nodes:,} nodes in {full.seconds:.1f} s = "
                  f"{full.nodes_per_second / 1e6:.1f} M nodes/s", flush=True)
        else:
            print(f"the complete run (~{r.seconds * scale:,.0f} s) exceeds the budget of "
                  f"{budget:.0f} s (--openings-budget): not run", flush=True)
    else:
        row.update(solutions=r.solutions, nodes=r.nodes, seconds=r.seconds)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared",
                    help="the shared data folder (default: ../shared beside the repository)")
    ap.add_argument("--quick", action="store_true", help="6x6 rowscan only")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case, the best counts")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    ap.add_argument("--no-finals", action="store_true", help="skip the finals cases")
    ap.add_argument("--seven-samples", type=int, default=6,
                    help="7x7 subtrees searched with and without finals (0: none)")
    ap.add_argument("--openings-sample", type=int, default=2000,
                    help="7x7 openings solved (a random sample; 0: all of them)")
    ap.add_argument("--openings-budget", type=float, default=600.0,
                    help="solve all 7x7 openings when the sample extrapolates to at most this "
                    "many seconds")
    ap.add_argument("--openings-workers", type=int, default=2)
    ap.add_argument("--openings-kernel", default="auto", choices=("auto", "generic", "unrolled"),
                    help="kernel of the openings' subtrees (default: auto, the generated one)")
    ap.add_argument("--openings-only", action="store_true", help="only the 7x7 openings case")
    ap.add_argument("--workers-only", action="store_true",
                    help="only the complete searches in one process against --workers")
    ap.add_argument("--store-only", action="store_true",
                    help="only the complete searches over --workers without and with --store")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--workers-boards", type=int, nargs="+", default=[6, 7])
    args = ap.parse_args()
    bench = args.shared / "instances" / "benchmark"
    six, seven = bench / "pieces_6x6.txt", bench / "pieces_7x7.txt"
    if not six.exists():
        print(f"benchmark instance not found: {six} (give --shared)", file=sys.stderr)
        return 2
    if args.store_only or args.workers_only:
        report = report_store if args.store_only else report_workers
        rows = report([bench / f"pieces_{n}x{n}.txt" for n in args.workers_boards],
                      args.workers)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
        return 0
    if args.openings_only:
        row = report_openings(seven, args.openings_workers, OPENINGS_HAMMING, OPENINGS_CELLS,
                              args.openings_sample, args.openings_budget, args.openings_kernel)
        if args.json:
            args.json.write_text(json.dumps([row], indent=1))
        return 0
    # (instance, scan, first, symmetry break, node limit, kernel of complete searches)
    cases = [(six, "rowscan", False, True, None, "generic"),
             (six, "rowscan", False, True, None, "unrolled")]
    if not args.quick:
        cases += [(six, "rowscan", False, False, None, k) for k in ("generic", "unrolled")]
        cases += [(six, s, False, True, None, "auto")
                  for s in ("columnscan", "diagonal", "spiral-in", "spiral-out")]
        cases += [(six, "quad-spiral", False, True, QUAD_LIMIT, "auto")]
        if seven.exists():
            cases += [(seven, s, True, True, None, "auto") for s in ("rowscan", "columnscan")]
    print(f"{'instance':<11}{'scan':<12}{'mode':<6}{'sym':>4}{'kernel':>9}{'solutions':>10}"
          f"{'nodes':>15}{'first at':>13}{'seconds':>9}{'M nodes/s':>10}{'peak MB':>9}")
    rows = []
    for inst_path, scan, first, sym, limit, kernel in cases:
        r = run_case(inst_path, scan, first, sym, limit, kernel, args.repeat)
        rows.append(r)
        mode = "first" if first else "all"
        sols = f"{r['solutions']:,}" + ("" if r["complete"] else "+")
        print(f"{r['instance']:<11}{scan:<12}{mode:<6}{'yes' if sym else 'no':>4}{kernel:>9}"
              f"{sols:>10}{r['nodes']:>15,}{r['first_nodes'] or 0:>13,}{r['seconds']:>9.3f}"
              f"{r['nodes_per_s'] / 1e6:>10.1f}{r['peak_rss_mb']:>9.0f}", flush=True)
    for head in rows[:2]:
        print(f"\n6x6 all solutions, rowscan, corner fixed, {head['kernel']} kernel: "
              f"{head['nodes']:,} nodes in {head['seconds']:.3f} s = "
              f"{head['nodes_per_s'] / 1e6:.1f} M nodes/s on one core, "
              f"{head['nodes_per_s'] / REFERENCE_NODES_PER_S:.0f}x the published C++ "
              f"({REFERENCE_NODES_PER_S / 1e6:.1f} M nodes/s)")
    if any(not r["complete"] for r in rows):
        print(f"'+': stopped at the node limit ({QUAD_LIMIT:,} nodes), solutions so far")
    if not args.no_finals:
        rows += report_finals(six, seven, args.repeat, 0 if args.quick else args.seven_samples)
    if not args.quick and seven.exists():
        rows.append(report_openings(seven, args.openings_workers, OPENINGS_HAMMING,
                                    OPENINGS_CELLS, args.openings_sample, args.openings_budget,
                                    args.openings_kernel))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
