"""The exact models against e2store's kernels (issue 40, docs/exact.md): agreement and
seconds.

    python benchmarks/exact.py [--part counts solutions first best] [--sizes 4 5 ...]
        [--seconds 600]

counts:    every zone of the benchmark boards (../shared/instances/benchmark) at hamming 1
           (4x4-10x10) and hamming 2-3 (4x4, 5x5, or --sizes): the kernel's count, the
           DuckDB join's and ganak's, with seconds;
solutions: benchmark 4x4-6x6 with and without the symmetry break: SAT enumeration
           against `solve --all` (counts and seconds);
first:     time to a first solution, SAT against the backtracker, benchmark 6x6-7x7 and
           random 6x6-8x8 boards;
best:      random unsolvable 4x4-6x6 boards: MaxSAT's optimum against `solve --best`
           (5 s per board, every restart's board filled).
Each model call is bounded by --seconds (out of reach past it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "instances" / "benchmark"
sys.path.insert(0, str(ROOT / "tests"))


def _fmt(v) -> str:
    return "out of reach" if v is None else f"{v:,}"


def counts(sizes, seconds: float) -> None:
    from e2store.corolles.factorised import count_factorised
    from e2store.exact.check import check_count
    from e2store.instance.formats import read_instance
    from e2store.zones.zonemap import zone_map

    print(f"{'board':6} {'h':>2} {'cell':>6} {'kernel':>14} {'sql':>14} {'s':>7} "
          f"{'ganak':>14} {'s':>7} status")
    total = {"sql": 0.0, "count": 0.0}
    bad = 0
    for n in sizes:
        inst = read_instance(BENCH / f"pieces_{n}x{n}.txt")
        for h in (1, 2, 3) if n <= 5 else (1,):
            for z in zone_map(n, n, h).zones:
                want = count_factorised(inst, z.x, z.y, h).corolles
                c = check_count(inst, z.x, z.y, h, want, seconds=seconds)
                for k in total:
                    total[k] += c.seconds[k]
                bad += c.status == "disagree"
                print(f"{n}x{n:<4} {h:>2} {z.x},{z.y:<4} {want:>14,} {_fmt(c.models['sql']):>14} "
                      f"{c.seconds['sql']:>7.2f} {_fmt(c.models['count']):>14} "
                      f"{c.seconds['count']:>7.2f} {c.status}", flush=True)
    print(f"# disagreements: {bad}; seconds in all: sql {total['sql']:.1f}, "
          f"ganak {total['count']:.1f}")


def solutions(seconds: float) -> None:
    from e2store.exact.check import check_solutions
    from e2store.instance.formats import read_instance
    from e2store.solver.search import solve

    print(f"{'board':6} {'break':>5} {'solve --all':>11} {'s':>7} {'SAT':>6} {'s':>8} status")
    for n in (4, 5, 6):
        inst = read_instance(BENCH / f"pieces_{n}x{n}.txt")
        for sym in (True, False):
            t0 = time.perf_counter()
            want = solve(inst, "rowscan", symmetry_break=sym).solutions
            t = time.perf_counter() - t0
            c = check_solutions(inst, want, symmetry_break=sym, seconds=seconds)
            print(f"{n}x{n:<4} {'yes' if sym else 'no':>5} {want:>11} {t:>7.2f} "
                  f"{_fmt(c.models['sat']):>6} {c.seconds['sat']:>8.2f} {c.status}", flush=True)


def first(seconds: float) -> None:
    from helpers import random_instance

    from e2store.errors import OutOfReachError
    from e2store.exact.check import board_cnf
    from e2store.exact.models import run_model
    from e2store.instance.formats import read_instance
    from e2store.solver.search import solve

    boards = [(f"bench {n}x{n}", read_instance(BENCH / f"pieces_{n}x{n}.txt"))
              for n in (6, 7)]  # bench 8x8: the backtracker found none in 7 minutes
    boards += [(f"random {n}x{n}", random_instance(n, n, 7, n_frame=3, n_inner=n + 1))
               for n in (6, 7, 8)]
    solve(read_instance(BENCH / "pieces_4x4.txt"), "rowscan", first=True)  # compile first
    print(f"{'board':14} {'backtrack s':>11} {'nodes':>14} {'SAT s':>10} {'ratio':>8}")
    for name, inst in boards:
        t0 = time.perf_counter()
        r = solve(inst, "rowscan", first=True, symmetry_break=True)
        tb = time.perf_counter() - t0
        try:
            m = run_model("enumerate", board_cnf(inst, symmetry_break=True), limit=1,
                          seconds=seconds)
            ts = f"{m.first_seconds:.2f}"
            ratio = f"x{m.first_seconds / tb:,.0f}"
        except OutOfReachError:
            ts, ratio = f">{seconds:g}", f">x{seconds / tb:,.0f}"
        print(f"{name:14} {tb:>11.3f} {r.nodes:>14,} {ts:>10} {ratio:>8}", flush=True)


def best(seconds: float) -> None:
    from naive_best import unsolvable_pieces

    from e2store.exact.check import check_best
    from e2store.instance.model import Instance
    from e2store.solver.best import fill_holes, run_best

    print(f"{'board':8} {'joins':>5} {'solve --best':>12} {'MaxSAT':>7} {'s':>7} status")
    for n in (4, 5, 6):
        for seed in range(1, 4):
            inst = Instance(f"u{n}-{seed}", n, n, unsolvable_pieces(n, n, seed))
            run = run_best(inst, seconds=5)
            found = max(fill_holes(inst, r.board).score for r in run.results)
            c, _ = check_best(inst, found, seconds=seconds)
            joins = 2 * n * (n - 1)
            print(f"{n}x{n}-{seed:<3} {joins:>5} {found:>12} {_fmt(c.models['maxsat']):>7} "
                  f"{c.seconds['maxsat']:>7.2f} {c.status}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", nargs="+", default=["counts", "solutions", "first", "best"],
                    choices=["counts", "solutions", "first", "best"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[4, 5, 6, 7, 8, 9, 10])
    ap.add_argument("--seconds", type=float, default=600.0)
    a = ap.parse_args()
    if not BENCH.exists():
        sys.exit(f"benchmarks/exact.py: {BENCH} is missing (../shared)")
    for part in a.part:
        print(f"## {part}")
        if part == "counts":
            counts(a.sizes, a.seconds)
        else:
            globals()[part](a.seconds)


if __name__ == "__main__":
    main()
