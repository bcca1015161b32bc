"""Factorised corolle counting: stems (rings 0..h-1) times injective choices of ring h.

Cells of one ring are never adjacent (docs/design.md section 2), so once the stem is filled each
ring-h cell has its own candidate list; the corolles below a stem are the injective
choices from those lists (pieces distinct from each other and from the stem).  Counting
them never walks the product: candidates whose piece fits no other ring-h cell only
multiply, and only the pieces shared between lists are walked.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from e2store.corolles import _kernels
from e2store.corolles.enumerate import (
    CandidateTable,
    KernelArgs,
    Layout,
    bit_tables,
    candidate_table,
    choose_prefix_depth,
    corolle_layout,
    count_prefix_bits,
    kernel_args,
)
from e2store.corolles.forms import CartesianRows
from e2store.errors import StoreError, ZoneError
from e2store.instance.model import Instance
from e2store.zones.geometry import n_slots, rotate_kinds

MAX_HAMMING = 5  # ring h: 4h <= 20 lists and the piece list: a block factor (4h)! fits int64


@dataclass(frozen=True)
class FactorisedCount:
    """Exact corolle count at one cell, with the number of stems that have a completion."""

    x: int
    y: int
    hamming: int
    corolles: int
    stems: int
    seconds: float


@dataclass(frozen=True)
class StemWork:
    """The stem walk of one corolle split into prefix batches for the kernels."""

    layout: Layout
    table: CandidateTable
    n_stem: int  # levels of rings 0..h-1; the remaining levels form ring h
    batches: list[np.ndarray]
    args: KernelArgs
    # (pbits, hbits, pwt, unit): buckets as piece sets, for the last-ring kernels
    ring: tuple[np.ndarray, np.ndarray, np.ndarray, bool]
    order: int = 1  # the batches hold centres with rotation < 4/order: counts times order


def ring_arrays(table: CandidateTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Every bucket as a piece bitset (64 pieces per word) and its placements per piece.

    `pwt[b, p]` is how many placements of piece p bucket b holds (a piece with a repeated
    colour can fit one cell in two rotations) and `hbits[b]` the bitset of those with more
    than one; `unit` says no bucket holds a piece twice, so the kernels may count a set's
    placements by popcount alone.
    """
    n_buckets = len(table.bstart) - 1
    words = max(1, (table.n_pieces + 63) // 64)
    bucket = np.repeat(np.arange(n_buckets), np.diff(table.bstart))
    pieces = table.cands >> 2
    pwt = np.zeros((n_buckets, table.n_pieces), dtype=np.int64)
    np.add.at(pwt, (bucket, pieces), 1)
    pbits = np.zeros((n_buckets, words), dtype=np.uint64)
    b, p = np.nonzero(pwt)
    np.bitwise_or.at(pbits, (b, p >> 6), np.left_shift(np.uint64(1), (p & 63).astype(np.uint64)))
    hbits = _kernels.heavy_bits(pwt, words)
    return pbits, hbits, pwt, bool(pwt.max(initial=0) <= 1)


def symmetry_order(layout: Layout) -> int:
    """Quarter turns (4, 2 or 1) that map the corolle's shape onto itself.

    Turning a corolle of a shape with order q by 4/q quarter turns gives another corolle of
    the same shape whose centre turned by 4/q: the corolles split evenly by the centre's
    rotation modulo 4/q, so counting centres with r < 4/q and multiplying by q is exact.
    """
    for q, turns in ((4, 1), (2, 2)):
        if np.array_equal(rotate_kinds(layout.kinds, layout.hamming, turns), layout.kinds):
            return q
    return 1


def stem_work(instance: Instance, layout: Layout, threads: int, per_thread: int, *,
              symmetric: bool = False) -> StemWork:
    """Candidate table, stem size and about `per_thread * threads` prefix batches.

    With `symmetric`, a shape that a turn maps onto itself keeps only the centres that
    `symmetry_order` says suffice (the caller multiplies by `order`).
    """
    if layout.hamming > MAX_HAMMING:
        raise ZoneError(f"hamming {layout.hamming} is too large for the stem kernels "
                        f"(expected h <= {MAX_HAMMING})")
    table = candidate_table(instance, layout)
    inner = n_slots(layout.hamming - 1) if layout.hamming > 0 else 0
    n_stem = int(np.count_nonzero(layout.slot_of < inner))
    if n_stem > 1:
        prefixes, _ = choose_prefix_depth(layout.truncated(n_stem), table,
                                           64 * max(1, threads))
    else:
        prefixes = np.zeros((1, 0), dtype=np.int64)
    order = symmetry_order(layout) if symmetric and prefixes.shape[1] > 0 else 1
    if order > 1:
        prefixes = prefixes[(prefixes[:, 0] & 3) < 4 // order]
    batches = (np.array_split(prefixes, min(len(prefixes), per_thread * max(1, threads)))
               if len(prefixes) else [])
    return StemWork(layout, table, n_stem, batches, kernel_args(layout, table),
                    ring_arrays(table), order)


def prefix_corolles(work: StemWork, prefixes: np.ndarray) -> np.ndarray:
    """Corolles below each prefix of stem levels (n, k), k <= n_stem (factorised count)."""
    prefixes = np.ascontiguousarray(prefixes, dtype=np.int64)
    if prefixes.ndim != 2 or prefixes.shape[1] > work.n_stem:
        raise ValueError(f"prefixes {prefixes.shape} are not fillings of at most "
                         f"{work.n_stem} stem levels")
    return _kernels.count_factorised(prefixes, work.n_stem, work.layout.n_levels, *work.args,
                                     *work.ring)[0]


def prefix_stems(layout: Layout, table: CandidateTable, n_stem: int,
                 prefixes: np.ndarray) -> np.ndarray:
    """Stems (fillings of the first `n_stem` levels) below each prefix (n, k), k < n_stem."""
    prefixes = np.ascontiguousarray(prefixes, dtype=np.int64)
    if prefixes.ndim != 2 or prefixes.shape[1] >= n_stem:
        raise ValueError(f"prefixes {prefixes.shape} are not shorter than the {n_stem} "
                         f"stem levels")
    stem = layout.truncated(n_stem)
    return count_prefix_bits(prefixes, stem, bit_tables(stem, table))[0]


def balanced_bounds(weights: np.ndarray, shards: int) -> np.ndarray:
    """Cut a list of prefixes with these costs into `shards` contiguous ranges of about
    equal cost (+1 each: a prefix with nothing below it still costs its walk)."""
    cum = np.cumsum(weights + 1)
    total = int(cum[-1]) if len(cum) else 0
    cuts = np.searchsorted(cum, np.arange(1, shards) * total / shards, side="right")
    return np.concatenate([[0], np.maximum.accumulate(cuts), [len(weights)]]).astype(np.int64)


def run_batches(run, batches: list, *, threads: int = 1, progress: bool = False,
                desc: str = "factorised") -> tuple:
    """Sum `run(batch) -> (corolles, stems)` over the batches on `threads` threads, in batch
    order, with a progress bar (shared by the stem and the arm counts and the estimates)."""
    total = stems = 0
    with tqdm(total=len(batches), desc=desc, unit="batch", disable=not progress, delay=1.0,
              leave=False, mininterval=0.5 if sys.stderr.isatty() else 30.0) as bar:
        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            for c, s in pool.map(run, batches):
                total += c
                stems += s
                bar.update()
    return total, stems


def count_batches(work: StemWork, batches: list[np.ndarray], *, threads: int = 1,
                  progress: bool = False, desc: str = "factorised") -> tuple[int, int]:
    """(corolles, stems) below the stem prefix batches, on `threads` threads, times the
    work's symmetry order."""
    args = (work.n_stem, work.layout.n_levels, *work.args, *work.ring)

    def run(batch: np.ndarray) -> tuple[int, int]:
        c, s = _kernels.count_factorised(batch, *args)
        if (c < 0).any():
            raise ZoneError(f"{desc}: a count could leave the 64-bit range of the kernels "
                            f"(a term of a last-ring partition sum, or a prefix's total); "
                            f"this count is out of reach of the method")
        return sum(int(v) for v in c), int(s.sum())

    total, stems = run_batches(run, batches, threads=threads, progress=progress, desc=desc)
    return total * work.order, stems * work.order


def count_factorised(instance: Instance, x: int, y: int, hamming: int, *, threads: int = 1,
                     progress: bool = False, symmetric: bool = True) -> FactorisedCount:
    """Count the hamming-h corolles at (x, y) from stems and last-ring candidate lists
    (`symmetric`: use the shape's turn symmetry, see `symmetry_order`)."""
    t0 = time.perf_counter()
    work = stem_work(instance, corolle_layout(instance.width, instance.height, x, y, hamming),
                     threads, 256, symmetric=symmetric)
    total, stems = count_batches(work, work.batches, threads=threads, progress=progress,
                                 desc=f"factorised ({x},{y}) h={hamming}")
    return FactorisedCount(x, y, hamming, total, stems, time.perf_counter() - t0)
def cartesian_rows(instance: Instance, x: int, y: int, hamming: int, *,
                   threads: int = 1) -> CartesianRows:
    """Build the cartesian form of the corolles at (x, y) without walking the last ring."""
    layout = corolle_layout(instance.width, instance.height, x, y, hamming)
    return layout_cartesian_rows(instance, layout, threads)


def layout_cartesian_rows(instance: Instance, layout: Layout, threads: int) -> CartesianRows:
    """The cartesian rows of a corolle layout: stems walked by `threads` workers."""
    hamming = layout.hamming
    work = stem_work(instance, layout, threads, 64)
    n_stem, batches, args = work.n_stem, work.batches, work.args
    s_in = n_slots(hamming - 1) if hamming > 0 else 0
    m = layout.n_levels - n_stem

    def run(batch: np.ndarray):
        totals = np.zeros(m + 1, dtype=np.int64)
        dummy2 = np.zeros((0, 0), dtype=np.int64)
        _kernels.cartesian_stems(batch, n_stem, layout.n_levels, *args,
                                 *work.ring, False, dummy2, np.zeros(0, np.int64),
                                 np.zeros((0, 0), np.int32), np.zeros((0, 0), np.int16), totals)
        rows = int(totals[0])
        if rows < 0:
            raise StoreError(f"cartesian form at ({layout.x},{layout.y}) h={hamming}: a stem's "
                             f"count could exceed the 64-bit range; not stored")
        stems = np.zeros((rows, n_stem), dtype=np.int64)
        counts = np.zeros(rows, dtype=np.int64)
        lens = np.zeros((rows, m), dtype=np.int32)
        values = np.zeros((m, int(totals[1:].max()) if m else 0), dtype=np.int16)
        _kernels.cartesian_stems(batch, n_stem, layout.n_levels, *args,
                                 *work.ring, True, stems, counts, lens, values, totals)
        return stems, counts, lens, values, totals[1:].copy()

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        parts = list(pool.map(run, batches))
    stems_l = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, n_stem), np.int64)
    counts = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    lens = np.concatenate([p[2] for p in parts]) if parts else np.zeros((0, m), np.int32)
    n = len(counts)
    stems = np.full((n, s_in), -1, dtype=np.int16)
    stems[:, layout.slot_of[:n_stem]] = stems_l
    ring_h = 4 * hamming if hamming else 1
    offsets: list = [None] * ring_h
    values: list = [None] * ring_h
    for i in range(m):
        k = int(layout.slot_of[n_stem + i]) - s_in
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens[:, i], out=off[1:])
        offsets[k] = off
        values[k] = np.concatenate([p[3][i, :p[4][i]] for p in parts])
    for k in range(ring_h):
        if offsets[k] is None:  # off-board ring-h slot: one "empty" choice per row
            offsets[k] = np.arange(n + 1, dtype=np.int64)
            values[k] = np.full(n, -1, dtype=np.int16)
    return CartesianRows(hamming, stems, counts, offsets, values)
