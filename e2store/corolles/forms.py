"""Encoding corolles into the three storage forms, and expanding them back to flat rows.

* **flat**: one row per corolle, slot columns `s*` (the frontier `f*` is computed from them:
  `frontier_of`; exports and region files add it).
* **prefix**: the same rows in depth-first order; a row keeps `shared`, the number of
  leading slots equal to the previous row's (0 on a file's first row), and only its suffix:
  slot columns `s*` are null before `shared`.
* **cartesian**: one row per *stem* (a filling of rings 0..h-1 with at least one
  completion): stem slot columns `s0..s{Sin-1}`, `corolles` (its exact number of
  completions) and one candidate list `c0..c{4h-1}` per ring-h slot (a single -1 for an
  off-board slot).  Its corolles are the product of the lists minus the tuples repeating a
  piece; the enumerator builds it without walking that product.

All arrays here are row-major: cells (n, S) int16, frontier (n, F) int8.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from e2store.instance.model import Instance
from e2store.zones.geometry import frontier_layout, n_slots, rotation_permutation

# frontier -------------------------------------------------------------------------------

def frontier_of(cells: np.ndarray, instance: Instance, hamming: int) -> np.ndarray:
    """The frontier colours of flat cell rows (-1 where the frontier cell is off the board)."""
    fslots, fsides = frontier_layout(hamming)
    table = instance.rotated_table()
    sub = cells[:, fslots].astype(np.int64)
    out = table[np.maximum(sub, 0), np.asarray(fsides)[None, :]].astype(np.int8)
    out[sub < 0] = -1
    return out


# prefix form ----------------------------------------------------------------------------


def prefix_shared(cells: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
    """Leading slots each row of row-major `cells` shares with the row before it
    (`previous` before the first; None at the start of a file, giving 0)."""
    n, s = cells.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    prev = np.empty_like(cells)
    prev[1:] = cells[:-1]
    prev[0] = previous if previous is not None else cells[0]
    differ = cells != prev
    shared = np.where(differ.any(axis=1), differ.argmax(axis=1), s).astype(np.int64)
    if previous is None:
        shared[0] = 0
    return shared


def prefix_table(cells: np.ndarray, previous: np.ndarray | None, schema: pa.Schema) -> pa.Table:
    """Encode row-major cells: each row keeps only its suffix after the shared slots."""
    shared = prefix_shared(cells, previous)
    hidden = np.arange(cells.shape[1])[None, :] < shared[:, None]
    cols = [pa.array(shared.astype(np.int8))]
    cols += [pa.array(np.ascontiguousarray(cells[:, i]), mask=hidden[:, i])
             for i in range(cells.shape[1])]
    return pa.Table.from_arrays(cols, schema=schema)


def prefix_decode(shared: np.ndarray, suffix: np.ndarray) -> np.ndarray:
    """Row-major cells from a prefix-form file: `suffix` (n, S) holds each row's values from
    slot `shared` on (anything before); each slot is carried down from the last row that
    wrote it.  The file's first row must share nothing."""
    n, s = suffix.shape
    shared = shared.astype(np.int64)
    if n and shared[0] != 0:
        raise ValueError("a prefix-form file must start with a row that shares nothing")
    written = np.arange(s)[None, :] >= shared[:, None]
    last = np.where(written, np.arange(n)[:, None], -1)
    np.maximum.accumulate(last, axis=0, out=last)
    return suffix[last, np.arange(s)[None, :]].astype(np.int16)


def prefix_from_table(table: pa.Table, hamming: int) -> np.ndarray:
    s = n_slots(hamming)
    suffix = np.zeros((len(table), s), dtype=np.int16)
    for i in range(s):
        suffix[:, i] = table.column(f"s{i}").fill_null(0).to_numpy()
    return prefix_decode(table.column("shared").to_numpy(), suffix)


# cartesian form -------------------------------------------------------------------------


@dataclass
class CartesianRows:
    """Stems and last-ring candidate lists of one cell, slot-indexed (see module doc)."""

    hamming: int
    stems: np.ndarray  # (n, Sin) int16, -1 off board
    counts: np.ndarray  # (n,) int64
    offsets: list[np.ndarray]  # per ring-h slot, (n+1,) int64
    values: list[np.ndarray]  # per ring-h slot, int16

    @property
    def n_rows(self) -> int:
        return len(self.counts)

    def table(self, schema: pa.Schema, start: int = 0, stop: int | None = None) -> pa.Table:
        stop = self.n_rows if stop is None else stop
        cols = [pa.array(self.stems[start:stop, i]) for i in range(self.stems.shape[1])]
        cols.append(pa.array(self.counts[start:stop]))
        for off, val in zip(self.offsets, self.values, strict=True):
            a, b = int(off[start]), int(off[stop])
            cols.append(pa.ListArray.from_arrays(pa.array((off[start:stop + 1] - a)
                                                          .astype(np.int32)),
                                                 pa.array(val[a:b])))
        return pa.Table.from_arrays(cols, schema=schema)

    def rotated(self, q: int) -> CartesianRows:
        """The same corolles turned q quarter turns clockwise (ring-shift rule)."""
        if q % 4 == 0:
            return self
        perm = rotation_permutation(self.hamming, q)
        s_in = self.stems.shape[1]
        stems = np.empty_like(self.stems)
        stems[:, perm[:s_in]] = _rotate_values(self.stems, q)
        offsets: list = [None] * len(self.offsets)
        values: list = [None] * len(self.values)
        for k in range(len(self.offsets)):
            dst = int(perm[s_in + k]) - s_in if self.hamming else 0
            offsets[dst] = self.offsets[k]
            values[dst] = _rotate_values(self.values[k], q)
        return CartesianRows(self.hamming, stems, self.counts, offsets, values)

    @classmethod
    def from_table(cls, table: pa.Table, hamming: int) -> CartesianRows:
        s_in = n_slots(hamming - 1) if hamming > 0 else 0
        stems = (np.column_stack([table.column(f"s{i}").to_numpy() for i in range(s_in)])
                 if s_in and len(table) else np.zeros((len(table), s_in), np.int16))
        counts = table.column("corolles").to_numpy().astype(np.int64)
        offsets, values = [], []
        for k in range(4 * hamming if hamming else 1):
            col = table.column(f"c{k}").combine_chunks()
            off = col.offsets.to_numpy().astype(np.int64)
            val = col.values.to_numpy().astype(np.int16)
            offsets.append(off - off[0])
            values.append(val[off[0]:off[-1]])
        return cls(hamming, stems.astype(np.int16), counts, offsets, values)

    def padded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The kernels' layout: (stems, offsets (m, n+1), values (m, V) padded with -1,
        a piece count covering every value)."""
        m = len(self.offsets)
        width = max((len(v) for v in self.values), default=0)
        vals = np.full((m, max(width, 1)), -1, dtype=np.int16)
        for k, v in enumerate(self.values):
            vals[k, :len(v)] = v
        offs = np.vstack(self.offsets) if m else np.zeros((0, self.n_rows + 1), np.int64)
        top = max((int(v.max()) for v in [self.stems.ravel(), *self.values] if v.size),
                  default=-1)
        return np.ascontiguousarray(self.stems), offs, vals, max(top // 4 + 1, 1)

    def expand(self) -> np.ndarray:
        """Flat cell rows (n_corolles, S), stems in order, lists in lexicographic order."""
        from e2store.corolles import _kernels  # numba loads only where rows are expanded

        return _kernels.expand_cartesian(*self.padded(), int(self.counts.sum()))

    def feasible(self, n_pieces: int = 0) -> np.ndarray:
        """(m, V) bool in the `padded` layout: value k of ring-h slot list j is used by at
        least one corolle of its row (stem and the other lists taken into account)."""
        from e2store.corolles import _kernels

        stems, offs, vals, top = self.padded()
        return _kernels.feasible_candidates(stems, offs, vals, max(top, n_pieces))

    def row_counts(self) -> np.ndarray:
        """Exact completions per row (the `corolles` column recomputed from the lists)."""
        from e2store.corolles import _kernels

        return _kernels.count_cartesian_rows(*self.padded())


def rotate_chunk(cells: np.ndarray, front: np.ndarray, hamming: int, q: int,
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Slot-major cells (S, n) and frontier (F, n) of corolles turned q quarter turns
    clockwise (ring-shift rule; the frontier shifts by 2h+1 per turn)."""
    from e2store.corolles import _kernels

    if cells.ndim != 2 or cells.shape[0] != n_slots(hamming) or front.shape[1] != cells.shape[1]:
        raise ValueError(f"chunk {cells.shape}/{front.shape} is not slot-major at "
                         f"hamming {hamming}")
    q %= 4
    if q == 0:
        return cells, front
    return _kernels.rotate_rows(cells, front, rotation_permutation(hamming, q), q,
                                (2 * hamming + 1) * q)


def rotate_cells(cells: np.ndarray, hamming: int, q: int) -> np.ndarray:
    """Slot-major cells (S, n) turned q quarter turns clockwise (`rotate_chunk` without a
    frontier: what the store writes)."""
    return rotate_chunk(cells, np.zeros((0, cells.shape[1]), np.int8), hamming, q)[0]


def canonical_chunk(cells: np.ndarray, dist) -> tuple[np.ndarray, np.ndarray]:
    """Slot-major cells (S, n) of distinct corolles written canonically (each class's
    copies lowest first in slot order, one rotation per look: `DistinctPieces.canonical`)
    and their multiplicities (`DistinctPieces.multiplicity`), in one pass."""
    from e2store.corolles import _kernels

    if cells.ndim != 2:
        raise ValueError(f"chunk {cells.shape} is not slot-major (S, n)")
    return _kernels.canonical_rows(cells, dist.cls, dist.same, dist.weight)


def _rotate_values(v: np.ndarray, q: int) -> np.ndarray:
    v = np.asarray(v)
    return np.where(v >= 0, (v & ~3) | ((v + q) & 3), v).astype(v.dtype)


