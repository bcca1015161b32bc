"""Benchmark Parquet encodings of the flat form (issue 27): what writing rows costs, and
what the files weigh, for the choices format version 3 weighed.

Walks benchmark 6x6 hamming 2 at cell (2,1) once (85,986,347 corolles; --rows to take
fewer), keeps its rows in memory, then writes them to one Parquet file per option set,
one thread, best of --repeat, 1 Mi-row row groups:

* `v3 (plain, zstd 1)`: the store's flat form (`e2store.store.layout.writer_options`);
* the same with zstd level 3, with dictionaries, and nullable columns;
* `v2 (slots + frontier, dictionary)`: format version 2's rows (the frontier columns too).

    python benchmarks/flat_encoding.py [--shared ../shared] [--rows N] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from _data import piece_file
from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]
GROUP = 1 << 20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--rows", type=int, default=0, help="at most this many rows (0: all)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    path = piece_file(args.shared, "6x6")

    import pyarrow as pa
    import pyarrow.parquet as pq

    from e2store.corolles.enumerate import candidate_table, corolle_layout, walk_chunks
    from e2store.instance.formats import read_instance
    from e2store.store.layout import flat_schema, writer_options

    inst = read_instance(path)
    layout = corolle_layout(inst.width, inst.height, 2, 1, 2)
    table = candidate_table(inst, layout)
    cells, fronts, n = [], [], 0
    for c, f in walk_chunks(layout, table, GROUP):
        cells.append(c.copy())
        fronts.append(f.copy())
        n += c.shape[1]
        if args.rows and n >= args.rows:
            break
    v3 = writer_options("flat")
    cases = {
        "v3 (plain, zstd 1)": (v3, False, False),
        "plain, zstd 3": ({**v3, "compression_level": 3}, False, False),
        "plain, zstd 1, nullable": (v3, False, True),
        "dictionary, zstd 1": ({**v3, "use_dictionary": True}, False, False),
        "v2 (slots + frontier, dictionary)": (
            {**writer_options("cartesian"), "compression_level": 3}, True, True),
    }
    print(f"host: {cpu_model()}")
    print(f"{path.name}, hamming 2 at (2,1): {n:,} rows, {len(cells[0])} slots, row groups of "
          f"{GROUP:,} rows, one thread, best of {args.repeat}")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "flat.parquet"
        for name, (opts, with_front, nullable) in cases.items():
            schema = flat_schema(2, frontier=with_front)
            if nullable:
                schema = pa.schema([f.with_nullable(True) for f in schema])
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                with pq.ParquetWriter(out, schema, **opts) as w:
                    for c, f in zip(cells, fronts, strict=True):
                        cols = [pa.array(x) for x in c]
                        if with_front:
                            cols += [pa.array(x) for x in f]
                        w.write_table(pa.Table.from_arrays(cols, schema=schema))
                best = min(best, time.perf_counter() - t)
            size = os.path.getsize(out)
            print(f"  {name:<36} {best:6.2f} s  {best / n * 1e9:6.1f} ns/row  "
                  f"{size / n:6.3f} B/row  {size / 1e6:8.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
