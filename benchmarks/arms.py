"""Hamming-3 counts: cores and arms (e2store.corolles.arms, by bitsets and by inclusion-exclusion)
against stems (e2store.corolles.factorised).

    python benchmarks/arms.py --sizes 6 --at 2,2 --at 2,1 --at 1,1
    python benchmarks/arms.py --sizes 7 --at 2,1 --at 3,3 --stems-up-to 3e9 --ie-up-to 3e6
    python benchmarks/arms.py --instance ../shared/instances/e2pieces_jwortmann.txt \
        --at 1,0 --at 2,0 --at 0,2

For each cell, every method counts the hamming-3 corolles on `--threads` threads (the counts
must agree: a mismatch is printed and the exit code is 1); the stem method is skipped for a
cell with more than `--stems-up-to` stems (its hamming-2 corolles), the arms walk by
inclusion-exclusion for a cell with more than `--ie-up-to` cores with a completion (counted
by the bitsets first).  Printed per cell: corolles, stems and cores walked, seconds of each
method.  Figures are printed, not asserted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from e2store.corolles.arms import count_by_arms
from e2store.corolles.factorised import count_factorised
from e2store.instance.formats import read_instance

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[6])
    ap.add_argument("--instance", type=Path, action="append", default=[])
    ap.add_argument("--at", action="append", default=[], metavar="X,Y", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--stems-up-to", type=float, default=3e9,
                    help="Run the stem method only on cells with at most this many stems.")
    ap.add_argument("--ie-up-to", type=float, default=1e7,
                    help="Run the arms by inclusion-exclusion only on cells with at most this "
                         "many cores with a completion.")
    args = ap.parse_args()
    paths = args.instance or [BENCH / f"pieces_{n}x{n}.txt" for n in args.sizes]
    cells = [tuple(int(v) for v in a.split(",")) for a in args.at]
    warm = read_instance(paths[0])
    for method in ("bitsets", "inclusion-exclusion"):  # compile / load the kernels
        count_by_arms(warm, 0, 0, method=method)
    count_factorised(warm, 0, 0, 3)
    bad = 0
    print(f"{'board':<22} {'cell':>6} {'corolles':>24} {'stems':>16} {'cores':>13} "
          f"{'stems s':>9} {'incl-excl s':>11} {'bitsets s':>9}")
    for path in paths:
        inst = read_instance(path)
        for x, y in cells:
            stems = count_factorised(inst, x, y, 2).corolles
            a = count_by_arms(inst, x, y, threads=args.threads)
            got = {"bitsets": a}
            if a.stems <= args.ie_up_to:
                got["ie"] = count_by_arms(inst, x, y, threads=args.threads,
                                          method="inclusion-exclusion")
            if stems <= args.stems_up_to:
                got["stems"] = count_factorised(inst, x, y, 3, threads=args.threads)
            sec = {k: f"{v.seconds:.2f}" for k, v in got.items()}
            wrong = {k: v.corolles for k, v in got.items() if v.corolles != a.corolles}
            bad += bool(wrong)
            note = f"  MISMATCH: {wrong}" if wrong else ""
            print(f"{path.stem:<22} {f'{x},{y}':>6} {a.corolles:>24,} {stems:>16,} "
                  f"{a.stems:>13,} {sec.get('stems', ''):>9} {sec.get('ie', ''):>11} "
                  f"{sec['bitsets']:>9}{note}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
