"""A campaign report at the field's scale (issue 57): `e2store summary --boards` over a
compacted boards dataset of 10^6 and 10^7 restarts of a small board, its seconds and peak
memory, and 10^8 projected from them.

    python benchmarks/boards_scale.py [--restarts 1000000 10000000] [--size 4]
        [--dir DIR] [--keep] [--json OUT]

The dataset is written as a compaction writes it (`boards_dataset.write_compacted`: two
boards a restart, random placements with holes on the best one, every score recounted,
each file's digest; 20,000 restarts a file, two arms), once per size (kept under `--dir`
with `--keep`, and reused).  Then `e2store summary --boards DIR -o report.md` runs in a
process of its own: the report reads the compacted files' per-restart columns alone
(their pages' checksums and metadata verified: `open_boards(...).restarts(checked=
"compacted")`), never the boards' cells.  Peak memory is the child's maximum RSS
(`getrusage`).  Prints one line per size and the projection; `--json OUT` writes them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _host import cpu_model
from boards_dataset import _write_files

PER_FILE = 20_000  # restarts a compacted file holds (COMPACT_RESTARTS)


def make(root: Path, size: int, restarts: int) -> tuple[int, float]:
    """The dataset of `restarts` restarts at `root` (two arms, a seed per file); its
    bytes and the seconds it took (0 when it was there)."""
    done = root / ".done"
    if done.exists():
        return int(done.read_text()), 0.0
    shutil.rmtree(root, ignore_errors=True)
    files = -(-restarts // PER_FILE)
    jobs = [("a" if k % 2 == 0 else "b", k, 0, min(PER_FILE, restarts - k * PER_FILE), 0.05)
            for k in range(files)]
    t = time.perf_counter()
    written = _write_files(size, root, jobs)
    done.write_text(str(written))
    return written, time.perf_counter() - t


def report(root: Path) -> tuple[float, int]:
    """Seconds and peak RSS (bytes) of `e2store summary --boards root -o report.md`."""
    out = root.parent / f"{root.name}-report.md"
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "e2store", "summary", "--boards", str(root),
                           "-o", str(out)], capture_output=True, text=True)
    sec = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"summary --boards failed: {proc.stderr[-2000:]}")
    assert "# Campaign report" in out.read_text()
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return sec, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--restarts", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--size", type=int, default=4, help="cells a side of the board")
    ap.add_argument("--dir", default=None, help="where the datasets go (default a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the datasets (and reuse them)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    base = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="boards-scale-"))
    figures: dict = {"host": cpu_model(), "cores": os.cpu_count(), "size": a.size, "runs": []}
    print(f"host: {figures['host']}, {figures['cores']} cores; {a.size}x{a.size} boards, "
          f"2 a restart, {PER_FILE:,} restarts a compacted file")
    try:
        for n in a.restarts:
            root = base / f"scale-{a.size}-{n}"
            written, made = make(root, a.size, n)
            sec, rss = report(root)
            run = {"restarts": n, "bytes": written, "made_s": round(made, 1),
                   "report_s": round(sec, 2), "peak_rss": rss,
                   "restarts_per_s": round(n / sec)}
            figures["runs"].append(run)
            made_in = f", made in {made:.0f} s" if made else ""
            print(f"{n:>12,} restarts ({written / 1e9:.2f} GB{made_in}): "
                  f"summary --boards {sec:.1f} s, {n / sec:,.0f} restarts/s, peak "
                  f"{rss / 2**20:,.0f} MiB")
        runs = figures["runs"]
        if len(runs) >= 2:
            (n1, s1, m1), (n2, s2, m2) = ((r["restarts"], r["report_s"], r["peak_rss"])
                                          for r in runs[-2:])
            k = 10**8 / n2
            ps = s2 + (s2 - s1) / (n2 - n1) * (10**8 - n2)
            pm = m2 + (m2 - m1) / (n2 - n1) * (10**8 - n2)
            figures["projected_1e8"] = {"report_s": round(ps), "peak_rss": int(pm)}
            print(f"10^8 restarts, projected linearly from the last two ({k:g} x the last): "
                  f"about {ps:,.0f} s, peak about {pm / 2**30:.1f} GiB")
    finally:
        if not a.keep and not a.dir:
            shutil.rmtree(base, ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
