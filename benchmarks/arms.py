"""Hamming-3 counts: cores and arms (e2store.arms) against stems (e2store.factorised).

    python benchmarks/arms.py --sizes 6 --at 2,2 --at 2,1 --at 1,1
    python benchmarks/arms.py --sizes 7 8 --at 2,1 --stems-up-to 3e9
    python benchmarks/arms.py --instance ../shared/instances/e2pieces_jwortmann.txt \
        --at 1,0 --at 2,0 --at 0,2

For each cell, both methods count the hamming-3 corolles on `--threads` threads (the two
counts must agree: a mismatch is printed and the exit code is 1); the stem method is skipped
for a cell with more than `--stems-up-to` stems (its hamming-2 corolles).  Printed per cell:
corolles, stems and cores walked, seconds of each method and the speed-up.  Figures are
printed, not asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from e2store.arms import count_by_arms
from e2store.factorised import count_factorised
from e2store.formats import read_instance

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[6])
    ap.add_argument("--instance", type=Path, action="append", default=[])
    ap.add_argument("--at", action="append", default=[], metavar="X,Y", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--stems-up-to", type=float, default=3e9,
                    help="Run the stem method only on cells with at most this many stems.")
    args = ap.parse_args()
    paths = args.instance or [BENCH / f"pieces_{n}x{n}.txt" for n in args.sizes]
    cells = [tuple(int(v) for v in a.split(",")) for a in args.at]
    warm = read_instance(paths[0])
    count_by_arms(warm, 0, 0), count_factorised(warm, 0, 0, 3)  # compile / load the kernels
    bad = 0
    print(f"{'board':<22} {'cell':>6} {'corolles':>24} {'stems':>16} {'cores':>13} "
          f"{'stems s':>9} {'arms s':>9} {'speed-up':>8}")
    for path in paths:
        inst = read_instance(path)
        for x, y in cells:
            stems = count_factorised(inst, x, y, 2).corolles
            t0 = time.perf_counter()
            a = count_by_arms(inst, x, y, threads=args.threads)
            t_arms = time.perf_counter() - t0
            t_stems = s_txt = speed = ""
            if stems <= args.stems_up_to:
                t0 = time.perf_counter()
                s = count_factorised(inst, x, y, 3, threads=args.threads)
                t = time.perf_counter() - t0
                t_stems, speed = f"{t:.2f}", f"{t / t_arms:.1f}x"
                if s.corolles != a.corolles:
                    bad += 1
                    s_txt = f"  MISMATCH: stems give {s.corolles:,}"
            print(f"{path.stem:<22} {f'{x},{y}':>6} {a.corolles:>24,} {stems:>16,} "
                  f"{a.stems:>13,} {t_stems:>9} {t_arms:>9.2f} {speed:>8}{s_txt}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
