"""Best-score search: the mode the field plays Eternity II in (docs/solver.md, *Best
score*).  A sibling of the exact search (`e2store.solver.search`) over the same scan
orders, fixed cells and colour tables.

A depth-first search in a fixed scan order that lets a join mismatch from scheduled depths
on (the *break schedule*: the k-th mismatch is allowed from scan position `breaks[k]` on),
never on a frame colour or grey; at each cell the candidates matching every placed
neighbour come first, then those mismatching one join, each group in a random order drawn
per restart (the tie-break).  Each restart runs a node budget and keeps its best board
(deepest, then highest score); restarts are reproducible per (seed, restart).

`BestPlan` builds the kernel's tables; `BestSearch` runs restarts of it;
`best_search` is the whole run (restarts, workers, a time or node limit).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from e2store.errors import SolverError
from e2store.instance.model import GREY, Instance
from e2store.solver.boards import frame_colours, inner_joins
from e2store.solver.plan import fixed_problem, frame_mask, seed_cells
from e2store.solver.scan import scan_order
from e2store.solver.schedules import (  # noqa: F401 - public names of the best-score search
    CLUES,
    DEFAULT_RESTART_NODES,
    DEFAULT_SCHEDULE,
    SCHEDULES,
    SLICE_NODES,
    break_schedule,
    quota_curve,
)
from e2store.zones.geometry import SIDE_STEP


@dataclass
class BestPlan:
    """The kernel's tables for one instance, scan order, fixed cells and break schedule."""

    instance: Instance
    order: np.ndarray  # (W*H,) cell indices y*W+x in scan order
    fixed: dict[int, int]
    breaks: tuple[int, ...]
    quota: tuple[int, ...] = ()  # colour ranks of the colour quota (none: no quota)
    piece_rank: np.ndarray | None = None  # per piece: tried before higher ranks (the store)
    cell: np.ndarray = field(init=False)  # free cells in scan order
    depth: np.ndarray = field(init=False)  # scan positions covered once cell[d] is placed

    def __post_init__(self) -> None:
        inst = self.instance
        w, h = inst.width, inst.height
        n = w * h
        pos = np.empty(n, dtype=np.int64)
        pos[self.order] = np.arange(n)
        free = [int(c) for c in self.order if int(c) not in self.fixed]
        self.cell = np.array(free, dtype=np.int64)
        self.depth = pos[self.cell] + 1
        rot = inst.rotated_table().astype(np.int64)
        self.colk = rot.reshape(-1).copy()
        ncol = inst.n_colours
        self.K = K = ncol + 1  # K - 1: the wildcard (no neighbour placed there yet)
        framec = set(frame_colours(inst).tolist())
        self.inner = np.array([c != GREY and c not in framec for c in range(K)], dtype=np.bool_)
        self.inner[K - 1] = False
        known = set(self.fixed)
        nd = len(free)
        self.sig = np.zeros(nd, np.int64)
        arrs = {k: np.zeros(nd, np.int64) for k in ("sa", "ka", "na", "oa", "sb", "kb", "nb",
                                                    "ob")}
        self.xc = np.full((nd, 2), -1, np.int64)
        self.xs = np.zeros((nd, 2), np.int64)
        self.xo = np.zeros((nd, 2), np.int64)
        sigs: dict[tuple[int, int, int], int] = {}
        for d, c in enumerate(free):
            x, y = c % w, c // w
            nbs = []
            for s in (0, 1, 2, 3):
                dx, dy = SIDE_STEP[s]
                if 0 <= x + dx < w and 0 <= y + dy < h:
                    other = (y + dy) * w + x + dx
                    if other in known:
                        nbs.append((s, other))
            keyed = nbs[:2]
            while len(keyed) < 2:  # no neighbour yet: the wildcard, on a side not keyed
                keyed.append((next(s for s in (0, 1, 2, 3)
                                   if s not in [k[0] for k in keyed]), -1))
            (sa, na), (sb, nb_) = keyed
            for name, (s, other) in (("a", (sa, na)), ("b", (sb, nb_))):
                arrs["s" + name][d] = s
                arrs["k" + name][d] = 1 if other >= 0 else 2
                arrs["n" + name][d] = max(other, 0)
                arrs["o" + name][d] = (s + 2) % 4
            for j, (s, other) in enumerate(nbs[2:]):
                self.xc[d, j], self.xs[d, j], self.xo[d, j] = other, s, (s + 2) % 4
            fm = frame_mask(w, h, c)
            self.sig[d] = sigs.setdefault((fm, sa, sb), len(sigs))
            known.add(c)
        self.sa, self.ka, self.na, self.oa = arrs["sa"], arrs["ka"], arrs["na"], arrs["oa"]
        self.sb, self.kb, self.nb, self.ob = arrs["sb"], arrs["kb"], arrs["nb"], arrs["ob"]
        self.sigs = sigs
        self.allow = np.searchsorted(np.array(self.breaks, np.int64), self.depth - 1,
                                     side="right").astype(np.int64)
        n4 = 4 * n  # scol indices: cell*4+side, the frame at n*4, the wildcard at (n+1)*4
        def where(kind, other, opp):
            return np.where(kind == 0, n4, np.where(kind == 2, n4 + 4, other * 4 + opp))
        self.ia = where(self.ka, self.na, self.oa)
        self.ib = where(self.kb, self.nb, self.ob)
        self.xi = np.where(self.xc >= 0, self.xc * 4 + self.xo, -1)
        self.kbase = self.sig * K * K
        self.jf = self._joins_filled()
        self.hq, self.qmin, self.hc0 = self._quota()
        self.full = inner_joins(w, h)
        self._entries = self._list_entries()

    def _joins_filled(self) -> np.ndarray:
        """jf[d]: joins whose two cells are filled once d free cells are placed (the joins
        among fixed cells counted only when they match)."""
        w, h = self.instance.width, self.instance.height
        rot = self.instance.rotated_table()
        filled = set(self.fixed)
        j0 = 0
        for c, v in self.fixed.items():
            x, y = c % w, c // w
            for s in (2, 3):
                dx, dy = SIDE_STEP[s]
                o = (y + dy) * w + x + dx
                if 0 <= x + dx < w and 0 <= y + dy < h and o in self.fixed:
                    a, b = rot[v, s], rot[self.fixed[o], (s + 2) % 4]
                    j0 += int(a == b and a != GREY)
        out = [j0]
        for c in self.cell.tolist():
            x, y = c % w, c // w
            k = sum(1 for dx, dy in SIDE_STEP if 0 <= x + dx < w and 0 <= y + dy < h
                    and (y + dy) * w + x + dx in filled)
            filled.add(c)
            out.append(out[-1] + k)
        return np.array(out, dtype=np.int64)

    def _list_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(key, level, placement) of every candidate-list entry: per signature (frame mask,
        key sides), the placements with grey exactly on the frame sides, under every key
        they match exactly (level 0) or with one inner mismatch on a key side (level 1)."""
        inst, K = self.instance, self.K
        rot = inst.rotated_table().astype(np.int64)
        grey = rot == GREY
        wild = K - 1
        inner_cols = np.flatnonzero(self.inner)
        keys, levels, pls = [], [], []
        for (fm, sa, sb), si in self.sigs.items():
            want = np.array([(fm >> s) & 1 for s in range(4)], dtype=bool)
            valid = np.flatnonzero((grey == want).all(axis=1))
            ga, gb = rot[valid, sa], rot[valid, sb]
            base = si * K * K
            for ca in (ga, wild):  # exact: each key side's colour, or the wildcard
                for cb in (gb, wild):
                    keys.append(np.broadcast_to(base + ca * K + cb, valid.shape))
                    levels.append(np.zeros(valid.size, np.int64))
                    pls.append(valid)
            for mis in (0, 1):  # one inner mismatch on a key side, the other exact or wild
                g_mis, g_ok = (ga, gb) if mis == 0 else (gb, ga)
                ok = self.inner[g_mis]
                v, gm, gk = valid[ok], g_mis[ok], g_ok[ok]
                for c in inner_cols:
                    diff = gm != c
                    vv = v[diff]
                    for other in (gk[diff], np.full(vv.size, wild)):
                        keys.append(base + c * K + other if mis == 0 else base + other * K + c)
                        levels.append(np.ones(vv.size, np.int64))
                        pls.append(vv)
        return (np.concatenate(keys).astype(np.int64), np.concatenate(levels),
                np.concatenate(pls).astype(np.int64))

    def _quota(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(hq, qmin, hc0): the quota colours' sides per placement, the least of them
        placed by each free depth (Blackwood's curve, `quota_curve`), the fixed cells'."""
        inst = self.instance
        rot = inst.rotated_table()
        hq = np.isin(rot, np.array(self.quota, dtype=np.int64)).sum(axis=1).astype(np.int64)
        nd = self.cell.size
        if not self.quota:
            return hq, np.zeros(max(nd, 1), np.int64), 0
        total = int(np.isin(inst.pieces, np.array(self.quota)).sum())
        qmin = np.array([quota_curve(int(p) - 1, inst.width * inst.height, total)
                         for p in self.depth], dtype=np.int64)
        hc0 = int(sum(hq[v] for v in self.fixed.values()))
        return hq, qmin if nd else np.zeros(1, np.int64), hc0

    def lists(self, rng: np.random.Generator | None) -> tuple[np.ndarray, ...]:
        """(lists, kstart, kmid, kend): the candidate lists, each key's exact entries then
        its one-mismatch entries; within each part the quota's pieces first (with a quota),
        then by `piece_rank` (when given), then in placement order (rng None) or shuffled."""
        keys, levels, pls = self._entries
        tie = pls if rng is None else rng.permutation(pls.size)
        quota_first = -(self.hq[pls] > 0).astype(np.int64) if self.quota else np.zeros_like(pls)
        rank = (np.zeros_like(pls) if self.piece_rank is None
                else np.asarray(self.piece_rank, np.int64)[pls >> 2])
        idx = np.lexsort((tie, rank, quota_first, levels, keys))
        lists = pls[idx].astype(np.int32)
        sk, sl = keys[idx], levels[idx]
        nkeys = len(self.sigs) * self.K * self.K
        kr = np.arange(nkeys)
        kstart = np.searchsorted(sk, kr, side="left")
        kend = np.searchsorted(sk, kr, side="right")
        kmid = np.searchsorted(sk * 2 + sl, kr * 2 + 1, side="left")
        return lists, kstart.astype(np.int64), kmid.astype(np.int64), kend.astype(np.int64)


# the kernel's state words (e2store.solver._best_kernels, declared there too)
ST_D, ST_STARTED, ST_BEST_D, ST_BEST_SCORE, ST_BEST_MISM, ST_FULL, ST_STATUS = range(7)


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


class BestSearch:
    """Restarts of the best-score kernel over one `BestPlan`."""

    def __init__(self, plan: BestPlan, kernel: str = "auto"):
        """`kernel`: "generic" (one loop for every depth, `_best_kernels`), "unrolled" (the
        plan's own generated code, `_best_gen`: about 2x the nodes per second, a few
        seconds to compile once per plan) or "auto" (unrolled from `AUTO_MIN_DEPTHS` free
        cells on)."""
        from e2store.solver import _best_gen, _best_kernels, _unrolled

        _unrolled.check_choice(kernel)
        self.plan = plan
        self.generated = _best_gen.supported(plan) and (
            kernel == "unrolled" or (kernel == "auto"
                                     and plan.cell.size >= _best_gen.AUTO_MIN_DEPTHS))
        self.kernel = _best_gen.kernel(plan) if self.generated else _best_kernels.best_search

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
        lists, kstart, kmid, kend = p.lists(rng)
        n = inst.width * inst.height
        placed = np.full(n, -1, np.int64)
        used = np.zeros(inst.n_pieces, np.uint8)
        for c, v in p.fixed.items():
            placed[c] = v
            used[v >> 2] = 1
        nd = p.cell.size
        ptr, lim, mid = (np.zeros(max(nd, 1), np.int64) for _ in range(3))
        mism = np.zeros(nd + 1, np.int64)
        hcum = np.zeros(nd + 1, np.int64)
        hcum[0] = p.hc0
        scol = np.zeros(4 * (n + 2), np.int64)
        scol[4 * (n + 1):] = p.K - 1
        for c, v in p.fixed.items():
            scol[4 * c:4 * c + 4] = p.colk[4 * v:4 * v + 4]
        st = np.zeros(8, np.int64)
        st[ST_BEST_SCORE] = -1
        best = placed.copy()
        t0 = time.perf_counter()
        nodes = 0
        status = "budget"
        while nodes < budget:
            step = min(SLICE_NODES, budget - nodes)
            if self.generated:
                got = self.kernel(lists, kstart, kmid, kend, p.colk, p.inner, p.hq, scol,
                                  placed, used, ptr, lim, mid, mism, hcum, st, best, step)
            else:
                got = self.kernel(lists, kstart, kmid, kend, p.colk, p.inner, p.K, p.cell,
                                  p.kbase, p.ia, p.ib, p.xi, p.xs, p.allow, p.jf, p.full,
                                  p.hq, p.qmin, scol, placed, used, ptr, lim, mid, mism, hcum,
                                  st, best, step)
            nodes += int(got)
            if tick is not None:
                tick(int(got))
            if st[ST_STATUS] == 1:
                status = "exhausted"
                break
            if st[ST_STATUS] == 2:
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
        return RestartResult(best.astype(np.int16), depth, sc, mm, nodes,
                             time.perf_counter() - t0, seed, restart, status,
                             int(st[ST_FULL]), os.getpid())


def eternity_ii(instance: Instance) -> bool:
    """Whether `instance` looks like Eternity II's official pieces: 16x16, its clue pieces
    inner pieces, and Blackwood's quota colours 13, 16, 10 among its colour ids."""
    ids = {instance.colour_id(r) for r in range(instance.n_colours)}
    return ((instance.width, instance.height, instance.n_pieces) == (16, 16, 256)
            and {13, 16, 10} <= ids
            and not any((instance.pieces[p] == GREY).any() for (p, _) in CLUES["all"].values()))


def clue_cells(instance: Instance, name: str) -> dict[tuple[int, int], int]:
    """The fixed cells of a named clue set of Eternity II (`CLUES`), {(x, y): piece*4+r};
    SolverError for an unknown name or an instance that is not Eternity II's 256 pieces."""
    key = str(name).strip().lower().replace("center", "centre")
    if key not in CLUES:
        raise SolverError(f"--clues {name!r}: unknown clue set (expected one of "
                          f"{', '.join(CLUES)})")
    if (instance.width, instance.height, instance.n_pieces) != (16, 16, 256) or any(
            (instance.pieces[p] == GREY).any() for (p, _) in CLUES[key].values()):
        raise SolverError(f"--clues {key}: the clues of Eternity II's official pieces (16x16, "
                          f"inner pieces {', '.join(str(p + 1) for p, _ in CLUES[key].values())}"
                          f"); {instance.name} is not that set: give --fixed FILE|URL")
    return {cell: p * 4 + r for cell, (p, r) in CLUES[key].items()}


def quota_colours(instance: Instance, spec: str | Sequence[int] | None) -> tuple[int, ...]:
    """The colour ranks of a quota: None/"none" none, "blackwood" Blackwood's three colours
    of Eternity II (13, 16, 10 as the official files number them), or colour ids."""
    if spec is None or (isinstance(spec, str) and spec.strip().lower() == "none"):
        return ()
    if isinstance(spec, str) and spec.strip().lower() == "blackwood":
        ids = [13, 16, 10]
    elif isinstance(spec, str):
        try:
            ids = [int(t) for t in spec.split(",") if t.strip()]
        except ValueError:
            raise SolverError(f"--quota {spec!r}: expected none, blackwood or colour ids "
                              f"C1,C2,...") from None
    else:
        ids = [int(c) for c in spec]
    known = {instance.colour_id(r): r for r in range(1, instance.n_colours)}
    missing = [c for c in ids if c not in known]
    if missing or not ids:
        raise SolverError(f"--quota {spec}: colour(s) {missing or ids} not on {instance.name}'s "
                          f"inner or frame sides (its colours: {sorted(known)})")
    return tuple(known[c] for c in ids)


def best_plan(instance: Instance, scan="rowscan", fixed=None,
              breaks: str | Sequence[int] = DEFAULT_SCHEDULE,
              quota: str | Sequence[int] | None = None,
              piece_rank: np.ndarray | None = None) -> BestPlan:
    """Check the arguments of a best-score search and build its plan (SolverError naming
    the problem)."""
    w, h = instance.width, instance.height
    if instance.n_pieces != w * h:
        raise SolverError(f"instance {instance.name!r} has {instance.n_pieces} pieces for a "
                          f"{w}x{h} board (expected {w * h})")
    order = scan_order(scan, w, h) if not isinstance(scan, np.ndarray) else np.asarray(scan)
    order = np.asarray(order, dtype=np.int64).reshape(-1, 2)
    cells = order[:, 1] * w + order[:, 0]
    fx = seed_cells(fixed, w, h, instance.n_pieces) if fixed is not None else {}
    problem = fixed_problem(instance, fx)
    if problem is not None:
        raise SolverError(f"fixed cells: {problem}")
    if len(fx) >= w * h:  # no free cell: no candidate list to build, nothing to search
        raise SolverError(f"fixed cells: all {w * h} cells of the board are fixed, none is "
                          f"left to search (score the board with `e2store score`)")
    return BestPlan(instance, cells, fx, break_schedule(breaks, w * h, inner_joins(w, h)),
                    quota_colours(instance, quota), piece_rank)
