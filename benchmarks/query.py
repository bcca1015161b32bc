"""Benchmark the query layer on benchmark 6x6, hamming 1 and 2 (flat + cartesian).

Builds (once, or reuses with --store) a store of `pieces_6x6.txt` from ../shared with every
zone's rotation-0 partition at hamming 1 and 2 in the flat and cartesian forms, then times:
the per-zone statistics query, each hamming-2 zone's per-slot cardinality, and
compatible-corolle lookups (3 fixed slots, 10 forbidden pieces) per zone.

    python benchmarks/query.py [--shared ../shared] [--store DIR] [--threads 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _data import piece_file

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--store", type=Path, default=None,
                    help="store directory to build or reuse (default: a temporary one)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import e2store
    from e2store.instance.formats import read_instance
    from e2store.store.build import enumerate_zone
    from e2store.store.write import write_instance_file, write_manifest
    from e2store.zones.zonemap import zone_map

    path = piece_file(args.shared, "6x6")
    inst = read_instance(path)
    root = args.store or Path(tempfile.mkdtemp(prefix="e2query-"))
    t0 = time.perf_counter()
    write_instance_file(root, inst)
    for h in (1, 2):
        for z in zone_map(6, 6, h).zones:
            z0 = dataclasses.replace(z, members=tuple(m for m in z.members if m.rotation == 0))
            enumerate_zone(root, inst, z0, h, forms=("flat", "cartesian"),
                           threads=args.threads)
    write_manifest(root)
    print(f"store {root}: built or checked in {time.perf_counter() - t0:.1f} s")

    def timed(fn, repeat=3):
        best, out = float("inf"), None
        for _ in range(repeat):
            t = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - t)
        return best, out

    with e2store.connect(root) as st:
        t, zs = timed(lambda: st.zone_stats())
        print(f"zone_stats (all zones, h=1,2): {zs.num_rows} rows in {t * 1000:.1f} ms")
        zones2 = [r for r in zs.to_pylist() if r["hamming"] == 2]
        print(f"{'zone':>4} {'cell':>6} {'corolles':>13} {'cardinality s':>14} "
              f"{'lookup ms':>10} {'lookup rows':>12}")
        rng = np.random.default_rng(7)
        for r in zones2:
            zone = r["zone"]
            tc, _ = timed(lambda zone=zone: st.cardinality(inst.id, 2, zone), repeat=1)
            sample = st.sql("SELECT * EXCLUDE (instance, hamming, zone, rotation) FROM "
                            "corolles WHERE hamming = 2 AND zone = ? AND rotation = 0 "
                            "LIMIT 1 OFFSET ?", [zone, int(rng.integers(min(r["corolles"],
                                                                            1000)))])
            row = [sample.column(f"s{i}")[0].as_py() for i in range(13)]
            on = [i for i, v in enumerate(row) if v >= 0]
            fixed = {i: row[i] for i in rng.choice(on, size=min(3, len(on)), replace=False)}
            used = {v >> 2 for v in fixed.values()}
            forbidden = [p for p in rng.permutation(36).tolist() if p not in used][:10]
            tl, res = timed(lambda zone=zone, fixed=fixed, forbidden=forbidden: st.compatible(
                inst.id, 2, zone, 0, fixed=fixed, forbidden=forbidden))
            print(f"{zone:>4} {r['x']:>3},{r['y']:<2} {r['corolles']:>13,} {tc:>14.2f} "
                  f"{tl * 1000:>10.1f} {res.num_rows:>12,}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
