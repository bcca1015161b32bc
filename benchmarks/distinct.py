"""Benchmark `e2store solve --all --distinct` on the Eternity II clue puzzles (../shared).

Two tables.  *Complete*: `solve_workers(..., distinct=True)` (what `e2store solve CLUE --all
--distinct --workers N` runs), one fresh process per puzzle: distinct solutions, the raw
count they stand for, nodes, seconds, peak memory.  *Shrink*: below the first distinct
solution's first R rows (seeded, so the raw search fits), the raw search against the
distinct one: solutions (raw, both ways), nodes and seconds of each, the ratio.  With
`--store H`, a third table instead: the store's flat form against its distinct form
(`e2store enumerate --form flat --distinct`) at hamming H, every zone: rows, bytes,
seconds, and the distinct count tables' figures (`e2store tabulate --distinct`).

    python benchmarks/distinct.py [--clues 1 3] [--workers 2] [--rows 2] [--no-complete]
    python benchmarks/distinct.py --store 1 --clues 1 2 3 4 [--workers 2]
    python benchmarks/distinct.py --toggle-cost [--seeded 3]

`--toggle-cost`: what the distinct kernel's toggle costs per node, on a board without
identical pieces (benchmark 7x7, the first --seeded cells of its first solution fixed):
the plain and the distinct generated kernel walk the very same tree, so their node rates
compare the kernels alone (three rounds, alternating).
"""

from __future__ import annotations

import argparse
import platform
import resource
import time
from pathlib import Path

from _fresh import in_fresh_process

SHARED = Path(__file__).resolve().parents[2] / "shared" / "instances"


def _complete(clue: int, workers: int, out) -> None:
    """Child process: the complete distinct search of one clue puzzle."""
    from e2store.instance.formats import read_instance
    from e2store.solver.workers import solve_workers

    inst = read_instance(SHARED / f"clue{clue}_jwortmann.txt")
    t0 = time.perf_counter()
    r = solve_workers(inst, workers=workers, distinct=True, max_stored=0, progress=True)
    out.put({"clue": clue, "size": f"{inst.width}x{inst.height}",
             "distinct": r.distinct_solutions, "raw": r.solutions, "nodes": r.nodes,
             "seconds": time.perf_counter() - t0,
             "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def _shrink(clue: int, rows: int, out) -> None:
    """Child process: raw against distinct below a seeded prefix of one clue puzzle."""
    from e2store.instance.formats import read_instance
    from e2store.solver.search import solve

    inst = read_instance(SHARED / f"clue{clue}_jwortmann.txt")
    w = inst.width
    cells = rows * w
    board = solve(inst, first=True, distinct=True).boards[0]
    seed = {(c % w, c // w): int(board[c]) for c in range(cells)}
    solve(inst, seed=seed, distinct=True, max_stored=0, node_limit=1)  # compile first
    solve(inst, seed=seed, max_stored=0, node_limit=1)
    t0 = time.perf_counter()
    raw = solve(inst, seed=seed, max_stored=0)
    t1 = time.perf_counter()
    dist = solve(inst, seed=seed, distinct=True, max_stored=0)
    t2 = time.perf_counter()
    assert raw.solutions == dist.solutions, (raw.solutions, dist.solutions)
    out.put({"clue": clue, "cells": cells, "raw": raw.solutions,
             "distinct": dist.distinct_solutions, "raw_nodes": raw.nodes,
             "nodes": dist.nodes, "raw_s": t1 - t0, "s": t2 - t1})


def _store(clue: int, hamming: int, threads: int, out) -> None:
    """Child process: flat and distinct forms of one clue puzzle's zones in a fresh store."""
    import tempfile

    from e2store.instance.formats import read_instance
    from e2store.store.build import enumerate_store

    inst = read_instance(SHARED / f"clue{clue}_jwortmann.txt")
    enumerate_store(tempfile.mkdtemp(), inst, 1, [0], forms=("flat", "distinct"))  # compile
    row = {"clue": clue, "size": f"{inst.width}x{inst.height}"}
    with tempfile.TemporaryDirectory() as root:
        for form in ("flat", "distinct"):
            t0 = time.perf_counter()
            parts = enumerate_store(Path(root), inst, hamming, None, forms=(form,),
                                    threads=threads)
            row[form] = {"rows": sum(p.rows for p in parts),
                         "corolles": sum(p.corolles for p in parts),
                         "bytes": sum(p.bytes for p in parts),
                         "seconds": time.perf_counter() - t0}
    out.put(row)


def _store_table(clues: list[int], hamming: int, threads: int) -> None:
    print("\n| clue | board | h | corolles (raw, every partition) | flat rows | distinct rows "
          "| rows ratio | flat bytes | distinct bytes | bytes ratio | flat s | distinct s |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for clue in clues:
        r = in_fresh_process(_store, clue, hamming, threads)
        f, d = r["flat"], r["distinct"]
        assert f["corolles"] == d["corolles"], (f, d)
        print(f"| {clue} | {r['size']} | {hamming} | {f['corolles']:,} | {f['rows']:,} | "
              f"{d['rows']:,} | {f['rows'] / d['rows']:.1f} | {f['bytes']:,} | "
              f"{d['bytes']:,} | {f['bytes'] / d['bytes']:.1f} | {f['seconds']:.2f} | "
              f"{d['seconds']:.2f} |", flush=True)


def _toggle_cost(seeded: int, out) -> None:
    """Child process: plain against distinct generated kernel on the same tree."""
    from e2store.instance.formats import read_instance
    from e2store.solver.search import solve

    inst = read_instance(SHARED / "benchmark" / "pieces_7x7.txt")
    w = inst.width
    board = solve(inst, first=True).boards[0]
    seed = {(c % w, c // w): int(board[c]) for c in range(seeded)}
    rows = []
    for rnd in range(4):
        for dist in (False, True):
            t0 = time.perf_counter()
            r = solve(inst, seed=seed, distinct=dist, max_stored=0, kernel="unrolled")
            if rnd:  # round 0 compiles
                rows.append((dist, r.nodes, time.perf_counter() - t0))
    out.put(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clues", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rows", type=int, default=2, help="rows seeded in the shrink table")
    ap.add_argument("--no-complete", action="store_true", help="only the shrink table")
    ap.add_argument("--store", type=int, default=None, metavar="H",
                    help="the store table at hamming H instead (flat against distinct form)")
    ap.add_argument("--toggle-cost", action="store_true",
                    help="plain against distinct kernel on one tree (benchmark 7x7) instead")
    ap.add_argument("--seeded", type=int, default=3, help="cells fixed for --toggle-cost")
    a = ap.parse_args()
    print(f"host: {platform.processor() or platform.machine()}, {a.workers} workers")
    if a.toggle_cost:
        print("\n| kernel | nodes | seconds | M nodes/s |\n|---|--:|--:|--:|")
        for dist, nodes, sec in in_fresh_process(_toggle_cost, a.seeded):
            print(f"| {'distinct' if dist else 'plain'} | {nodes:,} | {sec:.2f} | "
                  f"{nodes / sec / 1e6:.1f} |")
        return
    if a.store is not None:
        _store_table(a.clues, a.store, a.workers)
        return
    print("\n| clue | cells seeded | raw solutions | distinct | raw nodes | distinct nodes "
          "| nodes ratio | raw s | distinct s |")
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for clue in a.clues:
        r = in_fresh_process(_shrink, clue, a.rows)
        print(f"| {clue} | {r['cells']} | {r['raw']:,} | {r['distinct']:,} | "
              f"{r['raw_nodes']:,} | {r['nodes']:,} | {r['raw_nodes'] / r['nodes']:.1f} | "
              f"{r['raw_s']:.2f} | {r['s']:.2f} |", flush=True)
    if a.no_complete:
        return
    print("\n| clue | board | distinct solutions | raw solutions | nodes | seconds | peak MB |")
    print("|--:|---|--:|--:|--:|--:|--:|")
    for clue in a.clues:
        r = in_fresh_process(_complete, clue, a.workers)
        print(f"| {r['clue']} | {r['size']} | {r['distinct']:,} | {r['raw']:,} | "
              f"{r['nodes']:,} | {r['seconds']:.1f} | {r['peak_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
