"""Benchmark the best-score kernel against another checkout's, pair by pair (issue 49):
placements per second per process on Eternity II, centre clue, the `--best` defaults
(Blackwood's scan, schedule and quota), and a check that both ran the same search.

    python benchmarks/best_kernel.py [--vs ../old-checkout] [--shared ../shared]
        [--seeds 0 1 2 3 4] [--nodes 1e9] [--kernel unrolled|generic] [--json OUT]

Each seed is restart 0 of that seed, `--nodes` placements, run in a fresh process for
this checkout (A) and, with `--vs DIR`, for the checkout at DIR (B: its `e2store` first on
`PYTHONPATH`), A then B, one process at a time (leave the other core idle).  The rate is
the kernel's own (placements over the restart's CPU-seconds, compile and start-up left
out).  Prints per seed: M/s of A and B, A/B, and whether the two restarts placed the same
nodes and kept the same best board (sha1 of its cells), which is what "the same search"
means; a difference is printed as such and makes the exit code 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]

# run in the child: one restart, its figures as one JSON line
CHILD = r"""
import hashlib, json, sys, time
from e2store.instance import read_instance
from e2store.solver import best as B
path, seed, nodes, kernel = sys.argv[1], int(sys.argv[2]), int(float(sys.argv[3])), sys.argv[4]
plan = B.best_plan(read_instance(path), clues="centre")
search = B.BestSearch(plan, kernel=kernel)
search.run(seed, 0, 1)  # compile, or load numba's cache
c0 = time.process_time()
r = search.run(seed, 0, nodes)
cpu = time.process_time() - c0
print(json.dumps({"nodes": r.nodes, "cpu": cpu, "rate": r.nodes / cpu / 1e6,
                  "depth": r.depth, "score": r.score,
                  "board": hashlib.sha1(r.board.tobytes()).hexdigest()[:12],
                  "e2store": B.__file__}))
"""


def one(tree: Path, path: Path, seed: int, nodes: float, kernel: str) -> dict:
    """One restart in a fresh process with `tree`'s e2store first on the path (and as its
    working directory, which `python -c` puts first)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(seed), str(nodes),
                          kernel], env=env, cwd=tree, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vs", type=Path, default=None, help="another checkout (B)")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--nodes", type=float, default=1e9)
    ap.add_argument("--kernel", choices=("unrolled", "generic"), default="unrolled")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    path = a.shared / "instances" / "e2_gallicchio.puz"
    if not path.exists():
        print(f"instance not found: {path} (give --shared)", file=sys.stderr)
        raise SystemExit(2)
    print(f"# {cpu_model()}; Eternity II, centre clue, --best defaults, kernel {a.kernel}, "
          f"restart 0 of {a.nodes:.3g} nodes per seed; A = {ROOT}"
          + (f", B = {a.vs.resolve()}" if a.vs else ""))
    print(f"{'seed':>4} {'A M/s':>7} {'B M/s':>7} {'A/B':>6}  same search (nodes, best board)")
    rows, same = [], True
    for seed in a.seeds:
        ra = one(ROOT, path, seed, a.nodes, a.kernel)
        rb = one(a.vs.resolve(), path, seed, a.nodes, a.kernel) if a.vs else None
        row = {"seed": seed, "A": ra, "B": rb}
        rows.append(row)
        if rb is None:
            print(f"{seed:>4} {ra['rate']:>7.1f}", flush=True)
            continue
        if ra["e2store"] == rb["e2store"]:
            raise SystemExit(f"A and B both imported {ra['e2store']}: give --vs a checkout")
        eq = all(ra[k] == rb[k] for k in ("nodes", "depth", "score", "board"))
        same &= eq
        print(f"{seed:>4} {ra['rate']:>7.1f} {rb['rate']:>7.1f} {ra['rate'] / rb['rate']:>6.3f}  "
              + ("yes" if eq else f"NO: A {ra} B {rb}"), flush=True)
    med = statistics.median(r["A"]["rate"] for r in rows)
    line = f"# median A {med:.1f} M/s"
    if a.vs:
        line += (f", B {statistics.median(r['B']['rate'] for r in rows):.1f} M/s, A/B "
                 f"{statistics.median(r['A']['rate'] / r['B']['rate'] for r in rows):.3f}")
    print(line)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
