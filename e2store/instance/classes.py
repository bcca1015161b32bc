"""Identical pieces and symmetric pieces: what a search over *distinct layouts* merges.

Two pieces are *similar* (DESIGN.md: a group of similar pieces) when one is the other
turned; a *class* is a maximal set of similar pieces, its *multiplicity* the number of
pieces in it.  A piece's *rotation period* is the smallest number of quarter turns that
leaves it unchanged: 1 (all four sides alike: quarter-turn symmetric), 2 (half-turn
symmetric) or 4 (no symmetry); rotations r and r + period show the same colours.

A *distinct layout* is a board of classes and the colours they show: identical pieces are
interchangeable and the rotations of a symmetric piece that look alike are one.  Every
distinct layout stands for the same number of layouts that keep every distinction (the
*raw* layouts): the free copies of each class permuted among their cells, times the
equivalent rotations of every free piece (`layout_factor`).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import factorial

import numpy as np

from e2store.instance.validate import canonical_rotation


def rotation_period(pieces: np.ndarray) -> np.ndarray:
    """Per piece: 1, 2 or 4, the quarter turns after which it looks the same again."""
    p = np.asarray(pieces)
    quarter = (p == np.roll(p, 1, axis=1)).all(axis=1)
    half = (p == np.roll(p, 2, axis=1)).all(axis=1)
    return np.where(quarter, 1, np.where(half, 2, 4)).astype(np.int64)


def piece_classes(pieces: np.ndarray) -> np.ndarray:
    """Per piece: its class, named by the lowest piece id in it."""
    first: dict[tuple[int, ...], int] = {}
    return np.array([first.setdefault(canonical_rotation(piece), i)
                     for i, piece in enumerate(np.asarray(pieces))], dtype=np.int64)


def next_copy(pieces: np.ndarray) -> np.ndarray:
    """Per piece: the next higher piece id of its class, or -1 for the last one.

    A search over distinct layouts places the copies of a class in this order (the first
    free copy is the only one it may place), so each distinct layout is met once."""
    cls = piece_classes(pieces)
    out = np.full(len(cls), -1, dtype=np.int64)
    last: dict[int, int] = {}
    for i, c in enumerate(cls.tolist()):
        if c in last:
            out[last[c]] = i
        last[c] = i
    return out


def layout_factor(pieces: np.ndarray, fixed: list[int] | tuple[int, ...] = ()) -> int:
    """Raw layouts per distinct layout when the pieces `fixed` are placed already: the
    product over classes of (free copies)! times the product over free pieces of their
    equivalent rotations (4 / period)."""
    cls = piece_classes(pieces)
    period = rotation_period(pieces)
    free = np.ones(len(cls), dtype=bool)
    free[list(fixed)] = False
    out = 1
    for c, m in zip(*np.unique(cls[free], return_counts=True), strict=True):
        del c
        out *= factorial(int(m))
    for q in period[free].tolist():
        out *= 4 // q
    return out


def class_summary(pieces: np.ndarray) -> dict:
    """Classes of two or more pieces and symmetric pieces, for `e2store stats`: the lists
    and, per multiplicity, how many classes have it."""
    cls = piece_classes(pieces)
    period = rotation_period(pieces)
    members: dict[int, list[int]] = {}
    for i, c in enumerate(cls.tolist()):
        members.setdefault(c, []).append(i)
    sizes = [len(m) for m in members.values()]
    by_size = {m: sizes.count(m) for m in sorted(set(sizes))}
    return {
        "classes": len(members),
        "classes_by_multiplicity": by_size,
        "identical_classes": [m for m in members.values() if len(m) > 1],
        "quarter_turn_pieces": [int(i) for i in np.flatnonzero(period == 1)],
        "half_turn_pieces": [int(i) for i in np.flatnonzero(period == 2)],
    }


@dataclass(frozen=True)
class DistinctPieces:
    """What a walk over distinct fillings needs per piece: `nxt`, its class's next copy
    (-1 for the last); `index`, its rank among the copies; `cls`, its class; `weight`, the
    raw fillings one placement of it stands for when the copies before it are placed,
    (multiplicity - index) * (4 / period); `blocked`, the pieces a walk starts with marked
    used (every copy but the first of its class)."""

    nxt: np.ndarray
    index: np.ndarray
    cls: np.ndarray
    weight: np.ndarray
    blocked: np.ndarray

    @classmethod
    def of(cls_, instance) -> DistinctPieces:
        pieces = instance.pieces
        cls = piece_classes(pieces)
        mult = np.bincount(cls, minlength=len(cls))
        index = np.zeros(len(cls), dtype=np.int64)
        seen: dict[int, int] = {}
        for p, c in enumerate(cls.tolist()):
            index[p] = seen.get(c, 0)
            seen[c] = index[p] + 1
        weight = (mult[cls] - index) * (4 // rotation_period(pieces))
        return cls_(next_copy(pieces), index, cls, weight.astype(np.int64), index > 0)

    def kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The `distinct` tuple of `e2store.corolles._kernels.count_prefixes`."""
        return self.nxt, self.weight, self.blocked

    def lowest_first(self, rows: np.ndarray) -> np.ndarray:
        """Per row of piece ids (n, k): whether each class's copies in it come lowest
        first, in column order (the fillings a distinct walk makes)."""
        rows = np.asarray(rows, dtype=np.int64)
        c = self.cls[rows]
        before = (c[:, :, None] == c[:, None, :]) & np.tri(rows.shape[1], k=-1, dtype=bool).T[None]
        return (before.sum(axis=1) == self.index[rows]).all(axis=1)
