"""Corolle enumeration: layouts, candidate tables and the public wrappers of the kernels.

`count_corolles` counts the corolles centred on one cell; `iter_corolles` streams them in
chunks of columns (slot-major arrays), so that a zone of hundreds of millions of corolles
never has to fit in memory.  Both validate their input, then call `e2store.corolles._kernels`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
from tqdm import tqdm

from e2store.corolles import _bit_kernels, _kernels
from e2store.errors import ZoneError
from e2store.instance.classes import DistinctPieces, rotation_period
from e2store.instance.model import Instance
from e2store.zones.geometry import (
    OFF_BOARD,
    corolle_kinds,
    frontier_layout,
    inner_neighbours,
    n_slots,
)

DEFAULT_CHUNK_ROWS = 1 << 20
FIRST_CHUNK_ROWS = 1 << 12  # chunks grow x8 from this size up to chunk_rows
_PAD = 40  # extra elements per output row buffer (see walk_chunks)


@dataclass(frozen=True)
class Layout:
    """Where the levels (on-board slots) of the corolle centred on (x, y) are, and their joins."""

    width: int
    height: int
    x: int
    y: int
    hamming: int
    kinds: np.ndarray  # (S,) grey mask per slot, -1 off board
    slot_of: np.ndarray  # (L,) slot of each level
    own1: np.ndarray  # (L,) side of the level touching its first inner neighbour, -1
    own2: np.ndarray
    nb1: np.ndarray  # (L,) level of the first inner neighbour, -1
    nb2: np.ndarray
    front_level: np.ndarray  # (F,) level of each frontier side's cell, -1 off board
    front_side: np.ndarray  # (F,) side index of each frontier side

    @property
    def n_levels(self) -> int:
        return int(self.slot_of.shape[0])

    @property
    def n_slots(self) -> int:
        return int(self.kinds.shape[0])

    @property
    def n_frontier(self) -> int:
        return int(self.front_side.shape[0])

    def truncated(self, k: int) -> Layout:
        """The layout of the first k levels only, with levels as slots and no frontier."""
        idx = np.arange(k, dtype=np.int64)
        none = np.zeros(0, dtype=np.int64)
        return Layout(self.width, self.height, self.x, self.y, self.hamming, self.kinds[:0],
                      idx, self.own1[:k], self.own2[:k], self.nb1[:k], self.nb2[:k], none, none)


def corolle_layout(width: int, height: int, x: int, y: int, hamming: int) -> Layout:
    """Build the level layout of the hamming-h corolle centred on (x, y) of a W x H board."""
    if not (0 <= x < width and 0 <= y < height):
        raise ZoneError(
            f"cell ({x}, {y}) is off the {width}x{height} board "
            f"(expected 0 <= x < {width} and 0 <= y < {height})"
        )
    if hamming < 0:
        raise ZoneError(f"hamming {hamming} is negative (expected h >= 0)")
    kinds = corolle_kinds(width, height, x, y, hamming)
    slot_of = np.nonzero(kinds != OFF_BOARD)[0].astype(np.int64)
    level_of = np.full(n_slots(hamming), -1, dtype=np.int64)
    level_of[slot_of] = np.arange(len(slot_of))
    nbs = inner_neighbours(hamming)
    L = len(slot_of)
    own1, own2, nb1, nb2 = (np.full(L, -1, dtype=np.int64) for _ in range(4))
    for lv, slot in enumerate(slot_of):
        for j, (nslot, side) in enumerate(nbs[slot]):
            # an on-board cell's inner neighbours lie between it and the centre: on the board
            assert level_of[nslot] >= 0
            (own1 if j == 0 else own2)[lv] = side
            (nb1 if j == 0 else nb2)[lv] = level_of[nslot]
    fslots, fsides = frontier_layout(hamming)
    return Layout(width, height, x, y, hamming, kinds, slot_of, own1, own2, nb1, nb2,
                  level_of[fslots].astype(np.int64), np.asarray(fsides, dtype=np.int64))


@dataclass(frozen=True)
class CandidateTable:
    """Pre-rotated placements per level, bucketed by the colours the level must match."""

    base: np.ndarray  # (L,) first bucket of each level's class
    bstart: np.ndarray  # (B+1,) bucket starts into cands
    cands: np.ndarray  # packed placements piece*4+r, ascending inside a bucket
    colours: np.ndarray  # (4n, 4) colour shown by placement c on side s
    n_colours: int
    n_pieces: int


def candidate_table(instance: Instance, layout: Layout, distinct: bool = False,
                    ) -> CandidateTable:
    """Bucket every placement by (cell kind, touching sides, colours shown there); with
    `distinct`, one rotation per look of a symmetric piece (r below its period)."""
    colours = instance.rotated_table()
    n_place = colours.shape[0]
    C = instance.n_colours
    grey = (colours == 0).astype(np.int64) @ (1 << np.arange(4))
    if distinct:  # a placement no distinct walk makes never matches a bucket key
        looks = np.arange(n_place) % 4 < np.repeat(rotation_period(instance.pieces), 4)
        grey = np.where(looks, grey, -1)
    classes: dict[tuple[int, int, int], int] = {}
    base = np.empty(layout.n_levels, dtype=np.int64)
    parts_counts: list[np.ndarray] = []
    parts_cands: list[np.ndarray] = []
    for lv in range(layout.n_levels):
        key = (int(layout.kinds[layout.slot_of[lv]]), int(layout.own1[lv]), int(layout.own2[lv]))
        if key not in classes:
            mask, s1, s2 = key
            sel = np.nonzero(grey == mask)[0]
            k = np.zeros(len(sel), dtype=np.int64)
            if s1 >= 0:
                k += colours[sel, s1].astype(np.int64) * C
            if s2 >= 0:
                k += colours[sel, s2]
            order = np.argsort(k, kind="stable")
            parts_cands.append(sel[order])
            parts_counts.append(np.bincount(k, minlength=C * C))
            classes[key] = len(classes)
        base[lv] = classes[key] * C * C
    counts = np.concatenate(parts_counts) if parts_counts else np.zeros(0, dtype=np.int64)
    bstart = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=bstart[1:])
    cands = (np.concatenate(parts_cands) if parts_cands else np.zeros(0)).astype(np.int64)
    assert n_place == 4 * instance.n_pieces
    return CandidateTable(base, bstart, cands, colours.astype(np.int64), C, instance.n_pieces)


@dataclass(frozen=True)
class CountResult:
    """Exact corolle count at one cell, with the search's placements (nodes) and time."""

    x: int
    y: int
    hamming: int
    corolles: int
    nodes: int
    seconds: float
    raw: int | None = None  # a distinct count: the corolles with every distinction kept


# the list walk's tables after `n_levels` (`_kernels`): nb1, ns1, nb2, ns2, base, n_colours,
# bstart, cands, colours
KernelArgs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray,
                   np.ndarray, np.ndarray]


def kernel_args(layout: Layout, table: CandidateTable) -> KernelArgs:
    ns1 = np.where(layout.own1 >= 0, (layout.own1 + 2) % 4, -1)
    ns2 = np.where(layout.own2 >= 0, (layout.own2 + 2) % 4, -1)
    return (layout.nb1, ns1, layout.nb2, ns2, table.base, table.n_colours, table.bstart,
            table.cands, table.colours)


def bit_tables(layout: Layout, table: CandidateTable) -> tuple:
    """The bitset counter's arguments after `n_levels` (`_bit_kernels`): neighbour side
    indices into `shown`, bucket bases, the buckets as lists, as piece bitsets (with each
    piece's placement and the `simple` flag) and as layers of multiplicity."""
    L, n, W = layout.n_levels, table.n_pieces, _bit_kernels.n_words(table.n_pieces)
    zero = L * 4
    ns1 = np.where(layout.own1 >= 0, (layout.own1 + 2) % 4, 0)
    ns2 = np.where(layout.own2 >= 0, (layout.own2 + 2) % 4, 0)
    i1 = np.where(layout.nb1 >= 0, layout.nb1 * 4 + ns1, zero).astype(np.int64)
    i2 = np.where(layout.nb2 >= 0, layout.nb2 * 4 + ns2, zero).astype(np.int64)
    n_b = len(table.bstart) - 1
    bucket_of = np.repeat(np.arange(n_b), np.diff(table.bstart))
    piece = table.cands >> 2
    pairs, times = np.unique(bucket_of * n + piece, return_counts=True)
    pb, pp = pairs // n, pairs % n
    word, bit = pp >> 6, np.left_shift(np.uint64(1), (pp & 63).astype(np.uint64))
    lmask = np.zeros((n_b, _bit_kernels.LAYERS, W), dtype=np.uint64)
    for j in range(_bit_kernels.LAYERS):
        sel = times > j
        # numpy's stubs take no tuple mixing index arrays and an int as ufunc.at's index
        np.bitwise_or.at(lmask, (pb[sel], j, word[sel]), bit[sel])  # type: ignore[arg-type]
    simple = np.ones(n_b, dtype=np.uint8)
    simple[pb[times > 1]] = 0
    crec = np.full(n_b * n, -1, dtype=np.int32)  # placements < 4n fit
    crec[bucket_of * n + piece] = table.cands
    bmask = np.ascontiguousarray(lmask[:, 0, :]).ravel()
    return (i1, i2, table.base, table.n_colours, table.bstart, table.cands,
            np.ascontiguousarray(table.colours.ravel(), dtype=np.int64), bmask, simple, crec,
            lmask.ravel(), n)


def count_prefix_bits(prefixes: np.ndarray, layout: Layout, tables: tuple,
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(corolles, nodes) below each prefix, by the bitset counter (`bit_tables`)."""
    kernel = _bit_kernels.count_kernel(_bit_kernels.n_words(tables[-1]))
    return kernel(np.ascontiguousarray(prefixes, dtype=np.int64), layout.n_levels, *tables)


def count_prefix_lists(prefixes: np.ndarray, layout: Layout, table: CandidateTable,
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(corolles, nodes) below each prefix (n, k), k < L levels, by the list walk
    (`_kernels.count_prefixes`: each candidate's piece checked in a bool array, the last
    level scanned), the walk distinct counts take; `count_prefix_bits` is the faster one."""
    p = np.ascontiguousarray(prefixes, dtype=np.int64)
    if p.ndim != 2 or p.shape[1] >= layout.n_levels:
        raise ValueError(f"prefixes {p.shape} are not fillings of fewer than "
                         f"{layout.n_levels} levels")
    if p.size and (p.min() < 0 or p.max() >= 4 * table.n_pieces):
        raise ValueError(f"prefixes must hold placements 0 <= v < {4 * table.n_pieces}")
    return _kernels.count_prefixes(p, layout.n_levels, *kernel_args(layout, table),
                                   table.n_pieces)


def list_emitter(layout: Layout, table: CandidateTable):
    """`emit(cells, front) -> rows`: the list walk (`_kernels.emit_chunk`) of every corolle,
    resumed by each call; a call writing fewer rows than `cells` has columns ended the walk.
    `cells` (S, n) int16 and `front` (F, n) int8, off-board rows already -1 (`walk_chunks`,
    by bitsets, is the product's walk; this one writes distinct walks)."""
    L, args = layout.n_levels, kernel_args(layout, table)
    state = np.array([0, 1, 0, 0], dtype=np.int64)
    pos, end, placed = (np.zeros(L, dtype=np.int64) for _ in range(3))
    used = np.zeros(table.n_pieces, dtype=np.bool_)
    F, S = len(layout.front_level), max(layout.n_slots, L)

    def emit(cells: np.ndarray, front: np.ndarray) -> int:
        if (cells.dtype != np.int16 or cells.ndim != 2 or cells.shape[0] < S
                or front.dtype != np.int8 or front.shape != (F, cells.shape[1])):
            raise ValueError(f"emit needs cells (>= {S}, n) int16 and front "
                             f"({F}, n) int8, got {cells.dtype} {cells.shape} and "
                             f"{front.dtype} {front.shape}")
        if L == 0:
            return 0
        return int(_kernels.emit_chunk(state, pos, end, placed, used, 0, L, *args,
                                       layout.slot_of, layout.front_level,
                                       layout.front_side, cells, front))

    return emit


def level_prefixes(layout: Layout, table: CandidateTable, k: int,
                   dist: DistinctPieces | None = None) -> np.ndarray:
    """All fillings of the first k levels, (n, k) in depth-first order; with `dist` only
    those whose copies of each class come lowest first (a distinct walk's prefixes)."""
    if k == 0:
        return np.zeros((1, 0), dtype=np.int64)
    chunks = [np.asarray(c[:k].T) for c, _ in walk_chunks(layout.truncated(k), table)]
    out = np.ascontiguousarray(np.concatenate(chunks)) if chunks else np.zeros((0, k), np.int64)
    if dist is not None and len(out):
        out = np.ascontiguousarray(out[dist.lowest_first(out >> 2)])
    return out


def choose_prefix_depth(layout: Layout, table: CandidateTable, want: int,
                         dist: DistinctPieces | None = None) -> tuple[np.ndarray, int]:
    """The shallowest prefix set with at least `want` prefixes (or depth L-1), and the
    placements made to build it (every partial filling of the prefix levels, dead ends too)."""
    k, pref, nodes = 0, level_prefixes(layout, table, 0), 0
    while k < layout.n_levels - 1 and len(pref) < want:
        k += 1
        pref = level_prefixes(layout, table, k, dist)
        nodes += len(pref)
    return pref, nodes


def count_corolles(instance: Instance, x: int, y: int, hamming: int, *, threads: int = 1,
                   progress: bool = False, distinct: bool = False) -> CountResult:
    """Count exactly the hamming-h corolles centred on (x, y), using `threads` threads.
    With `distinct`, the distinct corolles (identical pieces interchangeable, symmetric
    rotations merged, `e2store.instance.classes`), and in `raw` the corolles they stand for."""
    t0 = time.perf_counter()
    layout = corolle_layout(instance.width, instance.height, x, y, hamming)
    table = candidate_table(instance, layout, distinct)
    dist = DistinctPieces.of(instance) if distinct else None
    prefixes, prefix_nodes = choose_prefix_depth(layout, table, 64 * max(1, threads), dist)
    total, nodes, raw_total = count_below(layout, table, prefixes, dist, threads=threads,
                                          progress=progress,
                                          desc=f"count ({x},{y}) h={hamming}")
    return CountResult(x, y, hamming, total, nodes + prefix_nodes, time.perf_counter() - t0,
                       raw_total if distinct else None)


def count_below(layout: Layout, table: CandidateTable, prefixes: np.ndarray,
                dist: DistinctPieces | None = None, *, threads: int = 1,
                progress: bool = False, desc: str = "count") -> tuple[int, int, int]:
    """(corolles, nodes, raw corolles) below the prefixes, in batches over `threads`
    threads; with `dist` (and a distinct `table`) the distinct corolles and their raw
    count, else raw = corolles."""
    args = kernel_args(layout, table)
    bits = bit_tables(layout, table) if dist is None else ()  # () with dist: unused
    L = layout.n_levels
    n_batches = min(len(prefixes), 256 * max(1, threads)) or 1
    batches = np.array_split(prefixes, n_batches) if len(prefixes) else []

    def run(batch: np.ndarray) -> tuple[int, int, int]:
        if dist is None:
            c, n = count_prefix_bits(batch, layout, bits)
            return int(c.sum()), int(n.sum()), int(c.sum())
        raw = np.zeros(len(batch), dtype=np.int64)
        c, n = _kernels.count_prefixes(batch, L, *args, table.n_pieces, dist.kernel_args(),
                                       raw)
        return int(c.sum()), int(n.sum()), int(raw.sum())

    total, nodes, raw_total = 0, 0, 0
    with tqdm(total=len(batches), desc=desc, unit="batch",
              disable=not progress, delay=1.0, leave=False,
              mininterval=0.5 if sys.stderr.isatty() else 30.0) as bar:
        if threads <= 1:
            results = []
            for b in batches:
                results.append(run(b))
                bar.update()
        else:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                results = []
                for res in pool.map(run, batches):
                    results.append(res)
                    bar.update()
    for c, n, r in results:
        total += c
        nodes += n
        raw_total += r
    return total, nodes, raw_total


def _bit_emitter(layout: Layout, table: CandidateTable, state: np.ndarray,
                 prefix: np.ndarray | None, seen: np.ndarray | None = None):
    """`emit(cells, front) -> rows` by the bitset emitter (`_bit_kernels`), its walk
    state kept between calls; marking the placements seen into `seen` when given."""
    L, k = layout.n_levels, 0 if prefix is None else len(prefix)
    i1, i2, base, C, bstart, cands, col, bmask, simple, crec, _, n = bit_tables(layout, table)
    W = _bit_kernels.n_words(n)
    used = np.zeros(W, dtype=np.uint64)
    pcs = np.zeros(L, dtype=np.int64)
    shown = np.zeros((L + 1) * 4, dtype=np.int64)
    if prefix is not None and k:
        pcs[:k] = prefix
        shown[:k * 4] = col.reshape(-1, 4)[pcs[:k]].ravel()
        p = pcs[:k] >> 2
        np.bitwise_or.at(used, p >> 6, np.left_shift(np.uint64(1), (p & 63).astype(np.uint64)))
    avail = np.zeros(L * W, dtype=np.uint64)
    bits = np.zeros(L, dtype=np.uint8)
    keys, pos, end = (np.zeros(L, dtype=np.int64) for _ in range(3))
    kernel = _bit_kernels.emit_kernel(W)
    marked = np.zeros(L, dtype=np.uint8)
    if seen is None:
        seen = np.zeros((0, 0), dtype=np.bool_)

    def emit(cells: np.ndarray, front: np.ndarray) -> int:
        return kernel(state, used, avail, bits, keys, pos, end, pcs, shown, k, L, i1, i2,
                      base, C, bstart, cands, col, bmask, simple, crec, n, layout.slot_of,
                      layout.front_level, layout.front_side, cells, front, seen, marked)

    return emit


def _list_emitter(layout: Layout, table: CandidateTable, state: np.ndarray,
                  prefix: np.ndarray | None, dist: DistinctPieces):
    """`emit(cells, front) -> rows` by the list walk (`_kernels.emit_chunk`), for a
    distinct walk (copies of a class lowest first)."""
    L = layout.n_levels
    args = kernel_args(layout, table)
    pos, end, placed = (np.zeros(L, dtype=np.int64) for _ in range(3))
    used = dist.blocked.copy()
    k = 0
    if prefix is not None and len(prefix):
        k = len(prefix)
        placed[:k] = prefix
        for p in (np.asarray(prefix) >> 2).tolist():
            used[p] = True
            if dist.nxt[p] >= 0:
                used[dist.nxt[p]] = False

    def emit(cells: np.ndarray, front: np.ndarray) -> int:
        return _kernels.emit_chunk(state, pos, end, placed, used, k, L, *args, layout.slot_of,
                                   layout.front_level, layout.front_side, cells, front,
                                   dist.nxt)

    return emit


def walk_chunks(layout: Layout, table: CandidateTable, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                 prefix: np.ndarray | None = None, nodes_out: list[int] | None = None,
                 dist: DistinctPieces | None = None,
                 ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Run `emit_chunk` to exhaustion, yielding (cells (S, n), frontier (F, n)) copies.

    When given, `nodes_out` receives the number of placements made once the walk ends.
    With `dist` (and a `candidate_table(..., distinct=True)`), the distinct corolles:
    copies of a class lowest first in walk order, one rotation per look.
    """
    for cells, front in _walk(layout, table, chunk_rows, prefix, nodes_out, dist, True):
        assert front is not None
        yield cells, front


def walk_cells(layout: Layout, table: CandidateTable, chunk_rows: int = DEFAULT_CHUNK_ROWS,
               prefix: np.ndarray | None = None, nodes_out: list[int] | None = None,
               dist: DistinctPieces | None = None, seen: np.ndarray | None = None,
               ) -> Iterator[np.ndarray]:
    """`walk_chunks` without the frontier: slot-major cells (S, n) only, the walk the store
    writes from (the frontier is not stored; writing it took a third of the walk).

    With `seen` (`e2store.corolles.placements.placements_seen`) and no `dist`, the walk
    also marks the placements each slot takes, as `mark_placements` of every chunk would,
    without a second pass over the rows."""
    if seen is not None and (dist is not None or seen.shape[0] < layout.n_slots
                             or seen.shape[1] < 4 * table.n_pieces or seen.dtype != np.bool_):
        raise ValueError("seen needs a plain walk and a bool row per slot, a column per "
                         "placement (placements_seen)")
    for cells, _ in _walk(layout, table, chunk_rows, prefix, nodes_out, dist, False, seen):
        yield cells


_NO_FRONT = np.zeros(0, dtype=np.int64)
_POOL = threading.local()  # each thread's walk buffers (walk_cells), at most _POOL_SIZE
_POOL_SIZE = 4
_POOLED_ROWS = 1 << 16


def _reused_buffer(shape: tuple[int, int]) -> np.ndarray:
    """An int16 buffer of `shape`: one this thread made before and nothing refers to any
    more (its chunks encoded and dropped), else a new one, kept for later if there is room.
    Fresh pages cost the kernel their zeroing: about 15% of a store's walk."""
    pool: list[np.ndarray] = _POOL.__dict__.setdefault("buffers", [])
    for i in range(len(pool)):
        # references: the list's, and getrefcount's argument
        if pool[i].shape == shape and sys.getrefcount(pool[i]) == 2:
            return pool[i]
    buf = np.empty(shape, dtype=np.int16)
    if len(pool) < _POOL_SIZE:
        pool.append(buf)
    return buf


def _walk(layout: Layout, table: CandidateTable, chunk_rows: int, prefix: np.ndarray | None,
          nodes_out: list[int] | None, dist: DistinctPieces | None, frontier: bool,
          seen: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    L = layout.n_levels
    k = 0 if prefix is None else len(prefix)
    if L == 0 or k >= L:
        return
    if not frontier:  # the kernels loop over no frontier side
        layout = replace(layout, front_level=_NO_FRONT, front_side=_NO_FRONT)
    state = np.array([0, 1, 0, 0], dtype=np.int64)
    emit = (_bit_emitter(layout, table, state, prefix, seen) if dist is None
            else _list_emitter(layout, table, state, prefix, dist))
    S = max(layout.n_slots, L)
    off = np.setdiff1d(np.arange(S), layout.slot_of)  # off the board: never written
    rows = min(chunk_rows, FIRST_CHUNK_ROWS)  # small walks should not pay for big buffers
    while True:
        # padded rows: column buffers a power of two apart alias in the cache (~25% slower)
        cells = (_reused_buffer((S, rows + _PAD)) if not frontier and rows >= _POOLED_ROWS
                 else np.empty((S, rows + _PAD), dtype=np.int16))[:, :rows]
        cells[off] = -1
        front = np.full((len(layout.front_level), rows + _PAD), -1, dtype=np.int8)[:, :rows]
        n = emit(cells, front)
        if n:
            if n < rows // 4:  # a small tail is copied; a big one kept (a copy cost 20%)
                cells, front = cells[:, :n].copy(), front[:, :n].copy()
            elif n < rows:
                cells, front = cells[:, :n], front[:, :n]
            yield cells, (front if frontier else None)
        if state[2]:
            break
        rows = min(chunk_rows, rows * 8)
    if nodes_out is not None:
        nodes_out[:] = [int(state[3])]


def iter_corolles(instance: Instance, x: int, y: int, hamming: int, *,
                  chunk_rows: int = DEFAULT_CHUNK_ROWS, prefix: list[int] | None = None,
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream the corolles at (x, y) in depth-first order as slot-major chunks.

    Yields `(cells, frontier)`: `cells` is (S, n) int16 packed `piece*4+r` per ring-order
    slot (-1 off the board), `frontier` is (F, n) int8 colours (-1 off the board).
    `prefix` fixes the placements of the first levels (on-board slots in ring order).
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1, got {chunk_rows}")
    layout = corolle_layout(instance.width, instance.height, x, y, hamming)
    table = candidate_table(instance, layout)
    pre = None if prefix is None else np.asarray(prefix, dtype=np.int64)
    yield from walk_chunks(layout, table, chunk_rows, pre)


def enumerate_corolles(instance: Instance, x: int, y: int, hamming: int,
                       ) -> tuple[np.ndarray, np.ndarray]:
    """All corolles at (x, y) as row-major arrays: cells (n, S) int16 and frontier (n, F) int8."""
    layout = corolle_layout(instance.width, instance.height, x, y, hamming)
    cs, fs = [], []
    for c, f in iter_corolles(instance, x, y, hamming):
        cs.append(c.T)
        fs.append(f.T)
    if not cs:
        return (np.zeros((0, layout.n_slots), np.int16), np.zeros((0, layout.n_frontier), np.int8))
    return np.concatenate(cs), np.concatenate(fs)
