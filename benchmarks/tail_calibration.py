"""The tail rule (e2store.campaign.tail) calibrated on the published ladders and e2store's hours.

    python benchmarks/tail_calibration.py
    python benchmarks/tail_calibration.py --draws 50 --seeds 0 1 2

Each ladder (boards at each score) is replayed as campaigns stopped early: every board kept
with probability q (40 fractions from 1/2 down to about 20 boards, `--draws` draws each), the
rule asked for each score of the ladder the part had not reached, and each estimate it gave
compared with what the whole ladder paid for a board of that score (its boards / the boards
at or above it).  Printed per ladder and rule: the estimates made; the worst and the median
of truth / the range's pessimistic end (above 1: the range missed the truth on the cheap
side; the rule must keep the worst at most 2); and of truth / the point (the geometric
extrapolation alone).  The rules: the one e2store uses, the same without the steepening
allowance (wall 1), and a reach without limit (the old rule's, with the new fit).
"""

from __future__ import annotations

import argparse

import numpy as np

from e2store.campaign import LADDERS, REACH, WALL, calibrate

RULES = {
    "e2store's": {},
    "wall 1": {"wall": 1.0},
    "unlimited reach": {"reach": 1000},
    "unlimited reach, wall 1": {"reach": 1000, "wall": 1.0},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    a = ap.parse_args()
    print(f"rule: reach {REACH}, wall {WALL:g}; {a.draws} draws x 40 fractions, seeds "
          f"{a.seeds}")
    print("| ladder | rule | estimates | truth/high worst | truth/high median | "
          "truth/point worst | truth/point median |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for name, ladder in LADDERS.items():
        for rule, kw in RULES.items():
            claims = [c for s in a.seeds for c in calibrate(ladder, draws=a.draws, seed=s,
                                                            **kw)]
            if not claims:
                print(f"| {name} | {rule} | 0 | - | - | - | - |")
                continue
            high = np.array([c.cheaper for c in claims])
            point = np.array([c.truth / c.point for c in claims])
            print(f"| {name} | {rule} | {len(claims)} | {high.max():.3g} | "
                  f"{np.median(high):.3g} | {point.max():.3g} | {np.median(point):.3g} |")


if __name__ == "__main__":
    main()
