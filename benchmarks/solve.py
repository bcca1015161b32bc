"""Benchmark the backtracking solver: nodes, seconds and nodes per second.

Runs on the benchmark instances read from ../shared: `pieces_6x6.txt`, all solutions, in
every scan order (rowscan with and without the symmetry break; quad-spiral, far slower on
this board, with a node limit), and the first solution of `pieces_7x7.txt`.  Each case runs
in a fresh process so its peak memory (max RSS, the whole Python process) is its own; the
kernel is compiled (or loaded from the numba cache) before the clock starts, and the time
is the best of `--repeat` runs in that process.  A node is one piece placed.

    python benchmarks/solve.py [--shared ../shared] [--quick] [--repeat 3] [--json OUT]

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

REFERENCE_NODES_PER_S = 3.2e6
ROOT = Path(__file__).resolve().parents[1]
QUAD_LIMIT = 500_000_000


def _case(path: str, scan: str, first: bool, symmetry_break: bool, node_limit: int | None,
          repeat: int, out: mp.Queue) -> None:
    """Child process: one measurement; puts a dict on `out`."""
    from e2store.formats import read_instance
    from e2store.solver import solve

    inst = read_instance(path)
    solve(inst, scan, first=True, node_limit=1000)  # compile / load the kernel
    best = None
    for _ in range(repeat):
        r = solve(inst, scan, first=first, symmetry_break=symmetry_break,
                  node_limit=node_limit)
        if best is None or r.seconds < best.seconds:
            best = r
    assert best is not None
    out.put({"instance": inst.name, "scan": scan, "first": first,
             "symmetry_break": symmetry_break, "complete": best.complete,
             "solutions": best.solutions, "nodes": best.nodes,
             "first_nodes": best.first_nodes, "seconds": best.seconds,
             "nodes_per_s": best.nodes_per_second,
             "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def run_case(path: Path, *args) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_case, args=(str(path), *args, q))
    p.start()
    res = q.get()
    p.join()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared",
                    help="the shared data folder (default: ../shared beside the repository)")
    ap.add_argument("--quick", action="store_true", help="6x6 rowscan only")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case, the best counts")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    args = ap.parse_args()
    bench = args.shared / "instances" / "benchmark"
    six, seven = bench / "pieces_6x6.txt", bench / "pieces_7x7.txt"
    if not six.exists():
        print(f"benchmark instance not found: {six} (give --shared)", file=sys.stderr)
        return 2
    # (instance, scan, first, symmetry break, node limit)
    cases = [(six, "rowscan", False, True, None)]
    if not args.quick:
        cases += [(six, "rowscan", False, False, None)]
        cases += [(six, s, False, True, None)
                  for s in ("columnscan", "diagonal", "spiral-in", "spiral-out")]
        cases += [(six, "quad-spiral", False, True, QUAD_LIMIT)]
        if seven.exists():
            cases += [(seven, s, True, True, None) for s in ("rowscan", "columnscan")]
    print(f"{'instance':<11}{'scan':<12}{'mode':<6}{'sym':>4}{'solutions':>10}{'nodes':>15}"
          f"{'first at':>13}{'seconds':>9}{'M nodes/s':>10}{'peak MB':>9}")
    rows = []
    for inst_path, scan, first, sym, limit in cases:
        r = run_case(inst_path, scan, first, sym, limit, args.repeat)
        rows.append(r)
        mode = "first" if first else "all"
        sols = f"{r['solutions']:,}" + ("" if r["complete"] else "+")
        print(f"{r['instance']:<11}{scan:<12}{mode:<6}{'yes' if sym else 'no':>4}{sols:>10}"
              f"{r['nodes']:>15,}{r['first_nodes'] or 0:>13,}{r['seconds']:>9.3f}"
              f"{r['nodes_per_s'] / 1e6:>10.1f}{r['peak_rss_mb']:>9.0f}", flush=True)
    head = rows[0]
    print(f"\n6x6 all solutions, rowscan, corner fixed: {head['nodes']:,} nodes in "
          f"{head['seconds']:.3f} s = {head['nodes_per_s'] / 1e6:.1f} M nodes/s on one core, "
          f"{head['nodes_per_s'] / REFERENCE_NODES_PER_S:.0f}x the published C++ "
          f"({REFERENCE_NODES_PER_S / 1e6:.1f} M nodes/s)")
    if any(not r["complete"] for r in rows):
        print(f"'+': stopped at the node limit ({QUAD_LIMIT:,} nodes), solutions so far")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
