"""The product's block closure on sampled subtrees: table build, then plain against closure.

Builds the closure table of a benchmark board with the product (`build_closure`, timed:
the fillings estimate, then the fill by `--threads` threads), or reuses the one in
`--store`, then runs the product's complete search (`e2store.solver.search.solve`,
generated kernel) on `--samples` random subtrees (the corner fixed and the first
`--prefix` cells of row 0 seeded, numpy seed `--seed`, as `benchmarks/closures.py` draws
them) without and with the table, `--repeat` times each in alternation, and prints the
best seconds of each with nodes, probes, cuts, ns per node and the ratio.  Same
solutions asserted.  One process, one core for the searches.

    python benchmarks/closure_probe.py [--board 7] [--samples 20] [--prefix 5] [--seed 1]
                                       [--store DIR] [--threads 2] [--repeat 3]
                                       [--build-parts]
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from closures import BENCH, Board  # noqa: E402  (the same subtrees as benchmarks/closures.py)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def build_parts(inst, threads: int) -> None:
    """Seconds of the build's kernels: every filling counted, then added to a filter of the
    product's size, on one thread and on `threads` (disjoint shares, atomic ors)."""
    from concurrent.futures import ThreadPoolExecutor

    from e2store.query import _closure_kernels as CK
    from e2store.query.closures import interior_tables, table_words

    rot, istart, icand, k_col, _ = interior_tables(inst)
    bw = inst.width - 2
    CK.count_fillings(rot, istart, icand, k_col, bw, 10)  # compile
    n = 0
    for parts in (1, threads):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(parts) as pool:
            n = sum(pool.map(lambda k, p=parts: CK.count_fillings(
                rot, istart, icand, k_col, bw, 1 << 62, k, p), range(parts)))
        print(f"count, {parts} thread(s): {n:,} fillings, {time.perf_counter() - t0:.1f} s")
    for parts in (1, threads):
        bloom = np.zeros(table_words(n), np.uint64)
        bloom[:] = 0  # touch the pages before the clock starts
        t0 = time.perf_counter()
        with ThreadPoolExecutor(parts) as pool:
            got = sum(pool.map(lambda k, p=parts, f=bloom: CK.fill_bloom(
                rot, istart, icand, k_col, bw, f, k, p), range(parts)))
        assert got == n
        print(f"fill, {parts} thread(s): {bloom.nbytes / 2**20:,.0f} MiB, "
              f"{time.perf_counter() - t0:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", type=int, default=7)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--prefix", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", type=Path, default=None,
                    help="reuse (or build into) this store's table instead of timing a build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build-parts", action="store_true",
                    help="also time the build's kernels: counting and filling on 1 and "
                         "--threads threads")
    a = ap.parse_args()
    path = BENCH / f"pieces_{a.board}x{a.board}.txt"
    if not path.exists():
        sys.exit(f"{path} not found (the benchmark piece sets live in ../shared)")
    from e2store.query.closures import build_closure, open_closure
    from e2store.solver.search import solve

    b = Board(path)
    print(f"{b.inst.name}, {cpu_model()}")
    if a.store is not None:
        table = open_closure(a.store, b.inst, log=print)
    else:
        t0 = time.perf_counter()
        table = build_closure(b.inst, threads=a.threads)
        print(f"build: {table.fillings:,} fillings, {table.nbytes / 2**20:,.0f} MiB, "
              f"{time.perf_counter() - t0:.1f} s with {a.threads} threads")
    if a.build_parts:
        build_parts(b.inst, a.threads)
    pre = b.prefixes(a.prefix)
    pick = np.random.default_rng(a.seed).choice(len(pre), size=min(a.samples, len(pre)),
                                                replace=False)
    roots = [{(i % b.w, i // b.w): int(v) for i, v in enumerate(pre[j])} for j in pick]

    def run(closure) -> dict:
        t0 = time.perf_counter()
        nodes = sols = probes = cuts = 0
        for seed in roots:
            r = solve(b.inst, "rowscan", seed=seed, closure=closure, kernel="unrolled")
            nodes, sols = nodes + r.nodes, sols + r.solutions
            if closure is not None:
                probes, cuts = probes + r.closure["probes"], cuts + r.closure["cuts"]
        return {"seconds": time.perf_counter() - t0, "nodes": nodes, "solutions": sols,
                "probes": probes, "cuts": cuts}

    for closure in (None, table):  # compile (or load) both kernels before any clock
        run(closure)
    best: dict[str, dict] = {}
    for _ in range(max(1, a.repeat)):
        for name, closure in (("plain", None), ("closure", table)):
            r = run(closure)
            if name not in best or r["seconds"] < best[name]["seconds"]:
                best[name] = r
    assert best["plain"]["solutions"] == best["closure"]["solutions"]
    plain = best["plain"]
    print(f"{len(roots)} subtrees (prefix {a.prefix}, seed {a.seed}), best of {a.repeat}:")
    print(f"{'search':<9}{'nodes':>14}{'probes':>13}{'cuts':>13}{'seconds':>9}"
          f"{'ns/node':>9}{'vs plain':>9}")
    for name, r in best.items():
        print(f"{name:<9}{r['nodes']:>14,}{r['probes']:>13,}{r['cuts']:>13,}"
              f"{r['seconds']:>9.2f}{r['seconds'] / r['nodes'] * 1e9:>9.2f}"
              f"{r['seconds'] / plain['seconds']:>9.2f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")


if __name__ == "__main__":
    main()
