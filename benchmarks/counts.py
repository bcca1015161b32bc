"""Count tables: wall time of each table, and the factorised == enumerated cross-check.

    python benchmarks/counts.py                       # benchmark 4x4..10x10, hamming 1 and 2
    python benchmarks/counts.py --hamming 3 --sizes 4 5 6 7
    python benchmarks/counts.py --instance ../shared/instances/e2pieces_jwortmann.txt \
        --hamming 1 --hamming 2 --max-stems 300000000
    python benchmarks/counts.py --check-corolles 200000000   # enumerate every cell up to 2e8
    python benchmarks/counts.py --instance ../shared/instances/e2pieces_jwortmann.txt \
        --hamming 3 --at 0,0 --at 1,0 --at 0,1 --at 2,0 --at 0,2   # E2 h3, frame zones

Every zone's count runs on `--threads` threads (the Moebius last-ring kernel, symmetric
shapes counted over a quarter or half of the centres).  A zone whose stems (hamming h-1
corolles) exceed `--max-stems` is not counted: its time is estimated from a sample of its
stem prefix batches and printed as such.  With `--check-corolles N`, every cell whose
count is at most N is also enumerated in full and the two counts must agree: the cells
checked are listed.  Figures are printed, not asserted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from e2store.corolles.enumerate import corolle_layout, count_corolles
from e2store.corolles.factorised import count_factorised, prefix_corolles, stem_work
from e2store.instance.formats import read_instance
from e2store.zones.zonemap import zone_map

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"


def estimate(inst, x: int, y: int, h: int, sample: int) -> tuple[float, float]:
    """(seconds, corolles) of a zone extrapolated from `sample` random prefix batches."""
    work = stem_work(inst, corolle_layout(inst.width, inst.height, x, y, h), 1, 256,
                     symmetric=True)
    rng = np.random.default_rng(0)
    pick = rng.choice(len(work.batches), min(sample, len(work.batches)), replace=False)
    t0 = time.perf_counter()
    c = 0
    for i in pick:
        c += int(prefix_corolles(work, work.batches[i]).sum())
    scale = len(work.batches) / len(pick)
    return (time.perf_counter() - t0) * scale, c * scale * work.order


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[4, 5, 6, 7, 8, 9, 10])
    ap.add_argument("--instance", type=Path, action="append", default=[],
                    help="Other piece files (replace --sizes).")
    ap.add_argument("--hamming", type=int, action="append", default=[])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-stems", type=float, default=float("inf"),
                    help="Estimate, do not count, zones with more stems than this.")
    ap.add_argument("--sample", type=int, default=4,
                    help="Batches sampled per estimate (0: skip zones over --max-stems).")
    ap.add_argument("--at", action="append", default=[], metavar="X,Y",
                    help="Only the zones of these cells (repeatable; default: every zone). "
                         "Sizing a zone counts it at h-1, which for h=3 is a whole h=2 count.")
    ap.add_argument("--check-corolles", type=float, default=0,
                    help="Also enumerate every cell with at most this many corolles.")
    args = ap.parse_args()
    paths = args.instance or [BENCH / f"pieces_{n}x{n}.txt" for n in args.sizes]
    hammings = args.hamming or [1, 2]
    cells = {tuple(int(v) for v in a.split(",")) for a in args.at}
    count_factorised(read_instance(paths[0]), 0, 0, 1)  # compile / load the kernels
    checked = []
    for h in hammings:
        for path in paths:
            inst = read_instance(path)
            t_table = 0.0
            estimated = skipped = False
            print(f"\n{path.stem} hamming {h}:")
            print(f"  {'x':>2} {'y':>2} {'corolles':>26} {'seconds':>9}")
            zmap = zone_map(inst.width, inst.height, h)
            wanted = {zmap.zone_at(x, y).id for x, y in cells}
            for z in zmap.zones:
                if cells and z.id not in wanted:
                    continue
                stems = count_factorised(inst, z.x, z.y, h - 1).corolles if h >= 1 else 1
                if stems > args.max_stems and args.sample == 0:
                    skipped = True
                    print(f"  {z.x:>2} {z.y:>2} {'?':>26} {'':>9}  not counted ({stems:,} stems)")
                    continue
                if stems > args.max_stems:
                    sec, cor = estimate(inst, z.x, z.y, h, args.sample)
                    t_table += sec / args.threads
                    estimated = True
                    print(f"  {z.x:>2} {z.y:>2} {cor:>26.3e} {sec / args.threads:>9.0f}"
                          f"  ESTIMATE ({stems:,} stems, {args.sample} batches sampled)")
                    continue
                r = count_factorised(inst, z.x, z.y, h, threads=args.threads)
                t_table += r.seconds
                print(f"  {z.x:>2} {z.y:>2} {r.corolles:>26,} {r.seconds:>9.3f}")
                if r.corolles <= args.check_corolles:
                    e = count_corolles(inst, z.x, z.y, h, threads=args.threads)
                    ok = e.corolles == r.corolles
                    checked.append((path.stem, h, z.x, z.y, r.corolles, ok, e.seconds))
                    if not ok:
                        print(f"  MISMATCH: enumeration gives {e.corolles:,}")
            note = " (with estimates)" if estimated else ""
            note += " (some zones not counted)" if skipped else ""
            print(f"  table: {t_table:.2f} s{note}")
    if checked:
        print("\nfactorised == enumerated:")
        for name, h, x, y, n, ok, sec in checked:
            print(f"  {name} h={h} ({x},{y}) {n:,} {'OK' if ok else 'MISMATCH'}"
                  f" (enumeration {sec:.2f} s)")
        bad = sum(not c[5] for c in checked)
        print(f"{len(checked)} cells checked, {bad} mismatches")


if __name__ == "__main__":
    main()
