"""Benchmark the two corolle counters side by side (issue 27): the list walk
(`count_prefix_lists`, each candidate's piece checked in a bool array, the last level
scanned) and the bitset counter (`count_prefix_bits`, the solver's way: piece bitsets, the
last level by popcount), on the same prefixes, one thread, in one process, alternating, best of
--repeat.

Default: benchmark 6x6 hamming 2 at cell (2,1) (85,986,347 corolles, 373,888,007 nodes;
the published C++ generator: 90 s on an Intel Xeon of this machine kind).

With --emit, the emitters too (every corolle written to 1 M-row slot-major chunks, no
encoding): the list walk (`list_emitter`, with the frontier), the bitset walk with
the frontier (`walk_chunks`) and without it (`walk_cells`, what the store writes from).

    python benchmarks/count_kernels.py [--shared ../shared] [--size 6] [--cell 2 1]
        [--hamming 2] [--repeat 3] [--emit]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from _data import piece_file
from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--size", type=int, default=6)
    ap.add_argument("--cell", type=int, nargs=2, default=(2, 1))
    ap.add_argument("--hamming", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--emit", action="store_true", help="also time the emitters")
    args = ap.parse_args()
    path = piece_file(args.shared, f"{args.size}x{args.size}")

    from e2store.corolles.enumerate import (
        bit_tables,
        candidate_table,
        choose_prefix_depth,
        corolle_layout,
        count_prefix_bits,
        count_prefix_lists,
    )
    from e2store.instance.formats import read_instance

    inst = read_instance(path)
    x, y = args.cell
    layout = corolle_layout(inst.width, inst.height, x, y, args.hamming)
    table = candidate_table(inst, layout)
    prefixes, _ = choose_prefix_depth(layout, table, 64)
    bits = bit_tables(layout, table)
    kernels = {
        "list walk": lambda p: count_prefix_lists(p, layout, table),
        "bitsets": lambda p: count_prefix_bits(p, layout, bits),
    }
    for fn in kernels.values():  # compile, or load from numba's cache
        fn(prefixes[:1])
    best = dict.fromkeys(kernels, float("inf"))
    found = {}
    for _ in range(args.repeat):
        for name, fn in kernels.items():
            t = time.perf_counter()
            counts, nodes = fn(prefixes)
            best[name] = min(best[name], time.perf_counter() - t)
            found[name] = (int(counts.sum()), int(nodes.sum()))
    if len(set(found.values())) != 1:
        print(f"the counters disagree: {found}", file=sys.stderr)
        return 1
    corolles, nodes = found["bitsets"]
    print(f"host: {cpu_model()}")
    print(f"{path.name}, hamming {args.hamming} at ({x},{y}), one thread, "
          f"{len(prefixes)} prefixes of {prefixes.shape[1]} levels: {corolles:,} corolles, "
          f"{nodes:,} nodes below them (best of {args.repeat})")
    for name, t in best.items():
        print(f"  {name:<10} {t:7.2f} s  {nodes / t / 1e6:6.1f} M nodes/s")
    print(f"  bitsets / list walk: {best['list walk'] / best['bitsets']:.2f}x")
    if args.emit:
        _emitters(layout, table, corolles, args.repeat)
    return 0


def _emitters(layout, table, corolles: int, repeat: int) -> None:
    """Time the three emitters over the whole walk, alternating, best of `repeat`."""
    import numpy as np

    from e2store.corolles.enumerate import list_emitter, walk_cells, walk_chunks

    rows = 1 << 20

    def list_walk() -> int:
        emit, n = list_emitter(layout, table), 0
        while True:
            cells = np.full((layout.n_slots, rows), -1, dtype=np.int16)
            front = np.full((layout.n_frontier, rows), -1, dtype=np.int8)
            got = emit(cells, front)
            n += got
            if got < rows:  # fewer rows than asked: the walk has ended
                return n

    emitters = {
        "list walk, frontier": list_walk,
        "bitsets, frontier": lambda: sum(c.shape[1] for c, _ in walk_chunks(layout, table,
                                                                              rows)),
        "bitsets, cells only": lambda: sum(c.shape[1] for c in walk_cells(layout, table,
                                                                          rows)),
    }
    best = dict.fromkeys(emitters, float("inf"))
    for _ in range(repeat):
        for name, fn in emitters.items():
            t = time.perf_counter()
            n = fn()
            best[name] = min(best[name], time.perf_counter() - t)
            if n != corolles:
                raise SystemExit(f"{name} emitted {n:,} corolles, expected {corolles:,}")
    print(f"emitting every corolle ({corolles:,}), one thread, best of {repeat}:")
    for name, t in best.items():
        print(f"  {name:<20} {t:7.2f} s  {corolles / t / 1e6:6.1f} M corolles/s")


if __name__ == "__main__":
    sys.exit(main())
