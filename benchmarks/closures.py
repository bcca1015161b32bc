"""Benchmark closure designs for a database-assisted rowscan (issue 20) on sampled subtrees.

A *closure* asks, at the point where the scan order has fixed a region's boundary and the
set of pieces left for it, whether the region can still be completed.  On a rowscan the
natural point is the last interior cell of row H-4: the interior block below (rows H-3
and H-2, columns 1..W-2) must then take exactly the free interior pieces S, under the
south colours P of row H-4.  This script measures, on `--samples` random subtrees (the
corner fixed and the first `--prefix` cells of row 0 seeded, numpy seed `--seed`):

* **plain**: the product's kernel (`e2store.solver.search.solve` with the prefix as seed,
  generated kernel) and this script's own search, which counts the same nodes (checked);
* **transposition**: how often the exact remaining problem (row H-4's south colours and
  the free pieces) recurs at the probe point, weighted by the nodes below it;
* **support filtering at the root** (design 2): arc consistency over every cell's
  (piece, rotation) candidates at the subtree root, tables filtered, same search
  (`--ac-samples` roots, pure Python filtering);
* **block closure, computed**: the block check by a small search, answers cached in a
  direct-mapped memo of 2^24 entries;
* **block closure, table** (design 1): every filling of the block enumerated once, its
  (S, P) key inserted into a blocked Bloom filter of `--bloom-mib` MiB (false positives only
  keep a branch, so solutions are exact); one probe after each placement on the probe
  cell.

Every variant must find the same solutions as plain (asserted).  Printed per design: nodes,
nodes saved, probes per plain node, seconds, memory, build seconds, and a projection for
the product's kernel: its ns per node times the nodes left, plus the probes at the probe
cost measured here.  Boards up to 64 pieces (one 64-bit word of pieces).

    python benchmarks/closures.py [--board 7] [--samples 20] [--prefix 5] [--seed 1]
                                  [--bloom-mib 1024] [--ac-samples 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit, uint64

# the table's jitted primitives, called inside this script's own numba search
from e2store.query.closures import (
    bloom_has,
    check_block_tables,
    closure_key,
    fill_block_table,
    walk_block,
)

BENCH = Path(__file__).resolve().parents[2] / "shared" / "instances" / "benchmark"
PLAIN, RECORD, COMPUTED, TABLE = 0, 1, 2, 3
ONE = np.uint64(1)


@njit(cache=False)
def _search(prefix, rot, bstart, cand, cls, width, ncol, mode, pd, imask, istart, icand,
            bloom, memo_s, memo_p, memo_v, rec_key, rec_nodes, stats):
    """Count the subtree below a rowscan prefix (candidates keyed by (cls[cell], west,
    north)); at the probe cell `pd` apply `mode` (see the module docstring).  Returns
    (nodes, solutions); stats = [probes, cuts, memo hits, records]."""
    n = cls.shape[0]
    bw = width - 2
    placed = np.full(n, -1, np.int64)
    used = uint64(0)
    for i in range(prefix.shape[0]):
        placed[i] = prefix[i]
        used |= uint64(1) << uint64(prefix[i] >> 2)
    d0 = prefix.shape[0]
    pos = np.zeros(n + 1, np.int64)
    hi = np.zeros(n + 1, np.int64)
    nodes = 0
    sols = 0
    at = 0
    mmask = uint64(memo_s.shape[0] - 1)
    row = pd - bw + 1  # first interior cell of the probe row
    d = d0
    k = (cls[d] * ncol + (rot[placed[d - 1], 2] if d % width else 0)) * ncol + (
        rot[placed[d - width], 3] if d >= width else 0)
    pos[d] = bstart[k]
    hi[d] = bstart[k + 1]
    while True:
        if pos[d] >= hi[d]:
            d -= 1
            if d < d0:
                break
            used &= ~(uint64(1) << uint64(placed[d] >> 2))
            if mode == RECORD and d == pd:
                rec_nodes[stats[3] - 1] = nodes - at
            continue
        v = cand[pos[d]]
        pos[d] += 1
        if (used >> uint64(v >> 2)) & uint64(1):
            continue
        nodes += 1
        placed[d] = v
        if d == n - 1:
            sols += 1
            continue
        if d == pd and mode != PLAIN:
            s = ~(used | (uint64(1) << uint64(v >> 2))) & imask
            pc = uint64(0)
            for j in range(bw):
                pc = pc * uint64(ncol) + uint64(rot[placed[row + j], 3])
            if mode == RECORD:
                # the exact rest: used pieces, south colours of row cells 0..W-2, east
                # colour of v, south colour of the cell above (W-1, row)
                full = ((pc * uint64(ncol) + uint64(rot[placed[row - 1], 3])) * uint64(ncol)
                        + uint64(rot[v, 2])) * uint64(ncol) + uint64(
                    rot[placed[pd + 1 - width], 3])
                i = stats[3]
                if i < rec_key.shape[0]:
                    rec_key[i, 0] = closure_key(used | (uint64(1) << uint64(v >> 2)), full)
                    rec_key[i, 1] = closure_key(s, pc)
                    stats[3] += 1
                    at = nodes
            else:
                stats[0] += 1
                if mode == TABLE:
                    ok = bloom_has(bloom, closure_key(s, pc))
                else:
                    h = closure_key(s, pc) & mmask
                    if memo_s[h] == s and memo_p[h] == pc and memo_v[h] != 0:
                        ok = memo_v[h] == 2
                        stats[2] += 1
                    else:
                        ok = walk_block(rot, istart, icand, ncol, bw, s, pc, bloom[:0], 0, 1,
                                        0) == 1
                        memo_s[h] = s
                        memo_p[h] = pc
                        memo_v[h] = 2 if ok else 1
                if not ok:
                    stats[1] += 1
                    continue
        used |= uint64(1) << uint64(v >> 2)
        d += 1
        k = (cls[d] * ncol + (rot[placed[d - 1], 2] if d % width else 0)) * ncol + (
            rot[placed[d - width], 3] if d >= width else 0)
        pos[d] = bstart[k]
        hi[d] = bstart[k + 1]
    return nodes, sols


class Board:
    """Rowscan candidate tables of one instance (corner piece fixed on (0,0))."""

    def __init__(self, path: Path) -> None:
        from e2store.instance.formats import read_instance
        from e2store.query.closures import interior_tables
        from e2store.solver.plan import frame_mask, lowest_corner

        self.inst = inst = read_instance(path)
        self.w, self.h = inst.width, inst.height
        self.n = n = self.w * self.h
        if n > 64:
            sys.exit(f"{path}: {n} pieces; this benchmark handles boards up to 64 pieces")
        # colour ranks, interior buckets and mask: the product's (`e2store.query.closures`)
        rot, self.istart, self.icand, self.ncol, mask = interior_tables(inst)
        self.rot = rot
        self.imask = np.uint64(mask)
        grey = rot == 0
        self.gmask = (grey * np.array([1, 2, 4, 8])).sum(axis=1)
        self.cellmask = np.array([frame_mask(self.w, self.h, c) for c in range(n)], np.int64)
        self.bstart, self.cand = self.tables(lambda c, v: self.gmask[v] == self.cellmask[c], 16,
                                             lambda m: [c for c in range(n)
                                                        if self.cellmask[c] == m])
        piece, r = lowest_corner(inst)
        self.corner = piece * 4 + r
        self.pd = (self.h - 4) * self.w + self.w - 2  # last interior cell of row H-4

    def tables(self, allowed, n_cls: int, cells_of) -> tuple[np.ndarray, np.ndarray]:
        """Buckets (cls, west, north) -> ascending placements allowed on every cell of cls."""
        ncol, rot = self.ncol, self.rot
        bstart = np.zeros(n_cls * ncol * ncol + 1, np.int64)
        flat: list[int] = []
        for k in range(n_cls * ncol * ncol):
            c, wc, nc = k // (ncol * ncol), (k // ncol) % ncol, k % ncol
            cells = cells_of(c)
            if cells:
                flat += [v for v in range(4 * self.n) if rot[v, 0] == wc and rot[v, 1] == nc
                         and all(allowed(cell, v) for cell in cells)]
            bstart[k + 1] = len(flat)
        return bstart, np.array(flat, np.int64)

    def prefixes(self, k: int) -> list[list[int]]:
        """Every valid rowscan prefix of k cells starting with the fixed corner."""
        out = [[self.corner]]
        for d in range(1, k):
            nxt = []
            for p in out:
                used = {v >> 2 for v in p}
                wc = self.rot[p[d - 1], 2] if d % self.w else 0
                nc = self.rot[p[d - self.w], 3] if d >= self.w else 0
                m = int(self.cellmask[d])
                nxt += [p + [v] for v in range(4 * self.n) if v >> 2 not in used
                        and self.gmask[v] == m and self.rot[v, 0] == wc and self.rot[v, 1] == nc]
            out = nxt
        return out


def arc_consistent_tables(b: Board, prefix: list[int]) -> tuple[np.ndarray, np.ndarray, int]:
    """Design 2: per-cell candidates of a subtree root, filtered to a fixed point (a
    candidate stays when each neighbour keeps one matching candidate of another piece)."""
    from e2store.zones.geometry import SIDE_STEP

    placed = dict(enumerate(prefix))
    used = {v >> 2 for v in prefix}
    dom = {c: ({placed[c]} if c in placed else
               {v for v in range(4 * b.n) if v >> 2 not in used and b.gmask[v] == b.cellmask[c]})
           for c in range(b.n)}
    removed, changed = 0, True
    while changed:
        changed = False
        for c in range(b.n):
            x, y = c % b.w, c // b.w
            keep = set()
            for v in dom[c]:
                if all(any(b.rot[u, (s + 2) % 4] == b.rot[v, s] and u >> 2 != v >> 2
                           for u in dom[(y + dy) * b.w + x + dx])
                       for s, (dx, dy) in enumerate(SIDE_STEP)
                       if 0 <= x + dx < b.w and 0 <= y + dy < b.h):
                    keep.add(v)
            if len(keep) < len(dom[c]):
                removed += len(dom[c]) - len(keep)
                dom[c] = keep
                changed = True
    bstart, cand = b.tables(lambda c, v: v in dom[c], b.n, lambda c: [c])
    return bstart, cand, removed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--board", type=int, default=7)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--prefix", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bloom-mib", type=int, default=1024, help="a power of two")
    ap.add_argument("--ac-samples", type=int, default=3)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    path = BENCH / f"pieces_{a.board}x{a.board}.txt"
    if not path.exists():
        sys.exit(f"{path} not found (the benchmark piece sets live in ../shared)")
    from e2store.solver.search import solve

    b = Board(path)
    pre = b.prefixes(a.prefix)
    pick = np.random.default_rng(a.seed).choice(len(pre), size=min(a.samples, len(pre)),
                                                replace=False)
    roots = [np.array(pre[i], np.int64) for i in pick]
    bw = b.w - 2
    if len([p for p in range(b.n) if (int(b.imask) >> p) & 1]) + bw * math.log2(b.ncol) > 64:
        sys.exit("block key does not fit 64 bits")
    bloom = np.zeros((a.bloom_mib << 20) // 8, np.uint64)
    check_block_tables(b.rot, b.istart, b.icand, b.ncol, bw, bloom)  # the primitives do not
    memo = [np.zeros(1 << 24, np.uint64), np.zeros(1 << 24, np.uint64),
            np.zeros(1 << 24, np.uint8)]
    stats = np.zeros(4, np.int64)
    rec_key = np.zeros((1, 2), np.uint64)
    rec_nodes = np.zeros(1, np.int64)

    def run(mode: int, root: np.ndarray, bstart=b.bstart, cand=b.cand, cls=b.cellmask):
        return _search(root, b.rot, bstart, cand, cls, b.w, b.ncol, mode, b.pd, b.imask,
                       b.istart, b.icand, bloom, *memo, rec_key, rec_nodes, stats)

    def timed(mode: int) -> dict:
        stats[:] = 0
        for x in memo:
            x[:] = 0
        t0 = time.perf_counter()
        nodes = sols = 0
        for root in roots:
            x, y = run(mode, root)
            nodes, sols = nodes + x, sols + y
        return {"nodes": nodes, "solutions": sols, "seconds": time.perf_counter() - t0,
                "probes": int(stats[0]), "cuts": int(stats[1]), "memo_hits": int(stats[2])}

    for mode in (PLAIN, COMPUTED):  # compile before any clock starts
        run(mode, roots[0])
    out: dict = {"board": b.inst.name, "samples": len(roots), "prefix": a.prefix,
                 "probe_cell": [b.pd % b.w, b.pd // b.w], "designs": {}}
    res = out["designs"]

    # the product's kernel on the same subtrees: same nodes, its seconds
    prod_nodes = prod_secs = 0.0
    for root in roots:
        r = solve(b.inst, "rowscan", seed={(i % b.w, i // b.w): int(v)
                                            for i, v in enumerate(root)})
        prod_nodes += r.nodes
        prod_secs += r.seconds
    res["plain"] = timed(PLAIN)
    assert res["plain"]["nodes"] == prod_nodes, "this search and the product count differently"
    res["product"] = {"nodes": int(prod_nodes), "seconds": prod_secs}
    plain = res["plain"]

    # design 1, computed with a memo
    res["block_computed"] = timed(COMPUTED)

    # transposition at the probe point: weight of subtrees whose key was seen before
    rec_key = np.zeros((res["block_computed"]["probes"] + 1, 2), np.uint64)
    rec_nodes = np.zeros(rec_key.shape[0], np.int64)
    stats[:] = 0
    for root in roots:
        run(RECORD, root)
    m = int(stats[3])
    rep = {}
    for col, name in ((0, "exact"), (1, "block")):
        _, first = np.unique(rec_key[:m, col], return_index=True)
        again = np.ones(m, bool)
        again[first] = False
        rep[name] = float(rec_nodes[:m][again].sum() / plain["nodes"])
    res["transposition"] = {"probe_points": m, "probes_per_node": m / plain["nodes"],
                            "below_probe": float(rec_nodes[:m].sum() / plain["nodes"]),
                            "nodes_under_repeated_exact_key": rep["exact"],
                            "nodes_under_repeated_block_key": rep["block"]}

    # design 2: support filtering at the root
    ac = {"roots": 0, "removed": 0, "nodes": 0, "plain_nodes": 0, "filter_seconds": 0.0}
    for root in roots[:a.ac_samples]:
        t0 = time.perf_counter()
        bs, cd, removed = arc_consistent_tables(b, root.tolist())
        ac["filter_seconds"] += time.perf_counter() - t0
        x, y = run(PLAIN, root, bs, cd, np.arange(b.n, dtype=np.int64))
        x0, y0 = run(PLAIN, root)
        assert y == y0
        ac["roots"] += 1
        ac["removed"] += removed
        ac["nodes"] += x
        ac["plain_nodes"] += x0
    res["support_filter_root"] = ac

    # design 1 from a table
    t0 = time.perf_counter()
    fills = fill_block_table(b.rot, b.istart, b.icand, b.ncol, bw, bloom, 0, 1)
    build = time.perf_counter() - t0
    res["block_table"] = {**timed(TABLE), "fillings": int(fills), "build_seconds": build,
                          "table_mib": a.bloom_mib}
    for k in ("block_computed", "block_table"):
        assert res[k]["solutions"] == plain["solutions"], k

    hns = plain["seconds"] / plain["nodes"] * 1e9
    pns = prod_secs / prod_nodes * 1e9
    t = res["block_table"]
    probe_ns = max(0.0, (t["seconds"] - t["nodes"] * hns * 1e-9) / max(1, t["probes"]) * 1e9)
    projected = (t["nodes"] * pns + t["probes"] * probe_ns) * 1e-9
    out["projection"] = {"harness_ns_per_node": hns, "product_ns_per_node": pns,
                         "probe_ns": probe_ns, "product_seconds_plain": prod_secs,
                         "product_seconds_with_table": projected,
                         "speedup": prod_secs / projected}
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"{b.inst.name}: {len(roots)} subtrees (prefix {a.prefix}, seed {a.seed}), probe "
          f"after cell {tuple(out['probe_cell'])}, block {bw}x2 interior")
    print(f"{'design':36s} {'nodes':>13s} {'saved':>7s} {'probes/node':>11s} {'seconds':>8s}")

    def line(name: str, r: dict) -> None:
        saved = 1 - r["nodes"] / plain["nodes"]
        print(f"{name:36s} {r['nodes']:13,d} {saved:7.1%} "
              f"{r.get('probes', 0) / plain['nodes']:11.4f} {r['seconds']:8.2f}")

    line("plain, product kernel", {**res["product"], "probes": 0})
    line("plain, this search", plain)
    line("block closure, computed + memo", res["block_computed"])
    line(f"block closure, table {a.bloom_mib} MiB", t)
    tr = res["transposition"]
    print(f"probe points {tr['probe_points']:,} ({tr['probes_per_node']:.4f} per node), "
          f"{tr['below_probe']:.1%} of nodes below them; nodes under a repeated key: exact "
          f"{tr['nodes_under_repeated_exact_key']:.2%}, block (S, P) "
          f"{tr['nodes_under_repeated_block_key']:.2%}")
    print(f"computed closure: memo hits {res['block_computed']['memo_hits']:,} of "
          f"{res['block_computed']['probes']:,} probes")
    print(f"table: {fills:,} block fillings, built in {build:.1f} s; probe cost "
          f"{probe_ns:.0f} ns; projected product kernel {prod_secs:.2f} s -> "
          f"{projected:.2f} s ({out['projection']['speedup']:.2f}x)")
    print(f"support filtering at {ac['roots']} roots: {ac['removed']:,} candidates removed "
          f"in {ac['filter_seconds']:.1f} s, nodes {ac['plain_nodes']:,} -> {ac['nodes']:,}")
    print(f"peak RSS {out['peak_rss_mb']:.0f} MiB")
    if a.json:
        a.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
