"""Benchmark the best-score search on Eternity II (issue 38): placements per second, the
deepest board per restart and the full-board score after filling the holes, per arm.

    python benchmarks/best.py [--shared ../shared] [--clues centre|all]
        [--arm plain|quota ...] [--seeds 0 1 2 3 4] [--restart-nodes 1e9]
        [--minutes M] [--workers N] [--kernel auto|generic|unrolled] [--fill-from D]
        [--json OUT]

Each (arm, seed) is one `run_best` of `--minutes` (default: one restart of
`--restart-nodes`); every restart's best board is filled (`e2store.solver.best.fill_holes`).  Prints
a table: arm, seed, restarts, nodes, M nodes/s (per process), deepest board, its score,
best filled score, and the distribution of filled scores.  Arms:

* `plain`: break schedule `blackwood`, Blackwood's scan order, no colour quota;
* `quota`: the same with Blackwood's colour quota (colours 13, 16, 10 and his curve);
* `order`: plain, with the store's piece order (pieces that tile worst at hamming 1 tried
  first: `e2store.solver.best.store`);
* `storequota`: the colour quota with the store's three colours instead of Blackwood's;
* `quota+order`, `storequota+order`: both.

The database arms read the hamming-1 cartesian partitions of `--store` (built there in
about a second when missing; default a temporary directory).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARMS = {"plain": {"quota": None, "order": False},
        "quota": {"quota": "blackwood", "order": False},
        "order": {"quota": None, "order": True},
        "storequota": {"quota": "store", "order": False},
        "quota+order": {"quota": "blackwood", "order": True},
        "storequota+order": {"quota": "store", "order": True}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--clues", default="centre")
    ap.add_argument("--arm", action="append", choices=sorted(ARMS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--restart-nodes", type=float, default=1e9)
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--restarts", type=int, default=1,
                    help="restarts per (arm, seed) when no --minutes is given")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--store", type=Path, default=None)
    ap.add_argument("--kernel", choices=("auto", "generic", "unrolled"), default="auto",
                    help="the search's kernel (same nodes and boards, different rates)")
    ap.add_argument("--fill-from", type=int, default=0,
                    help="fill the holes of restarts at least this deep only (the others "
                    "count with their partial score)")
    a = ap.parse_args()
    path = a.shared / "instances" / "e2_gallicchio.puz"
    if not path.exists():
        print(f"instance not found: {path} (give --shared)", file=sys.stderr)
        raise SystemExit(2)
    import tempfile

    from e2store.instance.formats import read_instance
    from e2store.solver.best import (
        clue_cells,
        fill_holes,
        piece_order,
        quota_from_store,
        run_best,
        tileability,
    )

    inst = read_instance(path)
    fixed = clue_cells(inst, a.clues)
    tiles = tileability(a.store or Path(tempfile.mkdtemp()) / "store", inst)
    store_quota, store_order = quota_from_store(inst, tiles), piece_order(inst, tiles)
    print(f"# {cpu_model()}; Eternity II, clues {a.clues}, scan blackwood, breaks blackwood; "
          f"{a.workers} worker(s), kernel {a.kernel}, store quota colours {store_quota}, "
          + (f"{a.minutes} min per seed" if a.minutes else
             f"one restart of {a.restart_nodes:.3g} nodes per seed"))
    print(f"{'arm':16} {'seed':>4} {'restarts':>8} {'nodes':>14} {'M/s':>6} {'depth':>5} "
          f"{'score':>5} {'filled':>6} {'>=246':>5} {'>=248':>5} {'>=250':>5}  filled scores")
    rows = []
    for arm in a.arm or list(ARMS):
        for seed in a.seeds:
            t0 = time.perf_counter()
            run = run_best(inst, scan="blackwood", fixed=fixed, breaks="blackwood",
                           quota=(store_quota if ARMS[arm]["quota"] == "store"
                                  else ARMS[arm]["quota"]),
                           piece_rank=store_order if ARMS[arm]["order"] else None, seed=seed,
                           restart_nodes=int(a.restart_nodes), workers=a.workers,
                           seconds=None if a.minutes is None else a.minutes * 60,
                           restarts=None if a.minutes else a.restarts, kernel=a.kernel)
            keep = {y * 16 + x for x, y in fixed}
            filled = [fill_holes(inst, r.board, seconds=10.0, keep=keep).score
                      if r.depth >= a.fill_from else r.score for r in run.results]
            b = run.best
            per_process = run.nodes / max(sum(r.seconds for r in run.results), 1e-9)
            dist: dict[int, int] = {}
            for s in filled:
                dist[s] = dist.get(s, 0) + 1
            reach = {d: sum(r.depth >= d for r in run.results) for d in (246, 248, 250)}
            row = {"arm": arm, "seed": seed, "restarts": len(run.results), "nodes": run.nodes,
                   "reached": reach,
                   "m_per_s": round(per_process / 1e6, 1), "depth": b.depth,
                   "score": b.score, "filled": max(filled), "depths": run.depth_counts(),
                   "filled_scores": dict(sorted(dist.items(), reverse=True)),
                   "seconds": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            print(f"{arm:16} {seed:>4} {row['restarts']:>8} {run.nodes:>14,} "
                  f"{row['m_per_s']:>6} {b.depth:>5} {b.score:>5} {row['filled']:>6} "
                  f"{reach[246]:>5} {reach[248]:>5} {reach[250]:>5}  "
                  + ", ".join(f"{k}: {v}" for k, v in list(row["filled_scores"].items())[:6]),
                  flush=True)
    for arm in a.arm or list(ARMS):
        mine = [r for r in rows if r["arm"] == arm]
        if mine:
            print(f"# {arm}: median depth {statistics.median(r['depth'] for r in mine)}, "
                  f"best filled {max(r['filled'] for r in mine)}, median M/s "
                  f"{statistics.median(r['m_per_s'] for r in mine)}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
