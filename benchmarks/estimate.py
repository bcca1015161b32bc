"""Benchmark the search-size estimates (`e2store solve --estimate`) against known totals.

For each benchmark board (from ../shared), `e2store.solver.estimate.estimate` samples M random
prefixes of the symmetry-broken rowscan search and extrapolates nodes, solutions and the
time of a complete search on one core.  Where the complete search is known (6x6 exactly,
`solve`; 7x7 from the complete openings run quoted in docs/benchmarks.md, 67,791,061,655 nodes and
6,297 solutions) the estimate is compared with it, in standard errors; 8x8 and up are
estimates only.  Prints, per board and prefix depth: prefixes, samples, estimated nodes and
solutions with one standard error, the projected single-core seconds, the seconds the
estimate took, and peak memory.

    python benchmarks/estimate.py [--sizes 6 7 8] [--samples 1000] [--depth N:K ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from _fresh import in_fresh_process

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"
KNOWN_7X7 = (67_791_061_655, 6_297)  # docs/benchmarks.md, complete 7x7 search with openings


def _case(path: str, samples: int, depth: int | None, out) -> None:
    """Child process: one estimate (and the true counts of boards up to 6x6)."""
    from e2store.instance.formats import read_instance
    from e2store.solver.estimate import estimate
    from e2store.solver.search import solve

    inst = read_instance(path)
    t0 = time.perf_counter()
    est = estimate(inst, samples=samples, depth=depth)
    took = time.perf_counter() - t0
    truth = None
    if inst.width * inst.height <= 36:
        r = solve(inst)
        truth = (r.nodes, r.solutions)
    elif inst.width == inst.height == 7:
        truth = KNOWN_7X7
    out.put({**est.to_dict(), "name": inst.name, "took": took, "truth": truth,
             "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[6, 7, 8])
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--depth", action="append", default=[], metavar="N:K",
                    help="Also estimate board N with prefix depth K (repeatable).")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    cases = [(n, None) for n in args.sizes]
    cases += [(int(a), int(b)) for a, b in (d.split(":") for d in args.depth)]
    rows = []
    print(f"{'board':>6} {'depth':>5} {'prefixes':>13} {'sampled':>7} {'nodes':>22} "
          f"{'solutions':>18} {'1-core s':>9} {'took s':>7} {'vs truth':>16} {'MB':>5}")
    for n, depth in cases:
        path = BENCH / f"pieces_{n}x{n}.txt"
        if not path.exists():
            print(f"{path} not found: skipped")
            continue
        r = in_fresh_process(_case, str(path), args.samples, depth)
        rows.append(r)
        vs = ""
        if r["truth"]:
            tn, ts = r["truth"]
            se = r["nodes_stderr"] or 1.0
            vs = f"{(r['nodes'] - tn) / se:+.1f} se, {r['nodes'] / tn:.3f}x"
        print(f"{n}x{n:<4} {r['depth']:>5} {r['prefixes']:>13,} {r['sampled']:>7,} "
              f"{r['nodes']:>12.4g} +- {r['nodes_stderr']:<7.2g} "
              f"{r['solutions']:>8.1f} +- {r['solutions_stderr']:<6.1f} {r['seconds']:>9.4g} "
              f"{r['took']:>7.1f} {vs:>16} {r['peak_mb']:>5.0f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
