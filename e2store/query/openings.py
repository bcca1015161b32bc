"""Openings: consistent combinations of corolles at chosen cells (built from the store).

An *opening* (docs/design.md section 5) places one corolle on each chosen cell at once: no piece
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

They are solved, over several processes, by `e2store.solver.parallel`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from e2store.boards.schema import cells_schema
from e2store.errors import MissingInstanceError, MissingZoneError, SolverError
from e2store.files import read_table, table_schema, write_table
from e2store.instance.classes import DistinctPieces, symmetry_roots
from e2store.instance.model import GREY, Instance, board_dtype
from e2store.store.layout import instance_path, meta_name, partition_dir
from e2store.store.read import read_partition
from e2store.zones.geometry import SIDE_STEP, ring_offsets
from e2store.zones.zonemap import zone_map

OPENINGS_FORMAT = "e2store-openings"
OPENINGS_VERSION = 1
DEFAULT_MAX_OPENINGS = 50_000_000
JOIN_PAIRS = 1 << 22  # candidate pairs per join chunk (bounds the join's memory)


@dataclass
class Openings:
    """A table of openings: (n, W*H) packed boards `boards` (-1 = empty cell, index y*W+x),
    all covering the same cells `covered`; built from the corolles at `cells`.  Distinct
    openings (`multiplicity` set): one board per distinct opening (identical pieces
    interchangeable, symmetric rotations merged; copies lowest first in cell order) and the
    raw openings each stands for."""

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
    multiplicity: np.ndarray | None = None  # distinct openings: raw openings per board

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
                "join_sizes": self.sizes, "seconds": round(self.seconds, 6),
                **({} if self.multiplicity is None else
                   {"distinct": True, "raw_openings": int(self.multiplicity.sum())})}


# --------------------------------------------------------------------------- building


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
    d = partition_dir(root, instance.id, hamming, zone.id, rot, form)
    if not (d / meta_name(form)).exists():
        run = (f"run `e2store enumerate INSTANCE --store {root} --hamming {hamming} --at "
               f"{x},{y}" + (f" --form {form}" if form != "flat" else "") + "`")
        if not instance_path(root, instance.id).exists():
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
        for s, (dx, dy) in enumerate(SIDE_STEP):
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
        pairs = cnt[start:stop]  # candidate pairs per table row
        a_idx = np.repeat(np.arange(start, stop), pairs)
        first = np.repeat(lo[start:stop] - (np.cumsum(pairs) - pairs), pairs)
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
             max_rows: int = DEFAULT_MAX_OPENINGS, distinct: bool = False) -> Openings:
    """Every consistent combination of the store's hamming-h corolles at `cells`.

    Rows are sorted (lexicographically over the covered cells in index order).  With
    `symmetry_break` only openings that agree with a symmetry root of the solver are kept
    (the root cells must be covered); see the module docstring.  More than `max_rows` rows
    after any join raise `SolverError`.  With `distinct`, the distinct openings: the raw
    ones grouped by `DistinctPieces.canonical` over the covered cells, each with the raw
    openings it stands for (`Openings.multiplicity`).
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
    mult = None
    if distinct:
        rows, mult = np.unique(DistinctPieces.of(instance).canonical(boards[:, cols]), axis=0,
                               return_counts=True)  # sorted as below
        boards = np.full((len(rows), w * h), -1, dtype=boards.dtype)
        boards[:, cols] = rows
        mult = mult.astype(np.int64)
    elif len(boards) > 1:
        boards = boards[np.lexsort(boards[:, cols[::-1]].T)]
    return Openings(instance.id, instance.name, w, h, cells, hamming, bool(symmetry_break),
                    boards, time.perf_counter() - t0, sizes, mult)


# --------------------------------------------------------------------------- files


def write_openings(path: str | Path, op: Openings) -> None:
    """Write openings atomically as Parquet (zstd; Arrow IPC when the name ends in `.arrow`,
    `.feather` or `.ipc`): columns `c0..c{W*H-1}` int16 packed
    (-1 = empty), key-value metadata: format, version, instance, name, width, height, cells,
    hamming, symmetry_break, count; distinct openings add the column `multiplicity` (int64)
    and the metadata `distinct` = true."""
    import pyarrow as pa

    n = op.width * op.height
    meta = {"format": OPENINGS_FORMAT, "version": str(OPENINGS_VERSION),
            "instance": op.instance, "name": op.name, "width": str(op.width),
            "height": str(op.height), "cells": json.dumps([list(c) for c in op.cells]),
            "hamming": str(op.hamming), "symmetry_break": json.dumps(op.symmetry_break),
            "count": str(op.count)}
    typ = pa.int16() if op.boards.dtype == np.int16 else pa.int32()
    schema = cells_schema([f"c{i}" for i in range(n)], typ, meta)
    cols = [pa.array(np.ascontiguousarray(op.boards[:, i]), type=typ) for i in range(n)]
    if op.multiplicity is not None:
        schema = schema.append(pa.field("multiplicity", pa.int64())).with_metadata(
            {**meta, "distinct": "true"})
        cols.append(pa.array(op.multiplicity, type=pa.int64()))
    write_table(path, pa.Table.from_arrays(cols, schema=schema))


def read_openings(path: str | Path) -> Openings:
    """Openings from a file written by `write_openings`; SolverError if it is not one."""
    p = Path(path)
    try:
        schema = table_schema(p)
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets one clear line
        raise SolverError(f"{p}: not a Parquet or Arrow IPC file ({exc})") from None
    kv = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    if kv.get("format") != OPENINGS_FORMAT:
        raise SolverError(f"{p}: not an openings file (expected one written by "
                          f"`e2store openings`)")
    if int(kv["version"]) > OPENINGS_VERSION:
        raise SolverError(f"{p}: openings format version {kv['version']} is newer than this "
                          f"e2store reads ({OPENINGS_VERSION}); upgrade e2store")
    w, h = int(kv["width"]), int(kv["height"])
    t = read_table(p)
    distinct = kv.get("distinct") == "true"
    mult = (t.column("multiplicity").to_numpy().astype(np.int64)
            if distinct and "multiplicity" in t.column_names else None)
    if distinct and mult is None:
        raise SolverError(f"{p}: distinct openings without a multiplicity column (damaged "
                          f"file)")
    boards = (np.column_stack([t.column(f"c{i}").to_numpy() for i in range(w * h)])
              if t.num_rows and all(f"c{i}" in t.column_names for i in range(w * h))
              else np.zeros((t.num_rows, t.num_columns - distinct), np.int16))
    if boards.shape[1] != w * h or len(boards) != int(kv["count"]):
        raise SolverError(f"{p}: {boards.shape[1]} columns and {len(boards)} rows, metadata "
                          f"says {w * h} and {kv['count']} (damaged file)")
    return Openings(kv["instance"], kv.get("name", ""), w, h,
                    [tuple(c) for c in json.loads(kv["cells"])], int(kv["hamming"]),
                    bool(json.loads(kv["symmetry_break"])), boards, multiplicity=mult)


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
    frame = np.array([[not (0 <= c % w + dx < w and 0 <= c // w + dy < h) for dx, dy in SIDE_STEP]
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


