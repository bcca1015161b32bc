"""Repeats at the field's scale (issue 57): the final complete boards' keys a campaign
report counts (`e2store.campaign.tally.SpilledKeys`: a DuckDB database on disk, its memory
limit bounding what it holds), 10^6 to 10^8 keys, each in a process of its own: seconds
and peak memory.  Eternity II's filled boards are complete, so a report of N restarts
holds N keys, nearly all distinct: the worst case, measured here with random keys (a
tenth of them repeated).

    python benchmarks/spilled_keys.py [--keys 1000000 10000000 100000000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from _host import cpu_model

CHUNK = 20_000  # keys added at a time: one compacted file's restarts


def count(n: int) -> tuple[float, int, int]:
    """(seconds, distinct keys counted, peak RSS bytes) of adding n keys and counting."""
    from e2store.campaign.tally import SpilledKeys

    rng = np.random.default_rng(0)
    t = time.perf_counter()
    with SpilledKeys() as store:
        for a in range(0, n, CHUNK):
            raw = rng.integers(0, 2**63, size=(min(CHUNK, n - a), 2), dtype=np.int64)
            raw[::10] = raw[0]  # a tenth of them one board found again
            keys = np.array([r.tobytes().hex() for r in raw], dtype=object)
            store.add("a", keys)
        distinct = store.distinct("a")
    return (time.perf_counter() - t, distinct,
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, nargs="+", default=[10**6, 10**7, 10**8])
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    figures = {"host": cpu_model(), "runs": []}
    print(f"host: {figures['host']}; keys added {CHUNK:,} at a time")
    for n in a.keys:
        with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
            sec, distinct, rss = pool.submit(count, n).result()
        figures["runs"].append({"keys": n, "distinct": distinct, "seconds": round(sec, 1),
                                "peak_rss": rss})
        print(f"{n:>12,} keys ({distinct:,} distinct): {sec:.1f} s, {n / sec:,.0f} keys/s, "
              f"peak {rss / 2**20:.0f} MiB", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(figures, fh, indent=1)


if __name__ == "__main__":
    main()
