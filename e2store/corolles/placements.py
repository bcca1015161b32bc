"""Placements per slot: which `piece*4+r` values each slot of a zone's corolles takes
(kept in the partition records as hex bitmaps; `e2store.query` serves them as cardinalities)."""

from __future__ import annotations

import numpy as np

from e2store.corolles import _kernels
from e2store.corolles.forms import CartesianRows
from e2store.zones.geometry import (
    n_slots,
    rotation_permutation,
)


def placements_seen(hamming: int, n_pieces: int) -> np.ndarray:
    """An empty (S, 4n + 1) bool matrix for `mark_placements` (last column unused: kept so
    a bitmap has room for every placement id)."""
    return np.zeros((n_slots(hamming), 4 * n_pieces + 1), dtype=np.bool_)


def mark_placements(seen: np.ndarray, cells: np.ndarray) -> None:
    """Mark the placements each slot takes in slot-major `cells` (off-board -1 ignored)."""
    if cells.ndim != 2 or cells.shape[0] > seen.shape[0]:
        raise ValueError(f"cells {cells.shape} do not fit the placement matrix {seen.shape}")
    _kernels.mark_placements(seen, cells)  # strided chunks too: no copy


def rotate_placements(seen: np.ndarray, hamming: int, q: int) -> np.ndarray:
    """The placement sets of the same corolles turned q quarter turns (ring-shift rule)."""
    if q % 4 == 0:
        return seen
    perm = rotation_permutation(hamming, q)
    v = np.arange(seen.shape[1] - 1)
    turned = (v & ~3) | ((v + q) & 3)
    out = np.zeros_like(seen)
    out[perm[:, None], turned[None, :]] = seen[:, :-1]
    return out


def placements_hex(seen: np.ndarray) -> list[str]:
    """Per slot, the set of placements as a hex bitmap (bit v = placement v occurs)."""
    return [np.packbits(row[:-1], bitorder="little").tobytes().hex() for row in seen]


def placements_from_hex(slots: list[str], n_pieces: int) -> np.ndarray:
    """The placements_seen matrix a `placements_hex` list describes."""
    seen = np.zeros((len(slots), 4 * n_pieces + 1), dtype=np.bool_)
    for i, h in enumerate(slots):
        bits = np.unpackbits(np.frombuffer(bytes.fromhex(h), dtype=np.uint8),
                             bitorder="little")[:4 * n_pieces]
        seen[i, :len(bits)] = bits.astype(np.bool_)
    return seen


def cartesian_placements(rows: CartesianRows, n_pieces: int) -> np.ndarray:
    """Placements per slot (placements_seen) of the corolles of cartesian rows: stem
    placements of rows with a completion, and the candidates that have one."""
    seen = placements_seen(rows.hamming, n_pieces)
    if not rows.n_rows:
        return seen
    s_in = rows.stems.shape[1]
    mark_placements(seen[:s_in], np.ascontiguousarray(rows.stems.T))
    stems, offs, vals, top = rows.padded()
    ok = rows.feasible(n_pieces)
    for k, v in enumerate(rows.values):
        mark_placements(seen[s_in + k:s_in + k + 1], vals[k:k + 1, :len(v)][:, ok[k, :len(v)]])
    return seen
