"""Estimated counts (e2store.corolles.sampling) against exact ones, and for the zones out of reach.

    python benchmarks/count_estimates.py --sizes 6 --hamming 3 --exact 0,0 --exact 1,0 \
        --exact 2,0 --exact 0,1 --exact 1,1 --exact 0,2
    python benchmarks/count_estimates.py --sizes 7 --hamming 3 \
        --records results/benchmark-counts-h3/counts/records
    python benchmarks/count_estimates.py --sizes 8 9 10 --hamming 3 --samples 1e8
    python benchmarks/count_estimates.py --instance ../shared/instances/e2pieces_jwortmann.txt \
        --sizes --hamming 3 --samples 1e7 --exact 0,0 --exact 1,0 --exact 0,1

Per zone: the estimate, its relative standard error, seconds and samples per second; where
an exact count is known (from count records written by `e2store counts` or the pipeline,
or counted here for the `--exact` cells) also the exact count and
z = (estimate - exact) / standard error, which should look like draws of a standard normal
(|z| > 3 rarely).  Figures are printed, not asserted.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from e2store.corolles.factorised import count_factorised
from e2store.corolles.sampling import DEFAULT_TAIL, estimate_count
from e2store.counts.shards import zone_records
from e2store.instance.formats import read_instance
from e2store.zones.zonemap import zone_map

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[7])
    ap.add_argument("--instance", type=Path, action="append", default=[])
    ap.add_argument("--hamming", type=int, default=3)
    ap.add_argument("--samples", type=float, default=1e7)
    ap.add_argument("--tail", type=int, default=DEFAULT_TAIL)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--records", type=Path, action="append", default=[],
                    help="count records directory (exact counts to compare with)")
    ap.add_argument("--exact", action="append", default=[], metavar="X,Y",
                    help="count this zone cell exactly here too (repeatable)")
    args = ap.parse_args()
    paths = [BENCH / f"pieces_{n}x{n}.txt" for n in args.sizes] + args.instance
    if not all(p.exists() for p in paths):
        raise SystemExit(f"missing instance files under {BENCH.parent}")
    h = args.hamming
    print(f"hamming {h}, {args.samples:.0e} samples per zone, tail {args.tail}, seed "
          f"{args.seed}, {args.threads} threads\n")
    print("| board | x y | estimate | rel. error | exact | z | seconds | samples/s |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    zs = []
    for path in paths:
        inst = read_instance(path)
        known = {}
        for rec_dir in args.records:
            known |= {(r["x"], r["y"]): r["corolles"] for r in zone_records(rec_dir, inst.id, h)}
        for z in zone_map(inst.width, inst.height, h).zones:
            x, y = z.x, z.y
            exact = known.get((x, y))
            if exact is None and f"{x},{y}" in args.exact:
                exact = count_factorised(inst, x, y, h, threads=args.threads).corolles
            e = estimate_count(inst, x, y, h, samples=int(args.samples), tail=args.tail,
                               seed=args.seed, threads=args.threads)
            est = f"{e.corolles:,}" if e.exact else f"{e.corolles:.5e}"
            err = "exact" if e.exact else f"{100 * e.rel_error:.3f}%"
            zt = ""
            if exact is not None and e.stderr > 0:
                zv = (e.corolles - exact) / e.stderr
                zs.append(zv)
                zt = f"{zv:+.2f}"
            elif exact is not None:
                zt = "equal" if e.corolles == exact else "DIFFERENT"
            print(f"| {path.stem} | {x} {y} | {est} | {err} | "
                  f"{'' if exact is None else f'{exact:,}'} | {zt} | {e.seconds:.2f} | "
                  f"{e.samples / e.seconds:,.0f} |", flush=True)
    if zs:
        rms = math.sqrt(sum(v * v for v in zs) / len(zs))
        print(f"\n{len(zs)} sampled zones with an exact count: z root mean square {rms:.2f}, "
              f"max |z| {max(abs(v) for v in zs):.2f} (a standard normal: about 1, rarely > 3)")


if __name__ == "__main__":
    main()
