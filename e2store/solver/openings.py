"""Openings: consistent combinations of corolles at chosen cells, and solving them in parallel.

An *opening* (DESIGN.md section 5) places one corolle on each chosen cell at once: no piece
twice, overlapping cells agree, touching sides match.  Each opening is the root of an
independent subtree of the solver's search, so the openings of a set of cells split the
search into jobs that share nothing.

`openings` reads, for every chosen cell, the corolles of the store partition whose zone and
rotation hold that cell, and joins them one cell after another: the cells the next corolle
shares with the table so far must agree, each of its new cells that touches a covered cell
must match it (both are equality keys of a vectorised hash join), and no piece of its new
cells may be used already (piece bitsets).  The table keeps every covered cell; two corolles
that neither overlap nor touch join as a cartesian product minus repeated pieces.

Symmetry.  Without `symmetry_break` the openings cover every solution: solving all of them
without a symmetry break counts every solution once (the `--no-symmetry-break` count).  With
`symmetry_break` the covered cells must include the cells of the solver's symmetry roots
((0, 0); on a non-square board also (W-1, 0)) and only openings that agree with a root are
kept: their solutions are exactly those of the symmetry-broken single search.  Each opening
is solved with its cells as the seed and no further symmetry break.

`solve_openings` solves the openings' subtrees over N processes (spawn context; each worker
compiles or loads the kernel once and reuses it), heaviest estimated openings first, and
merges the counts; `merge_reports` sums the JSON reports of shards solved separately (the
Snakemake rules of pipeline/rules/solve.smk).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from e2store.errors import MissingInstanceError, MissingZoneError, SolverError
from e2store.files import atomic_write
from e2store.instance.model import GREY, Instance
from e2store.solver import _kernels as K
from e2store.solver import _unrolled
from e2store.solver.search import (
    DEFAULT_MAX_STORED,
    _fixed_problem,
    _Search,
    _Unrolled,
    board_dtype,
    build_plan,
    check_solutions,
    progress_interval,
    scan_order,
    symmetry_roots,
)
from e2store.store.layout import meta_name, partition_dir
from e2store.store.read import read_partition
from e2store.zones.geometry import ring_offsets
from e2store.zones.zonemap import zone_map

OPENINGS_FORMAT = "e2store-openings"
OPENINGS_VERSION = 1
DEFAULT_MAX_OPENINGS = 50_000_000
JOIN_PAIRS = 1 << 22  # candidate pairs per join chunk (bounds the join's memory)
_STEP = ((-1, 0), (0, -1), (1, 0), (0, 1))  # neighbour offset of side W, N, E, S


@dataclass
class Openings:
    """A table of openings: (n, W*H) packed boards `boards` (-1 = empty cell, index y*W+x),
    all covering the same cells `covered`; built from the corolles at `cells`."""

    instance: str
    name: str
    width: int
    height: int
    cells: list[tuple[int, int]]
    hamming: int
    symmetry_break: bool
    boards: np.ndarray
    seconds: float = 0.0
    sizes: list[int] = field(default_factory=list)  # table rows after each join

    @property
    def count(self) -> int:
        return int(self.boards.shape[0])

    @property
    def covered(self) -> list[int]:
        """Cell indices (y*W+x) every opening fills."""
        if self.count:
            return np.flatnonzero(self.boards[0] >= 0).tolist()
        return sorted(_cover(self.width, self.height, self.cells, self.hamming))

    def to_dict(self) -> dict:
        return {"instance": self.instance, "name": self.name, "width": self.width,
                "height": self.height, "cells": [list(c) for c in self.cells],
                "hamming": self.hamming, "symmetry_break": self.symmetry_break,
                "openings": self.count, "covered_cells": len(self.covered),
                "join_sizes": self.sizes, "seconds": round(self.seconds, 6)}


# --------------------------------------------------------------------------- building


def parse_cell(text: str) -> tuple[int, int]:
    """'3,1' -> (3, 1); SolverError otherwise."""
    parts = str(text).replace(" ", "").split(",")
    if len(parts) != 2 or not all(p.lstrip("-").isdigit() for p in parts):
        raise SolverError(f"bad cell {text!r} (expected X,Y, e.g. 0,0)")
    return int(parts[0]), int(parts[1])


def _cover(width: int, height: int, cells: Iterable[tuple[int, int]], hamming: int) -> set[int]:
    out = set()
    for x, y in cells:
        for dx, dy in ring_offsets(hamming).tolist():
            if 0 <= x + dx < width and 0 <= y + dy < height:
                out.add((y + dy) * width + x + dx)
    return out


def _check_cells(inst: Instance, cells: Sequence[tuple[int, int]], hamming: int) -> None:
    if hamming < 0:
        raise SolverError(f"hamming {hamming} is negative (expected h >= 0)")
    if not cells:
        raise SolverError("no cells given (expected at least one X,Y)")
    for x, y in cells:
        if not (0 <= x < inst.width and 0 <= y < inst.height):
            raise SolverError(f"cell ({x}, {y}) is off the {inst.width}x{inst.height} board "
                              f"(expected 0 <= x < {inst.width} and 0 <= y < {inst.height})")
    dup = [c for i, c in enumerate(cells) if c in cells[:i]]
    if dup:
        raise SolverError(f"cell {dup[0]} given twice (expected distinct cells)")


def cell_corolles(instance: Instance, store_root: str | Path, x: int, y: int, hamming: int,
                  form: str = "flat") -> np.ndarray:
    """The corolles at (x, y) read from the store: (n, S) packed cells in ring order (-1 off
    the board), from the partition of the cell's zone and rotation.  A missing partition
    raises `MissingZoneError` naming the `e2store enumerate` to run."""
    zm = zone_map(instance.width, instance.height, hamming)
    zone, rot = zm.zone_at(x, y), zm.rotation_at(x, y)
    root = Path(store_root)
    d = partition_dir(root, instance.id, hamming, zone.id, rot)
    if not (d / meta_name(form)).exists():
        run = (f"run `e2store enumerate INSTANCE --out {root} --hamming {hamming} --zones "
               f"{x},{y}" + (f" --form {form}" if form != "flat" else "") + "`")
        if not (root / f"instance={instance.id}").is_dir():
            raise MissingInstanceError(f"store {root} holds no corolles of instance "
                                       f"{instance.id}: {run}")
        raise MissingZoneError(f"store {root} has no {form} partition of hamming {hamming} "
                               f"zone {zone.id} rotation {rot} (cell ({x}, {y})): {run}")
    cells, _ = read_partition(root, instance.id, hamming, zone.id, rot, form)
    return cells


def _corolle_cells(width: int, height: int, x: int, y: int, hamming: int,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(slots, board cells) of the on-board slots of the corolle centred on (x, y)."""
    off = ring_offsets(hamming)
    cx, cy = x + off[:, 0], y + off[:, 1]
    on = (cx >= 0) & (cx < width) & (cy >= 0) & (cy < height)
    return np.flatnonzero(on), (cy * width + cx)[on]


def _piece_bits(values: np.ndarray, n_words: int) -> np.ndarray:
    """(n, n_words) uint64 bitsets of the pieces in each row of packed `values`."""
    out = np.zeros((values.shape[0], n_words), dtype=np.uint64)
    pieces = values.astype(np.int64) >> 2
    rows = np.arange(values.shape[0])
    for j in range(values.shape[1]):
        p = pieces[:, j]
        np.bitwise_or.at(out, (rows, p >> 6), np.left_shift(np.uint64(1),
                                                          (p & 63).astype(np.uint64)))
    return out


def _key_ids(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal rows of (n, q) `a` and (m, q) `b` get equal integer ids."""
    if a.shape[1] == 0:
        return np.zeros(len(a), np.int64), np.zeros(len(b), np.int64)
    both = np.ascontiguousarray(np.concatenate([a, b]).astype(np.int16))
    view = both.view(np.dtype((np.void, both.dtype.itemsize * both.shape[1]))).ravel()
    _, inv = np.unique(view, return_inverse=True)
    inv = inv.reshape(-1)
    return inv[:len(a)], inv[len(a):]


class _Table:
    """The join so far: values (n, k) of the covered cells `cols`, used-piece bitsets."""

    def __init__(self, cols: list[int], values: np.ndarray, used: np.ndarray):
        self.cols, self.values, self.used = cols, values, used

    def __len__(self) -> int:
        return int(self.values.shape[0])


def _join(t: _Table, cor: np.ndarray, slots: np.ndarray, bcells: np.ndarray, inst: Instance,
          rot: np.ndarray, n_words: int, max_rows: int) -> _Table:
    """Join the table with the corolles `cor` (on-board slots `slots` at board cells
    `bcells`): overlapping cells agree, touching sides match, no piece twice."""
    w = inst.width
    pos = {c: i for i, c in enumerate(t.cols)}
    bvals = cor[:, slots].astype(np.int16)
    bpos = {int(c): j for j, c in enumerate(bcells.tolist())}
    over = [(pos[c], j) for c, j in bpos.items() if c in pos]
    new = [j for c, j in bpos.items() if c not in pos]
    key_a = [t.values[:, i] for i, _ in over]
    key_b = [bvals[:, j] for _, j in over]
    for c, j in bpos.items():  # a new cell's side facing a covered cell outside this corolle
        if c in pos:
            continue
        x, y = c % w, c // w
        for s, (dx, dy) in enumerate(_STEP):
            nx, ny = x + dx, y + dy
            nb = ny * w + nx
            if 0 <= nx < w and 0 <= ny < inst.height and nb in pos and nb not in bpos:
                key_a.append(rot[t.values[:, pos[nb]], (s + 2) % 4])
                key_b.append(rot[bvals[:, j], s])
    ka = np.column_stack(key_a) if key_a else np.zeros((len(t), 0), np.int16)
    kb = np.column_stack(key_b) if key_b else np.zeros((len(bvals), 0), np.int16)
    ida, idb = _key_ids(ka, kb)
    order = np.argsort(idb, kind="stable")
    sorted_b = idb[order]
    lo = np.searchsorted(sorted_b, ida, "left")
    cnt = np.searchsorted(sorted_b, ida, "right") - lo
    new_vals = bvals[:, new]
    new_bits = _piece_bits(new_vals, n_words)
    out_vals, out_used, total = [], [], 0
    ends = np.cumsum(cnt)
    start = 0
    while start < len(t):  # chunks of table rows with at most JOIN_PAIRS candidate pairs
        base = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + JOIN_PAIRS, "right")))
        c = cnt[start:stop]
        a_idx = np.repeat(np.arange(start, stop), c)
        first = np.repeat(lo[start:stop] - (np.cumsum(c) - c), c)
        b_idx = order[first + np.arange(len(a_idx))] if len(a_idx) else a_idx
        ok = ~((t.used[a_idx] & new_bits[b_idx]) != 0).any(axis=1)
        a_idx, b_idx = a_idx[ok], b_idx[ok]
        total += len(a_idx)
        if total > max_rows:
            raise SolverError(f"more than {max_rows:,} openings: choose fewer or closer cells, "
                              f"or a smaller hamming (or raise the limit)")
        out_vals.append(np.concatenate([t.values[a_idx], new_vals[b_idx]], axis=1))
        out_used.append(t.used[a_idx] | new_bits[b_idx])
        start = stop
    cols = t.cols + [int(bcells[j]) for j in new]
    k = len(cols)
    values = np.concatenate(out_vals) if out_vals else np.zeros((0, k), np.int16)
    used = np.concatenate(out_used) if out_used else np.zeros((0, n_words), np.uint64)
    return _Table(cols, values, used)


def _symmetry_filter(inst: Instance, t: _Table) -> np.ndarray:
    """Rows of the table that agree with one of the solver's symmetry roots."""
    keep = np.zeros(len(t), dtype=bool)
    pos = {c: i for i, c in enumerate(t.cols)}
    for root in symmetry_roots(inst):
        ok = np.ones(len(t), dtype=bool)
        for cell, v in root.items():
            ok &= t.values[:, pos[cell]] == v
        keep |= ok
    return keep


def openings(instance: Instance, store_root: str | Path, cells: Sequence[tuple[int, int]],
             hamming: int, *, symmetry_break: bool = False, form: str = "flat",
             max_rows: int = DEFAULT_MAX_OPENINGS) -> Openings:
    """Every consistent combination of the store's hamming-h corolles at `cells`.

    Rows are sorted (lexicographically over the covered cells in index order).  With
    `symmetry_break` only openings that agree with a symmetry root of the solver are kept
    (the root cells must be covered); see the module docstring.  More than `max_rows` rows
    after any join raise `SolverError`.
    """
    cells = [(int(x), int(y)) for x, y in cells]
    _check_cells(instance, cells, hamming)
    w, h = instance.width, instance.height
    roots = symmetry_roots(instance) if symmetry_break else []
    root_cells = {c for r in roots for c in r}
    covered = _cover(w, h, cells, hamming)
    missing = sorted(root_cells - covered)
    if missing:
        where = ", ".join(f"({c % w}, {c // w})" for c in missing)
        raise SolverError(f"the symmetry break fixes cell {where}, which the corolles at the "
                          f"chosen cells do not cover (add a cell near it or drop the "
                          f"symmetry break)")
    t0 = time.perf_counter()
    rot = instance.rotated_table()
    n_words = max(1, (instance.n_pieces + 63) // 64)
    table: _Table | None = None
    sizes = []
    for x, y in cells:
        cor = cell_corolles(instance, store_root, x, y, hamming, form)
        slots, bcells = _corolle_cells(w, h, x, y, hamming)
        if table is None:
            vals = cor[:, slots].astype(np.int16)
            table = _Table(bcells.tolist(), vals, _piece_bits(vals, n_words))
        else:
            table = _join(table, cor, slots, bcells, instance, rot, n_words, max_rows)
        if root_cells and root_cells <= set(table.cols):
            keep = _symmetry_filter(instance, table)
            table = _Table(table.cols, table.values[keep], table.used[keep])
        sizes.append(len(table))
    assert table is not None
    boards = np.full((len(table), w * h), -1, dtype=board_dtype(instance.n_pieces))
    boards[:, table.cols] = table.values
    cols = sorted(table.cols)
    if len(boards) > 1:
        boards = boards[np.lexsort(boards[:, cols[::-1]].T)]
    return Openings(instance.id, instance.name, w, h, cells, hamming, bool(symmetry_break),
                    boards, time.perf_counter() - t0, sizes)


# --------------------------------------------------------------------------- files


def write_openings(path: str | Path, op: Openings) -> None:
    """Write openings atomically as Parquet (zstd): columns `c0..c{W*H-1}` int16 packed
    (-1 = empty), key-value metadata: format, version, instance, name, width, height, cells,
    hamming, symmetry_break, count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = op.width * op.height
    meta = {"format": OPENINGS_FORMAT, "version": str(OPENINGS_VERSION),
            "instance": op.instance, "name": op.name, "width": str(op.width),
            "height": str(op.height), "cells": json.dumps([list(c) for c in op.cells]),
            "hamming": str(op.hamming), "symmetry_break": json.dumps(op.symmetry_break),
            "count": str(op.count)}
    typ = pa.int16() if op.boards.dtype == np.int16 else pa.int32()
    schema = pa.schema([pa.field(f"c{i}", typ) for i in range(n)], metadata=meta)
    table = pa.Table.from_arrays([pa.array(np.ascontiguousarray(op.boards[:, i]), type=typ)
                                  for i in range(n)], schema=schema)
    atomic_write(path, lambda fh: pq.write_table(table, fh, compression="zstd"))


def read_openings(path: str | Path) -> Openings:
    """Openings from a file written by `write_openings`; SolverError if it is not one."""
    import pyarrow.parquet as pq

    p = Path(path)
    try:
        pf = pq.ParquetFile(p)
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets one clear line
        raise SolverError(f"{p}: not a Parquet file ({exc})") from None
    kv = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
    if kv.get("format") != OPENINGS_FORMAT:
        raise SolverError(f"{p}: not an openings file (expected one written by "
                          f"`e2store openings`)")
    if int(kv["version"]) > OPENINGS_VERSION:
        raise SolverError(f"{p}: openings format version {kv['version']} is newer than this "
                          f"e2store reads ({OPENINGS_VERSION}); upgrade e2store")
    w, h = int(kv["width"]), int(kv["height"])
    t = pf.read()
    boards = (np.column_stack([t.column(i).to_numpy() for i in range(t.num_columns)])
              if t.num_rows else np.zeros((0, w * h), np.int16))
    if boards.shape[1] != w * h or len(boards) != int(kv["count"]):
        raise SolverError(f"{p}: {boards.shape[1]} columns and {len(boards)} rows, metadata "
                          f"says {w * h} and {kv['count']} (damaged file)")
    return Openings(kv["instance"], kv.get("name", ""), w, h,
                    [tuple(c) for c in json.loads(kv["cells"])], int(kv["hamming"]),
                    bool(json.loads(kv["symmetry_break"])), boards)


# --------------------------------------------------------------------------- solving


def check_openings(instance: Instance, boards: np.ndarray) -> None:
    """Raise SolverError unless every row of (n, W*H) `boards` fills the same cells with
    placements in range, distinct pieces, grey exactly on the frame, matching joins."""
    w, h, n = instance.width, instance.height, instance.n_pieces
    b = np.asarray(boards).astype(np.int64).reshape(len(boards), -1)
    if b.shape[1] != w * h:
        raise SolverError(f"openings of {b.shape[1]} cells for a {w}x{h} board")
    if not len(b):
        return
    filled = b[0] >= 0
    cov = np.flatnonzero(filled)

    def fail(row: int, why: str) -> SolverError:
        return SolverError(f"opening {row}: {why}")

    bad = ((b >= 0) != filled).any(axis=1)
    if bad.any():
        raise fail(int(np.argmax(bad)), "fills other cells than opening 0")
    v = b[:, cov]
    bad = (v >= 4 * n).any(axis=1)
    if bad.any():
        raise fail(int(np.argmax(bad)), f"a placement out of range 0..{4 * n - 1}")
    ids = np.sort(v >> 2, axis=1)
    bad = (ids[:, 1:] == ids[:, :-1]).any(axis=1)
    if bad.any():
        raise fail(int(np.argmax(bad)), "a piece placed twice")
    shown = instance.rotated_table().astype(np.int64)[v]  # (rows, cells, 4)
    frame = np.array([[not (0 <= c % w + dx < w and 0 <= c // w + dy < h) for dx, dy in _STEP]
                      for c in cov.tolist()], dtype=bool)
    bad = ((shown == GREY) != frame).reshape(len(b), -1).any(axis=1)
    if bad.any():
        raise fail(int(np.argmax(bad)), "grey on the wrong sides")
    pos = {c: i for i, c in enumerate(cov.tolist())}
    for c, i in pos.items():
        for s, nb in ((2, c + 1 if c % w + 1 < w else -1), (3, c + w if c + w < w * h else -1)):
            if nb in pos:
                bad = shown[:, i, s] != shown[:, pos[nb], s - 2]
                if bad.any():
                    raise fail(int(np.argmax(bad)), f"cells ({c % w}, {c // w}) and "
                               f"({nb % w}, {nb // w}) do not match")


def estimate_costs(instance: Instance, boards: np.ndarray) -> np.ndarray:
    """A cheap relative cost of each opening's subtree: the product over the free cells
    touching the covered ones of (1 + placements that suit the cell's frame and match the
    colours its placed neighbours show), pieces in use ignored."""
    n = len(boards)
    if n == 0:
        return np.zeros(0)
    w, h = instance.width, instance.height
    rot = instance.rotated_table().astype(np.int64)
    grey = ((rot == GREY) * (1 << np.arange(4))).sum(axis=1)
    filled = boards[0] >= 0
    k_col = int(rot.max()) + 1
    log_cost = np.zeros(n)
    for cell in np.flatnonzero(~filled).tolist():
        x, y = cell % w, cell // w
        frame, sides = 0, []
        for s, (dx, dy) in enumerate(_STEP):
            nx, ny = x + dx, y + dy
            if not (0 <= nx < w and 0 <= ny < h):
                frame |= 1 << s
            elif filled[ny * w + nx]:
                sides.append((s, ny * w + nx))
        if not sides:
            continue
        sel = np.flatnonzero(grey == frame)
        key_p = np.zeros(len(sel), np.int64)
        key_b = np.zeros(n, np.int64)
        for s, nb in sides:
            key_p = key_p * k_col + rot[sel, s]
            key_b = key_b * k_col + rot[boards[:, nb].astype(np.int64), (s + 2) % 4]
        uniq, counts = np.unique(key_p, return_counts=True)
        i = np.clip(np.searchsorted(uniq, key_b), 0, max(len(uniq) - 1, 0))
        hit = (uniq[i] == key_b) if len(uniq) else np.zeros(n, bool)
        log_cost += np.log1p(np.where(hit, counts[i] if len(uniq) else 0, 0))
    return np.exp(log_cost - log_cost.max())


def plan_chunks(costs: np.ndarray, workers: int, per_worker: int = 16) -> list[np.ndarray]:
    """Opening indices cut into chunks, heaviest estimated first: each chunk holds about
    1/(workers*per_worker) of the total cost (a heavy opening alone), so the pool hands out
    big jobs first and evens out with small ones."""
    order = np.argsort(-costs, kind="stable")
    if len(order) == 0:
        return []
    target = float(costs.sum()) / max(1, workers * per_worker)
    max_len = max(1, math.ceil(len(order) / max(1, workers * 4)))
    chunks, cur, acc = [], [], 0.0
    for i in order.tolist():
        cur.append(i)
        acc += float(costs[i])
        if acc >= target or len(cur) >= max_len:
            chunks.append(np.array(cur, dtype=np.int64))
            cur, acc = [], 0.0
    if cur:
        chunks.append(np.array(cur, dtype=np.int64))
    return chunks


@dataclass
class OpeningsResult:
    """Merged result of solving openings: totals, per-opening counts, per-worker stats."""

    instance: str
    width: int
    height: int
    scan: str
    symmetry_break: bool
    openings: int
    workers: int
    shard: tuple[int, int] | None = None
    first_only: bool = False
    solutions: int = 0
    nodes: int = 0
    seconds: float = 0.0
    complete: bool = False
    opening_solutions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    opening_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    per_worker: list[dict] = field(default_factory=list)
    boards: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int16))

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    @property
    def stored(self) -> int:
        return int(self.boards.shape[0])

    def to_dict(self) -> dict:
        return {"instance": self.instance, "width": self.width, "height": self.height,
                "scan": self.scan, "symmetry_break": self.symmetry_break,
                "openings": self.openings, "workers": self.workers,
                "shard": list(self.shard) if self.shard else None,
                "first_only": self.first_only, "complete": self.complete,
                "solutions": self.solutions, "stored": self.stored, "nodes": self.nodes,
                "seconds": round(self.seconds, 6),
                "nodes_per_second": round(self.nodes_per_second, 1),
                "openings_with_solutions": int((self.opening_solutions > 0).sum()),
                "per_worker": self.per_worker}


class Subtrees:
    """Solves seeded subtrees that all fix the same cells, reusing one search plan.

    The plan (scan, cell classes, buckets) depends only on which cells are fixed, so it is
    built once; each opening then only sets its fixed values and runs the kernel, about
    100x cheaper per opening than a call of `solve`.  `finals` (optional) is handed to the
    solver's search as `solve(finals=...)` would.  `kernel` picks the kernel of complete
    searches (`e2store._unrolled.use_unrolled`): "auto" (default) generates one for this
    plan when it is deep enough to pay for compiling, "generic" never, "unrolled" always
    (when the board has at most 64 pieces and there are no finals).
    """

    def __init__(self, instance: Instance, scan: str | Path | np.ndarray, covered: list[int],
                 finals=None, kernel: str = "auto"):
        self.instance = instance
        w, h = instance.width, instance.height
        order = (np.asarray(scan, dtype=np.int64).reshape(-1, 2)
                 if isinstance(scan, np.ndarray) else scan_order(scan, w, h))
        self.covered = list(covered)
        self.plan = build_plan(instance, order, {c: 0 for c in self.covered})
        self.extra = () if finals is None else (finals,)
        self._cells = np.array(self.covered, dtype=np.int64)
        self._spare: _Search | None = None  # reused between openings (not with finals)
        self._fast: _Unrolled | None = None  # the generated kernel, made on first use
        # complete searches without finals may run a kernel generated for this plan
        self.unrolled = not self.extra and _unrolled.use_unrolled(kernel, self.plan)

    def warm_up(self, board: np.ndarray) -> None:
        """Compile or load every kernel a search under `board` may use."""
        self.search(board).warm_up()
        if self.unrolled:
            self._fast_search()

    def _fast_search(self) -> _Unrolled:
        if self._fast is None:
            self._fast = _Unrolled(self.instance, self.plan)
        return self._fast

    def _check(self, board: np.ndarray) -> None:
        problem = _fixed_problem(self.instance, {c: int(board[c]) for c in self.covered})
        if problem is not None:
            raise SolverError(f"opening: {problem}")

    def search(self, board: np.ndarray, buffer_rows: int = 256, checked: bool = False,
               ) -> _Search:
        """A fresh search of the subtree under `board`'s covered cells (`checked`: the
        board already passed `check_openings`)."""
        if not checked:
            self._check(board)
        s = self._spare
        if self.extra or s is None or len(s.sols) != buffer_rows:
            fixed = {c: int(board[c]) for c in self.covered}
            s = _Search(replace(self.plan, fixed=fixed), buffer_rows, *self.extra)
            if not self.extra:
                self._spare = s
            return s
        # reuse the state arrays (the plan's `fixed` is read only when they are made): a
        # FRESH search re-opens depth 0 and every depth it reaches
        s.state[:] = (0, K.FRESH, 0, 0, -1)
        s.placed.fill(-1)
        s.shown.fill(0)
        s.used.fill(0)
        cells = self._cells
        vals = board[cells].astype(np.int64)
        s.placed[cells] = vals
        s.shown.reshape(-1, 4)[cells] = self.plan.col[vals]
        pieces = vals >> 2
        np.bitwise_or.at(s.used, pieces >> 6, np.left_shift(np.uint64(1),
                                                            (pieces & 63).astype(np.uint64)))
        return s

    def solve(self, board: np.ndarray, first: bool = False, max_stored: int = 0,
              checked: bool = False) -> tuple[int, int, np.ndarray | None]:
        """(solutions, nodes, up to `max_stored` solution boards) of one opening.  A complete
        search (not `first`) runs the generated kernel when `unrolled`, else the generic
        one; both give the same counts and boards."""
        if not first and self.unrolled:
            if not checked:
                self._check(board)
            return self._fast_search().solve(board, max_stored)
        s = self.search(board, max(1, min(256, max_stored)), checked)
        kept, n_kept = [], 0
        while not s.done:
            found = s.run(_NO_LIMIT, first)
            if len(found):
                check_solutions(self.instance, found)
                if n_kept < max_stored:
                    kept.append(found[:max_stored - n_kept].copy())
                    n_kept += len(kept[-1])
                if first:
                    break
        boards = np.concatenate(kept) if kept else None
        return int(s.state[K.SOLUTIONS]), int(s.state[K.NODES]), boards


_NO_LIMIT = int(np.iinfo(np.int64).max)
_WORKER: dict = {}


def _init_worker(instance: Instance, scan, covered: list[int], finals,
                 warm: np.ndarray | None, kernel: str = "auto") -> None:
    """Pool initializer: build the plan once; compile or load the kernel before any work."""
    sub = Subtrees(instance, scan, covered, finals, kernel)
    _WORKER["subtrees"] = sub
    if warm is not None:
        sub.warm_up(warm)


def _solve_chunk(index: np.ndarray, boards: np.ndarray, first: bool, max_stored: int) -> dict:
    """Solve the openings `boards` (their indices `index`); counts per opening."""
    sub: Subtrees = _WORKER["subtrees"]
    t0 = time.perf_counter()
    sols = np.zeros(len(index), np.int64)
    nodes = np.zeros(len(index), np.int64)
    kept: list[np.ndarray] = []
    n_kept = 0
    for k, row in enumerate(boards):
        sols[k], nodes[k], found = sub.solve(row, first, max(0, max_stored - n_kept), True)
        if found is not None:
            kept.append(found)
            n_kept += len(found)
        if first and sols[k]:
            sols, nodes, index = sols[:k + 1], nodes[:k + 1], index[:k + 1]
            break
    return {"pid": os.getpid(), "index": index, "solutions": sols, "nodes": nodes,
            "seconds": time.perf_counter() - t0,
            "boards": np.concatenate(kept) if kept else None}


def solve_openings(instance: Instance, ops: Openings, *, workers: int = 1,
                   scan: str | Path | np.ndarray = "rowscan", first: bool = False,
                   shard: tuple[int, int] | None = None, max_stored: int = DEFAULT_MAX_STORED,
                   progress: bool = False, finals=None, kernel: str = "auto",
                   ) -> OpeningsResult:
    """Solve every opening's subtree (seed = its cells, no further symmetry break) over
    `workers` processes and merge: totals, counts per opening, per-worker stats, and up to
    `max_stored` solutions.  `shard=(k, s)` solves only openings i with i % s == k.
    The counts equal those of `solve(instance, scan, seed=opening, symmetry_break=False)`
    summed over the openings; `finals` is passed to the search as `solve` does; `kernel`
    to `Subtrees`."""
    if (ops.instance, ops.width, ops.height) != (instance.id, instance.width, instance.height):
        raise SolverError(f"openings of instance {ops.instance} ({ops.width}x{ops.height}), "
                          f"not of {instance.id} ({instance.width}x{instance.height})")
    if workers < 1:
        raise SolverError(f"workers {workers} (expected >= 1)")
    _unrolled.check_choice(kernel)
    index = np.arange(ops.count, dtype=np.int64)
    if shard is not None:
        k, s = shard
        if not (s >= 1 and 0 <= k < s):
            raise SolverError(f"shard {k}/{s} (expected K/S with 0 <= K < S)")
        index = index[index % s == k]
    boards = ops.boards[index]
    check_openings(instance, boards)
    if isinstance(scan, np.ndarray):
        scan_name = "custom"
    else:
        scan_name = str(scan)
        scan = scan_order(scan, instance.width, instance.height)  # checked here, not in a worker
    res = OpeningsResult(instance.id, instance.width, instance.height, str(scan_name),
                         ops.symmetry_break, len(index), workers, shard, first)
    res.opening_solutions = np.zeros(len(index), np.int64)
    res.opening_nodes = np.zeros(len(index), np.int64)
    chunks = plan_chunks(estimate_costs(instance, boards), workers)
    stats: dict[int, dict] = {}
    kept: list[np.ndarray] = []
    n_kept = 0
    done = 0
    bar = tqdm(total=len(index), desc=f"openings {instance.name}", unit=" openings",
               disable=not progress, delay=1.0, mininterval=progress_interval())

    def take(out: dict) -> None:
        nonlocal n_kept, done
        pos = out["index"]
        res.opening_solutions[pos] = out["solutions"]
        res.opening_nodes[pos] = out["nodes"]
        st = stats.setdefault(out["pid"], {"worker": len(stats), "pid": out["pid"],
                                           "openings": 0, "solutions": 0, "nodes": 0,
                                           "seconds": 0.0})
        st["openings"] += len(pos)
        st["solutions"] += int(out["solutions"].sum())
        st["nodes"] += int(out["nodes"].sum())
        st["seconds"] += out["seconds"]
        if out["boards"] is not None and n_kept < max_stored:
            kept.append(out["boards"][:max_stored - n_kept])
            n_kept += len(kept[-1])
        done += len(pos)
        bar.update(len(pos))
        bar.set_postfix(solutions=int(res.opening_solutions.sum()),
                        nodes=int(res.opening_nodes.sum()), refresh=False)

    t0 = time.perf_counter()
    found_first = False
    try:
        if workers == 1 or len(chunks) <= 1:
            _init_worker(instance, scan, ops.covered, finals,
                         boards[0] if len(boards) else None, kernel)
            for c in chunks:
                take(_solve_chunk(c, boards[c], first, max_stored - n_kept))
                if first and res.opening_solutions.sum():
                    found_first = True
                    break
        else:
            ctx = mp.get_context("spawn")
            with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                     initargs=(instance, scan, ops.covered, finals, boards[0],
                                               kernel),
                                     ) as pool:
                pending = {pool.submit(_solve_chunk, c, boards[c], first, max_stored)
                           for c in chunks}
                while pending:
                    fin, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in fin:
                        try:
                            take(f.result())
                        except BrokenProcessPool:
                            raise SolverError("a worker process died (out of memory, killed, "
                                              "or a script that starts workers without an "
                                              "`if __name__ == '__main__':` guard)") from None
                    if first and res.opening_solutions.sum():
                        found_first = True
                        for f in pending:
                            f.cancel()
                        break
    finally:
        bar.close()
    res.seconds = time.perf_counter() - t0
    res.solutions = int(res.opening_solutions.sum())
    res.nodes = int(res.opening_nodes.sum())
    res.complete = done == len(index) or found_first
    res.per_worker = [{**s, "seconds": round(s["seconds"], 6)}
                      for s in sorted(stats.values(), key=lambda s: s["worker"])]
    dtype = board_dtype(instance.n_pieces)
    res.boards = (np.concatenate(kept).astype(dtype) if kept
                  else np.zeros((0, instance.width * instance.height), dtype=dtype))
    return res


def merge_reports(reports: Sequence[dict]) -> dict:
    """Sum the JSON reports (`OpeningsResult.to_dict`) of the shards of one openings file:
    solutions, nodes, openings; `seconds` is the sum over shards, `max_shard_seconds` the
    longest.  SolverError unless the shards are 0..S-1 of one instance, scan and S."""
    if not reports:
        raise SolverError("no shard reports to merge")
    first = reports[0]
    same = ("instance", "scan", "symmetry_break", "first_only")
    for r in reports:
        for k in same:
            if r.get(k) != first.get(k):
                raise SolverError(f"shard reports disagree on {k}: {first.get(k)!r} and "
                                  f"{r.get(k)!r}")
    shards = sorted(tuple(r["shard"]) if r.get("shard") else (0, 1) for r in reports)
    s = shards[0][1]
    if shards != [(k, s) for k in range(s)]:
        raise SolverError(f"shard reports {shards} are not shards 0..{s - 1} of {s}, "
                          f"each once")
    seconds = sum(r["seconds"] for r in reports)
    nodes = sum(r["nodes"] for r in reports)
    return {**{k: first[k] for k in ("instance", "width", "height", *same)},
            "shards": s, "openings": sum(r["openings"] for r in reports),
            "complete": all(r["complete"] for r in reports),
            "solutions": sum(r["solutions"] for r in reports), "nodes": nodes,
            "seconds": round(seconds, 6), "max_shard_seconds": max(r["seconds"] for r in reports),
            "nodes_per_second": round(nodes / seconds, 1) if seconds > 0 else 0.0,
            "openings_with_solutions": sum(r["openings_with_solutions"] for r in reports)}
