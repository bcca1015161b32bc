"""A campaign report (e2store.campaign.campaign_report) over synthetic restarts: time and memory.

    python benchmarks/campaign_report.py
    python benchmarks/campaign_report.py --sizes 10000 1000000 --arms 4 --resamples 2000

For each size, `--arms` arms share the restarts; each restart has a deepest depth (normal
around 240, a shade deeper per arm, clipped to 256), a filled score (440 + a geometric tail,
one point more per arm), nodes and seconds.  Printed per size: restarts, seconds of the
whole report (statistics, comparisons, tail, Markdown and PNG plots), the peak of memory
traced by `tracemalloc` during the report (numpy's buffers included) and the process's peak
RSS so far.  Figures are printed, not asserted.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _host import cpu_model

from e2store.campaign import campaign_report


def synthetic(restarts: int, arms: int, seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """Arm name -> per-restart arrays (depth, filled, nodes, seconds), `restarts` in all."""
    rng = np.random.default_rng(seed)
    out = {}
    for k in range(arms):
        n = restarts // arms + (1 if k < restarts % arms else 0)
        depth = np.clip(rng.normal(240 + 0.2 * k, 5, n).round(), 0, 256).astype(np.int64)
        filled = np.minimum(480, 440 + k + rng.geometric(0.35, n) - 1)
        out[f"arm{k}"] = {"depth": depth, "filled": filled,
                          "nodes": rng.integers(10 ** 6, 10 ** 7, n),
                          "seconds": rng.uniform(5, 15, n)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10 ** 4, 10 ** 5, 10 ** 6])
    ap.add_argument("--arms", type=int, default=4)
    ap.add_argument("--resamples", type=int, default=2000)
    args = ap.parse_args()
    print(f"host: {cpu_model()}; {args.arms} arms, {args.resamples} bootstrap resamples")
    print(f"{'restarts':>10} {'seconds':>9} {'traced peak MiB':>16} {'peak RSS MiB':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        campaign_report(synthetic(1000, args.arms), Path(tmp) / "warm.md", resamples=10)
        for n in args.sizes:
            rows = synthetic(n, args.arms)
            tracemalloc.start()
            t0 = time.perf_counter()
            campaign_report(rows, Path(tmp) / f"report-{n}.md", resamples=args.resamples)
            dt = time.perf_counter() - t0
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{n:>10,} {dt:>9.2f} {peak / 2 ** 20:>16.1f} {rss:>13.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
