"""Benchmark reading a store with other tools, and the exports for other solvers.

Builds (once, or reuses with --store) a store of `pieces_5x5.txt` from ../shared at
hamming 1 and 2 (flat and cartesian, every rotation), then times a full scan of the flat
rows at hamming 2 (count, and sum of `s0` per zone) through each documented way in
(docs/store-format.md): DuckDB over the glob, a plain pyarrow dataset of the directory,
polars, `e2store.dataset` (which checks every page's CRC) and `e2store sql`; then
`build-db` and a query through its file, and `export-closures` of three regions (seconds,
bytes per corolle of the region and its index).  Best of --repeat runs.

    python benchmarks/open_store.py [--shared ../shared] [--store DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _data import piece_file

ROOT = Path(__file__).resolve().parents[1]


def best(fn, repeat: int):
    """(seconds of the fastest run, its result)."""
    out, t_best = None, float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--store", type=Path, default=None,
                    help="store directory to build or reuse (default: a temporary one)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import duckdb
    import pyarrow.dataset as ds

    import e2store
    from e2store.instance.formats import read_instance
    from e2store.query.regions import export_closures
    from e2store.store.build import enumerate_store
    from e2store.store.read import read_manifest

    path = piece_file(args.shared, "5x5")
    inst = read_instance(path)
    root = args.store or Path(tempfile.mkdtemp(prefix="e2open-"))
    t0 = time.perf_counter()
    for h in (1, 2):
        enumerate_store(root, inst, h, None, forms=("flat", "cartesian"), threads=args.threads)
    parts = read_manifest(root)["partitions"]
    rows = sum(p["rows"] for p in parts if p["form"] == "flat" and p["hamming"] == 2)
    print(f"store {root}: built or checked in {time.perf_counter() - t0:.1f} s; "
          f"{rows:,} flat rows at hamming 2")

    glob = f"{root}/flat/hamming=2/**/*.parquet"
    q = (f"SELECT zone, count(*), sum(s0) FROM read_parquet('{glob}', hive_partitioning = "
         f"true) GROUP BY zone")

    def pyarrow_plain():
        t = ds.dataset(root / "flat" / "hamming=2", partitioning="hive").to_table(
            columns=["s0", "zone"])
        return t.group_by("zone").aggregate([("s0", "count"), ("s0", "sum")])

    def own_dataset():
        t = e2store.dataset(root, "flat", 2).to_table(columns=["s0", "zone"])
        return t.group_by("zone").aggregate([("s0", "count"), ("s0", "sum")])

    def own_sql():
        with e2store.connect(root) as st:
            return st.sql("SELECT zone, count(*), sum(s0) FROM corolles WHERE hamming = 2 "
                          "GROUP BY zone")

    ways = {"duckdb glob": lambda: duckdb.sql(q).fetchall(), "pyarrow dataset": pyarrow_plain,
            "e2store.dataset (page CRCs)": own_dataset,
            "e2store sql (hashes files first)": own_sql}
    try:
        import polars as pl

        ways["polars scan"] = lambda: (pl.scan_parquet(glob, hive_partitioning=True)
                                       .group_by("zone").agg(pl.len(), pl.col("s0").sum())
                                       .collect())
    except ImportError:
        print("polars not installed: skipped")
    print(f"full scan of the flat rows at hamming 2 ({rows:,} rows), best of {args.repeat}:")
    for name, fn in ways.items():
        sec, _ = best(fn, args.repeat)
        print(f"  {name:34s} {sec:8.3f} s  {rows / sec / 1e6:8.1f} M rows/s")

    work = Path(tempfile.mkdtemp(prefix="e2open-out-"))
    try:
        db = work / "store.duckdb"
        sec, _ = best(lambda: e2store.connect(root).write_database(db), args.repeat)
        con = duckdb.connect(str(db), read_only=True)
        con.execute(f"SET file_search_path = '{root}'")
        sec_q, n = best(lambda: con.execute("SELECT count(*) FROM corolles").fetchone()[0],
                        args.repeat)
        print(f"build-db {sec:.3f} s ({db.stat().st_size:,} bytes); count(*) over its "
              f"corolles view ({n:,} rows, both hammings) {sec_q:.3f} s")
        cells = [(0, 0), (1, 2), (3, 3)]
        sec, entries = best(lambda: export_closures(root, inst, 2, cells, work / "cl"),
                            args.repeat)
        corolles = sum(e["corolles"] for e in entries)
        for e in entries:
            size = sum(f["bytes"] for f in e["files"])
            print(f"  region ({e['x']}, {e['y']}): {e['corolles']:,} corolles, "
                  f"{e['keys']:,} frontier keys, {size / max(e['corolles'], 1):.1f} bytes "
                  f"per corolle (region + index)")
        print(f"export-closures of {len(cells)} regions at hamming 2: {sec:.3f} s "
              f"({corolles / sec / 1e6:.2f} M corolles/s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if args.store is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
