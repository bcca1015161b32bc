"""Where the nodes of a rowscan search lie, row by row: the bound on any closure table.

A closure table probed at the end of row r can cut only the nodes below that point, so if a
fraction q of the nodes lies in rows r+1 and below, the search can at best become
1 / (1 - q) times faster (probes at zero cost).  This script estimates the nodes per row by
Knuth's random paths (each path picks a uniformly random candidate at every cell and weighs
the cell by the product of the candidate counts above it: an unbiased estimate of the nodes
at each depth), on the symmetry-broken rowscan search the solver runs (the lowest-numbered
corner piece fixed on (0, 0)).  Pure Python on purpose: it shares no code with the kernels.

    python benchmarks/node_profile.py [--sizes 7 8] [--paths 400000] [--seeds 1 2 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"


def profile(pieces: list[tuple[int, int, int, int]], width: int, height: int, paths: int,
            seed: int) -> list[float]:
    """Estimated nodes at each depth of the rowscan search (depth 0: the fixed corner)."""
    def shown(p: int, r: int, side: int) -> int:
        return pieces[p][(side - r) % 4]

    cand: dict[tuple, list[tuple[int, int, int]]] = defaultdict(list)
    for p in range(len(pieces)):
        for r in range(4):
            s = [shown(p, r, k) for k in range(4)]
            cand[(tuple(c == 0 for c in s), s[0], s[1])].append((p, s[2], s[3]))
    corner = min(p for p, c in enumerate(pieces) if sum(v == 0 for v in c) == 2)
    r0 = next(r for r in range(4) if shown(corner, r, 0) == 0 and shown(corner, r, 1) == 0)
    n = width * height
    total = [0.0] * n
    rng = random.Random(seed)
    for _ in range(paths):
        used = {corner}
        east, south = [0] * n, [0] * n
        east[0], south[0] = shown(corner, r0, 2), shown(corner, r0, 3)
        weight = 1.0
        total[0] += 1
        for i in range(1, n):
            x, y = i % width, i // width
            frame = (x == 0, y == 0, x == width - 1, y == height - 1)
            fits = [t for t in cand[(frame, 0 if x == 0 else east[i - 1],
                                     0 if y == 0 else south[i - width])] if t[0] not in used]
            if not fits:
                break
            weight *= len(fits)
            total[i] += weight
            p, east[i], south[i] = rng.choice(fits)
            used.add(p)
    return [t / paths for t in total]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[7, 8])
    ap.add_argument("--paths", type=int, default=400_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = ap.parse_args()
    from e2store.instance.formats import read_instance

    for size in args.sizes:
        inst = read_instance(BENCH / f"pieces_{size}x{size}.txt")
        pieces = [tuple(int(c) for c in p) for p in inst.pieces]
        w, h = inst.width, inst.height
        print(f"\n{size}x{size}, {args.paths:,} paths per seed")
        print("| seed | nodes | " + " | ".join(f"row {y}" for y in range(h)) + " | seconds |")
        print("|--:|--:|" + "--:|" * h + "--:|")
        for seed in args.seeds:
            t0 = time.perf_counter()
            depth = profile(pieces, w, h, args.paths, seed)
            rows = [sum(depth[y * w:(y + 1) * w]) for y in range(h)]
            tot = sum(rows)
            print(f"| {seed} | {tot:.3g} | " + " | ".join(f"{v / tot:.1%}" for v in rows)
                  + f" | {time.perf_counter() - t0:.1f} |")
        print("bound of a table probed at the end of row r: 1 / (1 - share of rows r+1..)")


if __name__ == "__main__":
    main()
