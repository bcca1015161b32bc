"""Benchmark the exact tail re-solve (issue 56, item 1) on Eternity II: short best-score
restarts, each restart's board filled (`fill_holes`), then its tail re-solved for growing
K over the last cells of Blackwood's scan (`grow_tail`).

    python benchmarks/finish.py [--shared ../shared] [--clues centre|all|none]
        [--seeds 0 1 2] [--restarts 2] [--restart-nodes 1e8] [--ks 16 24 32]
        [--max-nodes 2e6] [--seconds 3] [--boards FILE --top N [--source finished]]
        [--json OUT]

With `--boards FILE` (a run's boards file) no search is run: its top N full boards of
`--source` (`finished`: what the run's finish made; `filled`: before it) are re-solved
with the caps given, to ask whether a deeper finish would raise them.

Prints per board: seed, restart, the search's depth and score, the filled score, the
score after the tail re-solve, the largest K whose search completed (0: none), each K's
nodes (a `+` when its search completed), the finish's nodes and seconds; then totals: the
mean gain, the boards raised, and the finish's seconds against the search's.  Skips
(exit 0) when the shared instances are absent.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--clues", default="centre", help="a clue set, or none")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--restarts", type=int, default=2, help="restarts per seed")
    ap.add_argument("--restart-nodes", type=float, default=1e8)
    ap.add_argument("--ks", type=int, nargs="+", default=[16, 24, 32])
    ap.add_argument("--max-nodes", type=float, default=2e6, help="node cap per K")
    ap.add_argument("--seconds", type=float, default=3.0, help="time cap per K")
    ap.add_argument("--boards", type=Path, default=None, help="a run's boards file")
    ap.add_argument("--top", type=int, default=10, help="with --boards: its best N boards")
    ap.add_argument("--source", default="finished", choices=("finished", "filled"))
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    path = a.shared / "instances" / "e2_gallicchio.puz"
    if not path.exists():
        print(f"skipped: instance not found: {path} (give --shared)")
        return
    from e2store.instance.formats import read_instance
    from e2store.solver import scan_order
    from e2store.solver.best import clue_cells, fill_holes, grow_tail, run_best

    inst = read_instance(path)
    clues = None if a.clues == "none" else a.clues
    fixed = clue_cells(inst, clues) if clues else {}
    keep = {y * inst.width + x for x, y in fixed}
    order = scan_order("blackwood", inst.width, inst.height)
    print(f"# {cpu_model()}; Eternity II, clues {clues}, scan blackwood, defaults of "
          f"solve --best otherwise; {a.restarts} restart(s) of {a.restart_nodes:.3g} nodes "
          f"per seed; tail K in {a.ks}, caps {a.max_nodes:.3g} nodes / {a.seconds} s per K")
    print(f"{'seed':>4} {'rst':>3} {'depth':>5} {'found':>5} {'filled':>6} {'after':>5} "
          f"{'K':>3} {'nodes':>10} {'s':>6}  per K: nodes (+ complete)")
    rows = []
    search_s = 0.0
    if a.boards is not None:
        _file_boards(a, inst, order, keep)
        return
    for seed in a.seeds:
        t0 = time.perf_counter()
        run = run_best(inst, clues=clues, seed=seed, restart_nodes=int(a.restart_nodes),
                       restarts=a.restarts)
        search_s += time.perf_counter() - t0
        for r in run.results:
            f = fill_holes(inst, r.board, seconds=10.0, keep=keep)
            g = grow_tail(inst, f.board, order, ks=tuple(a.ks), max_nodes=int(a.max_nodes),
                          seconds=a.seconds, keep=keep)
            steps = ", ".join(f"{s.k}: {s.nodes:,}{'+' if s.complete else ''}"
                              for s in g.steps)
            row = {"seed": seed, "restart": r.restart, "depth": r.depth, "found": r.score,
                   "filled": f.score, "after": g.score, "k": g.k, "nodes": g.nodes,
                   "seconds": round(g.seconds, 3), "fill_seconds": round(f.seconds, 3),
                   "steps": [{"k": s.k, "score": s.score, "nodes": s.nodes,
                              "seconds": round(s.seconds, 3), "complete": s.complete}
                             for s in g.steps]}
            rows.append(row)
            print(f"{seed:>4} {r.restart:>3} {r.depth:>5} {r.score:>5} {f.score:>6} "
                  f"{g.score:>5} {g.k:>3} {g.nodes:>10,} {g.seconds:>6.2f}  {steps}",
                  flush=True)
    if rows:
        gains = [r["after"] - r["filled"] for r in rows]
        finish_s = sum(r["seconds"] for r in rows)
        print(f"# {len(rows)} boards: filled mean {statistics.mean(r['filled'] for r in rows):.2f}"
              f", after mean {statistics.mean(r['after'] for r in rows):.2f} (gain mean "
              f"{statistics.mean(gains):.2f}, max {max(gains)}), raised {sum(g > 0 for g in gains)}"
              f"; K reached {sorted(r['k'] for r in rows)}; finish {finish_s:.1f} s "
              f"({sum(r['nodes'] for r in rows):,} nodes) against the search's {search_s:.1f} s")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


def _file_boards(a, inst, order, keep) -> None:
    """`--boards`: the file's top boards of `--source` re-solved with the caps given."""
    import numpy as np

    from e2store.boards.table import read_boards
    from e2store.solver.best import grow_tail

    b = read_boards(a.boards, inst)
    score = np.asarray(b.stats["score"], dtype=np.int64)
    rows = np.flatnonzero(np.asarray(b.stats["source"], dtype=object) == a.source)
    rows = rows[np.argsort(-score[rows], kind="stable")][:a.top]
    raised = 0
    for i in rows.tolist():
        g = grow_tail(inst, b.cells[i].astype(np.int64), order, ks=tuple(a.ks),
                      max_nodes=int(a.max_nodes), seconds=a.seconds, keep=keep)
        raised += g.score > g.before
        steps = ", ".join(f"{s.k}: {s.nodes:,}{'+' if s.complete else ''}" for s in g.steps)
        print(f"{int(b.stats['seed'][i]):>4} {int(b.stats['restart'][i]):>3} "
              f"{int(b.stats['depth'][i]):>5} {'':>5} {g.before:>6} {g.score:>5} {g.k:>3} "
              f"{g.nodes:>10,} {g.seconds:>6.2f}  {steps}", flush=True)
    print(f"# {len(rows)} boards of {a.boards} ({a.source}): raised {raised}")


if __name__ == "__main__":
    main()
