"""The plan of a best-score search (docs/solver.md, *Best score*): the kernel's tables for
one instance, scan order, fixed cells, break schedule, colour quota and piece order, and
`best_plan`, which resolves the options of `e2store best` (their defaults declared
once, in `e2store.solver.best.schedules`) into one.

Per depth d (the d-th free cell of the scan order) two *key sides* select the candidate
list (`_kernels` module docstring): key = sig[d]*K*K + ca*K + cb, ca and cb the colours
the neighbours across those sides show, K-1 the wildcard for a side with no neighbour
placed yet; a third and fourth placed neighbour are checked per candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from e2store.boards.table import frame_colours, inner_joins
from e2store.errors import SolverError
from e2store.instance.model import GREY, Instance
from e2store.solver.plan import fixed_problem, frame_mask, grey_masks, seed_cells
from e2store.solver.scan import scan_order
from e2store.zones.geometry import SIDE_STEP

from .schedules import (
    AUTO,
    CLUES,
    CLUES_SCHEDULE,
    DEFAULT_BREAKS,
    DEFAULT_ORDER,
    DEFAULT_QUOTA,
    DEFAULT_SCAN,
    DEFAULT_SCHEDULE,
    ORDERS,
    break_schedule,
    quota_curve,
)

_I64 = np.zeros(0, np.int64)  # the empty default of a table field


def _table() -> np.ndarray:
    return field(init=False, repr=False, default_factory=lambda: _I64)


@dataclass(eq=False)
class BestPlan:
    """The kernel's tables for one instance, scan order (`order`, cell indices y*W+x),
    fixed cells ({cell index: piece*4+r}), break schedule (scan positions), colour quota
    (colour ranks) and piece order (`piece_rank`: per piece, lower tried first; None:
    random).  Every table below is built from those six (`__post_init__`)."""

    instance: Instance
    order: np.ndarray
    fixed: dict[int, int]
    breaks: tuple[int, ...]
    quota: tuple[int, ...] = ()
    piece_rank: np.ndarray | None = None
    # per depth d (the free cells in scan order)
    cell: np.ndarray = _table()  # the cell index
    depth: np.ndarray = _table()  # scan positions covered once cell[d] is placed
    sig: np.ndarray = _table()  # its signature: (frame mask, key sides) numbered
    ia: np.ndarray = _table()  # `scol` index of the colour key side a must show
    ib: np.ndarray = _table()  # same for key side b
    xi: np.ndarray = _table()  # (nd, 2) `scol` index of a third/fourth neighbour's colour, -1
    xs: np.ndarray = _table()  # (nd, 2) the side of the placement facing it
    allow: np.ndarray = _table()  # mismatches allowed at this depth (the break schedule)
    kbase: np.ndarray = _table()  # sig*K*K: the first key of its signature
    jf: np.ndarray = _table()  # (nd+1,) joins among filled cells once d cells are placed
    qmin: np.ndarray = _table()  # least quota sides placed by this depth
    # per placement (piece*4+r)
    colk: np.ndarray = _table()  # (4n*4,) the colour rank shown on each side, flat
    hq: np.ndarray = _table()  # quota-colour sides shown
    # per colour rank
    inner: np.ndarray = _table()  # an inner colour (a join showing it may mismatch)
    K: int = field(init=False, default=0)  # colour ranks + 1: K-1 is the wildcard
    hc0: int = field(init=False, default=0)  # quota sides the fixed cells show
    full: int = field(init=False, default=0)  # the board's inner joins (a perfect score)
    sigs: dict[tuple[int, int, int], int] = field(init=False, repr=False, default_factory=dict)
    entries: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        init=False, repr=False, default=(_I64, _I64, _I64))  # (key, level, placement)

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
        self.K = K = inst.n_colours + 1
        framec = set(frame_colours(inst).tolist())
        self.inner = np.array([c != GREY and c not in framec for c in range(K)], dtype=np.bool_)
        self.inner[K - 1] = False
        self._neighbours(free)
        self.allow = np.searchsorted(np.array(self.breaks, np.int64), self.depth - 1,
                                     side="right").astype(np.int64)
        self.kbase = self.sig * K * K
        self.jf = self._joins_filled()
        self.hq, self.qmin, self.hc0 = self._quota()
        self.full = inner_joins(w, h)
        self.entries = self._list_entries()

    def _neighbours(self, free: list[int]) -> None:
        """sig, ia, ib, xi, xs: the sides of each free cell facing a cell placed before it
        (fixed cells included), the first two keyed, the others checked per candidate."""
        w, h = self.instance.width, self.instance.height
        n4 = 4 * w * h  # scol indices: cell*4+side, the frame at n*4, the wildcard at (n+1)*4
        nd = len(free)
        self.sig, self.ia, self.ib = (np.zeros(nd, np.int64) for _ in range(3))
        self.xi = np.full((nd, 2), -1, np.int64)
        self.xs = np.zeros((nd, 2), np.int64)
        known = set(self.fixed)
        for d, c in enumerate(free):
            x, y = c % w, c // w
            nbs = [(s, (y + dy) * w + x + dx) for s, (dx, dy) in enumerate(SIDE_STEP)
                   if 0 <= x + dx < w and 0 <= y + dy < h and (y + dy) * w + x + dx in known]
            keyed = nbs[:2]
            while len(keyed) < 2:  # no neighbour yet: the wildcard, on a side not keyed
                keyed.append((next(s for s in range(4) if s not in [k[0] for k in keyed]),
                              -1))
            (sa, na), (sb, nb) = keyed
            self.ia[d] = n4 + 4 if na < 0 else na * 4 + (sa + 2) % 4
            self.ib[d] = n4 + 4 if nb < 0 else nb * 4 + (sb + 2) % 4
            for j, (s, other) in enumerate(nbs[2:]):
                self.xi[d, j], self.xs[d, j] = other * 4 + (s + 2) % 4, s
            self.sig[d] = self.sigs.setdefault((frame_mask(w, h, c), sa, sb), len(self.sigs))
            known.add(c)

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
        key sides), the placements that fit the frame (`grey_masks`), under every key
        they match exactly (level 0) or with one inner mismatch on a key side (level 1)."""
        inst, K = self.instance, self.K
        rot = inst.rotated_table().astype(np.int64)
        greys = grey_masks(rot)
        wild = K - 1
        inner_cols = np.flatnonzero(self.inner)
        keys, levels, pls = [], [], []
        for (fm, sa, sb), si in self.sigs.items():
            valid = np.flatnonzero(greys == fm)
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
        keys, levels, pls = self.entries
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

    @property
    def order_name(self) -> str:
        """The piece order, as `e2store best --order` names it."""
        return "store" if self.piece_rank is not None else "random"


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
        raise SolverError(f"clue set {name!r}: unknown (expected one of "
                          f"{', '.join(CLUES)})").about("clues")
    if (instance.width, instance.height, instance.n_pieces) != (16, 16, 256) or any(
            (instance.pieces[p] == GREY).any() for (p, _) in CLUES[key].values()):
        raise SolverError(f"clue set {key}: the clues of Eternity II's official pieces (16x16, "
                          f"inner pieces {', '.join(str(p + 1) for p, _ in CLUES[key].values())}"
                          f"); {instance.name} is not that set: fix its cells by hand instead"
                          ).about("clues")
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
            raise SolverError(f"colour quota {spec!r}: expected none, blackwood or colour ids "
                              f"C1,C2,...").about("quota") from None
    else:
        ids = [int(c) for c in spec]
    known = {instance.colour_id(r): r for r in range(1, instance.n_colours)}
    missing = [c for c in ids if c not in known]
    if missing or not ids:
        raise SolverError(f"colour quota {spec}: colour(s) {missing or ids} not on "
                          f"{instance.name}'s inner or frame sides (its colours: "
                          f"{sorted(known)})").about("quota")
    return tuple(known[c] for c in ids)


def merged_fixed(instance: Instance, fixed: Mapping[tuple[int, int], int] | None,
                 clues: str | None) -> dict[tuple[int, int], int]:
    """The fixed cells of a run, {(x, y): piece*4+r}: a named clue set's (`clue_cells`)
    and the cells given, which must agree where both fix a cell."""
    out = dict(clue_cells(instance, clues)) if clues is not None else {}
    for cell, v in (fixed or {}).items():
        cell = (int(cell[0]), int(cell[1]))
        if cell in out and out[cell] != int(v):
            raise SolverError(f"the fixed cells and the clues disagree on cell {cell}"
                              ).about("fixed")
        out[cell] = int(v)
    return out


def best_plan(instance: Instance, scan: str | Path | np.ndarray = DEFAULT_SCAN,
              fixed: Mapping[tuple[int, int], int] | None = None,
              breaks: str | Sequence[int] = DEFAULT_BREAKS,
              quota: str | Sequence[int] | None = DEFAULT_QUOTA,
              piece_rank: np.ndarray | None = None, *, clues: str | None = None,
              order: str = DEFAULT_ORDER, store: str | Path | None = None) -> BestPlan:
    """The plan of a best-score search, its options checked (SolverError naming the
    problem) and resolved as `e2store best` resolves them, defaults included:
    `clues` (a name of `CLUES`) added to the `fixed` cells; `breaks` "auto": the clues
    schedule with all five clues, else Blackwood's; `quota` "auto": Blackwood's colours on
    Eternity II's pieces, else none, "store": the colours whose pieces tile worst in the
    corolle `store`; `order` "store": the pieces that tile worst tried first (the store's
    `piece_order`; `piece_rank` gives such ranks directly)."""
    w, h = instance.width, instance.height
    if instance.n_pieces != w * h:
        raise SolverError(f"instance {instance.name!r} has {instance.n_pieces} pieces for a "
                          f"{w}x{h} board (expected {w * h})")
    if order not in ORDERS:
        raise SolverError(f"piece order {order!r}: expected one of {', '.join(ORDERS)}"
                          ).about("order")
    cells_xy = (np.asarray(scan) if isinstance(scan, np.ndarray)
                else scan_order(scan, w, h))
    cells_xy = np.asarray(cells_xy, dtype=np.int64).reshape(-1, 2)
    cells = cells_xy[:, 1] * w + cells_xy[:, 0]
    given = merged_fixed(instance, fixed, clues)
    fx = seed_cells(given, w, h, instance.n_pieces) if given else {}
    problem = fixed_problem(instance, fx)
    if problem is not None:
        raise SolverError(f"fixed cells: {problem}").about("fixed")
    if len(fx) >= w * h:  # no free cell: no candidate list to build, nothing to search
        raise SolverError(f"fixed cells: all {w * h} cells of the board are fixed, none is "
                          f"left to search (score the board with `e2store score`)")
    if isinstance(breaks, str) and breaks.strip().lower() == AUTO:
        all_clues = clues is not None and str(clues).strip().lower() == "all"
        breaks = CLUES_SCHEDULE if all_clues else DEFAULT_SCHEDULE
    if isinstance(quota, str) and quota.strip().lower() == AUTO:
        quota = "blackwood" if eternity_ii(instance) else None
    if order == "store" or (isinstance(quota, str) and quota.strip().lower() == "store"):
        if store is None:
            raise SolverError("the store's piece order and colour quota read a corolle "
                              "store: none given (its hamming-1 cartesian partitions are "
                              "built there when missing)").about("store")
        from .store import piece_order, quota_from_store, tileability

        tiles = tileability(store, instance)
        if isinstance(quota, str) and quota.strip().lower() == "store":
            quota = list(quota_from_store(instance, tiles))  # colour ids
        if order == "store":
            piece_rank = piece_order(instance, tiles)
    return BestPlan(instance, cells, fx, break_schedule(breaks, w * h, inner_joins(w, h)),
                    quota_colours(instance, quota), piece_rank)
