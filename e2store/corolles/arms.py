"""Hamming-3 corolle counts by arms: a second level of factorisation.

`e2store.corolles.factorised` walks every stem (every hamming-2 corolle) and counts ring 3 below it.
Here the walk stops one step earlier, at the *core*: rings 0 and 1 and the four diagonal
cells of ring 2.  The 16 cells left form four *arms* (a ring-2 tip, the ring-3 cell beyond
it and the two ring-3 cells beside it), which touch nothing but the core and their own
tip, so given the core they are independent but for piece distinctness, counted by
inclusion-exclusion over the pieces several arms can hold (`_arm_kernels`).  The walk is
shorter by the product of the four tips' choices (about 10^3 on the Eternity II board);
the price per core grows with the pieces arms share, so it pays on boards with many
colours and loses on the dense benchmark boards (docs/counting.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from e2store.corolles import _arm_kernels
from e2store.corolles.enumerate import (
    CandidateTable,
    Layout,
    candidate_table,
    choose_prefix_depth,
    corolle_layout,
    kernel_args,
)
from e2store.corolles.factorised import FactorisedCount, run_batches, symmetry_order
from e2store.errors import ZoneError
from e2store.instance.model import Instance
from e2store.zones.geometry import ring_offsets

HASH_BITS = 16  # initial hash of the arm subsets: 65,536 slots, grown when a core needs more
# how the disjoint arm tuples of a core are counted (`_arm_kernels`); both are exact
# ("bitsets": by bitsets where every arm fits in them, else the walk; "inclusion-exclusion":
# always the walk, the cross-check)
METHODS = {"bitsets": _arm_kernels.BY_BITS, "inclusion-exclusion": _arm_kernels.BY_IE}
_ARMS = ((1, 0), (0, -1), (-1, 0), (0, 1))  # tip directions: east, north, west, south


@dataclass(frozen=True)
class ArmLayout:
    """A hamming-3 layout with its levels reordered: core, then the four tips, then the
    ring-3 cells of each arm; and where each arm's cells are."""

    layout: Layout
    n_core: int
    arm_tip: np.ndarray  # (4,) level of each arm's tip, -1 off board
    arm_nleaf: np.ndarray  # (4,) ring-3 cells of each arm on the board
    arm_leaf: np.ndarray  # (4, 3) their levels, -1 padded


def arm_layout(width: int, height: int, x: int, y: int) -> ArmLayout:
    """The hamming-3 corolle at (x, y) in core / tips / arms level order."""
    lay = corolle_layout(width, height, x, y, 3)
    off = ring_offsets(3)[lay.slot_of]
    ring = np.abs(off).sum(axis=1)
    core = [lv for lv in range(lay.n_levels)
            if ring[lv] <= 1 or (ring[lv] == 2 and off[lv, 0] != 0 and off[lv, 1] != 0)]
    level_at = {(int(dx), int(dy)): lv for lv, (dx, dy) in enumerate(off)}
    tips, leaves = [], []
    for dx, dy in _ARMS:
        tip = level_at.get((2 * dx, 2 * dy), -1)
        ex, ey = dy, dx  # perpendicular
        cells = [(3 * dx, 3 * dy), (2 * dx + ex, 2 * dy + ey), (2 * dx - ex, 2 * dy - ey)]
        arm = [level_at[c] for c in cells if c in level_at]
        if tip < 0 and arm:
            raise AssertionError("a ring-3 cell on the board beside a tip off it")
        tips.append(tip)
        leaves.append(arm)
    order = core + [t for t in tips if t >= 0] + [lv for arm in leaves for lv in arm]
    assert sorted(order) == list(range(lay.n_levels))
    new = np.empty(lay.n_levels, dtype=np.int64)
    new[order] = np.arange(lay.n_levels)
    remap = np.concatenate([new, [-1]])  # -1 stays -1
    idx = np.asarray(order, dtype=np.int64)
    layout = Layout(width, height, x, y, 3, lay.kinds, lay.slot_of[idx], lay.own1[idx],
                    lay.own2[idx], remap[lay.nb1[idx]], remap[lay.nb2[idx]],
                    remap[lay.front_level], lay.front_side)
    arm_leaf = np.full((4, 3), -1, dtype=np.int64)
    for a, arm in enumerate(leaves):
        arm_leaf[a, :len(arm)] = new[arm]
    arm_tip = np.array([new[t] if t >= 0 else -1 for t in tips], dtype=np.int64)
    return ArmLayout(layout, len(core), arm_tip,
                     np.array([len(a) for a in leaves], dtype=np.int64), arm_leaf)


@dataclass(frozen=True)
class ArmWork:
    """The core walk of one hamming-3 corolle split into prefix batches for the kernel (the
    fields `e2store.counts.shards` reads are those of `factorised.StemWork`)."""

    arms: ArmLayout
    table: CandidateTable
    batches: list[np.ndarray]
    args: tuple
    order: int  # the batches hold centres with rotation < 4/order: counts times order

    @property
    def layout(self) -> Layout:
        return self.arms.layout

    @property
    def n_stem(self) -> int:
        """Levels walked before the kernel counts: the core."""
        return self.arms.n_core


def arm_work(instance: Instance, x: int, y: int, threads: int = 1, per_thread: int = 256, *,
             symmetric: bool = True, method: str = "bitsets") -> ArmWork:
    """Candidate table (of the reordered layout) and about `per_thread * threads` core
    prefix batches (with `symmetric`, only the centres `symmetry_order` says suffice);
    `method` is a key of METHODS."""
    if method not in METHODS:
        raise ValueError(f"unknown arm count method {method!r}: use one of {sorted(METHODS)}")
    if instance.n_pieces > _arm_kernels.MAX_PIECES:
        raise ZoneError(f"{instance.n_pieces} pieces: the arm count keys pieces in "
                        f"{_arm_kernels.PIECE_BITS} bits (at most {_arm_kernels.MAX_PIECES})")
    arms = arm_layout(instance.width, instance.height, x, y)
    table = candidate_table(instance, arms.layout)
    prefixes, _ = choose_prefix_depth(arms.layout.truncated(arms.n_core), table,
                                       64 * max(1, threads))
    order = symmetry_order(arms.layout) if symmetric else 1
    if order > 1:
        prefixes = prefixes[(prefixes[:, 0] & 3) < 4 // order]
    batches = (np.array_split(prefixes, min(len(prefixes), per_thread * max(1, threads)))
               if len(prefixes) else [])
    nb1, ns1, nb2, ns2, base, n_colours, bstart, cands, colours = kernel_args(arms.layout,
                                                                                table)
    args = (arms.n_core, arms.arm_tip, arms.arm_nleaf, arms.arm_leaf, nb1, ns1, nb2, ns2, base,
            n_colours, bstart, cands, colours, instance.n_pieces, HASH_BITS, METHODS[method])
    return ArmWork(arms, table, batches, args, order)


def count_arm_batches(work: ArmWork, batches: list[np.ndarray], *, threads: int = 1,
                      progress: bool = False, desc: str = "arms") -> tuple[int, int]:
    """(corolles, cores with a completion) below the core prefix batches, times the order."""

    def run(batch: np.ndarray) -> tuple[int, int]:
        c, s = _arm_kernels.count_arms(batch, *work.args)
        if (c < 0).any():
            raise ZoneError(f"{desc}: a term of the arm inclusion-exclusion could leave the "
                            f"64-bit range of the kernel; count this zone with the stem "
                            f"method (e2store.corolles.factorised) instead")
        return sum(int(v) for v in c), int(s.sum())

    total, cores = run_batches(run, batches, threads=threads, progress=progress, desc=desc)
    return total * work.order, cores * work.order


def count_by_arms(instance: Instance, x: int, y: int, *, threads: int = 1,
                  progress: bool = False, symmetric: bool = True,
                  method: str = "bitsets") -> FactorisedCount:
    """Count the hamming-3 corolles at (x, y) by cores and arms (`stems` counts the cores
    with a completion)."""
    t0 = time.perf_counter()
    work = arm_work(instance, x, y, threads, symmetric=symmetric, method=method)
    total, cores = count_arm_batches(work, work.batches, threads=threads, progress=progress,
                                     desc=f"arms ({x},{y}) h=3")
    return FactorisedCount(x, y, 3, total, cores, time.perf_counter() - t0)
