"""Benchmark refusing oversized piece files: seconds and peak memory of `e2store validate`.

Writes, in a temporary directory, piece files far beyond any board e2store reads: a million
headerless piece lines (jwortmann), a million-piece benchmark file (N = 1000), a million-piece
e2store file, and a file of piece lines just under the 64 MiB read cap; then runs
`e2store validate` on each in a fresh process (as a user would) and prints the exit code,
wall seconds and the process's peak resident memory (from `wait4`), next to a 16x16 file for
the cost of starting the command at all.  Issue 39: refusing took 15 s and 371 MB a million
lines, linear in the file's size.

    python benchmarks/oversized_input.py [--lines 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _host import cpu_model


def piece_lines(n: int, seed: int = 1) -> str:
    """`n` lines of four random colours 0..20."""
    rnd = random.Random(seed)
    return "".join(f"{rnd.randint(0, 20)} {rnd.randint(0, 20)} {rnd.randint(0, 20)} "
                   f"{rnd.randint(0, 20)}\n" for _ in range(n))


def run(path: Path) -> tuple[int, float, float, str]:
    """(exit code, wall seconds, peak RSS in MB, last stderr line) of `e2store validate`."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "e2store", "validate", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    lines = err.strip().splitlines()
    return proc.returncode, seconds, usage.ru_maxrss / 1024, lines[-1] if lines else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=1, help="runs per file (the best is shown)")
    args = ap.parse_args()
    n = args.lines
    side = int(n ** 0.5)
    body = piece_lines(n)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        files = {
            "16x16 benchmark (start-up cost)": ("16\n0 0 0 0\n0 0 0 0\n0 0 0 0\n"
                                                + piece_lines(256)),
            f"{n:,} headerless lines": body,
            f"{side}x{side} benchmark": f"{side}\n0 0 0 0\n0 0 0 0\n0 0 0 0\n" + body,
            f"{side}x{side} e2store": (f"e2store-instance 1\nsize: {side} {side}\n"
                                       f"pieces: {side * side}\n" + body),
            "just under 64 MiB of piece lines": body * max(1, (63 << 20) // len(body)),
        }
        print(f"host: {cpu_model()}")
        print(f"{'file':36} {'MB':>7} {'exit':>4} {'seconds':>8} {'peak MB':>8}  message")
        for label, text in files.items():
            path = d / "pieces.txt"
            path.write_text(text)
            best = min((run(path) for _ in range(args.repeat)), key=lambda r: r[1])
            code, seconds, peak, message = best
            size = path.stat().st_size / (1 << 20)
            print(f"{label:36} {size:7.1f} {code:4d} {seconds:8.2f} {peak:8.0f}  "
                  f"{message[:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
