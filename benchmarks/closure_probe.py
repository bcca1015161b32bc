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

`--build-parts` times the build's kernels through their public wrappers
(`e2store.query.closures.count_block_fillings`, `fill_block_table`).  The generated
kernel's batch of held probes (its stash, docs/benchmarks.md) has no public setting, so
this script times the product's value only (the stash sweep was `--stash`, removed with the
benchmarks' last private import).
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

    from e2store.query.closures import (
        count_block_fillings,
        fill_block_table,
        interior_tables,
        table_words,
    )

    rot, istart, icand, k_col, _ = interior_tables(inst)
    bw = inst.width - 2
    count_block_fillings(rot, istart, icand, k_col, bw, 10)  # compile
    n = 0
    for parts in (1, threads):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(parts) as pool:
            n = sum(pool.map(lambda k, p=parts: count_block_fillings(
                rot, istart, icand, k_col, bw, 1 << 62, k, p), range(parts)))
        print(f"count, {parts} thread(s): {n:,} fillings, {time.perf_counter() - t0:.1f} s")
    for parts in (1, threads):
        bloom = np.zeros(table_words(n), np.uint64)
        bloom[:] = 0  # touch the pages before the clock starts
        t0 = time.perf_counter()
        with ThreadPoolExecutor(parts) as pool:
            got = sum(pool.map(lambda k, p=parts, f=bloom: fill_block_table(
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

    cases = [("plain", None), ("closure", table)]
    for _, closure in cases:  # compile (or load) every kernel before any clock
        run(closure)
    runs: dict[str, list[dict]] = {name: [] for name, _ in cases}
    for k in range(max(1, a.repeat)):
        for name, closure in (cases if k % 2 == 0 else cases[::-1]):
            runs[name].append(run(closure))
    for name in runs:
        assert runs[name][0]["solutions"] == runs["plain"][0]["solutions"]
        assert len({(r["nodes"], r["probes"], r["cuts"]) for r in runs[name]}) == 1
    plain = min(r["seconds"] for r in runs["plain"])
    print(f"{len(roots)} subtrees (prefix {a.prefix}, seed {a.seed}), {a.repeat} rounds:")
    print(f"{'search':<10}{'nodes':>14}{'probes':>13}{'cuts':>13}{'best s':>8}{'median':>8}"
          f"{'ns/node':>9}{'vs plain':>9}")
    for name, rs in runs.items():
        r, best = rs[0], min(x["seconds"] for x in rs)
        median = float(np.median([x["seconds"] for x in rs]))
        print(f"{name:<10}{r['nodes']:>14,}{r['probes']:>13,}{r['cuts']:>13,}{best:>8.2f}"
              f"{median:>8.2f}{best / r['nodes'] * 1e9:>9.2f}{best / plain:>9.2f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")


if __name__ == "__main__":
    main()
