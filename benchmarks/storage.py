"""Benchmark the storage forms on a whole hamming table (every zone, rotation 0).

For benchmark `pieces_5x5.txt` and `pieces_6x6.txt` (read from ../shared) at hamming 2:
corolles, bytes on disk and bytes per corolle of each form (flat, prefix, cartesian),
generation seconds per form, the factorised count's seconds, and for comparison the
published study's plain text layout and that text compressed with `xz -9`.

The text layout: one line per corolle, `piece:rotation;` per on-board slot in ring order
(`;` alone for an off-board slot), then `colour;` per frontier side (`-1;` off board).
Its size is computed exactly from every row; `xz -9` (Python's lzma, preset 9) is run on
the text of the first --xz-lines lines of each zone and its ratio applied to the whole
text (marked "est.").

    python benchmarks/storage.py [--shared ../shared] [--only 5x5] [--threads 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import lzma
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _data import piece_file

ROOT = Path(__file__).resolve().parents[1]
FORMS = ("cartesian", "prefix", "flat")


def _digits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.int64)
    out = np.ones(a.shape, dtype=np.int64)
    for p in (10, 100, 1000, 10000):
        out += a >= p
    return out


def text_bytes(cells: np.ndarray, front: np.ndarray) -> int:
    """Exact size of the text layout of these rows."""
    on = cells >= 0
    piece, rot = cells.astype(np.int64) >> 2, cells.astype(np.int64) & 3
    slot = np.where(on, _digits(np.maximum(piece, 0)) + 1 + _digits(rot) + 1, 1)
    fr = np.where(front >= 0, _digits(np.maximum(front, 0)) + 1, 3)
    return int(slot.sum() + fr.sum() + len(cells))


def text_lines(cells: np.ndarray, front: np.ndarray) -> bytes:
    out = []
    for row, frow in zip(cells.tolist(), front.tolist(), strict=True):
        s = "".join(f"{v >> 2}:{v & 3};" if v >= 0 else ";" for v in row)
        s += "".join(f"{c};" for c in frow)
        out.append(s)
    return ("\n".join(out) + "\n").encode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--only", choices=("5x5", "6x6"), default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--xz-lines", type=int, default=100_000)
    args = ap.parse_args()

    from e2store.corolles.factorised import count_factorised
    from e2store.instance.formats import read_instance
    from e2store.store.build import enumerate_zone
    from e2store.store.read import iter_partition
    from e2store.zones.zonemap import zone_map

    cases = [("5x5", 2), ("6x6", 2)]
    if args.only:
        cases = [c for c in cases if c[0] == args.only]
    for size, h in cases:
        path = piece_file(args.shared, size)
        inst = read_instance(path)
        zm = zone_map(inst.width, inst.height, h)
        zones = [dataclasses.replace(z, members=tuple(m for m in z.members if m.rotation == 0))
                 for z in zm.zones]
        count_factorised(inst, 0, 0, 1)  # compile / load the kernels before timing
        t0 = time.perf_counter()
        corolles = sum(count_factorised(inst, z.x, z.y, h, threads=args.threads).corolles
                       for z in zones)
        t_count = time.perf_counter() - t0
        print(f"\n{path.name} hamming {h}: {len(zones)} zones, {corolles:,} corolles; "
              f"factorised count {t_count:.2f} s ({args.threads} threads)")
        print(f"{'form':<12}{'bytes':>16}{'B/corolle':>12}{'seconds':>10}")
        tmp = Path(tempfile.mkdtemp(prefix="e2storage-"))
        try:
            for form in FORMS:
                root = tmp / form
                t0 = time.perf_counter()
                size_b = 0
                for z in zones:
                    parts = enumerate_zone(root, inst, z, h, forms=(form,),
                                           threads=args.threads)
                    size_b += sum(p.bytes for p in parts)
                secs = time.perf_counter() - t0
                print(f"{form:<12}{size_b:>16,}{size_b / corolles:>12.4f}{secs:>10.2f}",
                      flush=True)
            total_text = sample_text = sample_xz = 0
            for z in zones:
                seen = 0
                for cells, front in iter_partition(tmp / "flat", inst.id, h, z.id, 0,
                                                   instance=inst):
                    total_text += text_bytes(cells, front)
                    if seen < args.xz_lines:
                        take = min(len(cells), args.xz_lines - seen)
                        txt = text_lines(cells[:take], front[:take])
                        sample_text += len(txt)
                        sample_xz += len(lzma.compress(txt, preset=9))
                        seen += take
            xz_est = total_text * sample_xz / max(sample_text, 1)
            print(f"{'text':<12}{total_text:>16,}{total_text / corolles:>12.2f}")
            print(f"{'text+xz -9':<12}{xz_est:>16,.0f}{xz_est / corolles:>12.3f}   (est. from "
                  f"{args.xz_lines:,} lines per zone: ratio {sample_xz / sample_text:.4f})")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
