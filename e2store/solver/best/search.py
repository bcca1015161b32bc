"""Restarts of the best-score kernel over one plan (docs/solver.md, *Best score*).

A depth-first search in a fixed scan order that lets a join mismatch from scheduled depths
on (the *break schedule*: the k-th mismatch is allowed from scan position `breaks[k]` on),
never on a frame colour or grey; at each cell the candidates matching every placed
neighbour come first, then those mismatching one join, each group in a random order drawn
per restart (the tie-break).  Each restart runs a node budget and keeps its best board
(deepest, then highest score); restarts are reproducible per (seed, restart).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from e2store.solver import _unrolled  # the generated-kernel choice, shared with the exact search

from . import _gen, _kernels
from ._kernels import (
    EXHAUSTED,
    PERFECT,
    ST_BEST_D,
    ST_BEST_MISM,
    ST_BEST_SCORE,
    ST_FULL,
    ST_STATUS,
)
from .plan import BestPlan
from .schedules import OTHER_BOARDS, SLICE_NODES


@dataclass
class RestartResult:
    """The best board of one restart: cells (W*H,) int16 (-1 holes), depth (scan positions
    covered), score (matched joins), mismatches, nodes, seconds, and how it ended."""

    board: np.ndarray
    depth: int
    score: int
    mismatches: int
    nodes: int
    seconds: float
    seed: int
    restart: int
    status: str  # "budget", "exhausted" (the whole search space), "perfect", "stopped"
    full_boards: int = 0
    worker: int = 0  # the pid of the process that ran it
    # other best boards the restart held on the way (seen between slices of the search):
    # (cells, depth, score), within one cell of `depth`, distinct, deepest then highest
    # score first, at most OTHER_BOARDS (the finish tries them too: issue 56, item 2)
    others: tuple[tuple[np.ndarray, int, int], ...] = ()


class BestSearch:
    """Restarts of the best-score kernel over one `BestPlan`."""

    def __init__(self, plan: BestPlan, kernel: str = "auto"):
        """`kernel`: "generic" (one loop for every depth, `_kernels`), "unrolled" (the
        plan's own generated code, `_gen`: about 2x the nodes per second, a few
        seconds to compile once per plan) or "auto" (unrolled from `AUTO_MIN_DEPTHS` free
        cells on)."""
        _unrolled.check_choice(kernel)
        self.plan = plan
        self.generated = _gen.supported(plan) and (
            kernel == "unrolled" or (kernel == "auto"
                                     and plan.cell.size >= _unrolled.AUTO_MIN_DEPTHS))
        # the two kernels take different arguments (run() calls each its own way)
        self.kernel: Callable[..., int] = (_gen.kernel(plan) if self.generated
                                           else _kernels.best_search)

    def run(self, seed: int, restart: int, budget: int, *,
            deadline: float | None = None, stop: Callable[[], bool] | None = None,
            tick: Callable[[int], None] | None = None, shuffle: bool = True,
            ) -> RestartResult:
        """Restart `restart` of stream `seed`: new tie-breaks (deterministic per (seed,
        restart); placement order without `shuffle`), then at most `budget` nodes (or until
        `deadline` on time.monotonic, or `stop()`)."""
        p = self.plan
        inst = p.instance
        rng = np.random.default_rng([seed, restart]) if shuffle else None
        lists, *keys = p.lists(rng)
        n = inst.width * inst.height
        mem, a = _gen.memory(p)  # the int64 arrays, views of one buffer (`_gen.layout`)
        for name, table in zip(("kstart", "kmid", "kend"), keys, strict=True):
            a[name][:] = table
        a["colk"][:], a["hq"][:] = p.colk, p.hq
        placed, scol, hcum = a["placed"], a["scol"], a["hcum"]
        placed[:] = -1
        used = np.zeros(inst.n_pieces, np.uint8)
        for c, v in p.fixed.items():
            placed[c] = v
            used[v >> 2] = 1
        nd = p.cell.size
        hcum[0] = p.hc0
        scol[4 * (n + 1):] = p.K - 1
        for c, v in p.fixed.items():
            scol[4 * c:4 * c + 4] = p.colk[4 * v:4 * v + 4]
        st = np.zeros(8, np.int64)
        st[ST_BEST_SCORE] = -1
        best = placed.copy()
        t0 = time.perf_counter()
        nodes = 0
        status = "budget"
        seen: list[tuple[np.ndarray, int, int]] = []  # the best board after each slice
        while nodes < budget:
            step = min(SLICE_NODES, budget - nodes)
            if self.generated:
                got = self.kernel(lists, p.inner, used, st, best, mem, step)
            else:
                got = self.kernel(lists, a["kstart"], a["kmid"], a["kend"], a["colk"],
                                  p.inner, p.K, p.cell, p.kbase, p.ia, p.ib, p.xi, p.xs,
                                  p.allow, p.jf, p.full, a["hq"], p.qmin, scol, placed, used,
                                  a["ptr"], a["lim"], a["mid"], a["mism"], hcum, st, best,
                                  step)
            nodes += int(got)
            if tick is not None:
                tick(int(got))
            if st[ST_BEST_D] > 0 and (not seen or not np.array_equal(seen[-1][0], best)):
                seen.append((best.astype(np.int16), int(st[ST_BEST_D]), int(st[ST_BEST_SCORE])))
            if st[ST_STATUS] == EXHAUSTED:
                status = "exhausted"
                break
            if st[ST_STATUS] == PERFECT:
                status = "perfect"
                break
            if (deadline is not None and time.monotonic() >= deadline) or (stop and stop()):
                status = "stopped"
                break
        bd = int(st[ST_BEST_D])
        if bd == 0:  # nothing placed (every candidate refused): the fixed cells only
            depth, sc, mm = int(p.depth[0] - 1) if nd else n, int(p.jf[0]), 0
        else:
            depth, sc, mm = int(p.depth[bd - 1]), int(st[ST_BEST_SCORE]), int(
                st[ST_BEST_MISM])
        if nd and bd == nd:
            depth = n
        near = sorted((b for b in seen if b[1] >= bd - 1 and not np.array_equal(b[0], best)),
                      key=lambda b: (-b[1], -b[2]))
        others = tuple((cells, depth if d == bd else int(p.depth[d - 1]), s)
                       for cells, d, s in near[:OTHER_BOARDS])
        return RestartResult(best.astype(np.int16), depth, sc, mm, nodes,
                             time.perf_counter() - t0, seed, restart, status,
                             int(st[ST_FULL]), os.getpid(), others)


